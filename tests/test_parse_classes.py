"""Exact-value regression tests, one per parser fix whose real-log test files were removed.

Every input here is SYNTHETIC: written by hand from the tools' output formats (kernel names and
numbers made up), never copied from a fetched log. Each test pins the rows, their values and
what is (not) reported as unplaced.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import profconv
from profconv.errors import NoProfileFound
from profconv.parse.units import AMBIGUOUS_NOTE
from tests.parse_invariants import check_all


def _parse(text: str):
    ps = profconv.parse_text(text)
    check_all(ps, text)
    return ps


def _sec(ps, section: str) -> pd.DataFrame:
    return ps.frame[ps.frame["section"] == section].reset_index(drop=True)


def _nan(x) -> bool:
    return x is pd.NA or (isinstance(x, float) and math.isnan(x))


def _cell(col: str, v):
    if _nan(v):
        return None
    if col in ("calls", "line_start", "line_end"):
        return int(v)
    if isinstance(v, float):
        return float(f"{v:.12g}")  # ms x 1e6 in binary floating point: compare the printed digits
    return v


def _records(frame: pd.DataFrame, cols: list[str]) -> list[tuple]:
    """The rows' `cols` as tuples, in frame order; NaN/NA as None."""
    return [tuple(_cell(c, v) for c, v in zip(cols, rec)) for rec in frame[cols].itertuples(index=False)]


SUMMARY = ["name", "total_ns", "calls", "avg_ns", "min_ns", "max_ns", "line_start", "line_end"]
METRIC = ["name", "calls", "metric", "unit", "value", "value_text", "line_start"]


# 1. PGI 2012/2013 "Accelerator Kernel Timing data": no devicenum, 'region entered N times',
#    'time(us): total=… init= region=…' with a valueless key, 'time(us): init=0' with no total.
PGI_2013 = """\
Accelerator Kernel Timing data
/home/dev/heat/heat2d.c
  main
    30: region entered 1 time
        time(us): init=0
    41: region entered 500 times
        time(us): total=32,903 init= region=32,903
                  kernels=30,110 data=2,793
        w/o init: total=32,903 max=120 min=61 avg=65
        44: kernel launched 500 times
            grid: [64x256]  block: [32x4]
            time(us): total=30,110 max=80 min=58 avg=60
"""


def test_pgi_2013_accelerator_timing():
    ps = _parse(PGI_2013)
    assert ps.unplaced == []
    assert ps.notes == []
    assert set(ps.frame["tool"]) == {"nvhpc-acc"}
    regions = _sec(ps, "openacc").sort_values("line_start")
    assert _records(regions, ["name", "total_ns", "calls", "line_start", "line_end"]) == [
        ("main@heat2d.c:30 region", None, 1, 4, 4),  # 'init=0' only: no total, nothing invented
        ("main@heat2d.c:41 region", 32_903_000.0, 500, 6, 7),  # 'init=' (no value) ignored
    ]
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("main@heat2d.c:44 kernel", 30_110_000.0, 500, 60_000.0, 58_000.0, 80_000.0, 10, 12),
    ]


# 2. nvprof --metrics summaries: text, CSV, and a fragment starting at a 'Kernel:' line.
METRICS_TEXT = """\
==31337== NVPROF is profiling process 31337, command: ./saxpy
==31337== Profiling application: ./saxpy
==31337== Profiling result:
==31337== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: saxpy_kernel(int, float, float const *, float*)
         10                        achieved_occupancy                        Achieved Occupancy    0.861200    0.874500    0.868000
         10                            gld_throughput                    Global Load Throughput  512.40GB/s  530.10GB/s  521.25GB/s
         10                             sm_efficiency                   Multiprocessor Activity      97.10%      98.30%      97.70%
         10                         dram_utilization                 Device Memory Utilization    High (8)    High (9)    High (8)
    Kernel: init_array(float*, int)
          2                        achieved_occupancy                        Achieved Occupancy    0.912000    0.914000    0.913000
"""

METRICS_CSV = """\
==31338== NVPROF is profiling process 31338, command: ./saxpy
==31338== Profiling application: ./saxpy
==31338== Profiling result:
==31338== Metric result:
"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"
"Tesla V100-SXM2-16GB (0)","saxpy_kernel(int, float, float const *, float*)",10,"achieved_occupancy","Achieved Occupancy",0.861200,0.874500,0.868000
"Tesla V100-SXM2-16GB (0)","saxpy_kernel(int, float, float const *, float*)",10,"gld_throughput","Global Load Throughput",512.40GB/s,530.10GB/s,521.25GB/s
"Tesla V100-SXM2-16GB (0)","init_array(float*, int)",2,"sm_efficiency","Multiprocessor Activity",95.10%,96.30%,95.70%
"""

METRICS_FRAGMENT = """\
    Kernel: stencil_step(float const *, float*, int, int)
        100                        achieved_occupancy                        Achieved Occupancy    0.701000    0.722000    0.715500
        100                            gst_throughput                   Global Store Throughput  201.50GB/s  210.75GB/s  205.00GB/s
"""

SAXPY = "saxpy_kernel(int, float, float const *, float*)"


def test_nvprof_metrics_text():
    ps = _parse(METRICS_TEXT)
    assert ps.unplaced == []
    assert list(ps.frame["section"]) == ["metric"] * 5
    assert _records(ps.frame, METRIC) == [
        (SAXPY, 10, "achieved_occupancy", None, 0.868, None, 8),
        (SAXPY, 10, "gld_throughput", "GB/s", 521.25, None, 9),
        (SAXPY, 10, "sm_efficiency", "%", 97.7, None, 10),
        (SAXPY, 10, "dram_utilization", None, 8.0, "High (8)", 11),  # utilization level kept as text
        ("init_array(float*, int)", 2, "achieved_occupancy", None, 0.913, None, 13),
    ]


