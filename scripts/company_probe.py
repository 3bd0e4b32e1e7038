"""Why did cuDNN's time depend on the other variants in the bench? A probe, run on the GPU.

Spring 2018 conv2 (M=16 C=6 30x30 K=5, 10,000 images), cuDNN fp32 NCHW through PyTorch. The same
call is timed (CUDA events, device idle before, median of 30) right after different predecessors,
as the old interleaved bench did:
  cold      the L2 flushed (a memset of twice its size) just before
  self      cuDNN itself on the same input just before (warm)
  tuned     profconv's tuned kernel on the same input set just before
  other-set cuDNN on another input set just before (its own input not in L2)
  e2e       the e2e variant (host copies) just before
  idle-5ms  the GPU idle 5 ms before (clock ramp-down)
and the cuDNN kernels each run launches (torch.profiler) are listed, to see whether the algorithm
choice differs. Prints one table; writes JSON to argv[1].
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import cupy as cp
import numpy as np
import torch

from profconv.run import gpu, variants
from profconv.run.models import ConvShape

variants.cudnn_unavailable()
s = ConvShape(10000, 16, 6, 30, 30, 5, 0)
rng = np.random.default_rng(0)
sets = [cp.asarray(rng.standard_normal((s.B, s.C, s.H, s.W)).astype(np.float32)) for _ in range(3)]
w = cp.asarray(rng.standard_normal((s.M, s.C, s.K, s.K)).astype(np.float32))
by = {v.name: v for v in variants.VARIANTS}
cud, tuned, e2e = by["cudnn"], by["tuned"], by["e2e"]
from profconv.run.runner import prepare  # noqa: E402

c_args = [prepare(cp, cud, x, w, None, s) for x in sets]
t_args = [prepare(cp, tuned, x, w, None, s) for x in sets]
e_args = prepare(cp, e2e, sets[0], w, None, s)
flush = gpu.L2Flush(cp)


def call_c(i):
    return cud.launch(cp, *c_args[i], s)


for i in range(3):
    call_c(i)
    tuned.launch(cp, *t_args[i], s)
e2e.launch(cp, *e_args, s)
cp.cuda.Device().synchronize()

before = {
    "cold": lambda: flush(),
    "self": lambda: call_c(0),
    "tuned": lambda: tuned.launch(cp, *t_args[0], s),
    "other-set": lambda: call_c(1),
    "e2e": lambda: e2e.launch(cp, *e_args, s),
    "idle-5ms": lambda: (cp.cuda.Device().synchronize(), time.sleep(0.005)),
}
start, end = cp.cuda.Event(), cp.cuda.Event()
results = {}
for name, pre in before.items():
    samples = []
    for _ in range(30):
        pre()
        cp.cuda.Device().synchronize()
        start.record()
        call_c(0)
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end))
    results[name] = {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples)}

with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    call_c(0)
    torch.cuda.synchronize()
kernels = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
props = cp.cuda.runtime.getDeviceProperties(0)
doc = {"gpu": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
       "l2_bytes": props.get("l2CacheSize"), "input_bytes": sets[0].nbytes,
       "output_bytes": s.B * s.M * s.Ho * s.Wo * 4, "results": results, "cudnn_kernels": kernels}
print(f"{doc['gpu']}: L2 {doc['l2_bytes'] / 2**20:.0f} MiB, input {doc['input_bytes'] / 2**20:.1f} MiB, "
      f"output {doc['output_bytes'] / 2**20:.1f} MiB; cuDNN kernels: {', '.join(kernels)}")
for name, r in results.items():
    print(f"  cuDNN after {name:<10} median {r['median_ms']:.3f} ms  (min {r['min_ms']:.3f}, max {r['max_ms']:.3f})")
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as fh:
        json.dump(doc, fh, indent=1)
