"""Summary-only nvprof profiles read in one go (profconv/parse/dialects/nvprof/text_sweep.py): the same
`--json`/`--csv`/table as the engine's loop over every line (the sweep switched off) and as the
pure-Python readers, on generated logs whose profiles the engine reads otherwise here and there, and
how many profiles the sweep makes. (Such a log of two profiles or more is read as columns instead from
stream.SWEEP_FROM bytes where NumPy is loaded, as here: tests/test_parse_nvprof_text_columns.py; these
tests read it whole, as a CLI run does below SWEEP_PAYS_FROM.)"""

from __future__ import annotations

import random

import pytest

import profconv
from profconv.parse import stream
from profconv.parse.dialects.nvprof import text_sweep
from tests.fastpath_compare import cli_outputs


@pytest.fixture(autouse=True)
def read_whole(monkeypatch):
    """The whole-file readers (their text_sweep), not the columnar sweep's C pass."""
    monkeypatch.setattr(stream, "SWEEP_FROM", 1 << 40)

START = "=={k}== NVPROF is profiling process {k}, command: ./main {k}\n"
OUTPUT = "Average running time for Warp Reduction 0.0059{k} ms\n"
APP = "=={k}== Profiling application: ./main {k}\n"
RESULT = "=={k}== Profiling result:\n"
HEADER = "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
GPU = ["fill(void)", "parallel_redution_block(void)", "[CUDA memcpy HtoD]", "conv_forward_kernel(float*, float const *, int)"]
API = ["cudaEventCreate", "cudaLaunchKernel", "cudaDeviceSynchronize", "cuDeviceGetAttribute"]


def _time(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.4f}{unit}"
    return f"{ns:.0f}ns"


def _rows(rng: random.Random, label: str, names: list[str]) -> str:
    calls = [rng.randint(1, 800) for _ in names]
    avgs = [rng.uniform(500, 90000) for _ in names]
    whole = sum(c * a for c, a in zip(calls, avgs))
    out = []
    for x, (name, c, avg) in enumerate(zip(names, calls, avgs)):
        cells = (f"{100 * c * avg / whole:.2f}%", _time(avg * c), str(c), _time(avg), _time(avg * 0.9), _time(avg * 1.2))
        head = f"{label}:" if x == 0 and label.strip() else ""
        out.append(f"{head:>16s}  " + "  ".join(f"{cell:>8s}" for cell in cells) + f"  {name}\n")
    return "".join(out)


def _log(n: int = 30, odd: dict[int, str] | None = None, rows: dict[int, str] | None = None, seed: int = 3) -> str:
    """n profiles; profile k's lines before its header replaced by odd[k] where given ('{k}' in
    it: k + 1), its rows by rows[k]."""
    rng = random.Random(seed)
    parts = []
    for k in range(n):
        head = (odd or {}).get(k, START + OUTPUT + OUTPUT + APP + RESULT)
        body = _rows(rng, " GPU activities", GPU) + _rows(rng, "      API calls", API)
        parts.append(head.replace("{k}", str(k + 1)) + HEADER + (rows or {}).get(k, body))
    return "".join(parts)


MODES = (["--json"], ["--csv"], ["--width", "150"])


def _outputs(path, monkeypatch) -> tuple[dict[str, tuple], int]:
    """--json, --csv and the table of `path` by the sweep, the engine's loop and the pure-Python
    readers; how many profiles the sweep made (in its first run)."""
    made: list[int] = []
    real = text_sweep.sweep

    def counted(ctx, cur):
        before = len(ctx.events)
        done = real(ctx, cur)
        made.extend(len(ev.profiles or ()) for ev in ctx.events[before:])
        return done

    ways = {"sweep": lambda m: m.setattr(text_sweep, "sweep", counted),
            "loop": lambda m: m.setattr(text_sweep, "sweep", lambda ctx, cur: False),
            "pure": lambda m: m.setenv("PROFCONV_PURE_PYTHON", "1")}
    return cli_outputs(path, monkeypatch, ways, MODES), sum(made) // 3  # three parses


