"""The performance credit a course's threshold implies for a kernel's summed Op Time."""

from __future__ import annotations

from profconv.judge.evidence import Evidence
from profconv.judge.rules import RuleSet
from profconv.records.verdict import Credit


def fraction(t: float, full_s: float, zero_s: float) -> float:
    """1 at or below full_s, 0 above zero_s, linear between (a threshold with full_s == zero_s is a step)."""
    if t <= full_s:
        return 1.0
    if t > zero_s or zero_s <= full_s:
        return 0.0
    return (zero_s - t) / (zero_s - full_s)


def credit(ev: Evidence, rs: RuleSet) -> Credit | None:
    """The estimate for the layers' summed Op Time: as the course timed it (one cold call per layer) when the
    run had the threshold's image count, else the warm medians scaled linearly to it (Op Time grows with the
    batch; a cold call's fixed costs, a cuBLAS handle or module loading, do not); None without a threshold
    or a time."""
    perf = rs.performance
    warm = [lay.op_s for lay in ev.layers]
    if perf is None or not warm or any(t is None for t in warm):
        return None
    warm_s = float(sum(t for t in warm if t is not None))
    cold = [lay.cold_s for lay in ev.layers]
    cold_s = float(sum(t for t in cold if t is not None)) if all(t is not None for t in cold) else None
    other: float | None
    if cold_s is not None and ev.images == perf.images:
        total, basis, other, scaled_from = cold_s, "cold", warm_s, None
    else:
        scale = perf.images / ev.images if ev.images and ev.images != perf.images else 1.0
        total, basis, other = warm_s * scale, "warm", cold_s
        scaled_from = ev.images if scale != 1.0 else None
    f = fraction(total, perf.full_s, perf.zero_s)
    return Credit(op_time_s=total, images=perf.images, fraction=f, points=None if perf.points is None else f * perf.points,
                  full_s=perf.full_s, zero_s=perf.zero_s, scaled_from=scaled_from, basis=basis, other_s=other)
