"""The reference forward pass, generic over NumPy and CuPy (`xp`), float64 accumulation for conv.

The CPU reference variant is `conv2d(numpy, …)`; the GPU checks use the same function on CuPy
in float64, so both compute exactly the same definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profconv.run.models import Layer

CHUNK_BYTES = 32 << 20  # im2col columns per chunk: cache-friendly, and memory stays bounded at any batch size


def chunk_for(s_c: int, k: int, ho: int, wo: int, itemsize: int = 8) -> int:
    """Images per chunk so one chunk's im2col columns take about CHUNK_BYTES."""
    return max(1, CHUNK_BYTES // max(1, s_c * k * k * ho * wo * itemsize))


def conv2d(xp: Any, x, k, bias=None, pad: int = 0, chunk: int | None = None, dtype=np.float64, out=None):
    """y[b,m] = bias[m] + sum_c x[b,c] (*) k[m,c], valid after zero padding `pad`; im2col + one BLAS matmul per chunk.

    Accumulates in `dtype` (float64 for the reference: that is where the precision matters), works on
    `chunk` images at a time (default: ~32 MB of columns) so memory stays bounded; the result is float32,
    written into `out` when given (B x M x Ho x Wo).
    """
    B, C, H, W = x.shape
    M, _, K, _ = k.shape
    Ho, Wo = H + 2 * pad - K + 1, W + 2 * pad - K + 1
    chunk = chunk or chunk_for(C, K, Ho, Wo, np.dtype(dtype).itemsize)
    kmat = k.reshape(M, C * K * K).astype(dtype)
    bias_col = None if bias is None else bias.astype(dtype)[None, :, None]
    y = xp.empty((B, M, Ho, Wo), dtype=np.float32) if out is None else out
    for s in range(0, B, chunk):
        xb = x[s : s + chunk].astype(dtype)
        if pad:
            xb = xp.pad(xb, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        n = xb.shape[0]
        cols = xp.empty((n, C, K, K, Ho, Wo), dtype=dtype)
        for p in range(K):
            for q in range(K):
                cols[:, :, p, q] = xb[:, :, p : p + Ho, q : q + Wo]
        res = xp.matmul(kmat, cols.reshape(n, C * K * K, Ho * Wo))  # n x M x HoWo
        if bias_col is not None:
            res += bias_col
        y[s : s + n] = res.reshape(n, M, Ho, Wo)
    return y


def pool_max(xp: Any, a, s: int):
    """Max-pool s x s, stride s (trailing rows/columns that do not fill a window are dropped):
    an elementwise maximum over the s*s strided views, far faster than a reduction over reshaped axes."""
    B, C, H, W = a.shape
    Hp, Wp = H // s, W // s
    out = None
    for p in range(s):
        for q in range(s):
            view = a[:, :, p : p + Hp * s : s, q : q + Wp * s : s]
            out = view.copy() if out is None else xp.maximum(out, view, out=out)
    return out


def apply(xp: Any, layer: Layer, a, params: dict[str, Any]):
    """Every non-conv layer of the forward pass."""
    if layer.kind == "tanh":
        return xp.tanh(a)
    if layer.kind == "relu":
        return xp.maximum(a, 0)
    if layer.kind == "pool":
        return pool_max(xp, a, layer.k)
    if layer.kind == "fc":
        flat = a.reshape(a.shape[0], -1)
        return flat @ params[f"{layer.name}.w"] + params[f"{layer.name}.b"]
    if layer.kind == "softmax":
        z = a - a.max(axis=1, keepdims=True)
        e = xp.exp(z)
        return e / e.sum(axis=1, keepdims=True)
    raise ValueError(f"not a non-conv layer: {layer.kind}")


def forward(xp: Any, layers: list[Layer], x, params: dict[str, Any], conv=None):
    """The whole net; `conv(layer, a)` overrides how conv layers are computed."""
    a = x
    for layer in layers:
        if layer.kind == "conv":
            if conv is not None:
                a = conv(layer, a)
            else:
                a = conv2d(xp, a, params[f"{layer.name}.w"], params.get(f"{layer.name}.b"), layer.pad)
        else:
            a = apply(xp, layer, a, params)
    return a


def accuracy(xp: Any, probs, labels) -> float:
    return float((xp.argmax(probs, axis=1) == labels).mean())