def test_nvprof_metrics_csv():
    ps = _parse(METRICS_CSV)
    assert ps.unplaced == []
    assert list(ps.frame["section"]) == ["metric"] * 3
    assert _records(ps.frame, METRIC) == [
        (SAXPY, 10, "achieved_occupancy", None, 0.868, None, 6),
        (SAXPY, 10, "gld_throughput", "GB/s", 521.25, None, 7),
        ("init_array(float*, int)", 2, "sm_efficiency", "%", 95.7, None, 8),
    ]


def test_nvprof_metrics_fragment_from_kernel_line():
    ps = _parse(METRICS_FRAGMENT)
    assert ps.unplaced == []
    assert set(ps.frame["tool"]) == {"nvprof"}
    name = "stencil_step(float const *, float*, int, int)"
    assert _records(ps.frame, METRIC) == [
        (name, 100, "achieved_occupancy", None, 0.7155, None, 2),
        (name, 100, "gst_throughput", "GB/s", 205.0, None, 3),
    ]


# 3. nvprof --normalized-time-unit ms: a units row under the header, bare numbers in that unit.
NORMALIZED_MS = """\
==4242== NVPROF is profiling process 4242, command: ./matmul
==4242== Profiling application: ./matmul
==4242== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
                        %        ms                  ms        ms        ms
 GPU activities:   62.50  25.00000       100  0.250000  0.240000  0.260000  matmul_kernel(float*, float*, float*, int)
                   37.50  15.00000         2  7.500000  7.400000  7.600000  [CUDA memcpy HtoD]
      API calls:   90.00  180.0000         3  60.00000  0.010000  179.9000  cudaMalloc
                   10.00  20.40000       102  0.200000  0.150000  0.900000  cudaLaunchKernel
"""


def test_nvprof_normalized_time_unit_ms():
    ps = _parse(NORMALIZED_MS)
    assert ps.unplaced == []
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("matmul_kernel(float*, float*, float*, int)", 25e6, 100, 250e3, 240e3, 260e3, 6, 6),
        ("[CUDA memcpy HtoD]", 15e6, 2, 7.5e6, 7.4e6, 7.6e6, 7, 7),
    ]
    assert _records(_sec(ps, "api"), SUMMARY) == [
        ("cudaMalloc", 180e6, 3, 60e6, 10e3, 179.9e6, 8, 8),
        ("cudaLaunchKernel", 20.4e6, 102, 200e3, 150e3, 900e3, 9, 9),
    ]
    assert list(_sec(ps, "gpu")["time_pct"]) == [62.5, 37.5]


# 4. nvprof --csv summary with no Type column, units inside the cells, an unquoted name with commas.
CSV_NO_TYPE = """\
==4243== NVPROF is profiling process 4243, command: ./matmul
==4243== Profiling application: ./matmul
==4243== Profiling result:
"Time(%)","Time","Calls","Avg","Min","Max","Name"
62.500000,25.000000ms,100,250.00000us,240.00000us,260.00000us,matmul_kernel(float*, float*, float*, int)
37.500000,15.000000ms,2,7.500000ms,7.400000ms,7.600000ms,"[CUDA memcpy HtoD]"
"""


def test_nvprof_csv_without_type_column():
    ps = _parse(CSV_NO_TYPE)
    assert ps.unplaced == []
    assert list(ps.frame["section"]) == ["gpu", "gpu"]
    assert _records(ps.frame, SUMMARY) == [
        ("matmul_kernel(float*, float*, float*, int)", 25e6, 100, 250e3, 240e3, 260e3, 5, 5),
        ("[CUDA memcpy HtoD]", 15e6, 2, 7.5e6, 7.4e6, 7.6e6, 6, 6),
    ]


# 5. nvprof --cpu-profiling call tree: not GPU activities.
CPU_PROFILING = """\
==6001== NVPROF is profiling process 6001, command: ./nbody
==6001== Profiling application: ./nbody
==6001== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:  100.00%  40.000ms        20  2.0000ms  1.9000ms  2.1000ms  integrate_bodies(float4*, float4*, float, int)
      API calls:  100.00%  50.000ms        20  2.5000ms  2.4000ms  2.6000ms  cudaDeviceSynchronize

======== CPU profiling result (bottom up):
Time(%)      Time  Name
 60.00%  1.20000s  compute_forces
 60.00%  1.20000s  | main
 60.00%  1.20000s  |   __libc_start_main
 40.00%  0.80000s  cudaDeviceSynchronize
 40.00%  0.80000s  | main
======== Data collected at 100Hz frequency
"""


def test_nvprof_cpu_profiling_tree_is_not_gpu():
    ps = _parse(CPU_PROFILING)
    assert ps.unplaced == []
    assert len(ps.frame) == 2
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("integrate_bodies(float4*, float4*, float, int)", 40e6, 20, 2e6, 1.9e6, 2.1e6, 5, 5),
    ]
    assert _records(_sec(ps, "api"), SUMMARY) == [
        ("cudaDeviceSynchronize", 50e6, 20, 2.5e6, 2.4e6, 2.6e6, 6, 6),
    ]
    assert not ps.frame["name"].str.contains("compute_forces|main").any()


