"""`profconv bench`: every conv layer shape of the chosen models, every variant, in one process.

Fair by construction: all variants and cuDNN run on the same inputs in the same process; each
layer gets several input sets (different images) so no variant finds its input in L2 because the
previous call left it there; rounds are interleaved (every set and variant once per round, the
variant order rotated each round) so clock and thermal drift spread over everyone; each sample
is one call between CUDA events with the device idle before it (launch costs count, as in Op
Time); warm-up rounds are dropped and medians reported. Each variant is checked against the
float64 reference on every set before it is timed; a variant that fails is reported and not timed.

The record (schema "profconv.bench", below; model in profconv.records.bench, JSON Schema in
schemas/bench.schema.json) is written like a run record; `frame` flattens it into one DataFrame
row per layer and variant.

{
  "schema": "profconv.bench", "schema_version": 1, "created", "argv", "environment",
  "settings": {models, variants, images, sets, repeat, warmup},
  "device": {"bandwidth_Bps": measured device-to-device copy, "peaks": {fp32|fp16|tensor-fp16: FLOP/s}, "peak_source"},
  "layers": [{model, layer, shape, dims, images, flops, same_as,
              results: [{variant, technique, precision, arithmetic, reference, status, error, tolerance,
                         rel_error, op_time: {median_s, min_s, max_s, samples_s}, params,
                         floor_s, bound, floor_share, ratio}],
              fused_ops: "conv1 + tanh1 + pool1 2x2" or null,
              fused: [the same result shape for "separate" and "fused-layer" (ratio to separate); floors
                      from the pooled layer's minimum bytes]}],
  "interrupted": bool
}
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from profconv.hardware import peak_for, roofline_floor
from profconv.records.bench import BenchLayer, BenchRecord, BenchResult, DeviceFacts
from profconv.records.common import Dims, OpTime
from profconv.run import data as datasets
from profconv.run import gpu, reference, tuned
from profconv.run.models import ConvShape, Layer, Model
from profconv.run.runner import Runner, operands, rel_error
from profconv.run.variants import Variant

COLUMNS = ["model", "layer", "op", "shape", "images", "variant", "precision", "reference", "status", "median_s",
           "min_s", "max_s", "ratio", "floor_s", "bound", "floor_share", "rel_error", "error"]
"""frame(record) columns: one row per (layer, op, variant); op is "conv" or the fused layer's ops
("conv1 + tanh1 + pool1 2x2", variants "separate" and "fused-layer"). ratio = median / the reference's median
(< 1 is faster); floor_s = max(bytes / measured bandwidth, FLOPs / datasheet peak of the variant's
arithmetic); floor_share = floor_s / median_s; bound = memory | compute."""


@dataclass(frozen=True)
class BenchOptions:
    images: int = 10000
    sets: int = 3
    repeat: int = 10
    warmup: int = 3


def min_bytes(s: ConvShape, itemsize: int) -> float:
    """Input, filters and output each moved once."""
    return s.min_bytes / 4 * itemsize


def floor(s: ConvShape, itemsize: int, bandwidth: float | None,
          peak_flops: float | None) -> tuple[float | None, str | None]:
    """(the roofline floor in seconds, memory | compute), or (None, None) when either bound is unknown."""
    return roofline_floor(s.flops, min_bytes(s, itemsize), bandwidth, peak_flops)


def measure_bandwidth(cp: Any, nbytes: int = 1 << 30, repeat: int = 10) -> float:
    """Device memory bandwidth in bytes/s: a device-to-device copy (read + write), median of `repeat`."""
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    rt = cp.cuda.runtime

    def copy() -> None:
        rt.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, rt.memcpyDeviceToDevice,
                       cp.cuda.get_current_stream().ptr)

    t = gpu.time_gpu(cp, copy, repeat=repeat, warmup=2)
    return 2 * nbytes / t.median


Progress = Callable[[str], None]


def bench_model(cp: Any, model: Model, params: dict[str, np.ndarray], variants: list[Variant], opts: BenchOptions,
                device: DeviceFacts, seen: dict[tuple, str], progress: Progress, fuse: bool = True) -> list[BenchLayer]:
    """Every conv layer of `model`: `opts.sets` input sets of `opts.images` images from the model's data;
    with `fuse`, also each conv + activation + pool as one fused kernel against separate ops."""
    runner = Runner(model, params, cp)
    n = opts.images * opts.sets
    progress(f"{model.name}: data and reference pass on {n} images")
    ds = datasets.load(model, n, None)
    conv_io = runner.reference_pass(runner.xp.asarray(ds.images))
    layers = []
    for layer, s in model.conv_shapes(opts.images):
        dims = Dims(B=s.B, M=s.M, C=s.C, H=s.H, W=s.W, K=s.K, P=s.P)
        bl = BenchLayer(model.name, layer.name, s.text(), dims, s.B, s.flops)
        key = dims.as_tuple()
        if key in seen:
            bl.same_as = seen[key]
            layers.append(bl)
            continue
        seen[key] = f"{model.name}/{layer.name}"
        a, ref = conv_io[layer.name]
        sets = [(a[i * s.B:(i + 1) * s.B], ref[i * s.B:(i + 1) * s.B]) for i in range(opts.sets)]
        w = runner.params[f"{layer.name}.w"]
        bias = runner.params.get(f"{layer.name}.b")
        bl.results = bench_layer(cp, f"{model.name}/{layer.name}", s, sets, w, bias, variants, opts, device, progress)
        if fuse and (ops := fused_ops(model, layer.name)) is not None:
            bl.fused_ops = f"{layer.name} + {ops[0].name} + {ops[1].name} {ops[1].k}x{ops[1].k}"
            bl.fused = bench_fused(cp, f"{model.name}/{layer.name}", s, sets, w, bias, *ops, opts, device, progress)
        layers.append(bl)
    del conv_io
    return layers


@dataclass
class _Prepared:
    result: BenchResult
    calls: list[Callable[[], Any]]  # one per input set
    samples: list[float] = field(default_factory=list)


def _check(res: BenchResult, sets: list[tuple[Any, Any]], call: Callable[[Any], Any], cp: Any) -> list[Callable[[], Any]]:
    """Run `call(set index)` on every input set against its reference; mark `res` failed on a wrong or
    crashing output (reported, the others still run). The calls to time, one per set, or none."""
    calls: list[Callable[[], Any]] = []
    try:
        worst = 0.0
        for i, (_, ref) in enumerate(sets):
            y = call(i)  # the first call also runs a swept kernel's sweep
            cp.cuda.Device().synchronize()
            err, _ = rel_error(cp, cp.asarray(y), ref)
            worst = err if err != err else max(worst, err)
            calls.append(functools.partial(call, i))
        res.rel_error = None if worst != worst else worst
        if not worst <= res.tolerance:
            res.status = "failed"
            res.error = ("output has unwritten or non-finite elements" if worst != worst
                         else f"relative error {worst:.3g} above tolerance {res.tolerance:g}")
    except Exception as exc:  # compile errors, CUDA errors, out of memory
        res.status, res.error = "failed", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        try:
            cp.cuda.Device().synchronize()
        except Exception:
            pass
    return calls if res.status == "ok" else []


def _time_interleaved(cp: Any, tag: str, prepared: list[_Prepared], n_sets: int, opts: BenchOptions,
                      progress: Progress) -> None:
    """Interleaved rounds: every set and entry once per round, the order rotated each round."""
    timed = [p for p in prepared if p.result.status == "ok"]
    progress(f"{tag}: timing {len(timed)} variants x {n_sets} input sets x {opts.repeat} rounds")
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for rnd in range(opts.warmup + opts.repeat):
        shift = rnd % max(1, len(timed))
        for i in range(n_sets):
            for p in timed[shift:] + timed[:shift]:
                with gpu.nvtx_range(f"bench/{tag}/{p.result.variant}"):
                    cp.cuda.Device().synchronize()
                    start.record()
                    p.calls[i]()
                    end.record()
                    end.synchronize()
                if rnd >= opts.warmup:
                    p.samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    for p in timed:
        p.result.op_time = OpTime(**gpu.Timing(p.samples).as_dict())


def bench_layer(cp: Any, tag: str, s: ConvShape, sets: list[tuple[Any, Any]], w, bias, variants: list[Variant],
                opts: BenchOptions, device: DeviceFacts, progress: Progress) -> list[BenchResult]:
    prepared: list[_Prepared] = []
    for v in variants:
        progress(f"{tag}: checking {v.name}")
        res = BenchResult(v.name, v.technique, v.precision, v.arithmetic, v.reference, v.tolerance)
        wv, bv = w.astype(v.dtype), None if bias is None else bias.astype(v.dtype)
        buffers = [operands(cp, v, a, s) for a, _ in sets]  # converted and poisoned untimed

        def call(i: int, v: Variant = v, wv=wv, bv=bv, buffers=buffers):
            assert v.launch is not None
            return v.launch(cp, buffers[i][0], wv, bv, buffers[i][1], s)

        calls = _check(res, sets, call, cp)
        if res.status == "ok" and v.params is not None:
            res.params = v.params(s)
        prepared.append(_Prepared(res, calls))
    _time_interleaved(cp, tag, prepared, len(sets), opts, progress)
    _derive([p.result for p in prepared], s, device)
    return [p.result for p in prepared]


def fused_ops(model: Model, conv: str) -> tuple[Layer, Layer] | None:
    """The activation and max-pool right after conv layer `conv`, when the net has them."""
    layers = model.layers
    i = next(k for k, layer in enumerate(layers) if layer.name == conv)
    if i + 2 < len(layers) and layers[i + 1].kind in ("tanh", "relu") and layers[i + 2].kind == "pool":
        return layers[i + 1], layers[i + 2]
    return None


def bench_fused(cp: Any, tag: str, s: ConvShape, sets: list[tuple[Any, Any]], w, bias, act: Layer, pool: Layer,
                opts: BenchOptions, device: DeviceFacts, progress: Progress) -> list[BenchResult]:
    """conv + bias + activation + pool: `tuned` followed by CuPy's activation and pool kernels (the
    layer as separate ops) against one fused kernel; checked on the pooled output."""
    pooled_sets = [(a, reference.apply(cp, pool, reference.apply(cp, act, ref, {}), {})) for a, ref in sets]
    inputs = [cp.ascontiguousarray(a) for a, _ in sets]
    conv_out = cp.empty((s.B, s.M, s.Ho, s.Wo), dtype=cp.float32)
    pooled = cp.empty((s.B, s.M, s.Ho // pool.k, s.Wo // pool.k), dtype=cp.float32)
    bias_ = gpu.bias_or_zeros(cp, bias, s.M)
    kernel = tuned.fused_layer(pool.k, act.kind)

    def separate(i: int):
        y = tuned.launch_tuned(cp, inputs[i], w, bias, conv_out, s)
        return reference.apply(cp, pool, reference.apply(cp, act, y, {}), {})

    def fused(i: int):
        pooled.fill(np.nan)
        return kernel.launch(cp, inputs[i], w, bias_, pooled, s)

    progress(f"{tag}: checking the fused layer")
    prepared = []
    for name, description, call, ref in (("separate", "tuned conv, then the activation and pool as CuPy kernels",
                                          separate, None),
                                         ("fused-layer", "conv + bias + activation + pool in one kernel",
                                          fused, "separate")):
        res = BenchResult(name, description, "fp32", "fp32", ref, 1e-5)
        calls = _check(res, pooled_sets, call, cp)
        if name == "fused-layer":
            res.params = kernel.params(s)
            calls = [functools.partial(kernel.launch, cp, x, w, bias_, pooled, s) for x in inputs]
        prepared.append(_Prepared(res, calls if res.status == "ok" else []))
    _time_interleaved(cp, f"{tag}+{act.name}+{pool.name}", prepared, len(sets), opts, progress)
    results = [p.result for p in prepared]
    layer_bytes = 4.0 * (s.B * s.C * s.H * s.W + s.M * s.C * s.K * s.K + s.B * s.M * (s.Ho // pool.k) * (s.Wo // pool.k))
    for r in results:
        if r.op_time:
            r.floor_s, bound = roofline_floor(s.flops, layer_bytes, device.bandwidth_Bps, device.peaks.get("fp32"))
            r.bound = "memory" if bound == "memory" else "compute" if bound == "compute" else None
            r.floor_share = r.floor_s / r.op_time.median_s if r.floor_s else None
    if results[0].op_time and results[1].op_time:
        results[1].ratio = results[1].op_time.median_s / results[0].op_time.median_s
    return results


def _derive(results: list[BenchResult], s: ConvShape, device: DeviceFacts) -> None:
    """Ratios to each result's reference and shares of the roofline floor."""
    by_name = {r.variant: r for r in results if r.op_time}
    for r in results:
        if not r.op_time:
            continue
        itemsize = 2 if r.precision == "fp16" else 4
        r.floor_s, bound = floor(s, itemsize, device.bandwidth_Bps, device.peaks.get(r.arithmetic))
        r.bound = "memory" if bound == "memory" else "compute" if bound == "compute" else None
        med = r.op_time.median_s
        r.floor_share = r.floor_s / med if r.floor_s else None
        ref = by_name.get(r.reference or "")
        r.ratio = med / ref.op_time.median_s if ref and ref.op_time else None


