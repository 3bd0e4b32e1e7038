"""Checking and timing a kernel we did not write (runs in the child process, on the GPU).

Per conv layer of the model: the sweep (if declared) picks a candidate by checked, timed trials;
the output buffer is NaN-poisoned, the call checked against the float64 reference, the inputs
compared with their copies; the output is poisoned again before the timed calls and the result
of the last timed call re-checked (a kernel that computes only once, or caches, is caught); the
inputs are compared again; a time below the compute floor (FLOPs / datasheet peak) or, for a
working set larger than twice the L2 cache, below the DRAM floor, is impossible and fails the
layer. Then edge shapes (B = 1; odd heights and widths that no tile divides) with several seeds
on random data, and the forward pass for Correctness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from profconv.records import Dims, OpTime
from profconv.run import gpu, reference
from profconv.run.models import ConvShape
from profconv.run.record import ConvResult, VariantResult
from profconv.run.runner import Runner, RunOptions, operands, rel_error
from profconv.run.user import build
from profconv.run.user.contracts import UserKernel, first_line, is_sticky
from profconv.run.variant import Variant

SEEDS = (1, 2, 3)
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
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(cp.array_equal(a, b, equal_nan=True))


def _copy(cp: Any, a):
    return None if a is None else (a.copy() if isinstance(a, np.ndarray) else cp.array(a, copy=True))


def _poison(out) -> None:
    out.fill(np.nan)


class UserCheck:
    """Runs one user kernel on every conv layer of the model, with the checks above; fills a VariantResult."""

    def __init__(self, runner: Runner, variant: Variant, kernel: UserKernel, env: dict, progress: Progress):
        self.runner, self.variant, self.kernel, self.progress = runner, variant, kernel, progress
        cp = runner.cp
        assert cp is not None
        self.cp = cp
        from profconv.hardware import peak_for

        self.peaks = peak_for(env.get("gpu"))
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        self.l2 = int(props.get("l2CacheSize", 0)) or None

    def _weights(self, layer_name: str):
        v = self.variant
        w = self.runner.params[f"{layer_name}.w"].astype(v.dtype)
        b = self.runner.params.get(f"{layer_name}.b")
        return w, None if b is None else b.astype(v.dtype)

    def layer(self, name: str, a, ref, s: ConvShape, opts: RunOptions) -> ConvResult:
        cp, v, k = self.cp, self.variant, self.kernel
        cr = ConvResult(layer=name, shape=s.text(), tolerance=v.tolerance,
                        dims=Dims(B=s.B, M=s.M, C=s.C, H=s.H, W=s.W, K=s.K, P=s.P))
        w, bias = self._weights(name)
        x, out = operands(cp, v, a, s)
        tag = f"{self.runner.model.name}/{v.name}/{name}"

        def wrong(result) -> str | None:
            err, _ = rel_error(cp, cp.asarray(result), ref)
            if err != err:
                return "output has unwritten or non-finite elements"
            return None if err <= v.tolerance else f"relative error {err:.3g} above tolerance {v.tolerance:g}"

        try:
            if k.decl.sweep and not v.host_io:
                self.progress(f"{tag}: sweep of {len(k.decl.candidates())} candidates")
                with gpu.nvtx_range(tag + "/check/tune"):  # the sweep's role, as the built-in tuned variants'
                    k.choose(cp, x, w, bias, s, wrong, lambda: cp.full(out.shape, np.nan, dtype=out.dtype))
            kept = [_copy(cp, x), _copy(cp, w), _copy(cp, bias)]
            self.progress(f"{tag}: check")
            with gpu.nvtx_range(tag + "/check"):
                result = v.launch(cp, x, w, bias, out, s)  # type: ignore[misc]
            cp.cuda.Device().synchronize()
            k.check_errors()
            err, max_abs = rel_error(cp, cp.asarray(result), ref)
            cr.rel_error = None if err != err else err
            cr.max_abs_error = None if max_abs != max_abs else max_abs
            cr.params = k.params(s)
            checks: dict[str, Any] = {"nan_poisoned": True}
            if k.sweep_report(s):
                checks["sweep"] = k.sweep_report(s)
            cr.checks = checks
            if not all(_same(cp, a0, a1) for a0, a1 in zip(kept, (x, w, bias)) if a0 is not None):
                cr.status, cr.error = "failed", "the kernel modified its input (x, w or bias differ after the call)"
                return cr
            if why := wrong(result):
                cr.status, cr.error = "failed", why
                return cr
            checks["inputs_unchanged"] = True
            self.progress(f"{tag}: timing")
            _poison(out)
            if v.timed is not None:
                timing, whole = v.timed(cp, x, w, bias, out, s, opts.repeat, opts.warmup, rule=opts.rule, tag=tag)
                checks["end_to_end"] = whole.as_dict()
                last = out
            else:
                holder: dict[str, Any] = {}

                def run() -> None:
                    with gpu.nvtx_range(tag):
                        holder["y"] = v.launch(cp, x, w, bias, out, s)  # type: ignore[misc]

                timing = gpu.time_gpu(cp, run, opts.repeat, opts.warmup, opts.rule)  # the built-ins' rule
                last = holder["y"]
            k.check_errors()
            cr.op_time = OpTime(**timing.as_dict())
            if why := wrong(last):
                cr.status, cr.error = "failed", f"the output of the timed calls is wrong ({why})"
                return cr
            checks["timed_output_rechecked"] = True
            if not all(_same(cp, a0, a1) for a0, a1 in zip(kept, (x, w, bias)) if a0 is not None):
                cr.status, cr.error = "failed", "the kernel modified its input during the timed calls"
                return cr
            floor, bound = floor_seconds(s, np.dtype(v.dtype).itemsize, self.peaks, self.l2, v.arithmetic)
            checks["floor_s"], checks["floor_bound"] = floor, bound
            if floor is not None and timing.min < floor:
                cr.status = "failed"
                cr.error = (f"impossible: {timing.min:.3g} s is below the {bound.split(' ')[0]} floor {floor:.3g} s "
                            "of this GPU (the work was not done in the timed call)")
        except build.CompileError as exc:
            cr.status, cr.error = "failed", f"compile error: {exc}"
        except Exception as exc:
            cr.status, cr.error = "failed", first_line(exc)
            if is_sticky(exc):
                cr.error += " (the CUDA context is lost: later layers cannot run)"
        return cr

    def edges(self, shapes: dict[str, ConvShape]) -> list[dict[str, Any]]:
        """Each conv layer's edge shapes with each seed: random inputs and filters, float64 reference."""
        cp, v = self.cp, self.variant
        rows = []
        for name, s in shapes.items():
            for e in edge_shapes(s):
                for seed in SEEDS if e.B == 1 else SEEDS[:1]:
                    rng = np.random.default_rng(seed)
                    xh = rng.standard_normal((e.B, e.C, e.H, e.W)).astype(np.float32)
                    wh = rng.standard_normal((e.M, e.C, e.K, e.K)).astype(np.float32) / np.sqrt(e.C * e.K * e.K)
                    has_bias = f"{name}.b" in self.runner.params
                    bh = rng.standard_normal(e.M).astype(np.float32) if has_bias else None
                    ref = reference.conv2d(cp, cp.asarray(xh), cp.asarray(wh), None if bh is None else cp.asarray(bh), e.P)
                    x, out = operands(cp, v, cp.asarray(xh), e)
                    w = cp.asarray(wh, dtype=v.dtype)
                    b = None if bh is None else cp.asarray(bh, dtype=v.dtype)
                    row: dict[str, Any] = {"layer": name, "shape": f"B={e.B} {e.text()}", "seed": seed}
                    try:
                        result = v.launch(cp, x, w, b, out, e)  # type: ignore[misc]
                        cp.cuda.Device().synchronize()
                        self.kernel.check_errors()
                        err, _ = rel_error(cp, cp.asarray(result), ref)
                        row["rel_error"] = None if err != err else err
                        row["status"] = "ok" if err <= v.tolerance else "failed"
                        if row["status"] != "ok":
                            row["error"] = ("unwritten or non-finite elements" if err != err else
                                            f"relative error {err:.3g} above {v.tolerance:g}")
                    except Exception as exc:
                        row["status"], row["error"] = "failed", first_line(exc)
                        rows.append(row)
                        if is_sticky(exc):
                            return rows
                        continue
                    rows.append(row)
        return rows