# 6. nvprof --print-gpu-trace with Unified Memory columns.
def _gpu_trace_um() -> str:
    cols = ["Start", "Duration", "Grid Size", "Block Size", "Regs*", "SSMem*", "DSMem*", "Size", "Throughput",
            "SrcMemType", "DstMemType", "Device", "Context", "Stream", "Unified Memory", "Virtual Address", "Name"]
    widths = [9, 10, 16, 16, 8, 9, 9, 10, 12, 12, 12, 24, 9, 8, 16, 17]
    dev = "Tesla P100-PCIE (0)"
    rows = [
        ["512.30ms", "1.2000us", "-", "-", "-", "-", "-", "4.0000KB", "3.1789GB/s", "Pageable", "Device", dev,
         "1", "7", "-", "-", "[CUDA memcpy HtoD]"],
        ["513.10ms", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", dev,
         "-", "-", "3", "0x7f1c20000000", "[Unified Memory GPU page faults]"],
        ["513.40ms", "25.600us", "(256 1 1)", "(256 1 1)", "16", "0B", "0B", "-", "-", "-", "-", dev,
         "1", "7", "-", "-", "vec_add(float*, float*, float*, int)"],
        ["514.00ms", "2.5600us", "-", "-", "-", "-", "-", "64.000KB", "-", "-", "-", dev,
         "-", "-", "-", "0x7f1c20010000", "[Unified Memory Memcpy HtoD]"],
        ["514.20ms", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", dev,
         "-", "-", "5", "0x7f1c20020000", "[Unified Memory GPU page faults]"],
    ]

    def fmt(r: list[str]) -> str:
        return "".join(c.rjust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1]

    return "\n".join([
        "==7001== NVPROF is profiling process 7001, command: ./um_vec",
        "==7001== Profiling application: ./um_vec",
        "==7001== Profiling result:",
        fmt(cols),
        *(fmt(r) for r in rows),
        "",
        "Regs: Number of registers used per CUDA thread.",
        "",
    ])


def test_nvprof_gpu_trace_unified_memory():
    text = _gpu_trace_um()
    ps = _parse(text)
    assert ps.unplaced == []
    trace = _sec(ps, "gpu-trace")
    assert _records(trace, ["name", "start_ns", "total_ns", "calls", "line_start"]) == [
        ("[CUDA memcpy HtoD]", 512.3e6, 1200.0, 1, 5),
        ("[Unified Memory GPU page faults]", 513.1e6, None, 1, 6),  # '-' duration: no time, not 0
        ("vec_add(float*, float*, float*, int)", 513.4e6, 25600.0, 1, 7),
        ("[Unified Memory Memcpy HtoD]", 514.0e6, 2560.0, 1, 8),
        ("[Unified Memory GPU page faults]", 514.2e6, None, 1, 9),
    ]
    # as in nvprof's own summary, Unified Memory events are not GPU activities: they are summed apart
    summary = _sec(ps, "gpu").set_index("name")
    assert sorted(summary.index) == ["[CUDA memcpy HtoD]", "vec_add(float*, float*, float*, int)"]
    assert summary.loc["vec_add(float*, float*, float*, int)", "total_ns"] == 25600.0
    assert summary.loc["[CUDA memcpy HtoD]", "total_ns"] == 1200.0
    assert summary["share"].sum() == 1.0 and summary.loc["vec_add(float*, float*, float*, int)", "share"] > 0.95
    um = _sec(ps, "unified-memory").set_index("name")
    assert len(um) == 2
    faults = um.loc["[Unified Memory GPU page faults]"]
    assert int(faults["calls"]) == 2
    assert math.isnan(faults["total_ns"])  # summed with min_count: no invented 0
    assert um.loc["[Unified Memory Memcpy HtoD]", "total_ns"] == 2560.0


# 7. ncu --page details --csv (2024+) with Rule Name/Rule Type/Rule Description/Estimated Speedup columns.
_NCU_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
             '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type",'
             '"Rule Description","Estimated Speedup Type","Estimated Speedup"')
_NCU_K = ('"0","9100","vec_add","127.0.0.1","vec_add(float *, float *, float *, int)","1","7","(256, 1, 1)",'
          '"(4096, 1, 1)","0","9.0"')
NCU_CSV_RULES = "\n".join([
    "==PROF== Connected to process 9100 (/home/dev/bin/vec_add)",
    '==PROF== Profiling "vec_add" - 0: 0%....50%....100% - 9 passes',
    "==PROF== Disconnected from process 9100",
    _NCU_HEAD,
    _NCU_K + ',"GPU Speed Of Light Throughput","DRAM Frequency","Ghz","2.62"',  # rule columns left off
    _NCU_K + ',"GPU Speed Of Light Throughput","Memory Throughput","%","87.41"',
    _NCU_K + ',"GPU Speed Of Light Throughput","Duration","us","12.35","","","","",""',
    _NCU_K + ',"GPU Speed Of Light Throughput","","","","SOLBottleneck","OPT",'
             '"Memory is more heavily utilized than Compute: look at Memory Workload Analysis.","global","42.5"',
    _NCU_K + ',"Launch Statistics","Registers Per Thread","register/thread","16","","","","",""',
    _NCU_K + ',"Launch Statistics","","","","LaunchConfiguration","INF","The grid fills all SMs several times.","",""',
    "",
])


def test_ncu_details_csv_with_rule_columns():
    ps = _parse(NCU_CSV_RULES)
    assert ps.unplaced == []
    metrics = _sec(ps, "ncu-metric")
    k = "vec_add(float *, float *, float *, int)"
    assert _records(metrics, ["name", "metric", "unit", "value", "value_text", "line_start"]) == [
        (k, "DRAM Frequency", "Ghz", 2.62, None, 5),
        (k, "Memory Throughput", "%", 87.41, None, 6),
        (k, "Duration", "us", 12.35, None, 7),
        (k, "Registers Per Thread", "register/thread", 16.0, None, 9),
    ]
    assert not metrics["metric"].isin(["", "SOLBottleneck", "LaunchConfiguration"]).any()
    assert _records(_sec(ps, "gpu"), SUMMARY) == [(k, 12350.0, 1, 12350.0, 12350.0, 12350.0, 7, 7)]
    assert len(ps.frame) == 5


