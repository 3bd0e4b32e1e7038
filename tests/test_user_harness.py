"""The user-kernel harness on the CPU (NumPy standing in for CuPy, tests/fake_cupy.py): the facts it
records and the verdict it gives for honest kernels and for kernels that cheat the way leaderboards were
cheated (output cached by pointer, replayed, computed every other call, constant, work left running,
work in the prolog). The same cheats in CUDA, run on the GPU: tests/test_user_cheats_gpu.py."""

from __future__ import annotations

import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profconv.records import KernelFacts, encode
from profconv.records.facts import LayerFacts, OutputFacts, TimedCallFacts
from profconv.run import runner as runner_mod
from profconv.run import weights
from profconv.run.models import get_model
from profconv.run.user import calls, checks, compare, contracts, fresh, manifest, verdict
from tests.fake_cupy import FakeCupy

HONEST = """
from profconv.run import reference
import numpy as np

def launch(x, w, bias, out, s):
    reference.conv2d(np, x, w, bias, s.P, out=out)
"""

CHEATS = {
    # the output of the first call per input address, kept and handed back for that address
    "cached_by_pointer": """
        seen = {}
        def launch(x, w, bias, out, s):
            key = x.__array_interface__["data"][0]
            if key not in seen:
                reference.conv2d(np, x, w, bias, s.P, out=out)
                seen[key] = out.copy()
            out[...] = seen[key]
        """,
    # the first call's result replayed on every later call
    "replayed": """
        kept = []
        def launch(x, w, bias, out, s):
            if not kept:
                reference.conv2d(np, x, w, bias, s.P, out=out)
                kept.append(out.copy())
            out[...] = kept[0]
        """,
    # batch-and-skip: the work of every other call is skipped (its output buffer left as it came)
    "skips_calls": """
        n = [0]
        def launch(x, w, bias, out, s):
            n[0] += 1
            if n[0] % 2 == 1:
                reference.conv2d(np, x, w, bias, s.P, out=out)
        """,
    # one image's output for the whole batch: close to the right one only where the images are alike
    "constant": """
        def launch(x, w, bias, out, s):
            reference.conv2d(np, x.mean(axis=0, keepdims=True), w, bias, s.P, out=out[:1])
            out[...] = out[:1]
        """,
}


def kernel_file(tmp_path: Path, name: str, body: str, tolerance: float | None = None) -> Path:
    head = "# profconv\n# contract = \"python\"\n" + (f"# tolerance = {tolerance}\n" if tolerance else "")
    path = tmp_path / f"{name}.py"
    path.write_text(head + "from profconv.run import reference\nimport numpy as np\n" + textwrap.dedent(body))
    return path


def run_kernel(path: Path, images: int = 3, seed: int = 0, repeat: int = 4, warmup: int = 1, cp=None, rule=None,
               layers_only: bool = False):
    cp = cp or FakeCupy()
    model = get_model("ece408")
    params = weights.load(model, None)
    run = runner_mod.Runner(model, params, cp)
    opts = runner_mod.RunOptions(images=images, repeat=repeat, warmup=warmup, rule=rule)
    ds = runner_mod.load_inputs(model, opts)
    x = cp.asarray(ds.images)
    decl = manifest.load(path)
    variant, kernel = contracts.user_variant(decl)
    course = None if layers_only else checks.course_pass(run, variant, kernel, x, ds.labels, lambda m: None)  # as the worker does
    conv_io = run.reference_pass(x)
    return checks.run_user(run, variant, kernel, x, ds.labels, conv_io, opts, {"gpu": None}, lambda m: None,
                           lambda r: None, seed=seed, layers_only=layers_only, course=course)


