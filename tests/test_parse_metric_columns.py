"""nvprof --metrics / --events summaries keep every column they print, typed: the invocations (calls),
the description, Min, Max, Avg (value) and an event's Total, each in the row's unit as printed ('%',
'GB/s', 'MB/s'), a text value ('Low (1)', 'Idle (0)', n/a) as text per column, never a wrong number;
text and --csv forms, real files and synthetic ones. ncu --print-summary's Minimum/Maximum/Average
likewise. The terminal's metrics table shows Min, Max and Avg (and Total); --json and --csv carry them.
"""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

import profconv
from tests.parse_invariants import check_all

DATA = "tests/data/"
COLUMNS = ["name", "calls", "metric", "description", "unit", "value", "value_min", "value_max", "value_total",
           "value_text", "value_text_min", "value_text_max"]
NAN = float("nan")


def _clean(v):
    """A cell as a comparable Python value: <NA>/None -> None, NaN stays NaN (compared by _same)."""
    if v is None or v is __import__("pandas").NA:
        return None
    if isinstance(v, float):
        return v
    if hasattr(v, "item"):
        return v.item()
    return v


def _same(got: tuple, want: tuple) -> bool:
    return len(got) == len(want) and all(
        (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b
        for a, b in zip(got, want))


def _at(ps, line: int) -> tuple:
    f = ps.frame
    rows = f[(f["section"] == "metric") & (f["line_start"] == line)]
    assert len(rows) == 1, (line, len(rows))
    return tuple(_clean(rows.iloc[0][c]) for c in COLUMNS)


def _check(ps, expected: dict[int, tuple]) -> None:
    for line, want in expected.items():
        got = _at(ps, line)
        assert _same(got, want), (line, got, want)


GOL = "changeCellState(char*, char*, int, int)"
DARKNET = "normalize_kernel(int, float*, float*, float*, int, int, int)"
KOKKOS = ("__nv_static_59__46_tmpxft_0001a605_00000000_6_cabana_code_cpp1_ii_a54055bf__ZN6Kokkos4Impl33cuda_parallel_"
          "launch_local_memoryINS0_11ParallelForIZ13particle_pushEUliE_NS_11RangePolicyIJNS_4CudaEEEES5_EEEEvT_")
REDUCE = "void better_reduce_kernel<unsigned int=1024>(float*, float*, unsigned int, unsigned int)"
JETSON = ("_ZN83_GLOBAL__N__59_tmpxft_00000286_00000000_8_Distributions_compute_72_cpp1_ii_c3aa7ee643distribution_"
          "elementwise_grid_stride_kernelIfLi4EZZZN2at6native18normal_kernel_cudaERNS1_14TensorIteratorEddPNS1_9Gene"
          "ratorEENKUlvE_clEvENKUlvE0_clEvEUlP24curandStatePhilox4_32_10E0_ZNS_27distribution_nullary_kernelIffLi4ES"
          "B_ZZZNS2_18normal_kernel_cudaES4_ddS6_ENKS7_clEvENKS8_clEvEUlfE_EEvS4_PNS1_13CUDAGeneratorERKT2_T3_EUlif"
          "E_EEviSt4pairImmET1_SG_")

# file -> {line: (name, calls, metric, description, unit, value (Avg), Min, Max, Total, text, text Min, text Max)}
REAL = {
    "nvprof-metrics/ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log": {
        8: (GOL, 100, "branch_efficiency", "Branch Efficiency", "%", 99.92, 99.90, 99.95, NAN, None, None, None),
        11: (GOL, 100, "ipc", "Executed IPC", None, 2.507215, 2.299542, 2.539899, NAN, None, None, None),
        13: (GOL, 100, "gld_requested_throughput", "Requested Global Load Throughput", "GB/s", 1.9424, 1.8814, 1.9626,
             NAN, None, None, None),
        14: (GOL, 100, "gst_requested_throughput", "Requested Global Store Throughput", "MB/s", 216.58, 209.77,
             218.82, NAN, None, None, None),
        # Min printed '0.00000B/s' beside an Avg in GB/s: zero is zero in any unit
        23: (GOL, 100, "dram_read_throughput", "Device Memory Read Throughput", "GB/s", 1.2132, 0.0, 4.0291, NAN,
             None, None, None),
        # Max printed '1.1311GB/s' beside an Avg in MB/s: nvprof's scale is not assumed, the text is kept
        24: (GOL, 100, "dram_write_throughput", "Device Memory Write Throughput", "MB/s", 230.52, 211.43, NAN, NAN,
             None, None, "1.1311GB/s"),
        22: (GOL, 100, "tex_cache_throughput", "Texture Cache Throughput", "B/s", 0.0, 0.0, 0.0, NAN, None, None, None),
    },
    "nvprof-metrics/hustzhaowei-darknet19-v100-metrics-app-table-excerpt.log": {
        44: (DARKNET, 18, "inst_per_warp", "Instructions per warp", None, 422.0, 422.0, 422.0, NAN, None, None, None),
        47: (DARKNET, 18, "warp_nonpred_execution_efficiency", "Warp Non-Predicated Execution Efficiency", "%", 93.69,
             93.69, 93.70, NAN, None, None, None),
        48: (DARKNET, 18, "inst_replay_overhead", "Instruction Replay Overhead", None, 0.028185, 0.002416, 0.040404,
             NAN, None, None, None),
        59: (DARKNET, 18, "gld_transactions", "Global Load Transactions", None, 61440.0, 6144.0, 393216.0, NAN, None,
             None, None),
        60: (DARKNET, 18, "gst_transactions", "Global Store Transactions", None, 40960.0, 4096.0, 262144.0, NAN, None,
             None, None),
    },
    "nvprof-metrics/sankarmanoj-thrust2d-gradient-metrics-text-valued-utilization.log": {
        13: ("getError(int, int, float*, float*, float*)", 1, "shared_utilization", "Shared Memory Utilization", None,
             0.0, 0.0, 0.0, NAN, "Idle (0)", "Idle (0)", "Idle (0)"),
        18: (REDUCE, 1000, "shared_efficiency", "Shared Memory Efficiency", "%", 99.74, 99.74, 99.74, NAN, None, None,
             None),
        19: (REDUCE, 1000, "shared_utilization", "Shared Memory Utilization", None, 1.0, 1.0, 1.0, NAN, "Low (1)",
             "Low (1)", "Low (1)"),
        22: ("multiply(int, int, float*, float*, float*)", 1, "gld_efficiency", "Global Memory Load Efficiency", "%",
             82.56, 82.56, 82.56, NAN, None, None, None),
    },
    "nvprof-metrics/sarats-xgc-cabana-kokkos-metrics-fragment-sci-notation-excerpt.log": {
        2: (KOKKOS, 1, "warp_execution_efficiency", "Warp Execution Efficiency", "%", 89.69, 89.69, 89.69, NAN, None,
            None, None),
        6: (KOKKOS, 1, "local_load_transactions", "Local Load Transactions", None, 3.3255e10, 3.3255e10, 3.3255e10, NAN,
            None, None, None),
        16: (KOKKOS, 1, "gld_throughput", "Global Load Throughput", "GB/s", 636.79, 636.79, 636.79, NAN, None, None,
             None),
    },
    "pasted/gustavolr548-cpguacamole-mm-cu-comment-nvprof-events-ptbr-times-excerpt.log": {
        # --events: no description, a Total
        143: ("mm(double*, double*, double*, int)", 1, "warps_launched", None, None, 277699.0, 277699.0, 277699.0,
              277699.0, None, None, None),
        149: ("mm(double*, double*, double*, int)", 1, "warp_execution_efficiency", "Warp Execution Efficiency", "%",
              99.21, 99.21, 99.21, NAN, None, None, None),
    },
    "nvprof-csv/jakemdaly-pytorch-jetson-nano-metrics-mangled-excerpt.csv.log": {
        7: (JETSON, 1, "achieved_occupancy", "Achieved Occupancy", None, 0.435306, 0.435306, 0.435306, NAN, None, None,
            None),
        10: (JETSON, 1, "inst_fp_16", "HP Instructions(Half)", None, 0.0, 0.0, 0.0, NAN, None, None, None),
        13: (JETSON, 1, "l2_read_throughput", "L2 Throughput (Reads)", "MB/s", 133.404696, 133.404710, 133.404710, NAN,
             None, None, None),
    },
}


@pytest.mark.parametrize("path", sorted(REAL))
def test_real_metric_rows_keep_every_column(path):
    ps = profconv.parse(DATA + path)
    assert ps.unplaced == []
    _check(ps, REAL[path])
    check_all(ps, open(DATA + path, encoding="utf-8", errors="replace").read())


HEAD = "==4242== NVPROF is profiling process 4242, command: ./conv\n==4242== Profiling application: ./conv\n"

EVENTS_TEXT = HEAD + """\
==4242== Profiling result:
==4242== Event result:
Invocations                                Event Name         Min         Max         Avg       Total
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: conv_forward(float const *, float*, int)
          4                            warps_launched       25088       25600       25344      101376
          4                          inst_executed_global_loads      1.2e+06      1.3e+06    1.25e+06     5.0e+06
          4                             shared_ld_bank_conflict           0           0           0           0
    Kernel: im2col(float const *, float*)
          2                            warps_launched        8192        8192        8192       16384
"""
CONV = "conv_forward(float const *, float*, int)"


def test_events_text():
    ps = profconv.parse_text(EVENTS_TEXT)
    assert ps.unplaced == [] and set(ps.frame["section"]) == {"metric"}
    _check(ps, {
        8: (CONV, 4, "warps_launched", None, None, 25344.0, 25088.0, 25600.0, 101376.0, None, None, None),
        9: (CONV, 4, "inst_executed_global_loads", None, None, 1.25e6, 1.2e6, 1.3e6, 5.0e6, None, None, None),
        10: (CONV, 4, "shared_ld_bank_conflict", None, None, 0.0, 0.0, 0.0, 0.0, None, None, None),
        12: ("im2col(float const *, float*)", 2, "warps_launched", None, None, 8192.0, 8192.0, 8192.0, 16384.0, None,
             None, None),
    })
    check_all(ps, EVENTS_TEXT)


def test_events_fragment_without_its_header():
    """Pasted from its 'Kernel:' line: a row of four numbers after the name is an event row (Avg, not
    Total, is its value); a metric row below it keeps its description."""
    text = EVENTS_TEXT.split("Device", 1)[1].split("\n", 1)[1].replace("    Kernel: im2col", "    Kernel: im2col", 1)
    text += "          2                        achieved_occupancy                        Achieved Occupancy" \
            "    0.700000    0.720000    0.710000\n"
    ps = profconv.parse_text(text)
    assert ps.unplaced == []
    _check(ps, {
        2: (CONV, 4, "warps_launched", None, None, 25344.0, 25088.0, 25600.0, 101376.0, None, None, None),
        7: ("im2col(float const *, float*)", 2, "achieved_occupancy", "Achieved Occupancy", None, 0.71, 0.7, 0.72, NAN,
            None, None, None),
    })


EVENTS_CSV = HEAD + """\
==4242== Profiling result:
==4242== Event result:
"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"
"Tesla V100-SXM2-16GB (0)","conv_forward(float const *, float*, int)",4,"warps_launched",25088,25600,25344,101376
"Tesla V100-SXM2-16GB (0)","conv_forward(float const *, float*, int)",4,"shared_ld_bank_conflict",0,0,0,0
"Tesla V100-SXM2-16GB (0)","im2col(float const *, float*)",2,"warps_launched",8192,8192,8192,16384
"""


def test_events_csv():
    """The --csv events summary: before, each column after Kernel became a 'metric' of its own
    (Invocations, Event Name, Min...) with the event's name lost."""
    ps = profconv.parse_text(EVENTS_CSV)
    assert ps.unplaced == []
    assert len(ps.frame) == 3
    _check(ps, {
        6: (CONV, 4, "warps_launched", None, None, 25344.0, 25088.0, 25600.0, 101376.0, None, None, None),
        7: (CONV, 4, "shared_ld_bank_conflict", None, None, 0.0, 0.0, 0.0, 0.0, None, None, None),
        8: ("im2col(float const *, float*)", 2, "warps_launched", None, None, 8192.0, 8192.0, 8192.0, 16384.0, None,
            None, None),
    })
    check_all(ps, EVENTS_CSV)


METRICS_TEXT = HEAD + """\
==4242== Profiling result:
==4242== Metric result:
Invocations                              Metric Name                        Metric Description         Min         Max         Avg
Device "Tesla V100-SXM2-16GB (0)"
    Kernel: conv_forward(float const *, float*, int)
         10                            sm_efficiency                   Multiprocessor Activity      97.10%      98.30%      97.70%
         10                           gld_throughput                    Global Load Throughput  512.40GB/s  530.10GB/s  521.25GB/s
         10                     dram_read_throughput             Device Memory Read Throughput  980.00MB/s  1.2000GB/s  1.0500GB/s
         10                         dram_utilization                 Device Memory Utilization     Low (2)    High (8)     Mid (5)
         10                  stall_memory_dependency        Issue Stall Reasons (Data Request)         n/a         n/a         n/a
         10               l2_tex_read_hit_rate_instance        L2 Hit Rate (Texture Reads)      0.00%      12.50%          n/a
"""


def test_metrics_text_units_levels_and_na():
    ps = profconv.parse_text(METRICS_TEXT)
    assert ps.unplaced == []
    _check(ps, {
        8: (CONV, 10, "sm_efficiency", "Multiprocessor Activity", "%", 97.7, 97.1, 98.3, NAN, None, None, None),
        9: (CONV, 10, "gld_throughput", "Global Load Throughput", "GB/s", 521.25, 512.4, 530.1, NAN, None, None, None),
        10: (CONV, 10, "dram_read_throughput", "Device Memory Read Throughput", "GB/s", 1.05, NAN, 1.2, NAN, None,
             "980.00MB/s", None),
        11: (CONV, 10, "dram_utilization", "Device Memory Utilization", None, 5.0, 2.0, 8.0, NAN, "Mid (5)", "Low (2)",
             "High (8)"),
        12: (CONV, 10, "stall_memory_dependency", "Issue Stall Reasons (Data Request)", None, NAN, NAN, NAN, NAN, "n/a",
             "n/a", "n/a"),
        # no Avg: the unit is the one Min and Max share
        13: (CONV, 10, "l2_tex_read_hit_rate_instance", "L2 Hit Rate (Texture Reads)", "%", NAN, 0.0, 12.5, NAN, "n/a",
             None, None),
    })
    check_all(ps, METRICS_TEXT)


METRICS_CSV = HEAD + """\
==4242== Profiling result:
==4242== Metric result:
"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"
@@,10,"sm_efficiency","Multiprocessor Activity",97.10%,98.30%,97.70%
@@,10,"dram_read_throughput","Device Memory Read Throughput",980.00MB/s,1.2000GB/s,1.0500GB/s
@@,10,"dram_utilization","Device Memory Utilization",Low (2),High (8),Mid (5)
@@,10,"stall_memory_dependency","Issue Stall Reasons (Data Request)",n/a,n/a,n/a
""".replace("@@", '"V100 (0)","conv_forward(float const *, float*, int)"')


def test_metrics_csv_units_levels_and_na():
    ps = profconv.parse_text(METRICS_CSV)
    assert ps.unplaced == []
    _check(ps, {
        6: (CONV, 10, "sm_efficiency", "Multiprocessor Activity", "%", 97.7, 97.1, 98.3, NAN, None, None, None),
        7: (CONV, 10, "dram_read_throughput", "Device Memory Read Throughput", "GB/s", 1.05, NAN, 1.2, NAN, None,
            "980.00MB/s", None),
        8: (CONV, 10, "dram_utilization", "Device Memory Utilization", None, 5.0, 2.0, 8.0, NAN, "Mid (5)", "Low (2)",
            "High (8)"),
        9: (CONV, 10, "stall_memory_dependency", "Issue Stall Reasons (Data Request)", None, NAN, NAN, NAN, NAN, "n/a",
            "n/a", "n/a"),
    })
    check_all(ps, METRICS_CSV)


@pytest.mark.parametrize("bad", ["abc   98.30%  97.70%", "nan   98.30%  97.70%", "-5%  98.30%  97.70%",
                                 "1_0%  98.30%  97.70%", "inf  98.30%  97.70%"])
def test_a_metric_cell_that_does_not_read_is_reported(bad):
    """A cell none of nvprof's forms (nan, inf, a negative, an underscore number, garbage): the line is
    reported as unplaced, no number is made up for it."""
    text = METRICS_TEXT.replace("97.10%      98.30%      97.70%", bad)
    ps = profconv.parse_text(text)
    assert [n for n, _ in ps.unplaced] == [8]
    assert "sm_efficiency" not in set(ps.frame["metric"])


def test_an_event_total_as_text_is_reported():
    text = EVENTS_TEXT.replace("25344      101376", "25344        lots")
    ps = profconv.parse_text(text)
    assert [n for n, _ in ps.unplaced] == [8]


def test_per_instance_rows_keep_their_list():
    text = METRICS_TEXT.split("    Kernel:")[0] + """\
    Kernel: conv_forward(float const *, float*, int)
          1   sm_efficiency_instance (4 instances)  Multiprocessor Activity         -           -  [ 97.10% 98.30% 97.70% 96.00% ]
"""
    ps = profconv.parse_text(text)
    assert ps.unplaced == []
    _check(ps, {8: (CONV, 1, "sm_efficiency_instance (4 instances)", "Multiprocessor Activity", None, NAN, NAN, NAN,
                    NAN, "[ 97.10% 98.30% 97.70% 96.00% ]", None, None)})


NCU_SUMMARY = """\
[11139] a.out@127.0.0.1
  conv_forward(const float *, float *, int) (16384, 1, 1)x(512, 1, 1), Device 0, CC 9.0, Invocations 300
    Section: Command line profiler metrics
    ---------------------------------------------------------------- ----------- ------- ------- -------
    Metric Name                                                      Metric Unit Minimum Maximum Average
    ---------------------------------------------------------------- ----------- ------- ------- -------
    gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed           %   56.59   72.29   64.43
    gpu__time_duration.sum                                                    ms    1.02    1.31    1.12
    launch__cache_config                                                          CachePreferNone CachePreferNone CachePreferNone
    ---------------------------------------------------------------- ----------- ------- ------- -------
"""


def test_ncu_print_summary_one_row_per_metric_with_min_and_max():
    ps = profconv.parse_text(NCU_SUMMARY)
    m = ps.frame[ps.frame["section"] == "ncu-metric"]
    got = [tuple(_clean(r[c]) for c in ["metric", "unit", "value", "value_min", "value_max", "value_text"])
           for _, r in m.iterrows()]
    assert got[:2] == [("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%", 64.43, 56.59, 72.29,
                        None), ("gpu__time_duration.sum", "ms", 1.12, 1.02, 1.31, None)]
    assert len(got) == 2 or got[2][0] == "launch__cache_config"
    gpu = ps.frame[ps.frame["section"] == "gpu"]
    assert list(gpu["calls"]) == [300] and list(gpu["avg_ns"]) == [1.12e6]


def test_terminal_metrics_table_shows_min_max_avg_and_total(cli, tmp_path):
    path = tmp_path / "events.log"
    path.write_text(EVENTS_TEXT + METRICS_TEXT.split("==4242== Profiling result:\n")[1])
    r = cli("parse", str(path), "--width", "120")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("Kernel"))
    assert header.split() == ["Kernel", "Metric", "Unit", "Min", "Max", "Avg", "Total"]
    row = next(ln for ln in lines if "warps_launched" in ln and "conv_forward" in ln)
    assert row.split()[-4:] == ["25,088", "25,600", "25,344", "101,376"]
    level = next(ln for ln in lines if "dram_utilization" in ln)
    assert level.split()[-7:] == ["Low", "(2)", "High", "(8)", "Mid", "(5)", "—"]
    mixed = next(ln for ln in lines if "dram_read_throughput" in ln)
    assert mixed.split()[-5:] == ["GB/s", "980.00MB/s", "1.2", "1.05", "—"]
    narrow = cli("parse", str(path), "--width", "80")
    assert max(len(ln) for ln in narrow.stdout.splitlines()) <= 80
    assert "Total, Min not shown at 80 columns (--width N shows them)" in narrow.stdout  # Avg and Max stay
    assert next(ln for ln in narrow.stdout.splitlines() if ln.startswith("Kernel")).split()[-2:] == ["Max", "Avg"]
    piped = cli("parse", str(path))  # a pipe: every column, complete lines
    assert next(ln for ln in piped.stdout.splitlines() if ln.startswith("Kernel")).split()[-4:] == [
        "Min", "Max", "Avg", "Total"]


