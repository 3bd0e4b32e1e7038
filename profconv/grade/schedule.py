"""Where and when the jobs ran: GPU use per device, and the proof of the one-job-per-GPU rule (pure).

From each job's host, CUDA_VISIBLE_DEVICES index and the start and end of its process (the time it
held its GPU; the report that follows needs none):

  Schedule.gpus        one GpuUse per (host, device): jobs, busy seconds, most jobs at once on it
  Schedule.span_s      first start to last end of the jobs counted
  Schedule.parallel_s  seconds during which two or more GPUs were busy at once
  Schedule.max_gpus    most GPUs busy at once
  Schedule.max_per_gpu most jobs at once on one GPU: 1 is the rule (never two timed jobs on one GPU)

Jobs without times (never started: unplaced, lost before running; or written by an older
profconv) are left out and counted in `untimed`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from profconv.grade.jobs import JobResult


@dataclass(frozen=True)
class GpuUse:
    host: str | None
    device: str  # CUDA_VISIBLE_DEVICES of its jobs
    gpu: str | None  # the GPU's name
    jobs: int
    busy_s: float
    max_at_once: int


@dataclass(frozen=True)
class Schedule:
    gpus: list[GpuUse]
    span_s: float
    parallel_s: float
    max_gpus: int
    max_per_gpu: int
    untimed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """Plain sentences for the terminal and the leaderboard's markdown."""
        if not self.gpus:
            return [f"no job ran on a GPU ({self.untimed} without times)"] if self.untimed else []
        several_hosts = len({g.host for g in self.gpus}) > 1
        out = ["; ".join(f"GPU {g.host + ':' if several_hosts and g.host else ''}{g.device}"
                         f"{' (' + g.gpu + ')' if g.gpu else ''}: {g.jobs} job(s), {g.busy_s:.1f} s busy"
                         for g in self.gpus)]
        if len(self.gpus) > 1:
            out.append(f"{self.max_gpus} GPUs busy at once at most; two or more busy for {self.parallel_s:.1f} s "
                       f"of the {self.span_s:.1f} s the jobs took")
        rule = ("never two jobs on one GPU" if self.max_per_gpu <= 1
                else f"RULE BROKEN: {self.max_per_gpu} jobs at once on one GPU")
        out.append(rule)
        return out


def _t(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _peak(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at once (an interval ending when another starts does not overlap it)."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], e[1]))
    now = best = 0
    for _, step in events:
        now += step
        best = max(best, now)
    return best


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(intervals):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _at_least_two(busy: list[list[tuple[float, float]]]) -> float:
    """Seconds during which two or more of the GPUs' (merged) busy intervals are open."""
    events = sorted([(a, 1) for g in busy for a, _ in g] + [(b, -1) for g in busy for _, b in g],
                    key=lambda e: (e[0], e[1]))
    total, now, since = 0.0, 0, 0.0
    for t, step in events:
        if now >= 2:
            total += t - since
        now += step
        since = t
    return total


def schedule(results: Iterable[JobResult]) -> Schedule:
    by_gpu: dict[tuple[str | None, str], list[tuple[float, float]]] = {}
    names: dict[tuple[str | None, str], str | None] = {}
    untimed = 0
    for r in results:
        a, b = _t(r.started), _t(r.ended)
        if a is None or b is None or not r.visible_devices or r.status in ("unplaced",):
            untimed += 1
            continue
        key = (r.host, r.visible_devices)
        by_gpu.setdefault(key, []).append((a, max(a, b)))
        names[key] = names.get(key) or r.gpu
    gpus = [GpuUse(host, dev, names[(host, dev)], len(iv), round(sum(b - a for a, b in _union(iv)), 3), _peak(iv))
            for (host, dev), iv in sorted(by_gpu.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))]
    every = [iv for ivs in by_gpu.values() for iv in ivs]
    span = (max(b for _, b in every) - min(a for a, _ in every)) if every else 0.0
    merged = [_union(iv) for iv in by_gpu.values()]
    return Schedule(gpus=gpus, span_s=round(span, 3), parallel_s=round(_at_least_two(merged), 3),
                    max_gpus=_peak([iv for g in merged for iv in g]), max_per_gpu=max((g.max_at_once for g in gpus), default=0),
                    untimed=untimed)
