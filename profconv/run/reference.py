"""The reference forward pass, generic over NumPy and CuPy (`xp`), float64 accumulation for conv.

The CPU reference variant is `conv2d(numpy, …)`; the GPU checks use the same function on CuPy
in float64, so both compute exactly the same definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profconv.run.models import Layer


def conv2d(xp: Any, x, k, bias=None, pad: int = 0, chunk: int = 256, dtype=np.float64):
    """y[b,m] = bias[m] + sum_c x[b,c] (*) k[m,c], valid after zero padding `pad`; im2col + matmul.

    Works on `chunk` images at a time so memory stays bounded; the result is float32.
    """
    B, C, H, W = x.shape
    M, _, K, _ = k.shape
    Ho, Wo = H + 2 * pad - K + 1, W + 2 * pad - K + 1
    kmat = k.reshape(M, C * K * K).astype(dtype)
    y = xp.empty((B, M, Ho, Wo), dtype=np.float32)
    for s in range(0, B, chunk):
        xb = x[s : s + chunk].astype(dtype)
        if pad:
            xb = xp.pad(xb, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        n = xb.shape[0]
        cols = xp.empty((n, C, K, K, Ho, Wo), dtype=dtype)
        for p in range(K):
            for q in range(K):
                cols[:, :, p, q] = xb[:, :, p : p + Ho, q : q + Wo]
        cols = cols.reshape(n, C * K * K, Ho * Wo)
        out = xp.matmul(kmat[None], cols)  # n x M x HoWo
        if bias is not None:
            out += bias.astype(dtype)[None, :, None]
        y[s : s + n] = out.reshape(n, M, Ho, Wo).astype(np.float32)
    return y


def apply(xp: Any, layer: Layer, a, params: dict[str, Any]):
    """Every non-conv layer of the forward pass."""
    if layer.kind == "tanh":
        return xp.tanh(a)
    if layer.kind == "relu":
        return xp.maximum(a, 0)
    if layer.kind == "pool":
        s = layer.k
        B, C, H, W = a.shape
        Hp, Wp = H // s, W // s
        a = a[:, :, : Hp * s, : Wp * s].reshape(B, C, Hp, s, Wp, s)
        return a.max(axis=(3, 5))
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
