"""The C row reader of nvprof summaries (profconv/parse/_rowscan.c) gives what the regex path
gives, to the byte: `profconv parse FILE --json` of every test file, with the module and with
PROFCONV_PURE_PYTHON=1; the reader's columns against the regex's on random row-like lines
(hypothesis, bounded). Skipped where the module was not built (`python setup.py build_ext
--inplace`, or `pip install -e .` with a C compiler)."""

from __future__ import annotations

import string
from array import array
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profconv.parse import native
from profconv.parse.dialects import nvprof
from tests.conftest import run_cli

rowscan = pytest.importorskip("profconv.parse._rowscan", reason="the C row reader is not built")

DATA = Path(__file__).parent / "data"
FILES = sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*") if p.is_file() and p.name != "SOURCES.md")
ROWS = (DATA / "nvprof-new" / "tyler-cs566-reductions.log").read_text().split("\n")[8:28]


def _cli(monkeypatch, pure: bool, *args: str):
    with monkeypatch.context() as m:
        if pure:
            m.setenv("PROFCONV_PURE_PYTHON", "1")
        else:
            m.delenv("PROFCONV_PURE_PYTHON", raising=False)
        assert (native.load("_rowscan") is None) == pure
        return run_cli(*args)


def _both(monkeypatch, *args: str):
    c = _cli(monkeypatch, False, *args)
    py = _cli(monkeypatch, True, *args)
    assert (c.returncode, c.stdout, c.stderr) == (py.returncode, py.stdout, py.stderr)
    return c


def test_every_file_reads_alike():
    assert len(FILES) >= 150


@pytest.mark.parametrize("name", FILES)
def test_parse_json_with_and_without_c(monkeypatch, name):
    _both(monkeypatch, "parse", str(DATA / name), "--json")


