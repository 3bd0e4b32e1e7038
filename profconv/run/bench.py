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
  "settings": {models, variants, images, sets, repeat, warmup, l2: cold|warm, ci_target, time_budget_s,
               cudnn_kernels},
  "device": {"bandwidth_Bps": measured device-to-device copy, "peaks": {fp32|fp16|tensor-fp16: FLOP/s}, "peak_source"},
  "layers": [{model, layer, shape, dims, images, flops, same_as,
              results: [{variant, technique, precision, arithmetic, reference, status, error, tolerance,
                         rel_error, op_time: {median_s, min_s, max_s, samples_s, ci_low_s, ci_high_s, ci_rel,
                         stopped}, op_time_cold, op_time_warm, params, floor_s, bound, floor_share, ratio,
                         peer_ratios: {tf32|bf16: {peer, ratio}}}],
              timing: {rounds, stopped},
              fused_ops: "conv1 + tanh1 + pool1 2x2" or null,
              fused: [the same result shape for "separate" and "fused-layer" (ratio to separate); floors
                      from the pooled layer's minimum bytes]}],
  "interrupted": bool,
  "provenance": {code, kernels, gpu: {start, end}, profiler: null}
}

Cold and warm: every sample is a pair of calls of the same variant on the same input set, the L2
flushed (a memset of twice its size) and the device idle before the first. Cold: the first call,
its host-side work and launch included (as in Op Time) and its data out of L2. Warm: the same call
issued right behind it — its input and filters left in L2, and its host work overlapped with the
first call's kernels (as in a pipeline of layers), so it is the device time. `settings.l2` picks
the headline (`op_time`, ratios, floor shares); the default is warm. Measured on an H200 (Fall 2017
conv1, 10,000 images): cuDNN's warm median was 1.137 ms in a 10-variant and in a 2-variant bench
(CUPTI: the kernel takes 1.145 ms), its cold median 1.415 against 1.240 ms — 95 to 270 µs of host
time before PyTorch's kernel starts, which depends on the process, so cold ratios depended on the
company (13%) and warm ones did not (0.05%). `--l2 cold` (Triton's do_bench and nvbench flush the
L2 the same way) makes cold the headline; both are always recorded.
Rounds go on past `repeat` until every variant's median
is known within ±`ci_target` (95% interval) or `time_budget_s` ends; the cuDNN peers are checked
(their algorithm search) before the other variants of a layer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from profconv.hardware import peak_for, roofline_floor
from profconv.records.bench import BenchLayer, BenchRecord, BenchResult, DeviceFacts, LayerTiming, PeerCheck, PeerRatio
from profconv.records.common import Dims, OpTime
from profconv.run import data as datasets
from profconv.run import gpu, peers, reference, tuned
from profconv.run.models import ConvShape, Layer, Model
from profconv.run.runner import Runner, prepare, rel_error
from profconv.run.variants import Variant

COLUMNS = ["model", "layer", "op", "shape", "images", "variant", "precision", "reference", "status", "median_s",
           "min_s", "max_s", "ratio", "floor_s", "bound", "floor_share", "rel_error", "error", "ci_rel", "cold_s",
           "warm_s", "stopped"]
"""frame(record) columns: one row per (layer, op, variant); op is "conv" or the fused layer's ops
("conv1 + tanh1 + pool1 2x2", variants "separate" and "fused-layer"). ratio = median / the reference's median
(< 1 is faster); floor_s = max(bytes / measured bandwidth, FLOPs / datasheet peak of the variant's
arithmetic); floor_share = floor_s / median_s; bound = memory | compute. median_s is the headline figure
(settings.l2: cold by default); cold_s and warm_s are both medians; ci_rel the headline median's
95% interval half-width over the median; stopped why the rounds ended (stable | budget | ...).
reference names the cuDNN peer with its layout (cudnn-fp16-nhwc) for variants measured against cuDNN."""


L2_MODES = ("cold", "warm")
ARITHMETICS = ("fp32", "fp16", "tensor-fp16", "tensor-tf32", "tensor-3xtf32")  # the peaks a floor can use


@dataclass(frozen=True)
class BenchOptions:
    images: int = 10000
    sets: int = 3
    repeat: int = 10  # rounds at least; more until stable (target) or the budget ends
    warmup: int = 3
    l2: str = "warm"  # the headline figure: warm (the same call just ran) or cold (L2 flushed before the call)
    target: float | None = 0.01  # stop once every variant's median is known within ±target (95% interval)
    budget_s: float = 15.0  # seconds of timing rounds per layer at most
    max_rounds: int = 100
    cudnn_kernels: bool = True  # record the kernels each cuDNN peer launches (its algorithm), after timing
    layers: tuple[str, ...] = ()  # only these "model/layer" (empty: every conv layer of the models)


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
                device: DeviceFacts, seen: dict[tuple, str], progress: Progress, fuse: bool = True,
                on_layer: Callable[[BenchLayer], None] | None = None) -> list[BenchLayer]:
    """Every conv layer of `model`: `opts.sets` input sets of `opts.images` images from the model's data;
    with `fuse`, also each conv + activation + pool as one fused kernel against separate ops. `on_layer`
    gets each layer as soon as it is measured (the command writes the record then: Ctrl-C keeps it)."""
    runner = Runner(model, params, cp)
    n = opts.images * opts.sets
    progress(f"{model.name}: data and reference pass on {n} images")
    ds = datasets.load(model, n, None)
    conv_io = runner.reference_pass(runner.xp.asarray(ds.images))
    layers = []
    for layer, s in model.conv_shapes(opts.images):
        dims = Dims(B=s.B, M=s.M, C=s.C, H=s.H, W=s.W, K=s.K, P=s.P)
        bl = BenchLayer(model.name, layer.name, s.text(), dims, s.B, s.flops)
        if opts.layers and f"{model.name}/{layer.name}" not in opts.layers:
            continue
        key = dims.as_tuple()
        if key in seen:
            bl.same_as = seen[key]
            layers.append(bl)
            if on_layer is not None:
                on_layer(bl)
            continue
        seen[key] = f"{model.name}/{layer.name}"
        a, ref = conv_io[layer.name]
        sets = [(a[i * s.B:(i + 1) * s.B], ref[i * s.B:(i + 1) * s.B]) for i in range(opts.sets)]
        w = runner.params[f"{layer.name}.w"]
        bias = runner.params.get(f"{layer.name}.b")
        bl.results, bl.timing = bench_layer(cp, f"{model.name}/{layer.name}", s, sets, w, bias, variants, opts, device,
                                            progress)
        if fuse and (ops := fused_ops(model, layer.name)) is not None:
            bl.fused_ops = f"{layer.name} + {ops[0].name} + {ops[1].name} {ops[1].k}x{ops[1].k}"
            bl.fused = bench_fused(cp, f"{model.name}/{layer.name}", s, sets, w, bias, *ops, opts, device, progress)
        layers.append(bl)
        if on_layer is not None:
            on_layer(bl)
    del conv_io
    return layers


@dataclass
class _Prepared:
    result: BenchResult
    calls: list[Callable[[], Any]]  # one per input set
    samples: list[float] = field(default_factory=list)
    operands: tuple = ()  # (x, w, bias) of the first input set as the launch takes them (the peers' plain loop)


def _check(res: BenchResult, sets: list[tuple[Any, Any]], call: Callable[[Any], Any], cp: Any) -> list[Callable[[], Any]]:
    """Run `call(set index)` on every input set against its reference; mark `res` failed on a wrong or
    crashing output (reported, the others still run). The calls to time, one per set, or none."""
    calls: list[Callable[[], Any]] = []
    try:
        worst = 0.0
        for i, (_, ref) in enumerate(sets):
            y = call(i)  # the first call also runs a swept kernel's sweep
            cp.cuda.Device().synchronize()
            err, _ = rel_error(cp, peers.to_cupy(cp, y), ref)
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


def _tune(cp: Any, tag: str, v: Variant, buffers: tuple, ref, s: ConvShape, res: BenchResult) -> dict[str, Any]:
    """A declared sweep (a user kernel's) run on the bench's own shape and first input set, as `run`
    does per layer: every candidate checked against the reference and timed, the fastest correct one
    kept. Returns the candidates' times; a sweep with no correct candidate fails `res`."""
    assert v.tune is not None
    x, w, bias, out = buffers

    def wrong(result) -> str | None:
        err, _ = rel_error(cp, peers.to_cupy(cp, result), ref)
        if err != err:
            return "output has unwritten or non-finite elements"
        return None if err <= v.tolerance else f"relative error {err:.3g} above tolerance {v.tolerance:g}"

    try:
        with gpu.nvtx_range(f"bench/{tag}/tune"):
            return v.tune(cp, x, w, bias, s, wrong, lambda: cp.full(out.shape, np.nan, dtype=out.dtype))
    except Exception as exc:
        res.status, res.error = "failed", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return {}


def _time_interleaved(cp: Any, tag: str, prepared: list[_Prepared], n_sets: int, opts: BenchOptions,
                      progress: Progress) -> LayerTiming:
    """Interleaved rounds: every set and entry once per round, the order rotated each round.

    Each entry's sample is a pair: a cold call (the L2 flushed just before) then the same call again
    (warm: its own input and filters left in L2 by the cold call). Neither depends on which variant
    ran before it. At least `opts.repeat` rounds, then on until every entry's headline median is
    within ±target (95% interval), the budget ends or `max_rounds`. Returns how the rounds ended."""
    import time

    timed = [p for p in prepared if p.result.status == "ok"]
    cold: dict[int, list[float]] = {id(p): [] for p in timed}
    warm: dict[int, list[float]] = {id(p): [] for p in timed}
    head = cold if opts.l2 == "cold" else warm
    rule = gpu.StopRule(opts.target, opts.budget_s, opts.max_rounds * n_sets)
    progress(f"{tag}: timing {len(timed)} variants x {n_sets} input sets, {opts.repeat}+ rounds (cold and warm)")
    flush = gpu.L2Flush(cp)
    events = [cp.cuda.Event() for _ in range(3)]
    stopped, rounds, t0 = "repeats", 0, None
    for rnd in range(opts.warmup + opts.max_rounds):
        if rnd == opts.warmup:
            t0 = time.perf_counter()
        shift = rnd % max(1, len(timed))
        for i in range(n_sets):
            for p in timed[shift:] + timed[:shift]:
                with gpu.nvtx_range(f"bench/{tag}/{p.result.variant}"):
                    flush()
                    cp.cuda.Device().synchronize()
                    events[0].record()
                    p.calls[i]()
                    events[1].record()
                    p.calls[i]()
                    events[2].record()
                    events[2].synchronize()
                if rnd >= opts.warmup:
                    cold[id(p)].append(cp.cuda.get_elapsed_time(events[0], events[1]) / 1e3)
                    warm[id(p)].append(cp.cuda.get_elapsed_time(events[1], events[2]) / 1e3)
        if rnd < opts.warmup:
            continue
        rounds += 1
        elapsed = time.perf_counter() - (t0 or 0.0)
        whys = [rule.done(head[id(p)], opts.repeat * n_sets, elapsed) for p in timed]
        if all(whys):
            stopped = next((w for w in ("budget", "max-repeats") if w in whys), whys[0] or "repeats" if whys else "repeats")
            break
        if elapsed >= opts.budget_s and rounds >= opts.repeat:
            stopped = "budget"
            break
    else:
        stopped = "max-repeats"
    for p in timed:
        c = OpTime(**gpu.Timing(cold[id(p)], stopped, opts.target).as_dict())
        w = OpTime(**gpu.Timing(warm[id(p)], stopped, opts.target).as_dict())
        p.result.op_time_cold, p.result.op_time_warm = c, w
        p.result.op_time = c if opts.l2 == "cold" else w
    return LayerTiming(rounds=rounds, stopped=stopped)


def release_memory(cp: Any) -> float | None:
    """Return the cached blocks of CuPy's and PyTorch's memory pools to the device; the free device
    memory afterwards in GiB (None when it cannot be read)."""
    try:
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
        import sys

        if "torch" in sys.modules:
            sys.modules["torch"].cuda.empty_cache()
        return float(cp.cuda.runtime.memGetInfo()[0]) / 2**30
    except Exception:
        return None


def bench_layer(cp: Any, tag: str, s: ConvShape, sets: list[tuple[Any, Any]], w, bias, variants: list[Variant],
                opts: BenchOptions, device: DeviceFacts, progress: Progress) -> tuple[list[BenchResult], LayerTiming]:
    prepared: list[_Prepared] = []
    # the cuDNN peers first: their algorithm search (first call) runs before the other variants'
    # buffers and sweeps, with the memory pools emptied, in the same state whichever variants
    # share the bench (benchmark mode only tries algorithms whose workspace it can allocate)
    free_gib = release_memory(cp)
    order = sorted(range(len(variants)), key=lambda k: variants[k].device != "cudnn")
    for v in [variants[k] for k in order]:
        progress(f"{tag}: checking {v.name}")
        res = BenchResult(v.name, v.technique, v.precision, v.arithmetic, v.reference, v.tolerance)
        buffers = [prepare(cp, v, a, w, bias, s) for a, _ in sets]  # converted and poisoned untimed

        def call(i: int, v: Variant = v, buffers=buffers):
            assert v.launch is not None
            return v.launch(cp, buffers[i][0], buffers[i][1], buffers[i][2], buffers[i][3], s)

        report = _tune(cp, f"{tag}/{v.name}", v, buffers[0], sets[0][1], s, res) if v.tune is not None else {}
        calls = _check(res, sets, call, cp) if res.status == "ok" else []
        if res.status == "ok" and v.params is not None:
            res.params = v.params(s)
            if report:
                from profconv.run.user.contracts import sweep_text

                res.params["sweep"] = sweep_text(report, v.params(s))
        if res.status == "ok" and peers.peer_of(v.name) is not None and free_gib is not None:
            res.params = {"free_memory_gib_at_search": round(free_gib, 2)}
        prepared.append(_Prepared(res, calls, operands=tuple(buffers[0][:3])))
    prepared = [prepared[order.index(k)] for k in range(len(variants))]  # back in the order asked
    timing = _time_interleaved(cp, tag, prepared, len(sets), opts, progress)
    for p in prepared:
        if (peer := peers.peer_of(p.result.variant)) is not None and p.calls and p.result.op_time:
            progress(f"{tag}: {peer.name} against a plain PyTorch loop")
            p.result.peer_check = peer_check(peer, p, s, opts.cudnn_kernels)
    _derive([p.result for p in prepared], s, device)
    return [p.result for p in prepared], timing


PLAIN_CALLS, PLAIN_ROUNDS = 20, 7


def peer_check(peer: peers.Peer, p: _Prepared, s: ConvShape, kernels: bool) -> PeerCheck:
    """The peer's headline median against a plain PyTorch loop of the same call on the same tensors
    (`peers.plain_loop`); with `kernels`, the kernels one call launches (cuDNN's algorithm), after."""
    t = p.result.op_time
    assert t is not None
    x, w, bias = p.operands
    loop = float(np.median(np.asarray(peers.plain_loop(peer, x, w, bias, s, PLAIN_CALLS, PLAIN_ROUNDS))))
    faster_by = 1.0 - loop / t.median_s
    allowed = max(t.ci_rel or 0.0, 0.01)
    return PeerCheck(plain_loop_s=loop, calls=PLAIN_CALLS, rounds=PLAIN_ROUNDS, faster_by=faster_by, allowed=allowed,
                     ok=faster_by <= allowed, kernels=peers.kernels_of(p.calls[0]) if kernels else [])


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
    """Ratios and shares of the roofline floor. A variant measured against cuDNN is compared with the
    fastest cuDNN peer of its precision (layout named in `reference`, e.g. cudnn-fp16-nhwc); a peer
    with the fastest peer of its own precision; fp32 variants also with the best TF32 peer and fp16
    ones with the best bf16 peer (`peer_ratios`)."""
    by_name = {r.variant: r for r in results if r.op_time}
    times = {n: r.op_time.median_s for n, r in by_name.items() if r.op_time}
    best = peers.best_per_precision(times)
    for r in results:
        if not r.op_time:
            continue
        itemsize = 2 if r.precision in ("fp16", "bf16") else 4
        r.floor_s, bound = floor(s, itemsize, device.bandwidth_Bps, device.peaks.get(r.arithmetic))
        r.bound = "memory" if bound == "memory" else "compute" if bound == "compute" else None
        med = r.op_time.median_s
        r.floor_share = r.floor_s / med if r.floor_s else None
        if peers.peer_of(r.variant) is not None:
            r.reference = best.get(r.precision)
        elif r.reference in peers.BY_NAME:
            r.reference = peers.best_peer(times, r.precision) or r.reference
            other = {"fp32": "tf32", "fp16": "bf16"}.get(r.precision)
            if other and best.get(other):
                r.peer_ratios = {other: PeerRatio(peer=best[other], ratio=med / times[best[other]])}
        ref = by_name.get(r.reference or "")
        r.ratio = med / ref.op_time.median_s if ref and ref.op_time else None


def device_facts(cp: Any, env: dict) -> DeviceFacts:
    peak = peak_for(env.get("gpu"))
    facts = DeviceFacts(bandwidth_Bps=measure_bandwidth(cp), bandwidth_method="1 GiB cudaMemcpyAsync "
                        "device-to-device, bytes read + written, median of 10")
    if peak is not None:
        facts.peaks = {a: t * 1e12 for a in ARITHMETICS if (t := peak.tflops(a))}
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
                         "rel_error": r.rel_error, "error": r.error, "ci_rel": t.ci_rel if t else None,
                         "cold_s": r.op_time_cold.median_s if r.op_time_cold else None,
                         "warm_s": r.op_time_warm.median_s if r.op_time_warm else None,
                         "stopped": t.stopped if t else None})
    df = pd.DataFrame(rows, columns=COLUMNS)
    for c in ("median_s", "min_s", "max_s", "ratio", "floor_s", "floor_share", "rel_error", "ci_rel", "cold_s", "warm_s"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


BEST_COLUMNS = ["model", "layer", "shape", "precision", "variant", "median_s", "ratio", "floor_share", "reference"]


def best_per_layer(df: pd.DataFrame) -> pd.DataFrame:
    """Per measured layer and precision: the fastest correct variant measured against cuDNN, its
    ratio and its floor share (the issue's targets read off this table)."""
    ok = df[(df["status"] == "ok") & df["reference"].isin(list(peers.BY_NAME))
            & ~df["variant"].isin(list(peers.BY_NAME))]
    if ok.empty:
        return pd.DataFrame(columns=BEST_COLUMNS)
    idx = ok.groupby(["model", "layer", "precision"], sort=False)["median_s"].idxmin()
    return ok.loc[idx, BEST_COLUMNS].reset_index(drop=True)


PEER_COLUMNS = ["model", "layer", "shape", "precision", "peer", "layout", "median_s", "ci_rel", "others", "plain_loop_s",
                "check", "kernels"]


def peer_checks(record: BenchRecord) -> dict[tuple[str, str, str], tuple[float | None, str, str]]:
    """(model, layer, peer) -> (plain-loop seconds, "ok" | "loop X% faster", its kernels) for every checked peer."""
    out: dict[tuple[str, str, str], tuple[float | None, str, str]] = {}
    for layer in record.layers:
        for r in layer.results:
            if (c := r.peer_check) is not None:
                verdict = "ok" if c.ok else f"loop {c.faster_by:.1%} faster"
                out[(layer.model, layer.layer, r.variant)] = (c.plain_loop_s, verdict, "; ".join(c.kernels))
    return out


def best_peers(df: pd.DataFrame, checks: dict | None = None) -> pd.DataFrame:
    """Per measured layer and precision: the fastest cuDNN peer, its layout, and the other layouts'
    medians ("NCHW 1.352 ms") so the choice can be checked; with `checks` (`peer_checks`), its plain
    PyTorch loop time, the check's verdict and the kernels it ran. Columns: PEER_COLUMNS."""
    checks = checks or {}
    ok = df[(df["status"] == "ok") & (df["op"] == "conv") & df["variant"].isin(list(peers.BY_NAME))]
    rows = []
    for (model, layer, prec), g in ok.groupby(["model", "layer", "precision"], sort=False):
        g = g.sort_values("median_s", kind="stable")
        top = g.iloc[0]
        others = ", ".join(f"{peers.BY_NAME[str(v)].layout} {t * 1e3:.3f} ms"
                           for v, t in zip(g["variant"].iloc[1:], g["median_s"].iloc[1:]))
        loop, verdict, kernels = checks.get((model, layer, str(top["variant"])), (None, "", ""))
        rows.append({"model": model, "layer": layer, "shape": top["shape"], "precision": prec, "peer": top["variant"],
                     "layout": peers.BY_NAME[str(top["variant"])].layout, "median_s": top["median_s"],
                     "ci_rel": top["ci_rel"], "others": others, "plain_loop_s": loop, "check": verdict,
                     "kernels": kernels})
    order = {p: i for i, p in enumerate(("fp32", "tf32", "fp16", "bf16"))}
    out = pd.DataFrame(rows, columns=PEER_COLUMNS)
    if not out.empty:
        layers = list(dict.fromkeys(zip(out["model"], out["layer"])))  # the bench's own order of layers
        out["_l"] = [layers.index(k) for k in zip(out["model"], out["layer"])]
        out["_o"] = out["precision"].map(order)
        out = out.sort_values(["_l", "_o"], kind="stable").drop(columns=["_l", "_o"])
    return out.reset_index(drop=True)
