"""Fuzzing the parser (hypothesis, bounded): real logs mutated the way hostile input is (digits
swapped for nan/inf/negative/underscored/huge numbers, lines cut, duplicated, glued, other line
breaks, markup) either raise profconv's own error or give rows that keep every invariant
(tests/parse_invariants.py). `nox -s fuzz` runs the same with many more examples."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import profconv
from profconv.errors import ProfconvError
from tests.parse_invariants import check_all

EXAMPLES = int(os.environ.get("PROFCONV_FUZZ_EXAMPLES", "25"))
SEEDS = [
    "tests/data/seeds/002_b0bcac5cefbf4480.log",
    "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log",
    "tests/data/nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log",
    "tests/data/ncu-text/md-info-fused-rmsnorm-t4-colab.log",
    "tests/data/acc-time/denismihailapov-lab2-heat-n128-multifunc.log",
    "tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log",
    "tests/data/nsys-csv/littlelittlecloud-dotllm-kern-sum-rtx4090-win.log",
    "tests/data/nvprof-um/nanzifan-rodinia-bfs-um-thrashes.log",
    "tests/data/ncu-csv/andrewxu22-rodinia-cfd-v100-ncu2020.csv.log",
    "tests/data/ncu-text/alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log",
]
# what hostile-2.md found breaking tables: program output printed among their rows, rows of tens of
# thousands of tokens, digit runs past any count (issue 26)
STRAY = ["Done.", "Warning: device 0 throttled", "rank 3: iteration 10", "==PROF== Disconnected from process 1"]
TOKENS = ["nan", "inf", "-5", "1e400", "2_0", "99999999999999999999", "1,5", "1.234.567,8", "<b>", "</b>",
          "\f", "\x85", "\u2028", "\ufeff", "\r", "  ", "%", "ms", "==12==", "—12—", "//", "# ", "...", ""]


@st.composite
def mutated(draw):
    seed = draw(st.sampled_from(SEEDS))
    text = open(seed, encoding="utf-8").read()
    lines = text.split("\n")
    ops = ["token", "cut", "dup", "glue", "drop", "digit"]
    if "/nsys-" in seed or "/ncu-" in seed:  # (the nvprof readers' own cases: parse-engine's)
        ops += ["stray", "long", "digits"]
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(ops))
        k = draw(st.integers(0, max(len(lines) - 1, 0)))
        line = lines[k]
        if op == "token" and line:
            at = draw(st.integers(0, len(line)))
            lines[k] = line[:at] + draw(st.sampled_from(TOKENS)) + line[at:]
        elif op == "cut" and line:
            lines[k] = line[: draw(st.integers(0, len(line)))]
        elif op == "dup":
            lines.insert(k, line)
        elif op == "glue" and k + 1 < len(lines):
            lines[k : k + 2] = [lines[k] + lines[k + 1]]
        elif op == "drop" and len(lines) > 1:
            del lines[k]
        elif op == "digit" and any(c.isdigit() for c in line):
            at = draw(st.sampled_from([i for i, c in enumerate(line) if c.isdigit()]))
            lines[k] = line[:at] + draw(st.sampled_from("0123456789-_.,e")) + line[at + 1 :]
        elif op == "stray":
            lines.insert(k, draw(st.sampled_from(STRAY)))
        elif op == "long":
            lines[k] = line + draw(st.sampled_from([" 1ms", " 1", " 1 2,5", ",1"])) * draw(st.integers(1000, 20000))
        elif op == "digits" and any(c.isdigit() for c in line):
            at = draw(st.sampled_from([i for i, c in enumerate(line) if c.isdigit()]))
            lines[k] = line[:at] + "9" * draw(st.sampled_from([20, 400, 5000])) + line[at + 1 :]
    return "\n".join(lines)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_mutated_logs_keep_the_invariants(text):
    try:
        ps = profconv.parse_text(text)
    except ProfconvError:
        return
    check_all(ps, text)


@pytest.mark.parametrize("n", [1, 3])
def test_concatenated_logs_of_different_profilers(n):
    text = "".join(open(p, encoding="utf-8").read() for p in SEEDS[:n * 2])
    ps = profconv.parse_text(text)
    check_all(ps, text)
