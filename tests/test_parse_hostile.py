"""Reproducers of ../shared/findings/hostile-input.md §2-6, §14-21, §28-32 and first-contact.md §4:
one clean error or concrete values, never a traceback, an invented number or a silently lost row."""

import json
import random

import pytest

import profconv
from profconv.errors import InputError, NoProfileFound
from profconv.parse import units
from tests.parse_invariants import check_all

P = "==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n GPU activities: 100.00% 1ms 1 1ms 1ms 1ms k\n"
NSYS_CSV = "Time (%),Total Time (ns),Num Calls,Name\n"


def _parse(text):
    ps = profconv.parse_text(text)
    check_all(ps, text)
    return ps


def _row(ps, **where):
    f = ps.frame
    for k, v in where.items():
        f = f[f[k] == v]
    assert len(f) == 1, f
    return f.iloc[0]


# §2: context lines that are not numbers are not context (and never a traceback)
@pytest.mark.parametrize("line", ["Op Time: 1.2.3", "Correctness: 0.8.1", "Test Accuracy: ..", "Op Time: 1e400"])
def test_bad_context_lines_are_ignored(line):
    ps = _parse(line + "\n" + P)
    assert ps.profiles[0].op_times_s == [] and ps.profiles[0].correctness is None
    assert _row(ps, name="k")["total_ns"] == 1e6


# §3: TB / TiB sizes
@pytest.mark.parametrize("size,bytes_", [("1.0TB", 1024.0**4), ("2TiB", 2 * 1024.0**4), ("1.5PB", 1.5 * 1024.0**5)])
def test_unified_memory_tb_sizes(size, bytes_):
    text = ("==1== NVPROF is profiling process 1, command: ./a\n==1== Unified Memory profiling result:\n"
            f" Count Avg Min Max Total Time Name\n 1 1KB 1KB 1KB {size} 1ms HtoD\n")
    assert _row(_parse(text), name="HtoD")["bytes"] == bytes_


# §4, §14-16: huge counts, non-finite, negative and underscore numbers are refused, and said so
@pytest.mark.parametrize("bad", [" 1ms 99999999999999999999 ", " 1e400ms 1 ", " nanms 1 ", " -5ms 1 ", " 2_0ms 1 ",
                                 " infms 1 "])
def test_unreadable_numbers_are_reported_not_emitted(bad):
    text = P.replace(" 1ms 1 ", bad)
    with pytest.raises(NoProfileFound, match=r"no row could be read: line\(s\) 3"):
        profconv.parse_text(text)


def test_bad_row_next_to_good_rows_is_unplaced():
    text = P + "                   50.00%  2_0ms  1  1ms  1ms  1ms  other\n"
    ps = _parse(text)
    assert list(ps.frame["name"]) == ["k"] and [n for n, _ in ps.unplaced] == [4]


def test_units_refuse_what_is_not_a_printed_number():
    for t in ("nan", "inf", "Infinity", "1e400", "2_0", "-5", "+-1", ""):
        with pytest.raises(ValueError):
            units.number(t)
    with pytest.raises(ValueError):
        units.time_ns("-5ms")
    with pytest.raises(ValueError):
        units.count("99999999999999999999")
    assert units.number("1,234.5") == 1234.5 and units.size_bytes("1TB") == 1024.0**4


# §5, §17, §18, §31: nsys CSV rows that do not fit the header are reported, never shifted
@pytest.mark.parametrize("body,good,bad", [
    ("100,2,nan,a\n", [], [2]),
    ("100,1e400,1,a\n", [], [2]),
    ("100,2,1.7,a\n", [], [2]),                      # §17 fractional call count
    ("9,100,2000,3,k\n", [], [2]),                   # §18 one field too many
    ("60,2,1,a\n40,5,6,b,c\n", ["a"], [3]),          # ragged row
    ("100,2,1,a,x\n50,3,1,b\n", ["b"], [2]),         # §31 ragged first row
    ('100,2,1,"a\n', ["a"], []),                     # unclosed quote: the field ends with the line
])
def test_nsys_csv_bad_rows(body, good, bad):
    text = NSYS_CSV + body
    if not good:
        with pytest.raises(NoProfileFound, match="no row could be read"):
            profconv.parse_text(text)
        return
    ps = _parse(text)
    assert list(ps.frame["name"]) == good and [n for n, _ in ps.unplaced] == bad


def test_nsys_trace_title_without_start_column():
    ps = _parse("** CUDA GPU Trace (cuda_gpu_trace):\n" + NSYS_CSV + "100,2,1,a\n")
    assert _row(ps, name="a")["total_ns"] == 2.0


