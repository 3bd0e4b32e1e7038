"""What to try next on a conv kernel, ranked by what it can buy. Pure: OpEvidence + Diagnosis in.

Each technique is a small rule (RULES): whether the kernel already does it (read from its SASS,
never advised then), whether this kernel's numbers call for it, and what it can buy: the share of
Op Time it could remove, estimated from the measured number it acts on and capped by the layer's
floor in the arithmetic the technique leaves. The reason quotes those numbers. Where a rung of
profconv's own ladder applies the technique, the advice points at its source and its Op Time on
the same layer in this run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from profconv.analysis.conv_work import LayerWork, floors
from profconv.analysis.diagnosis import Diagnosis, kernel_share
from profconv.analysis.op_evidence import OpEvidence
from profconv.hardware import Peak

# technique -> (title, the ladder rungs that apply it, in order of preference)
TECHNIQUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "shared-tiling": ("tile the input in shared memory", ("shared",)),
    "constant-weights": ("keep the weights in constant memory (or registers)", ("constant",)),
    "gemm": ("unroll + matrix multiply (im2col), tiled in shared memory", ("unroll-gemm", "fused")),
    "implicit-gemm": ("fuse the unroll into the matmul (implicit GEMM)", ("fused",)),
    "register-blocking": ("register blocking / thread coarsening: several outputs per thread", ("tuned",)),
    "half2": ("__half2 arithmetic (two FP16 FMAs per instruction)", ("fp16",)),
    "tensor-cores": ("Tensor Cores (TF32 or FP16 WMMA / mma.sync)",
                     ("tensorcore", "tensorcore-tf32", "tf32-wmma", "tensorcore-3xtf32")),
    "coalescing": ("coalesce the global accesses (consecutive threads, consecutive addresses)", ()),
    "bank-conflicts": ("pad the shared-memory tile against bank conflicts", ()),
    "occupancy": ("raise occupancy (fewer registers or less shared memory per block, or more blocks)", ()),
    "fewer-launches": ("fewer launches per call (one kernel for the whole layer)", ()),
    "host-work": ("keep host work (allocation, copies, synchronisation) out of the timed call", ()),
    "gemm-tile": ("shape the matmul tile to the layer: few output channels, many positions", ()),
    "fuse-epilogue": ("fuse the activation and pooling into the conv kernel", ()),
    "streams": ("overlap the copies with the kernels: the batch in chunks on several streams", ("streams",)),
    "ldmatrix": ("load the MMA fragments with ldmatrix (LDSM) instead of scalar shared loads", ()),
    "vector-loads": ("wider global loads (float4 / 8 halves per LDG.128) for the input rows", ()),
}


FMA_SHARE_BLOCKED = 0.85  # FMA share of issued instructions a register-blocked conv reaches (our tuned: 86%,
# Fall 2020 conv2 on an H200): an issue-bound kernel's instructions shrink towards FMAs / this share


@dataclass(frozen=True)
class Advice:
    technique: str
    title: str
    reason: str
    gain_s: float  # Op Time it could remove at most (estimate)
    gain_share: float  # gain over Op Time
    rung: str | None = None  # our ladder's rung that does it
    rung_source: str | None = None
    rung_time_s: float | None = None  # that rung's Op Time on the same layer, this run
    scope: str = "op"  # op: gains on the conv's Op Time | forward: on the forward pass around it


@dataclass(frozen=True)
class Context:
    ev: OpEvidence
    dx: Diagnosis
    work: LayerWork
    floor_fp32: float | None
    floor_fp16: float | None
    floor_tensor: float | None

    def d(self, key: str, default: float = 0.0) -> float:
        return self.dx.derived.get(key, default)

    def has(self, what: str) -> bool:
        """What the kernel's SASS shows (analysis/sass.py features and counts), over all its kernels."""
        s = self.ev.sass
        if what == "lds":
            return any(k.shared_loads for k in s)
        if what == "const":
            return any(k.constant_bank for k in s)
        if what == "hmma":
            return any(k.tensor for k in s)
        if what == "hfma2":  # packed half2 arithmetic; PTX, when known, tells a scalar __half apart
            return any(k.fp16_arith for k in s) and not self.scalar_half()
        return False

    def scalar_half(self) -> bool:
        """Half-precision arithmetic that PTX shows is scalar only (f16, no f16x2): one lane of each HFMA2."""
        ops = self.ev.half_ops
        if not ops or not any(k.fp16_arith for k in self.ev.sass):
            return False
        return not any(v.get("f16x2", 0) + v.get("bf16x2", 0) for v in ops.values())

    def ffma_static(self) -> tuple[int, int, int]:
        """(FMA instructions: FFMA, computing HFMA2, MMA; shared loads; global loads) in the SASS text,
        all kernels: the static mix."""
        ffma = sum(v for k in self.ev.sass for op, v in k.opcodes.items() if op.split(".")[0] == "FFMA")
        ffma += sum(k.fp16_arith + sum(k.tensor.values()) for k in self.ev.sass)
        lds = sum(k.shared_loads for k in self.ev.sass)
        ldg = sum(sum(k.global_loads.values()) for k in self.ev.sass)
        return ffma, lds, ldg

    def stall(self, reason: str) -> float:
        """Share of a warp's cycles between issues spent on `reason`."""
        total = sum(v for _, v in self.dx.stalls) + 1.0
        return next((v for r, v in self.dx.stalls if r == reason), 0.0) / total

    def capped(self, share: float, floor_s: float | None) -> float:
        """Seconds removed by cutting `share` of Op Time, never below `floor_s`."""
        t = self.ev.op_time_s or 0.0
        after = t * (1.0 - max(0.0, min(share, 0.95)))
        return max(0.0, t - max(after, floor_s or 0.0))


