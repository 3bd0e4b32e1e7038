"""A verdict in words, for the terminal, the report and the leaderboard (pure)."""

from __future__ import annotations

from profconv.records.verdict import Placement, Verdict

SHORT = {"tensor-cores-tf32": "TC tf32", "tensor-cores-fp16": "TC fp16", "tensor-cores-bf16": "TC bf16",
         "tensor-cores-other": "TC other", "fp16-half2": "__half2", "fp16-half": "__half", "fp16-arithmetic": "fp16",
         "constant-memory": "constant", "shared-memory-tiling": "smem tiling", "shared-memory": "smem",
         "vector-loads": "vector loads", "read-only-loads": "read-only loads", "atomics": "atomics",
         "local-memory": "local memory", "library-cublas": "cuBLAS", "library-cudnn": "cuDNN", "streams": "streams",
         "fusion": "fusion", "unroll+matmul": "unroll+matmul"}
NOT_SHOWN = {"read-only-loads", "local-memory", "shared-memory"}  # facts of the code more than optimisations


def status(v: Verdict) -> str:
    """'ok', 'ok (2 warnings)', 'FAILED'."""
    if v.status == "failed":
        return "FAILED"
    return f"ok ({len(v.warnings)} warning{'s' * (len(v.warnings) != 1)})" if v.warnings else "ok"


def headline(v: Verdict) -> str:
    """'FAILED: 1 kernel launch(es) in the prolog: conv_forward_kernel [minidnn.work-in-timed-call]' or 'ok'."""
    if v.status == "failed":
        return f"FAILED: {v.reason} [{v.rule.id if v.rule else v.course}]"
    return status(v)


def optimisations(v: Verdict, short: bool = True) -> str:
    """The optimisations seen, each once: 'TC tf32, smem tiling, fusion' ('—' when none)."""
    names = [o.name for o in v.optimisations if o.name not in NOT_SHOWN]
    names = list(dict.fromkeys(names))
    return ", ".join(SHORT.get(n, n) if short else n for n in names) or "—"


def outside(v: Verdict) -> str:
    """The work outside the timed call: 'prolog: 1 kernel (conv_forward_kernel)'; '—' when none; '' unknown."""
    if not v.placement:
        return ""
    parts = [_phase(p) for p in v.placement if p.phase != "timed" and p.kernel_launches]
    return "; ".join(parts) or "—"


def _phase(p: Placement) -> str:
    names = ", ".join(p.kernels[:2]) + (" …" if len(p.kernels) > 2 else "")
    return f"{p.phase}: {p.kernel_launches} kernel{'s' * (p.kernel_launches != 1)} ({names})"


def lines(label: str, v: Verdict) -> list[str]:
    """A user kernel's verdict as the lines `run` prints under its tables."""
    out = [f"{label}: {headline(v)} — {v.course_name} rules" + (f", {v.role}" if v.role and v.role != "final" else "")]
    if v.rule is not None:
        out.append(f"  rule: {v.rule.text} ({v.rule.source})")
    out.append(f"  optimisations: {optimisations(v, short=False)}")
    timed = next((p for p in v.placement if p.phase == "timed"), None)
    if timed is not None:
        lib = f"; library: {', '.join(timed.library[:2])}" if timed.library else ""
        out.append(f"  timed call: {timed.kernel_launches} kernel launch(es) on {timed.streams} stream(s){lib}; "
                   f"outside it: {outside(v)}")
    if v.credit is not None:
        c = v.credit
        pts = f" ({c.points:.3g} points)" if c.points is not None else ""
        how = " (one cold call per layer, as the course timed it)" if c.basis == "cold" else ""
        out.append(f"  performance: {c.op_time_s * 1e3:.1f} ms summed Op Time{how} at {c.images:,} images -> "
                   f"{c.fraction:.0%} of the credit{pts}")
    out += [f"  warning: {w}" for w in v.warnings]
    return out
