"""A machine-written `nsys stats --format csv` sweep read whole as columns
(profconv/parse/dialects/nsys_csv_sweep.py): the same ProfileSet (library), parts (the stream's) and
`--json`/`--csv`/table (CLI) as the stream's windows read by the existing readers (the fast path
switched off: the reference), on generated sweeps (runs of one to three reports, random rows) and on
the same with random mutations (seeds); the fast path taken where a sweep is plain."""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import pytest

from profconv.parse import native
from profconv.parse.colviews import Runs
from profconv.parse.dialects import nsys, nsys_csv_sweep
from tests.fastpath_compare import FastPath, mutate_lines, set_cell, write_lines, write_mutated

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the columnar reader is off")
pytestmark = pytest.mark.skipif(nsys_csv_sweep._scanner() is None or native.load("_bytescan") is None,
                                reason="the C accelerators are not built (or older than the fast path)")

HEADERS = {
    "cuda_gpu_kern_sum": "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
    "cuda_api_sum": "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
    "cuda_gpu_mem_time_sum": "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation",
    "osrt_sum": "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
    "cuda_gpu_mem_size_sum": "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation",
    "nvtx_sum": "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range",
    "openacc_sum": "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
}
NAMES = {
    "cuda_gpu_kern_sum": ["void conv_forward_kernel<float; 16>(float const *; int)", "sgemm_sm35_ldg_tn_128x8x256x16x32",
                          "kernel_a", "void gemm<float, 128>(float const *, int)", "k [1234]"],
    "cuda_api_sum": ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "cudaFree", "cuInit"],
    "cuda_gpu_mem_time_sum": ["[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memset]"],
    "osrt_sum": ["poll", "ioctl", "pthread_cond_wait", "read"],
    "cuda_gpu_mem_size_sum": ["[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "[CUDA memset]"],
    "nvtx_sum": [":conv_forward", "layer 1", "epoch", "a, b", "step"],
    "openacc_sum": ["Enter Data@main.c:12", "Compute Construct@main.c:20", "Wait@main.c:31"],
}
RUNS = [["cuda_gpu_kern_sum"], ["cuda_api_sum", "cuda_gpu_kern_sum"], ["cuda_api_sum", "cuda_gpu_kern_sum", "osrt_sum"],
        ["cuda_gpu_mem_time_sum", "cuda_api_sum"]]
FAST = FastPath(nsys_csv_sweep, "_scanner")
DATA = Path(__file__).parent / "data"  # the fast path, switched off: the readers


def _table(rng: random.Random, report: str) -> list[str]:
    """A report's rows: Time(%) adding up to 100 (one decimal), each total calls x average (a memory-size
    report's: MB, three decimals)."""
    names = rng.sample(NAMES[report], rng.randint(1, len(NAMES[report])))
    if report == "cuda_gpu_mem_size_sum":
        return _sizes(rng, names)
    rows = []
    for k, name in enumerate(names):
        calls, avg = rng.randint(1, 5000), rng.uniform(1000, 900000)
        rows.append((calls * avg, calls, avg, f'"{name}"' if "," in name else f"{name}_{k}"))
    total = sum(r[0] for r in rows)
    style = (lambda: rng.choice(["PushPop,", "StartEnd,"])) if report == "nvtx_sum" else (lambda: "")
    return [f"{100 * t / total:.1f},{round(t)},{c},{a:.1f},{a:.1f},{round(a * 0.9)},{round(a * 1.1)},{a / 10:.1f},"
            f"{style()}{n}" for t, c, a, n in sorted(rows, reverse=True)]


def _sizes(rng: random.Random, names: list[str]) -> list[str]:
    """A memory-size report's rows (nsys 2022 on): Total, Count, Avg, Med, Min, Max, StdDev in MB, three
    decimals each (as nsys prints them: '0.000' says the decimal mark; sizes such as '8.389' alone do not)."""
    rows = []
    for k, name in enumerate(names):
        count, avg = rng.randint(1, 500), rng.choice([rng.uniform(0.001, 9.999), rng.uniform(10, 2000)])
        std = rng.choice([0.0, avg / 7]) if k else 0.0  # (one '0.000' a table at least: not ambiguous)
        rows.append(f"{count * avg:.3f},{count},{avg:.3f},{avg:.3f},{avg - std:.3f},{avg + std:.3f},{std:.3f},{name}")
    return sorted(rows, key=lambda r: -float(r.split(",")[0]))


# reports profconv does not read (a note each, nsys.NOT_READ): a unified-memory app's, as `nsys stats` prints them
UNREAD = {
    "um_sum": ("Virtual Address,HtoD Migration size (MB),DtoH Migration size (MB),CPU Page Faults,GPU Page Faults,"
               "Migration Throughput (MBps)",
               lambda rng: [f"0x7f{rng.randrange(16**8):08x},{rng.uniform(0, 9):.3f},{rng.uniform(0, 9):.3f},"
                            f"{rng.randint(0, 99)},{rng.randint(0, 99)},{rng.uniform(1, 9999):.6f}"
                            for _ in range(rng.randint(1, 4))]),
    "um_total_sum": ("Total HtoD Migration Size (MB),Total DtoH Migration Size (MB),Total CPU Page Faults,"
                     "Total GPU PageFaults,Minimum Virtual Address,Maximum Virtual Address",
                     lambda rng: [f"{rng.uniform(0, 99):.3f},{rng.uniform(0, 99):.3f},{rng.randint(0, 999)},"
                                  f"{rng.randint(0, 999)},0x7f0000000000,0x7fff00000000"]),
    "um_cpu_page_faults_sum": ("CPU Page Faults,CPU Instruction Address",
                               lambda rng: [f"{rng.randint(1, 99)},0x{rng.randrange(16**8):08x}"
                                            for _ in range(rng.randint(1, 3))]),
}


def _sweep(rng: random.Random, n: int, kinds: list[list[str]] | None = None) -> list[str]:
    """n runs of the plain shape, as lines; each run's reports one of `kinds` (else of RUNS[:1] or RUNS)."""
    kinds = kinds or rng.choice([RUNS[:1], RUNS])
    lines = []
    for run in range(n):
        lines.append(f"Generating SQLite file run{run}.sqlite from run{run}.nsys-rep")
        for report in rng.choice(kinds):
            header, rows = UNREAD[report] if report in UNREAD else (HEADERS[report], lambda rng: _table(rng, report))
            lines += [f"Processing [run{run}.sqlite] with [/opt/nsys/reports/{report}.py]...", "", header]
            lines += rows(rng) + [""]
    return lines


def _rows_at(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln[:1].isdigit()]


def _set_cell(rng: random.Random, lines: list[str], j: int, value: str) -> None:
    set_cell(rng, lines, _rows_at(lines), j, value)


STRAY = ["some output of the app", "", "==1== NVPROF is profiling process 1, command: ./a", "Running ./a --bs 4",
         "accuracy 0.91", "$ nsys stats a.nsys-rep", "==PROF== Connected to process 1", "Generating SQLite file x",
         HEADERS["cuda_api_sum"], "Processing [a.sqlite] with [/r/reports/nvtx_sum.py]...", "   ", "Time(%),Time,Calls,"]