def test_nsys_trace_with_text_duration_is_reported():
    with pytest.raises(NoProfileFound, match="line\\(s\\) 2"):
        profconv.parse_text("Start (ns),Duration (ns),Name\n100,abc,k\n")


def test_big_nsys_csv_with_one_bad_cell_reports_that_line():
    rows = [f"{50 / 3000:.4f},{1000 + i},1,k{i}" for i in range(3000)]
    rows[1234] = "0.1,n/a,1,bad"
    ps = _parse(NSYS_CSV + "\n".join(rows) + "\n")
    assert len(ps.frame) == 2999 and [n for n, _ in ps.unplaced] == [1236]


# §6: ncu CSV without the columns a metric row needs
@pytest.mark.parametrize("text", [
    '"ID","Metric Name","Metric Unit","Metric Value"\n"0","Duration","usecond","1.5"\n',
    '==PROF== x\n"ID","A"\n"1","2"\n',
])
def test_ncu_csv_missing_columns(text):
    with pytest.raises(InputError):
        profconv.parse_text(text)


# §14: JSON never holds NaN or Infinity
def test_json_has_null_not_nan(cli, tmp_path):
    path = tmp_path / "p.log"
    path.write_text("Op Time: 1e400\n" + P)
    r = cli("parse", str(path), "--json")
    assert r.returncode == 0
    doc = json.loads(r.stdout, parse_constant=lambda t: pytest.fail(t))
    row = doc["rows"][0]
    assert "med_ns" not in row  # a column no row printed is left out of the rows: read as null
    assert row["total_ns"] == 1e6 and row["in_top"] is True and row["share"] == 1.0


# §19: a cut nsys console row is reported, not read as a nameless row
def test_cut_nsys_console_row():
    text = open("tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", encoding="utf-8").read()
    head = "\n".join(text.splitlines()[:19]) + "\n  19.5  100,1"
    ps = _parse(head)
    assert not (ps.frame["name"] == "").any() and 100.1 not in set(ps.frame["total_ns"])
    assert [n for n, _ in ps.unplaced] == [20]


# §20: ncu advice, program output inside a section, another profiler after ncu
def test_ncu_advice_is_not_metrics():
    ps = _parse(open("tests/data/ncu-text/liqiangxl-pytorch-layernorm-ncu2022-first-kernel.log").read())
    metrics = ps.frame[ps.frame.section == "ncu-metric"]
    assert not metrics["metric"].str.match(r"^(OPT|WRN|INF)\s").any()
    assert len(metrics) == 28
    text_value = _row(ps, metric="Function Cache Configuration")
    assert text_value["value_text"] == "cudaFuncCachePreferNone" and text_value["value"] != text_value["value"]


def test_program_output_inside_ncu_section():
    text = open("tests/data/ncu-text/liqiangxl-pytorch-layernorm-ncu2022-first-kernel.log").read()
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if "DRAM Frequency" in ln)
    lines.insert(at + 1, "max_abs=5.96046e-08 rel=0.001 ok")
    ps = _parse("\n".join(lines) + "\n")
    assert 0.00096046 not in set(ps.frame["value"]) and len(ps.frame[ps.frame.section == "ncu-metric"]) == 28


def test_other_profiler_after_ncu():
    ncu = open("tests/data/ncu-text/liqiangxl-pytorch-layernorm-ncu2022-first-kernel.log").read()
    nvprof = open("tests/data/seeds/001_f908eb42489cd140.log").read()
    alone = profconv.parse_text(nvprof)
    both = _parse(ncu + nvprof)
    assert len(both.frame[both.frame.tool == "ncu"]) == 29
    assert len(both.frame[both.frame.tool == "nvprof"]) == len(alone.frame)


# §21, §28, §29: other line breaks, BOM, UTF-16
def test_form_feed_and_unicode_line_breaks_do_not_split_lines():
    ps = _parse(P.replace(" k\n", " fill\f(float*)\n"))
    assert list(ps.frame["name"]) == ["fill(float*)"]
    ps = _parse("a\x85b\u2028c\n" + P)
    assert _row(ps, short_name="k")["line_start"] == 4


