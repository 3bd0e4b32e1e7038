"""nsys trace reports get the per-name summary nvprof's traces get (profconv.parse.traces.summarize_trace,
one function for both): cuda_gpu_trace / cuda_api_trace / gputrace as CSV and as console tables, read
row by row, by the bulk splitter and by pandas' reader. The summary ranks the trace's kernels and
memcopies (or API calls) in the terminal view and its rows go to --json / --csv as section gpu / api.
Every expected number below is worked out from the trace rows by hand (or, for the big generated
traces, by plain integer sums in the test)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

import profconv
from profconv.parse.dialects import nsys
from profconv.parse.table import Rows
from profconv.parse.traces import summarize_trace
from tests.parse_invariants import check_all

HEAD = "Processing [report.sqlite] with [/opt/nsys/reports/{}.py]... \n\n"
GPU_COLUMNS = ("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
               "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name")
MEMCPY = ",,,,,,,,,,0.001,23.810,Pageable,Device,NVIDIA H100 (0),1,7,"
KERNEL = ",1,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H100 (0),1,7,"
GPU_TRACE_CSV = HEAD.format("cuda_gpu_trace") + GPU_COLUMNS + "\n" + "".join([
    "1000,5000,1" + MEMCPY + "[CUDA memcpy Host-to-Device]\n",  # line 4
    "7000,20000,2" + KERNEL + '"conv(float*, int)"\n',  # 5
    "30000,30000,3" + KERNEL + '"conv(float*, int)"\n',  # 6
    "62000,2500,4" + MEMCPY + "[CUDA memcpy Host-to-Device]\n",  # 7
    "70000,1000,5" + MEMCPY + "[CUDA memcpy Device-to-Host]\n",  # 8
    "72000,12345,6" + KERNEL + "relu(float*)\n",  # 9
])
# name, calls, total, avg, min, max, line_start, line_end: largest total first
GPU_SUMMARY = [
    ("conv(float*, int)", 2, 50000.0, 25000.0, 20000.0, 30000.0, 5, 6),
    ("relu(float*)", 1, 12345.0, 12345.0, 12345.0, 12345.0, 9, 9),
    ("[CUDA memcpy Host-to-Device]", 2, 7500.0, 3750.0, 2500.0, 5000.0, 4, 7),
    ("[CUDA memcpy Device-to-Host]", 1, 1000.0, 1000.0, 1000.0, 1000.0, 8, 8),
]
GPU_TOTAL = 70845.0

API_TRACE_CSV = HEAD.format("cuda_api_trace") + "".join([
    "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n",
    "300000,150000,cudaMalloc,0,1,4242,4242,20,app\n",  # line 4
    "460000,2500,cudaMalloc,0,2,4242,4242,20,app\n",  # 5
    "470000,9000,cudaMemcpy,0,3,4242,4242,20,app\n",  # 6
    "480000,4100,cudaLaunchKernel,0,4,4242,4242,20,app\n",  # 7
    "490000,3900,cudaLaunchKernel,0,5,4242,4242,20,app\n",  # 8
])
API_SUMMARY = [
    ("cudaMalloc", 2, 152500.0, 76250.0, 2500.0, 150000.0, 4, 5),
    ("cudaMemcpy", 1, 9000.0, 9000.0, 9000.0, 9000.0, 6, 6),
    ("cudaLaunchKernel", 2, 8000.0, 4000.0, 3900.0, 4100.0, 7, 8),
]

# `nsys stats -r cuda_gpu_trace` (and `nsys nvprof --print-gpu-trace`) printed as a console table
CONSOLE_TRACE = """\
 Start (ns)   Duration (ns)  CorrId  GrdX  BlkX  BlkY  BlkZ            Device             Strm              Name
 -----------  -------------  ------  ----  ----  ----  ----  ---------------------------  ----  ----------------------------
 288,824,971            672     128                          NVIDIA GeForce RTX 3060 (0)     7  [CUDA memcpy Host-to-Device]
 291,473,497         65,025     131     1     4     1     1  NVIDIA GeForce RTX 3060 (0)     7  kernel(int *)
 291,600,000         64,975     133     1     4     1     1  NVIDIA GeForce RTX 3060 (0)     7  kernel(int *)
 291,700,100          1,328     135                          NVIDIA GeForce RTX 3060 (0)     7  [CUDA memcpy Device-to-Host]