def _mutate(rng: random.Random, lines: list[str]) -> None:  # noqa: C901  (one branch a kind of change)
    """One random change the fast path must leave to the readers (or read as they read it)."""
    k = rng.randrange(len(lines))
    what = rng.randrange(13)
    if mutate_lines(rng, lines, k, what, '",.0123456789 \t*<&|=\r#\u00e9%\\', STRAY):  # what 0 to 4
        return
    if what == 5:  # Time(%) that does not add up
        _set_cell(rng, lines, 0, rng.choice(["1.0", "99.0", "150.0", "0", "100.0", "3.5"]))
    elif what == 6:  # a total that is not calls x average
        _set_cell(rng, lines, 1, rng.choice(["1", "99999999999", "1e3", "-1", "1.5"]))
    elif what == 7:  # another report
        at = [i for i, ln in enumerate(lines) if ln.startswith("Processing")]
        i = rng.choice(at)
        lines[i] = lines[i].replace("/reports/", "/reports/" + rng.choice(["x", "nvtx_sum.py]...#", ""]), 1).replace(
            "cuda_api_sum", rng.choice(["cuda_gpu_kern_sum", "cuda_gpu_mem_size_sum", "cudaapisum"]))
    elif what == 8:  # a header of another form
        at = [i for i, ln in enumerate(lines) if ln.startswith(("Time (%)", "Total (MB)"))]
        i = rng.choice(at)
        lines[i] = rng.choice([lines[i].replace(",Med (ns)", ""), lines[i].replace("Time (%)", "Time(%)"),
                               lines[i] + ",Style", lines[i].replace("Name", "Range"), lines[i] + " ",
                               lines[i].replace(",Med (MB)", ""), lines[i].replace(" (MB)", " (KiB)"),
                               lines[i].replace("Operation", "Name"), lines[i].replace("Count", "Operations"),
                               lines[i].replace(",Style", ""), lines[i].replace("Style,Range", "Range,Style")])
    elif what == 9:  # a run's first line of another form
        at = [i for i, ln in enumerate(lines) if ln.startswith("Generating")]
        i = rng.choice(at)
        lines[i] = rng.choice([lines[i] + " ", "Generating '/tmp/nsys-report-1.qdstrm'", lines[i].replace("run", "Running"),
                               lines[i].replace("SQLite", "sqlite"), "Generating SQLite file a b.sqlite from c"])
    elif what == 10:  # a number of another form
        _set_cell(rng, lines, rng.choice([2, 3, 4, 5, 6, 7]), rng.choice(["1.5", "", "1e5", " 2", "524.288", "1,234",
                                                                         "12345678901234567890", "inf"]))
    elif what == 11:  # a name of another form
        i = rng.choice(_rows_at(lines))
        lines[i] = lines[i][: lines[i].rindex(",") + 1] + rng.choice(
            ["", " k", "k ", "a%b", "<br>k", "a|b", "k\u00e9", "a&amp;b", "x" * 300, "a\\b", "Running", '"q"x', "NVPROF"])
    else:  # two tables of one section in a run
        at = [i for i, ln in enumerate(lines) if ln.startswith("Processing") and "cuda_api_sum" in ln]
        if at:
            lines[rng.choice(at)] = lines[at[0]].replace("cuda_api_sum", "osrt_sum")


small = FAST.small((nsys.STREAM,), CHUNK=6000, PART=9000)  # the fixture: a sweep read in several windows, chunks, parts


@pytest.mark.parametrize("seed", range(48))
def test_the_fast_path_gives_what_the_readers_give(seed, tmp_path, monkeypatch, small):
    rng = random.Random(seed)
    lines = _sweep(rng, rng.randint(30, 90))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 10)
    if not mutations:
        got = nsys_csv_sweep.read(str(path), str(path))
        assert got is not None, "a plain sweep is read by the fast path"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
        assert all(p is not None for p, _, _ in nsys_csv_sweep.parts(str(path), str(path)))
    FAST.assert_library_same(path, monkeypatch)


