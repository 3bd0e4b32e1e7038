"""The course's rules as data (profconv/judge/courses/*.toml) turning a kernel's evidence into a verdict
that names its rule: one test per class of wrong verdict of issue 21 and per course term."""

from __future__ import annotations

import pytest

from profconv import judge
from profconv.errors import InputError
from profconv.judge import EdgeEvidence, Evidence, LayerEvidence
from profconv.judge.credit import fraction
from profconv.judge.rules import parse
from profconv.records.verdict import Optimisation, Placement

LAYERS = (LayerEvidence("conv1", rel_error=2e-7, nonfinite=0, inputs_modified=False, timed_calls=5, timed_wrong=0,
                        fresh_inputs=True, identical_twice=True, op_s=0.010, below_floor=False, left_running_s=0.0),
          LayerEvidence("conv2", rel_error=3e-7, nonfinite=0, inputs_modified=False, timed_calls=5, timed_wrong=0,
                        fresh_inputs=True, identical_twice=True, op_s=0.030, below_floor=False, left_running_s=0.0))
HONEST_PLACEMENT = (Placement(phase="prolog", copies=2), Placement(phase="timed", kernels=["conv_forward_kernel"],
                                                                   kernel_launches=1, streams=1),
                    Placement(phase="epilog", copies=1))


def ev(**kw) -> Evidence:
    base = dict(name="k", form="minidnn", compiled=True, images=10_000, layers=LAYERS, sass_read=True,
                placement=HONEST_PLACEMENT)
    return Evidence(**{**base, **kw})


def with_error(err: float) -> tuple[LayerEvidence, ...]:
    from dataclasses import replace

    return tuple(replace(lay, rel_error=err) for lay in LAYERS)


def verdict(e: Evidence, course: str):
    return judge.judge(e, judge.load(course))


def test_every_rule_set_loads_and_its_checks_exist():
    assert judge.available() == ["fa24", "minidnn", "mxnet", "profconv", "sp24", "sp25"]
    for name in judge.available():
        rs = judge.load(name)
        assert rs.rules and all(r.text and r.source for r in rs.rules)
        assert len({r.id for r in rs.rules}) == len(rs.rules)


def test_the_model_implies_the_term_and_course_overrides_it():
    assert judge.for_model("ece408-fa18").id == "mxnet"
    assert judge.for_model("ece408-high").id == "mxnet"
    assert judge.for_model("ece408-fa20").id == "minidnn"
    assert judge.for_model("cifar10").id == "profconv"
    assert judge.for_model(None).id == "profconv"
    assert judge.choose("sp25", "ece408-fa20").id == "sp25"
    with pytest.raises(InputError, match=r"--course 'sp99': no such rule set \(known: fa24, minidnn, mxnet"):
        judge.load("sp99")


def test_inherited_rules_are_replaced_in_place_and_dropped():
    ids = [r.id for r in judge.load("sp25").rules]
    assert ids.index("sp25.work-in-timed-call") == 8 and "minidnn.work-in-timed-call" not in ids
    assert "sp25.single-stream" in ids and "profconv.single-stream" not in ids
    assert "profconv.work-in-timed-call" not in [r.id for r in judge.load("mxnet").rules]


def test_a_malformed_rule_set_is_refused_naming_the_file():
    doc = {"id": "x", "name": "X", "rule": [{"id": "x.a", "check": "no_such", "text": "t", "source": "s"}]}
    with pytest.raises(ValueError, match=r"x.toml: rule x.a: no check 'no_such'"):
        parse(doc, "x.toml")
    doc["rule"] = [{"id": "x.a", "check": "ran", "text": "t"}]
    with pytest.raises(ValueError, match="x.toml: a rule without 'source'"):
        parse(doc, "x.toml")
    doc["rule"] = [{"id": "x.a", "check": "ran", "text": "t", "source": "s", "severity": "maybe"}]
    with pytest.raises(ValueError, match="severity 'maybe'"):
        parse(doc, "x.toml")


