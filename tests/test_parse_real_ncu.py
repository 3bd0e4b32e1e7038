"""Real Nsight Compute logs, value for value, and the classes of ncu output they revealed.

The logs: tests/data/ncu-text/ and ncu-csv/, ncu 2020 to 2025: console sections and --metrics tables,
--print-summary tables, --csv pages, and runs that printed no result (a report file saved instead, no
permission to read the counters).
Each log was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path
and commit (the first corpus in its "Table", later logs under the batch named in the comment above
their cases). Values were checked by hand against the lines they come from; tests/real_logs.py says
what a case holds.

Below the logs: synthetic tests of each class a log revealed (--print-summary layouts of 2021 and 2023+,
a run that saved its results to a file, in its nsys and nvprof forms too, ncu's errors quoted, metric
values shown as printed), so a fix holds for the class.
"""

from __future__ import annotations

import pandas as pd
import pytest

from profconv.errors import ExitStatus
from tests.real_logs import Case, check_case, check_listed_once, check_no_profile, check_top_row, parse_text_file

# fmt: off
# (file, profiles, rows, ranked section of profile 1, its top row's name (prefix), total ns, calls,
#  rows in the >=90% set, unplaced lines): tests/real_logs.py check_top_row
TOP_ROWS = [
    # the first corpus: SOURCES.md "Table"
    ('ncu-csv/andrewxu22-rodinia-cfd-v100-ncu2020.csv.log', 1, 106, 'gpu', 'cuda_compute_flux', 39200.0, 1, 2, 0),
    ('ncu-csv/yktian-paddle-demo-nvtx-metrics.csv.log', 1, 22, 'gpu', 'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x', 8192.0, 1, 2, 0),
    ('ncu-text/eduardo4jesus-hw8-smem-transpose-metrics.log', 1, 13, 'ncu-metric', 'smem_cuda_transpose(int, const double *, double *)', None, None, 0, 0),
    ('ncu-text/fluuuegel-dd2360-raytracer-ncu2023.2-launchfailed.log', 1, 58, 'ncu-metric', 'render(vec3 *, int, int, int, camera **, hitable **, curandS', None, None, 0, 0),
    ('ncu-text/liqiangxl-pytorch-layernorm-ncu2022-first-kernel.log', 1, 29, 'gpu', 'void at::native::<unnamed>::distribution_elementwise_grid_st', 29380.0, 1, 1, 0),
    ('ncu-text/md-info-fused-rmsnorm-t4-colab.log', 1, 44, 'gpu', 'void fused<float, 256>(const T1 *, const T1 *, const T1 *, T', 5660.0, 1, 1, 0),
]