def test_an_honest_kernel_passes_with_every_fact_recorded(tmp_path):
    res = run_kernel(kernel_file(tmp_path, "honest", HONEST))
    assert res.status == "ok", res.error
    f = res.facts
    assert f is not None and f.form.contract == "python" and f.harness.y_initial == "nan"
    assert [lf.layer for lf in f.layers] == ["conv1", "conv2"]
    for lf in f.layers:
        assert lf.check.rel_error < 1e-6 and lf.check.nonfinite == 0 and lf.check.elements > 0
        assert lf.inputs_modified is False and lf.determinism.identical
        # the check and determinism calls are the warm-up (warmup=1): no extra call before the 4 timed
        assert lf.timed.calls == 4 and lf.timed.fresh_inputs and lf.timed.wrong == 0 and lf.timed.worst_rel_error < 1e-6
        assert lf.timing.samples == 4 and lf.timing.cold_s > 0 and lf.timing.op_median_s > 0
        assert lf.timing.left_running_s == 0.0 and lf.ghost is None
    assert len(f.edges) == 8 and all(e.output.rel_error < 1e-6 for e in f.edges)
    assert f.correctness == res.correctness is not None
    assert (f.legacy_status, f.legacy_error) == ("ok", None)
    assert res.conv[0].checks["timed_output_rechecked"] and res.conv[0].checks["fresh_inputs"]
    back = KernelFacts.__name__ in encode(res) or True  # the facts encode with the result
    assert back and '"facts"' in encode(res)


@pytest.mark.parametrize("name, reason", [
    # new addresses are not promised (an allocator reuses freed memory), new values are: caught either way.
    # Which input lands on an address it cached is the allocator's choice, so the rule that catches it is:
    # conv1's or conv2's timed outputs; an edge shape (CI, fresh clone of 5b3eb2f, tests-latest); or conv2's
    # input on conv1's cached address, conv1's output handed back (CI, fresh clone of 28d75da, tests-locked); or
    # conv1's input on conv2's cached address, conv2's output handed back (CI, fresh clone of c4cc442, tests-latest)
    ("cached_by_pointer", ("the output of the timed calls is wrong (", "not general: ",
                           "ValueError: could not broadcast input array from shape (3,6,60,60)",
                           "ValueError: could not broadcast input array from shape (3,16,26,26) into shape (3,6,60,60)")),
    ("replayed", "conv1: the output of the timed calls is wrong (4 of 4 calls on fresh inputs, first: call 0;"),
    ("skips_calls", "conv1: the output of the timed calls is wrong (2 of 4 calls on fresh inputs, first: call 1;"),
])
def test_cheats_that_reuse_or_skip_work_fail_on_fresh_inputs(tmp_path, name, reason):
    res = run_kernel(kernel_file(tmp_path, name, CHEATS[name]))
    reasons = reason if isinstance(reason, tuple) else (reason,)
    heads = tuple(f"{layer}{r}" for r in reasons for layer in ("", "conv1: ", "conv2: "))
    assert res.status == "failed" and res.error.startswith(heads), res.error
    assert res.facts.layers[0].check.rel_error < 1e-6  # right on the check call: only fresh inputs catch it


def test_a_kernel_that_skips_every_other_timed_call_is_caught_on_every_call(tmp_path):
    """Before fresh inputs, only the last timed call's output was re-checked (a kernel that skips every
    other call passed whenever the last call was one that worked)."""
    res = run_kernel(kernel_file(tmp_path, "skips", CHEATS["skips_calls"]))
    t = res.facts.layers[0].timed
    assert t.calls == 4 and t.wrong == 2 and t.first_wrong == 1 and t.nonfinite > 0
    assert not res.facts.layers[0].determinism.identical  # the second call on the same inputs skipped too


def test_constant_output_passes_a_loose_tolerance_on_the_dataset_but_not_on_fresh_inputs(tmp_path):
    res = run_kernel(kernel_file(tmp_path, "constant", CHEATS["constant"], tolerance=0.9), images=3)
    first = res.facts.layers[0]
    assert first.check.rel_error < 0.9  # the course's images are alike enough: the check call passes
    assert first.timed.worst_rel_error > 0.9  # each image scaled by its own ±½, ±1, ±2: no constant fits
    assert res.status == "failed" and "the output of the timed calls is wrong" in res.error


def _with_cp(cp, fn):
    import builtins

    builtins.CP = cp  # type: ignore[attr-defined]
    try:
        return fn()
    finally:
        del builtins.CP  # type: ignore[attr-defined]


DURATIONS = """
    def launch(x, w, bias, out, s):
        reference.conv2d(np, x, w, bias, s.P, out=out)
        CP.pending.append((CP.durations.pop(0), lambda: None))
    """


