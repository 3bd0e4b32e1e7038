"""The one C pass of an `nsys stats --format csv` sweep's chunk (_summarycells.nsys_sweep, used by
profconv/parse/dialects/nsys_csv_sweep.py's `_swept`): what it gives on a small sweep, and on
generated and mutated sweeps either nothing (the chunk left to `_found`: `_bytescan.tables`, the gaps'
regular expression and nsys_batch's read) or exactly what `_found` gives."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profconv.parse import native
from profconv.parse.dialects import nsys_csv_sweep

pytestmark = pytest.mark.skipif(not hasattr(native.load("_summarycells"), "nsys_sweep"),
                                reason="the C accelerators are not built (or older than the pass)")

KERN = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
API = "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
SMALL = ("Generating SQLite file a.sqlite from a.nsys-rep\n"
         "Processing [a.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]...\n\n" + API + "\n"
         "75.0,300,3,100.0,100.0,90,110,10.0,cudaMalloc\n"
         "25.0,100,2,50.0,50.0,45,55,5.0,\"cudaFree\"\n\n"
         "Processing [a.sqlite] with [/opt/nsys/reports/osrt_sum.py]...\n\n" + API + "\n"
         "100.0,4000,4,1000.0,1000.0,900,1100,100.0,poll\n\n"
         "Generating SQLite file b.sqlite from b.nsys-rep\n"
         "Processing [b.sqlite] with [x/reports/cuda_api_sum.py]...\n\n" + API + "\n"
         "100.0,6,3,2.0,2.0,1,3,0.5,cudaMalloc\n\n")


def _both(text: str) -> tuple:
    data = bytearray(text.encode("latin-1"))
    return nsys_csv_sweep._swept(data, len(data)), nsys_csv_sweep._found(data, len(data))


def _same(a: tuple, b: tuple) -> None:
    """The same numbers, rows' names, table sizes, run starts and reports (the pool of distinct names
    in the order each reads them: the pass in the rows' order, `_found` header by header)."""
    assert b is not None, "the C pass took a chunk the readers' checks do not"
    assert a[0].keys() == b[0].keys()
    for k in a[0]:
        assert a[0][k].dtype == b[0][k].dtype and a[0][k].tobytes() == b[0][k].tobytes(), k
    assert [a[2][c] for c in a[1].tolist()] == [b[2][c] for c in b[1].tolist()]
    assert sorted(a[2]) == sorted(b[2]) and a[1].dtype == b[1].dtype
    for x, y in zip(a[3:6], b[3:6]):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    heads, runs, newlines = a[6]  # the lines before each header and each run's first line, the chunk's newlines
    assert heads.tolist() == b[6][0].tolist() and runs.tolist() == b[6][1].tolist() and newlines == b[6][2]


SIZE = "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation"
SIZED = ("Generating SQLite file a.sqlite from a.nsys-rep\n"
         "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n" + KERN + "\n"
         "100.0,300,3,100.0,100.0,90,110,10.0,k\n\n"
         "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_size_sum.py]... \n" + SIZE + "\n"
         "402.653,48,8.389,8.389,8.389,8.389,0.000,[CUDA memcpy Host-to-Device]\n"
         "1.5,1,1.5,1.5,1.5,1.5,0.000,[CUDA memset]\n\n")


