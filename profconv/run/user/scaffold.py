"""`profconv kernel new NAME --contract ...`: a correct naive kernel and its manifest, ready to run.

Each template is a complete, correct kernel (one thread per output, every layer shape of the
bundled models, with padding and bias where the contract can take them), so the first
`profconv run --kernel NAME` passes and the user optimises from a known-good start.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from profconv.errors import InputError, did_you_mean
from profconv.io import write_atomic

_NAIVE_BODY = """    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int wo = i % Wo, h = (i / Wo) % Ho, m = (i / ((long long)Wo * Ho)) % M;
        const long long b = i / ((long long)Wo * Ho * M);
        float acc = bias[m];
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p) {
                const int ih = h + p - pad;
                if (ih < 0 || ih >= H) continue;
                for (int q = 0; q < K; ++q) {
                    const int iw = wo + q - pad;
                    if (iw >= 0 && iw < W) acc += x[((b * C + c) * H + ih) * W + iw] * w[((m * C + c) * K + p) * K + q];
                }
            }
        y[i] = acc;
    }
"""

DEVICE = """/* profconv
# How profconv launches this kernel (device contract; `profconv run --help`, docs/kernels.md).
name = "{name}"
function = "conv_forward"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["min(ceil(B * M * H_out * W_out / THREADS), 1048576)"]
block = ["THREADS"]
shared_bytes = "0"
[defines]
THREADS = 256
[sweep]
THREADS = [128, 256, 512]
*/
// y[b,m,h,w] = bias[m] + sum_{{c,p,q}} x[b,c,h+p-pad,w+q-pad] * w[m,c,p,q]   (zero outside x)
// x: B x C x H x W, w: M x C x K x K, y: B x M x H_out x W_out, all float32, C-contiguous.
extern "C" __global__ void conv_forward(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ bias, float* __restrict__ y,
                                        int B, int M, int C, int H, int W, int K, int pad) {{
{body}}}
"""

HOST_TOML = """# Host contract: profconv compiles {name}.cu with nvcc -shared and calls `function` with device
# pointers and the layer's sizes, in the order of `args`. The whole call is the Op Time.
name = "{name}"
source = "{name}.cu"
function = "conv_forward"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
options = []
"""

HOST = """// Host contract: several launches, streams or constant memory are allowed here.
#include <cuda_runtime.h>

#define THREADS 256

__global__ void conv_kernel(const float* __restrict__ x, const float* __restrict__ w,
                            const float* __restrict__ bias, float* __restrict__ y,
                            int B, int M, int C, int H, int W, int K, int pad) {{
{body}}}

extern "C" void conv_forward(const float* x, const float* w, const float* bias, float* y, int B, int M, int C,
                             int H, int W, int K, int pad) {{
    const long long total = (long long)B * M * (H + 2 * pad - K + 1) * (W + 2 * pad - K + 1);
    long long blocks = (total + THREADS - 1) / THREADS;
    if (blocks > 1048576) blocks = 1048576;
    conv_kernel<<<(unsigned)blocks, THREADS>>>(x, w, bias, y, B, M, C, H, W, K, pad);
}}
"""

COURSE = """// ECE 408 (mini-dnn) new-forward.cu: profconv runs this file unchanged (course contract).
// Op Time is conv_forward_gpu; prolog and epilog are the copies (timed as end to end).
#include <cmath>
#include <iostream>
#include "gpu-new-forward.h"

#define TILE_WIDTH 16

__global__ void conv_forward_kernel(float *y, const float *x, const float *k, const int B, const int M, const int C,
                                    const int H, const int W, const int K) {{
    const int H_out = H - K + 1;
    const int W_out = W - K + 1;
#define y4d(i3, i2, i1, i0) y[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + i0]
#define x4d(i3, i2, i1, i0) x[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + i0]
#define k4d(i3, i2, i1, i0) k[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + i0]
    const int W_grid = (W_out + TILE_WIDTH - 1) / TILE_WIDTH;
    const int m = blockIdx.x;
    const int h = (blockIdx.y / W_grid) * TILE_WIDTH + threadIdx.y;
    const int w = (blockIdx.y % W_grid) * TILE_WIDTH + threadIdx.x;
    const int b = blockIdx.z;
    if (h < H_out && w < W_out) {{
        float acc = 0.0f;
        for (int c = 0; c < C; c++)
            for (int p = 0; p < K; p++)
                for (int q = 0; q < K; q++)
                    acc += x4d(b, c, h + p, w + q) * k4d(m, c, p, q);
        y4d(b, m, h, w) = acc;
    }}
#undef y4d
#undef x4d
#undef k4d
}}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_y, const float *host_x, const float *host_k,
                                                    float **device_y_ptr, float **device_x_ptr, float **device_k_ptr,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {{
    const size_t y_bytes = sizeof(float) * B * M * (H - K + 1) * (W - K + 1);
    cudaMalloc((void **)device_y_ptr, y_bytes);
    cudaMalloc((void **)device_x_ptr, sizeof(float) * B * C * H * W);
    cudaMalloc((void **)device_k_ptr, sizeof(float) * M * C * K * K);
    cudaMemcpy(*device_x_ptr, host_x, sizeof(float) * B * C * H * W, cudaMemcpyHostToDevice);
    cudaMemcpy(*device_k_ptr, host_k, sizeof(float) * M * C * K * K, cudaMemcpyHostToDevice);
}}