def test_an_honest_kernel_passes_every_set():
    for name in judge.available():
        v = verdict(ev(), name)
        assert (v.status, v.rule, v.reason) == ("ok", None, None), name
        assert v.course == name


def test_tf32_wmma_is_accepted_by_its_precision_and_required_for_sp25_req_1():
    tf32 = ev(layers=with_error(3.1e-4), tensor_types=frozenset({"tf32"}),
              optimisations=(Optimisation(name="tensor-cores-tf32", kernel="k"),))
    v = verdict(tf32, "profconv")
    assert v.status == "ok"
    prec = next(f for f in v.findings if f.rule.id == "profconv.precision")
    assert (prec.outcome, prec.reason) == ("info", "computes in tf32 (from its SASS); the rule asks for fp32")
    req1 = verdict(Evidence(**{**tf32.__dict__, "folder": "req_1"}), "sp25")
    assert req1.status == "ok" and req1.role == "req_1"
    assert next(f for f in req1.findings if f.rule.id == "sp25.tensor-cores-tf32").outcome == "pass"
    # the same error without the SASS (no cuobjdump): judged as the declared fp32, FAILED on the tolerance
    blind = verdict(ev(layers=with_error(3.1e-4), sass_read=False), "sp25")
    assert blind.status == "failed" and blind.rule.id == "profconv.output-correct"
    assert blind.reason == "conv1: relative error 0.00031 above the fp32 tolerance 1e-05"


def test_fp16_tensor_cores_in_req_1_is_partial_credit_and_a_warning_in_the_final_file():
    fp16 = ev(layers=with_error(4e-3), tensor_types=frozenset({"fp16"}), folder="req_1",
              optimisations=(Optimisation(name="tensor-cores-fp16", kernel="k"),))
    v = verdict(fp16, "sp25")
    assert v.status == "ok"
    assert v.warnings == ["Tensor Core MMA with fp16 inputs, not tf32: FP16 Tensor Cores: at most 5 of the 10 points "
                          "[sp25.tensor-cores-tf32]"]
    final = verdict(ev(layers=with_error(4e-3), fp16_arithmetic=True), "sp25")
    assert final.status == "ok" and final.role == "final"
    assert final.warnings[0] == ("computes in fp16 (from its SASS); the rule asks for fp32 or tf32 "
                                 "[sp25.final-precision]")
    assert verdict(ev(layers=with_error(4e-2), fp16_arithmetic=True), "sp25").rule.id == "profconv.output-correct"


def test_op_5_half2_is_worth_4_points_half_2():
    half = ev(folder="op_5", fp16_arithmetic=True, layers=with_error(1e-3),
              optimisations=(Optimisation(name="fp16-half", kernel="k"),))
    v = verdict(half, "sp25")
    assert v.status == "ok" and "fp16-half: up to 2 of 4 points [sp25.fp16-points]" in v.warnings
    half2 = Evidence(**{**half.__dict__, "optimisations": (Optimisation(name="fp16-half2", kernel="k"),)})
    assert not verdict(half2, "sp25").warnings


def test_edge_shapes_fail_profconv_and_warn_the_course():
    edges = (EdgeEvidence("conv1", "B=1 M=4 C=1 86x86 K=7", rel_error=1e-7),
             EdgeEvidence("conv1", "B=3 M=4 C=1 87x89 K=7", rel_error=0.7),
             EdgeEvidence("conv2", "B=3 M=16 C=4 41x43 K=7", error="cudaErrorInvalidConfiguration"))
    strict = verdict(ev(edges=edges), "profconv")
    assert strict.status == "failed" and strict.rule.id == "profconv.edge-shapes"
    assert strict.reason == "not general: wrong at B=3 M=16 C=4 41x43 K=7, B=3 M=4 C=1 87x89 K=7 (2 of 3 edge checks)"
    course = verdict(ev(edges=edges), "minidnn")
    assert course.status == "ok"
    assert course.warnings == ["not general: wrong at B=3 M=16 C=4 41x43 K=7, B=3 M=4 C=1 87x89 K=7 "
                               "(2 of 3 edge checks) [minidnn.edge-shapes]"]


