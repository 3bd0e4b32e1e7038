"""The pieces of `profconv explain` that need no recorded run: the targeted ncu pass's log, the SASS
capture's helpers, the layer arithmetic, the diagnosis and the advice rules on made-up evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from profconv.analysis import advice, conv_work, diagnosis, sass
from profconv.analysis.op_evidence import KernelEvidence, OpEvidence, kernels_by_op
from profconv.hardware import PEAKS
from profconv.profile import sass_capture, targeted_ncu
from profconv.run.models import ConvShape

H200 = PEAKS["H200"]
FA20_1 = ConvShape(10000, 4, 1, 86, 86, 7)
FA20_2 = ConvShape(10000, 16, 4, 40, 40, 7)
DATA = Path(__file__).parent / "data" / "explain"

NCU_LOG = """==PROF== Connected to process 123 (/usr/bin/python3.12)
==PROF== Profiling "conv_forward" - 0: 0%....50%....100% - 13 passes
==PROF== Profiling "unroll" - 1: 0%....50%....100% - 13 passes
==PROF== Profiling "matmul" - 2: 0%....50%....100% - 14 passes
==PROF== Disconnected from process 123
"""


def test_passes_read_per_kernel_and_launch():
    assert targeted_ncu.passes_of(NCU_LOG) == {"conv_forward": [13], "unroll": [13], "matmul": [14]}
    cost = targeted_ncu.PassCost.of(NCU_LOG)
    assert (cost.launches, cost.passes_min, cost.passes_max) == (3, 13, 14)
    assert targeted_ncu.PassCost.of("") == targeted_ncu.PassCost(0, None, None)


def test_unknown_metrics_named_once():
    log = ("==ERROR== Failed to find metric sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active\n"
           "==ERROR== Failed to find metric sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active\n"
           "==ERROR== Failed to find metric lts__t_bytes.sum\n")
    assert targeted_ncu.unknown_metrics(log) == ["sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active",
                                                 "lts__t_bytes.sum"]


def test_metric_set_is_targeted():
    ms = targeted_ncu.DIAGNOSIS_METRICS
    assert len(ms) == len(set(ms)) == 53
    assert "gpu__time_duration.sum" in ms and "dram__throughput.avg.pct_of_peak_sustained_elapsed" in ms
    for key in diagnosis.M.values():  # everything the diagnosis reads is collected
        assert key in ms, key


def test_defines_and_the_chosen_module():
    compiled = [
        {"file": "tuned.cu", "options": ["-std=c++17", "-DM=16", "-DC=4", "-DTW=2", "-DMB=4", "-DM0=0"]},
        {"file": "tuned.cu", "options": ["-std=c++17", "-DM=16", "-DC=4", "-DTW=4", "-DMB=8", "-DM0=0"]},
        {"file": "tuned_smem.cu", "options": ["-std=c++17", "-DM=16", "-DC=4", "-DTW=4", "-DMB=8", "-DPOOL=2", "-DACT=1"]},
        {"file": "tuned_smem.cu", "options": ["-std=c++17", "-DM=16", "-DC=4", "-DTW=4", "-DMB=8"]},
        {"file": "tuned.cu", "options": ["-std=c++17", "-DM=6", "-DC=1", "-DTW=4", "-DMB=8", "-DM0=0"]},
        {"file": "naive.cu", "options": ["-std=c++17"]},
    ]
    assert sass_capture.defines_of(["-DA=1", "-DB", "-O3"]) == {"A": "1", "B": "1"}
    dims = {"M": 16, "C": 4, "H": 40, "W": 40, "K": 7, "P": 0}
    got = sass_capture.pick_modules(compiled, ["tuned.cu", "tuned_smem.cu"], dims,
                                    {"design": "shared-filters", "TW": 4, "MB": 8, "swept": 30})
    assert got == [compiled[3]]  # of the modules agreeing with TW and MB, the one with no other defines (POOL, M0)
    got = sass_capture.pick_modules(compiled, ["tuned.cu", "tuned_smem.cu"], dims, {"TW": 4, "MB": 8, "M0": 0})
    assert got == [compiled[1]]
    assert sass_capture.pick_modules(compiled, ["naive.cu"], dims, {}) == [compiled[-1]]
    assert sass_capture.pick_modules(compiled, ["fused.cu"], dims, {}) == []


def test_pragma_unroll_macros_written_in_for_nvcc():
    src = "#pragma unroll CUNROLL\n  #pragma unroll\n#pragma  unroll OTHER\n#pragma unroll 4\n"
    assert sass_capture.expand_pragmas(src, {"CUNROLL": "1"}) == (
        "#pragma unroll 1\n  #pragma unroll\n#pragma  unroll OTHER\n#pragma unroll 4\n")


def test_ptxas_report_and_listing():
    report = ("ptxas info    : Compiling entry function 'matmul' for 'sm_90'\n"
              "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
              "ptxas info    : Used 31 registers, used 1 barriers, 2048 bytes smem\n"
              "ptxas info    : Compiling entry function 'unroll' for 'sm_90'\n"
              "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
              "ptxas info    : Used 36 registers, used 0 barriers\n")
    assert sass_capture.resource_usage(report) == ({"matmul": 31, "unroll": 36}, {"matmul": 20, "unroll": 0})
    raw = ("\tcode for sm_90\n\t\tFunction : conv\n"
           "        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */\n"
           "                                                                          /* 0x000fe20000000800 */\n")
    assert sass_capture.compact(raw) == ("\tcode for sm_90\n\t\tFunction : conv\n"
                                         "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n")
    assert sass.parse(sass_capture.compact(raw))[0].instructions == 1
    assert sass_capture.arch_of("9.0") == "sm_90" and sass_capture.arch_of(None) is None
    argv = sass_capture.nvcc_cubin_argv("nvcc", Path("a.cu"), Path("a.cubin"), "sm_90", ["-std=c++17", "-DTW=4", "-G"])
    assert argv == ["nvcc", "-cubin", "-arch=sm_90", "--resource-usage", "-std=c++17", "-DTW=4", "-o", "a.cubin", "a.cu"]


def test_layer_arithmetic_matches_the_course_table():
    """anchors.md §4.1: Fall 2020 conv1 25.09 GFLOP and 1,319.8 MB, conv2 72.50 GFLOP and 995.9 MB (B = 10,000)."""
    w1, w2 = conv_work.LayerWork(FA20_1, 4), conv_work.LayerWork(FA20_2, 4)
    assert round(w1.flops / 1e9, 2) == 25.09 and round(w1.compulsory_bytes / 1e6, 1) == 1319.8
    assert round(w2.flops / 1e9, 2) == 72.50 and round(w2.compulsory_bytes / 1e6, 1) == 995.9
    assert w2.input_reuse == 16 * 49 and w2.weight_reuse == 10000 * 34 * 34
    f = conv_work.floors(w2, H200)
    assert f.fp32_s == pytest.approx(72.50e9 / 67e12, rel=1e-3)
    assert f.roofline_s("fp32") == f.fp32_s and f.roofline_s("tensor-fp16") == f.dram_s
    assert conv_work.floors(w2, None).roofline_s("fp32") is None


def _kernel(**metrics: float) -> KernelEvidence:
    return KernelEvidence("conv_forward", 1.0, 4.9e-3, {diagnosis.M[k]: v for k, v in metrics.items()})


def _op(kernel: KernelEvidence | None, listing: str | None = None, **kw) -> OpEvidence:
    base = dict(variant="mine", layer="conv2", technique="", precision="fp32", arithmetic="fp32", shape=FA20_2,
                op_time_s=5e-3, ci=None, kernels=[kernel] if kernel else [], ncu_images=10000,
                ncu_source="targeted" if kernel else None, sass=sass.parse(listing) if listing else [])
    base.update(kw)
    return OpEvidence(**base)


NAIVE_SASS = """\tcode for sm_90\n\t\tFunction : conv_forward
        /*0000*/                   LDG.E R4, desc[UR4][R2.64] ;
        /*0010*/                   LDG.E R5, desc[UR4][R6.64] ;
        /*0020*/                   IMAD R8, R9, R10, R11 ;
        /*0030*/                   IADD3 R8, R8, 0x1, RZ ;
        /*0040*/                   FFMA R0, R4, R5, R0 ;
        /*0050*/                   STG.E desc[UR4][R2.64], R0 ;
        /*0060*/                   EXIT ;
