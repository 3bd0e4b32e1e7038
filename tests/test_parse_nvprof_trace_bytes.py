"""Big nvprof GPU/API traces read on the input's bytes (profconv/parse/dialects/nvprof/trace_bytes.py,
the C pass profconv.parse._bytescan.trace): the same `--json`/`--csv` as the text path and as the
pure-Python readers, on generated traces that take the byte path and on variants that must not (or
must go back to the text path: `Reparse`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from profconv.parse import bytescan, core, native, traces
from profconv.parse.dialects.nvprof import trace, trace_bytes
from tests.fastpath_compare import byte_path_used, cli_outputs, text_path

SCAN = native.load("_bytescan")
pytestmark = pytest.mark.skipif(SCAN is None or not hasattr(SCAN, "trace"), reason="the C accelerator is not built")
pytest.importorskip("pyarrow", reason="bytescan is off without pyarrow")

COLUMNS = [("Start", 14), ("Duration", 12), ("Grid Size", 15), ("Block Size", 16), ("Regs*", 10), ("Size", 10),
           ("Throughput", 12), ("Device", 25), ("Context", 10), ("Stream", 10)]
NAMES = ["conv_forward_kernel(float*, float const *, int) [{}]", "[CUDA memcpy HtoD]", "void k<float, 16>(float*) [{}]"]
HEAD = "==20== NVPROF is profiling process 20, command: ./m3\n==20== Profiling application: ./m3\n==20== Profiling result:\n"


def _line(cells: list[str]) -> str:
    return "".join(c.rjust(w) for c, (_, w) in zip(cells, COLUMNS)) + "  " + cells[-1]


def _rows(n: int, seed: int = 1, names: list[str] = NAMES, unit: str = "ms") -> list[str]:
    rng = random.Random(seed)
    out, t = [], 100.0
    for i in range(n):
        dur = rng.uniform(1.0, 900.0)
        name = names[i % len(names)].format(i + 100)
        mem = name.startswith("[")
        out.append(_line([f"{t:.5f}{unit}", f"{dur:.4f}us", "-" if mem else "(157 1 1)", "-" if mem else "(256 1 1)",
                          "-" if mem else "32", "1.0000MB" if mem else "-", "1.2GB/s" if mem else "-",
                          "Tesla V100-SXM2 (0)", "1", "7", name]))
        t += dur / 1000 + 0.002
    return out


def _trace(rows: list[str], after: str = "\n==20== API calls:\n") -> str:
    header = "".join(h.rjust(w) for h, w in COLUMNS) + "  Name"
    return HEAD + header + "\n" + "\n".join(rows) + "\n" + after


# --json and --csv of a file (cli_outputs): the byte path, the text path (bytes not looked at), the pure-Python readers
WAYS = {"bytes": lambda m: None, "text": text_path, "pure": lambda m: m.setenv("PROFCONV_PURE_PYTHON", "1")}


def _outputs(path: Path, monkeypatch) -> dict[str, tuple]:
    return cli_outputs(path, monkeypatch, WAYS, (["--json"], ["--csv"]))


@pytest.fixture(autouse=True)
def _small_tables(monkeypatch):
    """Tables of a few hundred rows take the byte path (and the text path's bulk slices are 200 rows)."""
    monkeypatch.setattr(trace_bytes, "MIN_ROWS", 100)
    monkeypatch.setattr(trace_bytes, "BULK_LINES", 200)
    monkeypatch.setattr(trace, "BULK_LINES", 200)


def _api_trace(n: int, names: list[str]) -> str:
    rng = random.Random(3)
    rows, t = [], 10.0
    for i in range(n):
        dur = rng.uniform(1.0, 90.0)
        rows.append(f"{t:.5f}ms".rjust(14) + f"{dur:.4f}us".rjust(12) + "  " + names[i % len(names)].format(i + 7))
        t += dur / 1000 + 0.001
    return HEAD + "Start".rjust(14) + "Duration".rjust(12) + "  Name\n" + "\n".join(rows) + "\n\n"


ROWS = _rows(500)
CASES = {
    "plain": (_trace(ROWS), "bytes"),
    "a marker after the rows": (_trace(ROWS, after="==20== API calls:\n"), "bytes"),
    "the input's end after the rows": (_trace(ROWS, after=""), "bytes"),
    "no newline at the end": (_trace(ROWS, after="")[:-1], "bytes"),  # its last row read by the text path's reader
    # the input cut while its last row was written (a job's time limit): the rows before it from the bytes,
    # that line read by the text path's reader (a row with its name cut, or a line reported unplaced)
    **{f"cut {where}": (_trace(ROWS, after="")[:-k], "bytes") for where, k in (
        ("in its name", 12), ("in its device", len(ROWS[-1]) - 110), ("in its start", len(ROWS[-1]) - 8),
        ("after its start", len(ROWS[-1]) - 13))},
    "program output after the rows": (_trace(ROWS, after="Done.\n"), "none"),
    "an indented line after the blank one": (_trace(ROWS, after="\n    indented text\n"), "none"),
    "seconds": (_trace(_rows(500, unit="s")), "bytes"),
    "nanoseconds": (_trace(_rows(500, unit="ns")), "bytes"),
    "a stray line among the rows": (_trace(ROWS[:250] + ["Done."] + ROWS[250:]), "none"),
    "a row without a duration": (_trace(ROWS[:250] + [ROWS[250].replace(ROWS[250].split()[1], "-".rjust(len(
        ROWS[250].split()[1])), 1)] + ROWS[251:]), "none"),
    "an ampersand in a name": (_trace(_rows(500, names=["k&amp;(int) [{}]", "m"])), "none"),
    "a line break tag in a name": (_trace(_rows(500, names=["k<br>(int) [{}]", "m"])), "none"),
    "a comment opener in a name": (_trace(_rows(500, names=["k/*x*/(int) [{}]", "m"])), "none"),
    "not ascii in a name": (_trace(_rows(500, names=["k\u00e9(int) [{}]", "m"])), "none"),
    "a tab in a name": (_trace(_rows(500, names=["k\t(int) [{}]", "m"])), "none"),
    "too few rows in the last slice": (_trace(_rows(430)), "none"),
    "rows filling the slices": (_trace(_rows(400)), "bytes"),
    "too few rows": (_trace(_rows(60)), "none"),
    "a 16-digit start": (_trace(ROWS[:10] + [ROWS[10].replace(ROWS[10].split()[0], "1" * 16 + "ms", 1)] + ROWS[11:]),
                         "none"),
    "two traces": (_trace(ROWS) + _trace(_rows(300, 2)), "bytes"),
    "a prefixed header": (_trace(ROWS).replace("         Start", "==20== Start", 1), "none"),
    "an API trace": (_api_trace(300, ["cudaMalloc", "cudaLaunchKernel (k(int) [{}])", "cudaMemcpy"]), "bytes"),
    "names without ids": (_trace(_rows(300, names=["k(int)", "[CUDA memset]"])), "bytes"),
    "an id alone": (_trace(_rows(300, names=["[{}]", "k(int) [{}]", "m [x{}]", "n []", "p  [{}]"])), "bytes"),
    "a DEL byte in a name": (_trace(_rows(500, names=["k\x7f(int) [{}]", "m"])), "bytes"),
    "a harmless '<' and '/' in names": (_trace(_rows(500, names=["void k<float, 16>(a/b) [{}]", "m </> [{}]"])),
                                        "bytes"),
    "hundreds of base names": (_trace(_rows(600, names=[f"void k<float, {i}>(float*) [{{}}]" for i in range(300)])),
                               "bytes"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_byte_path_gives_what_the_text_path_gives(case, tmp_path, monkeypatch):
    text, want = CASES[case]
    path = tmp_path / "trace.log"
    path.write_text(text)
    assert byte_path_used(path) == want
    got = _outputs(path, monkeypatch)
    assert got["bytes"] == got["text"] == got["pure"]
    assert got["bytes"][0][0] == 0


def test_a_taken_trace_in_numbers(tmp_path):
    path = tmp_path / "trace.log"
    path.write_text(_trace(ROWS))
    cols = bytescan.find(path.read_bytes(), core.BYTES_PAY_FROM).tables[3].batch
    assert (cols.section, cols.name_col, len(cols.names)) == ("gpu-trace", 136, 500)
    assert cols.names[:2] == ["conv_forward_kernel(float*, float const *, int) [100]", "[CUDA memcpy HtoD]"]
    assert cols.start_ns[0] == 100000000.0
    assert list(cols.start_ns[:3]) == [float(r.split()[0][:-2] + "e6") for r in ROWS[:3]]
    assert list(cols.total_ns[:3]) == [float(r.split()[1][:-2] + "e3") for r in ROWS[:3]]
    assert cols.bases is not None and cols.bases[1] == ["conv_forward_kernel(float*, float const *, int)",
                                                         "[CUDA memcpy HtoD]", "void k<float, 16>(float*)"]
    assert cols.bases[0][:4].tolist() == [0, 1, 2, 0] and cols.bases[0].typecode == "q"


def test_base_names_as_base_codes_numbers_them():
    names = ["k(int) [12]", "k(int)  [13]", "m [x1]", "n []", "[CUDA memset]", "q[[7]", "k(int) [14]", "m [x1]"]
    data = "".join(f"  1.0ms  2.0us  {n}\n" for n in names).encode()
    *_, got_names, coded = SCAN.trace(data, 0, 16)
    assert got_names == names
    index: dict[str, int] = {}
    assert list(memoryview(coded[0]).cast("q")) == traces.base_codes(names, index) == [0, 0, 1, 2, 3, 4, 0, 1]
    assert coded[1] == list(index) == ["k(int)", "m [x1]", "n []", "[CUDA memset]", "q["]
    for odd in ("[12]", "cudaLaunch (k(int) [3])"):  # base_codes decides these
        assert SCAN.trace(f"  1.0ms  2.0us  {odd}\n".encode(), 0, 16)[-1] is None


def test_times_in_one_pass_are_what_python_reads():
    rng = random.Random(11)
    width = 40
    cells = ["".join(rng.choice("0123456789") for _ in range(rng.randint(1, 15)))
             + ("." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12))) if rng.random() < 0.8 else "")
             for _ in range(30000)]
    cells += ["0.1", "260.10", "123456789012345.123456789012", "999999999999999", "0", "1.000000000001"]
    for unit, exp in (("s", "e9"), ("ms", "e6"), ("us", "e3"), ("ns", "")):
        data = "".join(f"{c + unit:>{width}} {c + unit:>{width}}  k\n" for c in cells).encode()
        end, n, starts, durs, names, _ = SCAN.trace(data, 0, 2 * width + 3)
        assert (end, n) == (len(data), len(cells))
        assert list(memoryview(starts).cast("d")) == [float(c + exp) for c in cells]
        assert names == ["k"] * len(cells)


