"""The fast paths of the parser give exactly what the careful paths give.

Rows read in bulk (nvprof traces, big nsys CSV tables) equal the row-by-row reading of the same
text; shares computed on plain columns equal pandas' to the bit; CSV text equals DataFrame.to_csv;
the frame is built only when asked for. Every input here is synthetic (generated below).
"""

from __future__ import annotations

import glob
import io
import random

import pandas as pd
import pytest

import profconv
from profconv.errors import ProfconvError
from profconv.parse import bytescan
from profconv.parse import table as table_mod
from profconv.parse.dialects import nsys, nvprof
from profconv.parse.dialects.nvprof import summary as nvprof_summary
from profconv.parse.dialects.nvprof import text_sweep
from profconv.parse.dialects.nvprof import trace as nvprof_trace_reader
from profconv.parse.shares import add_shares, share_rows
from profconv.render.parse_output import rows_with_source, to_json, write_csv
from tests.parse_invariants import check_all

FILES = sorted(glob.glob("tests/data/nvprof-*/*.log") + glob.glob("tests/data/nsys-*/*.log")
               + glob.glob("tests/data/ncu-*/*.log") + glob.glob("tests/data/acc-time/*.log"))

NAMES = ["void conv_forward_kernel<float, 16>(float const *, float*, int)", "[CUDA memcpy HtoD]",
         'say "hi", twice', "sgemm_sm35_ldg_tn_128x8x256x16x32", "k<b>(int)"]


def nsys_trace(n: int, extra: str = "") -> str:
    rng = random.Random(3)
    head = ("Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n\n"
            "Start (ns),Duration (ns),CorrId,GrdX,Device,Strm,Name\n")
    rows = []
    t = 1000
    for i in range(n):
        name = NAMES[i % len(NAMES)]
        cell = '"' + name.replace('"', '""') + '"' if ("," in name or '"' in name) else name
        rows.append(f"{t},{rng.randint(1000, 90000)},{i},157,NVIDIA H200 (0),7,{cell}")
        t += rng.randint(2000, 9000)
    if extra:
        rows[n // 2] = extra
    return head + "\n".join(rows) + "\n"


MIDDLE = "            (157 1 1)       (256 1 1)        32  H200            1         7  "


def nvprof_trace(n: int) -> str:
    """nvprof --print-gpu-trace: times right-aligned, each row's name under the header's 'Name'."""
    rng = random.Random(4)
    header = ("Start".rjust(12) + "Duration".rjust(12) + "            Grid Size      Block Size     Regs*"
              "  Device   Context    Stream").ljust(24 + len(MIDDLE)) + "Name"
    head = ["==7== NVPROF is profiling process 7, command: ./m", "==7== Profiling result:", header]
    rows = []
    t = 100.0
    for i in range(n):
        name = NAMES[i % len(NAMES)] + ("" if i % 5 == 1 else f" [{100 + i}]")
        dur = rng.uniform(1, 900)
        rows.append(f"{t:.5f}ms".rjust(12) + f"{dur:.4f}us".rjust(12) + MIDDLE + name)
        t += dur / 1000 + 0.002
    return "\n".join(head + rows) + "\n"


def _parse_file(path: str):
    try:
        return profconv.parse(path)
    except ProfconvError:  # a corpus file that holds no profile on purpose
        pytest.skip("no profile in this file")


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)
    assert a.unplaced == b.unplaced and a.notes == b.notes


@pytest.mark.parametrize("extra", ["", "1,2,3", "5,nan,9,157,NVIDIA H200 (0),7,k", "5,6,9,157,NVIDIA H200 (0),7,",
                                   '5,6,9,157,NVIDIA H200 (0),7,"open quote', '5,6,9,157,"NVIDIA, H200",7,k',
                                   "5,1_0,9,157,NVIDIA H200 (0),7,k", "5,-6,9,157,NVIDIA H200 (0),7,k",
                                   "5,inf,9,157,NVIDIA H200 (0),7,k", '5,6,9,157,NVIDIA H200 (0),7,"a""""b"',
                                   '5,6,9,157,NVIDIA H200 (0),7,"a"""', '5,6,9,157,NVIDIA H200 (0),7,""',
                                   '5,6,9,157,NVIDIA H200 (0),7,"x"y"', '"5",6,9,157,NVIDIA H200 (0),7,k',
                                   '5,6,9,157,NVIDIA H200 (0),7x"k, l"', "5,6,9,157,NVIDIA H200 (0),7, k ",
                                   '5,6,9,157,NVIDIA H200 (0),7," k, l "', " 5 ,6,9,157,NVIDIA H200 (0),7,k",
                                   "5,6,9,157,NVIDIA H200 (0),7,k\rx", "5,6\r,9,157,NVIDIA H200 (0),7,k",
                                   "5,6,9,157,NVIDIA\rH200 (0),7,k", '5,6,9,157,NVIDIA H200 (0),7,"a,\rb"',
                                   "5,6,9,157,NVIDIA H200 (0),7,k\r"])