def test_work_in_the_prolog_fails_and_is_named():
    placement = (Placement(phase="prolog", kernels=["conv_forward_kernel"], kernel_launches=1, copies=2),
                 Placement(phase="timed", streams=0), Placement(phase="epilog", copies=1))
    v = verdict(ev(placement=placement), "minidnn")
    assert (v.status, v.rule.id) == ("failed", "minidnn.work-in-timed-call")
    assert v.reason == "1 kernel launch(es) in the prolog: conv_forward_kernel"
    assert v.rule.text == "All your gpu kernel calls need to take place inside conv_forward_gpu()"
    # Spring 2025's req_0 (streams) may do all its work in the prolog: the rule is the final file's
    assert verdict(ev(placement=placement, folder="req_0",
                      optimisations=(Optimisation(name="streams"),)), "sp25").status == "ok"
    assert verdict(ev(placement=placement), "sp25").rule.id == "sp25.work-in-timed-call"
    # the ghost run says the same without CUPTI: prolog + epilog alone give the right output
    from dataclasses import replace
    ghost = (replace(LAYERS[0], ghost_rel_error=0.0), LAYERS[1])
    g = verdict(ev(layers=ghost, placement=()), "minidnn")
    assert g.reason == ("conv1: prolog and epilog alone, without conv_forward_gpu, give an output within 0 of the "
                        "right one")


def test_streams_left_running_and_extra_streams():
    from dataclasses import replace
    left = (replace(LAYERS[0], left_running_s=0.004), LAYERS[1])
    v = verdict(ev(layers=left), "profconv")
    assert (v.rule.id, v.reason) == ("profconv.nothing-left-running",
                                     "conv1: work left running on another stream for 0.004 s after the timed call returned")
    four = (Placement(phase="timed", kernels=["conv_forward_kernel"], kernel_launches=4, streams=4),)
    assert verdict(ev(placement=four), "profconv").status == "ok"
    final = verdict(ev(placement=four), "sp25")
    assert (final.rule.id, final.reason) == ("sp25.single-stream", "4 streams in conv_forward_gpu")
    assert verdict(ev(placement=four, folder="req_0", optimisations=(Optimisation(name="streams"),)),
                   "sp25").status == "ok"


def test_cublas_does_not_count_for_req_1_and_is_op_4():
    lib = (Placement(phase="timed", kernels=["unroll_kernel", "sm90_xmma_gemm_f32f32"], kernel_launches=2, streams=1,
                     library=["cuBLAS: sm90_xmma_gemm_f32f32"]),)
    req1 = verdict(ev(placement=lib, folder="req_1"), "sp25")
    assert req1.status == "failed" and req1.rule.id == "sp25.tensor-cores-tf32"
    assert req1.reason == "no Tensor Core MMA in the kernel's SASS (library kernels cuBLAS: sm90_xmma_gemm_f32f32 do not count)"
    assert [f.outcome for f in req1.findings if f.rule.id == "sp25.req1-no-library"] == ["fail"]
    op4 = verdict(ev(placement=lib, folder="op_4", optimisations=(Optimisation(name="library-cublas"),)), "sp25")
    assert op4.status == "ok" and not op4.warnings


def test_the_claimed_optimisation_is_looked_for():
    v = verdict(ev(folder="op_0"), "sp25")
    assert v.status == "ok"
    assert v.warnings == ["op_0: none of constant-memory seen in the SASS or the launches [sp25.optimisation-shown]"]