PLAIN = START + OUTPUT + APP + RESULT
CASES = {
    # odd head of profile 5 (index), rows of profile 5: profiles the sweep makes of 30 (the last one
    # is always the loop's: nothing follows it; an odd one is the loop's, and so is the one before
    # it where its start line is none the sweep takes; the sweep starts again at the next start)
    "plain": ({}, {}, 29),
    "no program output": ({5: START + APP + RESULT}, {}, 29),
    "program output that looks like data": ({5: START + "took 1.5ms then 2.5ms\n" + APP + RESULT}, {}, 29),
    "program output with a marker word": ({5: START + "Start 1\n" + APP + RESULT}, {}, 28),
    "program output with a PID prefix": ({5: START + "=={k}== Warning: something\n" + APP + RESULT}, {}, 28),
    "markup in the start line": ({5: START.replace("./main", "**./main**") + APP + RESULT}, {}, 29),
    "markup in the output": ({5: START + "a | b | c\n" + APP + RESULT}, {}, 29),
    "a share in the command": ({5: START.replace("./main", "./main 50%") + APP + RESULT}, {}, 27),
    "no application line": ({5: START + OUTPUT + RESULT}, {}, 28),
    "no result line": ({5: START + APP}, {}, 28),
    "a blank line before the header": ({5: PLAIN + "\n"}, {}, 28),
    "equals signs as the prefix": ({5: PLAIN.replace("=={k}==", "========")}, {}, 29),
    "no PID prefixes": ({5: PLAIN.replace("=={k}== ", "")}, {}, 29),
    "a PID of many digits": ({5: PLAIN.replace("=={k}==", "==" + "9" * 25 + "==")}, {}, 29),
    "another PID on the application line": ({5: START + APP.replace("{k}", "77") + RESULT}, {}, 29),
    "an empty command": ({5: START.replace(" ./main {k}", "") + APP + RESULT}, {}, 27),
    "a quote in the application": ({5: START + APP.replace("./main", '"./main"') + RESULT}, {}, 29),
    "a CSV header in the application": ({5: START + APP.replace("./main", "Time(%),Time,Calls,") + RESULT}, {}, 28),
    "a stray line before the start": ({5: "Done.\n" + PLAIN}, {}, 28),
    "two starts": ({5: START + PLAIN}, {}, 29),
}
ROWS = {
    "GPU activities only": _rows(random.Random(1), " GPU activities", GPU),
    "API calls first": _rows(random.Random(1), "      API calls", API) + _rows(random.Random(2), " GPU activities", GPU),
    "no label": _rows(random.Random(1), "", GPU),
    "a name that goes on": _rows(random.Random(1), " GPU activities", [*GPU[:3], "kernel(float*,"]) + "int)\n",
    "an API call among the GPU activities": _rows(random.Random(1), " GPU activities", [*GPU, "cudaMalloc"]),
    "GPU activities twice": _rows(random.Random(1), " GPU activities", GPU) + _rows(random.Random(2), "      API calls", API)
    + _rows(random.Random(3), " GPU activities", GPU),
    "a share above 100": " GPU activities:  100.50%  1.0000ms  2  500.00us  400.00us  600.00us  k(int)\n",
    "a blank line after the rows": _rows(random.Random(1), " GPU activities", GPU) + "\n",
    "program output after the rows": _rows(random.Random(1), " GPU activities", GPU) + "done 1.5ms 2.5ms\n",
    "a name that is not ASCII": _rows(random.Random(1), " GPU activities", ["kernel_µs(float*)", *GPU[1:]]),
    "a tab in a name": _rows(random.Random(1), " GPU activities", ["kernel\t(float*)", *GPU[1:]]),
    "rows glued together": " GPU activities:   60.00%  1.0000ms  2  500.00us  400.00us  600.00us  k(int)   "
    "40.00%  1.0000ms  2  500.00us  400.00us  600.00us  j(int)\n",
}
ROWS_MADE = {"GPU activities only": 29, "API calls first": 29, "no label": 29, "a name that goes on": 28,
             "an API call among the GPU activities": 28, "GPU activities twice": 28, "a share above 100": 28,
             "a blank line after the rows": 28, "program output after the rows": 28, "a name that is not ASCII": 29,
             "a tab in a name": 28, "rows glued together": 28}


@pytest.mark.parametrize("case", list(CASES))
def test_the_sweep_gives_what_the_loop_gives(case, tmp_path, monkeypatch):
    odd, rows, want = CASES[case]
    path = tmp_path / "profiles.log"
    path.write_text(_log(odd=odd, rows=rows))
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert got["sweep"][0][0] == 0
    assert made == want


@pytest.mark.parametrize("case", list(ROWS))
def test_rows_the_sweep_leaves_to_the_loop(case, tmp_path, monkeypatch):
    path = tmp_path / "profiles.log"
    path.write_text(_log(rows={5: ROWS[case]}))
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert made == ROWS_MADE[case]


def test_the_profiles_made(tmp_path):
    """What the sweep makes of a plain log: each profile's PID, command, lines and rows."""
    path = tmp_path / "profiles.log"
    path.write_text(_log(n=4, odd={1: START + APP.replace("{k}", "77") + RESULT}))
    ps = profconv.parse(str(path))
    assert [(p.pid, p.command) for p in ps.profiles] == [(1, "./main 1"), (77, "./main 2"), (3, "./main 3"),
                                                         (4, "./main 4")]
    rows = ps.rows
    assert rows.n == 32
    assert list(rows.col("line_start")[:9]) == [7, 8, 9, 10, 11, 12, 13, 14, 19]
    assert list(rows.col("section")[:9]) == ["gpu"] * 4 + ["api"] * 4 + ["gpu"]
    assert list(rows.col("name")[4:6]) == ["cudaEventCreate", "cudaLaunchKernel"]