# 8. ncu console: OPT/WRN/INF advice blocks and program output after a section are not metric rows.
NCU_CONSOLE = """\
==PROF== Connected to process 9200 (/home/dev/bin/reduce)
==PROF== Profiling "reduce_sum" - 0: 0%....50%....100% - 9 passes
sum = 1048576.000000
==PROF== Disconnected from process 9200
[9200] reduce@127.0.0.1
  reduce_sum(float const *, float *, int) (1024, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ------------- ------------
    Metric Name               Metric Unit Metric Value
    ----------------------- ------------- ------------
    DRAM Frequency          cycle/nsecond         1.51
    Memory Throughput                   %        61.27
    Duration                      usecond        18.40
    ----------------------- ------------- ------------

    OPT   This kernel exhibits low compute throughput and memory bandwidth utilization relative to the peak
          performance of this device. Achieved compute throughput and/or memory bandwidth below 60.0% of peak
          typically indicate latency issues.

    Section: Launch Statistics
    -------------------------------- --------------- ---------------
    Metric Name                          Metric Unit    Metric Value
    -------------------------------- --------------- ---------------
    Block Size                                                   256
    Function Cache Configuration                     CachePreferNone
    Registers Per Thread             register/thread              20
    -------------------------------- --------------- ---------------

    WRN   A wave of thread blocks is defined as the maximum number of blocks that can be executed in parallel on
          the target GPU. The number of blocks in a wave is 432 and 12 waves are launched.
    INF   Occupancy looks fine: 100 % theoretical.

checksum ok: 1048576 elements, 3 iterations
"""


def test_ncu_console_advice_and_program_output():
    ps = _parse(NCU_CONSOLE)
    assert ps.unplaced == []
    metrics = _sec(ps, "ncu-metric")
    k = "reduce_sum(float const *, float *, int)"
    assert _records(metrics, ["name", "metric", "unit", "value", "value_text", "line_start"]) == [
        (k, "DRAM Frequency", "cycle/nsecond", 1.51, None, 11),
        (k, "Memory Throughput", "%", 61.27, None, 12),
        (k, "Duration", "usecond", 18.4, None, 13),
        (k, "Block Size", None, 256.0, None, 24),
        (k, "Function Cache Configuration", None, None, "CachePreferNone", 25),
        (k, "Registers Per Thread", "register/thread", 20.0, None, 26),
    ]
    assert _records(_sec(ps, "gpu"), SUMMARY) == [(k, 18400.0, 1, 18400.0, 18400.0, 18400.0, 13, 13)]
    assert len(ps.frame) == 7


# 9. nsys 2019/2020 console tables: a blank line between header and dashes and between rows;
#    a header glued to its dashes (line break lost).
def _nsys_2020() -> str:
    head = ["Time(%)", "Total Time (ns)", "Num Calls", "Average", "Minimum", "Maximum", "Name"]
    widths = [7, 15, 9, 12, 10, 11]

    def row(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells[:-1], widths)) + "  " + cells[-1]

    dashes = "  ".join("-" * w for w in widths) + "  " + "-" * 30
    header = row(head)
    return "\n".join([
        "Generating CUDA API Statistics...",
        "CUDA API Statistics (nanoseconds)",
        "",
        header,
        "",
        dashes,
        row(["88.0", "176000000", "4", "44000000.0", "12000", "175900000", "cudaMalloc"]),
        "",
        row(["12.0", "24000000", "200", "120000.0", "9000", "800000", "cudaLaunchKernel"]),
        "",
        "",
        "Generating CUDA Kernel Statistics...",
        "CUDA Kernel Statistics (nanoseconds)",
        "",
        header.ljust(len(dashes)) + dashes,
        row(["75.0", "30000000", "100", "300000.0", "290000", "320000", "jacobi_step(double*, double const*, int)"]),
        row(["25.0", "10000000", "100", "100000.0", "95000", "110000", "residual_norm(double const*, double*, int)"]),
        "",
    ])


def test_nsys_2020_console_blank_lines_and_glued_header():
    ps = _parse(_nsys_2020())
    assert ps.unplaced == []
    assert set(ps.frame["tool"]) == {"nsys"}
    assert _records(_sec(ps, "api"), SUMMARY) == [
        ("cudaMalloc", 176e6, 4, 44e6, 12e3, 175.9e6, 7, 7),
        ("cudaLaunchKernel", 24e6, 200, 120e3, 9e3, 800e3, 9, 9),
    ]
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("jacobi_step(double*, double const*, int)", 30e6, 100, 300e3, 290e3, 320e3, 16, 16),
        ("residual_norm(double const*, double*, int)", 10e6, 100, 100e3, 95e3, 110e3, 17, 17),
    ]


# 10. an nsys status line right under a table ends it and is not unplaced.
NSYS_STATUS_UNDER_TABLE = """\
Generating CUDA Kernel Statistics...
CUDA Kernel Statistics (nanoseconds)

Time(%)  Total Time (ns)  Instances     Average   Minimum   Maximum  Name
-------  ---------------  ---------  ----------  --------  --------  --------------------------------
   80.0         64000000        400    160000.0    150000    175000  conv2d_fwd(float const*, float*)
   20.0         16000000        400     40000.0     38000     45000  relu_inplace(float*, int)
Generating CUDA Memory Operation Statistics...
CUDA Memory Operation Statistics (nanoseconds)

Time(%)  Total Time (ns)  Operations     Average   Minimum   Maximum  Name
-------  ---------------  ----------  ----------  --------  --------  ------------------
  100.0          9000000           3   3000000.0   2900000   3100000  [CUDA memcpy HtoD]

"""


def test_nsys_status_line_under_table():
    ps = _parse(NSYS_STATUS_UNDER_TABLE)
    assert ps.unplaced == []
    assert not ps.frame["name"].str.contains("Generating").any()
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("conv2d_fwd(float const*, float*)", 64e6, 400, 160e3, 150e3, 175e3, 6, 6),
        ("relu_inplace(float*, int)", 16e6, 400, 40e3, 38e3, 45e3, 7, 7),
        ("[CUDA memcpy HtoD]", 9e6, 3, 3e6, 2.9e6, 3.1e6, 13, 13),
    ]


# 11. a name wrapped mid-token at the terminal edge, the continuation starting with ':'.
WRAPPED_NAME = """\
==8100== NVPROF is profiling process 8100, command: ./sort_bench
==8100== Profiling application: ./sort_bench
==8100== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   70.00%  14.000ms        10  1.4000ms  1.3000ms  1.5000ms  void thrust::cuda_cub::core::_kernel_agent<thrust:
:cuda_cub::__fill::functor<thrust::device_ptr<int>, int>, unsigned long>, unsigned long>(int, unsigned long)
                   30.00%  6.0000ms         4  1.5000ms  1.4000ms  1.6000ms  [CUDA memcpy DtoH]
"""