def test_a_memory_size_table_read_by_the_pass_alone():
    """A memory-size report's table (its own header, no Time(%)): the pass reads its cells into the
    columns of their meaning (the Total where a time is, NaN Time(%)); `_found` leaves such a chunk
    to the windows (its table is not one `_bytescan.tables` finds)."""
    got, ref = _both(SIZED)
    assert ref is None
    numbers, codes, names, rows, new, reports, (heads, runs, newlines), unread = got
    assert unread.shape == (0, 3)
    assert rows.tolist() == [1, 2] and new.tolist() == [True, False]
    assert heads.tolist() == [2, 6] and runs.tolist() == [0, -1] and newlines == 10
    assert [nsys_csv_sweep._REPORTS[r] for r in reports.tolist()] == [b"cuda_gpu_kern_sum", b"cuda_gpu_mem_size_sum"]
    assert numbers["total_ns"].tolist() == [300.0, 402.653, 1.5] and numbers["calls"].tolist() == [3, 48, 1]
    assert numbers["std_ns"].tolist() == [10.0, 0.0, 0.0] and numbers["avg_ns"].tolist() == [100.0, 8.389, 1.5]
    assert numbers["time_pct"][0] == 100.0 and np.isnan(numbers["time_pct"][1:]).all()
    assert names == ["k", "[CUDA memcpy Host-to-Device]", "[CUDA memset]"]
    for text in (SIZED.replace("cuda_gpu_mem_size_sum", "cuda_gpu_mem_time_sum"),  # a size table under another report
                 SIZED.replace("cuda_gpu_kern_sum", "cuda_gpu_mem_size_sum"),  # a timed one under the sizes'
                 SIZED.replace("(MB)", "(KiB)"), SIZED.replace("Operation", "Name"),  # other sizes' headers
                 SIZED.replace(",0.000,", ",8.389,").replace("1.5", "1.500")):  # no cell says which mark is decimal
        assert _both(text) == (None, None)


NVTX = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range"
STYLED = ("Generating SQLite file a.sqlite from a.nsys-rep\n"
          "Processing [a.sqlite] with [/opt/nsys/reports/nvtx_sum.py]... \n" + NVTX + "\n"
          "75.0,300,3,100.0,100.0,90,110,10.0,PushPop,:step\n"
          '25.0,100,1,100.0,100.0,100,100,0.0,StartEnd,"a, b"\n\n'
          "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n" + KERN + "\n"
          "100.0,300,3,100.0,100.0,90,110,10.0,k\n\n")


def test_an_nvtx_table_read_by_the_pass_alone():
    """An NVTX report's table (a Style cell between the numbers and the range's name): the pass reads it
    as the nine fields, the Style left out; `_found` leaves such a chunk to the windows (nsys_batch does
    not read its header)."""
    got, ref = _both(STYLED)
    assert ref is None
    numbers, codes, names, rows, new, reports, (heads, runs, newlines), unread = got
    assert unread.shape == (0, 3)
    assert rows.tolist() == [2, 1] and heads.tolist() == [2, 7] and runs.tolist() == [0, -1] and newlines == 10
    assert [nsys_csv_sweep._REPORTS[r] for r in reports.tolist()] == [b"nvtx_sum", b"cuda_gpu_kern_sum"]
    assert names == [":step", "a, b", "k"] and numbers["calls"].tolist() == [3, 1, 3]
    assert numbers["time_pct"].tolist() == [75.0, 25.0, 100.0]
    for text in (STYLED.replace("nvtx_sum", "osrt_sum"),  # an NVTX table under another report
                 STYLED.replace("cuda_gpu_kern_sum", "nvtx_sum"),  # a plain one under NVTX's (and NVTX twice)
                 STYLED.replace("PushPop,", "Push Pop,"), STYLED.replace("PushPop,", ","),  # a Style not of letters
                 STYLED.replace("PushPop,", ""), STYLED.replace(",Style,Range", ",Range")):  # no Style cell
        assert _both(text) == (None, None)


def test_a_small_sweep_read_by_the_pass():
    got, ref = _both(SMALL)
    numbers, codes, names, rows, new, reports, (heads, runs, newlines), unread = got
    assert unread.shape == (0, 3)
    assert rows.tolist() == [2, 1, 1]
    # lines before each header (Generating, Processing, blank; + 2 rows, blank, Processing, blank; ...), each
    # run's Generating line (the third table's after the second's row and blank line)
    assert heads.tolist() == [3, 9, 15] and runs.tolist() == [0, -1, 12] and newlines == SMALL.count("\n") == 18
    assert new.tolist() == [True, False, True]
    assert [nsys_csv_sweep._REPORTS[r] for r in reports.tolist()] == [b"cuda_api_sum", b"osrt_sum", b"cuda_api_sum"]
    assert names == ["cudaMalloc", "cudaFree", "poll"]
    assert codes.tolist() == [0, 1, 2, 0]
    assert numbers["time_pct"].tolist() == [75.0, 25.0, 100.0, 100.0]
    assert numbers["calls"].dtype == np.int64 and numbers["calls"].tolist() == [3, 2, 4, 3]
    assert numbers["total_ns"].tolist() == [300.0, 100.0, 4000.0, 6.0]
    assert numbers["std_ns"].tolist() == [10.0, 5.0, 100.0, 0.5]
    _same(got, ref)