def test_the_read_buffer_is_kept_and_a_shorter_file_read_through_it_to_its_own_end(tmp_path, monkeypatch, small):
    rng = random.Random(5)
    (tmp_path / "long").mkdir()
    (tmp_path / "short").mkdir()
    long = write_lines(tmp_path / "long", _sweep(rng, 90))
    FAST.assert_buffer_kept(long, write_lines(tmp_path / "short", _sweep(rng, 7)), monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_the_cli_writes_what_it_writes_from_the_readers(seed, tmp_path, monkeypatch, small):
    rng = random.Random(100 + seed)
    lines = _sweep(rng, 60)
    if seed >= 3:  # a change in a later part: the windows read on from there
        at = len(lines) * 3 // 4
        lines.insert(at + rng.randrange(20), "some output of the app")
    FAST.assert_cli_same(write_lines(tmp_path, lines), monkeypatch)


# `nsys stats`'s default reports: a run's kernels and memory operations, one section (gpu) the core merges
MERGING = [["cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "osrt_sum"],
           ["cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum"], ["cuda_api_sum"]]
# the default reports of a run that copies memory: its memory-size table too (gpu-memory-size: not ranked)
SIZED = [["osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"],
         ["cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"], ["cuda_api_sum"],
         ["nvtx_sum", "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"],
         ["nvtx_sum", "cuda_gpu_kern_sum"],  # (and an app's NVTX ranges: nvtx_sum, its Style cell before the name)
         ["osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "openacc_sum"]]  # (an OpenACC app's: openacc_sum)


def _merging_sweep(rng: random.Random, n: int) -> list[str]:
    return _sweep(rng, n, MERGING)


@pytest.mark.parametrize("seed", range(24))
def test_runs_whose_kernels_and_memory_operations_merge(seed, tmp_path, monkeypatch, small):
    """Runs of the default reports: each run's kernel and memory-operation tables one gpu table (the
    note the core gives it), read by the fast path as the readers read them; mutated from seed 8 on."""
    rng = random.Random(200 + seed)
    lines = _merging_sweep(rng, rng.randint(20, 60))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 8)
    if not mutations:
        got = nsys_csv_sweep.read(str(path), str(path))
        assert got is not None, "a plain sweep is read by the fast path"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
    FAST.assert_library_same(path, monkeypatch)
    if seed % 6 == 0:
        FAST.assert_cli_same(path, monkeypatch)


def _nsys2025(lines: list[str]) -> list[str]:
    """The lines as nsys 2025 prints them: a blank after a status line's dots (or not) and no blank
    line after it, each run's first and last reports SKIPPED (no NVTX ranges, no OpenMP)."""
    out: list[str] = []
    run = ""  # the last run's database
    nvtx = {k: "/nvtx_sum.py]" in ln for k, ln in enumerate(lines)}
    for k, ln in enumerate(lines):
        if out and out[-1].startswith("Processing [") and out[-1].endswith("... ") and ln == "":
            continue  # the blank line after a status line
        if ln.startswith("Processing ["):
            ln += " "
        if ln.startswith("Generating SQLite file ") and out:  # the run before: its last report had nothing
            out += [f"Processing [{run}] with [/opt/nsys/reports/openmp_sum.py]...",
                    f"SKIPPED: {run} does not contain OpenMP event data.", ""]
        out.append(ln)
        if ln.startswith("Generating SQLite file ") and not nvtx.get(k + 1):  # (a run with NVTX ranges: its table)
            run = ln.split()[3]
            out += [f"Processing [{run}] with [/opt/nsys/reports/nvtx_sum.py]... ",
                    f"SKIPPED: {run} does not contain NV Tools Extension (NVTX) data.", ""]
        elif ln.startswith("Generating SQLite file "):
            run = ln.split()[3]
    return out + [f"Processing [{run}] with [/opt/nsys/reports/openmp_sum.py]... ",
                  f"SKIPPED: {run} does not contain OpenMP event data.", ""]


@pytest.mark.parametrize("seed", range(24))
def test_sweeps_as_nsys_2025_prints_them(seed, tmp_path, monkeypatch, small):
    """nsys 2025's status lines (a blank after the dots, no blank line after them) and SKIPPED reports
    (tests/data/nsys-csv/chukonu-mineru-nsys-stats-csv-osrt-only.log): read by the fast path as the
    readers read them, the same profiles' lines; mutated from seed 8 on."""
    rng = random.Random(300 + seed)
    lines = _nsys2025(_sweep(rng, rng.randint(20, 60), MERGING if seed % 2 else None))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 8)
    if not mutations:
        got = nsys_csv_sweep.read(str(path), str(path))
        assert got is not None, "a plain sweep is read by the fast path"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
    whole, _ = FAST.assert_library_same(path, monkeypatch)
    if not mutations:
        assert [(p.line_start, p.line_end) for p in whole.profiles][:1] == [(1, whole.profiles[1].line_start - 5)]
    if seed % 6 == 0:
        FAST.assert_cli_same(path, monkeypatch)


@pytest.mark.parametrize("seed", range(24))
def test_runs_with_their_memory_sizes(seed, tmp_path, monkeypatch, small):
    """Runs of the default reports of an app that copies memory and marks NVTX ranges (nsys 2025's shape
    from seed 12 on): a memory-size table (another header, MB, no times: bytes and calls, not ranked)
    and an NVTX one (a Style cell before the range's name, left out) read by the fast path as the
    readers read them; mutated from seed 6 on (seeds 12-17 too)."""
    rng = random.Random(400 + seed)
    lines = _sweep(rng, rng.randint(20, 60), SIZED)
    if seed >= 12:
        lines = _nsys2025(lines)
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 6 or 12 <= seed < 18)
    if not mutations:
        got = nsys_csv_sweep.read(str(path), str(path))
        assert got is not None, "a plain sweep is read by the fast path"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
        basis = got.rows.cols["share_basis"]
        assert isinstance(basis, Runs) and set(basis.values) == {"total_ns", None}, "a value a run of blocks"
        assert len(basis.values) < len(basis) / 4
    FAST.assert_library_same(path, monkeypatch)
    if seed % 6 == 0:
        FAST.assert_cli_same(path, monkeypatch)


def test_share_basis_a_value_a_run_of_blocks_alike():
    """share_basis where some blocks are not ranked: "total_ns" or None a run of blocks alike, as many
    rows as the blocks hold."""
    import numpy as np

    from profconv.parse.sweep_rows import _basis_runs

    got = _basis_runs(np.array([0, 3, 5, 6, 10], dtype=np.int64), np.array([0, 0, 1, 1, 0], dtype=bool), 12)
    assert got.values == ["total_ns", None, "total_ns"] and got.sizes.tolist() == [5, 5, 2]
    assert list(got) == ["total_ns"] * 5 + [None] * 5 + ["total_ns"] * 2
    assert list(_basis_runs(np.array([0], dtype=np.int64), np.array([1], dtype=bool), 4)) == [None] * 4


def test_a_memory_size_tables_rows(tmp_path):
    run = ["Generating SQLite file a.sqlite from a.nsys-rep",
           "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_time_sum.py]...", "",
           HEADERS["cuda_gpu_mem_time_sum"], "100.0,600,6,100.0,100.0,90,110,10.0,[CUDA memcpy HtoD]", "",
           "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_size_sum.py]...", "",
           HEADERS["cuda_gpu_mem_size_sum"], "402.653,48,8.389,8.389,8.389,8.389,0.000,[CUDA memcpy Host-to-Device]",
           "201.327,24,8.389,8.389,8.389,8.389,0.000,[CUDA memcpy Device-to-Host]", ""]
    path = write_lines(tmp_path, run * 2)
    ps = nsys_csv_sweep.read(str(path), "s")
    assert ps is not None and ps.notes == []
    rows = ps.profile(2).rows
    assert list(zip(rows.col("section"), rows.col("calls"), rows.col("bytes"), rows.col("share"), rows.col("in_top"),
                    rows.col("share_basis"), rows.col("table"), rows.col("line_start"))) == [
        ("gpu", 6, pytest.approx(float("nan"), nan_ok=True), 1.0, True, "total_ns", 17, 17),
        ("gpu-memory-size", 48, 402653000.0, pytest.approx(float("nan"), nan_ok=True), None, None, 22, 22),
        ("gpu-memory-size", 24, 201327000.0, pytest.approx(float("nan"), nan_ok=True), None, None, 22, 23)]
    assert all(t != t for t in rows.col("total_ns")[1:]) and all(t != t for t in rows.col("time_pct")[1:])
    undecided = [ln.replace("0.000,", "8.389,") for ln in run]  # no cell says which mark is the decimal one
    assert nsys_csv_sweep.read(str(write_lines(tmp_path, undecided * 2)), "s") is None


# a kernels row's Min, Max and StdDev cells (not among the checked Time(%), total, calls and average): each
# read as float() reads it (cells of 16 digits or more by the slow path), or a cell the C pass leaves
LONG_CELLS = [("1234567.123456789", "2", "3.5", True),  # 16 digits: float() of the text
              ("12345678901234567890", "99999999999999999999.5", "0.1000000000000000055511151231257827", True),
              ("0.000", "007", "1.", False),  # a '.' with no digit after it
              ("1e3", "2", "3", False), ("-1", "2", "3", False), ("1", "2", ".5", False)]


@pytest.mark.parametrize("low, high, std, taken", LONG_CELLS)
def test_a_rows_cells_of_many_digits_or_another_form(low, high, std, taken, tmp_path, monkeypatch, small):
    """Each number cell is split and read in one pass (nsys_sweep's ns_values): one of 16 digits or more
    (beyond the exact fast path) read as float() reads its text, one the readers' reading would not give
    left to them; the output is the readers' either way."""
    run = ["Generating SQLite file a.sqlite from a.nsys-rep",
           "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]...", "",
           HEADERS["cuda_gpu_kern_sum"], f"75.0,600,2,300.0,300.0,{low},{high},{std},k1",
           "25.0,200,1,200.0,200.0,200,200,0.0,k2", ""]
    path = write_lines(tmp_path, run * 20)  # (past the stream's 4 KiB: read by the fast path)
    data = path.read_bytes()
    assert (nsys_csv_sweep._swept(data, len(data)) is not None) == taken, "the C pass itself"
    FAST.assert_library_same(path, monkeypatch)
    if taken:
        rows = nsys_csv_sweep.read(str(path), str(path)).profile(2).rows
        assert rows.col("min_ns")[0] == float(low) and rows.col("max_ns")[0] == float(high)
        assert rows.col("std_ns")[0] == float(std) and list(rows.col("calls")[:2]) == [2, 1]


NVTX_RUN = ["Generating SQLite file a.sqlite from a.nsys-rep",
            "Processing [a.sqlite] with [/opt/nsys/reports/nvtx_sum.py]... ", HEADERS["nvtx_sum"],
            "70.0,700,1,700.0,700.0,700,700,0.0,PushPop,:conv_forward", '30.0,300,3,100.0,100.0,90,110,10.0,StartEnd,"a, b"',
            "", "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... ", HEADERS["cuda_gpu_kern_sum"],
            "100.0,600,2,300.0,300.0,290,310,10.0,k1", ""]


@pytest.mark.parametrize("style, taken", [("PushPop", True), ("", False), ("Push Pop", False), ("P1", False),
                                          ('"PushPop"', False)])
def test_an_nvtx_tables_style_cell(style, taken, tmp_path, monkeypatch, small):
    """An NVTX report's rows (`nsys stats`'s nvtx_sum: Time(%) ... StdDev, Style, Range): the Style left out
    and the range its name, as the readers read them; a Style that is not letters left to the readers."""
    lines = [ln.replace(",PushPop,", f",{style},") for ln in NVTX_RUN] * 3
    path = write_lines(tmp_path, lines)
    ps = nsys_csv_sweep.read(str(path), str(path))
    assert (ps is not None) == taken
    whole, _ = FAST.assert_library_same(path, monkeypatch)
    if taken:
        rows = ps.profile(2).rows
        assert list(zip(rows.col("section"), rows.col("name"), rows.col("calls"), rows.col("share"), rows.col("line_start"))) == [
            ("nvtx", ":conv_forward", 1, 0.7, 14), ("nvtx", "a, b", 3, 0.3, 15), ("gpu", "k1", 2, 1.0, 19)]


def test_an_openacc_report(tmp_path, monkeypatch, small):
    """An OpenACC app's openacc_sum (the nine fields; 'Name' a construct and its source line): the
    openacc section, ranked, as the readers read it."""
    run = ["Generating SQLite file a.sqlite from a.nsys-rep",
           "Processing [a.sqlite] with [/opt/nsys/reports/openacc_sum.py]... ", HEADERS["openacc_sum"],
           "60.0,600,2,300.0,300.0,290,310,10.0,Compute Construct@main.c:20", "40.0,400,1,400.0,400.0,400,400,0.0,Wait@main.c:31",
           ""]
    path = write_lines(tmp_path, run * 3)
    ps = nsys_csv_sweep.read(str(path), str(path))
    assert ps is not None
    rows = ps.profile(3).rows
    assert list(zip(rows.col("section"), rows.col("name"), rows.col("share"), rows.col("line_start"))) == [
        ("openacc", "Compute Construct@main.c:20", 0.6, 16), ("openacc", "Wait@main.c:31", 0.4, 17)]
    FAST.assert_library_same(path, monkeypatch)


def test_a_real_nsys_2025_log_repeated_as_a_sweep(tmp_path, monkeypatch, small):
    """tests/data/nsys-csv/chukonu-mineru-nsys-stats-csv-osrt-only.log (nsys 2025.1: a blank after the
    dots or not, no blank line after a status line, fifteen reports SKIPPED, dx11/dx12 in report names)
    30 times over: read by the fast path as the readers read it."""
    one = (DATA / "nsys-csv" / "chukonu-mineru-nsys-stats-csv-osrt-only.log").read_text()
    path = tmp_path / "sweep.log"
    path.write_text("".join(one.replace("pipeline_nsys", f"pipeline_nsys{k}") for k in range(30)))
    assert nsys_csv_sweep.read(str(path), str(path)) is not None
    whole, _ = FAST.assert_library_same(path, monkeypatch)
    assert [(p.line_start, p.line_end) for p in whole.profiles][:2] == [(1, 67), (123, 189)]
    assert whole.rows.n == 30 * 61
    FAST.assert_cli_same(path, monkeypatch)


def test_a_merged_runs_note_and_shares(tmp_path):
    head = [HEADERS["cuda_gpu_kern_sum"], HEADERS["cuda_gpu_mem_time_sum"]]
    run = ["Generating SQLite file a.sqlite from a.nsys-rep",
           "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]...", "", head[0],
           "75.0,300,3,100.0,100.0,90,110,10.0,k1", "25.0,100,1,100.0,100.0,90,110,10.0,k2", "",
           "Processing [a.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_time_sum.py]...", "", head[1],
           "100.0,600,6,100.0,100.0,90,110,10.0,[CUDA memcpy HtoD]", ""]
    path = write_lines(tmp_path, run * 2)
    ps = nsys_csv_sweep.read(str(path), "s")
    assert ps is not None and ps.notes == [
        f"profile {p}, gpu table, lines {a}-{a + 6}: merged from 2 source tables (starting at lines {a}, {a + 6}); "
        "each printed Time(%) is relative to its own table, Share is of their summed time" for p, a in ((1, 5), (2, 17))]
    rows = ps.profile(1).rows
    assert list(zip(rows.col("name"), rows.col("share"), rows.col("cumulative"), rows.col("table"))) == [
        ("k1", 0.3, 0.6 + 0.3, 5), ("k2", 0.1, 1.0, 5), ("[CUDA memcpy HtoD]", 0.6, 0.6, 11)]


def test_a_later_odd_run_leaves_the_parts_before_it_to_the_fast_path(tmp_path, monkeypatch, small):
    lines = _sweep(random.Random(5), 60)
    at = [i for i, ln in enumerate(lines) if ln.startswith("Generating")][45]
    lines.insert(at + 1, "some output of the app")
    path = write_lines(tmp_path, lines)
    got = list(nsys_csv_sweep.parts(str(path), str(path)))
    assert got[0][0] is not None and got[-1][0] is None
    assert nsys_csv_sweep.read(str(path), str(path)) is None


def test_an_empty_or_unended_file_is_left_to_the_readers(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert nsys_csv_sweep.read(str(empty), "x") is None
    assert list(nsys_csv_sweep.parts(str(empty), "x")) == [(None, 0, 1)]
    one = tmp_path / "one.log"
    one.write_text("\n".join(_sweep(random.Random(1), 3)))  # no newline after the last table
    assert nsys_csv_sweep.read(str(one), "x") is None


# the default reports of an app on unified memory: its um_* reports after the others (noted, not read); a
# run's um_* report between two of its tables, or before its first: left to the readers (what they give)
UM = [SIZED[0] + ["um_sum", "um_total_sum", "um_cpu_page_faults_sum"], SIZED[3] + ["um_total_sum"],
      ["cuda_gpu_kern_sum", "um_cpu_page_faults_sum"], ["cuda_api_sum"]]
UM_ODD = [["cuda_gpu_kern_sum", "um_sum", "cuda_gpu_mem_time_sum"], ["um_total_sum", "cuda_api_sum"]]


@pytest.mark.parametrize("seed", range(24))
def test_runs_of_an_app_on_unified_memory(seed, tmp_path, monkeypatch, small):
    """The reports profconv does not read (um_sum, um_total_sum, um_cpu_page_faults_sum: a note each naming
    the table's lines) read by the fast path as the readers read them: the same rows and notes, all those
    notes before the merged tables' (the whole read's order, also from the parts: stream.whole_notes); a
    run holding one between its tables, or before its first (seeds 16 on), left to the readers; mutated
    from seed 8 on. Before: such a sweep was read by the readers alone (a 20 MB sweep 6 s, 10 bytes a byte)."""
    from profconv.parse import stream

    rng = random.Random(400 + seed)
    lines = _sweep(rng, rng.randint(20, 60), UM + (UM_ODD if seed >= 16 else []))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 8 or seed >= 16)
    if not mutations and seed < 16:
        ps = nsys_csv_sweep.read(str(path), str(path))
        assert ps is not None, "a plain sweep is read by the fast path"
        assert ps.lead > 0 and all(" is not read: " in n for n in ps.notes[: ps.lead])
        assert all(n.startswith("profile ") for n in ps.notes[ps.lead :])
    whole, ref = FAST.assert_library_same(path, monkeypatch)
    assert whole.lead == ref.lead
    _, parts = FAST.parsed(path, True, monkeypatch)
    assert stream.whole_notes([(p.notes, p.lead) for p in parts], []) == ref.notes  # (a damaged row's: a lead note)
    if seed % 4 == 0:
        FAST.assert_cli_same(path, monkeypatch)


def _last(text: str, old: str, new: str) -> str:
    """`text` with its last `old` made `new`."""
    at = text.rindex(old)
    return text[:at] + new + text[at + len(old) :]


@pytest.mark.parametrize("change, taken", [
    (lambda t: t, True),
    (lambda t: t.replace("CPU Page Faults,CPU", "CPU Page Faults, CPU"), False),  # ', ': the readers do not note it
    (lambda t: t.replace("CPU Page Faults,CPU", "CPU  Page Faults,CPU"), False),
    (lambda t: t.replace(",0x1f", ",0x1f%"), False),  # '%': nvprof's detect looks around it
    (lambda t: t.replace(",0x1f", ",Generating x"), False),  # a run's line in its rows
    (lambda t: t.replace("36,0x1f", "36 0x1f"), False),  # a row without a comma ends the table
    (lambda t: t.replace("CPU Page Faults,CPU Instruction Address", "CPU Page Faults Summary,X"), False),
    (lambda t: t.replace("um_cpu_page_faults_sum", "um_new_sum"), False),  # a report not in nsys.NOT_READ
    (lambda t: t.replace("Address\n36", "Address\n\n36"), False),  # a blank line inside: rows left over
    # the header found good in the first runs, another one in the last run (checked anew, not taken for the first)
    (lambda t: _last(t, "CPU Page Faults,CPU", "CPU Page Faults,CPU (sum)"), True),
    (lambda t: _last(t, "CPU Page Faults,CPU", "CPU Page Faults,Summary CPU"), False),
    (lambda t: _last(t, "CPU Page Faults,CPU", "CPU Page Faults,CPU*"), False),
    # a row's 'G' or 'P' not starting a run's or a report's line; rows past sixteen bytes, a bad byte at their end
    (lambda t: _last(t, ",0x1f", ",GPU Processing 0x1f"), True),
    (lambda t: _last(t, ",0x1f", ",Processing [x"), False),
    (lambda t: _last(t, ",0x2e", ",0x2e" + "0" * 40), True),
    (lambda t: _last(t, ",0x2e", ",0x2e" + "0" * 40 + "\x7f"), False),
    (lambda t: _last(t, ",0x2e", ",0x2e" + "0" * 13 + "Generating 0"), False),
    # a row's comma only past its first sixteen bytes; none in a row whose next row's comma is in the same
    # sixteen bytes (the bytes past the row's newline masked)
    (lambda t: _last(t, "4,0x2e", "4" + "0" * 30 + ",0x2e"), True),
    (lambda t: _last(t, "4,0x2e", "4 0x2e"), False),
    (lambda t: _last(t, "36,0x1f\n4", "36 0x1f\n4"), False),
])
def test_a_not_read_table_the_fast_path_steps_over_or_leaves(change, taken, tmp_path, monkeypatch, small):
    run = ("Generating SQLite file r{k}.sqlite from r{k}.nsys-rep\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n" + HEADERS["cuda_gpu_kern_sum"]
           + "\n100.0,300,3,100.0,100.0,90,110,10.0,k\n\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/um_cpu_page_faults_sum.py]... \n\n"
           "CPU Page Faults,CPU Instruction Address\n36,0x1f\n4,0x2e\n\n")
    path = tmp_path / "um.log"
    path.write_text(change("".join(run.format(k=k) for k in range(3))))
    ps = nsys_csv_sweep.read(str(path), str(path))
    assert (ps is not None) == taken
    if taken:
        assert [n.split(" (")[0] for n in ps.notes[: ps.lead]] == [
            f"lines {a}-{a + 2}: nsys report um_cpu_page_faults_sum" for a in (8, 19, 30)]
    FAST.assert_library_same(path, monkeypatch)


UM_RUNS = ("Generating SQLite file r{k}.sqlite from r{k}.nsys-rep\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n" + HEADERS["cuda_gpu_kern_sum"]
           + "\n100.0,300,3,100.0,100.0,90,110,10.0,k\n\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/um_cpu_page_faults_sum.py]... \n\n"
           "CPU Page Faults,CPU Instruction Address\n36,0x1f\n4,0x2e\n\n")


@pytest.mark.parametrize("change, found", [
    (lambda t: t, False),
    (lambda t: t.replace(",0x1f", ",Running 0x1f", 1), True),  # a not-read table's row between two runs' tables
    (lambda t: _last(t, ",0x2e", ",0x2e Running"), True),  # ... in the one after the last table (the chunk's tail)
    (lambda t: t.replace("CPU Instruction Address", "Op Time", 1), True),  # its header
    (lambda t: t.replace("r1.sqlite", "Running1.sqlite"), True),  # a run's Generating and Processing lines
    (lambda t: t.replace("r1.sqlite", "Runnin.sqlite"), False),
    (lambda t: _last(t, "0x2e\n", "0x2eRunnin\n"), False),  # a needle's head at the tail's end
])
@pytest.mark.parametrize("needles", ["c", "python", "older build"])
def test_the_c_pass_looks_in_the_gaps_as_find_any_does(change, found, needles, tmp_path, monkeypatch):
    """nsys_sweep looks for the stream's markers and context keywords (_gap_needles) in the gaps between the
    tables as it walks them: what it says is what _kahan.find_any says over the gaps' ranges, and a chunk with
    one there is left to the readers. Needles find_any leaves to Python (not ASCII) and a build without
    NSYS_SWEEP_NEEDLES: the gaps looked in after the pass, as before."""
    seen = []
    real = nsys_csv_sweep._skeleton_ok

    def spy(between, heads, names, data=None, said=None):
        seen.append((said, nsys_csv_sweep._in_ranges(data, between, nsys_csv_sweep._gap_needles())))
        return real(between, heads, names, data, said)

    monkeypatch.setattr(nsys_csv_sweep, "_skeleton_ok", spy)
    if needles == "python":
        monkeypatch.setattr(nsys_csv_sweep, "_gap_needles", lambda: ("Running", "Op Time", "caf\u00e9"))
    data = change("".join(UM_RUNS.format(k=k) for k in range(3))).encode()
    with _built_without(monkeypatch, "NSYS_SWEEP_NEEDLES") if needles == "older build" else contextlib.nullcontext():
        got = nsys_csv_sweep._swept(data, len(data))
    assert seen == [(found if needles == "c" else None, found)]
    assert (got is None) == found


@contextlib.contextmanager
def _built_without(monkeypatch, function: str):
    """The sweep's module as with a build of _summarycells older than `function` (it lacks it)."""
    load = native.load
    scan = load("_summarycells")

    class Older:
        def __getattr__(self, name):
            if name == function:
                raise AttributeError(name)
            return getattr(scan, name)

    with monkeypatch.context() as m:
        m.setattr(nsys_csv_sweep.native, "load", lambda name: Older() if name == "_summarycells" else load(name))
        yield


def _merged_notes_in_python(monkeypatch, *args):
    """_merged_notes as a build without _summarycells.merged_notes makes them."""
    with _built_without(monkeypatch, "merged_notes"):
        return nsys_csv_sweep._merged_notes(*args)


@pytest.mark.parametrize("case", ["two", "three", "one key twice"])
def test_the_merged_groups_notes_made_in_c_are_pythons(case, monkeypatch):
    """The merged groups' notes (`_merged_notes`): the C pass gives the Python loop's notes and table
    notes, in order, the table notes a GroupNotes over the notes (no dict, list or key a group); two
    groups of one key (never from a sweep: `_twice`) are left to Python, which keeps the last. Where every key
    is once, the notes are made where first read (a MadeNotes), in C or in Python."""
    import numpy as np

    from profconv.parse.group_notes import GroupNotes

    codes = nsys_csv_sweep._CODES
    gpu, api = codes.index("gpu"), codes.index("api")
    q = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    heads = q(5, 11, 20, 31, 40, 52, 60)
    args = {"two": (q(1, 2), q(gpu, gpu), q(5, 31), q(16, 45), heads, q(0, 3), q(2, 2)),
            "three": (q(7, 12), q(gpu, api), q(5, 40), q(30, 70), heads, q(0, 4), q(3, 3)),
            "one key twice": (q(3, 3), q(gpu, gpu), q(5, 31), q(16, 45), heads, q(0, 3), q(2, 2))}[case]
    notes, table_notes = nsys_csv_sweep._merged_notes(*args)
    if case != "one key twice":  # (made where first read: a library call that only ranks makes none)
        assert len(notes) == len(table_notes) == 2 and not notes.made()
    assert (notes, table_notes) == _merged_notes_in_python(monkeypatch, *args)
    tail = "; each printed Time(%) is relative to its own table, Share is of their summed time"
    expected = {"two": [(1, "gpu", "lines 5-16: merged from 2 source tables (starting at lines 5, 11)"),
                        (2, "gpu", "lines 31-45: merged from 2 source tables (starting at lines 31, 40)")],
                "three": [(7, "gpu", "lines 5-30: merged from 3 source tables (starting at lines 5, 11, 20)"),
                          (12, "api", "lines 40-70: merged from 3 source tables (starting at lines 40, 52, 60)")],
                "one key twice": [(3, "gpu", "lines 31-45: merged from 2 source tables (starting at lines 31, 40)")]}[case]
    assert table_notes == {(p, s): [t + tail] for p, s, t in expected}
    assert notes == [f"profile {p}, {s} table, {t}{tail}" for p, s, t in expected]
    assert isinstance(table_notes, GroupNotes) == (case != "one key twice")


def test_the_not_read_tables_notes_made_in_c_are_pythons(monkeypatch):
    """The not-read tables' notes (`_unread_notes`, three a run of an app on unified memory): the C pass
    (`line_notes`) gives the Python loop's, in order, numbers of every width (two digits a step) and signs;
    none, and a text that is not ASCII (left to Python), too."""
    import numpy as np

    scan = native.load("_summarycells")
    cpu, total = (nsys_csv_sweep._UNREAD_NAMES.index(r) for r in (b"um_cpu_page_faults_sum", b"um_total_sum"))
    spans = np.array([(1, 3, cpu), (9, 10, total), (99, 100, 0), (12345, 123456, cpu), (10**17, 10**18 + 7, total),
                      (-7, 2**63 - 1, 0)], dtype=np.int64)
    said = nsys_csv_sweep._unread_notes(spans)
    assert said[:2] == [
        "lines 1-3: nsys report um_cpu_page_faults_sum (unified memory CPU page faults) is not read: profconv ranks the per-name "
        "summaries (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, osrt_sum, nvtx_sum)",
        "lines 9-10: nsys report um_total_sum (unified memory totals) is not read: profconv ranks the per-name "
        "summaries (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, osrt_sum, nvtx_sum)"]
    assert [n.split(":")[0] for n in said] == ["lines 1-3", "lines 9-10", "lines 99-100", "lines 12345-123456",
                                               "lines 100000000000000000-1000000000000000007",
                                               "lines -7-9223372036854775807"]

    with _built_without(monkeypatch, "line_notes"):
        assert nsys_csv_sweep._unread_notes(spans) == said
        assert nsys_csv_sweep._unread_notes(np.empty((0, 3), dtype=np.int64)) == []
    assert nsys_csv_sweep._unread_notes(np.empty((0, 3), dtype=np.int64)) == []
    assert scan.line_notes(spans[:1].tobytes(), ("caf\u00e9",)) is None
    with pytest.raises(ValueError):
        scan.line_notes(spans[:1].tobytes()[:-8], ("x",))
    with pytest.raises(ValueError):
        scan.line_notes(spans.tobytes(), ("x",))  # (a text's index past the texts)


@pytest.mark.parametrize("where", ["gaps", "across", "head", "none"])
def test_a_keyword_between_the_tables_or_across_into_a_header_leaves_the_chunk(where):
    """_skeleton_ok looks for the stream's markers and context keywords in the gaps (as bytes, no str
    made of them), the headers and across the seam between them, as in their text joined."""
    from profconv.parse import context

    kw = context.KEYWORDS[0]
    head = HEADERS["cuda_api_sum"].encode()
    between = {"gaps": b"Processing [a] " + kw.encode() + b" x\n", "across": b"Processing [a]\n" + kw[:2].encode(),
               "head": b"Processing [a]\n", "none": b"Processing [a]\n"}[where]
    heads = [kw[2:].encode() + head] if where == "across" else [head + kw.encode()] if where == "head" else [head]
    assert nsys_csv_sweep._skeleton_ok(between, heads, ["cudaMalloc"]) is (where == "none")


# where nsys writes its databases and keeps its report scripts on Windows: a drive, '\' separators (or '/'),
# blanks, parentheses, 8.3 short names, a share
WINDOWS_DIRS = ["C:\\Users\\me\\", "D:\\My Runs (x86)\\lab 3\\", "C:/Users/me/", "\\\\server\\share\\runs\\",
                "C:\\PROGRA~1\\", ""]
WINDOWS_SCRIPTS = ["C:\\Program Files\\NVIDIA Corporation\\Nsight Systems 2024.6.2\\target-windows-x64\\reports\\",
                   "C:\\PROGRA~1\\NVIDIA~1\\NSIGHT~1\\reports\\",
                   "C:/Program Files/NVIDIA Corporation/Nsight Systems 2025.1.1/target-windows-x64/reports/"]


def _on_windows(rng: random.Random, lines: list[str], folder: str | None = None, script: str | None = None) -> list[str]:
    """The sweep's lines with its paths as nsys prints them on Windows (a folder of WINDOWS_DIRS before each
    database, a script folder of WINDOWS_SCRIPTS, or those given)."""
    folder = rng.choice(WINDOWS_DIRS) if folder is None else folder
    script = rng.choice(WINDOWS_SCRIPTS) if script is None else script
    out = []
    for ln in lines:
        if ln.startswith("Generating SQLite file "):
            db, rep = ln[len("Generating SQLite file ") :].split(" from ")
            ln = f"Generating SQLite file {folder}{db} from {folder}{rep}"
        elif ln.startswith("Processing ["):
            ln = ln.replace("Processing [", "Processing [" + folder, 1).replace("/opt/nsys/reports/", script)
        out.append(ln)
    return out


@pytest.mark.parametrize("seed", range(24))
def test_sweeps_with_windows_paths(seed, tmp_path, monkeypatch, small):
    """A sweep run on Windows ('C:\\Users\\me\\run0.sqlite', 'C:\\Program Files\\...\\reports\\cuda_api_sum.py'):
    read by the fast path as the readers read it -- plain, merged, nsys 2025's, with memory sizes and
    unified-memory reports; mutated from seed 12 on. Before, the fast path left any path with a '\\', a ':'
    or a blank to the readers: a 20 MB sweep of the default reports 3.9 s against 0.06 s."""
    rng = random.Random(700 + seed)
    kinds = [None, MERGING, SIZED, UM][seed % 4]
    lines = _sweep(rng, rng.randint(20, 60), kinds)
    lines = _on_windows(rng, _nsys2025(lines) if seed % 3 == 0 else lines)
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 12)
    if not mutations:
        got = nsys_csv_sweep.read(str(path), str(path))
        assert got is not None, "a plain sweep is read by the fast path"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
        assert all(p is not None for p, _, _ in nsys_csv_sweep.parts(str(path), str(path)))
    FAST.assert_library_same(path, monkeypatch)
    if seed % 6 == 0:
        FAST.assert_cli_same(path, monkeypatch)


