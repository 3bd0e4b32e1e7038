"""The variant ladder: each convolution implementation as a small registered object.

A GPU variant is one `kernels/<file>.cu` plus one `Variant(...)` line in VARIANTS with the
function that launches it. Every launcher has the same signature:
    launch(cp, x, w, bias, out, shape) -> array   (B x M x Ho x Wo float32: `out`, written in
    place, or a library's own result); x and w are C-contiguous float32, bias is a float32
    vector or None for a layer without bias (our kernels then add a cached zero vector; cuDNN is
    called without bias, so it does not pay for a bias pass the layer does not have).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from profconv.run import gpu
from profconv.run.models import ConvShape

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


_zeros: dict[tuple[int, int], Any] = {}


def _bias_or_zeros(cp, bias, m: int):
    """A layer without bias still hands our kernels a pointer: a zero vector, allocated once."""
    if bias is not None:
        return bias
    key = (cp.cuda.Device().id, m)
    if key not in _zeros:
        _zeros[key] = cp.zeros(m, dtype=cp.float32)
    return _zeros[key]


def _i32(*vals: int):
    return tuple(np.int32(v) for v in vals)


def _grid_1d(total: int) -> tuple[int]:
    return (min((total + THREADS - 1) // THREADS, 2**31 - 1),)


def launch_naive(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = _bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("naive.cu").get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, w, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_constant(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = _bias_or_zeros(cp, bias, s.M)
    mod = gpu.module("constant.cu")
    if w.size > 15360:
        raise ValueError(f"{w.size} weights do not fit the 15,360-float constant buffer")
    kc = cp.ndarray((w.size,), cp.float32, mod.get_global("kc"))
    kc[...] = w.ravel()  # the course's cudaMemcpyToSymbol, part of the op
    fn = mod.get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_shared(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = _bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("shared.cu", (("TILE", TILE), ("KMAX", max(7, s.K)))).get_function("conv_forward")
    tiles = ((s.Ho + TILE - 1) // TILE) * ((s.Wo + TILE - 1) // TILE)
    for b0 in range(0, s.B, 65535):  # grid.z is at most 65,535 images per launch
        nb = min(65535, s.B - b0)
        fn((s.M, tiles, nb), (TILE, TILE),
           (x[b0 : b0 + nb], w, bias, out[b0 : b0 + nb], *_i32(nb, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_unroll_gemm(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = _bias_or_zeros(cp, bias, s.M)
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
    bias = _bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("fused.cu", (("TILE", TILE),)).get_function("conv_forward")
    n = s.B * s.Ho * s.Wo
    fn(((n + TILE - 1) // TILE, (s.M + TILE - 1) // TILE), (TILE, TILE),
       (x, w.reshape(s.M, -1), bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


TUNED_SMEM_LIMIT = 200 * 1024  # Hopper allows 227 KB of dynamic shared memory per block (opt-in above 48 KB)
TUNED_MAX_UNROLLED_FMAS = 16384  # past this many FMAs per thread the channel loop stays rolled
_tuned_choice: dict[tuple, dict] = {}


def tuned_candidates(s: ConvShape) -> list[dict]:
    """The parameter sweep: outputs per thread (TW), channels per launch (MB), images per block.

    IMGS is chosen so a block has about 128 or 256 threads: small images (CIFAR's 8x8 maps)
    need several per block to keep the SMs busy.
    """
    tws = [tw for tw in (2, 4, 8) if s.Wo % tw == 0 and tw <= s.Wo // 2] or [1, 2]
    mbs = sorted({min(s.M, 4), min(s.M, 8)})
    out = []
    for tw in tws:
        npos = s.Ho * ((s.Wo + tw - 1) // tw)
        for mb in mbs:
            for target in (128, 256, 512):
                imgs = max(1, min(16, target // npos))
                smem = 4 * imgs * s.C * (s.H + 2 * s.P) * (s.W + 2 * s.P + tw)
                threads = min(1024, -(-imgs * npos // 32) * 32)
                cand = {"TW": tw, "MB": mb, "IMGS": imgs, "THREADS": threads, "smem": smem}
                if smem <= TUNED_SMEM_LIMIT and cand not in out:
                    out.append(cand)
    return out


def _tuned_group(cp, p: dict, m0: int, x, w, bias, out, s: ConvShape) -> None:
    """One launch: output channels m0 .. m0+mb-1 (the last group may be narrower)."""
    mb = min(p["MB"], s.M - m0)
    unroll = s.C if mb * s.C * s.K * s.K * p["TW"] <= TUNED_MAX_UNROLLED_FMAS else 1
    defines = (("M", s.M), ("C", s.C), ("H", s.H), ("W", s.W), ("K", s.K), ("P", s.P), ("M0", m0),
               ("MB", mb), ("TW", p["TW"]), ("IMGS", p["IMGS"]), ("THREADS", p["THREADS"]), ("CUNROLL", unroll))
    mod = gpu.module("tuned.cu", defines)
    wc = cp.ndarray((mb * s.C * s.K * s.K,), cp.float32, mod.get_global("wc"))
    wc[...] = w[m0 : m0 + mb].ravel()
    fn = mod.get_function("conv_tuned")
    if p["smem"] > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = p["smem"]
    fn(((s.B + p["IMGS"] - 1) // p["IMGS"],), (p["THREADS"],), (x, bias, out, np.int32(s.B)), shared_mem=p["smem"])


def _tuned_call(cp, p: dict, x, w, bias, out, s: ConvShape) -> None:
    for m0 in range(0, s.M, p["MB"]):
        _tuned_group(cp, p, m0, x, w, bias, out, s)


def _sweep(cp, x, w, bias, out, s: ConvShape) -> dict:
    """Time each candidate's first channel group on the real input (events, best of 3 after a
    warm-up) per channel computed; the fastest is then compiled for every group."""
    best: dict | None = None
    best_t = float("inf")
    candidates = tuned_candidates(s)
    for p in candidates:
        def first_group(p: dict = p) -> None:
            _tuned_group(cp, p, 0, x, w, bias, out, s)

        timing = gpu.time_gpu(cp, first_group, repeat=3, warmup=1)
        per_channel = timing.min / min(p["MB"], s.M)
        if per_channel < best_t:
            best, best_t = p, per_channel
    if best is None:
        raise ValueError(f"no tuned configuration fits {s.text()}")
    return dict(best, swept=len(candidates))


def tuned_params(s: ConvShape) -> dict:
    return _tuned_choice.get((s.B, s.M, s.C, s.H, s.W, s.K, s.P), {})


def launch_tuned(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = _bias_or_zeros(cp, bias, s.M)
    key = (s.B, s.M, s.C, s.H, s.W, s.K, s.P)
    if key not in _tuned_choice:
        _tuned_choice[key] = _sweep(cp, x, w, bias, out, s)
    _tuned_call(cp, _tuned_choice[key], x, w, bias, out, s)
    return out


def launch_cudnn(cp, x, w, bias, out, s: ConvShape) -> Any:
    import torch

    y = torch.nn.functional.conv2d(
        torch.as_tensor(x, device="cuda"), torch.as_tensor(w, device="cuda"),
        None if bias is None else torch.as_tensor(bias, device="cuda"), padding=s.P,
    )
    return cp.asarray(y)  # zero-copy view of torch's output: no extra pass over memory


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
    Variant("tuned", "per-layer compile-time dims, register tiles, constant filters, vector stores, swept",
            "specialisation + thread coarsening", "fp32", 1e-5, "gpu", "tuned.cu", launch_tuned, tuned_params),
    Variant("cudnn", "torch.nn.functional.conv2d, TF32 off", "vendor library reference", "fp32", 1e-5,
            "cudnn", None, launch_cudnn),
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