def test_one_long_trace_is_not_read_in_windows(tmp_path, monkeypatch):
    """A log with one profile start in its first STREAM_FROM bytes is read whole at once (the
    stream would read on to there and give up); two starts: part by part."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 14)
    one, two = tmp_path / "one.log", tmp_path / "two.log"
    one.write_text(_trace(ROWS))
    two.write_text(_trace(ROWS[:60]) + _trace(ROWS[60:]))
    assert (stream.starts_twice(str(one), None), stream.starts_twice(str(two), None)) == (False, True)
    assert stream.read_long(str(one)) is None


def test_many_base_names_numbered_as_base_codes_numbers_them():
    """Thousands of distinct base names (the C table of base names grows many times), some alike
    but for their last or middle bytes, in an order that repeats them: codes and bases as
    traces.base_codes gives them."""
    rng = random.Random(3)
    bases = [f"void k{i % 97}<float, {i}>(float*, int{'x' * (i % 13)}) a" + "a" * (i % 9) for i in range(3000)]
    names = [f"{rng.choice(bases)} [{i}]" if i % 4 else rng.choice(bases) for i in range(20_000)]
    data = "".join(f"  1.0ms  2.0us  {n}\n" for n in names).encode()
    end, rows, _, _, got_names, coded = SCAN.trace(data, 0, 16)
    assert (end, rows, got_names) == (len(data), len(names), names)
    index: dict[str, int] = {}
    assert list(memoryview(coded[0]).cast("q")) == traces.base_codes(names, index)
    assert coded[1] == list(index)


@pytest.mark.parametrize("mark, taken", [("<br", False), ("<BR", False), ("<pre", False), ("<PRE", False),
                                         ("/*", False), ("&", False), ("\\", False), ("\t", False), ("é", False),
                                         ("\x7f", True), ("<b", True), ("<p", True), ("/", True), ("<", True),
                                         ("*/", True), ("<float, 16>", True)])
def test_what_normalize_rewrites_stops_the_rows_at_every_offset(mark, taken):
    """A row holding what normalize would rewrite is not read on the bytes wherever it is in the
    line (the 16-byte steps of the C check and their edges: the mark at every offset, across a
    step's end too); a row with a harmless '<' or '/' is."""
    for at in range(0, 40):
        name = "k" * at + mark + "(float*) [7]"
        row = f"  1.0ms  2.0us  {name}\n".encode()
        end, rows, *_ = SCAN.trace(row + b"  1.0ms  2.0us  m [8]\n", 0, 16)
        assert rows == (2 if taken else 0), (mark, at)
        assert end == (len(row) + 22 if taken else 0)


@pytest.mark.parametrize("tail, nxt", [("<b", "r"), ("<B", "R"), ("<pr", "e"), ("/", "*"), ("<", "pre")])
def test_a_mark_cut_by_the_line_end_is_no_mark(tail, nxt):
    """A row ending with the start of a mark ('<b' before a line that starts with 'r') holds none:
    the row is read on the bytes (as normalize sees it: marks are within one line); the next line,
    no row, ends the trace."""
    for at in range(0, 20):
        row = f"  1.0ms  2.0us  {'k' * at}{tail}\n".encode()
        end, rows, _, _, names, _ = SCAN.trace(row + f"{nxt}x\n".encode(), 0, 16)
        assert (end, rows, names) == (len(row), 1, ["k" * at + tail]), (tail, at)


def test_base_names_alike_in_length_and_key_bytes_keep_their_codes():
    """Base names of one length that agree in their last and middle bytes (one slot of the C pass's
    recent names) alternating: each its own code, as base_codes numbers them."""
    names = ["ab_1_x [1]", "ab_2_x [2]", "ab_1_x [3]", "ab_3_x", "ab_2_x [5]", "ab_1_x"]
    data = "".join(f"  1.0ms  2.0us  {n}\n" for n in names).encode()
    *_, got_names, coded = SCAN.trace(data, 0, 16)
    assert got_names == names
    assert list(memoryview(coded[0]).cast("q")) == [0, 1, 0, 2, 1, 0]
    assert coded[1] == ["ab_1_x", "ab_2_x", "ab_3_x"]
    # alike in length and in their last eight bytes (one slot), apart before them
    names = ["k1_float_ptr(a) [1]", "k2_float_ptr(a) [2]", "k1_float_ptr(a)", "k2_float_ptr(a)", "k3_float_ptr(a) [4]"]
    data = "".join(f"  1.0ms  2.0us  {n}\n" for n in names).encode()
    *_, got_names, coded = SCAN.trace(data, 0, 16)
    assert got_names == names and list(memoryview(coded[0]).cast("q")) == [0, 1, 0, 1, 2]
    assert coded[1] == ["k1_float_ptr(a)", "k2_float_ptr(a)", "k3_float_ptr(a)"]


def _by_kind(data: bytes, small: list) -> list:
    """What bytescan found before its one walk: each kind looked for alone over the whole input
    (nvprof traces first, nsys headers outside them)."""
    found = []
    at = data.find(b"Duration")
    while at >= 0:
        b = data.find(b"\n", at) + 1
        if b == 0:
            break
        got = trace_bytes.table(data, data.rfind(b"\n", 0, at) + 1, b)
        if got is not None:
            found.append(got)
            b = got[2]
        at = data.find(b"Duration", b)
    skip = [(t[0], t[2]) for t in found]
    return sorted([(*s, None, 0) for head in bytescan.HEADERS for s in bytescan._spans(data, head, small, skip)]
                  + found)


def _nsys_table(rng: random.Random, summary: bool) -> list[str]:
    if summary:
        head = bytescan.SUMMARY.decode() + "Instances,Avg (ns),Name"
        return [head] + [f"{rng.randint(1, 99)}.0,{rng.randint(1, 9999)},3,5.0,k{i}" for i in range(rng.randint(0, 12))]
    head = "Start (ns),Duration (ns),CorrId,Name"
    return [head] + [f"{1000 + i},{rng.randint(1, 999)},{i},k{i % 3}" for i in range(rng.randint(0, 30))]


class _NoFind:
    """The C module without its search (bytes.find is used then)."""

    def __getattr__(self, name: str):
        if name == "find":
            raise AttributeError(name)
        return getattr(SCAN, name)


@pytest.mark.parametrize("search", ["C", "bytes.find"])
def test_one_walk_finds_what_each_kind_finds_alone(search, monkeypatch):
    """bytescan._sweep (the next header line of any kind, then on after its table's rows) gives the
    spans and small summary tables that looking for each kind alone over the whole input gives:
    traces, nsys traces and summaries (taken, too small, damaged) next to each other, at the
    input's start, without a newline at its end, and lines that hold a kind's mark but are no header."""
    monkeypatch.setattr(bytescan, "MIN_ROWS", 8)
    if search == "bytes.find":
        load = native.load
        monkeypatch.setattr(native, "load", lambda name: _NoFind() if name == "_bytescan" else load(name))
    rng = random.Random(23)
    junk = ["Done.", "", "Duration of the run: 3 s", "  Start  Duration  Name", "Start (ns)", "x Start (ns),y",
            "Time (%) alone", "==20== API calls:", "    indented", "12,34,5"]
    for _ in range(400):
        lines: list[str] = []
        for _ in range(rng.randint(1, 7)):
            pick = rng.random()
            if pick < 0.3:
                lines += _trace(_rows(rng.choice([120, 150, 60, 230]), seed=rng.randint(1, 9)),
                                after=rng.choice(["", "\n", "==20== x\n"])).splitlines()
            elif pick < 0.6:
                lines += _nsys_table(rng, summary=rng.random() < 0.5)
                if rng.random() < 0.5:
                    lines.append("")
            else:
                lines += rng.sample(junk, rng.randint(1, 3))
        data = "\n".join(lines).encode() + (b"\n" if rng.random() < 0.8 else b"")
        if rng.random() < 0.1:
            data = data.replace(b"k1\n", b"k\xc3\xa91\n", 1)  # a damaged (not ASCII) row
        small_walk: list = []
        small_alone: list = []
        assert bytescan._sweep(data, small_walk) == _by_kind(data, small_alone)
        assert small_walk == small_alone


def test_marks_counted_as_count_counts_them():
    """stream._marks (the C search) counts a mark as bytes.count does, up to `most`; scan.find is
    bytes.find."""
    from profconv.parse import stream

    rng = random.Random(5)
    for _ in range(3000):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 40)))
        mark = bytes(rng.choice(b"ab") for _ in range(rng.randint(1, 3)))
        most = rng.randint(1, 3)
        lo, hi = rng.randint(0, 20), rng.randint(15, 45)
        assert stream._marks(data, mark, most, SCAN, lo, hi) == min(data[lo:hi].count(mark), most)
        assert stream._marks(bytearray(data), mark, most, None, lo, hi) == data[lo:hi].count(mark)
        a, e = rng.randint(0, 45), rng.randint(0, 45)
        assert SCAN.find(data, mark, a, e) == data.find(mark, a, e)
    assert stream._marks(b"xNVPROF is profiling processNVPROF is profiling process", b"NVPROF is profiling process",
                         2, SCAN, 0, 55) == 2