Rule = Callable[[Context], tuple[float, str] | None]  # (share of Op Time it can remove, reason) or None


def register_blocked(c: Context) -> bool:
    """Each loaded value feeds several FMAs from registers: ≥ 3 static FFMAs per load instruction,
    or (counters) ≤ 0.4 loads per FMA executed."""
    ffma, lds, ldg = c.ffma_static()
    if c.ev.sass and ffma >= 3 * max(1, lds + ldg):
        return True
    return 0 < c.d("loads_per_fma", 9.0) <= 0.4


def is_gemm(c: Context) -> bool:
    """A matrix-product form: a kernel named so, MMA instructions, or a tiled-matmul loop in the SASS
    (both operands from shared memory: as many shared loads as FFMAs, few global loads, a barrier)."""
    names = " ".join(k.name for k in c.ev.kernels) + " " + " ".join(k.name for k in c.ev.sass)
    if any(w in names.lower() for w in ("matmul", "matrixmul", "gemm", "mma", "im2col", "unroll")) or c.has("hmma"):
        return True
    ffma, lds, ldg = c.ffma_static()
    return bool(ffma) and lds >= ffma and 4 * ldg <= ffma and any(k.barriers for k in c.ev.sass)


def shared_tiling(c: Context) -> tuple[float, str] | None:
    if c.has("lds") or (not c.ev.sass and c.dx.derived.get("loads_per_fma") is None):
        return None
    s = c.ev.shape
    waits = c.stall("long_scoreboard")
    l1 = c.dx.utilisation.get("l1", 0.0)
    share = max(waits, l1 / 100 * 0.5)
    tile = 16
    reads = (tile + s.K - 1) ** 2 / tile**2
    return share, (f"no shared memory in its SASS: every input value is loaded from global memory by each of the "
                   f"{s.K * s.K} taps that cover it (up to {c.work.input_reuse} FMAs per value on this layer); warps "
                   f"spend {waits:.0%} of their cycles waiting on global loads, L1 is {l1:.0f}% busy. A "
                   f"{tile + s.K - 1}×{tile + s.K - 1} tile per {tile}×{tile} outputs loads each value "
                   f"{reads:.2f}× per channel instead of {s.K * s.K}×")


