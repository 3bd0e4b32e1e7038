"""Run a model's forward pass with each convolution variant: check, time, record.

Per image count: the reference forward pass gives every conv layer's input and exact output;
each variant then computes each conv layer on that same input (output poisoned with NaN first,
so unwritten elements fail the check), is timed as the course's Op Time, and finally runs the
whole forward pass with its own conv outputs for Correctness and the per-layer breakdown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from profconv.run import data as datasets
from profconv.run import gpu, peers, reference
from profconv.run.gpu import KernelCompileError, Timing
from profconv.run.models import ConvShape, Layer, Model
from profconv.run.record import ConvResult, Dims, OpTime, VariantResult
from profconv.run.variants import Variant


@dataclass(frozen=True)
class RunOptions:
    images: int
    repeat: int = 5
    warmup: int = 2
    cpu_repeat: int = 1  # the CPU reference is slow: timed once unless asked
    data_dir: str | None = None
    rule: gpu.StopRule | None = None  # stop-when-stable: at least `repeat`, on until the median is known


Progress = Callable[..., None]  # progress(message) or progress(message, done, total) for a step with a size

HOST_CHUNK = 1000  # images per chunk on the CPU path: arrays stay ~100 MB at any batch size; BLAS gets whole matrices


def chunks(n: int, size: int | None = None):
    """(start, stop) of consecutive slices of `n` items, `size` (default HOST_CHUNK) at a time."""
    size = size or HOST_CHUNK
    for lo in range(0, n, size):
        yield lo, min(n, lo + size)


def rel_error(xp: Any, y, ref) -> tuple[float, float]:
    """(‖y − ref‖ / ‖ref‖, max |y − ref|) in float64; NaN anywhere (an unwritten output) gives NaN."""
    d = y.astype(np.float64) - ref.astype(np.float64)
    denom = float(xp.linalg.norm(ref.astype(np.float64)))
    return float(xp.linalg.norm(d)) / (denom or 1.0), float(xp.abs(d).max())


def operands(cp: Any, variant: Variant, a, s: ConvShape) -> tuple[Any, Any]:
    """The layer input in the variant's dtype and a NaN-poisoned output buffer, both on the device,
    or both in pinned host memory for a variant whose op includes the copies (converted untimed)."""
    shape = (s.B, s.M, s.Ho, s.Wo)
    if variant.host_io:
        import cupyx

        a_host = cupyx.empty_pinned(a.shape, dtype=variant.dtype)
        a_host[...] = cp.asnumpy(a)
        out = cupyx.empty_pinned(shape, dtype=variant.dtype)
        out.fill(np.nan)
        return a_host, out
    return cp.ascontiguousarray(a, dtype=variant.dtype), cp.full(shape, np.nan, dtype=variant.dtype)


def prepare(cp: Any, variant: Variant, a, w, bias, s: ConvShape) -> tuple[Any, Any, Any, Any]:
    """(x, w, bias, out) as `variant.launch` takes them, converted untimed: the variant's own
    `operands` (the cuDNN peers: torch tensors in their dtype and layout), else `operands` above."""
    if variant.operands is not None:
        return variant.operands(cp, a, w, bias, s)
    x, out = operands(cp, variant, a, s)
    return x, w.astype(variant.dtype), None if bias is None else bias.astype(variant.dtype), out


class Runner:
    def __init__(self, model: Model, params: dict[str, np.ndarray], cp: Any | None):
        self.model = model
        self.cp = cp
        self.xp = cp if cp is not None else np
        self.params_host = params
        self.params = {k: self.xp.asarray(v) for k, v in params.items()}

    def _bias(self, layer: Layer, m: int):
        """The layer's bias on the device, or None: the course's layers have none."""
        return self.params.get(f"{layer.name}.b")

    def reference_pass(self, x, progress: Progress = lambda *a: None) -> dict[str, tuple[Any, Any]]:
        """Each conv layer's (input, exact output) from the reference pass (float64 accumulation).

        Without a GPU the output is not kept (None): ece408-high's conv1 output alone is 1.15 GB for
        10,000 images. The pass streams chunks of images through the net and keeps each conv layer's
        input; the CPU variant's check recomputes the reference chunk by chunk."""
        if self.cp is None:
            return self._reference_pass_host(x, progress)
        xp = self.xp
        seen: dict[str, tuple[Any, Any]] = {}

        def conv(layer: Layer, a):
            y = reference.conv2d(xp, a, self.params[f"{layer.name}.w"], self.params.get(f"{layer.name}.b"), layer.pad)
            seen[layer.name] = (a, y)
            return y

        with gpu.nvtx_range(f"{self.model.name}/reference"):
            reference.forward(xp, self.model.layers, x, self.params, conv=conv)
        return seen

    def _reference_pass_host(self, x, progress: Progress) -> dict[str, tuple[Any, Any]]:
        layers = self.model.layers
        conv_at = [i for i, layer in enumerate(layers) if layer.kind == "conv"]
        total = x.shape[0]
        inputs: dict[str, Any] = {layers[0].name: x} if conv_at[0] == 0 else {}  # the images themselves
        last = conv_at[-1]
        if last > 0:  # a later conv layer's input needs the layers before it; nothing after it is needed
            for lo, hi in chunks(total):
                self._reference_chunk(x, lo, hi, last, inputs)
                progress(f"{self.model.name}: reference pass", hi, total)
        return {layers[i].name: (inputs[layers[i].name], None) for i in conv_at}

    def _reference_chunk(self, x, lo: int, hi: int, last: int, inputs: dict[str, Any]) -> None:
        """Images lo:hi through the layers before conv layer `last`, each conv layer's input stored."""
        layers = self.model.layers
        a = x[lo:hi]
        with gpu.nvtx_range(f"{self.model.name}/reference"):
            for i, layer in enumerate(layers[: last + 1]):
                if layer.kind == "conv":
                    if layer.name not in inputs:
                        inputs[layer.name] = np.empty((x.shape[0], *a.shape[1:]), dtype=np.float32)
                    if inputs[layer.name] is not x:
                        inputs[layer.name][lo:hi] = a
                    if i == last:
                        return
                    a = reference.conv2d(np, a, self.params_host[f"{layer.name}.w"],
                                         self.params_host.get(f"{layer.name}.b"), layer.pad)
                else:
                    a = reference.apply(np, layer, a, self.params_host)

    def run_variant(self, variant: Variant, x, labels, conv_io, opts: RunOptions, progress: Progress) -> VariantResult:
        res = VariantResult(opts.images, variant.name, variant.technique, variant.precision)
        shapes = dict((layer.name, s) for layer, s in self.model.conv_shapes(opts.images))
        layers = {layer.name: layer for layer in self.model.layers}
        for name, (a, ref) in conv_io.items():
            s = shapes[name]
            progress(f"{self.model.name}/{variant.name}/{name}")
            cr = ConvResult(layer=name, shape=s.text(), tolerance=variant.tolerance,
                            dims=Dims(B=s.B, M=s.M, C=s.C, H=s.H, W=s.W, K=s.K, P=s.P))
            try:
                if variant.device == "cpu":
                    err, max_abs, timing = self._cpu_conv(layers[name], a, ref, opts, progress)
                else:
                    out, timing = self._conv(variant, layers[name], a, s, opts)
                    with gpu.nvtx_range(f"{self.model.name}/{variant.name}/{name}/check"):
                        err, max_abs = rel_error(self.xp, out, ref)
                cr.rel_error = None if err != err else err
                cr.max_abs_error = None if max_abs != max_abs else max_abs
                cr.op_time = OpTime(**timing.as_dict())
                if variant.params is not None:
                    cr.params = variant.params(s)
                if not err <= variant.tolerance:
                    cr.status = "failed"
                    cr.error = ("output has unwritten or non-finite elements" if err != err
                                else f"relative error {err:.3g} above tolerance {variant.tolerance:g}")
            except KernelCompileError as exc:
                cr.status, cr.error = "failed", f"compile error: {exc}"
            except Exception as exc:  # CUDA errors, out of memory, launch failures
                cr.status, cr.error = "failed", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                if self.cp is not None:
                    self._recover()
            res.conv.append(cr)
        failed = [c for c in res.conv if c.status != "ok"]
        if failed:
            res.status = "failed"
            res.error = "; ".join(f"{c.layer}: {c.error}" for c in failed)
            return res
        progress(f"{self.model.name}/{variant.name}/forward")
        try:
            if variant.device == "cpu":
                self._forward_host(x, labels, res, progress)
            else:
                self._forward(variant, x, labels, res, opts)
        except Exception as exc:
            res.status, res.error = "failed", f"forward pass: {type(exc).__name__}: {exc}"
        return res

    def _recover(self) -> None:
        assert self.cp is not None
        try:
            self.cp.cuda.Device().synchronize()
        except Exception:
            pass

    def _conv(self, variant: Variant, layer: Layer, a, s: ConvShape, opts: RunOptions) -> tuple[Any, Timing]:
        w = self.params[f"{layer.name}.w"]
        bias = self._bias(layer, s.M)
        tag = f"{self.model.name}/{variant.name}/{layer.name}"
        cp = self.cp
        assert cp is not None and variant.launch is not None
        a, w, bias, out = prepare(cp, variant, a, w, bias, s)
        with gpu.nvtx_range(tag + "/check"):
            result = variant.launch(cp, a, w, bias, out, s)
            cp.cuda.Device().synchronize()
            checked = cp.array(peers.to_cupy(cp, result))  # a copy, on the device even when the variant wrote host memory

        def run_gpu():
            with gpu.nvtx_range(tag):
                variant.launch(cp, a, w, bias, out, s)

        timing = gpu.time_gpu(cp, run_gpu, opts.repeat, opts.warmup, opts.rule)
        return checked, timing

    def _cpu_conv(self, layer: Layer, a, ref, opts: RunOptions, progress: Progress) -> tuple[float, float, Timing]:
        """The CPU variant on one conv layer, chunk by chunk so memory stays bounded.

        `cpu_repeat` timed passes over every image, each chunk written into one reused buffer: the Op
        Time samples. During the first pass each output chunk is also checked, outside the timed region,
        against the reference chunk (stored on the GPU when there is one, else recomputed)."""
        tag = f"{self.model.name}/cpu/{layer.name}"
        a_h = a if self.cp is None else self.cp.asnumpy(a)
        w_h, b_h = self.params_host[f"{layer.name}.w"], self.params_host.get(f"{layer.name}.b")
        total = a_h.shape[0]
        step = min(250, HOST_CHUNK)  # float64 differences of 250 images: tens of MB

        def conv(lo: int, hi: int, out=None):
            return reference.conv2d(np, a_h[lo:hi], w_h, b_h, layer.pad, out=out)

        sums = {"diff": 0.0, "ref": 0.0, "max": 0.0}

        def check(lo: int, y) -> None:
            for s in range(0, y.shape[0], step):
                got = y[s : s + step].astype(np.float64)
                if ref is None:
                    with gpu.nvtx_range(f"{self.model.name}/reference"):
                        r = conv(lo + s, lo + s + got.shape[0]).astype(np.float64)
                else:
                    part = ref[lo + s : lo + s + got.shape[0]]
                    r = (part if self.cp is None else self.cp.asnumpy(part)).astype(np.float64)
                d = got - r
                sums["diff"] += float(np.vdot(d, d))
                sums["ref"] += float(np.vdot(r, r))
                sums["max"] = max(sums["max"], float(np.abs(d).max()))

        buf = None
        samples = []
        for i in range(opts.cpu_repeat):
            elapsed = 0.0
            for lo, hi in chunks(total):
                t0 = time.perf_counter()
                with gpu.nvtx_range(tag):
                    y = conv(lo, hi, out=None if buf is None else buf[: hi - lo])
                elapsed += time.perf_counter() - t0
                buf = y if buf is None else buf
                if i == 0:
                    with gpu.nvtx_range(f"{tag}/check"):
                        check(lo, y)
                progress(f"{tag}: timing pass {i + 1} of {opts.cpu_repeat}", i * total + hi, opts.cpu_repeat * total)
            samples.append(elapsed)
        err = float(np.sqrt(sums["diff"])) / (float(np.sqrt(sums["ref"])) or 1.0)
        return err, (float("nan") if err != err else sums["max"]), Timing(samples)

    def _forward_host(self, x, labels, res: VariantResult, progress: Progress) -> None:
        """The CPU variant's forward pass, chunks of images through the whole net; each layer's time summed."""
        x_h = x if self.cp is None else self.cp.asnumpy(x)
        labels_h = np.asarray(labels)
        total = x_h.shape[0]
        times = {layer.name: 0.0 for layer in self.model.layers}
        outs: dict[str, Any] = {}  # each conv layer's output buffer, reused chunk after chunk as Op Time's is
        correct = 0
        for lo, hi in chunks(total):
            a = x_h[lo:hi]
            for layer in self.model.layers:
                tag = f"{self.model.name}/cpu/forward/{layer.name}"  # not the timed op's range
                t0 = time.perf_counter()
                with gpu.nvtx_range(tag):
                    if layer.kind == "conv":
                        buf = outs.get(layer.name)
                        a = reference.conv2d(np, a, self.params_host[f"{layer.name}.w"],
                                             self.params_host.get(f"{layer.name}.b"), layer.pad,
                                             out=None if buf is None else buf[: hi - lo])
                        outs.setdefault(layer.name, a)
                    else:
                        a = reference.apply(np, layer, a, self.params_host)
                times[layer.name] += time.perf_counter() - t0
            correct += int((np.argmax(a, axis=1) == labels_h[lo:hi]).sum())
            progress(f"{self.model.name}/cpu/forward", hi, total)
        res.layer_times = times
        totals: dict[str, float] = {}
        for layer in self.model.layers:
            totals[layer.kind] = totals.get(layer.kind, 0.0) + times[layer.name]
        res.type_totals = totals
        res.forward_s = float(sum(times.values()))
        res.correctness = correct / total if total else None

    def _forward(self, variant: Variant, x, labels, res: VariantResult, opts: RunOptions) -> None:
        """The whole net with this GPU variant's conv, each layer timed; Correctness from its output."""
        xp = self.xp
        shapes = dict((layer.name, s) for layer, s in self.model.conv_shapes(opts.images))
        times: dict[str, list[float]] = {layer.name: [] for layer in self.model.layers}
        # a user's kernel runs the net once, as the course's program does (its layers were timed on their own;
        # a pass of the course's form copies the images through pageable host memory: ~0.5 s at 10,000 images)
        passes = 1 if variant.user else max(1, min(opts.repeat, 3))
        probs = None
        for _ in range(passes):
            a = x
            for layer in self.model.layers:
                tag = f"{self.model.name}/{variant.name}/forward/{layer.name}"  # not the timed op's range
                if layer.kind == "conv":
                    s = shapes[layer.name]
                    assert self.cp is not None
                    a_in, w, b, out = prepare(self.cp, variant, a, self.params[f"{layer.name}.w"],
                                              self._bias(layer, s.M), s)

                    holder3: dict[str, Any] = {}

                    def f_gpu(a=a_in, out=out, w=w, b=b, s=s):
                        with gpu.nvtx_range(tag):
                            holder3["y"] = variant.launch(self.cp, a, w, b, out, s)

                    t = gpu.time_gpu(self.cp, f_gpu, 1, 0)
                    # on the device, in float32 (untimed): only the conv layers run in the variant's precision
                    a = self.cp.asarray(peers.to_cupy(self.cp, holder3["y"]), dtype=np.float32)
                else:
                    holder2: dict[str, Any] = {}

                    def f_other(a=a, layer=layer):
                        with gpu.nvtx_range(tag):
                            holder2["y"] = reference.apply(xp, layer, a, self.params)

                    t = gpu.time_gpu(self.cp, f_other, 1, 0)
                    a = holder2["y"]
                times[layer.name].append(t.median)
            probs = a
        res.layer_times = {k: float(np.median(v)) for k, v in times.items()}
        totals: dict[str, float] = {}
        for layer in self.model.layers:
            totals[layer.kind] = totals.get(layer.kind, 0.0) + res.layer_times[layer.name]
        res.type_totals = totals
        res.forward_s = float(sum(res.layer_times.values()))
        res.correctness = reference.accuracy(xp, probs, xp.asarray(labels))


def load_inputs(model: Model, opts: RunOptions) -> datasets.Dataset:
    return datasets.load(model, opts.images, opts.data_dir)


def execute(model: Model, params: dict[str, np.ndarray], variants: list[Variant], image_counts: list[int],
            base: RunOptions, cp: Any | None, progress: Progress, on_result: Callable[[VariantResult], None],
            skip_reasons: dict[str, str]) -> None:
    """Every variant at every image count; results are handed to `on_result` as they finish."""
    runner = Runner(model, params, cp)
    for count in image_counts:
        opts = RunOptions(images=count, repeat=base.repeat, warmup=base.warmup,
                          cpu_repeat=base.cpu_repeat, data_dir=base.data_dir, rule=base.rule)
        ds = load_inputs(model, opts)
        x = runner.xp.asarray(ds.images)
        progress(f"{model.name}: reference pass on {count} images")
        conv_io = runner.reference_pass(x, progress)
        for variant in variants:
            if variant.name in skip_reasons:
                on_result(VariantResult(count, variant.name, variant.technique, variant.precision,
                                        status="skipped", error=skip_reasons[variant.name]))
                continue
            on_result(runner.run_variant(variant, x, ds.labels, conv_io, opts, progress))
        del conv_io, x