def test_timed_calls_follow_the_stop_when_stable_rule(tmp_path):
    """As the built-ins: warm-up, at least --repeat samples, then on until the median's interval is within the
    target, the budget is spent or max-repeats (fake seconds far above the real time of the NumPy conv)."""
    from profconv.run.gpu import StopRule

    path = kernel_file(tmp_path, "steady", DURATIONS)

    def timed(durations, **kw):
        cp = FakeCupy()
        cp.durations = list(durations)
        res = _with_cp(cp, lambda: run_kernel(path, cp=cp, layers_only=True, **kw))
        return res.conv[0].op_time

    # warm-up 4: the check call and its repeat on the same inputs (1.0 s each), then two more (500 s each)
    t = timed([1.0, 1.0] + [500.0] * 2 + [100.0] * 200 + [1.0] * 400, warmup=4, repeat=5, rule=StopRule(0.01, 30.0))
    assert t.stopped == "stable" and t.target == 0.01 and t.samples_s == pytest.approx([100.0] * 6, rel=1e-3)
    noisy = [1.0, 1.0] + [100.0, 300.0] * 300
    t = timed(noisy, warmup=0, repeat=5, rule=StopRule(0.001, 0.0))
    assert t.stopped == "budget" and len(t.samples_s) == 5
    t = timed(noisy, warmup=0, repeat=5, rule=StopRule(0.001, 60.0, max_repeat=40))
    assert t.stopped == "max-repeats" and len(t.samples_s) == 40
    t = timed(noisy, warmup=0, repeat=5)
    assert t.stopped == "repeats" and len(t.samples_s) == 5


def test_work_left_on_another_stream_is_timed_and_fails(tmp_path):
    cp = FakeCupy()
    body = """
        import profconv.run.user.calls
        def launch(x, w, bias, out, s):
            reference.conv2d(np, x, w, bias, s.P, out=out)
            CP.pending.append((0.003, lambda: None))  # 3 ms still running when the call returns
        """
    res = _with_cp(cp, lambda: run_kernel(kernel_file(tmp_path, "side", body), cp=cp))
    t = res.facts.layers[0].timing
    assert t.left_running_s == pytest.approx(0.003, abs=2e-4) and t.op_median_s >= 0.003
    assert res.error.startswith("conv1: work left running on another stream after the call returned (3")


def test_the_secret_seed_changes_the_inputs_and_stays_out_of_the_record(tmp_path):
    a = list(fresh.transforms(0, 5, "m/k/conv1").__next__().scales)
    b = list(fresh.transforms(12345, 5, "m/k/conv1").__next__().scales)
    assert a != b
    res = run_kernel(kernel_file(tmp_path, "honest", HONEST), seed=12345)
    res.facts.harness.secret_seed = True
    assert res.status == "ok"


def test_transforms_are_exact_and_never_repeat():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 2, 5, 5)).astype(np.float32)
    gen = fresh.transforms(7, 4, "x")
    seen = [next(gen) for _ in range(50)]
    assert all(not t.identity for t in seen) and all(s != t for s, t in zip(seen, seen[1:]))
    for t in seen[:5]:
        assert np.array_equal(t.undo(np, t.apply(np, a)), a)
    one = fresh.transforms(7, 1, "x")
    assert all(next(one).scales[0] != 1.0 for _ in range(20))
    ghost = fresh.transforms(7, 4, "x", ghost=True)
    assert all(next(ghost).roll != 0 for _ in range(20))


def test_compare_maps_a_transformed_output_back_exactly():
    rng = np.random.default_rng(1)
    ref = rng.standard_normal((5, 3, 4, 4)).astype(np.float32)
    t = fresh.Transform(2, (2.0, -0.5, 1.0, -1.0, 0.5))
    y = t.apply(np, ref)
    st = compare.compare(np, y, ref, t, compare.rms(np, ref))
    assert st.rel_error == 0 and st.nonfinite == 0 and st.matched == ref.size and st.cosine == pytest.approx(1)
    y[0, 0, 0, 0] = np.nan
    st = compare.compare(np, y, ref, t)
    assert st.nonfinite == 1 and 0 < st.rel_error < 0.2
    assert compare.compare(np, np.zeros_like(ref), ref).rel_error == pytest.approx(1)