def test_terminal_single_value_metrics_keep_one_value_column(cli, tmp_path):
    path = tmp_path / "ncu.log"
    path.write_text('==PROF== Connected to process 7 (/bin/conv)\n'
                    '  conv_forward(float *, int), 2024-Jan-01 10:00:00, Context 1, Stream 7\n'
                    '    Section: GPU Speed Of Light Throughput\n'
                    '    ---------------------------------------------------------------------- --------------- ---------\n'
                    '    DRAM Throughput                                                                      %     41.20\n'
                    '    Duration                                                                       usecond     12.30\n'
                    '    ---------------------------------------------------------------------- --------------- ---------\n')
    r = cli("parse", str(path))
    header = next(ln for ln in r.stdout.splitlines() if ln.startswith("Kernel"))
    assert header.split() == ["Kernel", "Metric", "Unit", "Value"]


def test_json_and_csv_carry_every_metric_column(cli, tmp_path):
    path = tmp_path / "metrics.log"
    path.write_text(METRICS_TEXT)
    doc = json.loads(cli("parse", str(path), "--json").stdout)
    row = next(r for r in doc["rows"] if r["metric"] == "dram_utilization")
    assert {k: row.get(k) for k in COLUMNS} == {  # a column no row of the output has is left out: null
        "name": CONV, "calls": 10, "metric": "dram_utilization", "description": "Device Memory Utilization",
        "unit": None, "value": 5.0, "value_min": 2.0, "value_max": 8.0, "value_total": None, "value_text": "Mid (5)",
        "value_text_min": "Low (2)", "value_text_max": "High (8)"}
    row = next(r for r in doc["rows"] if r["metric"] == "dram_read_throughput")
    assert (row["value_min"], row["value_text_min"], row["value_max"], row["unit"]) == (None, "980.00MB/s", 1.2, "GB/s")
    rows = list(csv.DictReader(io.StringIO(cli("parse", str(path), "--csv").stdout)))
    row = next(r for r in rows if r["metric"] == "gld_throughput")
    assert {k: row[k] for k in COLUMNS} == {
        "name": CONV, "calls": "10", "metric": "gld_throughput", "description": "Global Load Throughput",
        "unit": "GB/s", "value": "521.25", "value_min": "512.4", "value_max": "530.1", "value_total": "",
        "value_text": "", "value_text_min": "", "value_text_max": ""}
    events = tmp_path / "events.log"
    events.write_text(EVENTS_CSV)
    rows = list(csv.DictReader(io.StringIO(cli("parse", str(events), "--csv").stdout)))
    assert [(r["metric"], r["value"], r["value_total"]) for r in rows] == [
        ("warps_launched", "25344.0", "101376.0"), ("shared_ld_bank_conflict", "0.0", "0.0"),
        ("warps_launched", "8192.0", "16384.0")]


