"""Checking and timing a kernel we did not write (runs in the child process, on the GPU): its facts.

Per conv layer of the model, each call made as the course's program makes it (calls.py: prolog,
conv_forward_gpu, epilog, each in its NVTX range; the device idle before, every stream done before
the end event), with the inputs it takes (contracts.UserKernel.operands: pageable host memory for
mini-dnn, a zeroed y for MXNet, a NaN-poisoned output otherwise):
  1. the sweep (if declared) picks a candidate by checked, timed trials;
  2. the cold call: the layer's first, on the dataset's layer input, timed as the course timed it,
     checked against the float64 reference; the inputs compared with their copies;
  3. the same inputs again: determinism (identical, or how far apart);
  4. mini-dnn: the ghost call, prolog and epilog with conv_forward_gpu skipped on fresh inputs (an
     output near the right one means the work is done outside the timed call);
  5. the timed calls, each on fresh inputs (fresh.py: new buffers, new values; `--secret-seed`) and
     each output checked, under the built-ins' stop rule;
  6. the floor: a time below FLOPs / datasheet peak (or, for a working set larger than twice the L2,
     the DRAM floor) is impossible.
Then edge shapes (B = 1; odd heights and widths that no tile divides) with several seeds on random
data; Correctness comes from the course's own pass over the net (`course_pass`, made first). Everything
measured is a fact (records/facts.py); the verdict of profconv's strict default is verdict.py's, from those facts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profconv.records import Dims, OpTime
from profconv.records.facts import EdgeFacts, GhostFacts, LayerFacts, TimedCallFacts, TimingFacts
from profconv.run import gpu, reference
from profconv.run.models import ConvShape
from profconv.run.record import ConvResult, VariantResult
from profconv.run.runner import Runner, RunOptions, prepare, rel_error
from profconv.run.user import build, calls, compare, fresh, gpushare, hostcopy, verdict
from profconv.run.user import facts as kernel_facts
from profconv.run.user.contracts import UserKernel, first_line, is_sticky
from profconv.run.variant import Variant

SEEDS = (1, 2, 3)
CHECK_CALLS = 2  # full calls each layer makes before its timed ones (the check, the same inputs again): warm-ups
Progress = Callable[[str], None]


def edge_shapes(s: ConvShape) -> list[ConvShape]:
    """B = 1 at the layer's size, and a batch of 3 at odd sizes (H + 1 or + 2, W + 3 or + 4, both odd)."""
    h = s.H + (1 if s.H % 2 == 0 else 2)
    w = s.W + (3 if s.W % 2 == 0 else 4)
    return [ConvShape(1, s.M, s.C, s.H, s.W, s.K, s.P), ConvShape(3, s.M, s.C, h, w, s.K, s.P)]


def floor_seconds(s: ConvShape, itemsize: int, peaks: Any, l2_bytes: int | None, arithmetic: str) -> tuple[float | None, str]:
    """The least time the layer can take on this GPU, and what bounds it (datasheet peaks; None when unknown)."""
    if peaks is None:
        return None, "no datasheet peak for this GPU"
    tflops = peaks.tflops(arithmetic) or peaks.fp32_tflops
    compute = s.flops / (tflops * 1e12)
    nbytes = itemsize * (s.B * s.C * s.H * s.W + s.M * s.C * s.K * s.K + s.B * s.M * s.Ho * s.Wo)
    if l2_bytes and nbytes > 2 * l2_bytes:
        memory = nbytes / (peaks.dram_tbps * 1e12)
        return (memory, "memory") if memory > compute else (compute, "compute")
    return compute, "compute (the working set fits in L2)"