def test_determinism_facts():
    a = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    assert compare.determinism(np, a, a.copy()).identical
    b = a.copy()
    b[0, 0, 0, 1] += 1e-3
    d = compare.determinism(np, a, b)
    assert not d.identical and d.max_abs_diff == pytest.approx(1e-3, rel=1e-3) and d.rel_diff > 0
    b[0, 0, 0, 0] = np.nan
    assert compare.determinism(np, a, b).rel_diff is None


def test_phases_are_named_for_attribution():
    assert calls.phase_of("ece408/k/conv1") == "conv_forward_gpu"
    assert calls.phase_of("ece408/k/conv1/prolog") == "prolog"
    assert calls.phase_of("ece408/k/conv1/check/epilog") == "epilog"
    assert calls.phase_of("ece408/k/conv1/check/conv_forward_gpu") == "conv_forward_gpu"
    assert calls.phase_of("ece408/reference") is None and calls.phase_of("ece408/k/forward/conv1") is None


def test_a_call_in_phases_times_each_and_counts_work_left_running():
    cp = FakeCupy()
    order = []
    ph = calls.Phases(prolog=lambda: order.append("prolog") or "state",
                      forward=lambda st: order.append(f"forward {st}") or cp.pending.append((0.002, lambda: None)),
                      epilog=lambda st: order.append(f"epilog {st}"))
    _, t = calls.call(calls.Clock(cp), ph, "m/k/conv1")
    assert order == ["prolog", "forward state", "epilog state"]
    assert t.left_running_s == pytest.approx(0.002, abs=2e-4) and t.op_s >= 0.002
    assert t.end_to_end_s >= t.op_s and t.prolog_s is not None and t.epilog_s is not None
    order.clear()
    calls.call(calls.Clock(cp), ph, "m/k/conv1", skip_forward=True)
    assert order == ["prolog", "epilog state"]


def test_on_a_shared_gpu_only_the_timed_phase_holds_it_alone():
    """grade's jobs sharing a GPU: the lock is held from before the timed phase's start event to after its
    device-wide end, the prolog and epilog run beside the others' work and are not timed."""
    import contextlib

    cp = FakeCupy()
    order: list[str] = []

    @contextlib.contextmanager
    def alone():
        order.append("alone")
        yield
        order.append("shared")

    ph = calls.Phases(prolog=lambda: order.append("prolog") or "state",
                      forward=lambda st: order.append("forward") or cp.pending.append((0.002, lambda: None)),
                      epilog=lambda st: order.append("epilog"))
    _, t = calls.call(calls.Clock(cp), ph, "m/k/conv1", alone=alone)
    assert order == ["prolog", "alone", "forward", "shared", "epilog"]
    assert t.op_s >= 0.002 and t.left_running_s == pytest.approx(0.002, abs=2e-4)
    assert t.end_to_end_s is None and t.prolog_s is None and t.epilog_s is None


@pytest.mark.parametrize("let_go, whole", [((False, False), True), ((True, False), False), ((False, True), False)])
def test_an_untimed_call_on_a_shared_gpu_is_three_steps(let_go, whole):
    """grade's jobs sharing a GPU: an untimed call (a check) lets another job's timed call go first after its
    prolog and after its timed phase, not only before it; where it did let the GPU go, its prolog, epilog and
    end-to-end times hold that wait and are not recorded (its own phase's time still is)."""
    cp = FakeCupy()
    order: list[str] = []
    answers = list(let_go)

    def between() -> bool:
        order.append("checkpoint")
        return answers.pop(0)

    ph = calls.Phases(prolog=lambda: order.append("prolog") or "state",
                      forward=lambda st: order.append("forward") or cp.pending.append((0.002, lambda: None)),
                      epilog=lambda st: order.append("epilog"))
    _, t = calls.call(calls.Clock(cp), ph, "m/k/conv1/check", between=between)
    assert order == ["prolog", "checkpoint", "forward", "checkpoint", "epilog"]
    assert t.op_s >= 0.002
    if whole:
        assert t.end_to_end_s is not None and t.end_to_end_s >= t.op_s and t.prolog_s is not None
    else:
        assert t.end_to_end_s is None and t.prolog_s is None and t.epilog_s is None
    order.clear()
    calls.call(calls.Clock(cp), calls.Phases(forward=lambda st: order.append("forward")), "m/k/conv1",
               between=lambda: order.append("checkpoint") or False)
    assert order == ["forward"]  # a call in one phase is one step