@pytest.mark.parametrize("old, new, refused", [
    ("[/opt/nsys/reports/cuda_api_sum", "[reports/cuda_api_sum", True),  # no PREFIX/ before reports/
    ("[/opt/nsys/reports/osrt_sum", "[/reports/osrt_sum", True),  # an empty PREFIX
    ("osrt_sum.py", "nvtx_sum.py", True),  # a report not read so
    ("Processing [a.sqlite]", "Processing [r/reports/cuda_api_sum.py]", True),  # a report's name in the input's path
    ("from a.nsys-rep", "from a b", False),  # a blank in a path: held as a Windows path is (below)
    ("from a.nsys-rep", "from a  b", True),  # two blanks
    ("from a.nsys-rep", "from a.nsys-rep ", True),  # a blank at the end
    # paths as Windows writes them: '\\', ':', blanks, '(', ')', '~'; none of the words a reader looks for
    ("[a.sqlite]", "[C:\\Users\\me (x86)\\PROGRA~1\\a.sqlite]", False),
    ("[/opt/nsys/reports/cuda_api_sum", "[C:\\Program Files\\NVIDIA\\reports\\cuda_api_sum", False),
    ("[/opt/nsys/reports/cuda_api_sum", "[C:/x\\reports/cuda_api_sum", False),  # separators mixed
    ("[/opt/nsys/reports/cuda_api_sum", "[C:\\a \\reports\\cuda_api_sum", True),  # the folder ends with a blank
    ("[/opt/nsys/reports/cuda_api_sum", "[C:\\Summary\\reports\\cuda_api_sum", True),
    ("[a.sqlite]", "[C:\\Statistics\\a.sqlite]", True), ("[a.sqlite]", "[C:\\x\\reports\\a.sqlite]", True),
    ("from a.nsys-rep", "from C:\\Generating\\a.nsys-rep", True),
    ("Generating SQLite file a.sqlite", "Generating SQLite file C:\\Running\\a.sqlite", True),
    ("...\n\n" + API, "...\n" + API, False),  # no blank line after the status line
    ("]...\n\n" + API, "]... \n" + API, False),  # a blank after the dots (nsys 2025)
    ("Processing [a.sqlite] with [/opt/nsys/reports/osrt", "Processing [a.sqlite] with [/opt/nsys/reports/nvtx_sum.py]"
     "... \nSKIPPED: a.sqlite does not contain NV Tools Extension (NVTX) data.\n\nProcessing [a.sqlite] with "
     "[/opt/nsys/reports/osrt", False),  # a report with nothing to show
    ("Processing [a.sqlite] with [/opt/nsys/reports/osrt", "Processing [a.sqlite] with [/opt/nsys/reports/nvtx_sum.py]"
     "... \nSKIPPED: a.sqlite \u00e9\n\nProcessing [a.sqlite] with [/opt/nsys/reports/osrt", True),  # not ASCII
    ("cudaFree\"\n\n", "cudaFree\"\n", True),
    ("poll", "po\tll", True), ("poll", "p\u00f6ll", True), ("poll", "a&b", True), ("poll", "a\\b", True),
    ("poll", " poll", True), ("poll", "p\x7fl", False),  # DEL: left to _found, which takes it
    ("100.0,4000", "100.5,4000", True),  # Time(%) over 100
    ("100.0,6,3", "100.0,7,3", True),  # a total not calls x average
    ("4000,4,", "4000,4.0,", True),  # calls not whole
    ("300,3,100.0", "300,3,1" + "0" * 400, True),  # a double that is not finite
    ("75.0,300", "75.000,300", False), ("10.0,cudaMalloc", "1.234,cudaMalloc", False),  # undecided, and decimals
    ("100.0,6,3,2.0,2.0,1,3,0.5", "100.000,6,3,2.000,2.000,1,3,1.500", True),  # a table of undecided cells only
    (API + "\n100.0,6", KERN + "\n100.0,6", False),  # another header of the nine fields: read alike
    (API + "\n100.0,6,3,2.0", API.replace("Num Calls,Avg (ns)", "Avg (ns),Num Calls") + "\n100.0,6,2.0,3",
     False),  # the fields in another order: left to _found
    (API + "\n100.0,6", API.replace(",Med (ns)", "") + "\n100.0,6", True),  # other fields
])
def test_what_the_pass_leaves_or_reads_as_found_does(old, new, refused):
    text = SMALL.replace(old, new, 1)
    assert text != SMALL
    got, ref = _both(text)
    if got is not None:
        _same(got, ref)
    assert (got is None and ref is None) == refused
    if not refused:
        assert ref is not None and ref[3].tolist() == [2, 1, 1]