def constant_weights(c: Context) -> tuple[float, str] | None:
    if c.has("const") or c.has("hmma") or register_blocked(c) or is_gemm(c):
        return None
    ffma, lds, ldg = c.ffma_static()
    if c.ev.sass and ldg < 0.5 * max(1, ffma):
        return None  # the weights are not loaded per FMA
    kb = c.work.weight_bytes / 1024
    if kb > 64:
        return None
    share = 0.5 * c.stall("long_scoreboard") + 0.15 * c.dx.utilisation.get("l1", 0.0) / 100
    return share, (f"the {c.work.weight_values:,} weights ({kb:.1f} KB) are loaded from global memory with every "
                   f"FMA; all threads of a warp read the same weight at the same time, which constant memory "
                   f"broadcasts in one access (64 KB fits them), and unrolled loops make each weight an FFMA operand")


def gemm(c: Context) -> tuple[float, str] | None:
    if is_gemm(c) or register_blocked(c):
        return None
    s = c.ev.shape
    kd, n = s.C * s.K * s.K, s.B * s.Ho * s.Wo
    share = 0.3 * max(c.stall("long_scoreboard") + c.stall("lg_throttle"), c.dx.utilisation.get("l1", 0) / 100)
    return share, (f"as a matrix product this layer is ({s.M} × {kd}) · ({kd} × {n:,}): a tiled matmul loads each "
                   f"weight and each unrolled input once per tile and reuses both from shared memory, where the "
                   f"direct loop reuses only the input; unroll + matmul is the course's step, fused (implicit GEMM) "
                   f"avoids writing the {kd}× larger unrolled matrix")


def implicit_gemm(c: Context) -> tuple[float, str] | None:
    unroll = [k for k in c.ev.kernels if any(w in k.name.lower() for w in ("unroll", "im2col"))]
    if not unroll or not c.ev.op_time_s:
        return None
    spent = sum(k.duration_s or 0.0 for k in unroll)
    share = spent / c.ev.op_time_s if c.ev.ncu_images == c.ev.shape.B and spent else 0.3
    return share, (f"the unroll kernel `{unroll[0].name}` writes the unrolled matrix ({c.ev.shape.C * c.ev.shape.K ** 2}× "
                   f"the input) to global memory and the matmul reads it back"
                   + (f": {share:.0%} of the Op Time" if spent and c.ev.ncu_images == c.ev.shape.B else "")
                   + "; gathering the tile straight from the input inside the matmul removes both")


def register_blocking(c: Context) -> tuple[float, str] | None:
    if register_blocked(c) or c.has("hmma") or 0 <= c.d("ffma_share", -1.0) < 0.01:
        return None  # already, or the op's longest kernel does no arithmetic (an unroll/copy kernel)
    share_ffma = c.d("ffma_share", -1.0)
    issue = c.dx.utilisation.get("issue", 0.0)
    if share_ffma < 0 and not c.ev.sass:
        return None
    ffma, lds, ldg = c.ffma_static()
    have = share_ffma if share_ffma >= 0 else ffma / max(1, c.ev.sass[0].instructions)
    limited = 1.0 if c.dx.bound == "issue" else max(issue / 100, 0.5)  # the share of time instruction count sets
    share = max(0.0, 1.0 - have / FMA_SHARE_BLOCKED) * limited
    return share, (f"only {have:.0%} of its instructions are FMAs ({lds + ldg} loads for {ffma} FFMAs in the SASS): "
                   f"each thread loads a value and uses it once or twice; a thread computing several outputs (a row "
                   f"of TW outputs × MB channels) keeps inputs and weights in registers and reuses each loaded value "
                   f"K × MB times" + (f"; issue slots are {issue:.0f}% busy" if issue else ""))


def half2(c: Context) -> tuple[float, str] | None:
    if c.scalar_half() and not c.has("hmma"):
        busy = max(c.dx.utilisation.get("fp16-pipe", 0.0), c.dx.utilisation.get("fp32-pipe", 0.0),
                   c.dx.utilisation.get("issue", 0.0))
        return (0.4 * busy / 100, "its half-precision arithmetic is scalar __half (PTX fma.rn.f16, no f16x2): each "
                "HFMA2 computes one lane of two; __half2 (two neighbouring outputs, or two channels, per value) "
                "does two FMAs per instruction")
    if c.has("hfma2") or c.has("hmma") or c.ev.precision == "fp16":
        return None
    fma = c.dx.utilisation.get("fp32-pipe", 0.0)
    if fma < 40 and c.d("ffma_share") < 0.4:
        return None
    return (0.45 * max(fma / 100, c.d("ffma_share")), (f"the FMA pipe is {fma:.0f}% busy and FMAs are "
            f"{c.d('ffma_share'):.0%} of the instructions: the arithmetic is the limit now; __half2 does two FMAs per "
            f"instruction (FP16 peak twice FP32), within fp16's tolerance for this layer (1e-2)"))


