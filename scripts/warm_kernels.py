"""Fill CuPy's kernel cache for a bench before it runs, in parallel (a GPU machine, fresh start).

On a fresh machine `profconv bench` of every variant spends minutes in NVRTC: each swept variant
compiles every candidate of its sweep, one after the other, per layer shape (ece408-high conv1:
28 `tuned` candidates; `streams` sweeps `tuned` again for its chunk shape). This script runs the
same code paths in WORKERS processes spread over the visible GPUs, each sweeping its share of the
candidates (i % WORKERS == k) and compiling its share of the other variants, so the modules land
in CuPy's on-disk cache; the bench that follows finds them there. Timings here mean nothing.

    python scripts/warm_kernels.py [--models ece408-high,ece408] [--layers ece408/conv2,...] [--images 10000]
        [--workers 12] [--variants tuned,tensorcore,...] [--fuse 1]
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import time
import zlib

# their launches run a sweep (e2e/streams: tuned's)
SWEPT = ("tuned", "fp16", "tensorcore", "e2e", "streams", "tf32-wmma", "tensorcore-tf32", "tensorcore-3xtf32")


def work(k: int, nw: int, device: str, models: list[str], images: int, layers: list[str],
         variants: list[str] | None = None, fuse: bool = False) -> str:
    os.environ["CUDA_VISIBLE_DEVICES"] = device
    import cupy as cp

    from profconv.run import bench, gpu, sweep, tuned
    from profconv.run import weights as weights_mod
    from profconv.run.models import get_model
    from profconv.run.runner import prepare
    from profconv.run.variants import get_variants

    original = sweep.Swept._sweep

    def share(self, cp_, x, w, bias, out, s):
        full = self.candidates
        mine = [c for i, c in enumerate(full(s)) if i % nw == k]
        if not mine:  # nothing of this sweep is this worker's: compile nothing (with many workers, compiling
            return {}, lambda *args: None  # the first candidate in each of them had swamped the warm-up)
        self.candidates = lambda s_: mine
        try:
            return original(self, cp_, x, w, bias, out, s)
        finally:
            self.candidates = full

    original_planned = sweep.Swept._planned

    def planned_share(self, cp_, s):  # a sweep plan's configuration: built by one worker, not by all
        if sweep.planned_params(self.name, sweep.shape_key(s)) is None:
            return None
        if zlib.crc32(f"{self.name}{sweep.shape_key(s)}".encode()) % nw != k:
            return {}, lambda *args: None
        return original_planned(self, cp_, s)

    sweep.Swept._sweep = share  # type: ignore[method-assign]
    sweep.Swept._planned = planned_share  # type: ignore[method-assign]
    done, failed, t0 = 0, [], time.perf_counter()
    others = 0
    for name in models:
        m = get_model(name)
        params = weights_mod.load(m, None)
        for layer, s in m.conv_shapes(images):
            if layers and f"{name}/{layer.name}" not in layers:
                continue
            a = cp.random.rand(s.B, s.C, s.H, s.W, dtype=cp.float32)
            w = cp.asarray(params[f"{layer.name}.w"])
            b = params.get(f"{layer.name}.b")
            b = None if b is None else cp.asarray(b)
            for v in get_variants(variants or None):
                x = out = None
                if v.device != "gpu" or v.launch is None:
                    continue
                if v.name not in SWEPT:
                    others += 1
                    if others % nw != k:
                        continue
                try:
                    x, w_, b_, out = prepare(cp, v, a, w, b, s)
                    v.launch(cp, x, w_, b_, out, s)
                    cp.cuda.Device().synchronize()
                    done += 1
                except Exception as exc:  # reported; the bench will meet (and report) it again
                    failed.append(f"{name}/{layer.name}/{v.name}: {type(exc).__name__}: {str(exc)[:120]}")
                del x, out
            if fuse and (ops := bench.fused_ops(m, layer.name)) is not None:  # the bench's fused layer sweeps too
                act, pool = ops
                pooled = cp.empty((s.B, s.M, s.Ho // pool.k, s.Wo // pool.k), dtype=cp.float32)
                try:
                    tuned.fused_layer(pool.k, act.kind).launch(cp, a, w, gpu.bias_or_zeros(cp, b, s.M), pooled, s)
                    cp.cuda.Device().synchronize()
                    done += 1
                except Exception as exc:
                    failed.append(f"{name}/{layer.name}/fused-layer: {type(exc).__name__}: {str(exc)[:120]}")
                del pooled
            del a
            cp.get_default_memory_pool().free_all_blocks()
    return f"worker {k} (GPU {device}): {done} launches in {time.perf_counter() - t0:.1f} s" + (
        "; failed: " + "; ".join(failed) if failed else "")


def main(argv: list[str]) -> int:
    opts = {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1, 2)}
    models = opts.get("--models", "ece408-high,ece408").split(",")
    images = int(opts.get("--images", 10000))
    nw = int(opts.get("--workers", 12))
    layers = [x for x in opts.get("--layers", "").split(",") if x]
    variants = [x for x in opts.get("--variants", "").split(",") if x] or None
    fuse = opts.get("--fuse", "0") == "1"
    devices = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(nw) as pool:
        results = [pool.apply_async(work, (k, nw, devices[k % len(devices)], models, images, layers, variants, fuse))
                   for k in range(nw)]
        for r in results:
            try:
                print(r.get(timeout=600), flush=True)
            except Exception as exc:
                print(f"a worker failed: {type(exc).__name__}: {exc}", flush=True)
    print(f"kernel cache warmed in {time.perf_counter() - t0:.1f} s ({nw} workers on GPU(s) {','.join(devices)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
