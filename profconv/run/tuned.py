"""The autotuned kernels at the top of the ladder: tuned (fp32), fp16, tensorcore, and the fused layer.

Each is a `sweep.Swept`: a search space per layer shape (`*_candidates`, pure functions that mirror
the kernels' shared-memory layouts and register budgets) and a builder that compiles one candidate
into a ready launch plan. kernels/tuned.cu (constant filters, C = 1), kernels/tuned_smem.cu (shared
filters, persistent blocks; its POOL/ACT epilogue is the fused layer), kernels/fp16.cu (half2) and
kernels/tensorcore.cu (mma.sync implicit GEMM).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from profconv.run import gpu, sweep
from profconv.run.models import ConvShape

TUNED_MAX_UNROLLED_FMAS = 16384  # past this many FMAs per thread the channel loop stays rolled
PREFETCH_MAX = 16  # pixels a thread of tuned_smem.cu or fp16.cu holds in registers for the next group


def _round_up(n: int, k: int) -> int:
    return -(-n // k) * k


def constant_candidates(s: ConvShape) -> list[dict]:
    """Constant-filter design (C = 1): outputs per thread (TW), channels per launch (MB), images per
    block; IMGS gives a block about 128-512 threads (small maps need several images to fill it); one
    block per image group, or persistent blocks that prefetch the next group (PERSIST)."""
    # 4 outputs per thread also where the row is not a multiple of 4 (the last group stores what exists):
    # each constant weight then feeds 4 FFMAs (Fall 2018/2019 conv1, 66 wide, had only TW = 2 at 60% FFMA)
    tws = [tw for tw in (2, 4, 8) if (s.Wo % tw == 0 or tw == 4) and tw <= s.Wo // 2] or [1, 2]
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
                for persist in (0, 1) if threads >= 512 else (0,):  # a big block fills an SM: hide its loads
                    cand = {"design": "constant-filters", "TW": tw, "MB": mb, "IMGS": imgs, "THREADS": threads,
                            "PERSIST": persist, "smem": smem}
                    if smem <= sweep.SMEM_LIMIT and cand not in out:
                        out.append(cand)
    return out


def _constant_group(cp, p: dict, m0: int, s: ConvShape) -> Callable[[Any, Any, Any, Any], None]:
    """One launch for output channels m0 .. m0+mb-1, its filters copied into the module's constant
    buffer first (the course's cudaMemcpyToSymbol, as one device-to-device copy)."""
    mb = min(p["MB"], s.M - m0)
    unroll = s.C if mb * s.C * s.K * s.K * p["TW"] <= TUNED_MAX_UNROLLED_FMAS else 1
    defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "M0": m0, "MB": mb, "TW": p["TW"],
               "IMGS": p["IMGS"], "THREADS": p["THREADS"], "CUNROLL": unroll, "PERSIST": p.get("PERSIST", 0)}
    fn = sweep.kernel(cp, "tuned.cu", "conv_tuned", defines, p["smem"])
    wc = gpu.module("tuned.cu", tuple(defines.items())).get_global("wc").ptr
    nbytes, offset = 4 * mb * s.C * s.K * s.K, 4 * m0 * s.C * s.K * s.K
    groups = (s.B + p["IMGS"] - 1) // p["IMGS"]
    grid = _persistent(cp, fn, p["THREADS"], p["smem"], groups) if p.get("PERSIST") else (groups,)
    block, smem, batch = (p["THREADS"],), p["smem"], np.int32(s.B)
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


TUNED = sweep.Swept(tuned_candidates, _tuned_build, _tuned_trial, name="tuned")
FP16 = sweep.Swept(lambda s: shared_candidates(s, (2, 4, 8), elem=2), _shared_build("fp16.cu", "conv_fp16"),
                   name="fp16")