@pytest.mark.parametrize("n", [nsys.BULK_ROWS + 500, nsys.TEXT_BULK_ROWS + 1, 300])
def test_nsys_bulk_csv_equals_row_by_row(monkeypatch, extra, n):
    text = nsys_trace(n, extra)
    fast = profconv.parse_text(text)
    if not extra:  # the trace's rows and its summary's, one per distinct name
        assert fast.rows.n == n + len(NAMES)
    monkeypatch.setattr(nsys, "TEXT_BULK_ROWS", 10**9)
    slow = profconv.parse_text(text)
    _same(fast, slow)
    check_all(fast, text)


KERN_SUM = ("Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n"
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "60.0,1200,2,600.0,600.0,500,700,141.4,k1\n40.0,800,1,800.0,800.0,800,800,0.0,k2\n")


@pytest.mark.parametrize("after", ["", "\n" + KERN_SUM, KERN_SUM, "==PROF== done\n5,6,7"])
@pytest.mark.parametrize("n", [nsys.TEXT_BULK_ROWS + 1, 300, nsys.SPLIT_ROWS, nsys.SPLIT_ROWS + 1, nsys.BULK_ROWS + 500])
def test_nsys_bulk_table_ends_where_a_line_holds_no_comma(monkeypatch, n, after):
    """The bulk reader finds the table's end itself (the first line without a comma: a blank, a
    status line, another report's title), at a slice boundary or inside a slice: the same rows,
    notes and unplaced lines as the row-by-row reader, and the next table is read too."""
    text = nsys_trace(n) + after
    fast = profconv.parse_text(text)
    assert (fast.frame["section"] == "gpu-trace").sum() == n
    monkeypatch.setattr(nsys, "TEXT_BULK_ROWS", 10**9)
    slow = profconv.parse_text(text)
    _same(fast, slow)
    if "k1" in after:
        assert set(fast.frame.loc[fast.frame["section"] == "gpu", "name"]) == {"k1", "k2"}


def test_nsys_bulk_damaged_row_just_before_the_end_is_reported():
    """A ragged row as the table's last row: the whole table goes to the careful readers, which
    report that row with its text."""
    text = nsys_trace(nsys.SPLIT_ROWS + 10)
    lines = text.split("\n")
    lines[-2] = "5,6,7"
    text = "\n".join(lines) + KERN_SUM
    ps = profconv.parse_text(text)
    assert ps.unplaced == [(len(lines) - 1, "5,6,7")]
    assert (ps.frame["section"] == "gpu-trace").sum() == nsys.SPLIT_ROWS + 9


def test_nsys_bulk_quoted_names_kept_exactly():
    ps = profconv.parse_text(nsys_trace(3000))
    names = set(ps.frame.loc[ps.frame["section"] == "gpu-trace", "name"])
    assert names == set(NAMES)


@pytest.mark.parametrize("bad", [None, "nan", "misaligned", "text", "unit", "um"])
def test_nvprof_bulk_trace_equals_line_by_line(monkeypatch, bad):
    text = nvprof_trace(3000)
    if bad is not None:  # one odd row in the middle: the bulk reader stops there, the line path reads it
        lines = text.split("\n")
        row = lines[1503]
        lines[1503] = {"nan": row.replace("ms", "xx", 1).replace("100.", "nan", 1),
                       "misaligned": " " + row,
                       "text": "a line of program output 12.5ms and 3us",
                       "unit": row.replace("us", "s ", 1),
                       "um": row[:12] + "-".rjust(12) + row[24:]}[bad]
        text = "\n".join(lines)
    fast = profconv.parse_text(text)
    monkeypatch.setattr(nvprof_trace_reader, "_bulk_trace", lambda lines, i, name_col: (None, i))
    slow = profconv.parse_text(text)
    _same(fast, slow)
    if bad is None:
        gpu = fast.frame[fast.frame["section"] == "gpu"]
        assert int(gpu["calls"].sum()) == 3000
        assert set(gpu["name"]) == {n for n in NAMES}  # correlation ids gone from the summary's names
    check_all(fast, text)