def test_a_long_log_read_part_by_part(tmp_path, monkeypatch):
    """In windows (profconv.parse.stream): each window's sweep from its first start line on; the
    state a window's cut resumes from is the one the loop keeps at each profile start."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 16)
    monkeypatch.setattr(stream, "WINDOW", 1 << 14)
    path = tmp_path / "long.log"
    # a row whose total is not calls x average (dropped, its line reported) in a later window
    bad = " GPU activities:  100.00%  1.0000ms  2  100.00us  90.00us  120.00us  k(int)\n"
    path.write_text(_log(n=400, odd={100: START + "Start 1\n" + APP + RESULT, 301: "# " + PLAIN}, rows={250: bad}))
    assert sum(1 for _ in stream.parts(str(path))) > 5
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert made > 350
    no_numpy = {"no numpy": lambda m: m.setattr(text_sweep, "_numpy_imported", lambda: False)}  # as a CLI run without it
    assert cli_outputs(path, monkeypatch, no_numpy, MODES)["no numpy"] == got["sweep"]


def _seen(result) -> tuple:
    """A dialect result as plain values: each profile's fields and its blocks' rows (from a batch
    range, a table or Row objects alike), the lines claimed, unplaced and read as rows, the states."""
    cols = ("name", "time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns")

    def rows(b):
        if b.span is not None:
            got = [b.span.col(c) for c in cols]
            lines = list(range(b.line_start, b.line_start + b.span.n))
        elif b.table is not None:
            got = [b.table.col(c) for c in cols]
            lines = list(b.table.col("line_start"))
        else:
            got = [[getattr(r, c) for r in b.rows] for c in cols]
            lines = [r.line_start for r in b.rows]
        return [*zip(lines, *got)]

    profiles = [(p.line_start, p.line_end, p.pid, p.command, p.device,
                 [(b.section, b.line_start, b.line_end, b.kind, b.notes, rows(b)) for b in p.blocks])
                for p in result.profiles]
    return profiles, sorted(result.claimed), result.unplaced, result.rows_read, result.resume


@pytest.mark.parametrize("seed", range(6))
def test_c_and_python_read_random_profiles_alike(seed, monkeypatch):
    """_rowscan.profiles (C) and the Python checks, on logs whose profiles each take a random odd
    head or rows: the same profiles, lines and states as the engine's loop."""
    from profconv.parse import native
    from profconv.parse.dialects import nvprof
    from profconv.parse.model import Document

    if native.load("_rowscan") is None:
        pytest.skip("the C row scanner is not built")
    rng = random.Random(seed)
    heads, rows = [h for h, _, _ in CASES.values() if h], list(ROWS.values())
    n = 120
    odd = {k: rng.choice(heads)[5] for k in range(n) if rng.random() < 0.3}
    text = _log(n=n, odd=odd, rows={k: rng.choice(rows) for k in range(n) if rng.random() < 0.2}, seed=seed)
    got = {}
    for how in ("c", "c-tables", "python", "loop"):
        with monkeypatch.context() as m:
            if how == "c-tables":  # no NumPy imported: the batch's blocks as tables of their own
                m.setattr(text_sweep, "_numpy_imported", lambda: False)
            elif how == "python":
                m.setenv("PROFCONV_PURE_PYTHON", "1")
            elif how == "loop":
                m.setattr(text_sweep, "sweep", lambda ctx, cur: False)
            got[how] = _seen(nvprof.parse(Document(lines=text.split("\n"), label="x", text=text)))
    assert got["c"] == got["c-tables"] == got["python"] == got["loop"]
    assert len(got["c"][0]) > 90


def test_a_cli_run_imports_no_numpy(tmp_path):
    """Profiles read in one go make no parse import NumPy (~0.1 s of a CLI run): without it their
    blocks are tables of their own."""
    import subprocess
    import sys

    path = tmp_path / "profiles.log"
    path.write_text(_log(n=40))
    code = "\n".join([
        "import sys", "from profconv.cli import main", "from profconv.parse.dialects.nvprof import text_sweep",
        "made = []", "real = text_sweep._batch",
        "def counted(ctx, got):", "    out = real(ctx, got)", "    made.extend(out)", "    return out",
        "text_sweep._batch = counted",
        "for extra in (['--json'], ['--csv']):", "    try:",
        f"        main(['parse', {str(path)!r}, *extra])",
        "    except SystemExit as e:", "        assert not e.code, e.code",
        "print(len(made), sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "78 []", r.stderr