def test_the_layers_after_a_conv_layer_are_warmed_before_its_turn_alone(tmp_path, monkeypatch):
    """The course's pass holds the GPU alone for each conv layer's call and the layers after it: their first
    use (cuBLAS's handle for fc) is paid before, on one image, beside other jobs' work; the conv layers'
    calls are still the process's first of the kernel."""
    from profconv.run import reference
    from profconv.run.user import gpushare

    seen: list[tuple[str, int]] = []
    apply = reference.apply
    monkeypatch.setattr(reference, "apply", lambda xp, layer, a, params: seen.append((layer.name, a.shape[0]))
                        or apply(xp, layer, a, params))
    monkeypatch.setattr(gpushare.Turns, "hold", lambda self: seen.append(("hold", 0)))
    run_kernel(kernel_file(tmp_path, "honest", HONEST), images=3)
    hold = ("hold", 0)
    assert seen[:20] == [("tanh1", 1), ("pool1", 1), hold,  # conv1's turn: its call, then the layers up to conv2
                         hold, ("tanh1", 3), hold, ("pool1", 3),
                         ("fc1", 1), ("tanh2", 1), ("fc2", 1), ("softmax", 1), hold,  # conv2's turn
                         hold, ("fc1", 3), hold, ("tanh2", 3), hold, ("fc2", 3), hold, ("softmax", 3)]


def test_work_in_the_prolog_is_named_by_the_ghost_check():
    ghost = LayerFacts(layer="conv1", shape="s", check=OutputFacts(rel_error=1e-7, elements=10),
                       ghost=compare.Stats(matched=6, elements=10).ghost())
    assert verdict.layer_verdict(ghost, 1e-5).startswith(
        "work done outside conv_forward_gpu: with conv_forward_gpu skipped, the prolog and epilog alone leave 60%")
    honest = LayerFacts(layer="conv1", shape="s", check=OutputFacts(rel_error=1e-7, elements=10),
                        ghost=compare.Stats(matched=0, elements=10).ghost(),
                        timed=TimedCallFacts(calls=5, fresh_inputs=True))
    assert verdict.layer_verdict(honest, 1e-5) is None


class _FakeLib:
    """A course library's error entry points: profconv_sync returns the queued error codes."""

    NAMES = {1: (b"cudaErrorInvalidValue", b"invalid argument"), 712: (b"cudaErrorHostMemoryAlreadyRegistered",
             b"part or all of the requested memory range is already mapped"),
             700: (b"cudaErrorIllegalAddress", b"an illegal memory access was encountered")}

    def __init__(self, codes):
        self.codes = list(codes)

    def profconv_sync(self):
        return self.codes.pop(0) if self.codes else 0

    def profconv_error_name(self, err):
        return self.NAMES[err][0]

    def profconv_error_string(self, err):
        return self.NAMES[err][1]


def test_errors_a_course_file_ignored_are_facts_and_a_lost_context_is_raised():
    """The course's program never checked cudaGetLastError: a cudaHostRegister of memory already registered
    (a file that registers its buffers and never unregisters them) harmed nothing there and must not fail here."""
    lib = contracts.CourseLibrary(_FakeLib([712, 712, 0, 1]), "minidnn")
    lib.raise_if_error("prolog")
    lib.raise_if_error("prolog")
    lib.raise_if_error("conv_forward_gpu")
    lib.raise_if_error("epilog")
    assert lib.ignored == ["prolog: cudaErrorHostMemoryAlreadyRegistered: part or all of the requested memory range "
                           "is already mapped", "epilog: cudaErrorInvalidValue: invalid argument"]
    with pytest.raises(contracts.KernelError, match="cudaErrorIllegalAddress"):
        contracts.CourseLibrary(_FakeLib([700]), "minidnn").raise_if_error("conv_forward_gpu")


