"""The verdict applied to a user kernel's run result (the one place its status is decided), its evidence
read from the result, the child's CUPTI records and the built library's SASS; and the verdict in words."""

from __future__ import annotations

from pathlib import Path

from profconv import judge
from profconv.analysis.sass import parse
from profconv.judge import text
from profconv.judge.assemble import apply, from_result
from profconv.profile.attribution import attribute_calls
from profconv.profile.disassemble import Disassembly
from profconv.records import OpTime
from profconv.records.run import ConvResult, VariantResult
from tests.test_attribution import COPY_IN, COPY_OUT, KERNEL, Trace, course_call

SASS = Path(__file__).parent / "data" / "sass"


def op(s: float) -> OpTime:
    return OpTime(median_s=s, min_s=s * 0.98, max_s=s * 1.05, samples_s=[s] * 5)


def result(err: float = 2e-7, status: str = "ok", error: str | None = None, **kw) -> VariantResult:
    conv = [ConvResult(layer="conv1", shape="M=4 C=1 86x86 K=7", op_time=op(0.004), rel_error=err, status=status,
                       error=error, checks={"inputs_unchanged": True, "timed_output_rechecked": True}),
            ConvResult(layer="conv2", shape="M=16 C=4 40x40 K=7", op_time=op(0.011), rel_error=err, status=status,
                       error=error, checks={"inputs_unchanged": True, "timed_output_rechecked": True})]
    return VariantResult(10_000, "k", "user kernel (course)", "fp32", status=status, error=error, conv=conv,
                         user={"user": True, "contract": "course", "flavour": "minidnn", **kw})


def tf32_sass() -> Disassembly:
    return Disassembly("libcourse.so", parse((SASS / "wmma_tf32.sass").read_text()))


def test_a_tf32_kernel_failed_by_the_harness_tolerance_is_ok_by_its_precision():
    why = "relative error 0.00031 above tolerance 1e-05"
    res = result(3.1e-4, "failed", why)
    ev = from_result(res, dis=tf32_sass())
    assert ev.precision == "tf32" and [o.name for o in ev.optimisations] == ["tensor-cores-tf32"]
    assert ev.optimisations[0].evidence == "HMMA.1684.F32.TF32 x12"
    v = judge.judge(ev, judge.load("sp25"))
    assert v.status == "ok"
    blind = apply(result(3.1e-4, "failed", why), judge.load("sp25"))  # no SASS: judged as declared fp32
    assert blind.status == "failed" and blind.verdict is not None
    assert blind.error == "conv1: relative error 0.00031 above the fp32 tolerance 1e-05 [profconv.output-correct]"
    assert [c.error for c in blind.conv] == ["relative error 0.00031 above the fp32 tolerance 1e-05 "
                                             "[profconv.output-correct]"] * 2


def test_apply_sets_the_rows_and_the_status_from_the_verdict():
    tr = Trace()
    for layer in ("conv1", "conv2"):
        for _ in range(3):
            course_call(tr, f"ece408-fa20/k/{layer}", prolog=(*COPY_IN, KERNEL), epilog=COPY_OUT)
    res = apply(result(), judge.load("minidnn"), records=tr.records())
    assert res.status == "failed"
    assert res.error == "1 kernel launch(es) in the prolog: conv_forward_kernel [minidnn.work-in-timed-call]"
    assert [c.status for c in res.conv] == ["ok", "ok"]  # the layers' outputs are right: the rule is the call's
    v = res.verdict
    assert v is not None and [p.phase for p in v.placement] == ["prolog", "timed", "epilog"]
    assert text.outside(v) == "prolog: 1 kernel (conv_forward_kernel)"
    lines = text.lines("k (user) (10000)", v)
    assert lines[0] == ("k (user) (10000): FAILED: 1 kernel launch(es) in the prolog: conv_forward_kernel "
                        "[minidnn.work-in-timed-call] — ECE 408 mini-dnn project (Fall 2020 on) rules")
    assert lines[1].startswith("  rule: All your gpu kernel calls need to take place inside conv_forward_gpu()")
    assert "  timed call: 0 kernel launch(es) on 0 stream(s); outside it: prolog: 1 kernel (conv_forward_kernel)" in lines


