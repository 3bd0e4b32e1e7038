"""The variant ladder, loaded from declarations: each variant is a kernel file plus a `kernels/<name>.toml`.

The declarations are read by the same code as a user's kernel (profconv/run/user/manifest.py): a
`device` declaration (naive) is launched from its grid/block expressions like any user's __global__
function; a `python` declaration names the launcher below (or in run/tuned.py) for kernels whose
launch is more than one grid. A new variant is one .cu file and one .toml file. Every launcher has
the signature launch(cp, x, w, bias, out, shape) -> array (B x M x Ho x Wo: `out`, written in
place, or a library's own result); bias is None for a layer without bias (our kernels then add a
cached zero vector; cuDNN is called without bias, so it does not pay for a bias pass the layer
does not have).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

import numpy as np

from profconv.run import gpu, peers
from profconv.run.declarations import NONE, builtin_declarations
from profconv.run.models import ConvShape
from profconv.run.tuned import launch_tuned
from profconv.run.user import manifest
from profconv.run.variant import Launch, Variant

__all__ = ["VARIANTS", "Variant", "Launch", "get_variants", "builtin_declarations", "cudnn_unavailable"]

THREADS = 256
TILE = 16
UNROLL_BUDGET_BYTES = 512 * 1024 * 1024  # largest im2col buffer unroll-gemm allocates at once


def _i32(*vals: int):
    return tuple(np.int32(v) for v in vals)


def _grid_1d(total: int) -> tuple[int]:
    return (min((total + THREADS - 1) // THREADS, 2**31 - 1),)


def launch_naive(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("naive.cu").get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, w, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_constant(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    mod = gpu.module("constant.cu")
    if w.size > 15360:
        raise ValueError(f"{w.size} weights do not fit the 15,360-float constant buffer")
    kc = cp.ndarray((w.size,), cp.float32, mod.get_global("kc"))
    kc[...] = w.ravel()  # the course's cudaMemcpyToSymbol, part of the op
    fn = mod.get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_shared(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("shared.cu", (("TILE", TILE), ("KMAX", max(7, s.K)))).get_function("conv_forward")
    tiles = ((s.Ho + TILE - 1) // TILE) * ((s.Wo + TILE - 1) // TILE)
    for b0 in range(0, s.B, 65535):  # grid.z is at most 65,535 images per launch
        nb = min(65535, s.B - b0)
        fn((s.M, tiles, nb), (TILE, TILE),
           (x[b0 : b0 + nb], w, bias, out[b0 : b0 + nb], *_i32(nb, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_unroll_gemm(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    mod = gpu.module("unroll_gemm.cu", (("TILE", TILE),))
    unroll, matmul = mod.get_function("unroll"), mod.get_function("matmul")
    kd = s.C * s.K * s.K
    howo = s.Ho * s.Wo
    chunk = max(1, min(s.B, UNROLL_BUDGET_BYTES // (4 * kd * howo)))
    xu = cp.empty(kd * chunk * howo, dtype=cp.float32)
    kmat = w.reshape(s.M, kd)
    for b0 in range(0, s.B, chunk):
        nb = min(chunk, s.B - b0)
        n = nb * howo
        unroll(_grid_1d(n * kd), (THREADS,), (x[b0 : b0 + nb], xu, *_i32(nb, s.C, s.H, s.W, s.K, s.P)))
        matmul(((n + TILE - 1) // TILE, (s.M + TILE - 1) // TILE), (TILE, TILE),
               (kmat, xu, bias, out[b0 : b0 + nb], np.int32(s.M), np.int32(kd), np.int64(n), np.int32(howo)))
    return out


def launch_fused(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("fused.cu", (("TILE", TILE),)).get_function("conv_forward")
    n = s.B * s.Ho * s.Wo
    fn(((n + TILE - 1) // TILE, (s.M + TILE - 1) // TILE), (TILE, TILE),
       (x, w.reshape(s.M, -1), bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


STREAMS = 4
CHUNKS = 16
_device_buffers: dict[tuple, list] = {}


def _end_to_end(cp, x_host, w, bias, out_host, s: ConvShape, streams: int, chunks: int) -> Any:
    """Copy in, convolve with `tuned`, copy out, the batch cut into `chunks` pieces issued round-robin
    on `streams` streams: one chunk's copies overlap another's kernel. Device buffers are kept per
    shape; a stream reuses its buffers only after its previous chunk (stream order)."""
    bias = gpu.bias_or_zeros(cp, bias, s.M)
    size = -(-s.B // chunks)
    key = (cp.cuda.Device().id, s, streams, chunks)
    if key not in _device_buffers:
        _device_buffers[key] = [
            (cp.cuda.Stream(non_blocking=False) if streams > 1 else cp.cuda.Stream.null,
             cp.empty((size, s.C, s.H, s.W), dtype=cp.float32), cp.empty((size, s.M, s.Ho, s.Wo), dtype=cp.float32))
            for _ in range(streams)
        ]
    lanes = _device_buffers[key]
    for i, b0 in enumerate(range(0, s.B, size)):
        nb = min(size, s.B - b0)
        stream, xd, yd = lanes[i % streams]
        with stream:
            xd[:nb].set(x_host[b0 : b0 + nb], stream=stream)
            sub = ConvShape(nb, s.M, s.C, s.H, s.W, s.K, s.P)
            launch_tuned(cp, xd[:nb], w, bias, yd[:nb], sub)
            yd[:nb].get(out=out_host[b0 : b0 + nb], stream=stream, blocking=False)
    return out_host


def launch_end_to_end(cp, x_host, w, bias, out_host, s: ConvShape) -> Any:
    return _end_to_end(cp, x_host, w, bias, out_host, s, streams=1, chunks=1)


def launch_streams(cp, x_host, w, bias, out_host, s: ConvShape) -> Any:
    return _end_to_end(cp, x_host, w, bias, out_host, s, streams=STREAMS, chunks=CHUNKS)


def _peer_variant(p: peers.Peer) -> Variant:
    """A cuDNN peer (profconv/run/peers.py) as a variant: operands converted to its dtype and layout
    untimed, the timed call is conv2d alone."""
    tf32 = "TF32 on (PyTorch's default)" if p.tf32 else "TF32 off" if p.precision == "fp32" else ""
    layout = "channels-last (NHWC)" if p.layout == "NHWC" else "NCHW"
    description = f"torch.nn.functional.conv2d, {p.torch_dtype}, {layout}" + (f", {tf32}" if tf32 else "")

    def launch(cp, x, w, bias, out, s: ConvShape, p: peers.Peer = p) -> Any:
        return peers.launch(p, x, w, bias, s)

    def prepare(cp, a, w, bias, s: ConvShape, p: peers.Peer = p):
        x, wt, bt = peers.operands(cp, p, a, w, bias)
        return x, wt, bt, None

    return Variant(p.name, description, "vendor library reference", p.precision, peers.TOLERANCE[p.precision],
                   "cudnn", None, launch, arithmetic=peers.ARITHMETIC[p.precision], operands=prepare)


def cudnn_unavailable() -> str | None:
    """Why cuDNN cannot be the reference here, or None when it can."""
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "PyTorch has no CUDA"
    torch.backends.cudnn.allow_tf32 = False  # fp32 means fp32: TF32 would change the numbers
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    return None


def _resolve(spec: str) -> Any:
    """`package.module:attr.attr` -> the object (imported on first use, so torch loads only for cuDNN)."""
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _lazy(spec: str) -> Any:
    found: list[Any] = []

    def call(*args: Any) -> Any:
        if not found:
            found.append(_resolve(spec))
        return found[0](*args)

    return call


def builtin_variant(d: manifest.Declaration) -> Variant:
    """A built-in declaration as a Variant: device kernels through the user-kernel machinery, python ones lazily."""
    launch: Launch | None = None
    params = _lazy(d.params) if d.params else None
    if d.contract == "device":
        from profconv.run.user.contracts import UserKernel

        kernel = UserKernel(d)
        launch = kernel.launch
    elif d.module and d.function:
        launch = _lazy(f"{d.module}:{d.function}")
    arithmetic = d.arithmetic or ("fp16" if d.precision == "fp16" else "fp32")
    source = d.source.name if d.source is not None else None
    return Variant(name=d.name, description=d.description, technique=d.technique, precision=d.precision,
                   tolerance=d.tolerance, device=d.device, source=source, launch=launch, params=params,
                   host_io=d.host_io, baseline=d.baseline, arithmetic=arithmetic,
                   provenance={"declaration": f"kernels/{d.where.name}", "contract": d.contract,
                               "sources": [n for n in (source, *d.sources) if n]})


@cache
def _variants() -> tuple[Variant, ...]:
    """Our kernels from their declarations, then the cuDNN peers (profconv/run/peers.py: one table row each)."""
    return (*(builtin_variant(d) for d in builtin_declarations()), *(_peer_variant(p) for p in peers.PEERS))


VARIANTS: list[Variant] = list(_variants())


def get_variants(names: list[str] | None) -> list[Variant]:
    """The named built-in variants in ladder order of the names; all of them for None/[]; none for ["none"]
    (`--variant none`: only the user's kernels, checked against the float64 reference)."""
    from profconv.errors import InputError, did_you_mean

    by_name = {v.name: v for v in VARIANTS}
    if not names:
        return list(VARIANTS)
    if names == [NONE]:
        return []
    unknown = [n for n in names if n not in by_name]
    if unknown:
        hint = did_you_mean(unknown[0], [*by_name, NONE]) if len(unknown) == 1 else ""
        raise InputError(f"unknown variant(s) {', '.join(unknown)}{hint}: choose from {', '.join(by_name)}")
    return [by_name[n] for n in names]