def test_pageable_host_buffers_come_from_a_ring_kept_for_the_run(tmp_path):
    """mini-dnn files get pageable host memory, as the course's program allocates it; three buffers per shape
    in turn (never freed: a stale cudaHostRegister cannot meet memory mapped again at the same address)."""
    from profconv.run.models import ConvShape

    src = tmp_path / "new-forward.cu"
    src.write_text("void GPUInterface::conv_forward_gpu_prolog(float *y) {}\n"
                   "void GPUInterface::conv_forward_gpu(float *y, const float *x, const float *k, int B, int M, int C, "
                   "int H, int W, int K) {}\n")
    kernel = contracts.UserKernel(manifest.load(src))
    cp = FakeCupy()
    s = ConvShape(2, 3, 1, 8, 8, 3)
    a = np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 8, 8)
    w = np.ones((3, 1, 3, 3), dtype=np.float32)
    addresses = []
    for i in range(4):  # each call's buffers let go by the caller before the next: three in turn
        x, _, _, out = kernel.operands(cp, a * (i + 1), w, None, s)
        addresses.append(x.ctypes.data)
        assert np.array_equal(x, a * (i + 1)) and np.isnan(out).all() and out.shape == (2, 3, 6, 6)
        del x, out
    assert len(set(addresses[:3])) == 3 and addresses[3] == addresses[0]


def test_the_cold_call_is_the_course_programs_first_call(tmp_path):
    """The course timed one cold call per layer (a cuBLAS handle made inside conv_forward_gpu: 370 ms cold,
    4 ms warm): the course's pass runs first in the process, and its times are the facts' cold ones."""
    body = """
        first = {}
        def launch(x, w, bias, out, s):
            reference.conv2d(np, x, w, bias, s.P, out=out)
            if s.M not in first:  # the first call at each layer: a library handle made, 0.37 s
                first[s.M] = True
                CP.pending.append((0.37, lambda: None))
        """
    cp = FakeCupy()
    res = _with_cp(cp, lambda: run_kernel(kernel_file(tmp_path, "handle", body), cp=cp))
    for lf in res.facts.layers:
        assert lf.timing.cold_s - lf.timing.op_median_s > 0.3 and lf.timing.op_median_s < 0.2  # real time: the NumPy conv
    assert res.conv[0].checks["cold_s"] == res.facts.layers[0].timing.cold_s


def test_host_buffers_still_held_are_never_handed_out_again(tmp_path):
    """bench prepares one input set per --sets before timing them all: the pool grows rather than hand a set's
    buffers to the next (each set keeps its own values)."""
    from profconv.run.models import ConvShape

    src = tmp_path / "new-forward.cu"
    src.write_text("void GPUInterface::conv_forward_gpu_prolog(float *y) {}\n"
                   "void GPUInterface::conv_forward_gpu(float *y, const float *x, const float *k, int B, int M, int C, "
                   "int H, int W, int K) {}\n")
    kernel = contracts.UserKernel(manifest.load(src))
    cp, s = FakeCupy(), ConvShape(2, 3, 1, 8, 8, 3)
    a = np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 8, 8)
    w = np.ones((3, 1, 3, 3), dtype=np.float32)
    sets = [kernel.operands(cp, a * (i + 1), w, None, s) for i in range(5)]
    assert len({x.ctypes.data for x, _, _, _ in sets}) == 5
    assert all(np.array_equal(x, a * (i + 1)) for i, (x, _, _, _) in enumerate(sets))
    del sets
    again = [kernel.operands(cp, a, w, None, s)[0].ctypes.data for _ in range(6)]
    assert len(set(again)) >= 2 and all(p != q for p, q in zip(again, again[1:]))  # never the call just before


class _ScriptedClock:
    """Events at scripted GPU times (seconds); the device-wide synchronisation blocks `blocked` seconds."""

    def __init__(self, times: list[float], blocked: float):
        self.times, self.block = list(times), blocked

    def sync(self) -> None:
        pass

    def mark(self) -> Any:
        ev = types.SimpleNamespace(t=self.times.pop(0), synchronize=lambda: None)
        return ev

    def seconds(self, a: Any, b: Any) -> float:
        return b.t - a.t

    def blocked(self, own: Any) -> float:
        return self.block


@pytest.mark.parametrize(("blocked", "left", "op"), [(5e-6, 0.0, 0.001), (0.002, 0.002, 0.003)])
def test_a_slow_host_is_not_work_left_running(blocked, left, op):
    """The GPU's gap between the call's stream and the device-wide end event is 2 ms either way; only when the
    synchronisation really blocked (work on another stream) is it work left running, else the host's latency."""
    ph = calls.Phases(forward=lambda st: None)
    # e0 (no prolog) e1 at 0; the call's stream done at 1 ms; the device-wide end event at 3 ms; e3 at 3 ms
    _, t = calls.call(_ScriptedClock([0.0, 0.0, 0.001, 0.003, 0.003], blocked), ph, "m/k/conv1")  # type: ignore[arg-type]
    assert t.left_running_s == pytest.approx(left) and t.op_s == pytest.approx(op)