@pytest.mark.parametrize("path", FILES)
def test_shares_on_columns_equal_pandas_bits(path):
    ps = _parse_file(path)
    frame = ps.frame
    again = add_shares(frame.drop(columns=["share", "cumulative", "in_top", "share_basis"]).copy())
    for col in ("share", "cumulative", "in_top", "share_basis"):
        pd.testing.assert_series_equal(frame[col], again[col], check_exact=True)
    for thr in (0.5, 0.99):
        rows = share_rows(table_mod.Rows(dict(ps.rows.cols), ps.rows.n), thr).to_frame()
        pd.testing.assert_frame_equal(rows, add_shares(frame.copy(), thr), check_exact=True)


@pytest.mark.parametrize("path", FILES)
def test_csv_is_dataframe_to_csv(path):
    ps = _parse_file(path)
    buf = io.StringIO()
    write_csv([ps, ps], buf)
    assert buf.getvalue() == rows_with_source([ps, ps]).to_csv(index=False)


def test_frame_is_built_only_when_asked():
    ps = profconv.parse(FILES[0])
    to_json([ps])
    buf = io.StringIO()
    write_csv([ps], buf)
    assert ps._frame is None
    frame = ps.frame
    assert ps.frame is frame and len(frame) == ps.rows.n
    back = table_mod.Rows.from_frame(frame).to_frame()
    pd.testing.assert_frame_equal(back, frame, check_exact=True)


def test_json_slices_keep_columns_per_slice(monkeypatch):
    """A column no row of a slice holds is left out of that slice's rows (read as null)."""
    import json

    from profconv.render import rows as rows_mod

    monkeypatch.setattr(rows_mod, "CHUNK_ROWS", 1000)
    ps = profconv.parse_text(nvprof_trace(2500))
    doc = json.loads(to_json([ps]))
    assert "avg_ns" not in doc["rows"][0] and "avg_ns" in doc["rows"][-1]
    assert len(doc["rows"]) == ps.rows.n


# ---------------------------------------------------------------- nvprof summaries read in bulk

SUMMARY_HEAD = ["==9== NVPROF is profiling process 9, command: ./m", "==9== Profiling application: ./m",
                "==9== Profiling result:",
                "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"]
GPU_ROWS = [" GPU activities:   49.75%  2.2027ms       400  5.5060us  5.4390us  6.1110us  fill(void)",
            "                   30.00%  1.3282ms       100  13.282us  13.100us  14.000us  conv(float*, int)",
            "                   20.25%  896.54us       300  2.9885us  2.9000us  3.1000us  [CUDA memcpy HtoD]"]
API_ROWS = ["      API calls:   87.72%  98.832ms         2  49.416ms     564ns  98.831ms  cudaEventCreate",
            "                   12.28%  13.835ms      1200  11.529us  2.6660us  381.14us  cudaLaunchKernel"]


def _summary(rows: list[str], copies: int = 3) -> str:
    return "\n".join((SUMMARY_HEAD + rows) * copies) + "\n"