def test_report_of_a_metrics_log_has_its_metrics_table(cli, tmp_path):
    """`profconv report` on a --metrics/--events log: a Metrics table per profile with Min, Max, Avg
    and Total as printed (a level or n/a as its text); before, the profile's section was empty."""
    path = tmp_path / "events.log"
    path.write_text(EVENTS_TEXT + METRICS_TEXT.split("==4242== Profiling result:\n")[1])
    out = tmp_path / "r.md"
    r = cli("report", str(path), "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    assert "**Metrics — 10 rows**" in md
    assert "| Kernel | Metric | Unit | Min | Max | Avg | Total |" in md
    assert "| `conv_forward` | warps_launched | — | 25,088 | 25,600 | 25,344 | 101,376 |" in md
    assert "| `conv_forward` | dram_utilization | — | Low (2) | High (8) | Mid (5) | — |" in md
    assert "| `conv_forward` | dram_read_throughput | GB/s | 980.00MB/s | 1.2 | 1.05 | — |" in md
    doc = json.loads(cli("report", str(path), "--json").stdout)
    table = next(t for t in doc["tables"] if t["id"] == "log-1-metrics")
    row = next(r for r in table["rows"] if r["metric"] == "dram_utilization")
    assert (row["min"], row["max"], row["avg"], row["total"]) == ("Low (2)", "High (8)", "Mid (5)", None)
    row = next(r for r in table["rows"] if r["metric"] == "warps_launched" and r["kernel"] == "conv_forward")
    assert (row["min"], row["max"], row["avg"], row["total"]) == (25088.0, 25600.0, 25344.0, 101376.0)
    html = tmp_path / "r.html"
    assert cli("report", str(path), "--html", str(html)).returncode == 0
    assert "<td class=\"num\" data-v=\"Low (2)\">Low (2)</td>" in html.read_text()