def test_cheats_fail_with_their_reason():
    from dataclasses import replace
    cached = (replace(LAYERS[0], timed_wrong=4), LAYERS[1])
    assert verdict(ev(layers=cached), "minidnn").reason == (
        "conv1: 4 of 5 timed calls on fresh inputs gave a wrong output (an output cached or replayed, or work skipped)")
    floor = (replace(LAYERS[0], op_s=7e-6, below_floor=True, floor_s=2e-5), LAYERS[1])
    assert verdict(ev(layers=floor), "sp25").rule.id == "profconv.above-floor"
    racy = (replace(LAYERS[0], identical_twice=False, twice_rel_diff=0.2), LAYERS[1])
    assert verdict(ev(layers=racy), "mxnet").rule.id == "profconv.deterministic"
    atomics = (replace(LAYERS[0], identical_twice=False, twice_rel_diff=1e-7), LAYERS[1])
    assert verdict(ev(layers=atomics), "mxnet").status == "ok"  # reordered float sums, within tolerance
    zeros = (replace(LAYERS[0], rel_error=1.0), LAYERS[1])
    assert verdict(ev(layers=zeros), "sp25").reason == "conv1: relative error 1 above the fp32 tolerance 1e-05"
    modified = (replace(LAYERS[0], inputs_modified=True), LAYERS[1])
    assert verdict(ev(layers=modified), "sp25").rule.id == "profconv.inputs-unchanged"


def test_unrecognised_and_uncompiled_files():
    v = verdict(Evidence(name="k", form_error="not a kernel: no __global__ function and no GPUInterface methods"),
                "mxnet")
    assert (v.status, v.rule.id) == ("failed", "profconv.recognised")
    c = verdict(Evidence(name="k", form="minidnn", compiled=False, compile_error="k.cu:3: error: x undefined"), "sp25")
    assert (c.rule.id, c.reason) == ("profconv.compiled", "compile error: k.cu:3: error: x undefined")
    crashed = verdict(Evidence(name="k", form="minidnn", compiled=True, error="crashed (SIGSEGV) during conv1"), "sp25")
    assert (crashed.rule.id, crashed.reason) == ("profconv.ran", "crashed (SIGSEGV) during conv1")


def test_correctness_against_the_course_figure():
    assert verdict(ev(correctness=0.8714, expected_correctness=0.8714), "minidnn").status == "ok"
    v = verdict(ev(correctness=0.8713, expected_correctness=0.8714), "minidnn")
    assert (v.rule.id, v.reason) == ("minidnn.correctness", "Correctness 0.8713, the course expects 0.8714")
    info = next(f for f in verdict(ev(correctness=0.12), "minidnn").findings if f.rule.id == "minidnn.correctness")
    assert (info.outcome, info.reason) == ("info", "Correctness 0.1200 (no course figure for this data)")


@pytest.mark.parametrize("t,full,zero,expected", [(0.040, 0.05, 0.075, 1.0), (0.050, 0.05, 0.075, 1.0),
                                                  (0.060, 0.05, 0.075, 0.6), (0.075, 0.05, 0.075, 0.0),
                                                  (0.080, 0.05, 0.075, 0.0), (0.140, 0.08, 0.2, 0.5),
                                                  (0.066, 0.065, 0.065, 0.0), (0.065, 0.065, 0.065, 1.0)])
def test_credit_fraction(t, full, zero, expected):
    assert fraction(t, full, zero) == pytest.approx(expected)


