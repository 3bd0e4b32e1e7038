"""Why a conv kernel takes its time: what bounds it, how far from that bound's floor, and the few
numbers that show it. Pure: OpEvidence (analysis/op_evidence.py) in, Diagnosis out.

The bound follows Nsight Compute's own triage: the unit busiest against its peak is the limiter when
it is busy (>= BUSY of peak); when no unit is, the kernel is latency-bound and the stall reasons and
the occupancy say what it waits for. Before that, the timed call itself: when the kernels run for
less than LAUNCH_SHARE of Op Time, the rest is launches, gaps and host work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from profconv.analysis.conv_work import Floors, LayerWork, floors
from profconv.analysis.op_evidence import KernelEvidence, OpEvidence
from profconv.hardware import Peak
from profconv.run.models import ConvShape

BUSY = 60.0  # % of peak from which a unit is the limiter (Nsight Compute's SOL guidance)
LAUNCH_SHARE = 0.7  # kernels under this share of Op Time: launches and host work bound the call

M = {  # short names of the metrics read here (profile/targeted_ncu.py collects them)
    "dur": "gpu__time_duration.sum",
    "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1": "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "mem": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "fma": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "fp16": "sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active",
    "tensor": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "lsu": "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "issue": "sm__inst_issued.avg.pct_of_peak_sustained_active",
    "inst": "smsp__inst_executed.sum",
    "ffma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "hfma": "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "ldg": "smsp__sass_inst_executed_op_global_ld.sum",
    "lds": "smsp__sass_inst_executed_op_shared_ld.sum",
    "ldl": "smsp__sass_inst_executed_op_local_ld.sum",
    "dram_rd": "dram__bytes_read.sum",
    "dram_wr": "dram__bytes_write.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "occ": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occ_max": "sm__maximum_warps_per_active_cycle_pct",
    "waves": "launch__waves_per_multiprocessor",
    "regs": "launch__registers_per_thread",
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "cpi": "smsp__average_warp_latency_per_inst_issued.ratio",
}
STALLS = {  # stall reason -> what the warps wait for
    "long_scoreboard": "global or local memory (a load's data)",
    "short_scoreboard": "shared memory or a slow math unit (MIO results)",
    "mio_throttle": "the shared-memory instruction queue (too many LDS/STS)",
    "lg_throttle": "the global-memory instruction queue (too many LDG/STG)",
    "barrier": "__syncthreads (other warps of the block)",
    "math_pipe_throttle": "a busy math pipe",
    "wait": "fixed instruction latencies (dependent arithmetic)",
    "not_selected": "nothing: another eligible warp was picked (enough parallelism)",
    "imc_miss": "constant cache misses",
    "no_instruction": "the instruction cache",
}
LIMITERS = {"registers": "launch__occupancy_limit_registers", "shared memory": "launch__occupancy_limit_shared_mem",
            "blocks per SM": "launch__occupancy_limit_blocks", "warps per SM (block size)": "launch__occupancy_limit_warps"}

BOUND_TEXT = {
    "dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "L1/shared-memory bandwidth", "shared": "shared memory",
    "fp32-pipe": "the FP32 (FMA) pipe", "fp16-pipe": "the FP16 pipe", "tensor-pipe": "the Tensor Core pipe",
    "issue": "instruction issue", "latency": "latency (too few eligible warps)", "launch": "launches and host time",
    "copies": "host↔device copies inside the timed call",
    "outside": "work outside the timed call (the prolog or epilog)",
    "compute": "the SM (compute; `profconv explain --collect` tells which pipe)",
    "memory": "memory (`profconv explain --collect` tells which level)", "unknown": "unknown (no counters recorded)",
}
UNIT_LABEL = {"dram": "DRAM", "l2": "L2", "l1": "L1/shared", "fp32-pipe": "FMA pipe", "fp16-pipe": "FP16 pipe",
              "tensor-pipe": "Tensor pipe", "issue": "issue slots", "compute": "SM", "memory": "memory"}
UNIT_METRIC = {"dram": "dram", "l2": "l2", "l1": "l1", "fp32-pipe": "fma", "fp16-pipe": "fp16",
               "tensor-pipe": "tensor", "issue": "issue"}


@dataclass(frozen=True)
class Finding:
    """One piece of evidence: what was measured, its value, and what good looks like."""

    label: str
    value: str
    good: str
    metrics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    variant: str
    layer: str
    bound: str  # a BOUND_TEXT key
    headline: str
    op_time_s: float | None
    floor_s: float | None  # the layer's roofline floor in the kernel's arithmetic
    of_floor: float | None  # floor / Op Time
    kernel: str | None
    utilisation: dict[str, float] = field(default_factory=dict)  # unit -> % of peak
    stalls: list[tuple[str, float]] = field(default_factory=list)  # reason -> cycles per issued instruction
    findings: list[Finding] = field(default_factory=list)
    derived: dict[str, float] = field(default_factory=dict)  # ffma_share, dram_excess, sectors_per_request, ...
    notes: list[str] = field(default_factory=list)


def short(name: str) -> str:
    """A kernel's name without its parameter list ('matmul(const float *, ...)' -> 'matmul')."""
    return name.split("(")[0].strip() or name


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.0f}%"