def test_rows_in_the_engines_first_characters_stay_in_the_text(tmp_path, monkeypatch):
    """The rows that start in the first HEAD + HEAD_MARGIN bytes (ASCII) stay in the text, the others
    are blank there; a first line that is not ASCII keeps KEEP bytes of rows."""
    from profconv.parse import stream

    assert bytescan.HEAD == core.HEAD == stream.HEAD == 1 << 16
    rows = _rows(700)
    text = _trace(rows)
    path = tmp_path / "trace.log"
    path.write_text(text)
    pre = bytescan.find(path.read_bytes(), core.BYTES_PAY_FROM)
    table = pre.tables[3]
    ends = [text.index("\n", text.index(r)) for r in rows]  # each row's newline
    assert table.kept == sum(e < (1 << 16) + (1 << 12) for e in ends) == 405
    assert byte_path_used(path) == "bytes"
    assert bytescan.keep_from(b"\xc3\xa9" + path.read_bytes()) == bytescan.KEEP == 1 << 18


def test_rows_blank_in_the_engines_first_lines_send_the_input_to_the_text(tmp_path, monkeypatch):
    """Lines before the trace whose blanks normalize takes off (8 KB of them): the engine's first
    64 Ki characters of the text reach rows that are blank there, so it is read the text's way (the
    same output)."""
    path = tmp_path / "trace.log"
    path.write_text("Run 1" + " " * 100 + "\n" + "".join(f"step {k}" + " " * 100 + "\n" for k in range(80)) + _trace(_rows(700)))
    assert byte_path_used(path) == "reparse"
    got = _outputs(path, monkeypatch)
    assert got["bytes"] == got["text"] == got["pure"]
    assert got["bytes"][0][0] == 0


