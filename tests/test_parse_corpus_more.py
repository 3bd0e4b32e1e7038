"""The second real corpus (issue 12): exact values for every file, read with the search tool's read_file.

Each file under tests/data/{acc-time,cudaprof,nvprof-*,nsys-*,ncu-*,pasted,foreign}/ listed in SOURCES.md
"Batch 2" was copied byte for byte from a public repository (repository, path and commit there). The
values below were checked by hand against the lines they come from: times in ns after the printed
unit, calls/avg as printed, the top row and the size of the >=90% set of each ranked section, the
metric rows' unit and value. Files holding no profiler table (a gprof listing, `nvprof --help`,
`ncu --list-sections`, a run that profiled nothing) must give 'no profile found' (exit 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd
import pytest

import profconv
from profconv.analysis.ranking import rank_profile
from profconv.errors import ExitStatus, NoProfileFound
from profconv.parse import validate

DATA = "tests/data/"


@dataclass
class Case:
    path: str
    tools: tuple[str, ...]  # the dialect of each profile, in file order
    rows: int
    unplaced: int
    sections: dict[tuple[int, str], int]  # (profile, section) -> rows
    tops: list[tuple[int, str, str, int]]  # (profile, section, top row's name prefix, rows in the >=90% set)
    # (profile, section, name prefix, total_ns, calls, avg_ns) for timed rows;
    # (profile, section, name prefix, metric, unit, value, value_text) for metric rows;
    # (profile, trace section, line, name prefix, start_ns, total_ns) for trace rows
    checks: list[tuple] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the start of every note, in order


def _num(v) -> float | None:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def _eq(got, want) -> bool:
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


def _row(frame: pd.DataFrame, profile: int, section: str, name: str, metric: str | None = None) -> pd.Series:
    sel = frame[(frame["profile"] == profile) & (frame["section"] == section)]
    exact = sel["name"] == name  # a whole name (cudaGetDevice) before a prefix (cudaGetDeviceProperties)
    sel = sel[exact] if exact.any() else sel[sel["name"].str.startswith(name, na=False)]
    if metric is not None:
        sel = sel[sel["metric"] == metric]
    assert len(sel) >= 1, (profile, section, name, metric)
    return sel.iloc[0]


def check_no_profile(path: str, cli) -> str:
    """A test file with no profile: NoProfileFound from the library; from the CLI exit 2, nothing on
    stdout and one line on stderr, no traceback. The line is returned."""
    with pytest.raises(NoProfileFound):
        profconv.parse(DATA + path)
    r = cli("parse", DATA + path)
    assert r.returncode == ExitStatus.BAD_INPUT
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    return lines[0]


def check_listed_once(paths: list[str]) -> None:
    """Each test file is listed once in its batch and has its provenance row in SOURCES.md."""
    assert len(set(paths)) == len(paths)
    sources = open(DATA + "SOURCES.md", encoding="utf-8").read()
    assert [p for p in paths if f"| {p} |" not in sources] == []


def parse_text_file(tmp_path, text: str, name: str = "log.txt"):
    """profconv.parse of `text` written to a UTF-8 file (the path a user's log takes)."""
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return profconv.parse(str(p))


def check_case(case: Case) -> None:
    ps = profconv.parse(DATA + case.path)
    validate(ps.frame)
    frame = ps.frame
    assert tuple(p.tool for p in ps.profiles) == case.tools
    assert len(frame) == case.rows
    assert len(ps.unplaced) == case.unplaced, ps.unplaced[:5]
    got = {(int(p), str(s)): len(g) for (p, s), g in frame.groupby(["profile", "section"])}
    assert got == case.sections
    for profile, section, top_name, top_count in case.tops:
        ranked = rank_profile(frame, profile, [section])[0]
        assert ranked.rows.iloc[0]["name"].startswith(top_name), (profile, section, ranked.rows.iloc[0]["name"])
        assert ranked.top_count == top_count, (profile, section)
    for c in case.checks:
        if c[1].endswith("-trace"):
            profile, section, line, name, start_ns, total_ns = c
            r = frame[(frame["profile"] == profile) & (frame["section"] == section) & (frame["line_start"] == line)]
            assert len(r) == 1, c
            r = r.iloc[0]
            assert r["name"].startswith(name), (c, r["name"])
            assert _eq(_num(r["start_ns"]), start_ns) and _eq(_num(r["total_ns"]), total_ns), (c, r["start_ns"], r["total_ns"])
        elif c[1] in ("metric", "ncu-metric"):
            profile, section, name, metric, unit, value, text = c
            r = _row(frame, profile, section, name, metric)
            assert (None if r["unit"] is pd.NA else r["unit"]) == unit, (c, r["unit"])
            assert _eq(_num(r["value"]), value), (c, r["value"])
            assert (None if r["value_text"] is pd.NA else r["value_text"]) == text, (c, r["value_text"])
        else:
            profile, section, name, total_ns, calls, avg_ns = c
            r = _row(frame, profile, section, name)
            assert _eq(_num(r["total_ns"]), total_ns), (c, r["total_ns"])
            assert (None if r["calls"] is pd.NA else int(r["calls"])) == calls, (c, r["calls"])
            assert _eq(_num(r["avg_ns"]), avg_ns), (c, r["avg_ns"])
    assert len(ps.notes) == len(case.notes), ps.notes
    for note, want in zip(ps.notes, case.notes):
        assert note.startswith(want), (note, want)


# fmt: off
CASES = [
    Case('acc-time/dmikushin-kernelgen-pgi2012-sincos-fortran-no-separators.log',
         tools=('nvhpc-acc',), rows=2, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'openacc'): 1},
         tops=[(1, 'gpu', 'sincos@sincos.f90:15 kernel', 1),
               (1, 'openacc', 'sincos@sincos.f90:12 region', 1)],
         checks=[
             (1, 'gpu', 'sincos@sincos.f90:15 kernel', 3575000.0, 1, 3575000.0),
             (1, 'openacc', 'sincos@sincos.f90:12 region', 2362577000.0, 1, None),
         ],
         notes=[]),
    Case('acc-time/essentialsofpc-ch11-streamtriad-7-programs.log',
         tools=('nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc', 'nvhpc-acc'), rows=55, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'openacc'): 7, (2, 'gpu'): 2, (2, 'openacc'): 7,
                   (3, 'gpu'): 2, (3, 'openacc'): 7, (4, 'gpu'): 2, (4, 'openacc'): 7,
                   (5, 'gpu'): 2, (5, 'openacc'): 5, (6, 'gpu'): 2, (6, 'openacc'): 6,
                   (7, 'gpu'): 2, (7, 'openacc'): 2},
         tops=[(1, 'gpu', 'main@StreamTriad_kern1.c:26 kernel', 1),
               (1, 'openacc', 'main@StreamTriad_kern1.c:25 data copyin transfers', 2),
               (2, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 1),
               (2, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 2),
               (3, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 1),
               (3, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 2),
               (4, 'gpu', 'main@StreamTriad_par1.c:25 kernel', 1),
               (4, 'openacc', 'main@StreamTriad_par1.c:25 data copyin transfers', 2),
               (5, 'gpu', 'main@StreamTriad_par2.c:28 kernel', 1),
               (5, 'openacc', 'main@StreamTriad_par2.c:13 data region', 0),
               (6, 'gpu', 'main@StreamTriad_par3.c:27 kernel', 1),
               (6, 'openacc', 'main@StreamTriad_par3.c:13 data region', 0),
               (7, 'gpu', 'main@StreamTriad_par4.c:26 kernel', 1),
               (7, 'openacc', 'main@StreamTriad_par4.c:17 compute region', 0)],
         checks=[
             (1, 'gpu', 'main@StreamTriad_kern1.c:26 kernel', 26448866000.0, 16, 1653054000.0),
             (1, 'gpu', 'main@StreamTriad_kern1.c:17 kernel', 362000.0, 1, 362000.0),
             (1, 'openacc', 'main@StreamTriad_kern1.c:25 data copyin transfers', 415826000.0, 320, 1299000.0),
             (1, 'openacc', 'main@StreamTriad_kern1.c:25 data region', None, 32, None),
             (2, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 9159000.0, 16, 572000.0),
             (2, 'gpu', 'main@StreamTriad_kern2.c:19 kernel', 360000.0, 1, 360000.0),
             (2, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 415305000.0, 320, 1297000.0),
             (2, 'openacc', 'main@StreamTriad_kern2.c:28 data region', None, 32, None),
             (3, 'gpu', 'main@StreamTriad_kern2.c:29 kernel', 9154000.0, 16, 572000.0),
             (3, 'gpu', 'main@StreamTriad_kern2.c:19 kernel', 360000.0, 1, 360000.0),
             (3, 'openacc', 'main@StreamTriad_kern2.c:28 data copyin transfers', 415338000.0, 320, 1297000.0),
             (3, 'openacc', 'main@StreamTriad_kern2.c:28 data region', None, 32, None),
             (4, 'gpu', 'main@StreamTriad_par1.c:25 kernel', 9144000.0, 16, 571000.0),
             (4, 'gpu', 'main@StreamTriad_par1.c:16 kernel', 361000.0, 1, 361000.0),
             (4, 'openacc', 'main@StreamTriad_par1.c:25 data copyin transfers', 418413000.0, 320, 1307000.0),
             (4, 'openacc', 'main@StreamTriad_par1.c:25 data region', None, 32, None),
             (5, 'gpu', 'main@StreamTriad_par2.c:28 kernel', 9087000.0, 16, 567000.0),
             (5, 'gpu', 'main@StreamTriad_par2.c:19 kernel', 361000.0, 1, 361000.0),
             (5, 'openacc', 'main@StreamTriad_par2.c:13 data region', None, 2, None),
             (5, 'openacc', 'main@StreamTriad_par2.c:28 data region', None, 32, None),
             (6, 'gpu', 'main@StreamTriad_par3.c:27 kernel', 9085000.0, 16, 567000.0),
             (6, 'gpu', 'main@StreamTriad_par3.c:18 kernel', 360000.0, 1, 360000.0),
             (6, 'openacc', 'main@StreamTriad_par3.c:13 data region', None, 1, None),
             (6, 'openacc', 'main@StreamTriad_par3.c:36 data region', None, 1, None),
             (7, 'gpu', 'main@StreamTriad_par4.c:26 kernel', 9092000.0, 16, 568000.0),
             (7, 'gpu', 'main@StreamTriad_par4.c:17 kernel', 361000.0, 1, 361000.0),
             (7, 'openacc', 'main@StreamTriad_par4.c:17 compute region', None, 1, None),
             (7, 'openacc', 'main@StreamTriad_par4.c:26 compute region', None, 16, None),
         ],
         notes=[]),
    Case('cudaprof/dmikushin-kernelgen-sincos-tesla-c2070-cuda-profile-log.log',
         tools=('cudaprof',), rows=7, unplaced=0,
         sections={(1, 'gpu'): 3, (1, 'gpu-trace'): 4},
         tops=[(1, 'gpu', 'memcpyHtoD', 2)],
         checks=[
             (1, 'gpu', 'memcpyHtoD', 47627008.0, 2, 23813504.0),
             (1, 'gpu', 'sincos_15_gpu', 3552064.0, 1, 3552064.0),
             (1, 'gpu-trace', 6, 'memcpyHtoD', None, 23987137.0),
             (1, 'gpu-trace', 9, 'memcpyDtoH', None, 36782977.0),
         ],
         notes=[]),
    Case('ncu-csv/andrewxu22-rodinia-bfs-lassen-ncu2020-base-units-excerpt.csv.log',
         tools=('ncu',), rows=53, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 52},
         tops=[(1, 'gpu', 'Kernel', 1)],
         checks=[
             (1, 'gpu', 'Kernel', 9216.0, 1, 9216.0),
             (1, 'ncu-metric', 'Kernel', 'Memory Frequency', 'cycle/second', 743055555.56, None),
             (1, 'ncu-metric', 'Kernel', 'Theoretical Occupancy', '%', 100.0, None),
         ],
         notes=[]),
    Case('ncu-text/eduardo4jesus-hw8-task1-naive-transpose-metrics.log',
         tools=('ncu',), rows=8, unplaced=0,
         sections={(1, 'ncu-metric'): 8},
         tops=[],
         checks=[
             (1, 'ncu-metric', 'naive_cuda_transpose(int, const double *', 'l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio', 'sector/request', 32.0, None),
             (1, 'ncu-metric', 'naive_cuda_transpose(int, const double *', 'smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct', '%', 100.0, None),
         ],
         notes=[]),
    Case('ncu-text/muellernico-gemm-cuda-colab-t4-metric-name-header-excerpt.log',
         tools=('ncu',), rows=39, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 38},
         tops=[(1, 'gpu', 'tiled_gemm(float *, float *, float *, int, int, in', 1)],
         checks=[
             (1, 'gpu', 'tiled_gemm(float *, float *, float *, int, int, in', 103470000.0, 2, 51735000.0),
             (1, 'ncu-metric', 'tiled_gemm(float *, float *, float *, in', 'DRAM Frequency', 'cycle/nsecond', 5.0, None),
             (1, 'ncu-metric', 'tiled_gemm(float *, float *, float *, in', 'Compute (SM) Throughput', '%', 42.37, None),
         ],
         notes=[]),
    Case('ncu-text/sssalvan-pfac-rtx4070laptop-windows-excerpt.log',
         tools=('ncu',), rows=16, unplaced=0,
         sections={(1, 'ncu-metric'): 16},
         tops=[],
         checks=[
             (1, 'ncu-metric', 'kernel_phase1_global(const unsigned char', 'l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum', 'Mbyte', 1.08, None),
             (1, 'ncu-metric', 'kernel_phase2_global(const unsigned char', 'smsp__sass_average_branch_targets_threads_uniform.pct', '%', 100.0, None),
         ],
         notes=[]),
    Case('ncu-text/taufique71-olcf-hw5-reductions-ncu2020-sol-fb-excerpt.log',
         tools=('ncu',), rows=38, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'ncu-metric'): 36},
         tops=[(1, 'gpu', 'atomic_red(float const *,float*)', 1)],
         checks=[
             (1, 'gpu', 'atomic_red(float const *,float*)', 20090000.0, 1, 20090000.0),
             (1, 'gpu', 'reduce_a(float*,float*)', 50720.0, 1, 50720.0),
             (1, 'ncu-metric', 'atomic_red(float const *,float*)', 'Memory Frequency', 'cycle/usecond', 877.44, None),
             (1, 'ncu-metric', 'reduce_a(float*,float*)', 'SOL TEX', '%', 21.13, None),
         ],
         notes=[]),
    Case('ncu-text/yktian-e3nn-torch-gate-nvtx-ranges.log',
         tools=('ncu',), rows=33, unplaced=0,
         sections={(1, 'gpu'): 3, (1, 'ncu-metric'): 30},
         tops=[(1, 'gpu', 'void at::native::vectorized_elementwise_kernel<4, ', 3)],
         checks=[
             (1, 'gpu', 'void at::native::vectorized_elementwise_kernel<4, at::native::(anonymo', 3360.0, 1, 3360.0),
             (1, 'gpu', 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunc', 2590.0, 1, 2590.0),
             (1, 'ncu-metric', 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunc', 'gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed', '%', 0.88, None),
             (1, 'ncu-metric', 'void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFu', 'sm__warps_active.avg.pct_of_peak_sustained_active', '%', 6.07, None),
         ],
         notes=[]),
    Case('ncu-text/yukewang96-tcgnn-spmm-ncu2022-inf-rules-excerpt.log',
         tools=('ncu',), rows=24, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 23},
         tops=[(1, 'gpu', 'spmm_forward_cuda_kernel(const int *, const int *,', 1)],
         checks=[
             (1, 'gpu', 'spmm_forward_cuda_kernel(const int *, const int *,', 441570.0, 1, 441570.0),
             (1, 'ncu-metric', 'spmm_forward_cuda_kernel(const int *, co', 'DRAM Frequency', 'cycle/nsecond', 9.47, None),
             (1, 'ncu-metric', 'spmm_forward_cuda_kernel(const int *, co', 'Mem Pipes Busy', '%', 54.28, None),
         ],
         notes=[]),
    Case('nsys-text/amacharla15-resnet50-nsys-progress-lines-excerpt.log',
         tools=('nsys',), rows=33, unplaced=0,
         sections={(1, 'nvtx'): 1, (1, 'os-runtime'): 32},
         tops=[(1, 'nvtx', ':resnet50_inference', 1),
               (1, 'os-runtime', 'poll', 1)],
         checks=[
             (1, 'nvtx', ':resnet50_inference', 101592786.0, 1, 101592786.0),
             (1, 'os-runtime', 'poll', 3041609958.0, 153, 19879803.6),
             (1, 'os-runtime', 'listen', 1071.0, 1, 1071.0),
         ],
         notes=[]),
    Case('nsys-text/andrew-gan-cuot-nsys2021-legacy-titles.log',
         tools=('nsys',), rows=50, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 11, (1, 'gpu-memory-size'): 3, (1, 'os-runtime'): 29},
         tops=[(1, 'gpu', 'mat_vec_hash(Vector, unsigned char*, Matrix, Vecto', 3),
               (1, 'api', 'cudaMalloc', 1),
               (1, 'os-runtime', 'pthread_join', 4)],
         checks=[
             (1, 'gpu', 'mat_vec_hash(Vector, unsigned char*, Matrix, Vecto', 12758593.0, 3, 4252864.3),
             (1, 'gpu', '[CUDA memset]', 5152.0, 3, 1717.3),
             (1, 'api', 'cudaMalloc', 707514600.0, 132, 5359959.1),
             (1, 'api', 'cuInit', 1429.0, 1, 1429.0),
             (1, 'os-runtime', 'pthread_join', 413824285.0, 1, 413824285.0),
             (1, 'os-runtime', 'bind', 1915.0, 1, 1915.0),
         ],
         notes=['profile 1, gpu table, lines 19-36: merged from 2 source tables (starting at lines 19, 34);']),
    Case('nsys-text/meanpaper-ece408-m2-nsys-legacy-with-time-output.log',
         tools=('nsys',), rows=37, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 25},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2),
               (1, 'api', 'cudaMemcpy', 2),
               (1, 'os-runtime', 'sem_timedwait', 4)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 951550648.0, 2, 475775324.0),
             (1, 'gpu', 'prefn_marker_kernel', 2720.0, 2, 1360.0),
             (1, 'api', 'cudaMemcpy', 1031016980.0, 8, 128877122.5),
             (1, 'api', 'cudaFree', 2781895.0, 8, 347736.9),
             (1, 'os-runtime', 'sem_timedwait', 95936240539.0, 973, 98598397.3),
             (1, 'os-runtime', 'bind', 1845.0, 1, 1845.0),
         ],
         notes=['profile 1, gpu table, lines 78-91: merged from 2 source tables (starting at lines 78, 89);']),
    Case('nvprof-csv/jakemdaly-pytorch-jetson-nano-metrics-mangled-excerpt.csv.log',
         tools=('nvprof',), rows=9, unplaced=0,
         sections={(1, 'metric'): 9},
         tops=[],
         checks=[
             (1, 'metric', '_ZN83_GLOBAL__N__59_tmpxft_00000286_0000', 'achieved_occupancy', None, 0.435306, None),
             (1, 'metric', '_ZN83_GLOBAL__N__59_tmpxft_00000286_0000', 'sm_efficiency', '%', 86.509837, None),
         ],
         notes=[]),
    Case('nvprof-csv/jakemdaly-tensorflow-gputrace-seconds-correlation-id-excerpt.csv.log',
         tools=('nvprof',), rows=26, unplaced=0,
         sections={(1, 'gpu'): 7, (1, 'gpu-trace'): 19},
         tops=[(1, 'gpu', 'redzone_checker', 1)],
         checks=[
             (1, 'gpu', 'redzone_checker', 47380441.0, 2, 23690220.5),
             (1, 'gpu', '[CUDA memcpy DtoH]', 6667.0, 1, 6667.0),
             (1, 'gpu-trace', 7, '[CUDA memset]', 10466675000.0, 10677.0),
             (1, 'gpu-trace', 25, '[CUDA memcpy DtoH]', 22874545000.0, 6667.0),
         ],
         notes=[]),
    Case('nvprof-csv/jazzthejackrabbit-epicflow-units-in-cells.csv.log',
         tools=('nvprof',), rows=4, unplaced=0,
         sections={(1, 'gpu'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 4)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 542360000.0, 45, 12052000.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 117720000.0, 10, 11772000.0),
         ],
         notes=[]),
    Case('nvprof-csv/nanzifan-rodinia-cfd-summary-csv-mixed-unit-row-um.csv.log',
         tools=('nvprof',), rows=29, unplaced=0,
         sections={(1, 'api'): 19, (1, 'gpu'): 7, (1, 'unified-memory'): 3},
         tops=[(1, 'gpu', 'cuda_compute_flux(int, int*, float*, float*, float', 2),
               (1, 'api', 'cudaMemcpyToSymbol', 2),
               (1, 'unified-memory', 'Total CPU Page faults', 0)],
         checks=[
             (1, 'gpu', 'cuda_compute_flux(int, int*, float*, float*, float', 302355298.0, 6000, 50392.0),
             (1, 'gpu', '[CUDA memset]', 1248.0, 1, 1248.0),
             (1, 'api', 'cudaMemcpyToSymbol', 1077558077.0, 5, 215511615.0),
             (1, 'api', 'cudaGetDevice', 1169.0, 1, 1169.0),
             (1, 'unified-memory', 'Total CPU Page faults', None, 49, None),
             (1, 'unified-memory', 'Gpu page fault groups', 0.0, None, None),
         ],
         notes=[]),
    Case('nvprof-metrics/ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log',
         tools=('nvprof',), rows=24, unplaced=0,
         sections={(1, 'metric'): 24},
         tops=[],
         checks=[
             (1, 'metric', 'changeCellState(char*, char*, int, int)', 'l1_cache_global_hit_rate', '%', 0.0, None),
             (1, 'metric', 'changeCellState(char*, char*, int, int)', 'gst_efficiency', '%', 98.67, None),
         ],
         notes=[]),
    Case('nvprof-metrics/hustzhaowei-darknet19-v100-metrics-app-table-excerpt.log',
         tools=('nvprof',), rows=17, unplaced=0,
         sections={(1, 'metric'): 17},
         tops=[],
         checks=[
             (1, 'metric', 'normalize_kernel(int, float*, float*, fl', 'inst_per_warp', None, 422.0, None),
             (1, 'metric', 'normalize_kernel(int, float*, float*, fl', 'gst_transactions', None, 40960.0, None),
         ],
         notes=[]),
    Case('nvprof-metrics/sarats-xgc-cabana-kokkos-metrics-fragment-sci-notation-excerpt.log',
         tools=('nvprof',), rows=21, unplaced=0,
         sections={(1, 'metric'): 21},
         tops=[],
         checks=[
             (1, 'metric', '__nv_static_59__46_tmpxft_0001a605_00000', 'warp_execution_efficiency', '%', 89.69, None),
             (1, 'metric', '__nv_static_59__46_tmpxft_0001a605_00000', 'tex_cache_throughput', 'GB/s', 2503.3, None),
         ],
         notes=[]),
    Case('nvprof-new/andrewxu22-rodinia-bfs-normalized-ms-units-row-v100.log',
         tools=('nvprof',), rows=22, unplaced=0,
         sections={(1, 'api'): 12, (1, 'gpu'): 2, (1, 'unified-memory'): 8},
         tops=[(1, 'gpu', 'Kernel(Node*, int*, bool*, bool*, bool*, int*, int', 1),
               (1, 'api', 'cudaMallocManaged', 1),
               (1, 'unified-memory', 'Gpu page fault groups', 2)],
         checks=[
             (1, 'gpu', 'Kernel(Node*, int*, bool*, bool*, bool*, int*, int', 12144490.0, 12, 1012041.0),
             (1, 'gpu', 'Kernel2(bool*, bool*, bool*, bool*, int)', 481726.0, 12, 40143.0),
             (1, 'api', 'cudaMallocManaged', 282345000.0, 7, 40335000.0),
             (1, 'api', 'cuDeviceGetUuid', 815.0, 4, 203.0),
             (1, 'unified-memory', 'Gpu page fault groups', 13327072.0, 68, None),
             (1, 'unified-memory', 'Total CPU throttles', None, 1, None),
         ],
         notes=[]),
    Case('nvprof-new/nanzifan-babelstream-cpu-thread-tracing-run-titanxp.log',
         tools=('nvprof',), rows=24, unplaced=0,
         sections={(1, 'api'): 17, (1, 'gpu'): 7},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 6),
               (1, 'api', 'cudaDeviceSynchronize', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 217160000.0, 103, 2108300.0),
             (1, 'gpu', 'void init_kernel<double>(double*, double*, double*', 1678800.0, 1, 1678800.0),
             (1, 'api', 'cudaDeviceSynchronize', 620140000.0, 401, 1546500.0),
             (1, 'api', 'cudaDriverGetVersion', 368.0, 1, 368.0),
         ],
         notes=[]),
    Case('nvprof-new/sarats-xgc-cudafortran-nvprof-import-no-pid-excerpt.log',
         tools=('nvprof',), rows=41, unplaced=0,
         sections={(1, 'api'): 10, (1, 'gpu'): 31},
         tops=[(1, 'gpu', 'push_mod_gpu_pushe_kernel_gpu_', 1),
               (1, 'api', 'cudaEventSynchronize', 3)],
         checks=[
             (1, 'gpu', 'push_mod_gpu_pushe_kernel_gpu_', 122719000000.0, 210, 584380000.0),
             (1, 'gpu', '__pgi_dev_cumemset_4n', 24063.0, 4, 6015.0),
             (1, 'api', 'cudaEventSynchronize', 83698300000.0, 8, 10462300000.0),
             (1, 'api', 'cuMemAlloc', 641500000.0, 479, 1339300.0),
         ],
         notes=[]),
    Case('nvprof-new/whollybrewed-stego-gtx1060-gpu-summary-only.log',
         tools=('nvprof',), rows=5, unplaced=0,
         sections={(1, 'gpu'): 5},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 718410.0, 4, 179600.0),
             (1, 'gpu', 'grouping(subgroup*)', 1568.0, 1, 1568.0),
         ],
         notes=[]),
    Case('nvprof-trace/andrewxu22-rodinia-bfs-gputrace-unified-memory-columns-excerpt.log',
         tools=('nvprof',), rows=20, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-trace'): 13, (1, 'unified-memory'): 3},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 2),
               (1, 'unified-memory', '[Unified Memory GPU page faults]', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 199108.0, 4, 49777.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 3968.0, 2, 1984.0),
             (1, 'unified-memory', '[Unified Memory GPU page faults]', 180450.0, 1, 180450.0),
             (1, 'unified-memory', '[Unified Memory CPU page faults]', None, 1, None),
             (1, 'gpu-trace', 26, '[Unified Memory CPU page faults]', 565070000.0, None),
             (1, 'gpu-trace', 38, '[CUDA memcpy DtoH]', 572950000.0, 1856.0),
         ],
         notes=[]),
    Case('nvprof-trace/whollybrewed-stego-gtx1060-gputrace-ms-then-s-starts.log',
         tools=('nvprof',), rows=15, unplaced=0,
         sections={(1, 'gpu'): 5, (1, 'gpu-trace'): 10},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 720940.0, 4, 180235.0),
             (1, 'gpu', 'grouping(subgroup*)', 1856.0, 1, 1856.0),
             (1, 'gpu-trace', 5, 'grouping(subgroup*) [105]', 360750000.0, 1856.0),
             (1, 'gpu-trace', 14, '[CUDA memcpy DtoH]', 1016770000.0, 174760.0),
         ],
         notes=[]),
    Case('pasted/alvarobishop-examen-spanish-nvprof-tilde-fences-prose-excerpt.md.log',
         tools=('nvprof', 'nvprof'), rows=40, unplaced=0,
         sections={(1, 'api'): 16, (1, 'gpu'): 4, (2, 'api'): 16, (2, 'gpu'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2),
               (1, 'api', 'cudaMalloc', 2),
               (2, 'gpu', '[CUDA memcpy DtoH]', 2),
               (2, 'api', 'cudaMalloc', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 23304000.0, 2, 11652000.0),
             (1, 'gpu', 'testInnerStruct(innerStruct*, innerStruct*, int)', 255850.0, 1, 255850.0),
             (1, 'api', 'cudaMalloc', 566380000.0, 2, 283190000.0),
             (1, 'api', 'cuDeviceGetUuid', 200.0, 1, 200.0),
             (2, 'gpu', '[CUDA memcpy DtoH]', 12215000.0, 2, 6107600.0),
             (2, 'gpu', 'testInnerArray(InnerArray*, InnerArray*, int)', 256030.0, 1, 256030.0),
             (2, 'api', 'cudaMalloc', 584890000.0, 2, 292450000.0),
             (2, 'api', 'cuDeviceGetUuid', 200.0, 1, 200.0),
         ],
         notes=[]),
    Case('pasted/csc-openacc-profiling-gpus-nsys-2020-glued-rows-ncu-slides-excerpt.md.log',
         tools=('nsys', 'ncu'), rows=41, unplaced=0,
         sections={(1, 'api'): 6, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (2, 'gpu'): 1,
                   (2, 'ncu-metric'): 27},
         tops=[(1, 'gpu', 'update_65_gpu', 3),
               (1, 'api', 'cuStreamSynchronize', 2),
               (2, 'gpu', 'update_65_gpu', 1)],
         checks=[
             (1, 'gpu', 'update_65_gpu', 43864453.0, 361, 121508.2),
             (1, 'gpu', '[CUDA memset]', 517209.0, 361, 1432.7),
             (1, 'api', 'cuStreamSynchronize', 108005341.0, 1450, 74486.4),
             (1, 'api', 'cuMemAllocHost_v2', 813341.0, 1, 813341.0),
             (2, 'gpu', 'update_65_gpu', 121630.0, 1, 121630.0),
             (2, 'ncu-metric', 'update_65_gpu', 'DRAM Frequency', 'cycle/usecond', 849.78, None),
             (2, 'ncu-metric', 'update_65_gpu', 'Achieved Active Warps Per SM', 'warp', 53.58, None),
         ],
         notes=['profile 1, gpu table, lines 54-60: merged from 2 source tables (starting at lines 54, 59);']),
    Case('pasted/cscfi-user-guide-nvprof-dct8x8-single-spaced.md.log',
         tools=('nvprof',), rows=12, unplaced=0,
         sections={(1, 'gpu'): 12},
         tops=[(1, 'gpu', 'CUDAkernel2DCT(float*, float*, int)', 3)],
         checks=[
             (1, 'gpu', 'CUDAkernel2DCT(float*, float*, int)', 9360000.0, 101, 92680.0),
             (1, 'gpu', '[CUDA memcpy DtoA]', 22590.0, 1, 22590.0),
         ],
         notes=[]),
    Case('pasted/gustavolr548-cpguacamole-mm-cu-comment-nvprof-events-ptbr-times-excerpt.log',
         tools=('nvprof',), rows=2, unplaced=0,
         sections={(1, 'metric'): 2},
         tops=[],
         checks=[
             (1, 'metric', 'mm(double*, double*, double*, int)', 'warps_launched', None, 277699.0, None),
             (1, 'metric', 'mm(double*, double*, double*, int)', 'warp_execution_efficiency', '%', 99.21, None),
         ],
         notes=[]),
    Case('pasted/gustavolr548-cpguacamole-sum-cuda-comment-two-nvprof-runs-excerpt.log',
         tools=('nvprof', 'nvprof'), rows=4, unplaced=0,
         sections={(1, 'gpu'): 2, (2, 'gpu'): 2},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 2),
               (2, 'gpu', '[CUDA memcpy HtoD]', 2)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 41041000.0, 1, 41041000.0),
             (1, 'gpu', 'sum_cuda(double*, double*, int)', 8773500.0, 1, 8773500.0),
             (2, 'gpu', '[CUDA memcpy HtoD]', 49618000.0, 1, 49618000.0),
             (2, 'gpu', 'sum_cuda(double*, double*, int)', 9962600.0, 1, 9962600.0),
         ],
         notes=[]),
    Case('pasted/shishishu-olcf-hw3-nvprof-5-runs-fences.md.log',
         tools=('nvprof', 'nvprof', 'nvprof', 'nvprof', 'nvprof'), rows=75, unplaced=0,
         sections={(1, 'api'): 12, (1, 'gpu'): 3, (2, 'api'): 12, (2, 'gpu'): 3,
                   (3, 'api'): 12, (3, 'gpu'): 3, (4, 'api'): 12, (4, 'gpu'): 3,
                   (5, 'api'): 12, (5, 'gpu'): 3},
         tops=[(1, 'gpu', 'vadd(float const *, float const *, float*, int)', 1),
               (1, 'api', 'cudaMemcpy', 1),
               (2, 'gpu', '[CUDA memcpy HtoD]', 3),
               (2, 'api', 'cudaMalloc', 2),
               (3, 'gpu', '[CUDA memcpy HtoD]', 2),
               (3, 'api', 'cudaMalloc', 2),
               (4, 'gpu', '[CUDA memcpy HtoD]', 2),
               (4, 'api', 'cudaMalloc', 2),
               (5, 'gpu', '[CUDA memcpy HtoD]', 2),
               (5, 'api', 'cudaMalloc', 2)],
         checks=[
             (1, 'gpu', 'vadd(float const *, float const *, float*, int)', 2384920000.0, 1, 2384920000.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 29757000.0, 1, 29757000.0),
             (1, 'api', 'cudaMemcpy', 2473010000.0, 3, 824340000.0),
             (1, 'api', 'cuModuleGetLoadingMode', 381.0, 1, 381.0),
             (2, 'gpu', '[CUDA memcpy HtoD]', 60084000.0, 2, 30042000.0),
             (2, 'gpu', '[CUDA memcpy DtoH]', 14919000.0, 1, 14919000.0),
             (2, 'api', 'cudaMalloc', 152310000.0, 3, 50770000.0),
             (2, 'api', 'cuModuleGetLoadingMode', 356.0, 1, 356.0),
             (3, 'gpu', '[CUDA memcpy HtoD]', 59993000.0, 2, 29997000.0),
             (3, 'gpu', 'vadd(float const *, float const *, float*, int)', 6571300.0, 1, 6571300.0),
             (3, 'api', 'cudaMalloc', 149850000.0, 3, 49950000.0),
             (3, 'api', 'cuModuleGetLoadingMode', 359.0, 1, 359.0),
             (4, 'gpu', '[CUDA memcpy HtoD]', 59962000.0, 2, 29981000.0),
             (4, 'gpu', 'vadd(float const *, float const *, float*, int)', 1032800.0, 1, 1032800.0),
             (4, 'api', 'cudaMalloc', 157620000.0, 3, 52539000.0),
             (4, 'api', 'cuModuleGetLoadingMode', 445.0, 1, 445.0),
             (5, 'gpu', '[CUDA memcpy HtoD]', 56173000.0, 2, 28087000.0),
             (5, 'gpu', 'vadd(float const *, float const *, float*, int)', 587320.0, 1, 587320.0),
             (5, 'api', 'cudaMalloc', 148540000.0, 3, 49514000.0),
             (5, 'api', 'cuModuleGetLoadingMode', 348.0, 1, 348.0),
         ],
         notes=[]),
    Case('pasted/shishishu-olcf-hw4-nvprof-then-ncu2025-fences-excerpt.md.log',
         tools=('nvprof', 'ncu'), rows=39, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 5, (2, 'gpu'): 1, (2, 'ncu-metric'): 20},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 1),
               (1, 'api', 'cudaMemcpy', 2),
               (2, 'gpu', 'row_sums(const float *, float *, unsigned long)', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 225830000.0, 1, 225830000.0),
             (1, 'gpu', '[CUDA memset]', 3264.0, 1, 3264.0),
             (1, 'api', 'cudaMemcpy', 232140000.0, 3, 77382000.0),
             (1, 'api', 'cuModuleGetLoadingMode', 362.0, 1, 362.0),
             (2, 'gpu', 'row_sums(const float *, float *, unsigned long)', 3420000.0, 1, 3420000.0),
             (2, 'ncu-metric', 'row_sums(const float *, float *, unsigne', 'DRAM Frequency', 'cycle/usecond', 872.95, None),
             (2, 'ncu-metric', 'row_sums(const float *, float *, unsigne', 'Waves Per SM', None, 0.1, None),
         ],
         notes=[]),
    Case('pasted/simoncblyth-opticks-cuda-profiler-numbered-lines-rst-excerpt.log',
         tools=('cudaprof', 'cudaprof'), rows=49, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-trace'): 36, (2, 'gpu'): 4, (2, 'gpu-trace'): 5},
         tops=[(1, 'gpu', 'render', 1),
               (2, 'gpu', 'render', 1)],
         checks=[
             (1, 'gpu', 'render', 5259416500.0, 1, 5259416500.0),
             (1, 'gpu', 'fill', 50048.0, 2, 25024.0),
             (2, 'gpu', 'render', 5259416500.0, 1, 5259416500.0),
             (2, 'gpu', 'fill', 50048.0, 2, 25024.0),
             (1, 'gpu-trace', 52, 'memcpyHtoD', None, 1312.0),
             (2, 'gpu-trace', 119, 'memcpyDtoH', None, 194016.0),
         ],
         notes=[]),
    Case('pasted/taufique71-olcf-hw4-report-ncu2020-glued-progress.md.log',
         tools=('ncu', 'ncu'), rows=58, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'ncu-metric'): 52, (2, 'ncu-metric'): 4},
         tops=[(1, 'gpu', 'row_sums(float const *,float*,unsigned long)', 2)],
         checks=[
             (1, 'gpu', 'row_sums(float const *,float*,unsigned long)', 3320000.0, 1, 3320000.0),
             (1, 'gpu', 'column_sums(float const *,float*,unsigned long)', 1420000.0, 1, 1420000.0),
             (1, 'ncu-metric', 'row_sums(float const *,float*,unsigned l', 'Memory Frequency', 'cycle/usecond', 874.41, None),
             (1, 'ncu-metric', 'column_sums(float const *,float*,unsigne', 'Theoretical Occupancy', '%', 100.0, None),
             (2, 'ncu-metric', 'row_sums(float const *,float*,unsigned l', 'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum', 'request', 8388608.0, None),
             (2, 'ncu-metric', 'column_sums(float const *,float*,unsigne', 'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum', 'sector', 33554432.0, None),
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE = [
    # (file, why it holds no profile)
    ("foreign/codingadventures-iet-engine-nvprof-help-text-excerpt.log", "nvprof --help text"),
    ("foreign/marcogrivol-gprof-flat-profile-call-graph-excerpt.log", "GNU gprof flat profile and call graph"),
    ("foreign/srsapireddy-ncu-list-sections-table-in-cu-file.log", "ncu --list-sections table"),
    ("ncu-text/shra1-25-cml-ncu-target-terminated-traceback-no-result.log",
     "ncu: ERR_NVGPUCTRPERM, the target crashed, no kernels profiled"),
    ("nvprof-cpu/nanzifan-babelstream-cpu-profiling-tree.log", "nvprof --cpu-profiling tree: CPU samples, no GPU table"),
    ("pasted/oliatsm-rtx4070ti-nsys-fatal-ncu-error-no-profile.md.log",
     "nsys FATAL ERROR and two ncu runs that profiled no kernel"),
    ("foreign/adityagupta1-cis5650-flocking-fps-list-dashed-headings.log", "fps list under dashed headings"),
    ("foreign/downvoteed-gpgpu-ncu-command-line-only-windows.log", "an ncu command line, no output"),
    ("foreign/lanluyuu-cuda-gemm-ncu-error-no-executable.log", "ncu ==ERROR== before running anything"),
    ("foreign/lisennlp-dc-triton-ncu-query-metrics-listing-excerpt.log", "ncu --query-metrics listing, no values"),
    ("foreign/timothygrant80-cistem-nvprof-log-app-output-only.log", "a log named nvprof.log with program output only"),
    ("foreign/wilfonba-mfc-nsys-txt-run-killed-before-report.log", "nsys run killed before any report"),
    ("ncu-text/lukas-ruettgers-dphpc-cutlass-ncu-report-file-kernel-colon-app-line.log",
     "ncu wrote a report file; a 'Kernel: ...' program line"),
    ("ncu-text/petebachant-clima-julia-ncu-slurm-report-file-no-results-excerpt.log",
     "ncu wrote a report file; Julia warnings in box characters"),
    ("foreign/oliatsm-rtx4070ti-nvc-minfo-and-app-timings-no-profiler-excerpt.md.log",
     "nvc -Minfo 'Generating ...' lines and program timings"),
    ("foreign/xinliu0609-turba-sim-gpu-trace-txt-not-a-profiler.log", "a simulator's own trace file named gpu_trace.txt"),
    ("nsys-text/jellyfish227-nsys2023.1-analyze-rules-memcpy-sync-excerpt.log",
     "nsys expert-system rules: single slow calls, not a summary"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_corpus_more_file(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_corpus_more_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line or "nothing to rank" in line


def test_nsys_expert_rules_output_says_what_it_is():
    with pytest.raises(NoProfileFound) as e:
        profconv.parse(DATA + "nsys-text/jellyfish227-nsys2023.1-analyze-rules-memcpy-sync-excerpt.log")
    assert str(e.value).endswith(": nsys expert-system rules output (cuda_memcpy_async, cuda_memcpy_sync) lists single "
                                 "slow calls, not a time summary: nothing to rank (`nsys stats` prints the summary tables)")


def test_sources_lists_every_corpus_file():
    """Every real log in tests/data has its provenance (repository, path, commit) in SOURCES.md."""
    import glob
    import os

    sources = open(DATA + "SOURCES.md", encoding="utf-8").read()
    logs = ("acc-time/", "cudaprof/", "ncu-", "nsys-", "nvprof-", "pasted/", "foreign/")  # the profiler-log folders
    files = sorted(os.path.relpath(p, DATA) for p in glob.glob(DATA + "**/*", recursive=True) if os.path.isfile(p))
    missing = [f for f in files if f.startswith(logs) and f"| {f} |" not in sources]
    assert missing == []
    listed = {c.path for c in CASES} | {p for p, _ in NO_PROFILE}
    assert len(listed) == len(CASES) + len(NO_PROFILE)  # no file twice


def test_cli_says_when_a_table_has_no_time_to_rank(cli):
    """A Unified Memory table printed with 0 times and OpenACC regions without times are shown, and the
    line under them says there is nothing to rank instead of '0 of 3 take 0.0%'."""
    r = cli("parse", "--width", "100", DATA + "nvprof-csv/nanzifan-rodinia-cfd-summary-csv-mixed-unit-row-um.csv.log")
    assert r.returncode == 0
    assert "none of these 3 rows has a time above zero: nothing to rank" in r.stdout
    assert "0 of 3" not in r.stdout
    assert "2 of 7 GPU activities take 91.5% of GPU time" in r.stdout
    r = cli("parse", "--width", "100", "--profile", "5", DATA + "acc-time/essentialsofpc-ch11-streamtriad-7-programs.log")
    assert r.returncode == 0
    assert "none of these 5 rows has a time above zero: nothing to rank" in r.stdout
    assert "contradicts" not in r.stdout + r.stderr