def utilisation(k: KernelEvidence) -> dict[str, float]:
    """% of peak per unit, the units this ncu measured; with only `run --profile ncu`'s two summary
    figures, 'compute' (SM) and 'memory' (the busiest memory unit)."""
    out = {unit: k.m(M[key]) for unit, key in UNIT_METRIC.items()}
    found = {u: v for u, v in out.items() if v is not None}
    if not found:
        coarse = {"compute": k.m(M["sm"]), "memory": k.m(M["mem"])}
        found = {u: v for u, v in coarse.items() if v is not None}
    return found


def stalls(k: KernelEvidence) -> list[tuple[str, float]]:
    """Stall reasons in cycles per issued instruction, largest first (not_selected is not a stall)."""
    out = []
    for reason in STALLS:
        v = k.m(f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
        if v is not None and reason != "not_selected":
            out.append((reason, v))
    return sorted(out, key=lambda t: -t[1])


def derived(ev: OpEvidence, k: KernelEvidence, work: LayerWork) -> dict[str, float]:
    """Ratios that compare the kernel with the layer: FFMA share of issued instructions, DRAM bytes
    over compulsory bytes, sectors per global load request, shared-memory bank conflicts per wavefront."""
    out: dict[str, float] = {}
    inst, ffma, hfma = k.m(M["inst"]), k.m(M["ffma"]), k.m(M["hfma"])
    if inst and ffma is not None:
        out["ffma_share"] = (ffma + (hfma or 0.0)) / 32 / inst  # FFMA and HFMA2 (two FMAs each) instructions
        out["fma_share"] = ffma / 32 / inst
    ldg, lds = k.m(M["ldg"]), k.m(M["lds"])
    if ffma and ldg is not None:
        out["loads_per_fma"] = 32 * (ldg + (lds or 0.0)) / ffma
    moved = op_dram_bytes(ev)
    if moved is not None and ev.ncu_images:
        s = work.shape
        out["dram_excess"] = moved / LayerWork(ConvShape(ev.ncu_images, s.M, s.C, s.H, s.W, s.K, s.P),
                                               work.itemsize).compulsory_bytes
    sec, req = k.m(M["ld_sectors"]), k.m(M["ld_requests"])
    if sec is not None and req:
        out["sectors_per_request"] = sec / req
    bc, wf = k.m(M["bank_conflicts"]), k.m(M["shared_wavefronts"])
    if bc is not None and wf:
        out["bank_conflict_share"] = bc / wf
    ldl = k.m(M["ldl"])
    if ldl is not None and inst:
        out["local_share"] = ldl / inst
    return out


def op_dram_bytes(ev: OpEvidence) -> float | None:
    """DRAM bytes read and written per call, every kernel of the op."""
    total, seen = 0.0, False
    for k in ev.kernels:
        rd, wr = k.m(M["dram_rd"]), k.m(M["dram_wr"])
        if rd is not None and wr is not None:
            total += (rd + wr) * k.launches_per_call
            seen = True
    return total if seen else None


def kernel_share(ev: OpEvidence) -> float | None:
    """The op's kernel time over its Op Time: CUPTI's kernel busy time per call, else ncu's durations
    (only when ncu ran the same image count)."""
    if not ev.op_time_s:
        return None
    if ev.cupti and ev.cupti.get("kernel_busy_s"):
        return ev.cupti["kernel_busy_s"] / ev.op_time_s
    if ev.ncu_images == ev.shape.B and ev.kernels and all(k.duration_s for k in ev.kernels):
        return min(1.0, sum(k.duration_s or 0.0 for k in ev.kernels) / ev.op_time_s)  # ncu's clocks may run slower
    return None


def outside_s(ev: OpEvidence) -> float:
    """Kernel seconds per layer call that CUPTI placed in the prolog, the epilog or elsewhere."""
    return sum(busy for phase, (_, busy, _) in ev.placement.items() if phase != "timed")


def classify(ev: OpEvidence, util: dict[str, float], d: dict[str, float]) -> str:
    timed = ev.placement.get("timed", (0, 0.0, []))[1]
    if ev.placement and outside_s(ev) > max(timed, 0.0):
        return "outside"
    share = kernel_share(ev)
    if share is not None and share < LAUNCH_SHARE:
        return "copies" if ev.host_io else "launch"
    if not util:
        return "unknown"
    unit, busiest = max(util.items(), key=lambda t: t[1])
    if busiest < BUSY:
        return "latency"
    if unit == "l1" and d.get("bank_conflict_share", 0) > 0.2:
        return "shared"
    return unit


def _time(s: float | None) -> str:
    from profconv.render.format import seconds  # a leaf: formatting only

    return seconds(s)


def f_floor(ev: OpEvidence, k: KernelEvidence | None, d: dict, fl: Floors) -> Finding | None:
    floor = fl.roofline_s(ev.arithmetic)
    if floor is None or not ev.op_time_s:
        return None
    name = {"fp32": "FP32", "fp16": "FP16", "tensor-fp16": "FP16 Tensor Core", "tensor-tf32": "TF32 Tensor Core",
            "tensor-3xtf32": "3xTF32 Tensor Core"}.get(ev.arithmetic, ev.arithmetic)
    which = "memory" if fl.dram_s is not None and fl.dram_s >= (fl.compute_s(ev.arithmetic) or 0) else name
    return Finding("Op Time against the layer's floor", f"{_time(ev.op_time_s)} = {ev.op_time_s / floor:.1f}× the "
                   f"{which} floor ({_time(floor)})", "within 1.5–2× of the floor is near the roof")


def f_kernel_share(ev: OpEvidence, k, d, fl) -> Finding | None:
    share = kernel_share(ev)
    if share is None:
        return None
    launches = ev.cupti.get("kernels") if ev.cupti else sum(x.launches_per_call for x in ev.kernels)
    return Finding("kernel time in the timed call", f"{share:.0%} ({launches:g} launch(es) per call)",
                   f"≥ {LAUNCH_SHARE:.0%}: the rest is launch gaps and host work", ("CUPTI kernel_busy_s",))


def f_units(ev, k, d, fl) -> Finding | None:
    if k is None:
        return None
    util = utilisation(k)
    if not util:
        return None
    shown = ", ".join(f"{UNIT_LABEL.get(u, u)} {v:.0f}%" for u, v in sorted(util.items(), key=lambda t: -t[1])[:4])
    return Finding("busiest units (% of peak)", shown, f"a unit ≥ {BUSY:.0f}% is the limiter; all below: latency",
                   tuple(M[UNIT_METRIC[u]] if u in UNIT_METRIC else M["sm"] for u in util))


def f_ffma(ev, k, d, fl) -> Finding | None:
    if "ffma_share" not in d or any(s.tensor for s in ev.sass):  # MMA kernels: FMAs are not the measure
        return None
    lpf = f"; {d['loads_per_fma']:.2f} load instructions per FMA" if "loads_per_fma" in d else ""
    return Finding("FMA share of issued instructions", f"{d['ffma_share']:.0%}{lpf}",
                   "≥ 50–60% in a direct convolution: each loaded value feeds several FMAs from registers",
                   (M["ffma"], M["inst"], M["ldg"], M["lds"]))


def f_dram(ev, k, d, fl) -> Finding | None:
    if "dram_excess" not in d:
        return None
    return Finding("DRAM bytes against compulsory bytes", f"{d['dram_excess']:.2f}×",
                   "≈ 1×: every input, weight and output moves once (more: re-reads that missed L2)",
                   (M["dram_rd"], M["dram_wr"]))


def f_coalescing(ev, k, d, fl) -> Finding | None:
    if "sectors_per_request" not in d:
        return None
    return Finding("32-byte sectors per global load request", f"{d['sectors_per_request']:.1f}",
                   "≤ 4 for 4-byte loads (a warp reads 128 contiguous bytes); 32 is fully scattered",
                   (M["ld_sectors"], M["ld_requests"]))


def f_banks(ev, k, d, fl) -> Finding | None:
    if d.get("bank_conflict_share") is None or not k or not k.m(M["shared_wavefronts"]):
        return None
    return Finding("shared-memory bank conflicts", f"{d['bank_conflict_share']:.0%} of shared-load wavefronts",
                   "≈ 0%", (M["bank_conflicts"], M["shared_wavefronts"]))


def f_occupancy(ev, k, d, fl) -> Finding | None:
    if k is None or k.m(M["occ"]) is None:
        return None
    theo = k.m(M["occ_max"])
    lim = [name for name, key in LIMITERS.items() if k.m(key) is not None]
    tightest = min(lim, key=lambda n: k.m(LIMITERS[n]) or 0.0) if lim else None
    waves = k.m(M["waves"])
    text = f"{k.m(M['occ']):.0f}% achieved" + (f" of {theo:.0f}% possible" if theo is not None else "")
    text += f", limited by {tightest}" if tightest and theo is not None and theo < 100 else ""
    text += f"; {waves:.2f} waves" if waves is not None else ""
    return Finding("occupancy (warps resident / maximum)", text,
                   "latency-bound kernels need ≥ 50%; a grid under one wave leaves SMs idle", (M["occ"], M["occ_max"]))


def f_stalls(ev, k, d, fl) -> Finding | None:
    st = stalls(k) if k else []
    if not st:
        return None
    cpi = k.m(M["cpi"]) if k else None
    top = "; ".join(f"{r.replace('_', ' ')} {v:.1f} ({STALLS[r]})" for r, v in st[:2])
    return Finding("top stall reasons (cycles per issued instruction)", top + (f"; {cpi:.1f} cycles between issues"
                   if cpi is not None else ""), "a few cycles in total; one reason dominating names the wait",
                   tuple(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r, _ in st[:2]))


def f_spills(ev, k, d, fl) -> Finding | None:
    local = sum(s.local_loads + s.local_stores for s in ev.sass)
    if not local and not d.get("local_share"):
        return None
    return Finding("local memory (spills or indexed arrays)", f"{local} LDL/STL in the SASS" +
                   (f", {d['local_share']:.1%} of instructions executed" if d.get("local_share") else ""), "0",
                   (M["ldl"],))


def f_placement(ev, k, d, fl) -> Finding | None:
    if not ev.placement:
        return None
    shown = "; ".join(f"{p}: {n} launch(es), {_time(b)}" + (f" ({', '.join(ks[:2])})" if ks else "")
                      for p, (n, b, ks) in ev.placement.items() if n)
    return Finding("GPU work per phase of the course's call (CUPTI; per call, median over the layers)", shown or "none",
                   "every conv kernel in the timed call (conv_forward_gpu); the prolog and epilog only copy")


FINDINGS = [f_floor, f_placement, f_kernel_share, f_units, f_ffma, f_dram, f_coalescing, f_banks, f_occupancy, f_stalls, f_spills]


def headline(bound: str, ev: OpEvidence, util: dict[str, float], st: list[tuple[str, float]], d: dict) -> str:
    what = BOUND_TEXT[bound]
    if bound == "outside":
        where = ", ".join(f"{p} {n} launch(es) {_time(b)}" for p, (n, b, _) in ev.placement.items() if p != "timed" and n)
        return (f"bound by {what}: its kernels there ({where}) run longer than the timed call's "
                f"({_time(ev.placement.get('timed', (0, 0.0, []))[1])}), and Op Time does not measure them")
    if bound in ("launch", "copies"):
        share = kernel_share(ev) or 0.0
        return f"bound by {what}: its kernels run for {share:.0%} of the timed call"
    if bound == "latency":
        wait = f"; warps wait most on {STALLS[st[0][0]]}" if st else ""
        return f"bound by {what}: no unit is busy (busiest {max(util.values()):.0f}% of peak){wait}"
    if bound in ("unknown",):
        return "no counters recorded for this op: only its place against the floor is known"
    extra = ""
    if bound == "issue" and "ffma_share" in d:
        extra = (", and none of its instructions are FMAs: it moves data" if d["ffma_share"] < 0.005 else
                 f", and only {d['ffma_share']:.0%} of the instructions are FMAs" if d["ffma_share"] < 0.5 else
                 f", {d['ffma_share']:.0%} of the instructions FMAs")
    elif bound == "dram" and "dram_excess" in d:
        extra = f", moving {d['dram_excess']:.1f}× the compulsory bytes"
    elif bound == "shared":  # the L1/shared unit is the busy one; its loads conflict in the banks
        return (f"bound by {what} (L1/shared {util.get('l1', 0):.0f}% of peak, "
                f"{d.get('bank_conflict_share', 0):.0%} of its shared-load wavefronts bank conflicts)")
    return f"bound by {what} ({util.get(bound, 0):.0f}% of peak){extra}"


def diagnose(ev: OpEvidence, peak: Peak | None) -> Diagnosis:
    itemsize = 2 if ev.precision == "fp16" else 4
    work = LayerWork(ev.shape, itemsize)
    fl = floors(work, peak)
    k = ev.main
    util = utilisation(k) if k else {}
    st = stalls(k) if k else []
    d = derived(ev, k, work) if k else {}
    bound = classify(ev, util, d)
    floor = fl.roofline_s(ev.arithmetic)
    findings = [f for f in (fn(ev, k, d, fl) for fn in FINDINGS) if f is not None]
    notes = []
    if ev.ncu_images and ev.ncu_images != ev.shape.B:
        notes.append(f"counters from {ev.ncu_images:,} images (Op Time: {ev.shape.B:,})")
    if k is None:
        notes.append("no Nsight Compute counters for this op: run `profconv explain --collect` on the GPU machine")
    return Diagnosis(ev.variant, ev.layer, bound, headline(bound, ev, util, st, d), ev.op_time_s, floor,
                     floor / ev.op_time_s if floor and ev.op_time_s else None, short(k.name) if k else None, util, st,
                     findings, d, notes)