def test_the_pass_takes_a_chunk_found_reads_with_a_later_header_the_first_one():
    text = SMALL + SMALL.replace("a.", "c.").replace("b.", "d.")
    got, ref = _both(text)
    assert got is not None and got[3].tolist() == [2, 1, 1, 2, 1, 1]
    _same(got, ref)


def test_the_pass_reads_a_runs_several_headers_and_leaves_more_than_eight_to_found():
    """A run's reports print headers of the nine fields with other names (kernels' Instances, memory
    operations' Count and Operation): one pass reads them all, in the tables' order. More than eight
    distinct header lines in a chunk: left to `_found` (which reads them)."""
    mem = "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation"
    run = ("Generating SQLite file e.sqlite from e.nsys-rep\n"
           "Processing [e.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]...\n\n" + KERN + "\n"
           "100.0,40,2,20.0,20.0,19,21,1.0,k_a\n\n"
           "Processing [e.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_time_sum.py]...\n\n" + mem + "\n"
           "60.0,30,3,10.0,10.0,9,11,1.0,[CUDA memcpy HtoD]\n40.0,20,2,10.0,10.0,9,11,1.0,[CUDA memcpy DtoH]\n\n")
    got, ref = _both(SMALL + run + SMALL.replace("a.", "c."))
    assert got is not None and got[3].tolist() == [2, 1, 1, 1, 2, 2, 1, 1]
    assert nsys_csv_sweep._SECTION_OF[got[5]].tolist() == [1, 2, 1, 0, 0, 1, 2, 1]  # api, os-runtime, api, gpu ...
    assert [got[2][c] for c in got[1].tolist()][4:8] == ["k_a", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "cudaMalloc"]
    _same(got, ref)
    heads = [KERN.replace("Instances", c).replace("Name", n) for c in ("Instances", "Num Calls", "Calls", "Count",
                                                                       "Operations") for n in ("Name", "Operation")]
    many = "".join(run.replace("e.", f"r{k}.").replace(KERN, heads[k]) for k in range(9))
    got, ref = _both(many)
    assert got is None and ref is not None and ref[3].tolist() == [1, 2] * 9
    got, ref = _both("".join(run.replace("e.", f"r{k}.").replace(KERN, heads[k]) for k in range(7)))  # eight
    assert got is not None and got[3].tolist() == [1, 2] * 7
    _same(got, ref)