CASES = [
    # SOURCES.md "Batch 2"
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
    # SOURCES.md "Batch 3"
    Case('ncu-text/muskanjaiswal-ipaco-2mm-tensor-rtx3050ti-ncu2025-pm-sampling-excerpt.log',
         tools=('ncu',), rows=79, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 78},
         tops=[(1, 'gpu', 'f32_to_f16(const float *, __half *, int)', 1)],
         checks=[
             (1, 'gpu', 'f32_to_f16(const float *, __half *, int)', 44990.0, 1, 44990.0),
             (1, 'ncu-metric', 'f32_to_f16', 'Memory Throughput', '%', 80.31, None),
             (1, 'ncu-metric', 'f32_to_f16', '# Pass Groups', None, 2.0, None),
             (1, 'ncu-metric', 'f32_to_f16', 'Function Cache Configuration', None, None, 'CachePreferNone'),
             (1, 'ncu-metric', 'f32_to_f16', 'Enabled TPC IDs', None, None, 'all'),
             (1, 'ncu-metric', 'f32_to_f16', 'Threads', 'thread', 1048576.0, None),
             (1, 'ncu-metric', 'f32_to_f16', 'Total SMSP Elapsed Cycles', 'cycle', 2494080.0, None),
         ],
         notes=[]),
    Case('ncu-text/eduardo4jesus-hw8-task1b-naive-transpose-metrics-2022.log',
         tools=('ncu',), rows=8, unplaced=0,
         sections={(1, 'ncu-metric'): 8},
         tops=[],
         checks=[
             (1, 'ncu-metric', 'naive_cuda_transpose', 'l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio',
              'sector/request', 32.0, None),
             (1, 'ncu-metric', 'naive_cuda_transpose', 'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum', 'sector', 16777216.0, None),
             (1, 'ncu-metric', 'naive_cuda_transpose', 'smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct', '%', 25.0, None),
         ],
         notes=[]),
    # SOURCES.md "Batch 4"
    Case('ncu-text/alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log',
         tools=('ncu',), rows=89, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 88},
         tops=[],
         checks=[
             (1, 'gpu', 'PathTracer(int, Pixel *, int)', None, 1, 11865617000.0),
             (1, 'ncu-metric', 'PathTracer', 'gpu__time_duration.sum', 'second', 11.865617, None),
             (1, 'ncu-metric', 'PathTracer', 'gpc__cycles_elapsed.max', 'cycle', 13009685195.0, None),
             (1, 'ncu-metric', 'PathTracer', 'launch__waves_per_multiprocessor', None, 25.283951, None),
             (1, 'ncu-metric', 'PathTracer', 'sm__cycles_active.avg', 'cycle', 12934628788.064816, None),
             (1, 'ncu-metric', 'PathTracer', 'dram__bytes.sum.per_second', 'Kbyte/second', 55.382875, None),
             (1, 'ncu-metric', 'PathTracer', 'sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active',
              '%', 13.043705, None),
         ],
         notes=['profile 1, gpu table, lines 7-64: ncu --print-summary prints']),
    # SOURCES.md "Batch 5b"
    Case('ncu-text/b5b-ishana23g-heat-eq-ncu2025-cc8.9-workload-distribution-opt-separators-tail-excerpt.log',
         tools=('ncu',), rows=82, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'ncu-metric'): 80},
         tops=[(1, 'gpu', 'heat_to_color_kernel_2d(float *, uchar4 *, int, int)', 1)],
         checks=[
             (1, 'gpu', 'heat_to_color_kernel_2d', 30180.0, 1, 30180.0),  # Duration 30.18 us
             (1, 'gpu', 'add_heat_kernel_2d', 1540.0, 1, 1540.0),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'Threads', 'thread', 1048576.0, None),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'SM Active Cycles', 'cycle', 63656.74, None),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'Function Cache Configuration', None, None, 'CachePreferNone'),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Total SMSP Elapsed Cycles', 'cycle', 478536.0, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Achieved Occupancy', '%', 15.10, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Waves Per SM', None, 0.05, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Driver Shared Memory Per Block', 'Kbyte/block', 1.02, None),
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [  # (file, why it holds no profile)
    # SOURCES.md "Batch 2"
    ("ncu-text/shra1-25-cml-ncu-target-terminated-traceback-no-result.log",
     "ncu: ERR_NVGPUCTRPERM, the target crashed, no kernels profiled"),
    ("ncu-text/lukas-ruettgers-dphpc-cutlass-ncu-report-file-kernel-colon-app-line.log",
     "ncu wrote a report file; a 'Kernel: ...' program line"),
    ("ncu-text/petebachant-clima-julia-ncu-slurm-report-file-no-results-excerpt.log",
     "ncu wrote a report file; Julia warnings in box characters"),
    # SOURCES.md "Batch 3"
    ("ncu-text/hacheng-ece408sp25-op1-ncu-report-file-op-times-only.log",
     "ncu saved a report file; program output with Op Times only"),
]


