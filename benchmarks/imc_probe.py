"""Why the constant-filter design lost on layers with C > 1: run both `tuned` designs once on
Spring 2018 conv2 (M=16, C=6, 30x30, K=5) so that Nsight Compute can report their warp stalls.

    ncu --section WarpStateStats --page raw --csv -k regex:conv_tuned python3 benchmarks/imc_probe.py

The prediction (benchmarks/NOTES.md): the constant-filter kernel, whose 8 channels x 150 filter
taps (4.8 KB) overflow the immediate-constant cache, stalls on `imc_miss`; the shared-filter kernel
does not.
"""

import cupy as cp

from profconv.run import tuned
from profconv.run.models import ConvShape

s = ConvShape(2000, 16, 6, 30, 30, 5)
x = cp.random.standard_normal((s.B, s.C, s.H, s.W), dtype=cp.float32)
w = cp.random.standard_normal((s.M, s.C, s.K, s.K), dtype=cp.float32)
bias = cp.zeros(s.M, dtype=cp.float32)
out = cp.empty((s.B, s.M, s.Ho, s.Wo), dtype=cp.float32)
constant = {"design": "constant-filters", "TW": 2, "MB": 8, "IMGS": 1, "THREADS": 352, "smem": 4 * 6 * 30 * 32}
shared = next(c for c in tuned.shared_candidates(s, (2,), elem=4) if c["MB"] == 8)
tuned._constant_build(cp, constant, s)(x, w, bias, out)
tuned._shared_build("tuned_smem.cu", "conv_tuned_smem")(cp, shared, s)(x, w, bias, out)
cp.cuda.Device().synchronize()
print("constant:", constant, "shared:", shared)