def test_wrapped_name_rejoined_without_space():
    ps = _parse(WRAPPED_NAME)
    assert ps.unplaced == []
    full = ("void thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__fill::functor<thrust::device_ptr<int>, int>,"
            " unsigned long>, unsigned long>(int, unsigned long)")
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        (full, 14e6, 10, 1.4e6, 1.3e6, 1.5e6, 5, 6),
        ("[CUDA memcpy DtoH]", 6e6, 4, 1.5e6, 1.4e6, 1.6e6, 7, 7),
    ]


# 12. markdown '~~~' fences around a log: the closing fence is not unplaced.
FENCED_NVPROF = """\
Here is my profile:

~~~
==8200== NVPROF is profiling process 8200, command: ./fft
==8200== Profiling application: ./fft
==8200== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   90.00%  9.0000ms         3  3.0000ms  2.9000ms  3.1000ms  fft_radix4(float2*, int)
                   10.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  [CUDA memcpy HtoD]
~~~

Why is fft_radix4 so slow?
"""

FENCED_NSYS = """\
~~~
CUDA Kernel Statistics (nanoseconds)

Time(%)  Total Time (ns)  Instances     Average   Minimum   Maximum  Name
-------  ---------------  ---------  ----------  --------  --------  --------------------------------
   80.0         64000000        400    160000.0    150000    175000  conv2d_fwd(float const*, float*)
   20.0         16000000        400     40000.0     38000     45000  relu_inplace(float*, int)
~~~
thanks
"""


def test_tilde_fence_nvprof():
    ps = _parse(FENCED_NVPROF)
    assert ps.unplaced == []
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("fft_radix4(float2*, int)", 9e6, 3, 3e6, 2.9e6, 3.1e6, 8, 8),
        ("[CUDA memcpy HtoD]", 1e6, 1, 1e6, 1e6, 1e6, 9, 9),
    ]
    assert len(ps.frame) == 2


def test_tilde_fence_nsys():
    ps = _parse(FENCED_NSYS)
    assert ps.unplaced == []
    assert _records(_sec(ps, "gpu"), SUMMARY) == [
        ("conv2d_fwd(float const*, float*)", 64e6, 400, 160e3, 150e3, 175e3, 6, 6),
        ("relu_inplace(float*, int)", 16e6, 400, 40e3, 38e3, 45e3, 7, 7),
    ]
    assert len(ps.frame) == 2


# 14. OpenACC timing whose regions print no time of their own (only their kernels do): nothing to
# contradict, so no "Time column contradicts Time(%)" note (the data has neither column).
ACC_REGIONS_WITHOUT_TIME = "\n".join([
    "Running triad",
    "",
    "Accelerator Kernel Timing data",
    "/home/user/src/triad.c",
    "  main  NVIDIA  devicenum=0",
    "    time(us): 1,234",
    "    12: compute region reached 1 time",
    "        12: kernel launched 1 time",
    "            grid: [1024]  block: [128]",
    "             device time(us): total=300 max=300 min=300 avg=300",
    "            elapsed time(us): total=500 max=500 min=500 avg=500",
    "    20: compute region reached 4 times",
    "        20: kernel launched 4 times",
    "            grid: [1024]  block: [128]",
    "             device time(us): total=900 max=230 min=220 avg=225",
    "            elapsed time(us): total=1,000 max=260 min=240 avg=250",
    "",
])


def test_acc_regions_without_time_get_no_contradiction_note():
    ps = _parse(ACC_REGIONS_WITHOUT_TIME)
    assert ps.notes == [] and ps.table_notes == {} and ps.unplaced == []
    assert _records(_sec(ps, "openacc"), ["name", "total_ns", "calls"]) == [
        ("main@triad.c:12 compute region", None, 1),
        ("main@triad.c:20 compute region", None, 4),
    ]
    gpu = _sec(ps, "gpu")
    assert _records(gpu, ["name", "total_ns", "calls", "avg_ns", "min_ns", "max_ns", "share"]) == [
        ("main@triad.c:12 kernel", 300000.0, 1, 300000.0, 300000.0, 300000.0, 0.25),
        ("main@triad.c:20 kernel", 900000.0, 4, 225000.0, 220000.0, 230000.0, 0.75),
    ]


# 15. An Nsight Compute details page pasted without its ==PROF== lines (slides, reports): a kernel
# line, then its sections. Read as ncu; a "Context 1, Stream 7" line with no section is not enough.
NCU_PASTED = "\n".join([
    "# Nsight Compute CLI",
    "",
    "```",
    "srun -n 1 ncu ./stencil",
    "...",
    "  stencil_7pt, 2021-Mar-02 10:11:12, Context 1, Stream 13",
    "   Section: GPU Speed Of Light",
    "    ---------------------------------------------------------------------- --------------- ------------------------------",
    "    DRAM Frequency                                                           cycle/usecond                         877.00",
    "    Duration                                                                       usecond                         250.50",
    "    SM [%]                                                                               %                          41.20",
    "    ---------------------------------------------------------------------- --------------- ------------------------------",
    "```",
    "",
])


def test_ncu_details_pasted_without_prof_lines():
    ps = _parse(NCU_PASTED)
    assert [p.tool for p in ps.profiles] == ["ncu"] and ps.unplaced == []
    assert _records(_sec(ps, "ncu-metric"), ["name", "metric", "unit", "value", "line_start"]) == [
        ("stencil_7pt", "DRAM Frequency", "cycle/usecond", 877.0, 9),
        ("stencil_7pt", "Duration", "usecond", 250.5, 10),
        ("stencil_7pt", "SM [%]", "%", 41.2, 11),
    ]
    assert _records(_sec(ps, "gpu"), ["name", "total_ns", "calls"]) == [("stencil_7pt", 250500.0, 1)]


