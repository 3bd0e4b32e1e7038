"""Fuzzing the parser (hypothesis, bounded): real logs mutated the way hostile input is (digits
swapped for nan/inf/negative/underscored/huge numbers, lines cut, duplicated, glued, other line
breaks, markup) either raise profconv's own error or give rows that keep every invariant
(tests/parse_invariants.py). `nox -s fuzz` runs the same with many more examples."""

import os
import re

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
ACC_EVENT = re.compile(r"^(\s+)\d+:")
TOKENS = ["nan", "inf", "-5", "1e400", "2_0", "99999999999999999999", "1,5", "1.234.567,8", "<b>", "</b>",
          "\f", "\x85", "\u2028", "\ufeff", "\r", "  ", "%", "ms", "==12==", "—12—", "//", "# ", "...", ""]


@st.composite
def mutated(draw):
    seed = draw(st.sampled_from(SEEDS))
    text = open(seed, encoding="utf-8").read()
    lines = text.split("\n")
    ops = ["token", "cut", "dup", "glue", "drop", "digit", "stray", "long", "digits", "comma"]
    if "/acc-" in seed:
        ops += ["acc"]
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
        elif op == "comma" and "." in line:  # one cell written with a decimal comma ('0,03%')
            at = draw(st.sampled_from([i for i, c in enumerate(line) if c == "."]))
            lines[k] = line[:at] + "," + line[at + 1 :]
        elif op == "acc":  # a damaged OpenACC event line: its number lost, or a count that is no count
            lines[k] = ACC_EVENT.sub(draw(st.sampled_from([r"\1null:", r"\1:", r"\1x1:"])), line, count=1)
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


# nvprof, OpenACC, cudaprof and rocprof logs whose tables a stray line may interrupt (issue 26: one line
# of program output inside a table must not make later rows vanish without a word)
TABLES = [
    "tests/data/seeds/002_b0bcac5cefbf4480.log",
    "tests/data/nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log",
    "tests/data/nvprof-csv/leimingyu-magus-sobolqrng-gputrace.csv.log",
    "tests/data/nvprof-metrics/ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log",
    "tests/data/nvprof-new/tyler-cs566-reductions.log",
    "tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log",
    "tests/data/nvprof-um/nanzifan-rodinia-bfs-um-thrashes.log",
    "tests/data/acc-time/denismihailapov-lab2-heat-n128-multifunc.log",
    "tests/data/cudaprof/dmikushin-kernelgen-sincos-tesla-c2070-cuda-profile-log.log",
    "tests/data/rocprof/amd-hpctraining-rocprofv3-jacobi-domain-hip-api-kernel-stats.csv.log",
]


@settings(max_examples=EXAMPLES * 2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TABLES), st.floats(0, 1), st.sampled_from(STRAY[:3] + ["step 3: 12.5ms 3.1us"]))
def test_a_stray_line_never_loses_rows_silently(path, where, stray):
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    k = int(where * (len(lines) - 1))
    cut = "\n".join([*lines[:k], stray, *lines[k:]])
    whole = profconv.parse_text(text)
    try:
        ps = profconv.parse_text(cut)
    except ProfconvError:
        return
    check_all(ps, cut)
    lost = whole.rows.n - ps.rows.n
    said = len(ps.unplaced) > len(whole.unplaced) or len(ps.notes) > len(whole.notes)
    assert lost <= 0 or said, f"{path}: '{stray}' before line {k + 1} lost {lost} rows without a word"


@pytest.mark.parametrize("path", ["tests/data/seeds/002_b0bcac5cefbf4480.log",
                                  "tests/data/nvprof-new/tyler-cs566-reductions.log"])
def test_a_comma_in_one_api_cell_leaves_the_gpu_rows_alone(path):
    """hostile-2 D2: '0,03%' in an API row had blanked the GPU table's biggest row."""
    text = open(path, encoding="utf-8").read()
    whole = profconv.parse_text(text)
    gpu = whole.frame[whole.frame["section"] == "gpu"][["name", "total_ns", "avg_ns", "share"]]
    lines = text.split("\n")
    api = [i for i, ln in enumerate(lines) if "API calls:" in ln]
    assert api
    for i in api[:3]:
        lines_i = list(lines)
        lines_i[i] = re.sub(r"(\d+)\.(\d+)%", r"\1,\2%", lines_i[i], count=1)
        ps = profconv.parse_text("\n".join(lines_i))
        got = ps.frame[ps.frame["section"] == "gpu"][["name", "total_ns", "avg_ns", "share"]]
        assert got.reset_index(drop=True).equals(gpu.reset_index(drop=True))
