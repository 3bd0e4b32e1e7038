"""GPU seconds per student: a course's cap on what one student's submissions may take from the GPUs.

`--job-gpu-seconds S` caps each kernel (its child's time limit: JobSpec.cap_s). `--student-gpu-seconds S`
caps the sum over a student's jobs in one grade (the listing's `student` column groups submissions; a
submission without one is its own student), jobs kept from an earlier run of the same grade directory
included:

- the local executor asks `admit` just before a job takes its GPU: the job gets what its student has
  left as its cap (less what the student's jobs running at that moment may still take), or is not run
  (`capped`) when nothing is left; `charge` books the seconds the job held its GPU;
- Slurm and Ray place the jobs themselves: `split` gives each of a student's jobs an even share of what
  is left as its cap before they are submitted.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from profconv.grade.jobs import JobResult, JobSpec

MIN_JOB_S = 1.0  # less than this left: the job is not started (no kernel checks and times in less)


def held(result: JobResult) -> float:
    """The GPU seconds a job took: its kernel child's for a pool job, else its process's wall."""
    if result.cost and "child_s" in result.cost:
        return float(result.cost["child_s"])
    return float(result.wall_s or 0.0)


class StudentBudget:
    def __init__(self, seconds: float, kept: list[JobResult] | None = None) -> None:
        self.seconds = seconds
        self.spent: dict[str, float] = {}
        self.reserved: dict[str, float] = {}
        self.jobs: dict[str, int] = {}
        self._lock = threading.Lock()
        for r in kept or []:
            self._book(r.student or r.submission, held(r))

    def _book(self, owner: str, seconds: float) -> None:
        self.spent[owner] = self.spent.get(owner, 0.0) + seconds
        self.jobs[owner] = self.jobs.get(owner, 0) + 1

    def left(self, owner: str) -> float:
        return self.seconds - self.spent.get(owner, 0.0) - self.reserved.get(owner, 0.0)

    def admit(self, spec: JobSpec) -> JobSpec | None:
        """The job with its cap (what its student has left), reserved until `charge`; None: nothing left."""
        with self._lock:
            left = self.left(spec.owner)
            if left < MIN_JOB_S:
                return None
            cap = min(spec.cap_s or left, left)
            self.reserved[spec.owner] = self.reserved.get(spec.owner, 0.0) + cap
            return replace(spec, cap_s=cap)

    def charge(self, spec: JobSpec, result: JobResult) -> None:
        with self._lock:
            self.reserved[spec.owner] = max(0.0, self.reserved.get(spec.owner, 0.0) - (spec.cap_s or 0.0))
            self._book(spec.owner, held(result))

    def reason(self, spec: JobSpec) -> str:
        used = self.spent.get(spec.owner, 0.0)
        return (f"{spec.owner}: the {self.seconds:g} GPU seconds per student are used up "
                f"({used:.1f} s by {self.jobs.get(spec.owner, 0)} job(s))")

    def split(self, specs: list[JobSpec]) -> list[JobSpec]:
        """Each job with an even share of what its student has left as its cap (Slurm, Ray)."""
        count: dict[str, int] = {}
        for s in specs:
            count[s.owner] = count.get(s.owner, 0) + 1
        return [replace(s, cap_s=min(s.cap_s or float("inf"), max(0.0, self.left(s.owner)) / count[s.owner]))
                for s in specs]