def test_context_stream_line_alone_is_not_ncu():
    with pytest.raises(NoProfileFound):
        profconv.parse_text("Launched on device 0, Context 1, Stream 7\n  kernel_a, Context 1, Stream 7\ndone\n")


# 16. The legacy CUDA command-line profiler (COMPUTE_PROFILE=1, before nvprof): key=value lines with
# gputime in microseconds, its CSV form, and lines pasted into notes with a line number in front.
CUDAPROF_LOG = "\n".join([
    "# CUDA_PROFILE_LOG_VERSION 2.0",
    "# CUDA_DEVICE 0 GeForce GTX 480",
    "# CUDA_CONTEXT 1",
    "method,gputime,cputime,occupancy",
    "method=[ memcpyHtoD ] gputime=[ 12.500 ] cputime=[ 20.000 ] ",
    "method=[ vec_add ] gputime=[ 40.250 ] cputime=[ 8.000 ] occupancy=[ 1.000 ] ",
    "method=[ vec_add ] gputime=[ 39.750 ] cputime=[ 7.500 ] occupancy=[ 1.000 ] ",
    "method=[ memcpyDtoH ] gputime=[ nan ] cputime=[ 30.000 ] ",
    "",
])

CUDAPROF_CSV = "\n".join([
    "# CUDA_PROFILE_LOG_VERSION 2.0",
    "# CUDA_DEVICE 0 Tesla C1060",
    "# CUDA_PROFILE_CSV 1",
    "method,gputime,cputime,occupancy",
    "memcpyHtoD,3.200,9.000,",
    "stencil_3d,120.000,5.000,0.750",
    "stencil_3d,118.000,5.500,0.750",
    "",
])

CUDAPROF_PASTED = "\n".join([
    "From a run of the renderer::",
    "",
    "    1041 method=[ memcpyHtoD ] gputime=[ 1.280 ] cputime=[ 2.006 ]",
    "    1042 method=[ render ] gputime=[ 5000.500 ] cputime=[ 200.000 ] occupancy=[ 0.500 ]",
    "",
    "The copy back takes as long as the render.",
    "",
])


def test_cuda_command_line_profiler_log():
    ps = _parse(CUDAPROF_LOG)
    assert [(p.tool, p.device) for p in ps.profiles] == [("cudaprof", "GeForce GTX 480")]
    assert [n for n, _ in ps.unplaced] == [8]  # gputime=[ nan ]: reported, never a row
    assert _records(_sec(ps, "gpu-trace"), ["name", "total_ns", "calls", "line_start"]) == [
        ("memcpyHtoD", 12500.0, 1, 5), ("vec_add", 40250.0, 1, 6), ("vec_add", 39750.0, 1, 7),
    ]
    assert _records(_sec(ps, "gpu"), ["name", "total_ns", "calls", "avg_ns", "min_ns", "max_ns"]) == [
        ("memcpyHtoD", 12500.0, 1, 12500.0, 12500.0, 12500.0),
        ("vec_add", 80000.0, 2, 40000.0, 39750.0, 40250.0),
    ]


def test_cuda_command_line_profiler_csv():
    ps = _parse(CUDAPROF_CSV)
    assert [(p.tool, p.device) for p in ps.profiles] == [("cudaprof", "Tesla C1060")] and ps.unplaced == []
    assert _records(_sec(ps, "gpu"), ["name", "total_ns", "calls", "avg_ns"]) == [
        ("memcpyHtoD", 3200.0, 1, 3200.0), ("stencil_3d", 238000.0, 2, 119000.0),
    ]


def test_cuda_command_line_profiler_lines_pasted_with_numbers():
    ps = _parse(CUDAPROF_PASTED)
    assert [p.tool for p in ps.profiles] == ["cudaprof"] and ps.unplaced == []
    assert _records(_sec(ps, "gpu-trace"), ["name", "total_ns", "line_start"]) == [
        ("memcpyHtoD", 1280.0, 3), ("render", 5000500.0, 4),
    ]
    assert len(ps.frame) == 4


# 17. `nsys analyze` (expert-system rules) output lists single slow calls, not a time summary: the
# error says what it is instead of 'no profiler output'.
NSYS_RULES = "\n".join([
    "Processing [report2.sqlite] with [/opt/nvidia/nsight-systems/2023.2.1/host-linux-x64/rules/cuda_api_sync.py]... ",
    "",
    " ** CUDA Synchronization APIs (cuda_api_sync):",
    "",
    " Duration (ns)  Start (ns)   PID    TID         API Name        ",
    " -------------  ----------  -----  -----  ----------------------",
    "       150,000   2,000,000  4,321  4,321  cudaDeviceSynchronize",
    "",
])


def test_nsys_expert_rules_output_is_named_in_the_error():
    with pytest.raises(NoProfileFound, match=r": nsys expert-system rules output \(cuda_api_sync\) lists single slow "
                                             r"calls, not a time summary: nothing to rank"):
        profconv.parse_text(NSYS_RULES)


# 18. nvprof Unified Memory trailer lines ("Total CPU Page faults: N") whose value is not a count
#     (a decimal, a lone comma, a dash): no row is invented from a digit prefix, nothing raises,
#     and the line is reported unplaced.
_UM_SUMMARY = """==1234== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:  100.00%  10.000us         1  10.000us  10.000us  10.000us  k(float*)
==1234== Unified Memory profiling result:
Device "Tesla V100 (0)"
   Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name
      12  64.000KB  4.0000KB  0.9961MB  768.0000KB  90.00000us  Host To Device
Total CPU Page faults: {faults}
Total CPU thrashes: {thrashes}
"""


def test_unified_memory_trailer_counts():
    ps = _parse(_UM_SUMMARY.format(faults="1,234", thrashes="7"))
    um = _sec(ps, "unified-memory").set_index("name")
    assert um.loc["Total CPU Page faults", "calls"] == 1234
    assert um.loc["Total CPU thrashes", "calls"] == 7
    assert ps.unplaced == []