@pytest.mark.parametrize("folder, script, taken", [
    ("C:\\Users\\me\\", None, True),
    ("C:\\Users\\John Smith\\Documents\\", None, True),
    ("C:\\Users\\me\\two  blanks\\", None, False),  # two blanks: what nsys's text tables put between columns
    ("C:\\Users\\me\\ ", None, True),  # a blank before the file's name
    ("C:\\Statistics\\", None, False),  # a word a reader looks for (a legacy title's)
    ("C:\\Generating SQLite file\\", None, False),  # a run's line's words
    ("C:\\Running\\", None, False),  # a context keyword
    ("C:\\a\\reports\\", None, False),  # the database under a reports folder
    ("C:\\a&b\\", None, False),  # a byte no path of the fast path holds
    ("C:\\a%b\\", None, False),
    ("C:\\caf\u00e9\\", None, False),  # not ASCII
    (None, "C:\\Program Files (x86)\\NVIDIA\\reports\\", True),
    (None, "C:\\x/reports\\", True),  # separators mixed
    (None, "C:\\Summary\\reports\\", False),
    (None, "reports\\", False),  # no folder before 'reports': the readers'
])
def test_a_windows_path_the_fast_path_reads_or_leaves(folder, script, taken, tmp_path, monkeypatch, small):
    rng = random.Random(7)
    lines = _on_windows(rng, _sweep(rng, 12, MERGING), folder or "C:\\Users\\me\\",
                        script or WINDOWS_SCRIPTS[0])
    path = write_lines(tmp_path, lines)
    assert (nsys_csv_sweep.read(str(path), str(path)) is not None) == taken
    FAST.assert_library_same(path, monkeypatch)