"""

# nsys 2020's gputrace: starts in seconds, durations in ns
CONSOLE_2020 = """\
Exporting [/opt/nsight-systems-2020.4.3/target-linux-x64/reports/gputrace.py report1.sqlite] to console...

 Start(sec)  Duration(nsec)  CorrId  GrdX  BlkX  BlkY  BlkZ        Device        Strm                  Name
 ----------  --------------  ------  ----  ----  ----  ----  ------------------  ----  -------------------------------------
   0.355442           5,120      57                          Tesla V100 (0)         7  [CUDA memset]
   0.355501          12,352      61   128   256     1     1  Tesla V100 (0)         7  vecAdd(float*, float*, float*, int)
   0.355601          12,416      62   128   256     1     1  Tesla V100 (0)         7  vecAdd(float*, float*, float*, int)
"""

KERN_SUM = ("\nProcessing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n\n"
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "80.2,50000,2,25000.0,25000.0,20000,30000,7071.1,\"conv(float*, int)\"\n"
            "19.8,12345,1,12345.0,12345.0,12345,12345,0.0,relu(float*)\n")

COLUMNS = ["name", "calls", "total_ns", "avg_ns", "min_ns", "max_ns", "line_start", "line_end"]


def _summary(ps, section: str) -> list[tuple]:
    f = ps.frame
    s = f[f["section"] == section]
    return [tuple(r) for r in s[COLUMNS].itertuples(index=False, name=None)]


def test_gpu_trace_csv_gets_a_ranked_summary():
    ps = profconv.parse_text(GPU_TRACE_CSV)
    assert ps.unplaced == [] and len(ps.profiles) == 1
    f = ps.frame
    assert (f["section"] == "gpu-trace").sum() == 6  # the trace rows stay, every one
    assert _summary(ps, "gpu") == GPU_SUMMARY
    gpu = f[f["section"] == "gpu"]
    assert list(gpu["share"]) == pytest.approx([50000 / GPU_TOTAL, 12345 / GPU_TOTAL, 7500 / GPU_TOTAL,
                                                1000 / GPU_TOTAL], rel=1e-15)
    assert list(gpu["cumulative"]) == pytest.approx([50000 / GPU_TOTAL, 62345 / GPU_TOTAL, 69845 / GPU_TOTAL, 1.0],
                                                    rel=1e-15)
    assert list(gpu["in_top"]) == [True, True, True, False]  # 88.0% after two rows, 98.6% after three
    assert list(gpu["short_name"]) == ["conv", "relu", "[CUDA memcpy Host-to-Device]", "[CUDA memcpy Device-to-Host]"]
    assert set(gpu["share_basis"]) == {"total_ns"} and gpu["time_pct"].isna().all()
    check_all(ps, GPU_TRACE_CSV)


def test_api_trace_csv_with_the_name_not_last_gets_an_api_summary():
    ps = profconv.parse_text(API_TRACE_CSV)
    assert ps.unplaced == []
    assert (ps.frame["section"] == "api-trace").sum() == 5
    assert _summary(ps, "api") == API_SUMMARY
    api = ps.frame[ps.frame["section"] == "api"]
    assert list(api["in_top"]) == [True, True, False]  # 152.5 of 169.5 us = 90.0%: one row is not enough
    assert list(api["cumulative"]) == pytest.approx([152500 / 169500, 161500 / 169500, 1.0], rel=1e-15)
    check_all(ps, API_TRACE_CSV)


def test_gpu_and_api_traces_of_one_run_each_get_theirs():
    text = GPU_TRACE_CSV + "\n" + API_TRACE_CSV
    ps = profconv.parse_text(text)
    assert len(ps.profiles) == 1
    assert _summary(ps, "gpu") == GPU_SUMMARY
    offset = GPU_TRACE_CSV.count("\n") + 1
    assert _summary(ps, "api") == [r[:6] + (r[6] + offset, r[7] + offset) for r in API_SUMMARY]


@pytest.mark.parametrize(("text", "expected", "top"), [
    (CONSOLE_TRACE, [("kernel(int *)", 2, 130000.0, 65000.0, 64975.0, 65025.0, 4, 5),
                     ("[CUDA memcpy Device-to-Host]", 1, 1328.0, 1328.0, 1328.0, 1328.0, 6, 6),
                     ("[CUDA memcpy Host-to-Device]", 1, 672.0, 672.0, 672.0, 672.0, 3, 3)], [True, False, False]),
    (CONSOLE_2020, [("vecAdd(float*, float*, float*, int)", 2, 24768.0, 12384.0, 12352.0, 12416.0, 6, 7),
                    ("[CUDA memset]", 1, 5120.0, 5120.0, 5120.0, 5120.0, 5, 5)], [True, True]),
], ids=["console-2024", "gputrace-2020-seconds"])
def test_console_trace_gets_a_summary(text, expected, top):
    ps = profconv.parse_text(text)
    assert ps.unplaced == []
    assert _summary(ps, "gpu") == expected
    assert list(ps.frame.loc[ps.frame["section"] == "gpu", "in_top"]) == top  # 98.5%; 82.9% then 100%
    check_all(ps, text)


def test_nsys_own_summary_is_not_doubled_by_the_traces():
    """A profile that holds nsys's own kernel summary (cuda_gpu_kern_sum) keeps it alone: a summary made
    from the trace as well would count every kernel twice. The API trace still gets its own."""
    for text in (GPU_TRACE_CSV + KERN_SUM + "\n" + API_TRACE_CSV, KERN_SUM + "\n" + GPU_TRACE_CSV):
        ps = profconv.parse_text(text)
        assert len(ps.profiles) == 1
        gpu = ps.frame[ps.frame["section"] == "gpu"]
        assert list(gpu["name"]) == ["conv(float*, int)", "relu(float*)"]
        assert list(gpu["time_pct"]) == [80.2, 19.8]  # nsys's rows, as printed
    assert [r[0] for r in _summary(ps, "api")] == []
    ps = profconv.parse_text(GPU_TRACE_CSV + KERN_SUM + "\n" + API_TRACE_CSV)
    assert [r[:6] for r in _summary(ps, "api")] == [r[:6] for r in API_SUMMARY]


def _big_trace(n: int, name_last: bool = True) -> tuple[str, dict[str, list[int]]]:
    """A generated trace of n rows and, per name, the durations it holds."""
    rng = random.Random(12)
    names = ["void conv_forward_kernel<float, 16>(float const *, float*, int)", "[CUDA memcpy HtoD]",
             'say "hi", twice', "sgemm_sm35_ldg_tn_128x8x256x16x32"]
    durs: dict[str, list[int]] = {n: [] for n in names}
    if name_last:
        rows = [HEAD.format("cuda_gpu_trace") + "Start (ns),Duration (ns),CorrId,GrdX,Device,Strm,Name"]
    else:
        rows = [HEAD.format("cuda_api_trace") + "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid"]
    t = 1000
    for i in range(n):
        name = names[i % len(names)] if name_last else ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel"][i % 3]
        d = rng.randint(1000, 90_000_000)
        durs.setdefault(name, []).append(d)
        cell = '"' + name.replace('"', '""') + '"' if ("," in name or '"' in name) else name
        rows.append(f"{t},{d},{i},157,NVIDIA H200 (0),7,{cell}" if name_last else f"{t},{d},{cell},0,{i},1,1")
        t += d + rng.randint(2, 9000)
    return "\n".join(rows) + "\n", {k: v for k, v in durs.items() if v}


def _expected(durs: dict[str, list[int]]) -> dict[str, tuple]:
    return {k: (len(v), float(sum(v)), sum(v) / len(v), float(min(v)), float(max(v))) for k, v in durs.items()}


@pytest.mark.parametrize(("n", "name_last"), [(nsys.BULK_ROWS + 700, True), (nsys.BULK_ROWS + 700, False),
                                              (nsys.TEXT_BULK_ROWS - 1, True), (300, True)],
                         ids=["bulk-splitter", "pandas-reader", "row-by-row", "bulk-small"])
def test_big_trace_summary_equals_the_sums_of_its_rows(monkeypatch, n, name_last):
    """Integer durations: every total is exact, whichever reader read the rows; the bulk readers'
    summary is the row-by-row reader's, byte for byte."""
    text, durs = _big_trace(n, name_last)
    ps = profconv.parse_text(text)
    section = "gpu" if name_last else "api"
    got = {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in _summary(ps, section)}
    assert got == _expected(durs)
    totals = [r[2] for r in _summary(ps, section)]
    assert totals == sorted(totals, reverse=True)
    monkeypatch.setattr(nsys, "TEXT_BULK_ROWS", 10**9)
    slow = profconv.parse_text(text)
    assert _summary(slow, section) == _summary(ps, section)