@pytest.mark.parametrize(("faults", "thrashes"), [("1.4", ",-"), ("12,34", ","), ("-", "1e3")])
def test_unified_memory_trailer_that_is_not_a_count_is_unplaced(faults, thrashes):
    text = _UM_SUMMARY.format(faults=faults, thrashes=thrashes)
    ps = _parse(text)
    names = set(_sec(ps, "unified-memory")["name"])
    assert "Total CPU Page faults" not in names and "Total CPU thrashes" not in names
    assert ps.unplaced == [(8, f"Total CPU Page faults: {faults}"), (9, f"Total CPU thrashes: {thrashes}")]


# ---------------------------------------------------------------- logs cut short

CUT_SUMMARY = """==17612== Profiling application: ./main
==17612== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   60.00%  3.0000ms       300  10.000us  9.0000us  11.000us  fill(void)
                   40.00%  2.0000ms       100  20.000us  19.000us  21.000us  reduce(void)
      API calls:   95.00%  95.000ms         2  47.500ms     564ns  95.000ms  cudaEventCreate
                    5.00%  5.0000ms       800  6.2500us  1.0040us  290.27us  cudaDeviceSynchronize
                    0.00%     917ns
"""


def test_a_summary_row_cut_by_the_end_of_the_log_is_reported():
    """A log cut inside a row (a copy that stopped, a disk that filled): the row's numbers wait for a
    name that never comes; at the end of the input they are reported as unplaced (they had been
    dropped without a word), and the rows before them are kept."""
    ps = _parse(CUT_SUMMARY)
    api = _sec(ps, "api")
    assert list(api["name"]) == ["cudaEventCreate", "cudaDeviceSynchronize"]
    assert list(api["total_ns"]) == [95e6, 5e6]
    assert list(_sec(ps, "gpu")["calls"]) == [300, 100]
    assert [n for n, _ in ps.unplaced] == [8]


CUT_TRACE = """==2020== Profiling application: ./vectorAdd
==2020== Profiling result:
   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name
212.45ms  23.648us                    -               -         -         -         -  195.31KB  7.8763GB/s      Pinned      Device  Tesla T4 (0)         1         7  [CUDA memcpy HtoD]
212.48ms  7.8410us            (196 1 1)       (256 1 1)        16        0B        0B         -           -           -           -  Tesla T4 (0)         1         7  vectorAdd(float const *, float const *, float*, int) [116]
212.50ms  20.738
"""


def test_a_trace_row_cut_by_the_end_of_the_log_is_reported():
    """A trace row that does not read (cut short: a duration without its unit, no name) starts with
    a time, so it is one of the trace's rows: reported as unplaced, never dropped; the rows before it
    are kept and summed."""
    ps = _parse(CUT_TRACE)
    trace = _sec(ps, "gpu-trace")
    assert list(trace["total_ns"]) == [23648.0, 7841.0] and list(trace["start_ns"]) == [212450000.0, 212480000.0]
    assert [n for n, _ in ps.unplaced] == [6]
    gpu = _sec(ps, "gpu")
    assert sorted(gpu["total_ns"]) == [7841.0, 23648.0]


# Numbers in another locale in ncu output: each metric value used to be read on its own, so de_DE's
# '524.288' (thousands) came out as 524.288. The decimal mark is decided per kernel (all of its
# sections) on the console page and per page in --csv, from all the values; undecided -> flagged.
def _ncu_console(values: dict[str, tuple[str, str]], *more: str) -> str:
    rule = "    " + " ".join("-" * w for w in (32, 15, 15))
    lines = ["==PROF== Connected to process 9300 (/home/dev/bin/scale)",
             "[9300] scale@127.0.0.1",
             "  scale(float *, int) (2048, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6",
             "    Section: Launch Statistics", rule,
             f"    {'Metric Name':<32} {'Metric Unit':>15} {'Metric Value':>15}", rule]
    lines += [f"    {name:<32} {unit:>15} {value:>15}" for name, (unit, value) in values.items()]
    return "\n".join([*lines, rule, *more, ""])


K_SCALE = "scale(float *, int)"
LOCALE_NCU = ["name", "metric", "unit", "value", "value_text", "line_start"]


@pytest.mark.parametrize(("threads", "duration", "grid"), [
    ("524.288", "12,50", "2.048"),  # de_DE
    ("524'288", "12,50", "2'048"),  # de_CH
    ("524\u202f288", "12,50", "2\u202f048"),  # fr_FR
    ("524,288", "12.50", "2,048"),  # C: read as it always was
])
def test_ncu_console_section_in_another_locale(threads, duration, grid):
    ps = _parse(_ncu_console({"Grid Size": ("", grid), "Threads": ("thread", threads),
                              "Duration": ("usecond", duration)}))
    assert ps.unplaced == [] and ps.table_notes == {}
    assert _records(_sec(ps, "ncu-metric"), LOCALE_NCU) == [
        (K_SCALE, "Grid Size", None, 2048.0, None, 8),
        (K_SCALE, "Threads", "thread", 524288.0, None, 9),
        (K_SCALE, "Duration", "usecond", 12.5, None, 10),
    ]
    assert _records(_sec(ps, "gpu"), SUMMARY) == [(K_SCALE, 12500.0, 1, 12500.0, 12500.0, 12500.0, 10, 10)]


@pytest.mark.parametrize("mark", [".", ","])
def test_ncu_console_section_of_only_ambiguous_values_is_flagged_not_guessed(mark):
    """Every value 'ddd.ddd' (or 'ddd,ddd'): thousands or decimals, nothing in the kernel's sections
    says which. The cells are left empty and the table says why; a text value stays text."""
    ps = _parse(_ncu_console({"Grid Size": ("", f"2{mark}048"), "Threads": ("thread", f"524{mark}288"),
                              "Cache Configuration": ("", "CachePreferNone")}))
    assert ps.unplaced == []
    assert _records(_sec(ps, "ncu-metric"), LOCALE_NCU) == [
        (K_SCALE, "Grid Size", None, None, None, 8),
        (K_SCALE, "Threads", "thread", None, None, 9),
        (K_SCALE, "Cache Configuration", None, None, "CachePreferNone", 10),
    ]
    [notes] = ps.table_notes.values()
    assert len(notes) == 1 and "decimal mark" in notes[0] and f"{K_SCALE}: numbers such as" in notes[0]