def test_an_honest_kernel_keeps_its_rows_and_gets_the_credit_of_its_term():
    tr = Trace()
    for layer in ("conv1", "conv2"):
        course_call(tr, f"ece408-fa20/k/{layer}", prolog=COPY_IN, timed=(KERNEL,), epilog=COPY_OUT)
    res = apply(result(), judge.load("sp25"), records=tr.records())
    assert (res.status, res.error) == ("ok", None)
    v = res.verdict
    assert v is not None and text.status(v) == "ok" and text.outside(v) == "—"
    assert v.credit is not None and v.credit.op_time_s == 0.015 and v.credit.points == 25.0
    assert text.lines("k", v)[-1] == "  performance: 15.0 ms summed Op Time at 10,000 images -> 100% of the credit " \
                                     "(25 points)"


def test_edge_shapes_and_the_sanitizer_from_the_result():
    edges = [{"layer": "conv1", "shape": "B=1 M=4 C=1 86x86 K=7", "seed": 1, "rel_error": 1e-7, "status": "ok"},
             {"layer": "conv1", "shape": "B=3 M=4 C=1 87x89 K=7", "seed": 1, "rel_error": None, "status": "failed",
              "error": "unwritten or non-finite elements"}]
    san = {"memcheck": {"errors": 989, "warnings": 0, "findings": ["Invalid __global__ read of size 4 bytes at k.cu:17"],
                        "complete": True}}
    res = result(edge_checks=edges, sanitizer=san)
    res.status, res.error = "failed", "1 of 2 edge-shape checks failed"
    out = apply(res, judge.load("minidnn"))
    assert out.status == "ok" and out.verdict is not None
    assert out.verdict.warnings == [
        "not general: wrong at B=3 M=4 C=1 87x89 K=7 (1 of 2 edge checks) [minidnn.edge-shapes]",
        "compute-sanitizer: memcheck 989 error(s): Invalid __global__ read of size 4 bytes at k.cu:17 [minidnn.sanitizer]"]
    strict = apply(result(edge_checks=edges, sanitizer=san), judge.load("profconv"))
    assert strict.status == "failed" and strict.verdict.rule.id == "profconv.edge-shapes"


def test_a_compile_error_and_a_skipped_kernel():
    res = VariantResult(100, "k", "user kernel (course)", "fp32", status="failed", error="conv1: compile error: k.cu:3",
                        conv=[ConvResult(layer="conv1", shape="", status="failed", error="compile error: k.cu:3: error")],
                        user={"contract": "course"})
    out = apply(res, judge.load("sp25"))
    assert (out.status, out.error) == ("failed", "compile error: k.cu:3: error [profconv.compiled]")
    skipped = VariantResult(100, "k", status="skipped", error="needs CUDA and CuPy")
    assert apply(skipped, judge.load("sp25")).verdict is None


def test_attribution_feeds_optimisations_from_the_timed_calls_sass_only():
    """A file holding a TF32 kernel it never launches in the timed call (a decoy) does not get Tensor Cores."""
    tr = Trace()
    course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=(KERNEL,), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    dis = Disassembly("lib.so", parse((SASS / "wmma_tf32.sass").read_text() + (SASS / "course_minidnn.sass").read_text()))
    ev = from_result(result(), att, dis)
    assert ev.tensor_types == frozenset() and [o.name for o in ev.optimisations] == []


