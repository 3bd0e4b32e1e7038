"""The variant ladder: each convolution implementation as a small registered object.

A GPU variant is one `kernels/<file>.cu` plus one `Variant(...)` line in VARIANTS with the
function that launches it. Every launcher has the same signature:
    launch(cp, x, w, bias, out, shape) -> array   (B x M x Ho x Wo: `out`, written in place, or a
    library's own result); x, w, bias and out are C-contiguous in the variant's dtype (float32,
    or float16 for fp16 variants), bias is None for a layer without bias (our kernels then add a cached zero vector; cuDNN is
    called without bias, so it does not pay for a bias pass the layer does not have).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from profconv.run import gpu, peers
from profconv.run.models import ConvShape
from profconv.run.tuned import FP16, TENSORCORE, TUNED, launch_fp16, launch_tensorcore, launch_tuned

Launch = Callable[[Any, Any, Any, Any, Any, ConvShape], Any]

THREADS = 256
TILE = 16
UNROLL_BUDGET_BYTES = 512 * 1024 * 1024  # largest im2col buffer unroll-gemm allocates at once


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    technique: str  # the optimisation it demonstrates
    precision: str  # fp32 | fp16 | tf32
    tolerance: float  # largest relative L2 error accepted against the float64 reference
    device: str  # cpu | gpu | cudnn
    source: str | None = None  # kernels/<source>
    launch: Launch | None = None
    params: Callable[[ConvShape], dict] | None = None  # what it chose for a shape (recorded in the run)
    host_io: bool = False  # x and out are pinned host arrays: the op includes the copies in and out
    baseline: str | None = None  # the variant it is measured against, when not cuDNN of its precision
    arithmetic: str = "fp32"  # fp32 | fp16 | tensor-fp16: which datasheet peak bounds it
    # (cp, x, w, bias, shape) -> (x, w, bias, out) in the form `launch` takes, converted untimed
    # (the cuDNN peers: torch tensors in their dtype and layout); None: CuPy arrays in `dtype`
    operands: Callable[[Any, Any, Any, Any, ConvShape], tuple[Any, Any, Any, Any]] | None = None

    @property
    def dtype(self) -> str:
        """What inputs, filters, bias and output are stored as."""
        return "float16" if self.precision == "fp16" else "float64" if self.precision == "fp64" else "float32"

    @property
    def reference(self) -> str | None:
        """The variant this one is measured against: cuDNN of the same precision unless said otherwise."""
        if self.baseline is not None or self.device == "cudnn" or self.host_io:
            return self.baseline
        return {"fp32": "cudnn", "fp16": "cudnn-fp16"}.get(self.precision)


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


VARIANTS: list[Variant] = [
    Variant("cpu", "NumPy im2col + matmul, float64 accumulation", "CPU reference", "fp64", 1e-6, "cpu"),
    Variant("naive", "one thread per output, global memory only", "the first GPU version", "fp32", 1e-5,
            "gpu", "naive.cu", launch_naive),
    Variant("shared", "input tile staged in shared memory per channel", "shared-memory tiling", "fp32", 1e-5,
            "gpu", "shared.cu", launch_shared),
    Variant("constant", "filters in constant memory", "constant memory", "fp32", 1e-5,
            "gpu", "constant.cu", launch_constant),
    Variant("unroll-gemm", "im2col kernel + shared-memory tiled matmul", "unroll + matrix multiply", "fp32",
            1e-5, "gpu", "unroll_gemm.cu", launch_unroll_gemm),
    Variant("fused", "im2col gathered inside the tiled matmul", "kernel fusion (implicit GEMM)", "fp32", 1e-5,
            "gpu", "fused.cu", launch_fused),
    Variant("tuned", "per-layer compile-time dims, register tiles, constant or shared filters, vector I/O, swept",
            "specialisation + thread coarsening", "fp32", 1e-5, "gpu", "tuned.cu", launch_tuned, TUNED.params),
    Variant("fp16", "the tuned shared-filter design in half2 arithmetic, fp32 sums across channels",
            "half precision (half2)", "fp16", 1e-2, "gpu", "fp16.cu", launch_fp16, FP16.params, arithmetic="fp16"),
    Variant("tensorcore", "implicit GEMM with mma.sync m16n8k16, fp16 in, fp32 accumulate, NHWC in shared memory",
            "Tensor Cores", "fp16", 5e-3, "gpu", "tensorcore.cu", launch_tensorcore, TENSORCORE.params,
            arithmetic="tensor-fp16"),
    Variant("e2e", "tuned with its host-to-device and device-to-host copies, one stream", "end to end (copies included)",
            "fp32", 1e-5, "gpu", "tuned.cu", launch_end_to_end, TUNED.params, host_io=True),
    Variant("streams", f"e2e with the batch in {CHUNKS} chunks over {STREAMS} streams: copies overlap kernels",
            "multiple streams", "fp32", 1e-5, "gpu", "tuned.cu", launch_streams, TUNED.params, host_io=True,
            baseline="e2e"),
    *[_peer_variant(p) for p in peers.PEERS],
]


def get_variants(names: list[str] | None) -> list[Variant]:
    from profconv.errors import InputError

    by_name = {v.name: v for v in VARIANTS}
    if not names:
        return list(VARIANTS)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise InputError(f"unknown variant(s) {', '.join(unknown)}: choose from {', '.join(by_name)}")
    return [by_name[n] for n in names]