def _same(cp: Any, a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return hostcopy.equal(a, b)
    return bool(cp.array_equal(a, b, equal_nan=True))


def _copy(cp: Any, a):
    return None if a is None else (a.copy() if isinstance(a, np.ndarray) else cp.array(a, copy=True))


def _poison(out) -> None:
    out.fill(np.nan)


class UserCheck:
    """Runs one user kernel on every conv layer of the model, with the checks above: a ConvResult (the
    table's row, profconv's verdict) and a LayerFacts (what was measured) per layer."""

    def __init__(self, runner: Runner, variant: Variant, kernel: UserKernel, env: dict, progress: Progress,
                 seed: int = 0, clock: calls.Clock | None = None, cold: dict[str, Any] | None = None):
        self.runner, self.variant, self.kernel, self.progress = runner, variant, kernel, progress
        self.cold = cold or {}  # course_pass: each layer's cold call (CallTimes), or why it could not run
        cp = runner.cp
        assert cp is not None
        self.cp = cp
        self.seed = seed
        self.clock = clock or calls.Clock(cp)
        from profconv.hardware import peak_for

        self.peaks = peak_for(env.get("gpu"))
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        self.l2 = int(props.get("l2CacheSize", 0)) or None

    @property
    def phased(self) -> bool:
        """The course's mini-dnn prolog / conv_forward_gpu / epilog form."""
        return self.kernel.decl.flavour in ("minidnn", "minidnn-stride")

    def _weights(self, layer_name: str):
        v = self.variant
        w = self.runner.params[f"{layer_name}.w"].astype(v.dtype)
        b = self.runner.params.get(f"{layer_name}.b")
        return w, None if b is None else b.astype(v.dtype)

    def _call(self, ops: tuple, s: ConvShape, tag: str, skip_forward: bool = False, timed: bool = False
              ) -> tuple[Any, calls.CallTimes]:
        """One call; `timed`: its timed phase alone on a GPU shared with other jobs' children."""
        x, w, bias, out = ops
        gpushare.checkpoint()  # a child of another job waiting to time goes first (a GPU shared by grade's jobs)
        phases = self.kernel.phases(self.cp, x, w, bias, out, s)
        forward_tag = tag if tag.count("/") == 2 else f"{tag}/{calls.FORWARD}"
        share = gpushare.current().active
        alone = gpushare.exclusive if timed and share else None  # its timed phase alone, prolog and epilog shared
        between = gpushare.checkpoint if share and not timed else None  # an untimed call: three steps, not one
        result, times = calls.call(self.clock, phases, tag, forward_tag, skip_forward, alone, between)
        return (out if result is None else result), times

    def layer(self, name: str, a, ref, s: ConvShape, opts: RunOptions) -> tuple[ConvResult, LayerFacts]:
        v = self.variant
        cr = ConvResult(layer=name, shape=s.text(), tolerance=v.tolerance,
                        dims=Dims(B=s.B, M=s.M, C=s.C, H=s.H, W=s.W, K=s.K, P=s.P))
        lf = LayerFacts(layer=name, shape=s.text())
        w, bias = self._weights(name)
        tag = f"{self.runner.model.name}/{v.name}/{name}"
        try:
            self._sweep(a, ref, s, w, bias, tag)
            self._measure(a, ref, s, opts, w, bias, tag, cr, lf)
            if self.phased:
                self._ghost(name, a, ref, s, w, bias, tag, lf)
        except build.CompileError as exc:
            lf.error = f"compile error: {exc}"
        except Exception as exc:
            lf.error = first_line(exc) + (" (the CUDA context is lost: later layers cannot run)" if is_sticky(exc) else "")
        lf.api_errors += self.kernel.ignored_errors()
        why = verdict.layer_verdict(lf, v.tolerance)
        if why:
            cr.status, cr.error = "failed", why
        return cr, lf

    def _sweep(self, a, ref, s: ConvShape, w, bias, tag: str) -> None:
        cp, v, k = self.cp, self.variant, self.kernel
        if not (k.decl.sweep and not v.host_io):
            return

        def wrong(result) -> str | None:
            err, _ = rel_error(cp, cp.asarray(result), ref)
            if err != err:
                return "output has unwritten or non-finite elements"
            return None if err <= v.tolerance else f"relative error {err:.3g} above tolerance {v.tolerance:g}"

        x, w_in, b_in, out = prepare(cp, v, a, w, bias, s)
        self.progress(f"{tag}: sweep of {len(k.decl.candidates())} candidates")
        # the sweep's role, as the built-in tuned variants'; its trials are timed: alone on the GPU
        with gpushare.exclusive(), calls.window(), gpu.nvtx_range(tag + "/check/tune"):
            k.choose(cp, x, w_in, b_in, s, wrong, lambda: cp.full(out.shape, np.nan, dtype=out.dtype))

    def _measure(self, a, ref, s: ConvShape, opts: RunOptions, w, bias, tag: str, cr: ConvResult,
                 lf: LayerFacts) -> None:
        """The cold call, the same inputs again, then the timed calls on fresh inputs; the floor."""
        cp, v, k = self.cp, self.variant, self.kernel
        ops = prepare(cp, v, a, w, bias, s)
        gpushare.checkpoint()  # each of these copies of a whole layer's arrays is a step
        kept = [_copy(cp, o) for o in ops[:3]]
        self.progress(f"{tag}: check")
        self.kernel.ignored_errors()  # those of an earlier layer or the sweep are not this layer's
        y1, cold = self._call(ops, s, f"{tag}/check")
        gpushare.checkpoint()
        first = compare.compare(cp, y1, ref)
        lf.check = first.output()
        cr.rel_error = None if first.nonfinite else first.rel_error
        cr.max_abs_error = None if first.nonfinite else first.max_abs
        cr.params = k.params(s)
        lf.inputs_modified = not all(_same(cp, k0, k1) for k0, k1 in zip(kept, ops[:3]) if k0 is not None)
        gpushare.note("inputs compared")
        again = prepare(cp, v, a, w, bias, s)  # the same values in new buffers, as each call of the course's program
        y2, _ = self._call(again, s, f"{tag}/check")
        gpushare.checkpoint()
        lf.determinism = compare.determinism(cp, y1, y2)
        del y1, y2, again
        self.progress(f"{tag}: timing")
        tf, times, timing = self._timed(a, ref, s, opts, w, bias, tag, kept)
        lf.timed = tf
        cr.op_time = OpTime(**timing.as_dict())
        course = self.cold.get(tag.rsplit("/", 1)[-1])
        lf.timing = self._timing_facts(s, course if isinstance(course, calls.CallTimes) else cold, times, timing)
        if isinstance(course, str):
            lf.api_errors.append(f"the course's call: {course}")
        checks: dict[str, Any] = {"nan_poisoned": k.y_initial == "nan", "fresh_inputs": True,
                                  "inputs_unchanged": not lf.inputs_modified and not tf.inputs_modified,
                                  "timed_output_rechecked": tf.wrong == 0, "cold_s": lf.timing.cold_s,
                                  "floor_s": lf.timing.floor_s, "floor_bound": lf.timing.floor_bound}
        if k.sweep_report(s):
            checks["sweep"] = k.sweep_report(s)
        ends = [c.end_to_end_s for c in times]
        if ends and all(e is not None for e in ends):  # None: timed beside other jobs (grade), only the timed phase
            checks["end_to_end"] = gpu.Timing([float(e) for e in ends if e is not None], timing.stopped,
                                              timing.target).as_dict()
        cr.checks = checks

    def _timed(self, a, ref, s: ConvShape, opts: RunOptions, w, bias, tag: str, kept: list
               ) -> tuple[TimedCallFacts, list[calls.CallTimes], gpu.Timing]:
        """Timed calls, each on fresh inputs and each output checked: warm-up (`opts.warmup` calls, the two
        check calls included), then at least `repeat`, on while `opts.rule` says so. The previous call's
        buffers live until the next call's exist (new addresses)."""
        cp, v = self.cp, self.variant
        tf = TimedCallFacts(calls=0, fresh_inputs=True)
        times: list[calls.CallTimes] = []
        gen = fresh.transforms(self.seed, s.B, tag)
        rule, t0, held = opts.rule, None, None
        warmup = max(0, opts.warmup - CHECK_CALLS)  # the check calls just made warmed the kernel up on this shape
        op: list[float] = []
        why: str | None = None
        while why is None:
            t = next(gen)
            ops = prepare(cp, v, t.apply(cp, a), w, bias, s)  # `held` keeps the last call's: new addresses
            y, ct = self._call(ops, s, tag, timed=True)  # no other process's GPU work under its timed phase
            _tally(tf, compare.compare(cp, y, ref, t), v.tolerance)
            gpushare.checkpoint()
            held = (ops, y)
            if tf.calls <= warmup:
                continue
            t0 = t0 if t0 is not None else time.perf_counter()
            times.append(ct)
            op = [c.op_s for c in times]
            why = (rule.done(op, opts.repeat, time.perf_counter() - t0) if rule is not None
                   else ("repeats" if len(op) >= opts.repeat else None))
        del held
        x_last = _dev(cp, ops[0])  # the last call's input as the kernel left it, against what it was given
        expected = t.apply(cp, a).astype(x_last.dtype)
        tf.inputs_modified = not (_same(cp, x_last, expected) and _same(cp, ops[1], kept[1]))
        return tf, times, gpu.Timing(op, why or "repeats", rule.target if rule else None)

    def _timing_facts(self, s: ConvShape, cold: calls.CallTimes, times: list[calls.CallTimes],
                      timing: gpu.Timing) -> TimingFacts:
        v = self.variant
        floor, bound = floor_seconds(s, np.dtype(v.dtype).itemsize, self.peaks, self.l2, v.arithmetic)
        return TimingFacts(
            op_median_s=timing.median, op_min_s=timing.min, samples=len(times), cold_s=cold.op_s,
            end_to_end_median_s=_median([c.end_to_end_s for c in times]), end_to_end_cold_s=cold.end_to_end_s,
            prolog_median_s=_median([c.prolog_s for c in times]), epilog_median_s=_median([c.epilog_s for c in times]),
            left_running_s=_median([c.left_running_s for c in times]), floor_s=floor,
            floor_bound=bound if floor is not None else None,
            below_floor=None if floor is None else timing.min < floor)

    def _ghost(self, name: str, a, ref, s: ConvShape, w, bias, tag: str, lf: LayerFacts) -> None:
        """prolog and epilog alone on fresh inputs (conv_forward_gpu skipped): how much of the output is right."""
        cp, v = self.cp, self.variant
        t = next(fresh.transforms(self.seed, s.B, tag, ghost=True))
        ops = prepare(cp, v, t.apply(cp, a), w, bias, s)
        self.progress(f"{tag}: ghost check")
        try:
            y, _ = self._call(ops, s, f"{tag}/check/ghost", skip_forward=True)
        except Exception as exc:  # our probe, not the course's call: its failure is a fact, not a verdict
            if is_sticky(exc):
                raise
            lf.ghost = GhostFacts(error=first_line(exc))
            return
        lf.ghost = compare.compare(cp, y, ref, t, compare.rms(cp, ref)).ghost()

    def edges(self, shapes: dict[str, ConvShape]) -> tuple[list[dict[str, Any]], list[EdgeFacts]]:
        """Each conv layer's edge shapes with each seed: random inputs and filters, float64 reference."""
        rows: list[dict[str, Any]] = []
        facts: list[EdgeFacts] = []
        for name, s in shapes.items():
            for e in edge_shapes(s):
                for i in range(len(SEEDS) if e.B == 1 else 1):
                    row, fact = self._edge(name, e, i)
                    rows.append(row)
                    facts.append(fact)
                    if fact.error and "CUDA context is lost" in fact.error:
                        return rows, facts
        return rows, facts

    def _edge(self, name: str, e: ConvShape, i: int) -> tuple[dict[str, Any], EdgeFacts]:
        cp, v = self.cp, self.variant
        seed = SEEDS[i] if self.seed == 0 else fresh.seed_for(self.seed, "edge", name, e.text(), i)
        rng = np.random.default_rng(seed)
        xh = rng.standard_normal((e.B, e.C, e.H, e.W)).astype(np.float32)
        wh = rng.standard_normal((e.M, e.C, e.K, e.K)).astype(np.float32) / np.sqrt(e.C * e.K * e.K)
        bh = rng.standard_normal(e.M).astype(np.float32) if f"{name}.b" in self.runner.params else None
        ref = reference.conv2d(cp, cp.asarray(xh), cp.asarray(wh), None if bh is None else cp.asarray(bh), e.P)
        shown = f"B={e.B} {e.text()}"
        row: dict[str, Any] = {"layer": name, "shape": shown, "seed": SEEDS[i] if self.seed == 0 else i + 1}
        fact = EdgeFacts(layer=name, shape=shown, seed_index=i)
        try:
            ops = prepare(cp, v, cp.asarray(xh), cp.asarray(wh), None if bh is None else cp.asarray(bh), e)
            y, _ = self._call(ops, e, f"{self.runner.model.name}/{v.name}/{name}/check/edge")
            st = compare.compare(cp, y, ref)
            fact.output = st.output()
            row["rel_error"] = None if st.nonfinite else st.rel_error
            ok = not st.nonfinite and st.rel_error <= v.tolerance
            row["status"] = "ok" if ok else "failed"
            if not ok:
                row["error"] = ("unwritten or non-finite elements" if st.nonfinite else
                                f"relative error {st.rel_error:.3g} above {v.tolerance:g}")
        except Exception as exc:
            fact.error = first_line(exc) + (" (the CUDA context is lost)" if is_sticky(exc) else "")
            row["status"], row["error"] = "failed", first_line(exc)
        return row, fact


def warm_kernels(cp: Any, conv_io: dict[str, tuple[Any, Any]], shapes: dict[str, ConvShape], params: dict[str, Any],
                 dtypes: tuple[Any, ...] = (np.float32, np.float16)) -> None:
    """CuPy's kernels of a kernel's checks compiled into its on-disk cache, at the model's own sizes: the
    comparisons of each conv layer's output (on the host and on the device, fresh inputs' transforms, the
    ghost's matched share), determinism, the inputs' and weights' equality, and the edge shapes'. Made with
    the model bundle, once per machine: a class's first jobs compiled them all at once (six children on one
    GPU, ~15 s each in their first checks, s10a). The sizes matter: CuPy's CUB reductions are compiled for
    the size class of their input (an H200, s10c: after the same calls on tiny arrays, the first compare
    of a 10,000-image conv1 output still took 3.2 s; in a new process with the cache made at that size, 0.2 s)."""
    for name, (a, ref) in conv_io.items():
        s = shapes[name]
        t = next(fresh.transforms(0, s.B, "warm"))
        w = cp.asarray(params[f"{name}.w"])
        for dtype in dtypes:
            for y in (ref.astype(dtype), cp.asnumpy(ref.astype(dtype))):  # device forms, the course's host output
                compare.compare(cp, y, ref)
                compare.compare(cp, y, ref, t, compare.rms(cp, ref))
                compare.determinism(cp, y, y)
            moved = t.apply(cp, a).astype(dtype)
            _same(cp, moved, moved.copy())
            _same(cp, w.astype(dtype), w.astype(dtype))
        for e in edge_shapes(s):
            x = cp.ones((e.B, e.C, e.H, e.W), dtype=np.float32)
            small = reference.conv2d(cp, x, w, None, e.P)
            for y in (small, cp.asnumpy(small)):
                compare.compare(cp, y, small)
    cp.cuda.Device().synchronize()


def _tally(tf: TimedCallFacts, st: compare.Stats, tolerance: float) -> None:
    """One timed call's output into the facts of the timed calls."""
    if st.nonfinite or st.rel_error > tolerance:
        tf.wrong += 1
        tf.first_wrong = tf.calls if tf.first_wrong is None else tf.first_wrong
    tf.nonfinite += st.nonfinite
    tf.worst_rel_error = max(tf.worst_rel_error or 0.0, st.rel_error)
    tf.calls += 1


def _median(values: list[float | None]) -> float | None:
    import statistics

    got = [x for x in values if x is not None]
    return statistics.median(got) if got else None


def _dev(cp: Any, a):
    return hostcopy.to_device(cp, a) if isinstance(a, np.ndarray) else a



@dataclass
class CoursePass:
    """The course's program run once over the model's images (`course_pass`): each conv layer's call
    ({layer: CallTimes}, or {layer: why it could not run}; the checks time their own calls), and, when every
    layer ran, the net's Correctness and per-layer seconds from that same pass, as the course's program
    reported them (a conv layer's is its whole call: prolog, conv_forward_gpu and epilog)."""

    calls: dict[str, Any] = field(default_factory=dict)
    layer_times: dict[str, float] = field(default_factory=dict)
    correctness: float | None = None

    @property
    def ran(self) -> bool:
        return self.correctness is not None


def _timed_layer(cp: Any, tag: str, fn: Callable[[], Any]) -> tuple[Any, float]:
    """A layer that is not the kernel's, on the device in its forward-pass range: (its output, seconds)."""
    holder: dict[str, Any] = {}

    def f() -> None:
        with gpu.nvtx_range(tag):
            holder["y"] = fn()

    t = gpu.time_gpu(cp, f, 1, 0)
    return holder["y"], t.median


def course_pass(runner: Runner, variant: Variant, kernel: UserKernel, x, labels, progress: Progress) -> CoursePass:
    """The course's program, once: the net's layers in order, each conv layer by the kernel (one call: prolog,
    conv_forward_gpu, epilog, as the course's main made it, on the output of the kernel's previous layer), the
    others by the reference on the device, then Correctness from the last layer's output. Made first in the
    process, before profconv's own reference pass (whose matmuls load cuBLAS), its times are the cold ones the
    course timed. A layer that cannot run ends the pass (its error in `calls`: the checks then say why)."""
    cp = runner.cp
    assert cp is not None
    clock = calls.Clock(cp)
    shapes = dict((layer.name, s) for layer, s in runner.model.conv_shapes(int(x.shape[0])))
    # timed as the course timed it, nothing else on the GPU: each conv layer's call and the net's layers after
    # it, up to the next conv layer, alone (one wait for the GPU a conv layer; the harness's own host buffers
    # are made in between, beside other jobs' work -- measured: a pass cut into its ten timed pieces waited
    # ~16 times a job, and a class of two jobs a GPU went from 12.8 to 10.0 jobs a minute)
    with gpushare.Turns() as turns:
        return _course_layers(runner, variant, kernel, x, labels, progress, clock, shapes, turns)


def _course_layers(runner: Runner, variant: Variant, kernel: UserKernel, x, labels, progress: Progress,
                   clock: calls.Clock, shapes: dict[str, ConvShape], turns: gpushare.Turns) -> CoursePass:
    cp = runner.cp
    assert cp is not None
    out = CoursePass()
    a = x
    for layer in runner.model.layers:
        base = f"{runner.model.name}/{variant.name}"
        if layer.kind != "conv":
            def other(a: Any = a, layer: Any = layer) -> Any:
                return reference.apply(cp, layer, a, runner.params)

            turns.hold()
            a, out.layer_times[layer.name] = _timed_layer(cp, f"{base}/forward/{layer.name}", other)
            continue
        s, tag = shapes[layer.name], f"{base}/{layer.name}"
        progress(f"{tag}: the course's call")
        w = runner.params[f"{layer.name}.w"].astype(variant.dtype)
        b = runner.params.get(f"{layer.name}.b")
        try:
            turns.let_go()
            ops = prepare(cp, variant, a, w, None if b is None else b.astype(variant.dtype), s)
            _warm_following(runner, layer, s)
            turns.hold()
            phases = kernel.phases(cp, *ops, s)
            y, ct = calls.call(clock, phases, f"{tag}/check/course", f"{tag}/check/course/{calls.FORWARD}")
            out.calls[layer.name] = ct
            out.layer_times[layer.name] = ct.end_to_end_s if ct.end_to_end_s is not None else ct.op_s
            a = _dev(cp, ops[3] if y is None else y).astype(np.float32, copy=False)
            del ops, y
        except Exception as exc:
            out.calls[layer.name] = first_line(exc)
            if is_sticky(exc):
                raise
            return out
    out.correctness = reference.accuracy(cp, a, cp.asarray(labels))
    kernel.ignored_errors()  # the checks look at errors of their own calls
    return out


def _warm_following(runner: Runner, conv: Any, s: ConvShape) -> None:
    """The net's layers after `conv` up to the next conv layer, once on one image of zeros, beside other jobs'
    work: what their first use costs (cuBLAS's handle for an fc layer, ~0.1-0.2 s on an H200; CuPy's
    reductions) is then not timed as the layer nor held alone on the GPU in the course's pass. The course's
    program ran those layers on the CPU (mini-dnn): their times are profconv's reference, not the kernel's."""
    cp = runner.cp
    assert cp is not None
    layers = runner.model.layers
    after = layers[layers.index(conv) + 1:]
    following = after[:next((i for i, layer in enumerate(after) if layer.kind == "conv"), len(after))]
    if not following:
        return
    a = cp.zeros((1, s.M, s.Ho, s.Wo), dtype=np.float32)
    for layer in following:
        a = reference.apply(cp, layer, a, runner.params)
    cp.cuda.Device().synchronize()


def _forward(runner: Runner, variant: Variant, course: CoursePass | None, x, labels, res: VariantResult,
             opts: RunOptions) -> None:
    """The forward pass's Correctness and layer times: the course pass's (the course ran its net once), else
    (a course pass that was not made: a profiler's re-run, a test) a pass of its own."""
    if course is None or not course.ran:
        runner._forward(variant, x, labels, res, opts)
        return
    res.layer_times = dict(course.layer_times)
    totals: dict[str, float] = {}
    for layer in runner.model.layers:
        totals[layer.kind] = totals.get(layer.kind, 0.0) + res.layer_times[layer.name]
    res.type_totals = totals
    res.forward_s = float(sum(res.layer_times.values()))
    res.correctness = course.correctness


def _forward_numbers(runner: Runner, variant: Variant, course: CoursePass | None, x, labels, res: VariantResult,
                     opts: RunOptions) -> str | None:
    """The forward pass's Correctness and layer times into `res` (and its facts); why not, if they failed."""
    try:
        _forward(runner, variant, course, x, labels, res, opts)
    except Exception as exc:
        return f"forward pass: {first_line(exc)}"
    if res.facts is not None:
        res.facts.correctness = res.correctness
    return None


def run_user(runner: Runner, variant: Variant, kernel: UserKernel, x, labels, conv_io: dict, opts: RunOptions,
             env: dict, progress: Progress, on_layer: Callable[[VariantResult], None], layers_only: bool = False,
             seed: int = 0, secret: bool = False, course: CoursePass | None = None) -> VariantResult:
    """The user's kernel on every conv layer (checks above), edge shapes, then the forward pass's numbers
    (`layers_only`: a profiler's re-run, the layers alone). The result's `facts` hold every measurement;
    its status and error are profconv's strict verdict (verdict.py) on them."""
    res = VariantResult(opts.images, variant.name, variant.technique, variant.precision)
    res.user = dict(variant.provenance)
    facts = kernel_facts.start(kernel, opts.images, seed, secret)
    res.facts = facts
    check = UserCheck(runner, variant, kernel, env, progress, seed=seed, cold=course.calls if course else None)
    shapes = dict((layer.name, s) for layer, s in runner.model.conv_shapes(opts.images))
    for name, (a, ref) in conv_io.items():
        cr, lf = check.layer(name, a, ref, shapes[name], opts)
        res.conv.append(cr)
        facts.layers.append(lf)
        res.user["compile"] = kernel.provenance()["compile"]
        kernel_facts.compiled(facts, kernel, lf.error)
        on_layer(res)
        if cr.error and ("CUDA context is lost" in cr.error or cr.error.startswith("compile error")):
            break
    failed = [c for c in res.conv if c.status != "ok"]
    missing = [n for n in conv_io if n not in {c.layer for c in res.conv}]
    for n in missing:
        why = "did not compile" if (res.conv[-1].error or "").startswith("compile error") else "lost the CUDA context"
        res.conv.append(ConvResult(layer=n, shape=shapes[n].text(), status="failed",
                                   error=f"not run: the kernel {why} on {res.conv[-1].layer}"))
    layer_why = "; ".join(f"{c.layer}: {c.error}" for c in failed) or None
    if layers_only or any(lf.error for lf in facts.layers) or missing:  # a CUDA error: nothing more to measure
        return kernel_facts.settle(res, layer_why)
    # the kernel ran on every layer: the rest is measured even when its output was wrong by profconv's
    # tolerance (the course's rules may accept it: TF32 for a Tensor Core requirement). The course's pass, made
    # first, already holds the forward pass's numbers: they go in the record before the edge shapes, which
    # may lose the context or kill the child (window s8c: a verdict came without its Correctness)
    early = course is not None and course.ran
    forward_why = None
    if early:
        forward_why = _forward_numbers(runner, variant, course, x, labels, res, opts)
        on_layer(res)  # the record so far, should the edge shapes kill the child
    progress(f"{runner.model.name}/{variant.name}: edge shapes")
    edges, facts.edges = check.edges(shapes)
    res.user["edge_checks"] = edges
    on_layer(res)
    edge_why = verdict.edge_verdict(facts.edges, variant.tolerance)
    if any(e.error and "CUDA context is lost" in e.error for e in facts.edges):
        return kernel_facts.settle(res, layer_why or edge_why)
    if not early:
        progress(f"{runner.model.name}/{variant.name}/forward")
        forward_why = _forward_numbers(runner, variant, course, x, labels, res, opts)
    return kernel_facts.settle(res, layer_why or edge_why or forward_why)