def tensor_cores(c: Context) -> tuple[float, str] | None:
    if c.has("hmma"):
        return None
    busy = max(c.dx.utilisation.get("fp32-pipe", 0.0), c.dx.utilisation.get("fp16-pipe", 0.0))
    if busy < 40 and c.d("ffma_share") < 0.4 and not c.has("hfma2"):
        return None
    floor = c.floor_tensor or 0.0
    t = c.ev.op_time_s or 0.0
    s = c.ev.shape
    kd = s.C * s.K ** 2
    waste = (f"; with M = {s.M} output channels put the positions on the tile's 16-wide side (M fills "
             f"{s.M} of the 8-wide one)" if s.M < 8 else "")
    return ((1 - floor / t) if t else 0.0), (f"the FMA pipes are {busy:.0f}% busy: the kernel is at the CUDA-core "
                                             f"arithmetic limit; as an implicit GEMM (M = {s.M}, N = B·Ho·Wo, "
                                             f"K = C·K² = {kd}, padded to {-(-kd // 16) * 16}) the layer maps onto "
                                             f"mma.sync tiles (TF32 for fp32 inputs, FP16 in / FP32 accumulate)"
                                             + waste)


def coalescing(c: Context) -> tuple[float, str] | None:
    spr = c.d("sectors_per_request", 0.0)
    if spr <= 6:
        return None
    busy = max(c.dx.utilisation.get("l1", 0.0), c.dx.utilisation.get("l2", 0.0))
    return (1 - 4 / spr) * busy / 100, (f"{spr:.1f} sectors per global load request (4 when a warp reads 128 "
                                        f"contiguous bytes): neighbouring threads read far-apart addresses; map "
                                        f"threadIdx.x to the output's innermost index (w)")


def bank_conflicts(c: Context) -> tuple[float, str] | None:
    share = c.d("bank_conflict_share", 0.0)
    if share < 0.2:
        return None
    return share * 0.5 * c.dx.utilisation.get("l1", 50) / 100, (
        f"{share:.0%} of shared-memory load wavefronts are bank-conflict replays: pad the tile's row stride by one")


def occupancy(c: Context) -> tuple[float, str] | None:
    if c.dx.bound != "latency":
        return None
    occ = next((f for f in c.dx.findings if f.label.startswith("occupancy")), None)
    if occ is None or "limited by" not in occ.value:
        return None
    return 0.15, f"latency-bound and {occ.value}: more resident warps hide the waits"


HOST_GAP_PER_LAUNCH_S = 100e-6  # idle GPU time per launch beyond which launches alone do not explain it


def _launches(c: Context) -> float:
    n = c.ev.cupti.get("kernels") if c.ev.cupti else sum(k.launches_per_call for k in c.ev.kernels)
    return float(n or 0.0)


def _idle_s(c: Context) -> float | None:
    share = kernel_share(c.ev)
    return None if share is None or not c.ev.op_time_s else (1 - share) * c.ev.op_time_s


def host_work(c: Context) -> tuple[float, str] | None:
    """The GPU idle far longer than launches cost: host work inside the timed call."""
    idle, launches, t = _idle_s(c), max(1.0, _launches(c)), c.ev.op_time_s or 0.0
    if idle is None or not t or c.ev.host_io or idle / launches < HOST_GAP_PER_LAUNCH_S or idle < 0.1 * t:
        return None
    s = c.ev.shape
    unroll = any(w in k.name.lower() for k in c.ev.kernels for w in ("unroll", "im2col"))
    big = (f"; the unrolled matrix of this layer is {s.C * s.K * s.K * s.Ho * s.Wo * s.B * 4 / 1e9:.2g} GB: "
           "allocate it once (in the prolog, or keep it across calls), not in every call" if unroll else "")
    return (idle / t, f"the GPU is idle {idle * 1e3:.3g} ms of the {t * 1e3:.3g} ms call "
            f"({idle / launches * 1e3:.3g} ms per launch, where a launch costs a few µs): host work inside the timed "
            f"call — cudaMalloc/cudaFree, copies or synchronisation{big}")