def test_each_call_of_the_kernel_is_one_window_for_the_api_records(tmp_path):
    """CUPTI records API calls only inside the kernel's calls (calls.watch_calls): every call opens a window
    and closes it, also a call that raises (a crashing kernel)."""
    from profconv.run.user import callwindow

    seen: list[bool] = []
    undo = callwindow.watch_calls(seen.append)
    try:
        res = run_kernel(kernel_file(tmp_path, "honest", HONEST))
        crash = run_kernel(kernel_file(tmp_path, "crash", "def launch(x, w, bias, out, s):\n    raise RuntimeError('x')\n"))
    finally:
        undo()
    assert res.status == "ok" and crash.status == "failed"
    opened = seen.count(True)
    assert opened == seen.count(False) and seen[::2] == [True] * opened and seen[1::2] == [False] * opened
    # per layer: the course's call, check, determinism, 4 timed (warm-up 1 absorbed); 8 edge calls; the crash:
    # the course's call (the pass ends there) and each layer's check call
    assert opened == 2 * (1 + 2 + 4) + 8 + 3


@pytest.mark.parametrize("shared", [False, True])
def test_end_to_end_times_are_recorded_only_where_the_calls_were_timed_whole(tmp_path, monkeypatch, shared):
    """A kernel called in phases (prolog, conv_forward_gpu, epilog): alone on its GPU each timed call is timed
    whole; on a GPU shared with other jobs' children (grade) only its timed phase is, and the record then has
    no end-to-end times (window s8a found them written as three zeros)."""
    from profconv.run.user import gpushare

    whole = contracts.UserKernel.phases

    def in_phases(self, cp, x, w, bias, out, s):
        ph = whole(self, cp, x, w, bias, out, s)
        return calls.Phases(prolog=lambda: "state", forward=ph.forward, epilog=lambda st: None, check=ph.check)

    monkeypatch.setattr(contracts.UserKernel, "phases", in_phases)
    gpushare.start(tmp_path / "gpu0.lock" if shared else None)
    try:
        res = run_kernel(kernel_file(tmp_path, "honest", HONEST))
    finally:
        gpushare.start(None)
    assert res.status == "ok", res.error
    for conv, lf in zip(res.conv, res.facts.layers):
        assert conv.op_time.median_s > 0 and lf.timing.samples == 4
        if shared:
            assert "end_to_end" not in conv.checks and lf.timing.end_to_end_median_s is None
            assert lf.timing.prolog_median_s is None and lf.timing.epilog_median_s is None
        else:
            e2e = conv.checks["end_to_end"]
            assert len(e2e["samples_s"]) == 4 and min(e2e["samples_s"]) >= conv.op_time.min_s > 0
            assert lf.timing.end_to_end_median_s == e2e["median_s"] and lf.timing.prolog_median_s >= 0


def test_an_edge_shape_that_loses_the_context_keeps_the_course_pass_numbers(tmp_path, monkeypatch):
    """A kernel whose out-of-bounds reads lose the CUDA context on an edge shape (not a course shape: window
    s8c, a real course file that was only wrong there in s8a/s8b): the course's pass, made first, still gives
    the forward pass's Correctness and layer times -- they need no GPU -- and the edge's error is its own."""
    from profconv.records.facts import EdgeFacts

    lost = "CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered (the CUDA context is lost)"
    monkeypatch.setattr(checks.UserCheck, "edges", lambda self, shapes: (
        [{"layer": "conv1", "shape": "B=3", "status": "failed", "error": lost}],
        [EdgeFacts(layer="conv1", shape="B=3", seed_index=0, error=lost)]))
    res = run_kernel(kernel_file(tmp_path, "honest", HONEST))
    assert res.correctness is not None and res.facts.correctness == res.correctness
    assert set(res.layer_times) == {layer.name for layer in get_model("ece408").layers} and res.forward_s > 0
    assert res.facts.edges[0].error == lost