def test_a_blank_at_a_windows_paths_end_is_left_to_the_readers(tmp_path, monkeypatch, small):
    rng = random.Random(8)
    lines = [ln.replace(".sqlite]", ".sqlite ]") for ln in _on_windows(rng, _sweep(rng, 12, MERGING), "C:\\a b\\",
                                                                        WINDOWS_SCRIPTS[0])]
    path = write_lines(tmp_path, lines)
    assert nsys_csv_sweep.read(str(path), str(path)) is None
    FAST.assert_library_same(path, monkeypatch)


# (old, new) on one Processing line of a later run, the lines before it as they were: the C pass takes a
# line's database path, or its script's folder, without checking it again where its bytes are the last
# ones taken; a path that starts with those bytes and goes on is checked whole
LATER_PATHS = [
    (".sqlite]", ".sqlite\\Summary]", False),  # the database's path goes on with a word a reader looks for
    (".sqlite]", ".sqlite\\x]", True),
    (".sqlite]", ".sqlite  x]", False),  # two blanks after the bytes taken before
    (".sqlite]", ".sqlite x]", True),
    (".sqlite]", ".sqlite\\reports\\x]", False),  # the database under a reports folder
    ("target-windows-x64\\reports\\", "target-windows-x64\\Summary\\reports\\", False),  # the script's folder goes on
    ("target-windows-x64\\reports\\", "target-windows-x64\\x y\\reports\\", True),
    ("target-windows-x64\\reports\\", "target-windows-x64  \\reports\\", False),
    ("target-windows-x64\\reports\\", "target-windows-x\\reports\\", True),  # a shorter folder, its bytes the same
    ("Nsight Systems 2024.6.2", "Nsight  Systems 2024.6.2", False),
    # '/' separators: the rest of the script's path after the folder taken holds no Windows path's byte,
    # the folder (taken before as a Windows one) does
    ("target-windows-x64/reports/", "target-windows-x64/Summary/reports/", False),
    ("target-windows-x64/reports/", "target-windows-x64/x/reports/", True),
]