def test_summarize_trace_directly():
    """The library function on columns: correlation ids dropped from the names (nvprof's), rows without
    a duration counted but not summed, a name with no duration at all has no total."""
    trace = Rows({"name": ["k [12]", "k [13]", "m", "k [14]", "z"], "total_ns": [10.0, 30.0, 5.0, float("nan"), float("nan")],
                  "line_start": [3, 4, 5, 6, 7], "line_end": [3, 4, 5, 6, 7]})
    blk = summarize_trace(trace, "gpu")
    assert blk.table is not None and (blk.line_start, blk.line_end) == (3, 7)
    recs = blk.table.records(["section", "name", "calls", "total_ns", "avg_ns", "min_ns", "max_ns", "line_start",
                              "line_end"])
    assert [tuple(r.values())[:3] for r in recs] == [("gpu", "k", 3), ("gpu", "m", 1), ("gpu", "z", 1)]
    assert [r["total_ns"] for r in recs[:2]] == [40.0, 5.0] and recs[2]["total_ns"] != recs[2]["total_ns"]
    assert [(r["avg_ns"], r["min_ns"], r["max_ns"]) for r in recs[:2]] == [(20.0, 10.0, 30.0), (5.0, 5.0, 5.0)]
    assert [(r["line_start"], r["line_end"]) for r in recs] == [(3, 6), (5, 5), (7, 7)]


