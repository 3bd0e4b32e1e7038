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

from profconv.run import gpu, sweep
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
    host_io: bool = False  # x and out are pinned host arrays: the op includes the copies in and out
    baseline: str | None = None  # the variant it is measured against, when not cuDNN of its precision
    arithmetic: str = "fp32"  # fp32 | fp16 | tensor-fp16: which datasheet peak bounds it

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


_zeros: dict[tuple[int, int, str], Any] = {}


def bias_or_zeros(cp, bias, m: int, dtype=None):
    """A layer without bias still hands our kernels a pointer: a zero vector, allocated once."""
    if bias is not None:
        return bias
    dtype = dtype or cp.float32
    key = (cp.cuda.Device().id, m, cp.dtype(dtype).char)
    if key not in _zeros:
        _zeros[key] = cp.zeros(m, dtype=dtype)
    return _zeros[key]


def _i32(*vals: int):
    return tuple(np.int32(v) for v in vals)


def _grid_1d(total: int) -> tuple[int]:
    return (min((total + THREADS - 1) // THREADS, 2**31 - 1),)


def launch_naive(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("naive.cu").get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, w, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_constant(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = bias_or_zeros(cp, bias, s.M)
    mod = gpu.module("constant.cu")
    if w.size > 15360:
        raise ValueError(f"{w.size} weights do not fit the 15,360-float constant buffer")
    kc = cp.ndarray((w.size,), cp.float32, mod.get_global("kc"))
    kc[...] = w.ravel()  # the course's cudaMemcpyToSymbol, part of the op
    fn = mod.get_function("conv_forward")
    fn(_grid_1d(out.size), (THREADS,), (x, bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_shared(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("shared.cu", (("TILE", TILE), ("KMAX", max(7, s.K)))).get_function("conv_forward")
    tiles = ((s.Ho + TILE - 1) // TILE) * ((s.Wo + TILE - 1) // TILE)
    for b0 in range(0, s.B, 65535):  # grid.z is at most 65,535 images per launch
        nb = min(65535, s.B - b0)
        fn((s.M, tiles, nb), (TILE, TILE),
           (x[b0 : b0 + nb], w, bias, out[b0 : b0 + nb], *_i32(nb, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


def launch_unroll_gemm(cp, x, w, bias, out, s: ConvShape) -> Any:
    bias = bias_or_zeros(cp, bias, s.M)
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
    bias = bias_or_zeros(cp, bias, s.M)
    fn = gpu.module("fused.cu", (("TILE", TILE),)).get_function("conv_forward")
    n = s.B * s.Ho * s.Wo
    fn(((n + TILE - 1) // TILE, (s.M + TILE - 1) // TILE), (TILE, TILE),
       (x, w.reshape(s.M, -1), bias, out, *_i32(s.B, s.M, s.C, s.H, s.W, s.K, s.P)))
    return out


# --- tuned, fp16, tensorcore: swept per layer shape (profconv/run/sweep.py) -------------------------

TUNED_MAX_UNROLLED_FMAS = 16384  # past this many FMAs per thread the channel loop stays rolled
PREFETCH_MAX = 16  # pixels a thread of tuned_smem.cu or fp16.cu holds in registers for the next group


def _round_up(n: int, k: int) -> int:
    return -(-n // k) * k


def constant_candidates(s: ConvShape) -> list[dict]:
    """Constant-filter design (C = 1): outputs per thread (TW), channels per launch (MB), images per
    block; IMGS gives a block about 128-512 threads (small maps need several images to fill it)."""
    tws = [tw for tw in (2, 4, 8) if s.Wo % tw == 0 and tw <= s.Wo // 2] or [1, 2]
    # 4 or 8 channels per launch, or a divisor of M up to 32 (fewer launches, fewer re-reads of the input)
    # while the group's filters stay within 4 KB of constant cache
    wide = [d for d in range(9, 33) if s.M % d == 0 and d * s.C * s.K * s.K * 4 <= 4096][-2:]
    mbs = sorted({min(s.M, 4), min(s.M, 8), *wide})
    out: list[dict] = []
    for tw in tws:
        npos = s.Ho * ((s.Wo + tw - 1) // tw)
        for mb in mbs:
            for target in (128, 256, 512):
                imgs = max(1, min(16, target // npos))
                smem = 4 * imgs * s.C * (s.H + 2 * s.P) * (s.W + 2 * s.P + tw)
                threads = min(1024, -(-imgs * npos // 32) * 32)
                cand = {"design": "constant-filters", "TW": tw, "MB": mb, "IMGS": imgs, "THREADS": threads, "smem": smem}
                if smem <= sweep.SMEM_LIMIT and cand not in out:
                    out.append(cand)
    return out


def _constant_group(cp, p: dict, m0: int, s: ConvShape) -> Callable[[Any, Any, Any, Any], None]:
    """One launch for output channels m0 .. m0+mb-1, its filters copied into the module's constant
    buffer first (the course's cudaMemcpyToSymbol, as one device-to-device copy)."""
    mb = min(p["MB"], s.M - m0)
    unroll = s.C if mb * s.C * s.K * s.K * p["TW"] <= TUNED_MAX_UNROLLED_FMAS else 1
    defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "M0": m0, "MB": mb, "TW": p["TW"],
               "IMGS": p["IMGS"], "THREADS": p["THREADS"], "CUNROLL": unroll}
    fn = sweep.kernel(cp, "tuned.cu", "conv_tuned", defines, p["smem"])
    wc = gpu.module("tuned.cu", tuple(defines.items())).get_global("wc").ptr
    nbytes, offset = 4 * mb * s.C * s.K * s.K, 4 * m0 * s.C * s.K * s.K
    grid, block, smem, batch = ((s.B + p["IMGS"] - 1) // p["IMGS"],), (p["THREADS"],), p["smem"], np.int32(s.B)
    rt = cp.cuda.runtime

    def op(x, w, bias, out) -> None:
        rt.memcpyAsync(wc, w.data.ptr + offset, nbytes, rt.memcpyDeviceToDevice, cp.cuda.get_current_stream().ptr)
        fn(grid, block, (x, bias, out, batch), shared_mem=smem)

    return op


def _constant_build(cp, p: dict, s: ConvShape):
    groups = [_constant_group(cp, p, m0, s) for m0 in range(0, s.M, p["MB"])]

    def op(x, w, bias, out) -> None:
        for group in groups:
            group(x, w, bias, out)

    return op


def _constant_trial(cp, p: dict, s: ConvShape):
    return _constant_group(cp, p, 0, s), float(min(p["MB"], s.M))


def smem_design_sizes(s: ConvShape, tw: int, elem: int) -> tuple[int, int]:
    """(row stride, floats or halves per padded image) exactly as tuned_smem.cu / fp16.cu lay them out."""
    wp, hp = s.W + 2 * s.P, s.H + 2 * s.P
    wg = -(-s.Wo // tw)
    if elem == 4:
        vec = 4 if tw % 4 == 0 else 2 if tw % 2 == 0 else 1
        reach = (wg - 1) * tw + _round_up(tw + s.K - 1, vec)
        sw = _round_up(max(reach, wp), 4)
    else:
        reach = (wg - 1) * tw + 2 * ((tw + s.K) // 2 + 1)
        sw = _round_up(max(reach, wp), 8)
    return sw, s.C * hp * sw


def shared_candidates(s: ConvShape, tws: tuple[int, ...], elem: int, ths: tuple[int, ...] = (1,),
                      strict: bool = True) -> list[dict]:
    """Shared-filter design: TW outputs x TH rows x MB channels per thread, NG channel groups and
    IMGS images per block (all groups in one block when they fit 1,024 threads: the images are
    then staged once for every output channel). Configurations that would hold more than
    PREFETCH_MAX pixels per thread or spill registers are left out, unless nothing else fits
    (large images): then they are kept, slower but correct."""
    out: list[dict] = []
    for tw in tws:
        if (elem == 2 and tw % 2) or tw > max(2, s.Wo):
            continue
        for th in ths:
            if th > s.Ho:
                continue
            npos = -(-s.Ho // th) * -(-s.Wo // tw)
            for mb in (4, 8):
                if mb == 8 and s.M <= 4:
                    continue
                groups = -(-s.M // mb)
                for target in (256, 512):
                    ng = max(1, min(groups, 1024 // _round_up(npos, 32)))
                    imgs = max(1, min(16, target // (ng * npos)))
                    while imgs > 1 and ng * _round_up(imgs * npos, 32) > 1024:
                        imgs -= 1
                    def prefetch(imgs: int) -> int:  # pixels per thread the kernel keeps for the next group
                        return -(-imgs * s.C * s.H * s.W // (ng * _round_up(imgs * npos, 32)))

                    while imgs > 1 and prefetch(imgs) > PREFETCH_MAX:
                        imgs -= 1
                    pt = _round_up(imgs * npos, 32)
                    if ng * pt > 1024 or (strict and prefetch(imgs) > PREFETCH_MAX):
                        continue
                    # tuned_smem.cu's live registers: accumulators, input rows, one tap's weights, prefetched
                    # pixels, addresses (fp16.cu folds its sums differently: the sweep judges it unfiltered)
                    rowv = _round_up(tw + s.K - 1, 4 if tw % 4 == 0 else 2 if tw % 2 == 0 else 1)
                    live = th * mb * tw + th * rowv + _round_up(mb, 4) + prefetch(imgs) + 24
                    if strict and elem == 4 and live > min(255, 65536 // (ng * pt) // 8 * 8):
                        continue  # would spill: the block's register budget cannot hold it
                    _, simg = smem_design_sizes(s, tw, elem)
                    weights = ng * s.C * s.K * s.K * _round_up(mb, 4) * 4  # fp32 floats, or fp16 (w, w) half2 pairs
                    smem = weights + imgs * simg * elem
                    cand = {"design": "shared-filters", "TW": tw, "MB": mb, "NG": ng, "IMGS": imgs, "PT": pt,
                            "THREADS": ng * pt, "smem": smem}
                    if elem == 4:
                        cand["TH"] = th
                    if smem <= sweep.SMEM_LIMIT and cand not in out:
                        out.append(cand)
    return out if out or not strict else shared_candidates(s, tws, elem, ths, strict=False)


def _shared_build(filename: str, name: str):
    def build(cp, p: dict, s: ConvShape):
        defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "TW": p["TW"], "MB": p["MB"],
                   "NG": p["NG"], "IMGS": p["IMGS"], "THREADS": p["THREADS"], "PT": p["PT"]}
        defines.update({k: p[k] for k in ("TH", "POOL", "ACT") if k in p})
        fn = sweep.kernel(cp, filename, name, defines, p["smem"])
        groups, channel_blocks = -(-s.B // p["IMGS"]), -(-s.M // (p["NG"] * p["MB"]))
        sms, _ = sweep.device_limits(cp)  # persistent: one wave of blocks, each looping over image groups
        slots = sms * sweep.resident_blocks(cp, fn, p["THREADS"], p["smem"])
        groups = min(groups, max(1, slots // channel_blocks))
        grid = (groups, channel_blocks)
        block, smem, batch = (p["THREADS"],), p["smem"], np.int32(s.B)

        def op(x, w, bias, out) -> None:
            fn(grid, block, (x, w, bias, out, batch), shared_mem=smem)

        return op

    return build


def tuned_candidates(s: ConvShape) -> list[dict]:
    """Filters in constant memory become FFMA operands, but only a C = 1 filter set fits the constant
    cache; deeper layers keep them in shared memory. For C = 1 both designs compete."""
    shared = shared_candidates(s, (2, 4), elem=4, ths=(1, 2))
    return constant_candidates(s) + shared if s.C == 1 else shared


def _tuned_build(cp, p: dict, s: ConvShape):
    if p["design"] == "constant-filters":
        return _constant_build(cp, p, s)
    return _shared_build("tuned_smem.cu", "conv_tuned_smem")(cp, p, s)


def _tuned_trial(cp, p: dict, s: ConvShape):
    if p["design"] == "constant-filters":
        return _constant_trial(cp, p, s)
    return _tuned_build(cp, p, s), 1.0


TUNED = sweep.Swept(tuned_candidates, _tuned_build, _tuned_trial)
FP16 = sweep.Swept(lambda s: shared_candidates(s, (2, 4, 8), elem=2), _shared_build("fp16.cu", "conv_fp16"))


def tensorcore_sizes(s: ConvShape, rt: int, warps: int, imgs: int, unfold: int = 0) -> dict:
    """Shared memory and work split exactly as tensorcore.cu computes them."""
    staged = s.C * s.K if unfold else s.C
    cp_ = _round_up(staged, 8)
    taps = s.K if unfold else s.K * s.K
    ksteps = -(-(taps * cp_ // 2) // 8)
    nt = -(-s.M // 8)
    npw = 16 * rt
    smem = (ksteps * nt * 32 * 2 * 4 + imgs * (s.H + 2 * s.P) * (s.W + 2 * s.P) * cp_ * 2
            + warps * nt * 8 * (npw + 8) * 2)
    return {"CP": cp_, "KSTEPS": ksteps, "tiles_per_image": -(-(s.Ho * s.Wo) // npw), "smem": smem}


def tensorcore_candidates(s: ConvShape) -> list[dict]:
    """16 or 32 positions per warp (RT), 4 or 8 warps, enough images per block for two tiles per warp;
    staged as is or unfolded (column shifts as channels) where that needs fewer reduction steps."""
    out: list[dict] = []
    plain_steps = tensorcore_sizes(s, 1, 4, 1)["KSTEPS"]
    for unfold in (0, 1):
        if unfold and tensorcore_sizes(s, 1, 4, 1, 1)["KSTEPS"] >= plain_steps:
            continue
        for rt in (1, 2):
            for warps in (4, 8):
                tpi = tensorcore_sizes(s, rt, warps, 1, unfold)["tiles_per_image"]
                imgs = max(1, min(s.B, -(-2 * warps // tpi)))
                while imgs > 1 and tensorcore_sizes(s, rt, warps, imgs, unfold)["smem"] > sweep.SMEM_LIMIT:
                    imgs -= 1
                sizes = tensorcore_sizes(s, rt, warps, imgs, unfold)
                if sizes["smem"] <= sweep.SMEM_LIMIT:
                    out.append({"RT": rt, "WARPS": warps, "IMGS": imgs, "UNFOLD": unfold, "CP": sizes["CP"],
                                "smem": sizes["smem"]})
    return out


def _tensorcore_build(cp, p: dict, s: ConvShape):
    defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "CP": p["CP"], "RT": p["RT"],
               "WARPS": p["WARPS"], "IMGS": p["IMGS"], "UNFOLD": p["UNFOLD"]}
    fn = sweep.kernel(cp, "tensorcore.cu", "conv_tensorcore", defines, p["smem"])
    threads, smem = 32 * p["WARPS"], p["smem"]
    sms, _ = sweep.device_limits(cp)
    groups = -(-s.B // p["IMGS"])
    grid = (min(groups, sms * sweep.resident_blocks(cp, fn, threads, smem)),)  # persistent: blocks loop over image groups
    batch = np.int32(s.B)

    def op(x, w, bias, out) -> None:
        fn(grid, (threads,), (x, w, bias, out, batch), shared_mem=smem)

    return op


TENSORCORE = sweep.Swept(tensorcore_candidates, _tensorcore_build)

ACTIVATIONS = {"none": 0, "tanh": 1, "relu": 2}  # the ACT codes of tuned_smem.cu's fused epilogue
_fused_layers: dict[tuple[int, str], sweep.Swept] = {}


def fused_layer(pool: int, activation: str) -> sweep.Swept:
    """conv + bias + activation + max-pool in one kernel (tuned_smem.cu's fused epilogue): each
    thread computes whole pooling windows (TH = pool rows, TW a multiple of pool), swept like tuned.
    Its `out` is the pooled map, B x M x (Ho // pool) x (Wo // pool)."""
    key = (pool, activation)
    if key not in _fused_layers:
        extra = {"POOL": pool, "ACT": ACTIVATIONS[activation]}

        def candidates(s: ConvShape) -> list[dict]:
            found = [c for c in shared_candidates(s, (2, 4), elem=4, ths=(pool,)) if c["TW"] % pool == 0]
            return [dict(c, **extra) for c in found]

        _fused_layers[key] = sweep.Swept(candidates, _shared_build("tuned_smem.cu", "conv_tuned_smem"))
    return _fused_layers[key]


def launch_tuned(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TUNED.launch(cp, x, w, bias_or_zeros(cp, bias, s.M), out, s)


def launch_fp16(cp, x, w, bias, out, s: ConvShape) -> Any:
    return FP16.launch(cp, x, w, bias_or_zeros(cp, bias, s.M, cp.float16), out, s)


def launch_tensorcore(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TENSORCORE.launch(cp, x, w, bias_or_zeros(cp, bias, s.M, cp.float16), out, s)


STREAMS = 4
CHUNKS = 16
_device_buffers: dict[tuple, list] = {}


def _end_to_end(cp, x_host, w, bias, out_host, s: ConvShape, streams: int, chunks: int) -> Any:
    """Copy in, convolve with `tuned`, copy out, the batch cut into `chunks` pieces issued round-robin
    on `streams` streams: one chunk's copies overlap another's kernel. Device buffers are kept per
    shape; a stream reuses its buffers only after its previous chunk (stream order)."""
    bias = bias_or_zeros(cp, bias, s.M)
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
            TUNED.launch(cp, xd[:nb], w, bias, yd[:nb], sub)
            yd[:nb].get(out=out_host[b0 : b0 + nb], stream=stream, blocking=False)
    return out_host


def launch_end_to_end(cp, x_host, w, bias, out_host, s: ConvShape) -> Any:
    return _end_to_end(cp, x_host, w, bias, out_host, s, streams=1, chunks=1)


def launch_streams(cp, x_host, w, bias, out_host, s: ConvShape) -> Any:
    return _end_to_end(cp, x_host, w, bias, out_host, s, streams=STREAMS, chunks=CHUNKS)


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
    Variant("cudnn", "torch.nn.functional.conv2d, TF32 off", "vendor library reference", "fp32", 1e-5,
            "cudnn", None, launch_cudnn),
    Variant("cudnn-fp16", "torch.nn.functional.conv2d on half tensors", "vendor library reference", "fp16", 5e-3,
            "cudnn", None, launch_cudnn, arithmetic="tensor-fp16"),
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