def _later_line(lines: list[str]) -> int:
    """A Processing line in the sweep's second half whose database the line before it names too (the
    lines before it taken: that path and the script's folder are the last ones taken there)."""
    at = [i for i, ln in enumerate(lines) if ln.startswith("Processing [")]
    db = [lines[i].split("] with [")[0] for i in at]
    return next(at[k] for k in range(len(at) // 2, len(at)) if db[k] == db[k - 1])


@pytest.mark.parametrize("old, new, taken", LATER_PATHS)
def test_a_later_lines_path_that_differs_from_the_ones_before(old, new, taken, tmp_path, monkeypatch, small):
    rng = random.Random(9)
    script = WINDOWS_SCRIPTS[2 if old.endswith("/") else 0]
    lines = _on_windows(rng, _sweep(rng, 12, MERGING), "C:\\Users\\me\\", script)
    i = _later_line(lines)
    assert old in lines[i]
    lines[i] = lines[i].replace(old, new)
    path = write_lines(tmp_path, lines)
    assert (nsys_csv_sweep.read(str(path), str(path)) is not None) == taken
    data = path.read_bytes()
    assert (nsys_csv_sweep._swept(data, len(data)) is not None) == taken, "the C pass itself, one chunk"
    FAST.assert_library_same(path, monkeypatch)


@pytest.mark.parametrize("new, taken", [("/opt/nsys/x/reports/", True), ("/opt/nsys\\Summary/reports/", False),
                                        ("/opt/nsys/Summary/reports/", True), ("/opt/nsy/reports/", True)])
def test_a_later_lines_script_folder_on_linux(new, taken, tmp_path, monkeypatch, small):
    """The same on Linux paths, where a folder with a Windows path's byte is checked as one."""
    rng = random.Random(10)
    lines = _sweep(rng, 12, MERGING)
    i = _later_line(lines)
    lines[i] = lines[i].replace("/opt/nsys/reports/", new)
    path = write_lines(tmp_path, lines)
    assert (nsys_csv_sweep.read(str(path), str(path)) is not None) == taken
    data = path.read_bytes()
    assert (nsys_csv_sweep._swept(data, len(data)) is not None) == taken
    FAST.assert_library_same(path, monkeypatch)


# (what a later row's name cell holds instead of a name taken on earlier rows, n; whether the C pass takes
# it): the C pass takes a row's name and its code without looking at its bytes again where the cell holds
# the bytes of a name cell taken before, then the row's end
LATER_NAMES = [
    (lambda n: n + "x", True),  # the bytes taken, then more
    (lambda n: n[:8] + "Zq", True),  # the first eight bytes the same
    (lambda n: n + "\r", False),  # the bytes taken, then a carriage return before the newline
    (lambda n: f'"{n}"', True),  # quoted: the same name, a cell of its own
    (lambda n: n + "&x", False),
    (lambda n: n + ",x", False),
    (lambda n: n[:4], True),  # shorter than eight bytes: the next row's bytes within them
    (lambda n: n[:-1] + "\u00e9", False),
]


@pytest.mark.parametrize("case", range(len(LATER_NAMES)))
def test_a_later_rows_name_that_differs_from_one_taken(case, tmp_path, monkeypatch, small):
    change, taken = LATER_NAMES[case]
    rng = random.Random(11)
    lines = _sweep(rng, 12, [["cuda_api_sum"]])
    name = lambda k: lines[k].rsplit(",", 1)[1].strip('"')  # noqa: E731
    rows = _rows_at(lines)
    common = max({name(k) for k in rows}, key=[name(k) for k in rows].count)
    i = [k for k in rows if name(k) == common][-2]  # (rows before it with that name: taken)
    lines[i] = lines[i][: -len(common)] + change(common)
    path = write_lines(tmp_path, lines)
    data = path.read_bytes()
    got = nsys_csv_sweep._swept(data, len(data))
    assert (got is not None) == taken, "the C pass itself, one chunk"
    if got is not None:  # every row's name is its cell's (quotes left out), each distinct name once
        assert [got[2][c] for c in got[1]] == [name(k) for k in rows]
        assert len(set(got[2])) == len(got[2])
    FAST.assert_library_same(path, monkeypatch)


def test_names_alike_but_for_their_middle(tmp_path, monkeypatch, small):
    """Two names of one length whose first and last eight bytes are the same (a template's arguments in
    their middle) share the C pass's slot for names taken: each row's is read whole where the slot holds
    the other, and each keeps its own name."""
    rng = random.Random(12)
    lines = _sweep(rng, 12, [["cuda_api_sum"]])
    rows = _rows_at(lines)
    alike = ["void gemm<float; 128>(float const *; int)", "void gemm<float; 256>(float const *; int)"]
    for n, k in enumerate(rows):
        lines[k] = lines[k].rsplit(",", 1)[0] + "," + alike[(n // 2) % 2]  # two rows of one, two of the other
    path = write_lines(tmp_path, lines)
    data = path.read_bytes()
    got = nsys_csv_sweep._swept(data, len(data))
    assert got is not None
    assert [got[2][c] for c in got[1]] == [alike[(n // 2) % 2] for n in range(len(rows))]
    assert list(got[2]) == alike
    FAST.assert_library_same(path, monkeypatch)


def test_profile_and_section_are_runs_so_the_table_lays_the_runs_out_together(tmp_path, monkeypatch):
    """As for nvprof --csv (tests/test_parse_file_windows.py): a View other than Runs as profile or section is
    an ncu page's to the terminal table, which then draws each profile's tables one by one; a sweep's are Runs
    (a value a run of rows, no list entry a row), which the table lays out together, a run of profiles at once."""
    import io

    from rich.console import Console

    from profconv.parse.colviews import Runs, holds_page_views
    from profconv.render import profile_tables, ranked_text

    path = write_lines(tmp_path, _sweep(random.Random(5), 30))
    whole = nsys_csv_sweep.read(str(path), "sweep")
    parts = [p for p, _, _ in nsys_csv_sweep.parts(str(path), "sweep", 2048)]
    assert whole is not None and (whole.rows.n, len(whole.profiles), len(parts)) == (177, 30, 18) and None not in parts
    sections = list(whole.rows.col("section"))
    assert {k: sections.count(k) for k in set(sections)} == {"api": 69, "gpu": 89, "os-runtime": 19}
    assert [s for p in parts for s in p.rows.col("section")] == sections
    for rows in [whole.rows] + [p.rows for p in parts]:
        assert isinstance(rows.col("profile"), Runs) and isinstance(rows.col("section"), Runs)
        assert not holds_page_views((rows.col("profile"), rows.col("section")))
    laid = []
    blocks = ranked_text.blocks
    monkeypatch.setattr(ranked_text, "blocks", lambda rows, pos, *a: laid.append(len(pos)) or blocks(rows, pos, *a))
    out = io.StringIO()
    profile_tables.render(whole, Console(file=out, width=100), profile_tables.TableOptions())
    assert laid == [177] and out.getvalue().count("Profile ") == 30
    assert out.getvalue().startswith("── Profile 1 · nsys · sweep lines 1-24 ──")