def test_a_name_without_an_id_is_its_base_names_str():
    """Rows whose name has no correlation id ('[CUDA memcpy HtoD]') share their base name's str (no
    str a row); names with an id are their own."""
    names = ["[CUDA memcpy HtoD]", "k(int) [1]", "[CUDA memcpy HtoD]", "k(int)", "k(int) [2]"]
    data = "".join(f"  1.0ms  2.0us  {n}\n" for n in names).encode()
    *_, got, (codes, bases) = SCAN.trace(data, 0, 16)
    assert got == names and bases == ["[CUDA memcpy HtoD]", "k(int)"]
    assert got[0] is got[2] is bases[0] and got[3] is bases[1]
    assert got[1] is not bases[1] and list(memoryview(codes).cast("q")) == [0, 1, 0, 1, 1]


def test_codes_in_an_array_taken_and_summed_as_in_a_list():
    """_bytescan.take gives values[c] for int64 codes (refusing a code out of range); by_name takes
    codes in an array of int64 as it takes them in a list (another kind of array: None, the
    row-by-row reading)."""
    from array import array

    codes = array("q", [2, 0, 0, 1, 2])
    assert SCAN.take(["a", "b", "c"], codes) == ["c", "a", "a", "b", "c"]
    for bad in ([3], [-1]):
        with pytest.raises(ValueError):
            SCAN.take(["a", "b", "c"], array("q", bad))
    t = array("d", [1.5, 2.0, 3.25, 4.0, 0.5])
    got = SCAN.by_name(codes, t, range(1, 6), range(1, 6), 3)
    assert got == SCAN.by_name(codes.tolist(), t, range(1, 6), range(1, 6), 3)
    assert dict(got)[0] == [2, 2, 5.25, 0.0, 2.0, 3.25, 2, 3]
    assert SCAN.by_name(array("i", [0] * 5), t, range(1, 6), range(1, 6), 3) is None