def test_the_reports_verdict_section_in_markdown():
    from profconv.records import Environment, ModelInfo, RunRecord, RunSettings
    from profconv.render import markdown
    from profconv.render.document import Document, RenderOptions
    from profconv.report.verdicts import verdict_section

    tr = Trace()
    for layer in ("conv1", "conv2"):
        course_call(tr, f"ece408-fa20/k/{layer}", prolog=(*COPY_IN, KERNEL), epilog=COPY_OUT)
    judged = apply(result(), judge.load("sp25"), records=tr.records())
    honest = apply(result(), judge.load("sp25"), records=None)
    honest.variant = "h"
    rec = RunRecord(argv=["profconv", "run"], created="2026-11-28T00:00:00+00:00", environment=Environment(),
                    model=ModelInfo(name="ece408-fa20"), settings=RunSettings(repeat=5), results=[judged, honest])
    sec = verdict_section(rec)
    assert sec is not None
    md = markdown.render(Document("r", [sec]), RenderOptions())
    assert ("| `k` | 10,000 | sp25 | FAILED: 1 kernel launch(es) in the prolog: conv_forward_kernel | "
            "`sp25.work-in-timed-call` | — | prolog: 1 kernel (conv_forward_kernel) | 100% (25 pts) |") in md
    assert "| `h` | 10,000 | sp25 | ok | — | — | not recorded | 100% (25 pts) |" in md
    assert ("- `k` (10,000 images): `sp25.work-in-timed-call`: ALL your gpu kernel calls need to be launched inside "
            "conv_forward_gpu() for your performance submission — ECE 408 Spring 2025 Project, Milestone 3: Rubric, "
            "Overall Performance") in md
    assert verdict_section(RunRecord(argv=[], created="", environment=Environment(), model=ModelInfo(name="m"),
                                     settings=RunSettings(repeat=1))) is None


def facts(err: float = 2e-7, **layer) -> dict:
    """A KernelFacts record as run.json holds it (records/facts.py of the harness)."""
    def lay(name: str, op: float) -> dict:
        return {"layer": name, "shape": "M=4 C=1 86x86 K=7", "check": {"rel_error": err, "nonfinite": 0, "elements": 9},
                "inputs_modified": False,
                "timed": {"calls": 7, "fresh_inputs": True, "wrong": 0, "worst_rel_error": err, "nonfinite": 0},
                "determinism": {"identical": True}, "ghost": {"rel_error": 1.0, "cosine": 0.0, "matched": 0.0},
                "timing": {"op_median_s": op, "cold_s": op * 30, "left_running_s": 0.0, "below_floor": False,
                           "floor_s": op / 50}, **layer}
    return {"version": 1, "form": {"contract": "course", "form": "minidnn-stride", "folder": "req_1"},
            "compiled": {"ok": True, "compiler": "nvcc"}, "harness": {"images": 10_000, "host_memory": "pageable"},
            "layers": [lay("conv1", 0.004), lay("conv2", 0.011)],
            "edges": [{"layer": "conv1", "shape": "B=3 M=4 C=1 87x89 K=7", "seed_index": 0,
                       "output": {"rel_error": err, "nonfinite": 0}}], "correctness": 0.8714}


def test_facts_a_tf32_kernel_the_harness_counted_wrong_is_judged_by_its_precision():
    f = facts(3.1e-4)
    for lay in f["layers"]:
        lay["timed"]["wrong"] = 7  # the harness's own fp32 tolerance
    res = result(3.1e-4, "failed", "wrong")
    ev = from_result(res, dis=tf32_sass(), facts=f)
    assert (ev.role, ev.precision, ev.layers[0].cold_s) == ("req_1", "tf32", 0.12)
    v = judge.judge(ev, judge.load("sp25"))
    assert (v.status, v.warnings) == ("ok", [])
    blind = judge.judge(from_result(res, facts=f), judge.load("sp25"))
    assert blind.rule.id == "profconv.output-correct"
    timed = next(x for x in blind.findings if x.rule.id == "profconv.timed-outputs")
    assert timed.reason == ("7 of 7 timed calls on fresh inputs gave a wrong output (an output cached or replayed, or "
                            "work skipped): relative error up to 0.00031 above the fp32 tolerance 1e-05")


def test_facts_half_the_work_in_the_prolog_is_caught_by_the_ghost_call():
    f = facts(ghost={"rel_error": 0.7, "cosine": 0.7, "matched": 0.5})
    f["form"]["folder"] = None
    ev = from_result(result(), facts=f)
    v = judge.judge(ev, judge.load("sp25"))
    assert (v.status, v.rule.id) == ("failed", "sp25.work-in-timed-call")
    assert v.reason == ("conv1: prolog and epilog alone, without conv_forward_gpu, give 50% of the output right: that "
                        "work was done outside the timed call")