SUMMARY_CASES = {
    "plain": GPU_ROWS + API_ROWS,
    # the last row of a run whose name goes on, on the next line (cut at the terminal's edge)
    "wrapped": GPU_ROWS[:2] + ["                   20.25%  896.54us       300  2.9885us  2.9000us  3.1000us  k<float,",
                               "                            int>(float*)"] + API_ROWS,
    # a name that looks cut in the middle of a run: the next row is a row
    "open-middle": [GPU_ROWS[0].replace("fill(void)", "fill(float,")] + GPU_ROWS[1:] + API_ROWS,
    "markup": GPU_ROWS[:1] + ["| 30.00% | 1.3282ms | 100 | 13.282us | 13.100us | 14.000us | conv |"] + GPU_ROWS[2:] + API_ROWS,
    "bold": GPU_ROWS[:2] + [GPU_ROWS[2].replace("[CUDA", "<b>[CUDA")] + API_ROWS,
    "over-100": GPU_ROWS[:1] + [GPU_ROWS[1].replace("30.00%", "130.00%")] + GPU_ROWS[2:] + API_ROWS,
    # a cell later in the table says ',' may be the decimal mark: every row is read again
    "relocate": GPU_ROWS + ["                   1,5%  1,2ms  3  0,4ms  0,3ms  0,5ms  late(void)"] + API_ROWS,
    "blank-inside": GPU_ROWS[:2] + [""] + GPU_ROWS[2:] + API_ROWS,
    "prefixed": ["==9== " + r for r in GPU_ROWS] + API_ROWS,
    "no-label": [r.replace(" GPU activities:", "                ") for r in GPU_ROWS],
    "unit-split": GPU_ROWS[:1] + [GPU_ROWS[1].replace("1.3282ms", "1.3282 ms")] + GPU_ROWS[2:] + API_ROWS,
    "broken-numbers": GPU_ROWS[:1] + ["                   30.00%  1.3282ms       100  13.282us",
                                      "   13.100us  14.000us  conv(float*, int)"] + GPU_ROWS[2:] + API_ROWS,
}


@pytest.mark.parametrize("case", sorted(SUMMARY_CASES))
def test_nvprof_bulk_summary_equals_line_by_line(monkeypatch, case):
    text = _summary(SUMMARY_CASES[case])
    fast = profconv.parse_text(text)
    monkeypatch.setattr(nvprof_summary, "_bulk_summary", lambda lines, k, *a: k)
    monkeypatch.setattr(text_sweep, "sweep", lambda ctx, cur: False)  # no profile read in one go either
    slow = profconv.parse_text(text)
    _same(fast, slow)
    assert [(p.line_start, p.line_end) for p in fast.profiles] == [(p.line_start, p.line_end) for p in slow.profiles]
    assert fast.table_notes == slow.table_notes
    check_all(fast, text)


def test_nvprof_bulk_summary_rows_are_columns():
    """Plain summary rows are kept as columns of their block (no Row object per row)."""
    from profconv.parse.model import Document

    lines = _summary(SUMMARY_CASES["plain"], 2).split("\n")[:-1]
    res = nvprof.parse(Document(lines=lines, label="x", text="\n".join(lines)))
    blocks = [b for p in res.profiles for b in p.blocks]
    # the first profile read in one go with the next one's start after it (text_sweep): its blocks
    # ranges of one batch of columns; the last one's rows in bulk, columns of their block
    assert [(b.section, b.span is not None, len(b.span.col("name")) if b.span else len(b.table), b.rows)
            for b in blocks] == [("gpu", True, 3, []), ("api", True, 2, []), ("gpu", False, 3, []), ("api", False, 2, [])]
    for gpu in (blocks[0].span, blocks[2].table):
        assert gpu is not None
        assert list(gpu.col("name")) == ["fill(void)", "conv(float*, int)", "[CUDA memcpy HtoD]"]
        assert list(gpu.col("total_ns")) == [2202700.0, 1328200.0, 896540.0]
        assert list(gpu.col("calls")) == [400, 100, 300]
    assert list(blocks[2].table.col("line_start")) == [blocks[2].line_start + k for k in range(3)]
    assert (blocks[0].line_start, blocks[0].line_end, blocks[1].line_start, blocks[1].line_end) == (5, 7, 8, 9)


@pytest.mark.parametrize("path", [f for f in FILES if "/nvprof" in f])
def test_nvprof_bulk_summary_equals_line_by_line_on_corpus(monkeypatch, path):
    fast = _parse_file(path)
    monkeypatch.setattr(nvprof_summary, "_bulk_summary", lambda lines, k, *a: k)
    monkeypatch.setattr(text_sweep, "sweep", lambda ctx, cur: False)  # no profile read in one go either
    slow = profconv.parse(path)
    _same(fast, slow)
    assert fast.table_notes == slow.table_notes