def test_cli_terminal_at_80_columns_and_in_a_pipe_ranks_the_trace(cli, tmp_path):
    path = tmp_path / "gputrace.csv"
    path.write_text(GPU_TRACE_CSV + "\n" + API_TRACE_CSV)
    for args in ((), ("--width", "80")):
        r = cli("parse", str(path), *args)
        assert r.returncode == 0, r.stderr
        out = r.stdout
        assert max(len(line) for line in out.splitlines()) <= 80 or not args
        assert "GPU activities" in out and "API calls" in out
        assert "3 of 4 GPU activities take 98.6% of GPU time" in out
        assert "2 of 3 API calls take 95.3% of API time" in out
        lines = out.splitlines()
        kernel_rows = [ln for ln in lines if ln.rstrip().endswith(("conv", "relu", "[CUDA memcpy Host-to-Device]",
                                                                   "[CUDA memcpy Device-to-Host]"))]
        assert [ln.split()[-1] for ln in kernel_rows][:2] == ["conv", "relu"]
        assert kernel_rows[0].startswith("●") and not kernel_rows[3].startswith("●")
        assert "50 µs" in kernel_rows[0] and "25 µs" in kernel_rows[0]


def test_cli_json_and_csv_carry_the_summary(cli, tmp_path):
    path = tmp_path / "gputrace.csv"
    path.write_text(GPU_TRACE_CSV)
    doc = json.loads(cli("parse", str(path), "--json").stdout)
    gpu = [r for r in doc["rows"] if r["section"] == "gpu"]
    assert [(r["name"], r["calls"], r["total_ns"], r["avg_ns"], r["min_ns"], r["max_ns"], r["in_top"])
            for r in gpu] == [g[:6] + (top,) for g, top in zip(GPU_SUMMARY, [True, True, True, False])]
    assert sum(r["section"] == "gpu-trace" for r in doc["rows"]) == 6
    rows = list(csv.DictReader(io.StringIO(cli("parse", str(path), "--csv").stdout)))
    assert len(rows) == 6 + 4
    gpu_csv = [r for r in rows if r["section"] == "gpu"]
    assert [(r["name"], r["calls"], r["total_ns"], r["avg_ns"], r["min_ns"], r["max_ns"], r["in_top"])
            for r in gpu_csv][:2] == [("conv(float*, int)", "2", "50000.0", "25000.0", "20000.0", "30000.0", "True"),
                                      ("relu(float*)", "1", "12345.0", "12345.0", "12345.0", "12345.0", "True")]


def test_name_at_a_time_equals_row_by_row_bit_for_bit():
    """The summary's fast path (rows put in name order by one sort) gives the row-by-row loop's
    numbers bit for bit: the same Kahan sum in the same order, rows without a duration counted
    but not summed, lines in or out of order."""
    from profconv.parse import traces

    rng = random.Random(5)
    for trial in range(400):
        n = rng.randint(1, 200)
        seen: dict[int, int] = {}
        codes = [seen.setdefault(rng.randrange(rng.randint(1, 12)), len(seen)) for _ in range(n)]
        t = [rng.choice([float("nan"), rng.uniform(0, 1e9), float(rng.randint(0, 10**6)), 1e-3 * rng.random()])
             for _ in range(n)]
        lines = list(range(1, n + 1))
        if trial % 3 == 0:
            rng.shuffle(lines)
        ends = [ln + rng.randint(0, 2) for ln in lines]
        slow = traces._row_by_row(codes, t, lines, ends)
        fast = traces._by_name(codes, len(seen), t, lines, ends)
        assert list(fast) == list(slow)
        assert [repr(v) for v in fast.values()] == [repr(v) for v in slow.values()]