# what the bulk reader must leave to the line path, or stop at, in one table: a name that is not
# ASCII (C hands the run to the regex), markup, a share above 100, a row glued after a name, a
# name that may go on, labels switching sections back and forth, PID prefixes, odd spacing
CASES = {
    "plain": ROWS,
    "not ASCII": ROWS[:3] + ["                    1.00%  2.0000us         1  2.0000us  2.0000us  2.0000us  kérnel(void)"]
    + ROWS[3:],
    "markup": ROWS[:2] + ["                   14.66%  648.83us       100  6.4880us  6.4630us  6.9760us  **k**(void)"]
    + ROWS[2:],
    "share above 100": ROWS[:4] + ["                  140.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  odd"]
    + ROWS[4:],
    "glued": ROWS[:5] + ["                    9.70%  429.34us       100  4.2930us  4.2560us  4.3520us  a(void)"
                         "                    4.18%  185.25us       100  1.8520us  1.8230us  1.9840us  b(void)"]
    + ROWS[5:],
    "percent in a name": ROWS[:1] + ["   1.00%  2.0000us         1  2.0000us  2.0000us  2.0000us  k_5%_of(void)"]
    + ROWS[1:],
    "wrapped": ROWS[:3] + ["                    1.00%  2.0000us         1  2.0000us  2.0000us  2.0000us  void k<int,",
                           "                       float>(int*)"] + ROWS[3:],
    "open at the end": ROWS + ["                    0.00%     100ns         1     100ns     100ns     100ns  tail(int,"],
    "labels": ROWS[:6] + ["      API calls:   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  cudaFree",
                          " GPU activities:   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  late(void)",
                          "OpenACC (excl):   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  acc_wait",
                          "OpenACC (incl):   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  acc_wait"]
    + ROWS[6:],
    "pid prefixes": ["==42==" + r for r in ROWS[:7]] + ["==42== " + r.lstrip() for r in ROWS[7:]],
    "odd spacing": [r.replace("  ", " \x1f", 2) for r in ROWS[:10]] + [r + " \x0c " for r in ROWS[10:]],
    "exponents": ROWS[:1] + ["                    1.00%  260.10ms         3  86.700ms  0.000001s  123456789012345ns  x",
                             "                    1.00%  999999999999999.999999999999s  999999999999999999  1s  1s  1s  y"]
    + ROWS[1:],
}
HEAD = ["==1== NVPROF is profiling process 1, command: ./m", "==1== Profiling application: ./m",
        "==1== Profiling result:", "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_tables_the_bulk_reader_cuts(monkeypatch, tmp_path, case):
    path = tmp_path / "log.txt"
    path.write_text("\n".join(HEAD + CASES[case] + ["output after the table"] + HEAD + CASES[case]) + "\n")
    for out in ("--json", "--csv"):
        assert _both(monkeypatch, "parse", str(path), out).returncode == 0


def test_scan_columns():
    """The GPU and API rows of a real log as two segments, their numbers those float() gives the
    printed text."""
    lines = ["header"] + ROWS + ["==1== NVPROF is profiling process 1, command: ./m"]
    count, stop, segments, pct_at = rowscan.scan(lines, 1, 100)
    assert (count, stop, pct_at) == (20, 0, -1)
    assert [(seg[0], seg[1], len(seg[2])) for seg in segments] == [("GPU activities", 0, 6), ("API calls", 6, 14)]
    label, a, names, calls, pct, total, avg, lo, hi = segments[0]
    assert names[:2] == ["fill(void)", "parallel_redution_block(void)"]
    assert calls[:3] == [400, 100, 400]
    assert all(isinstance(x, array) and x.typecode == "d" and len(x) == 6 for x in (pct, total, avg, lo, hi))
    assert (pct[0], total[0], avg[0], lo[0], hi[0]) == (49.75, 2202700.0, 5506.0, 5439.0, 6111.0)
    label, a, names, calls, pct, total, avg, lo, hi = segments[1]
    assert (names[0], calls[0], total[0], avg[0], lo[0], hi[0]) == ("cudaEventCreate", 2, 98832000.0, 49416000.0,
                                                                    564.0, 98831000.0)
    assert names[-1] == "cuDeviceGetUuid" and calls[-1] == 1
    # a label naming the section the rows are in goes on with it; OpenACC's two are one section
    acc = ["OpenACC (excl):   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  acc_wait",
           "OpenACC (incl):   50.00%  1.0000ms         2  500.00us  400.00us  600.00us  acc_wait"]
    got = rowscan.scan(ROWS[1:3] + acc + ROWS[6:8], 0, 10)
    assert [(seg[0], seg[1], len(seg[2])) for seg in got[2]] == [(None, 0, 2), ("OpenACC (excl)", 2, 2),
                                                                 ("API calls", 4, 2)]
    assert rowscan.scan(lines, 1, 3)[0] == 3  # lines[k:k+limit]
    assert rowscan.scan(lines, 21, 5) == (0, 0)  # not a row
    assert rowscan.scan(lines, 50, 5) == (0, 0)  # past the end
    assert rowscan.scan(["  100.01%  1s  1  1s  1s  1s  x"], 0, 1) == (0, 1)  # a row, not a share
    assert rowscan.scan(["  1.00%  1s  1  1s  1s  1s  a|b"], 0, 1) == (0, 1)  # markup
    assert rowscan.scan(lines[1:3] + ["  1.00%  1s  1  1s  1s  1s  µ"], 0, 5) == (2, 2)  # for the regex
    assert rowscan.scan([b"  1.00%  1s  1  1s  1s  1s  x"], 0, 1) == (0, 2)  # type: ignore[list-item]
    assert rowscan.scan(["  1.00%  260.10ms  1  1s  1s  1s  x"], 0, 1)[2][0][5][0] == 260100000.0
    with pytest.raises(TypeError):
        rowscan.scan(("a",), 0, 1)
    with pytest.raises(ValueError):
        rowscan.scan([], -1, 1)


# ---------------------------------------------------------------- random rows


def _digits(lo: int, hi: int):
    return st.text("0123456789", min_size=lo, max_size=hi)


# mostly what the pattern takes (so that most lines are rows), else what it must refuse
SPACE = st.sampled_from([" ", "  ", "   ", "\x0b", "\x1c", "\x1d", "\x1e", "\x1f", "\r", " \n ", "\x0c"])
ODD_SPACE = st.sampled_from(["\t", "\u00a0", "\u2003", "\x85", "", "x", "="])
UNIT = st.sampled_from(["s", "ms", "us", "ns", "µs", "", "m", "ks", "S"])
NAME = st.one_of(
    st.sampled_from(["", "k(void)", "void k<int,", "f(float*, ", "a::", "cudaFree", "k%", "x  9.50%  1.0us 2",
                     "x  12.00%  5ms", "<b>k</b>", "k<b>(int)", "k</tt>", "k<i>", "a|b", "a&amp;", "**", "\\*",
                     "a*b", "kérnel", "名前", "void", " void", "k\n", "k\nz", "k\r", "k \x1c", "k\x1f\x1d ",
                     "k\t", "k\x0b", "k\x85", "(", ")"]),
    st.text(string.printable + "µé%\u2014\u2013", max_size=12),
)


def _likely(draw) -> bool:
    return draw(st.integers(0, 9)) > 0


@st.composite
def number(draw):
    if _likely(draw):
        n = draw(_digits(1, 15))
        if draw(st.booleans()):
            n += "." + draw(_digits(1, 12))
        return n + draw(st.sampled_from(["s", "ms", "us", "ns"]))
    return draw(_digits(0, 17)) + draw(st.sampled_from(["", ".", ","])) + draw(_digits(0, 14)) + draw(UNIT)


@st.composite
def row_line(draw):
    parts = [draw(st.sampled_from(["", " ", "   ", "\t", "\x1c"]))]
    if draw(st.integers(0, 3)) == 0:
        parts += [draw(st.sampled_from(["==123==", "==1==", "==x==", "==", "==12=", "=="])),
                  draw(st.sampled_from(["", " ", "\x0b"]))]
    if draw(st.integers(0, 2)) == 0:
        parts += [draw(st.sampled_from(["GPU activities", "API calls", "OpenACC (excl)", "OpenACC (incl)",
                                        "GPU  activities", "API call"])),
                  draw(st.sampled_from(["", " ", "\t"])), draw(st.sampled_from([":", ":", ""]))]
    pct = (draw(_digits(1, 3)) + "." + draw(_digits(2, 2)) + "%" if _likely(draw) else
           draw(_digits(0, 4)) + draw(st.sampled_from([".", "", ","])) + draw(_digits(1, 3))
           + draw(st.sampled_from(["%", "", "%%"])))
    calls = draw(_digits(1, 18)) if _likely(draw) else draw(_digits(0, 20))
    for cell in (pct, draw(number()), calls, draw(number()), draw(number()), draw(number())):
        parts += [draw(SPACE) if _likely(draw) else draw(ODD_SPACE), cell]
    parts += [draw(SPACE) if _likely(draw) else draw(ODD_SPACE), draw(NAME)]
    return "".join(parts)


LINES = st.one_of(row_line(), st.sampled_from(ROWS), st.text(string.printable, max_size=30))


def _regex_groups(line: str):
    m = nvprof._FAST_ROW.match(line)
    return m.groups() if m is not None else None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_line())