def tensorcore_sizes(s: ConvShape, rt: int, warps: int, imgs: int, unfold: int = 0, runs: int = 0) -> dict:
    """Shared memory and work split exactly as tensorcore.cu computes them (staging: channels padded
    to 8 per pixel, unfolded column shifts, or RUNS: each filter row's K*C halves as one run)."""
    hp, wp = s.H + 2 * s.P, s.W + 2 * s.P
    staged = s.C * s.K if unfold else s.C
    cp_ = _round_up(staged, 8)
    if runs:
        rpr = _round_up(s.K * s.C, 8)
        ksteps = -(-(s.K * rpr // 8) // 2)
        rs = _round_up(wp * s.C, 2) + 16
        rs += (_round_up(s.Wo * s.C, 2) - rs) % 64  # as tensorcore.cu: = Wo*C mod 64
        xs = _round_up(imgs * (2 if s.C % 2 else 1) * hp * rs, 8)
    else:
        taps = s.K if unfold else s.K * s.K
        ksteps = -(-(taps * cp_ // 2) // 8)
        xs = imgs * hp * wp * cp_
    nt = -(-s.M // 8)
    npw = 16 * rt
    smem = ksteps * nt * 32 * 2 * 4 + xs * 2 + warps * nt * 8 * (npw + 8) * 2
    return {"CP": cp_, "KSTEPS": ksteps, "tiles_per_image": -(-(s.Ho * s.Wo) // npw), "smem": smem}


def _position_tiles(s: ConvShape) -> tuple[int, ...]:
    """16-position tiles per warp (RT) the Tensor Core sweeps try: each B fragment loaded from shared
    memory feeds RT MMAs, at RT x NT x 4 accumulator registers; 4 only with at most 3 channel columns."""
    few = s.Ho * s.Wo <= 256  # small maps: 16-position tiles keep every warp busy
    return (*((1,) if few else ()), 2, *((4,) if -(-s.M // 8) <= 3 else ()))


def tensorcore_candidates(s: ConvShape) -> list[dict]:
    """16 or 32 positions per warp (RT), 4 or 8 warps, enough images per block for two tiles per warp;
    staged as is, unfolded (column shifts as channels) or as row runs, whichever need the fewest
    reduction steps (within 10%)."""
    out: list[dict] = []
    layouts = {(0, 0): tensorcore_sizes(s, 1, 4, 1)["KSTEPS"], (1, 0): tensorcore_sizes(s, 1, 4, 1, 1)["KSTEPS"],
               (0, 1): tensorcore_sizes(s, 1, 4, 1, 0, 1)["KSTEPS"]}
    fewest = min(layouts.values())
    for (unfold, runs), steps in layouts.items():
        if steps > 1.1 * fewest or (unfold and steps >= layouts[(0, 0)]):
            continue
        for rt in _position_tiles(s):
            for warps in (4, 8):
                tpi = tensorcore_sizes(s, rt, warps, 1, unfold, runs)["tiles_per_image"]
                imgs = max(1, min(s.B, -(-2 * warps // tpi)))
                while imgs > 1 and tensorcore_sizes(s, rt, warps, imgs, unfold, runs)["smem"] > sweep.SMEM_LIMIT:
                    imgs -= 1
                sizes = tensorcore_sizes(s, rt, warps, imgs, unfold, runs)
                if sizes["smem"] <= sweep.SMEM_LIMIT:
                    out.append({"RT": rt, "WARPS": warps, "IMGS": imgs, "UNFOLD": unfold, "RUNS": runs,
                                "CP": sizes["CP"], "smem": sizes["smem"]})
    return out


def _tensorcore_build(cp, p: dict, s: ConvShape):
    defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "CP": p["CP"], "RT": p["RT"],
               "WARPS": p["WARPS"], "IMGS": p["IMGS"], "UNFOLD": p["UNFOLD"], "RUNS": p.get("RUNS", 0)}
    fn = sweep.kernel(cp, "tensorcore.cu", "conv_tensorcore", defines, p["smem"])
    threads, smem = 32 * p["WARPS"], p["smem"]
    sms, _ = sweep.device_limits(cp)
    groups = -(-s.B // p["IMGS"])
    grid = (min(groups, sms * sweep.resident_blocks(cp, fn, threads, smem)),)  # persistent: blocks loop over image groups
    batch = np.int32(s.B)

    def op(x, w, bias, out) -> None:
        fn(grid, (threads,), (x, w, bias, out, batch), shared_mem=smem)

    return op


TENSORCORE = sweep.Swept(tensorcore_candidates, _tensorcore_build, name="tensorcore")

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

        _fused_layers[key] = sweep.Swept(candidates, _shared_build("tuned_smem.cu", "conv_tuned_smem"),
                                         name=f"fused-layer-{pool}-{activation}")
    return _fused_layers[key]


def launch_tuned(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TUNED.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M), out, s)


def launch_fp16(cp, x, w, bias, out, s: ConvShape) -> Any:
    return FP16.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M, cp.float16), out, s)


def launch_tensorcore(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TENSORCORE.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M, cp.float16), out, s)


def tf32_sizes(s: ConvShape, red: int, rt: int, warps: int, imgs: int, async_: int = 0, split: int = 1) -> dict:
    """Reduction layout, pixel stride and shared memory exactly as tensorcore_tf32.cu computes them.
    red 0: per filter row, K*C consecutive floats of an NHWC row (pixel stride C); red 1: per tap,
    C padded to 4 channels, pixel stride 4 mod 8 (conflict-free fragment loads)."""
    hp, wp = s.H + 2 * s.P, s.W + 2 * s.P
    if red == 0:
        cs, kred = s.C, s.K * _round_up(s.K * s.C, 8)
    else:
        cs = _round_up(s.C, 4)
        cs += 4 if cs % 8 == 0 else 0
        kred = _round_up(s.K * s.K * _round_up(s.C, 4), 8)
    ksteps, nt = kred // 8, -(-s.M // 8)
    rs = wp * cs + 8
    rs += (s.Wo * cs - rs) % 32  # the kernel's RS: = Wo*CS mod 32 (a tile that wraps rows keeps its banks)
    simg = hp * rs
    smem = 4 * (ksteps * nt * 64 * (2 if split == 3 else 1) + (2 if async_ else 1) * imgs * simg + 8)
    return {"CS": cs, "KSTEPS": ksteps, "tiles_per_image": -(-(s.Ho * s.Wo) // (16 * rt)), "smem": smem}


def tf32_candidates(s: ConvShape, split: int = 1) -> list[dict]:
    """tensorcore_tf32.cu: the reduction layout with fewer steps (both when within 10%), 16-64
    positions per warp (RT), 4 or 8 warps, images per block for about 2 or 4 tiles per warp, the next
    images fetched by cp.async into a second buffer (ASYNC) or through registers."""
    steps = {red: tf32_sizes(s, red, 1, 4, 1)["KSTEPS"] for red in (0, 1)}
    fewest = min(steps.values())
    out: list[dict] = []
    reds = [red for red in (0, 1) if steps[red] <= 1.1 * fewest]
    if len(reds) == 2:  # within 10%: C a multiple of 4 takes the tap-major layout (its pixel stride avoids
        reds = [1] if s.C % 4 == 0 else [min(reds, key=lambda r: steps[r])]  # bank conflicts; won every such layer)
    for red in reds:
        for rt in _position_tiles(s):
            for warps in (4, 8):
                tpi = tf32_sizes(s, red, rt, warps, 1)["tiles_per_image"]
                for per_warp, async_ in itertools.product((2, 4), (0, 1)):  # tiles per warp between barriers
                    imgs = max(1, min(s.B, 16, -(-per_warp * warps // tpi)))
                    while imgs > 1 and tf32_sizes(s, red, rt, warps, imgs, async_, split)["smem"] > sweep.SMEM_LIMIT:
                        imgs -= 1
                    sizes = tf32_sizes(s, red, rt, warps, imgs, async_, split)
                    cand = {"RED": red, "CS": sizes["CS"], "RT": rt, "WARPS": warps, "IMGS": imgs, "ASYNC": async_,
                            "smem": sizes["smem"]}
                    if sizes["smem"] <= sweep.SMEM_LIMIT and cand not in out:
                        out.append(cand)
    return out


def _persistent(cp, fn, threads: int, smem: int, groups: int) -> tuple[int]:
    """One wave of persistent blocks (they loop over the image groups)."""
    sms, _ = sweep.device_limits(cp)
    return (max(1, min(groups, sms * sweep.resident_blocks(cp, fn, threads, smem))),)


def _tf32_build(split: int):
    def build(cp, p: dict, s: ConvShape):
        defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "SPLIT": split, "RED": p["RED"],
                   "CS": p["CS"], "RT": p["RT"], "WARPS": p["WARPS"], "IMGS": p["IMGS"], "ASYNC": p.get("ASYNC", 0)}
        fn = sweep.kernel(cp, "tensorcore_tf32.cu", "conv_tensorcore_tf32", defines, p["smem"])
        threads, smem = 32 * p["WARPS"], p["smem"]
        grid, batch = _persistent(cp, fn, threads, smem, -(-s.B // p["IMGS"])), np.int32(s.B)

        def op(x, w, bias, out) -> None:
            fn(grid, (threads,), (x, w, bias, out, batch), shared_mem=smem)

        return op

    return build


TENSORCORE_TF32 = sweep.Swept(tf32_candidates, _tf32_build(1), name="tensorcore-tf32")
TENSORCORE_3XTF32 = sweep.Swept(functools.partial(tf32_candidates, split=3), _tf32_build(3), name="tensorcore-3xtf32")


def wmma_smem(s: ConvShape, warps: int, imgs: int) -> int:
    """Shared memory of tf32_wmma.cu: the filter matrix, the staged images, one unrolled tile per warp."""
    hp, wp = s.H + 2 * s.P, s.W + 2 * s.P
    rpr = _round_up(s.K * s.C, 8)
    nf = -(-s.M // 16)
    xs = _round_up(imgs * hp * (wp * s.C + 8) + 8, 8)
    tile = max(16 * (rpr + 4), 16 * nf * 16 + 16)
    return 4 * (nf * 16 * (s.K * rpr + 4) + xs + warps * tile)


def wmma_candidates(s: ConvShape) -> list[dict]:
    """tf32_wmma.cu: 4 or 8 warps, images per block for about two 16-position tiles per warp."""
    out: list[dict] = []
    tpi = -(-(s.Ho * s.Wo) // 16)
    for warps in (4, 8):
        imgs = max(1, min(s.B, 16, -(-2 * warps // tpi)))
        while imgs > 1 and wmma_smem(s, warps, imgs) > sweep.SMEM_LIMIT:
            imgs -= 1
        if (smem := wmma_smem(s, warps, imgs)) <= sweep.SMEM_LIMIT:
            out.append({"WARPS": warps, "IMGS": imgs, "smem": smem})
    return out


def _wmma_build(cp, p: dict, s: ConvShape):
    defines = {"M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P, "WARPS": p["WARPS"], "IMGS": p["IMGS"]}
    fn = sweep.kernel(cp, "tf32_wmma.cu", "conv_tf32_wmma", defines, p["smem"])
    threads, smem = 32 * p["WARPS"], p["smem"]
    grid, batch = _persistent(cp, fn, threads, smem, -(-s.B // p["IMGS"])), np.int32(s.B)

    def op(x, w, bias, out) -> None:
        fn(grid, (threads,), (x, w, bias, out, batch), shared_mem=smem)

    return op


TF32_WMMA = sweep.Swept(wmma_candidates, _wmma_build, name="tf32-wmma")


def launch_tensorcore_tf32(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TENSORCORE_TF32.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M), out, s)


def launch_tensorcore_3xtf32(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TENSORCORE_3XTF32.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M), out, s)


def launch_tf32_wmma(cp, x, w, bias, out, s: ConvShape) -> Any:
    return TF32_WMMA.launch(cp, x, w, gpu.bias_or_zeros(cp, bias, s.M), out, s)