def device_facts(cp: Any, env: dict) -> DeviceFacts:
    peak = peak_for(env.get("gpu"))
    facts = DeviceFacts(bandwidth_Bps=measure_bandwidth(cp), bandwidth_method="1 GiB cudaMemcpyAsync "
                        "device-to-device, bytes read + written, median of 10")
    if peak is not None:
        facts.peaks = {a: t * 1e12 for a in ("fp32", "fp16", "tensor-fp16") if (t := peak.tflops(a))}
        facts.peak_source = peak.source
    else:
        facts.peak_source = f"no datasheet peak known for {env.get('gpu')!r}: no floor shares"
    return facts


def frame(record: BenchRecord) -> pd.DataFrame:
    """One row per (layer, variant) of a bench record; columns: COLUMNS."""
    rows = []
    for layer in record.layers:
        entries = [("conv", r) for r in layer.results] + [(layer.fused_ops, r) for r in layer.fused]
        for op, r in entries:
            t = r.op_time
            rows.append({"model": layer.model, "layer": layer.layer, "op": op, "shape": layer.shape,
                         "images": layer.images, "variant": r.variant, "precision": r.precision,
                         "reference": r.reference, "status": r.status, "median_s": t.median_s if t else None,
                         "min_s": t.min_s if t else None, "max_s": t.max_s if t else None, "ratio": r.ratio,
                         "floor_s": r.floor_s, "bound": r.bound, "floor_share": r.floor_share,
                         "rel_error": r.rel_error, "error": r.error})
    df = pd.DataFrame(rows, columns=COLUMNS)
    for c in ("median_s", "min_s", "max_s", "ratio", "floor_s", "floor_share", "rel_error"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


BEST_COLUMNS = ["model", "layer", "shape", "precision", "variant", "median_s", "ratio", "floor_share"]


def best_per_layer(df: pd.DataFrame) -> pd.DataFrame:
    """Per measured layer and precision: the fastest correct variant measured against cuDNN, its
    ratio and its floor share (the issue's targets read off this table)."""
    ok = df[(df["status"] == "ok") & df["reference"].isin(["cudnn", "cudnn-fp16"])]
    if ok.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    idx = ok.groupby(["model", "layer", "precision"], sort=False)["median_s"].idxmin()
    return ok.loc[idx, BEST_COLUMNS].reset_index(drop=True)