def test_rows_pass_in_one_sweep_as_line_by_line():
    """_bytescan.rows (the lines that start with a digit, walked and tallied 32 or 16 bytes at a time)
    gives what the pure-Python pass gives: rows ending at every offset of a 16-byte block, lines of
    every length, marks, non-ASCII and control bytes, no newline at the end."""
    rng = random.Random(17)
    marks = bytescan._NEVER + bytescan._IN_NAMES
    pieces = [b"1", b"23", b",", b"a", b"&", b"\\", b"<", b"/", b"\xc3\xa9", b"\t", b"\x7f", b"x" * 15, b"9" * 17]
    for _ in range(3000):
        lines = [bytes([rng.choice(b"0123456789")]) + b"".join(rng.choices(pieces, k=rng.randint(0, 12)))
                 for _ in range(rng.randint(0, 12))]
        data = b"H\n" + b"\n".join(lines) + rng.choice([b"\n", b"\nDone\n", b"\n\n", b"", b"\n x", b"\n&<", b"\n\xc3\xa9",
                                                     b"\n\x01/"])
        for b in [k + 1 for k in range(len(data)) if data[k] == 0x0A]:  # every line start after the first
            want = _rows_in_python(data, b, marks)
            for simd in (True, False):  # the AVX2 pass (where the CPU has it) and the SSE2 one
                was = SCAN.avx2(simd)
                try:
                    assert SCAN.rows(data, b, marks) == want, (data, b, simd)
                finally:
                    SCAN.avx2(was)