def test_csv_numbers_are_repr_and_str():
    """--csv numbers through msgspec's encoder are exactly float.__repr__ / str: where the two
    could differ (exponents, 1e-05 > x > 0, NaN, ints beyond 64 bits) repr writes them."""
    from profconv.render.rows import _csv_column

    floats = [1000000.0, 891298.0, 0.1, 1 / 3, 123456789012.5, 9999999999999998.0, 1e16, 1.5e17, 1e-4,
              0.00012, 1e-05, 1.4562901896020187e-05, 5e-324, -0.0, 10.00001, 2.5]
    assert _csv_column("total_ns", floats) == list(map(float.__repr__, floats))
    plain = [1000000.0, 0.5, 1234.5678]
    assert _csv_column("total_ns", plain) == ["1000000.0", "0.5", "1234.5678"]
    assert _csv_column("total_ns", [1.0, float("nan"), 2e20]) == ["1.0", "", "2e+20"]
    ints = [4, 5, 2**63 - 1, -7]
    assert _csv_column("line_start", ints) == ["4", "5", "9223372036854775807", "-7"]
    assert _csv_column("line_start", [1, 2**70]) == ["1", str(2**70)]
    assert _csv_column("name", ["a,b", "c", "a,b", 'say "hi"']) == ['"a,b"', "c", '"a,b"', '"say ""hi"""']
    # numbers that hold 0.0000 without being below 1e-4 (us -> ns conversions), and random ones
    # of every magnitude, one slice each
    odd = [230307.09999999998, 230307.00000000003, 100.00001, 10.00001, -0.00012, -1.5e-05, 0.0001, 9.99e-05]
    assert _csv_column("total_ns", odd) == list(map(float.__repr__, odd))
    rng = random.Random(5)
    for exp in range(-12, 22):
        vals = [rng.choice((1, -1)) * rng.random() * 10.0**exp for _ in range(2000)]
        assert _csv_column("total_ns", vals) == list(map(float.__repr__, vals))


def test_json_to_a_byte_stream_equals_the_text(tmp_path):
    """--json to stdout (a UTF-8 text stream over a binary one) writes msgspec's bytes to the buffer:
    the same text as through a StringIO, non-ASCII names included."""
    from profconv.render.parse_output import write_json

    text = nsys_trace(nsys.BULK_ROWS + 10).replace("[CUDA memcpy HtoD]", "[CUDA memcpy HtoD] é✓")
    ps = profconv.parse_text(text)
    path = tmp_path / "out.json"
    with open(path, "w", encoding="utf-8") as out:
        out.write("x")  # held by the text layer: must come first
        write_json([ps], out)
    assert path.read_bytes() == ("x" + to_json([ps])).encode()
    with open(path, "w", encoding="latin-1", errors="replace") as out:  # not UTF-8: the text path
        write_json([ps], out)
    assert path.read_bytes() == to_json([ps]).encode("latin-1", errors="replace")


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])
def test_csv_and_json_to_a_byte_stream_equal_the_text(tmp_path, errors):
    """--csv and --json to a UTF-8 stream over a binary one (stdout; under a C.UTF-8 locale Python
    gives it surrogateescape) write UTF-8 bytes to its buffer: the same text as through a StringIO,
    non-ASCII names and a source that is no valid UTF-8 (a file name's raw bytes) included; a stream
    that is not UTF-8 gets the text."""
    from profconv.render.parse_output import write_json

    text = nsys_trace(nsys.BULK_ROWS + 10).replace("[CUDA memcpy HtoD]", "[CUDA memcpy HtoD] é✓")
    ps = profconv.parse_text(text, label="trace-é.log")
    csv_text = io.StringIO()
    write_csv([ps], csv_text)
    assert "é✓" in csv_text.getvalue() and "conv_forward_kernel<…>" in csv_text.getvalue()
    path = tmp_path / "out"
    for writer, want in ((write_csv, csv_text.getvalue()), (write_json, to_json([ps]))):
        with open(path, "w", encoding="utf-8", errors=errors) as out:
            out.write("x")  # held by the text layer: must come first
            writer([ps], out)
        assert path.read_bytes() == ("x" + want).encode()
        with open(path, "w", encoding="latin-1", errors="replace") as out:  # not UTF-8: the text path
            writer([ps], out)
        assert path.read_bytes() == want.encode("latin-1", errors="replace")
    raw = ps.rows
    odd = "x\udcffy.log"  # os.fsdecode(b"x\xffy.log"): stdout's surrogateescape writes the byte back
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
        write_csv([type(ps)(None, ps.profiles, odd, rows=raw)], out)
    assert path.read_bytes().splitlines()[1].startswith(b"x\xffy.log,1,nsys,gpu-trace,")