def fewer_launches(c: Context) -> tuple[float, str] | None:
    launches = _launches(c)
    share = kernel_share(c.ev)
    if not launches or launches <= 1:
        return None
    idle = _idle_s(c)
    if idle is not None and idle / launches >= HOST_GAP_PER_LAUNCH_S:
        return None  # not the launches: host_work says what
    gap = (1 - share) if share is not None else 0.05 * (launches - 1)
    if gap < 0.05:
        return None
    return gap, (f"{launches:g} kernel launches per call" + (f", kernels busy {share:.0%} of the call" if share else "")
                 + ": each launch costs a few µs and a tail where the GPU drains")


def fuse_epilogue(c: Context) -> tuple[float, str] | None:
    if not c.ev.epilogue_s or not c.ev.op_time_s:
        return None
    ratio = c.ev.epilogue_s / c.ev.op_time_s
    if ratio < 0.1:
        return None
    return (min(ratio, 0.9) * 0.8, f"in the forward pass, activation and pooling take {ratio:.2g}× this variant's "
            "conv time: they re-read the conv output from global memory and write it again; applied before the "
            "store, the conv writes a quarter of the bytes (a gain on the forward pass, not on the conv's Op Time)")


NEEDS_SASS = {"shared-tiling", "constant-weights", "gemm", "register-blocking", "half2", "tensor-cores", "ldmatrix",
              "vector-loads", "gemm-tile"}
"""Techniques whose advice needs the SASS: without it, whether the kernel already does them is unknown."""
FORWARD = {"fuse-epilogue"}  # gains on the forward pass around the conv, listed after the op's

def streams(c: Context) -> tuple[float, str] | None:
    """Only where copies dominate the timed call, and not when the variant already uses several streams."""
    if c.dx.bound != "copies" or c.ev.technique == "multiple streams":
        return None
    share = kernel_share(c.ev) or 0.0
    return (min(share, 1 - share), f"the kernels run for {share:.0%} of the timed call and the rest is host↔device "
            "copies in one stream; cut the batch into chunks issued round-robin on 2–4 streams (pinned host memory) "
            "so one chunk's copies overlap another's kernel: the call then takes about max(copies, kernels)")


def ldmatrix(c: Context) -> tuple[float, str] | None:
    """MMA kernels feeding fragments with several scalar LDS per mma.sync while L1/shared is busy."""
    if not c.has("hmma"):
        return None
    mma = sum(sum(k.tensor.values()) for k in c.ev.sass)
    lds = sum(v for k in c.ev.sass for op, v in k.opcodes.items() if op.split(".")[0] == "LDS")
    ldsm = sum(v for k in c.ev.sass for op, v in k.opcodes.items() if op.split(".")[0] == "LDSM")
    l1 = c.dx.utilisation.get("l1", 0.0)
    if ldsm or not mma or lds < 2 * mma or l1 < 40:
        return None
    return (0.5 * l1 / 100 * (1 - mma / lds), f"{lds} scalar shared loads feed {mma} mma.sync in the SASS ({lds / mma:.1f} "
            f"per MMA) and L1/shared is {l1:.0f}% busy: one ldmatrix.x4 loads four 8×8 fragments for a warp")


def vector_loads(c: Context) -> tuple[float, str] | None:
    """A thread that stages several consecutive inputs (register-blocked or MMA kernels) with only narrow
    global loads in its SASS while warps wait on global memory."""
    if not (register_blocked(c) or c.has("hmma")):
        return None  # one output per thread: its loads are a warp's coalesced row already
    widths = {bits for k in c.ev.sass for bits in k.global_loads}
    waits = c.stall("long_scoreboard")
    if not widths or max(widths) >= 64 or waits < 0.2 or c.dx.bound in ("launch", "copies"):
        return None
    return (0.5 * waits, f"its global loads are all {max(widths)}-bit and warps spend {waits:.0%} of their cycles "
            f"waiting on them; an input row is contiguous (W = {c.ev.shape.W}), so 128-bit loads fetch 4 floats or 8 "
            "halves per instruction with a quarter of the requests")