def test_performance_credit_per_term_scaled_to_10000_images():
    v = verdict(ev(), "sp25")  # 10 + 30 ms at 10,000 images
    assert (v.credit.op_time_s, v.credit.fraction, v.credit.points) == (pytest.approx(0.04), 1.0, 25.0)
    from dataclasses import replace
    slow = tuple(replace(lay, op_s=lay.op_s * 0.15) for lay in LAYERS)  # 6 ms at 1,000 images -> 60 ms
    s = verdict(ev(layers=slow, images=1000), "sp25")
    assert s.credit.scaled_from == 1000 and s.credit.op_time_s == pytest.approx(0.060)
    assert s.credit.fraction == pytest.approx(0.6) and s.credit.points == pytest.approx(15.0)
    perf = next(f for f in s.findings if f.rule.id == "sp25.performance")
    assert perf.reason == ("summed Op Time 60.0 ms at 10,000 images (scaled from 1,000 images): 60% of the "
                           "performance credit, 15 points")
    assert verdict(ev(layers=slow, images=1000), "fa24").credit.fraction == 1.0
    assert verdict(ev(layers=slow, images=1000), "sp24").credit.fraction == 1.0  # 60 ms: within 65
    slower = tuple(replace(lay, op_s=lay.op_s * 0.2) for lay in LAYERS)  # 80 ms
    sp24 = verdict(ev(layers=slower, images=1000), "sp24")
    assert sp24.status == "ok" and sp24.credit.fraction == 0.0
    assert sp24.warnings == ["summed Op Time 80.0 ms at 10,000 images (scaled from 1,000 images): 0% of the "
                             "performance credit [sp24.performance]"]
    assert verdict(ev(), "minidnn").credit is None


def test_the_kernels_own_form_picks_its_eras_rules_when_the_model_says_another_era():
    assert judge.choose(None, "ece408", "minidnn").id == "minidnn"  # a mini-dnn file on an MXNet-era model
    assert judge.choose(None, "ece408-fa20", "mxnet-generic").id == "mxnet"
    assert judge.choose(None, "ece408-fa19", "mxnet").id == "mxnet"
    assert judge.choose(None, "cifar10", "minidnn-stride").id == "minidnn"
    assert judge.choose(None, "cifar10", None).id == "profconv"  # profconv's own contracts: no course era
    assert judge.choose(None, "ece408-fa20", "device").id == "minidnn"
    assert judge.choose("sp25", "ece408", "mxnet").id == "sp25"  # --course decides


def test_left_running_beyond_the_harness_mark_fails_unless_the_gpu_saw_one_stream():
    from dataclasses import replace

    slack = (replace(LAYERS[0], left_running_s=4e-4), LAYERS[1])  # 0.4 ms past a 10 ms call: under a twentieth
    assert verdict(ev(layers=slack), "profconv").status == "ok"
    left = (replace(LAYERS[0], left_running_s=0.004), LAYERS[1])
    assert verdict(ev(layers=left), "profconv").rule.id == "profconv.nothing-left-running"
    one_stream = (Placement(phase="prolog", copies=2, side_streams=0),
                  Placement(phase="timed", kernels=["k"], kernel_launches=1, streams=1, side_streams=0))
    v = verdict(ev(layers=left, placement=one_stream), "profconv")
    assert v.status == "ok" and v.warnings == [
        "conv1: 0.004 s between the call's own stream finishing and the whole device idle, but the GPU's records "
        "show all its work on one stream (a shared GPU?) [profconv.nothing-left-running]"]
    side = (Placement(phase="timed", kernels=["k"], kernel_launches=1, streams=1, side_streams=1),)
    assert verdict(ev(layers=left, placement=side), "profconv").status == "failed"


def test_credit_as_the_course_timed_it_when_the_run_had_its_image_count():
    from dataclasses import replace

    cold = tuple(replace(lay, cold_s=lay.op_s * 3) for lay in LAYERS)  # 30 + 90 ms cold, 10 + 30 ms warm
    v = verdict(ev(layers=cold), "sp25")
    assert (v.credit.basis, v.credit.op_time_s, v.credit.other_s, v.credit.fraction) == (
        "cold", pytest.approx(0.12), pytest.approx(0.04), 0.0)
    perf = next(f for f in v.findings if f.rule.id == "sp25.performance")
    assert perf.reason == ("summed Op Time 120.0 ms as the course timed it (one cold call) at 10,000 images: 0% of "
                           "the performance credit, 0 points; warm median 40.0 ms")
    small = verdict(ev(layers=cold, images=1000), "sp25")  # a cold call's fixed costs do not scale: warm, scaled
    assert (small.credit.basis, small.credit.op_time_s, small.credit.other_s) == (
        "warm", pytest.approx(0.4), pytest.approx(0.12))