def test_gc_paused_and_restored():
    import gc

    from profconv.nogc import big_blocks, paused

    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
    big_blocks()  # glibc's malloc settings: no error anywhere (nothing happens off Linux)


@pytest.mark.parametrize("times", [1, 4, 50])
@pytest.mark.parametrize("shorts", [["x", "x", "y", "y"], ["x", "z", "y", "y"], [None, "x", None, "y, z"]])
def test_csv_text_columns_equal_to_csv(monkeypatch, shorts, times):
    """--csv writes text columns by their distinct values' cells (and constant columns once a
    slice): the same text as DataFrame.to_csv, also where the short name is not a function of the
    name, or holds commas and nulls, and where names are all distinct; slices of 20 rows."""
    from profconv.render import rows as rows_mod
    from profconv.render.rows import write_csv as write_rows

    monkeypatch.setattr(rows_mod, "CHUNK_ROWS", 20)
    names = ["a", "a", "b,c", "b,c"] * times
    if times == 50:
        names = [f"{x} [{i}]" for i, x in enumerate(names)]  # all distinct: nothing fused
    n = 4 * times
    rows = table_mod.Rows({"name": names, "short_name": shorts * times, "section": ["gpu"] * n,
                           "profile": [1] * n, "total_ns": [1.0, 2.0, 3.0, 1e-05] * times,
                           "calls": [1, 1, 2, 2] * times}, n)
    buf = io.StringIO()
    write_rows([("s", rows)], buf)
    frame = rows.to_frame().assign(source="s")
    frame = frame[["source", *[c for c in frame.columns if c != "source"]]]
    assert buf.getvalue() == frame.to_csv(index=False)


def test_nvprof_bulk_summary_damaged_row_reported_with_its_text(monkeypatch):
    """A row read in bulk whose total is not calls x average leaves its table and is reported
    unplaced with its own text (bulk summary lines stay in the lines)."""
    bad = "                   30.00%  9.9000ms       100  13.282us  13.100us  14.000us  conv(float*, int)"
    text = _summary(GPU_ROWS[:1] + [bad] + GPU_ROWS[2:] + API_ROWS, 2)
    ps = profconv.parse_text(text)
    assert ps.unplaced == [(6, bad), (15, bad)]
    assert "conv(float*, int)" not in set(ps.frame["name"])
    monkeypatch.setattr(nvprof_summary, "_bulk_summary", lambda lines, k, *a: k)
    monkeypatch.setattr(text_sweep, "sweep", lambda ctx, cur: False)  # no profile read in one go either
    _same(ps, profconv.parse_text(text))


def test_spans_membership_with_overlaps():
    from profconv.parse.core import _Spans

    spans = _Spans([(10, 20), (30, 31), (12, 14), (1, 100 - 95)])
    assert [n for n in range(0, 35) if n in spans] == [1, 2, 3, 4, 5, *range(10, 21), 30, 31]
    assert 0 not in _Spans([])


@pytest.mark.parametrize("cell, unit, ns", [("1.200000", "ms", 1.2e6), ("+1.5", "us", 1500.0), ("1e3", "ns", 1000.0),
                                            (".5", "s", 5e8), ("5.", "us", 5000.0), ("0", "ms", 0.0)])
def test_time_ns_bare_number_in_its_unit(cell, unit, ns):
    from profconv.parse import units

    assert units.time_ns(cell, unit) == ns
    assert units.time_ns(cell, unit) == units.number(cell) * units.TIME_UNITS_NS[unit]


@pytest.mark.parametrize("cell", ["1e400", "nan", "-1.5", "1_0", "inf"])
def test_time_ns_bare_number_refused(cell):
    from profconv.parse import units

    with pytest.raises(ValueError):
        units.time_ns(cell, "ms")