def _run(rng: random.Random, run: int, kern: bool) -> list[str]:
    """A run of one header's reports: kernels, or API calls and OS runtime."""
    reports = ["cuda_gpu_kern_sum"] if kern else rng.choice([["cuda_api_sum", "osrt_sum"], ["osrt_sum"], ["cuda_api_sum"]])
    lines = [f"Generating SQLite file run{run}.sqlite from run{run}.nsys-rep"]
    for report in reports:
        header = KERN if report == "cuda_gpu_kern_sum" else API
        lines += [f"Processing [run{run}.sqlite] with [/opt/nsys/reports/{report}.py]...", "", header]
        rows = [(c * a, c, a) for c, a in ((rng.randint(1, 5000), rng.uniform(1000, 900000)) for _ in range(rng.randint(1, 6)))]
        total = sum(r[0] for r in rows)
        lines += [f"{100 * t / total:.1f},{round(t)},{c},{a:.1f},{a:.1f},{round(a * 0.9)},{round(a * 1.1)},{a / 10:.1f},"
                  f"{rng.choice(['k_a', 'void f<int>(int*; float)', '[CUDA memcpy HtoD]', 'poll'])}_{k}"
                  for k, (t, c, a) in enumerate(sorted(rows, reverse=True))] + [""]
    return lines


@pytest.mark.parametrize("seed", range(80))
def test_generated_and_mutated_sweeps(seed):
    rng = random.Random(seed)
    kern = rng.choice([True, False, None])  # one header: kernels only, or API and OS runtime; or both (None)
    lines = [ln for r in range(rng.randint(3, 30)) for ln in _run(rng, r, rng.random() < 0.5 if kern is None else kern)]
    for _ in range(0 if seed < 10 else rng.randint(1, 3)):  # a row's byte or two replaced (most keep the shape)
        k = rng.choice([i for i, ln in enumerate(lines) if ln[:1].isdigit()] if rng.random() < 0.8 else range(len(lines)))
        name = lines[k].rfind(",") + 1 if rng.random() < 0.6 else 0  # in the name, or anywhere
        at = rng.randrange(name, len(lines[k]) + 1)
        lines[k] = lines[k][:at] + rng.choice(["0", "9", ".", ",", "x", "/reports/", "\"", "&", "\t", " ", "<br>", "%",
                                                 "NVPROF", "\u00e9", ""]) + lines[k][at + rng.randint(0, 2):]
    got, ref = _both("\n".join(lines) + "\n")
    if got is not None:
        _same(got, ref)
    assert got is not None or seed >= 10, "a plain sweep is read by the pass"


UM_TOTAL = ("Processing [{db}] with [/opt/nsys/reports/um_total_sum.py]...\n\n"
            "Total HtoD Migration Size (MB),Total DtoH Migration Size (MB),Total CPU Page Faults\n32.030,83.103,725\n\n"
            "Processing [{db}] with [/opt/nsys/reports/um_cpu_page_faults_sum.py]...\n"
            "CPU Page Faults,CPU Instruction Address\n36,0x3cc75f3e\n43,0xef40af2e\n\n")


@pytest.mark.parametrize("seed", range(12))
def test_reports_not_read_stepped_over_by_the_pass_as_found_does(seed):
    """A run's last reports that profconv does not read (um_total_sum, um_cpu_page_faults_sum), before the
    next run's Generating line or at the chunk's end: the pass and `_found` step over the same tables and
    give their lines (header, last row) and report alike."""
    rng = random.Random(900 + seed)
    runs = []
    for r in range(rng.randint(2, 12)):
        lines = _run(rng, r, rng.random() < 0.5)
        runs.append("\n".join(lines) + "\n" + (UM_TOTAL.format(db=f"run{r}.sqlite") if rng.random() < 0.7 else ""))
    got, ref = _both("".join(runs))
    assert got is not None
    _same(got, ref)
    assert got[7].tolist() == ref[7].tolist() and len(got[7]) == 2 * sum("um_total_sum" in r for r in runs)
    text = "".join(runs).split("\n")
    for first, last, report in got[7].tolist():
        assert text[first].startswith(("Total HtoD", "CPU Page Faults")) and text[last + 1] == ""
        assert nsys_csv_sweep._UNREAD_NAMES[report].decode() in text[first - 1] + text[first - 2]