__host__ void GPUInterface::conv_forward_gpu(float *device_y, const float *device_x, const float *device_k,
                                             const int B, const int M, const int C, const int H, const int W,
                                             const int K) {{
    const int W_grid = (W - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH;
    const int H_grid = (H - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH;
    dim3 block(TILE_WIDTH, TILE_WIDTH, 1);
    dim3 grid(M, W_grid * H_grid, B);
    conv_forward_kernel<<<grid, block>>>(device_y, device_x, device_k, B, M, C, H, W, K);
    cudaDeviceSynchronize();
}}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_y, float *device_y, float *device_x, float *device_k,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {{
    cudaMemcpy(host_y, device_y, sizeof(float) * B * M * (H - K + 1) * (W - K + 1), cudaMemcpyDeviceToHost);
    cudaFree(device_y);
    cudaFree(device_x);
    cudaFree(device_k);
}}
"""

PYTHON = '''# profconv
# name = "{name}"
"""Python contract: profconv calls launch(x, w, bias, out, shape) with CuPy arrays.

x: B x C x H x W, w: M x C x K x K, bias: M values or None, out: B x M x H_out x W_out (filled with
NaN: write every element); shape has B, M, C, H, W, K, P (padding), Ho and Wo. Return out.
"""

import cupy as cp
import numpy as np

_SOURCE = r"""
extern "C" __global__ void conv_forward(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ bias, float* __restrict__ y,
                                        int B, int M, int C, int H, int W, int K, int pad) {{
{body}}}
"""
_kernel = cp.RawKernel(_SOURCE, "conv_forward")
_zeros = {{}}  # M -> a zero bias for layers without one, made once (not inside the timed call)


def launch(x, w, bias, out, shape):
    if bias is None:
        if shape.M not in _zeros:
            _zeros[shape.M] = cp.zeros(shape.M, dtype=cp.float32)
        bias = _zeros[shape.M]
    blocks = min((out.size + 255) // 256, 1 << 20)
    dims = [np.int32(v) for v in (shape.B, shape.M, shape.C, shape.H, shape.W, shape.K, shape.P)]
    _kernel((blocks,), (256,), (x, w, bias, out, *dims))
    return out
'''


def files(name: str, contract: str) -> dict[str, str]:
    """File name -> text of the starting kernel for `contract` (pure)."""
    body = _NAIVE_BODY
    if contract == "device":
        return {f"{name}.cu": DEVICE.format(name=name, body=body)}
    if contract == "host":
        return {"profconv.toml": HOST_TOML.format(name=name), f"{name}.cu": HOST.format(body=body)}
    if contract == "course":
        return {"new-forward.cu": COURSE.format()}
    if contract == "python":
        return {f"{name}.py": PYTHON.format(name=name, body=body)}
    contracts = ("device", "host", "course", "python")
    raise InputError(f"--contract {contract!r}{did_you_mean(contract, contracts)} is not one of {', '.join(contracts)}")


def write(directory: Path, name: str, contract: str, force: bool = False) -> list[Path]:
    """Write the starting files into `directory` (created); refuse to overwrite unless `force`."""
    if not re.fullmatch(r"[A-Za-z][\w-]*", name):
        raise InputError(f"kernel name {name!r}: start with a letter; letters, digits, '_' and '-' only")
    made = files(name, contract)
    paths = [directory / f for f in made]
    if links := [p for p in paths if p.is_symlink()]:  # --force replaces files, never writes through a link
        raise InputError(f"{links[0]} is a symbolic link (to {os.readlink(links[0])}): not replaced, even with "
                         "--force; remove it or choose another name")
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise InputError(f"{existing[0]} exists: choose another name or pass --force")
    directory.mkdir(parents=True, exist_ok=True)
    for p, text in zip(paths, made.values()):
        write_atomic(p, text)  # a new file in place of the old one (rename), never a write into a link's target
    return paths