def test_match_is_the_regex(line):
    if line.isascii():
        assert rowscan.match(line) == _regex_groups(line)
    else:
        with pytest.raises(ValueError):
            rowscan.match(line)


def _columns(got):
    """The segments with their arrays as bytes (so that equal means equal to the bit)."""
    count, stop, segments, pct_at = got
    return count, stop, pct_at, [(*seg[:4], [a.tobytes() for a in seg[4:]]) for seg in segments]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, max_size=12), st.integers(0, 3), st.integers(0, 14))
def test_scan_is_the_regex(lines, k, limit):
    c = rowscan.scan(lines, k, limit)
    py = nvprof._scan_regex(lines, k, limit=limit)
    if c[1] == 2:  # a line left to the regex: the rows before it are the regex's too
        assert len(c) == 2 and not lines[k + c[0]].isascii()
        assert py[0] >= c[0]
        limit = c[0]
        c, py = rowscan.scan(lines, k, limit), nvprof._scan_regex(lines, k, limit=limit)
    assert c[:2] == py[:2]
    if not c[0]:
        assert len(c) == len(py) == 2
        return
    assert _columns(c) == _columns(py)
    for seg in c[2]:
        assert all(isinstance(a, array) and a.typecode == "d" and len(a) == len(seg[2]) for a in seg[4:])


