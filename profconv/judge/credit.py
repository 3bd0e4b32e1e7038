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
    """The estimate for the sum of the layers' warm Op Times, scaled linearly to the threshold's image
    count when the run used another (Op Time grows with the batch); None without a threshold or a time."""
    perf = rs.performance
    times = [lay.op_s for lay in ev.layers]
    if perf is None or not times or any(t is None for t in times):
        return None
    total = float(sum(t for t in times if t is not None))
    scaled_from = None
    if ev.images and ev.images != perf.images:
        total *= perf.images / ev.images
        scaled_from = ev.images
    f = fraction(total, perf.full_s, perf.zero_s)
    return Credit(op_time_s=total, images=perf.images, fraction=f, points=None if perf.points is None else f * perf.points,
                  full_s=perf.full_s, zero_s=perf.zero_s, scaled_from=scaled_from)