def run_user(runner: Runner, variant: Variant, kernel: UserKernel, x, labels, conv_io: dict, opts: RunOptions,
             env: dict, progress: Progress, on_layer: Callable[[VariantResult], None], layers_only: bool = False
             ) -> VariantResult:
    """The user's kernel on every conv layer (checks above), edge shapes, then the forward pass
    (`layers_only`: a profiler's re-run, the layers alone)."""
    res = VariantResult(opts.images, variant.name, variant.technique, variant.precision)
    res.user = dict(variant.provenance)
    check = UserCheck(runner, variant, kernel, env, progress)
    shapes = dict((layer.name, s) for layer, s in runner.model.conv_shapes(opts.images))
    for name, (a, ref) in conv_io.items():
        cr = check.layer(name, a, ref, shapes[name], opts)
        res.conv.append(cr)
        res.user["compile"] = kernel.provenance()["compile"]
        on_layer(res)
        if cr.error and ("CUDA context is lost" in cr.error or cr.error.startswith("compile error")):
            break
    failed = [c for c in res.conv if c.status != "ok"]
    missing = [n for n in conv_io if n not in {c.layer for c in res.conv}]
    for n in missing:
        why = "did not compile" if (res.conv[-1].error or "").startswith("compile error") else "lost the CUDA context"
        res.conv.append(ConvResult(layer=n, shape=shapes[n].text(), status="failed",
                                   error=f"not run: the kernel {why} on {res.conv[-1].layer}"))
    if failed:
        res.status = "failed"
        res.error = "; ".join(f"{c.layer}: {c.error}" for c in failed)
        return res
    if layers_only:
        return res
    progress(f"{runner.model.name}/{variant.name}: edge shapes")
    edges = check.edges(shapes)
    res.user["edge_checks"] = edges
    bad = [e for e in edges if e["status"] != "ok"]
    on_layer(res)
    if bad:
        res.status = "failed"
        first = bad[0]
        res.error = (f"{len(bad)} of {len(edges)} edge-shape checks failed, first: {first['layer']} {first['shape']} "
                     f"seed {first['seed']}: {first['error']}")
        return res
    progress(f"{runner.model.name}/{variant.name}/forward")
    try:
        runner._forward(variant, x, labels, res, opts)
    except Exception as exc:
        res.status, res.error = "failed", f"forward pass: {first_line(exc)}"
    return res