def _rows_in_python(data: bytes, b: int, marks: bytes) -> tuple:
    e, rows, counts, odd = bytescan._rows_pass(data, b, None)
    wide = sum(c >= 0x80 for c in data[b:e])
    control = sum(c < 0x20 and c != 0x0A for c in data[b:e])
    assert odd == bool(wide or control)
    return e, rows, tuple(counts[c] for c in marks), wide, control


def test_nsys_detect_as_the_one_pattern_it_was():
    """nsys.detect searches its three patterns alone (each where its word is in the text): the same
    answer as the one pattern of three alternatives, on texts made of their pieces and near misses."""
    import re

    from profconv.parse.dialects import nsys
    from profconv.parse.model import Document

    one = re.compile(r"Time\(%\) +Total Time|Processing \[[^\]\n]*\] with \[[^\]\n]*_(?:sum|trace)\.py\]"
                     r"|Start ?\((?:ns|sec)\) +Duration ?\((?:ns|nsec)\)")
    pieces = ["Time(%)  Total Time", "Time(%)Total Time", "Total Time", "Processing [a.sqlite] with [/r/x_sum.py]",
              "Processing [a] with [b_trace.py]", "Processing [a\n] with [b_sum.py]", "Processing [", "Start (ns) Duration (ns)",
              "Start(sec)  Duration(nsec)", "Start    Duration", "Duration", "x", "\n", " "]
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 6)))
        if nsys.contains_any(text, nsys._MARKERS) or text.startswith(("Start (ns),", "Time (%),")):
            continue
        assert nsys.detect(Document(lines=[], label="t", text=text)) == (one.search(text) is not None), text