def test_by_name_in_c_equals_the_python_bit_for_bit():
    """The C pass (profconv.parse._bytescan.by_name) gives _by_name's figures to the bit: same Kahan
    steps per name in file order, rows without a duration counted but not summed, lines in or out
    of order; where a sum overflows (an infinity) it says None and Python reads the rows."""
    from array import array

    from profconv.parse import native, traces

    scan = native.load("_bytescan")
    if scan is None or not hasattr(scan, "by_name"):
        pytest.skip("the C accelerator is not built")
    rng = random.Random(6)
    for trial in range(600):
        n = rng.randint(1, 300)
        seen: dict[int, int] = {}
        codes = [seen.setdefault(rng.randrange(rng.randint(1, 40)), len(seen)) for _ in range(n)]
        t = array("d", [rng.choice([float("nan"), rng.uniform(0, 1e9), float(rng.randint(0, 10**6)),
                                    1e-3 * rng.random(), rng.uniform(0, 1e300) * (trial % 50 == 0)]) for _ in range(n)])
        lines = list(range(1, n + 1))
        if trial % 3 == 0:
            rng.shuffle(lines)
        ends = lines if trial % 2 else [ln + rng.randint(0, 2) for ln in lines]
        want = traces._by_name(codes, len(seen), list(t), lines, ends)
        got = traces._by_name_c(codes, t, lines, ends, len(seen))
        assert list(got) == list(want)
        assert [repr(v) for v in got.values()] == [repr(v) for v in want.values()]
    big = array("d", [1.7e308, 1.7e308, 1.7e308, 5.0])  # the compensation becomes NaN: Python's to read
    assert scan.by_name([0, 0, 0, 1], big, [1, 2, 3, 4], [1, 2, 3, 4], 2) is None
    args = ([0, 0, 0, 1], list(big), [1, 2, 3, 4], [1, 2, 3, 4])
    assert repr(traces._by_name(args[0], 2, *args[1:])) == repr(traces._row_by_row(*args))
    assert traces._by_name_c([0, 1], array("d", [1.0, 2.0]), (1, 2), [1, 2], 2) is None  # not a list or range
    assert scan.by_name([0, 1], array("d", [1.0, 2.0]), [1, 2, 3], [1, 2], 2) is None  # lengths differ
    for lines in (range(5, 8), range(9, 3, -2)):  # ranges of line numbers: as their lists give
        got = traces._by_name_c([0, 1, 0], array("d", [1.0, 2.0, 4.0]), lines, lines, 2)
        assert repr(got) == repr(traces._by_name([0, 1, 0], 2, [1.0, 2.0, 4.0], list(lines), list(lines)))
    assert scan.by_name([0, 5], array("d", [1.0, 2.0]), [1, 2], [1, 2], 2) is None  # a code out of range


def test_by_name_with_numpy_is_the_kahan_loops_for_few_and_many_names():
    """traces._by_name_np (whole nanoseconds: NumPy's sums are exact) gives _by_name's result bit for bit,
    with names coded below 2**16 (their stable sort a 16-bit radix sort) and above (int64 keys)."""
    from array import array

    import numpy  # noqa: F401  (_by_name_np works where NumPy is loaded)

    from profconv.parse import traces

    rng = random.Random(8)
    for k in (1, 7, 300, 70_000):
        n = 90_000 if k == 70_000 else 2_000
        codes = [rng.randrange(k) for _ in range(n)]
        codes[-1] = k - 1  # (the largest code present)
        index = {c: i for i, c in enumerate(dict.fromkeys(codes))}  # numbered in order of first appearance
        codes = [index[c] for c in codes]
        t = array("d", (float(rng.randrange(10**9)) for _ in range(n)))
        got = traces._by_name_np(codes, t, range(1, n + 1), range(1, n + 1))
        assert got == traces._by_name(codes, len(index), t, range(1, n + 1), range(1, n + 1)) and len(got) == len(index)
    codes = [3, -1, 3, 65535, -1]  # (a code below 0 is no 16-bit key: -1 would sort as 65535)
    t = array("d", [5.0, 1.0, 7.0, 2.0, 4.0])
    got = traces._by_name_np(codes, t, range(1, 6), range(1, 6))
    assert got == traces._by_name(codes, 3, t, range(1, 6), range(1, 6))
    assert got == {-1: [2, 2, 5.0, 0.0, 1.0, 4.0, 2, 5], 65535: [1, 1, 2.0, 0.0, 2.0, 2.0, 4, 4],
                   3: [2, 2, 12.0, 0.0, 5.0, 7.0, 1, 3]}