def gemm_tile(c: Context) -> tuple[float, str] | None:
    """A square tiled matmul (16×16 threads) over a layer with fewer output channels than the tile's rows."""
    k = c.ev.main
    m = c.ev.shape.M
    block = k.m("launch__block_size") if k else None
    if k is None or c.has("hmma") or not is_gemm(c) or block is None or block < 256 or m >= 16:
        return None
    if not any(w in k.name.lower() for w in ("matmul", "matrixmul", "gemm", "conv")):
        return None
    idle = 1 - m / 16
    share = (k.duration_s or 0.0) / c.ev.op_time_s if c.ev.op_time_s and c.ev.ncu_images == c.ev.shape.B else 0.5
    return (0.5 * idle * min(share, 1.0), f"a {int(block)}-thread (16×16) output tile over M = {m} output channels "
            f"leaves {16 - m} of its 16 rows without a row of the output ({idle:.0%} of the block's threads load tiles "
            f"and compute nothing); a {m}×{256 // m} tile, or {256 // m} positions per thread row, keeps every thread busy")


RULES: dict[str, Rule] = {
    "shared-tiling": shared_tiling, "constant-weights": constant_weights, "gemm": gemm, "implicit-gemm": implicit_gemm,
    "gemm-tile": gemm_tile, "register-blocking": register_blocking, "half2": half2, "tensor-cores": tensor_cores,
    "coalescing": coalescing, "bank-conflicts": bank_conflicts, "occupancy": occupancy, "host-work": host_work,
    "fewer-launches": fewer_launches, "fuse-epilogue": fuse_epilogue, "streams": streams, "ldmatrix": ldmatrix,
    "vector-loads": vector_loads,
}


def _rung(c: Context, technique: str, sources: dict[str, str]) -> tuple[str | None, str | None, float | None]:
    """Our rung that applies `technique`: the fastest of them measured on this layer in this run, else the first."""
    ran = [r for r in TECHNIQUES[technique][1] if r in c.ev.rung_times and r != c.ev.variant]
    if ran:
        rung = min(ran, key=lambda r: c.ev.rung_times[r])
        return rung, sources.get(rung), c.ev.rung_times[rung]
    first = next(iter(TECHNIQUES[technique][1]), None)
    if first and first in sources and first != c.ev.variant:
        return first, sources[first], None
    return None, None, None


def advise(ev: OpEvidence, dx: Diagnosis, peak: Peak | None, sources: dict[str, str] | None = None) -> list[Advice]:
    """Every technique whose rule fires, largest estimated gain first. `sources`: rung -> its kernel file."""
    work = LayerWork(ev.shape, 2 if ev.precision == "fp16" else 4)
    fl = floors(work, peak)
    # Tensor Cores for this kernel: TF32 keeps fp32 inputs, fp16 kernels go to FP16 MMA
    tensor = "tensor-fp16" if ev.precision == "fp16" else "tensor-tf32"
    c = Context(ev, dx, work, fl.roofline_s("fp32"), fl.roofline_s("fp16"), fl.roofline_s(tensor))
    out = []
    for technique, rule in RULES.items():
        if technique in NEEDS_SASS and not ev.sass:
            continue
        got = rule(c)
        if got is None:
            continue
        share, reason = got
        leaves = c.floor_tensor if technique == "tensor-cores" else c.floor_fp16 if technique == "half2" else c.floor_fp32
        gain = c.capped(share, leaves if ev.arithmetic == "fp32" or technique == "tensor-cores" else dx.floor_s)
        rung, src, t = _rung(c, technique, sources or {})
        out.append(Advice(technique, TECHNIQUES[technique][0], reason, gain,
                          gain / ev.op_time_s if ev.op_time_s else 0.0, rung, src, t,
                          "forward" if technique in FORWARD else "op"))
    return sorted(out, key=lambda a: (a.scope != "op", -a.gain_s))