def test_bom_and_utf16(tmp_path):
    for data in (b"\xef\xbb\xbf" + (NSYS_CSV + "100,2,1,a\n").encode(), (P.encode("utf-16")),
                 P.encode("utf-16-le"), P.replace("\n", "\r\n").encode("utf-16")):
        path = tmp_path / "x.log"
        path.write_bytes(data)
        ps = profconv.parse(str(path))
        assert len(ps.frame) == 1 and ps.frame["total_ns"].iloc[0] in (2.0, 1e6)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark_among_other_scripts(codec, tmp_path):
    """UTF-16 without a byte-order mark is told by the order its text reads in (text.utf16_codec): a
    kernel named in Chinese with characters U+xx00 in it (a NUL in the other byte lane: before, such a
    log was refused as binary data), a Korean comment line, box drawing; binary data with NULs is not."""
    from profconv.parse.text import utf16_codec

    text = P.replace(" k\n", " k_\u5377\u79ef\u0100\u1000\u4e00\n") + "# \ud55c\uad6d\uc5b4 \u2500\u2500\u2500\n"
    path = tmp_path / "x.log"
    path.write_bytes(text.encode(codec))
    assert utf16_codec(path.read_bytes()) == codec
    ps = profconv.parse(str(path))
    assert list(ps.frame["name"]) == ["k_\u5377\u79ef\u0100\u1000\u4e00"] and ps.frame["total_ns"].iloc[0] == 1e6
    rng = random.Random(3)
    for data in (bytes(rng.randrange(256) for _ in range(4096)), b"\x00\x01" * 2048, bytes(4096),
                 b"".join(rng.randrange(300).to_bytes(2, "little") for _ in range(2048)), text.encode("utf-8")):
        assert utf16_codec(data) is None


def test_binary_still_refused(tmp_path):
    path = tmp_path / "x.nsys-rep"
    path.write_bytes(b"\x00\x01\x02\x00" * 100)
    with pytest.raises(InputError, match="binary"):
        profconv.parse(str(path))


# §32: many profiles in one file, linear
def test_many_csv_profiles_linear():
    import time

    block = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
             '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
             '"GPU activities",100.000000,1.000000,1,1.000000,1.000000,1.000000,"k"\n')
    t0 = time.process_time()  # this process's CPU time: another process's load on the machine does not count
    ps = profconv.parse_text(block * 500)
    t1 = time.process_time()
    profconv.parse_text(block * 2000)
    t2 = time.process_time()
    assert len(ps.profiles) == 500
    assert (t2 - t1) < 8 * (t1 - t0) + 0.5  # 4x the input: not 16x the time


# first-contact §4: a mislabelled time column ranks by the printed Time(%) and says so next to the table
def test_mislabelled_time_column_ranked_by_percent():
    text = ("==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n"
            " GPU activities: 60.00% 1.0000ms 1 1.0000ms 1.0000ms 1.0000ms a\n"
            "                 40.00% 2.0000s 1 2.0000s 2.0000s 2.0000s b\n")
    ps = _parse(text)
    a = _row(ps, name="a")
    assert a["share_basis"] == "time_pct" and a["share"] == pytest.approx(0.6) and bool(a["in_top"])
    assert "ranked by the printed Time(%)" in ps.table_notes[(1, "gpu")][0]


def test_merged_nsys_tables_explained():
    ps = _parse(open("tests/data/nsys-text/moomoohorse-ece408-nsys2019.5.2-rai.log").read())
    notes = ps.table_notes[(1, "gpu")]
    assert any("merged from 2 source tables" in n for n in notes)
    gpu = ps.frame[(ps.frame.profile == 1) & (ps.frame.section == "gpu")]
    assert gpu["table"].nunique() == 2 and gpu["share"].sum() == pytest.approx(1.0)


# PDF-extracted tables: a row's numbers spread over lines, its name after them
PDF = """==1== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   60.00%  3.0000ms
 3  1.0000ms  0.5000ms  1.5000ms
 conv_forward_kernel(float*, float const *, int)
                   40.00%  2.0000ms         1  2.0000ms  2.0000ms  2.0000ms
 [CUDA memcpy HtoD]
      API calls:  100.00%  5.0000ms
 5  1.0000ms
 0.1000ms  2.0000ms  cudaMalloc
"""


def test_pdf_split_rows_recovered_when_unambiguous():
    ps = _parse(PDF)
    conv = _row(ps, short_name="conv_forward_kernel")
    assert (conv["total_ns"], conv["calls"], conv["min_ns"], conv["line_start"], conv["line_end"]) == (
        3e6, 3, 5e5, 3, 5)
    assert _row(ps, name="cudaMalloc")["max_ns"] == 2e6 and _row(ps, name="[CUDA memcpy HtoD]")["calls"] == 1
    assert ps.unplaced == []