@pytest.mark.parametrize("case", TOP_ROWS, ids=lambda c: c[0])
def test_ncu_log_top_row(case):
    check_top_row(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_ncu_log(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_ncu_log_holds_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line or "nothing to rank" in line


def test_ncu_logs_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes


@pytest.mark.parametrize(("text", "tool", "how"), [
    ("Op Time: 22922.1 ms\n==PROF== Disconnected from process 51856\n==PROF== Report: /u/h/analysis_file.ncu-rep\n",
     "Nsight Compute", "`ncu --import /u/h/analysis_file.ncu-rep` prints them"),
    ("Generating '/tmp/nsys-report-4a50.qdstrm'\n[1/1] [========================100%] r.nsys-rep\nGenerated:\n"
     "    /tmp/nsys-report-4a50.nsys-rep\n", "Nsight Systems", "`nsys stats /tmp/nsys-report-4a50.nsys-rep` prints them"),
    ("==31== NVPROF is profiling process 31, command: ./a.out\n==31== Generated result file: /h/prof.nvvp\n",
     "nvprof", "`nvprof -i /h/prof.nvvp` prints them"),
])
def test_a_run_that_saved_its_results_to_a_file_says_how_to_print_them(tmp_path, cli, text, tool, how):
    """The profiler ran, but wrote a report file instead of tables: the one-line error names the file
    and the command that prints it (before: only 'no profiler output found')."""
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    r = cli("parse", str(p))
    assert r.returncode == ExitStatus.BAD_INPUT and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and "no profiler output found" in line
    assert f"{tool} saved its results in" in line and how in line


NCU_SUMMARY = """==PROF== Disconnected from process 11139
[11139] a.out@127.0.0.1
  Device 0, CC 9.0
    bitonic_merge(int *, int, int, int) (16384, 1, 1)x(512, 1, 1), Invocations 300
      Section: Command line profiler metrics
      ---------------------------------------------------------------- ----------- ------- ------- -------
      Metric Name                                                      Metric Unit Minimum Maximum Average
      ---------------------------------------------------------------- ----------- ------- ------- -------
      gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed           %   56.59   72.29   64.43
      gpu__time_duration.sum                                                    ms    1.02    1.31    1.12
      ---------------------------------------------------------------- ----------- ------- ------- -------

  transposeNaive(const float *, float *, int) (32, 32, 1)x(32, 32, 1), Device 0, CC 11.0, Invocations 14
    Section: Command line profiler metrics
    -------------------------------------------------------------- ----------- ------- ------- -------
    Metric Name                                                    Metric Unit Minimum Maximum Average
    -------------------------------------------------------------- ----------- ------- ------- -------
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum                      0.00    0.00    0.00
    gpu__time_duration.sum                                                  us   12.10   14.30   12.90
    -------------------------------------------------------------- ----------- ------- ------- -------
"""


@pytest.mark.parametrize("drop_prof_lines", [False, True], ids=["with-prof-lines", "pasted-without"])
def test_ncu_print_summary_per_kernel(tmp_path, drop_prof_lines):
    """`ncu --print-summary per-kernel` (or --import … --print-summary): one block per kernel with its
    launch count, Minimum/Maximum/Average columns. Every metric keeps all three values (the average as
    its value, value_min/value_max beside it); the duration gives the kernel's GPU row with its
    launches, average, min and max, and no total (ncu prints none: said next to the table). Before:
    'no profiler output found'."""
    text = NCU_SUMMARY if not drop_prof_lines else NCU_SUMMARY.split("\n", 2)[2]
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    gpu = f[f["section"] == "gpu"].set_index("short_name")
    assert list(gpu.index) == ["bitonic_merge", "transposeNaive"]
    assert list(gpu["calls"]) == [300, 14]
    assert list(gpu["avg_ns"]) == [1.12e6, 12900.0]
    assert list(gpu["min_ns"]) == [1.02e6, 12100.0] and list(gpu["max_ns"]) == [1.31e6, 14300.0]
    assert gpu["total_ns"].isna().all()
    m = f[f["section"] == "ncu-metric"].set_index("metric")
    assert len(m) == 4
    pct = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
    assert m.loc[pct, "value"] == 64.43 and m.loc[pct, "unit"] == "%"
    assert m.loc[pct, "value_min"] == 56.59 and m.loc[pct, "value_max"] == 72.29
    assert ps.notes[0].endswith("no total: the kernels are listed, not ranked by time")


NCU_SUMMARY_2021 = """==PROF== Disconnected from process 4242
==PROF== Report: /tmp/r.ncu-rep
[4242] app@127.0.0.1
  Device 0
    Kokkos::<unnamed>::init_lock_array_kernel_atomic(), Block Size 256, Grid Size 512, 3 invocations |
      Section: GPU Speed Of Light Throughput
      Metric Name                          Metric Unit   Minimum     Maximum     Average    |
      ------------------------------------ ------------- ----------- ----------- -----------
      gpc__cycles_elapsed.max              cycle         4157.000000 4301.000000 4200.500000
      gpu__time_duration.sum               usecond       6.336000    7.100000    6.700000   |
      launch__waves_per_multiprocessor                   0.592593    0.592593    0.592593   |

    conv(float *, int), Block Size 128, Grid Size 64, 2 invocations |
      Section: GPU Speed Of Light Throughput
      Metric Name                          Metric Unit   Minimum     Maximum     Average    |
      ------------------------------------ ------------- ----------- ----------- -----------
      gpu__time_duration.sum               msecond       1.500000    2.500000    2.000000   |
      dram__bytes.sum.per_second           Gbyte/second  10.000000 12.000000     11.000000  |
""".replace("|\n", "\n")  # | marks the end of a line padded with spaces


@pytest.mark.parametrize("drop_prof_lines", [False, True], ids=["with-prof-lines", "pasted-without"])
def test_ncu_print_summary_2021_layout(tmp_path, drop_prof_lines):
    """ncu 2021-2022 `--print-summary per-gpu|per-kernel`: the kernel line says `Block Size N, Grid Size M,
    K invocations`, the device line has no CC, and the Minimum/Maximum/Average cells are flush LEFT in
    their columns (flush right since 2023). Before: 'no profiler output found' (the ==PROF== Report line
    taken for a run that saved a file). A row whose cell straddles two columns is reported."""
    text = NCU_SUMMARY_2021 if not drop_prof_lines else NCU_SUMMARY_2021.split("\n", 2)[2]
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    straddling = text.split("\n").index(next(x for x in text.split("\n") if "dram__bytes" in x)) + 1
    assert [n for n, _ in ps.unplaced] == [straddling]  # '10.000000 12.000000' straddles the Minimum and Maximum columns
    gpu = f[f["section"] == "gpu"].set_index("name")
    assert list(gpu.index) == ["Kokkos::<unnamed>::init_lock_array_kernel_atomic()", "conv(float *, int)"]
    assert list(gpu["calls"]) == [3, 2]
    assert list(gpu["avg_ns"]) == [6700.0, 2e6]
    assert list(gpu["min_ns"]) == [6336.0, 1.5e6] and list(gpu["max_ns"]) == [7100.0, 2.5e6]
    assert gpu["total_ns"].isna().all()
    m = f[f["section"] == "ncu-metric"].set_index("metric")
    assert len(m) == 4  # one row per metric: Minimum and Maximum beside the Average
    assert m.loc["gpc__cycles_elapsed.max", "value"] == 4200.5
    assert m.loc["gpc__cycles_elapsed.max", "value_min"] == 4157.0
    assert m.loc["gpc__cycles_elapsed.max", "value_max"] == 4301.0
    assert pd.isna(m.loc["launch__waves_per_multiprocessor", "unit"])  # no unit printed


@pytest.mark.parametrize(("path", "said"), [
    ("foreign/b5b-sergasgr-codealign-readme-ncu-no-metrics-then-device-unsupported-spanish-no-profile.md.log",
     '"Profiling is not supported on device 0. To find out supported GPUs refer --list-chips option."'),
    ("foreign/lanluyuu-cuda-gemm-ncu-error-no-executable.log", "\"'./main' does not exist or is not an executable."),
    ("ncu-text/shra1-25-cml-ncu-target-terminated-traceback-no-result.log",
     '"ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters'),
])
def test_ncu_run_without_results_says_why(path, said, cli):
    """An ncu run that printed no result: the one line quotes ncu's most specific ==ERROR== (not the
    generic 'The application returned an error code'), else its 'No kernels were profiled' /
    'No metrics to collect' warning. Before: only 'no profiler output … found'."""
    line = check_no_profile(path, cli)
    assert "found: Nsight Compute printed no results (" + said in line


def test_ncu_run_that_collected_nothing_quotes_the_warning(tmp_path):
    from profconv.errors import NoProfileFound

    text = ("==WARNING== No metrics to collect found in sections.\n"
            "==PROF== Connected to process 32564 (/home/u/gemv)\n"
            "==PROF== Disconnected from process 32564\n"
            "[32564] gemv@127.0.0.1\n"
            "  gemv_kernel(const float *, float *, int) (4, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 12.0\n")
    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, text)
    assert str(e.value).endswith('Nsight Compute printed no results ("No metrics to collect found in sections.")')


def test_metric_table_shows_the_printed_digits(cli):
    """The terminal's Metrics table shows a metric's value as printed: '1,048,576' threads and
    '63,656.74' cycles (before: '1.04858e+06' and '63,656.7', six significant digits)."""
    r = cli("parse", "tests/data/ncu-text/b5b-ishana23g-heat-eq-ncu2025-cc8.9-workload-distribution-opt-separators-tail-excerpt.log")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    threads = next(x for x in lines if " Threads " in x)
    assert threads.split()[-1] == "1,048,576"
    active = next(x for x in lines if "SM Active Cycles" in x)
    assert active.split()[-1] == "63,656.74"
    assert "e+0" not in r.stdout