ROW = "{pre}{pct}%  {t}  {calls}  1.5us  1us  2us  {name}"
EDGES = [  # where the pattern's bounds are: each line on both sides of one
    ROW.format(pre=" ", pct="1.00", t="123456789012345s", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t="1234567890123456s", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t="1.123456789012ms", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t="1.1234567890123ms", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t="1.ms", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t=".5ms", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.00", t="5s", calls="123456789012345678", name="k"),
    ROW.format(pre=" ", pct="1.00", t="5s", calls="1234567890123456789", name="k"),
    ROW.format(pre=" ", pct="100.00", t="5s", calls="1", name="k"),
    ROW.format(pre=" ", pct="100.01", t="5s", calls="1", name="k"),
    ROW.format(pre=" ", pct="100.50", t="5s", calls="1", name="k"),
    ROW.format(pre=" ", pct="1000.00", t="5s", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.0", t="5s", calls="1", name="k"),
    ROW.format(pre=" ", pct="1.000", t="5s", calls="1", name="k"),
    ROW.format(pre="", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="==1==", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="==1== ", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="==1==API calls:", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="==1==API calls: ", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="API calls : ", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre="API calls ", pct="1.00", t="5s", calls="1", name="k"),
    ROW.format(pre=" == ", pct="1.00", t="5s", calls="1", name="k"),
] + [ROW.format(pre=" ", pct="1.00", t="5s", calls="1", name=n)
     for n in ["k \x1c\x1d\x1e\x1f\x0b\x0c\r", "k\t", "k\n", "k\nx", "k<b>", "k</strong>", "k<br>", "a**", "\\*",
               "*a*", "a|", "&", "k(int,", "void", "x void", "a::", "", " "]]


@pytest.mark.parametrize("line", EDGES)
def test_edges(line):
    assert rowscan.match(line) == _regex_groups(line)
    lines = [line, ROWS[1]]
    c, py = rowscan.scan(lines, 0, 2), nvprof._scan_regex(lines, 0)
    assert c[:2] == py[:2]
    if c[0]:
        assert _columns(c) == _columns(py)


def test_times_are_float_of_the_text():
    """Every time and share of 24,000 random rows (1-15 integer digits, 0-12 decimals, each unit;
    both sides of Clinger's fast path: 15 digits and more, powers of ten past 10**22) is float() of
    the digits and the unit's exponent, to the bit."""
    import random

    rng = random.Random(23)
    exps = {"s": "e9", "ms": "e6", "us": "e3", "ns": ""}
    lines, want = [], []
    for _ in range(24_000):
        ints = "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 15)))
        dec = "".join(rng.choice(string.digits) for _ in range(rng.choice((0, 1, 2, 4, 6, 9, 12))))
        text = ints + ("." + dec if dec else "")
        unit = rng.choice(list(exps))
        pct = f"{rng.randint(0, 99)}.{rng.randint(0, 99):02d}"
        lines.append(f"                   {pct}%  {text}{unit}  3  1.5us  {text}{unit}  2us  k{len(lines)}")
        want.append((float(pct), float(text + exps[unit]), 1500.0, float(text + exps[unit]), 2000.0))
    count, stop, segments, _ = rowscan.scan(lines, 0, len(lines))
    assert (count, stop, len(segments)) == (len(lines), 0, 1)
    got = list(zip(*(a.tolist() for a in segments[0][4:])))
    assert array("d", [v for row in got for v in row]).tobytes() == array("d", [v for row in want for v in row]).tobytes()
    assert nvprof._scan_regex(lines, 0)[2][0][4:] == segments[0][4:]