def test_pdf_split_rows_never_mispaired():
    # a name before the numbers and another after them: which is theirs? reported, not guessed
    text = PDF.replace(" GPU activities:   60.00%  3.0000ms\n", " GPU activities:\n other_kernel(int)\n 60.00%  3.0000ms\n")
    ps = _parse(text)
    assert "other_kernel(int)" not in set(ps.frame["name"])
    assert not (ps.frame["total_ns"] == 3e6).any() and {5, 6} <= {n for n, _ in ps.unplaced}
    # the numbers of two rows run together: never read as one row with a numeric name
    glued = PDF.replace(" 3  1.0000ms  0.5000ms  1.5000ms\n", " 3  1.0000ms  0.5000ms  1.5000ms  40.00%  2.0000ms\n")
    ps = _parse(glued)
    assert not ps.frame["name"].str.match(r"^\d").any()


def test_damaged_row_total_not_calls_times_avg_is_unplaced():
    text = P.replace(" 1ms 1 1ms 1ms 1ms k", " 1ms 5 1ms 1ms 1ms k")  # 5 calls of 1 ms cannot total 1 ms
    with pytest.raises(NoProfileFound, match="not consistent"):
        profconv.parse_text(text)


def test_pdf_header_broken_over_lines():
    text = ("==1== Profiling result:\nType Time(%) Time Calls\nAvg Min Max Name\n"
            "GPU activities: 60.00% 3.0000ms 3 1.0000ms 0.5000ms 1.5000ms conv_forward_kernel\n"
            "40.00% 2.0000ms 1 2.0000ms 2.0000ms 2.0000ms [CUDA memcpy HtoD]\n")
    ps = _parse(text)
    assert list(ps.frame["name"]) == ["conv_forward_kernel", "[CUDA memcpy HtoD]"] and ps.unplaced == []


# numbers in other locales, decided per table from all of its cells
NSYS_DE = """[5/8] Executing 'cuda_api_sum' stats report

 Time (%)  Total Time (ns)  Num Calls     Avg (ns)        Med (ns)     Min (ns)    Max (ns)      StdDev (ns)          Name
 --------  ---------------  ---------  --------------  -------------  ---------  -----------  --------------  ----------------
     72,0   37.312.001.589      1.234    30.236.630,1   30.236.630,0        500  100.000.000     1.234.567,8  cudaMalloc
     28,0   14.510.000.000          2 7.255.000.000,0  7.255.000.000,0       10  100.000.000             0,0  cudaFree
"""


def test_comma_decimal_locale_nsys():
    ps = _parse(NSYS_DE)
    m = _row(ps, name="cudaMalloc")
    assert (m["time_pct"], m["total_ns"], m["calls"], m["avg_ns"], m["std_ns"]) == (
        72.0, 37_312_001_589.0, 1234, 30_236_630.1, 1_234_567.8)
    assert ps.table_notes == {}


def test_comma_decimal_locale_nvprof():
    text = ("==7== Profiling result:\n            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
            " GPU activities:   72,00%  1,2340ms         1  1,2340ms  1,2340ms  1,2340ms  conv<b>\n"
            "                   28,00%  480,00us         2  240,00us  1,0000us  479,00us  [CUDA memcpy HtoD]\n")
    ps = _parse(text)
    conv = _row(ps, name="conv<b>")  # a template argument, not markup
    assert (conv["time_pct"], conv["total_ns"], conv["avg_ns"]) == (72.0, 1_234_000.0, 1_234_000.0)
    assert _row(ps, name="[CUDA memcpy HtoD]")["min_ns"] == 1000.0


def test_ambiguous_table_flagged_not_guessed():
    text = ("[5/8] Executing 'cuda_gpu_mem_size_sum' stats report\n\n"
            " Total (MB)  Count  Operation\n ----------  -----  ------------------\n"
            "      1.234      5  [CUDA memcpy HtoD]\n      2.500      1  [CUDA memcpy DtoH]\n")
    ps = _parse(text)
    # '1.234' and '2.500' read as 1.234/2.5 MB in a C locale and 1234/2500 MB in a German one
    assert ps.frame["bytes"].isna().all() and list(ps.frame["calls"]) == [5, 1]
    assert any("could use '.' or ','" in n for n in ps.table_notes[(1, "gpu-memory-size")])
    # one cell that says which mark is the decimal one settles the table
    ps = _parse(text.replace("2.500", "2.50"))
    assert list(ps.frame["bytes"]) == [1.234e6, 2.5e6] and not ps.table_notes
