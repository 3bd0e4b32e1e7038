# profconv
# name = "cupy-rawkernel"
# description = "a CuPy RawKernel, one thread per output"
"""Python contract example: launch(x, w, bias, out, shape) on CuPy arrays.

x is B x C x H x W, w is M x C x K x K, bias has M entries or is None, out is B x M x H_out x W_out
(NaN-filled: every element must be written); shape has B, M, C, H, W, K, P (padding), Ho, Wo.
Return `out` (or None). Any CuPy, Numba or Triton code may run here.
"""

import cupy as cp
import numpy as np

_SOURCE = r"""
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int P, int has_bias) {
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int wo = i % Wo, h = (i / Wo) % Ho, m = (i / ((long long)Wo * Ho)) % M;
        const long long b = i / ((long long)Wo * Ho * M);
        float acc = has_bias ? bias[m] : 0.0f;
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p) {
                const int ih = h + p - P;
                if (ih < 0 || ih >= H) continue;
                for (int q = 0; q < K; ++q) {
                    const int iw = wo + q - P;
                    if (iw >= 0 && iw < W) acc += x[((b * C + c) * H + ih) * W + iw] * w[((m * C + c) * K + p) * K + q];
                }
            }
        y[i] = acc;
    }
}
"""
_kernel = cp.RawKernel(_SOURCE, "conv")


def launch(x, w, bias, out, shape):
    blocks = min((out.size + 255) // 256, 1 << 20)
    dims = [np.int32(v) for v in (shape.B, shape.M, shape.C, shape.H, shape.W, shape.K, shape.P)]
    _kernel((blocks,), (256,), (x, w, bias if bias is not None else w, out, *dims, np.int32(bias is not None)))
    return out