def test_ncu_console_decides_per_kernel():
    """A second kernel's sections decide its own mark: its '1,5' does not make the first kernel's
    '524,288' a decimal (each kernel's values are read once its sections end: linear)."""
    second = ["  tail(float *) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7, Device 0, CC 8.6",
              "    Section: Launch Statistics", "    " + " ".join("-" * w for w in (32, 15, 15)),
              f"    {'Waves Per SM':<32} {'':>15} {'1,5':>15}",
              "    " + " ".join("-" * w for w in (32, 15, 15))]
    ps = _parse(_ncu_console({"Threads": ("thread", "524,288"), "Duration": ("usecond", "12.50")}, *second))
    assert _records(_sec(ps, "ncu-metric"), ["name", "metric", "value"]) == [
        (K_SCALE, "Threads", 524288.0), (K_SCALE, "Duration", 12.5), ("tail(float *)", "Waves Per SM", 1.5)]
    assert ps.table_notes == {}


def _ncu_csv(*values: tuple[str, str, str]) -> str:
    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name",' \
           '"Metric Name","Metric Unit","Metric Value"'
    k = '"0","9400","scale","127.0.0.1","scale(float *, int)","1","7","Launch Statistics"'
    return "\n".join(["==PROF== Connected to process 9400 (/home/dev/bin/scale)", head,
                      *(f'{k},"{m}","{u}","{v}"' for m, u, v in values), ""])


@pytest.mark.parametrize(("threads", "duration", "flagged"), [
    ("524.288", "12,50", False),  # de_DE: 524288 and 12.5
    ("524,288", "12.50", False),  # C
    ("524.288", "12.500", True),  # nothing says which: flagged, not guessed
])
def test_ncu_csv_page_in_another_locale(threads, duration, flagged):
    ps = _parse(_ncu_csv(("Threads", "thread", threads), ("Duration", "usecond", duration)))
    assert ps.unplaced == []
    got = _records(_sec(ps, "ncu-metric"), ["metric", "value", "value_text", "line_start"])
    if flagged:
        assert got == [("Threads", None, None, 3), ("Duration", None, None, 4)]
        [[note]] = ps.table_notes.values()
        assert note.endswith(": " + AMBIGUOUS_NOTE)
        assert _sec(ps, "gpu").empty
    else:
        assert got == [("Threads", 524288.0, None, 3), ("Duration", 12.5, None, 4)]
        assert ps.table_notes == {}


@pytest.mark.parametrize(("duration", "requests"), [("12.50", "524,288"), ("12,50", "524.288")])
def test_ncu_console_kernel_of_integers_takes_the_runs_mark(duration, requests):
    """A kernel whose sections hold only 'ddd,ddd' counts (`--metrics` of requests) is undecided on
    its own; the other kernels of the same run (one process prints in one locale) decide it."""
    rule = "    " + " ".join("-" * w for w in (32, 15, 15))
    second = ["  gather(float *) (64, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 8.6",
              "    Section: Command line profiler metrics", rule,
              f"    {'l1tex__t_requests.sum':<32} {'request':>15} {requests:>15}", rule]
    ps = _parse(_ncu_console({"Duration": ("usecond", duration)}, *second))
    assert _records(_sec(ps, "ncu-metric"), ["name", "metric", "value"]) == [
        (K_SCALE, "Duration", 12.5), ("gather(float *)", "l1tex__t_requests.sum", 524288.0)]
    assert ps.table_notes == {} and ps.unplaced == []


NCU_SUMMARY_DE = """\
==PROF== Disconnected from process 9500
[9500] scale@127.0.0.1
  scale(float *, int) (2048, 1, 1)x(256, 1, 1), Device 0, CC 8.6, Invocations 4
    Section: Launch Statistics
    ------------------------- ----------- ------------ ------------ ------------
    Metric Name               Metric Unit      Minimum      Maximum      Average
    ------------------------- ----------- ------------ ------------ ------------
    Duration                      usecond        12,25        13,75        12,50
    Threads                        thread      524.288      524.288      524.288
    ------------------------- ----------- ------------ ------------ ------------
"""


def test_ncu_print_summary_in_another_locale():
    """--print-summary's Minimum/Maximum/Average in de_DE: read in the kernel's decimal mark, and
    the duration row's GPU row from them (4 launches, no total printed)."""
    ps = _parse(NCU_SUMMARY_DE)
    assert ps.unplaced == [] and list(ps.table_notes) == [(1, "gpu")]  # the note: no total printed
    assert _records(_sec(ps, "ncu-metric"), ["metric", "value_min", "value_max", "value"]) == [
        ("Duration", 12.25, 13.75, 12.5), ("Threads", 524288.0, 524288.0, 524288.0)]
    assert _records(_sec(ps, "gpu"), ["name", "calls", "avg_ns", "min_ns", "max_ns"]) == [
        (K_SCALE, 4, 12500.0, 12250.0, 13750.0)]


def test_parse_says_why_an_ncu_metric_cell_is_empty(cli, tmp_path):
    """The flagged table's note is printed under the Metrics table, where its '—' cells are."""
    log = tmp_path / "de.log"
    log.write_text(_ncu_console({"Grid Size": ("", "2.048"), "Threads": ("thread", "524.288")}), encoding="utf-8")
    r = cli("parse", log)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    at = lines.index("Metrics")
    assert [ln.split() for ln in lines[at + 3 : at + 5]] == [["scale", "Grid", "Size", "—"],
                                                             ["scale", "Threads", "thread", "—"]]
    assert lines[at + 5] == f"  warning: lines 3-9: {K_SCALE}: {AMBIGUOUS_NOTE}"