def test_facts_left_running_below_floor_and_a_crash():
    f = facts(timing={"op_median_s": 1e-6, "below_floor": True, "floor_s": 2e-5, "left_running_s": 0.003})
    v = judge.judge(from_result(result(), facts=f), judge.load("profconv"))
    assert v.rule.id == "profconv.nothing-left-running"
    crashed = {"form": {"contract": "course", "form": "minidnn"}, "compiled": {"ok": True}, "layers": []}
    res = result(status="failed", error="crashed (SIGSEGV) during ece408-fa20/k/conv1: check")
    c = judge.judge(from_result(res, facts=crashed), judge.load("sp25"))
    assert (c.status, c.rule.id, c.reason) == ("failed", "profconv.ran", "crashed (SIGSEGV) during "
                                               "ece408-fa20/k/conv1: check")
    unknown = {"form": {"contract": "course", "error": "not a kernel: no __global__ function"}}
    u = judge.judge(from_result(result(status="failed", error="x"), facts=unknown), judge.load("sp25"))
    assert (u.rule.id, [f.outcome for f in u.findings if f.rule.id == "profconv.ran"]) == (
        "profconv.recognised", ["skip"])


def test_rejudge_under_another_term_from_the_record_alone(tmp_path):
    from profconv.judge.assemble import rejudge
    from profconv.records import Environment, ModelInfo, RunRecord, RunSettings, read

    tr = Trace()
    for layer in ("conv1", "conv2"):
        course_call(tr, f"ece408-fa20/k/{layer}", prolog=COPY_IN, timed=(KERNEL, KERNEL, KERNEL, KERNEL), epilog=COPY_OUT)
    res = apply(result(3.1e-4, "failed", "x"), judge.load("profconv"), records=tr.records())
    assert res.verdict is not None and res.verdict.status == "failed"  # fp32 by declaration: no SASS here
    rec = RunRecord(argv=[], created="", environment=Environment(), model=ModelInfo(name="ece408-fa20"),
                    settings=RunSettings(repeat=5), results=[res])
    path = tmp_path / "run.json"
    path.write_text(rec.to_json())
    again = read(path, RunRecord).results[0]
    v = rejudge(again, judge.load("sp25"))
    assert v is not None and v.rule is not None and v.rule.id == "profconv.output-correct"
    assert [p.kernel_launches for p in v.placement] == [0, 4, 0]
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent  # this checkout's profconv, not an installed one
    out = subprocess.run([sys.executable, str(root / "scripts" / "rejudge.py"), str(path), "--course", "sp25,minidnn"],
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(root)}
                         ).stdout.splitlines()
    assert out[0] == ("k [sp25 final]: FAILED profconv.output-correct: conv1: relative error 0.00031 above the fp32 "
                      "tolerance 1e-05 (optimisations: —)")
    assert len(out) == 2


def test_the_course_folder_of_a_file_decides_its_role():
    from profconv.judge.assemble import folder_of

    assert folder_of("/s/project/m3/req_1/m3-forward.cu") == "req_1"
    assert folder_of("m3/op_5/m3-forward.cu") == "op_5"
    assert folder_of("/s/project/src/layer/custom/m3-forward.cu") is None
    assert folder_of(None) is None
    ev = from_result(result(path="/s/m3/op_0/m3-forward.cu"))
    assert (ev.folder, ev.role) == ("op_0", "op_0")


def test_rejudge_of_an_older_verdict_drops_libraries_the_call_never_launched():
    from profconv.judge.assemble import rejudge
    from profconv.records.verdict import Optimisation, Placement, Verdict

    res = result(3.1e-4)
    res.verdict = Verdict(course="minidnn", course_name="x", status="ok", optimisations=[
        Optimisation(name="tensor-cores-tf32", kernel="k", evidence="HMMA.1684.F32.TF32 x4"),
        Optimisation(name="library-cublas", evidence="sm90_xmma_gemm_f64f64_…_cublas")],  # profconv's reference's
        placement=[Placement(phase="timed", kernels=["k"], kernel_launches=1, streams=1)])  # no sass_read flag
    v = rejudge(res, judge.load("sp25"))
    assert v is not None and v.status == "ok" and v.precision == "tf32"
    assert [o.name for o in v.optimisations] == ["tensor-cores-tf32"]