"""
TILED_SASS = NAIVE_SASS.replace("LDG.E R4, desc[UR4][R2.64]", "LDS R4, [R2]").replace("IMAD R8", "STS [R2], R8")
TENSOR_SASS = NAIVE_SASS.replace("FFMA R0, R4, R5, R0", "HMMA.16816.F32 R0, R4, R6, R0")


def test_issue_bound_kernel_with_little_reuse():
    k = _kernel(issue=92, fma=30, l1=55, dram=20, inst=1e9, ffma=32 * 0.2e9, ldg=0.4e9, lds=0)
    ev = _op(k, NAIVE_SASS)
    dx = diagnosis.diagnose(ev, H200)
    assert dx.bound == "issue"
    assert dx.headline == "bound by instruction issue (92% of peak), and only 20% of the instructions are FMAs"
    assert dx.derived["loads_per_fma"] == pytest.approx(2.0)
    floor = 72.50e9 / 67e12
    assert dx.floor_s == pytest.approx(floor, rel=1e-3) and dx.of_floor == pytest.approx(floor / 5e-3, rel=1e-3)
    got = [a.technique for a in advice.advise(ev, dx, H200)]
    assert got[0] == "register-blocking" and "shared-tiling" in got and "tensor-cores" not in got


def test_dram_bound_counts_the_excess_bytes():
    comp = conv_work.LayerWork(FA20_2, 4).compulsory_bytes
    k = _kernel(dram=88, l2=60, issue=30, dram_rd=2.0 * comp, dram_wr=0.5 * comp)
    dx = diagnosis.diagnose(_op(k), H200)
    assert dx.bound == "dram" and dx.derived["dram_excess"] == pytest.approx(2.5)
    assert dx.headline == "bound by DRAM bandwidth (88% of peak), moving 2.5× the compulsory bytes"


def test_latency_bound_names_the_wait():
    k = KernelEvidence("k", 1.0, 4.9e-3, {diagnosis.M["issue"]: 40, diagnosis.M["l1"]: 30,
                                        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 9.0,
                                        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 2.0,
                                        "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio": 5.0})
    dx = diagnosis.diagnose(_op(k), H200)
    assert dx.bound == "latency"
    assert dx.stalls == [("long_scoreboard", 9.0), ("barrier", 2.0)]  # not_selected is not a stall
    assert dx.headline.endswith("warps wait most on global or local memory (a load's data)")


def test_launch_bound_when_kernels_fill_little_of_the_call():
    k = _kernel(issue=90)
    ev = _op(k, op_time_s=1e-3, cupti={"kernel_busy_s": 0.6e-3, "kernels": 40})  # 10 µs idle per launch
    dx = diagnosis.diagnose(ev, H200)
    assert dx.bound == "launch" and dx.headline == "bound by launches and host time: its kernels run for 60% of the timed call"
    assert advice.advise(ev, dx, H200)[0].technique == "fewer-launches"


def test_host_work_in_the_call_when_the_gpu_idles_far_longer_than_launches_cost():
    k = KernelEvidence("matrix_unrolling_kernel(const float *, float *, int)", 1.0, None, {diagnosis.M["issue"]: 40})
    ev = _op(k, op_time_s=0.168, shape=ConvShape(2000, 4, 1, 86, 86, 7), cupti={"kernel_busy_s": 0.009, "kernels": 3})
    dx = diagnosis.diagnose(ev, H200)
    assert dx.bound == "launch" and dx.kernel == "matrix_unrolling_kernel"
    first = advice.advise(ev, dx, H200)[0]
    assert first.technique == "host-work" and round(first.gain_share, 3) == 0.946
    assert first.reason.startswith("the GPU is idle 159 ms of the 168 ms call (53 ms per launch")
    assert first.reason.endswith("the unrolled matrix of this layer is 2.5 GB: allocate it once (in the prolog, or "
                                 "keep it across calls), not in every call")


def test_no_counters_no_bound_no_guess():
    dx = diagnosis.diagnose(_op(None), H200)
    assert dx.bound == "unknown" and dx.utilisation == {} and "explain --collect" in dx.notes[0]
    assert advice.advise(_op(None), dx, H200) == []


def test_never_advises_what_the_sass_shows():
    hot = _kernel(issue=92, fma=85, inst=1e9, ffma=32 * 0.7e9, ldg=0.01e9, lds=0.05e9)
    tiled = advice.advise(_op(hot, TILED_SASS), diagnosis.diagnose(_op(hot, TILED_SASS), H200), H200)
    assert "shared-tiling" not in [a.technique for a in tiled]
    tc = advice.advise(_op(hot, TENSOR_SASS), diagnosis.diagnose(_op(hot, TENSOR_SASS), H200), H200)
    assert not {"tensor-cores", "half2", "register-blocking"} & {a.technique for a in tc}
    without_sass = advice.advise(_op(hot), diagnosis.diagnose(_op(hot), H200), H200)
    assert not advice.NEEDS_SASS & {a.technique for a in without_sass}


def test_points_at_our_rung_with_its_time():
    k = _kernel(issue=92, fma=30, inst=1e9, ffma=32 * 0.2e9, ldg=0.4e9, lds=0)
    ev = _op(k, NAIVE_SASS, variant="naive", rung_times={"naive": 5e-3, "shared": 4e-3, "tuned": 1.6e-3})
    got = {a.technique: a for a in advice.advise(ev, diagnosis.diagnose(ev, H200), H200,
                                                 {"shared": "kernels/shared.cu", "tuned": "kernels/tuned.cu"})}
    assert (got["register-blocking"].rung, got["register-blocking"].rung_time_s) == ("tuned", 1.6e-3)
    assert got["shared-tiling"].rung_source == "kernels/shared.cu"
    assert got["register-blocking"].gain_s <= 5e-3 - 72.50e9 / 67e12  # never below the floor


def test_launches_grouped_per_op_and_kernel():
    launches = [{"range": "m/v/conv1", "kernel": "unroll", "metrics": {"gpu__time_duration.sum": 1000.0}},
                {"range": "m/v/conv1", "kernel": "matmul", "metrics": {"gpu__time_duration.sum": 3000.0}},
                {"range": "m/v/conv1", "kernel": "matmul", "metrics": {"gpu__time_duration.sum": 5000.0}},
                {"range": "m/v/conv1/check", "kernel": "matmul", "metrics": {"gpu__time_duration.sum": 9e9}}]
    got = kernels_by_op(launches, calls=1)["m/v/conv1"]
    assert [(k.name, k.launches_per_call, k.duration_s, k.metrics["gpu__time_duration.sum"]) for k in got] == [
        ("matmul", 2.0, pytest.approx(8e-6), 4000.0), ("unroll", 1.0, pytest.approx(1e-6), 1000.0)]


def test_copies_bound_advises_streams_only_where_copies_dominate():
    k = _kernel(issue=90)
    ev = _op(k, host_io=True, cupti={"kernel_busy_s": 1.5e-3, "kernels": 1})
    dx = diagnosis.diagnose(ev, H200)
    assert dx.bound == "copies" and dx.headline.endswith("its kernels run for 30% of the timed call")
    got = advice.advise(ev, dx, H200)
    assert got[0].technique == "streams" and got[0].gain_share == pytest.approx(0.3)
    already = _op(k, host_io=True, technique="multiple streams", cupti={"kernel_busy_s": 1.5e-3, "kernels": 1})
    assert "streams" not in [a.technique for a in advice.advise(already, diagnosis.diagnose(already, H200), H200)]
    on_device = _op(k, cupti={"kernel_busy_s": 4.9e-3, "kernels": 1})
    assert "streams" not in [a.technique for a in advice.advise(on_device, diagnosis.diagnose(on_device, H200), H200)]


HALF_SASS = NAIVE_SASS.replace("FFMA R0, R4, R5, R0", "HFMA2 R0, R4, R5, R0")


def test_scalar_half_is_told_from_half2_by_the_ptx():
    k = _kernel(issue=85, inst=1e9, ffma=0, hfma=32 * 0.3e9, ldg=0.3e9, lds=0)
    scalar = _op(k, HALF_SASS, half_ops={"matrixMultiplyShared": {"f16": 12}})
    got = {a.technique: a for a in advice.advise(scalar, diagnosis.diagnose(scalar, H200), H200)}
    assert got["half2"].reason.startswith("its half-precision arithmetic is scalar __half (PTX fma.rn.f16, no f16x2)")
    packed = _op(k, HALF_SASS, half_ops={"matrixMultiplyShared": {"f16x2": 12}})
    assert "half2" not in {a.technique for a in advice.advise(packed, diagnosis.diagnose(packed, H200), H200)}
    unknown = _op(k, HALF_SASS)  # no PTX: SASS alone cannot tell, so HFMA2 counts as done
    assert "half2" not in {a.technique for a in advice.advise(unknown, diagnosis.diagnose(unknown, H200), H200)}


def test_work_outside_the_timed_call_is_its_own_bound():
    k = _kernel(issue=30)
    ev = _op(k, user=True, placement={"prolog": (2, 3e-3, ["conv_forward_kernel"]), "timed": (1, 2e-5, ["noop"]),
                                       "epilog": (0, 0.0, [])})
    dx = diagnosis.diagnose(ev, H200)
    assert dx.bound == "outside"
    assert dx.headline == ("bound by work outside the timed call (the prolog or epilog): its kernels there (prolog 2 "
                           "launch(es) 3 ms) run longer than the timed call's (20 µs), and Op Time does not measure them")
    row = next(f for f in dx.findings if f.label.startswith("GPU work per phase"))
    assert row.value == "prolog: 2 launch(es), 3 ms (conv_forward_kernel); timed: 1 launch(es), 20 µs (noop)"


def test_shared_bound_names_the_busy_unit_and_the_conflicts():
    """Window 5 (H200, tf32-wmma on Fall 2020 conv2): 'bound by shared memory (0% of peak)' — the share was read
    from a unit no metric measures; the busy unit is L1/shared and its loads conflict in the banks."""
    k = _kernel(l1=84, issue=22, dram=5, bank_conflicts=41, shared_wavefronts=100)
    dx = diagnosis.diagnose(_op(k), H200)
    assert dx.bound == "shared"
    assert dx.headline == "bound by shared memory (L1/shared 84% of peak, 41% of its shared-load wavefronts bank conflicts)"