@pytest.mark.parametrize("out", ["--json", "--csv"])
def test_big_trace_written_straight_out(tmp_path, monkeypatch, out):
    """A single input big enough for the part-by-part reader but not an nvprof log (an nsys trace)
    is read whole and written straight to stdout: no rows through the temporary file, and no
    stream is tried (its first 4 MiB hold no two nvprof profile starts)."""
    from typer.testing import CliRunner

    from profconv.cli import app
    from profconv.parse import stream
    from profconv.parse.core import parse_whole
    from profconv.render import rows as rows_mod

    text = nsys_trace(62_000)
    assert len(text) > stream.STREAM_FROM
    path = tmp_path / "trace.csv"
    path.write_text(text)
    monkeypatch.setattr(rows_mod.SliceWriter, "add", lambda *a: pytest.fail("rows spooled"))
    reads = []
    real = stream.Stream._parts

    def parts(self, f):
        try:
            yield from real(self, f)
        finally:
            reads.append(f.tell())

    monkeypatch.setattr(stream.Stream, "_parts", parts)
    res = CliRunner().invoke(app, ["parse", str(path), out])
    assert res.exit_code == 0, res.output
    ps = parse_whole(str(path))
    if out == "--json":
        assert res.stdout == to_json([ps])
    else:
        buf = io.StringIO()
        write_csv([ps], buf)
        assert res.stdout == buf.getvalue()
    assert reads == []  # never tried


def test_csv_typed_columns_equal_to_csv():
    """Columns kept as an array of doubles or a range (the bulk readers') are written without a
    look at each value's type: the same text as DataFrame.to_csv, tiny and huge floats too."""
    from array import array

    from profconv.render.rows import write_csv as write_rows

    n = 30
    floats = [1.5, 1e-05, 2e16, 230307.00000000003, 0.0, -0.0] * 5
    rows = table_mod.Rows({"name": ["k"] * n, "section": ["gpu-trace"] * n, "profile": [1] * n,
                           "total_ns": array("d", floats), "start_ns": array("d", range(n)),
                           "line_start": range(4, 4 + n), "line_end": range(4, 4 + n)}, n)
    buf = io.StringIO()
    write_rows([("s", rows)], buf)
    frame = rows.to_frame().assign(source="s")
    frame = frame[["source", *[c for c in frame.columns if c != "source"]]]
    assert buf.getvalue() == frame.to_csv(index=False)


@pytest.mark.parametrize("extra", ["", "5,6,9,157,NVIDIA H200 (0),7,k<br>x", "5,6,9,157,NVIDIA H200 (0),7,a/*b",
                                   "5,6,9,157,NVIDIA H200 (0),7,k, l", "5,-6,9,157,NVIDIA H200 (0),7,k",
                                   "5,6,9,157,NVIDIA H200 (0),7, k "])
@pytest.mark.parametrize("rows", [bytescan.MIN_ROWS + 10, 3 * nsys.SPLIT_ROWS + 7])
def test_nsys_big_table_split_from_the_bytes_without_pyarrow(tmp_path, monkeypatch, extra, rows):
    """Where pyarrow does not pay (a CLI child that has not loaded it), a big nsys table found on
    the input's bytes is read by the text path's split reader from those bytes, a slice at a time
    (nsys._RowLines): the same result as the text path, which splits the decoded lines; a name
    normalize would rewrite, a bad cell or a stray field: the text path's reading (Reparse)."""
    from profconv.parse import columnar
    from profconv.parse.core import parse_whole

    path = tmp_path / "trace.csv"
    path.write_text("x\n" * 20 + nsys_trace(rows, extra))
    monkeypatch.setattr(columnar, "worth", lambda nbytes, pays_from: False)
    split = []
    real = nsys._RowLines.__getitem__
    monkeypatch.setattr(nsys._RowLines, "__getitem__", lambda self, s: split.append(s) or real(self, s))
    fast = parse_whole(str(path))
    assert len(split) <= -(-rows // nsys.SPLIT_ROWS)  # read on the bytes a slice at a time, where taken
    if not extra:
        assert len(split) == -(-rows // nsys.SPLIT_ROWS) and (fast.frame["section"] == "gpu-trace").sum() == rows
    monkeypatch.setattr(bytescan, "find", lambda data, pays_from: None)
    _same(fast, parse_whole(str(path)))
    assert to_json([fast]) == to_json([parse_whole(str(path))])
