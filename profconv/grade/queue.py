"""The queue of a grade: what is waiting, running, finished or failed, and how long each job took.

A `Queue` is kept by the grading session (planned: waiting; a job taking its GPU: running, with the
device and the time; a result: its state) and written atomically to OUT/queue.json at each change, so
`profconv grade --queue OUT` shows it from another terminal while the grade runs (or after it). The local
executor says when each job takes its GPU; for Slurm each job's task id is kept and `--queue` asks
squeue for its state (PENDING, RUNNING); Ray's jobs stay `waiting` until they end.

queue.json: {"schema": "profconv.grade-queue", "updated": ISO-8601, "jobs": [{"key", "submission",
  "model", "run", "state", "device", "started", "ended", "wall_s", "status", "reason", "engine_job_id"}]}
  state: waiting | running | finished (ran to its end: its verdict is on the leaderboard) | failed
  (error, timeout, crashed, lost) | capped | unplaced | kept (finished in an earlier run, resumed)
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.grade.jobs import JobResult, JobSpec
from profconv.io import write_atomic

SCHEMA = "profconv.grade-queue"
FILE = "queue.json"
STATES = ("running", "waiting", "failed", "finished", "kept", "capped", "unplaced")
FAILED = ("error", "timeout", "crashed", "lost")


@dataclass
class QueuedJob:
    key: str
    submission: str
    model: str
    run: int = 1
    state: str = "waiting"
    device: str | None = None
    started: str | None = None
    ended: str | None = None
    wall_s: float | None = None
    status: str | None = None
    reason: str | None = None
    engine_job_id: str | None = None  # the Slurm task that holds it (submitted)


def state_of(result: JobResult) -> str:
    if result.status == "finished":
        return "finished"
    return "failed" if result.status in FAILED else result.status


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Queue:
    def __init__(self, out: Path, todo: list[JobSpec], kept: dict[str, JobResult]) -> None:
        self.path = out / FILE
        self._lock = threading.Lock()
        self.jobs: dict[str, QueuedJob] = {}
        for r in kept.values():
            self.jobs[r.key] = QueuedJob(r.key, r.submission, r.model, r.run, "kept", r.visible_devices, r.started,
                                         r.ended, r.wall_s, r.status, r.reason)
        for s in todo:
            self.jobs[s.key] = QueuedJob(s.key, s.submission, s.model, s.run)

    def submitted(self, spec: JobSpec, engine_job_id: str) -> None:
        with self._lock:
            job = self.jobs.setdefault(spec.key, QueuedJob(spec.key, spec.submission, spec.model, spec.run))
            job.engine_job_id = engine_job_id
            self._write()

    def start(self, spec: JobSpec, device: str) -> None:
        with self._lock:
            job = self.jobs.setdefault(spec.key, QueuedJob(spec.key, spec.submission, spec.model, spec.run))
            job.state, job.device, job.started = "running", device, _now()
            self._write()

    def done(self, result: JobResult) -> None:
        with self._lock:
            job = self.jobs.setdefault(result.key, QueuedJob(result.key, result.submission, result.model, result.run))
            job.state, job.status, job.reason = state_of(result), result.status, result.reason
            job.started = result.started or job.started
            job.ended, job.wall_s = result.ended, result.wall_s
            job.device = result.visible_devices or job.device
            self._write()

    def write(self) -> None:
        with self._lock:
            self._write()

    def _write(self) -> None:
        doc = {"schema": SCHEMA, "updated": _now(), "jobs": [asdict(j) for j in self.jobs.values()]}
        write_atomic(self.path, json.dumps(doc, indent=1))


def read(out: Path) -> list[QueuedJob]:
    """A grade directory's queue (queue.json), for `profconv grade --queue OUT`."""
    path = out / FILE if out.is_dir() else out
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no grade queue here (a grade writes it when it starts: profconv grade ... "
                         f"--out {out})") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable grade queue ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("jobs"), list):
        raise InputError(f"{path}: not a profconv grade queue")
    known = set(QueuedJob.__dataclass_fields__)
    try:
        return [QueuedJob(**{k: v for k, v in j.items() if k in known}) for j in doc["jobs"]]
    except (TypeError, AttributeError) as exc:
        raise InputError(f"{path}: a job of the queue is unusable ({exc})") from None


def summary(jobs: list[QueuedJob], now: datetime | None = None, slurm: dict[str, str] | None = None) -> dict[str, Any]:
    """Counts per state, and each job with how long it took (or has been running) in seconds (pure
    but for `now`). `slurm`: Slurm's state of each task (slurm.squeue_states): a waiting job whose task
    Slurm runs is shown running, its reason the task's state."""
    now = now or datetime.now(timezone.utc)
    for j in jobs:
        told = (slurm or {}).get(j.engine_job_id or "")
        if j.state == "waiting" and told:
            j.state, j.reason = ("running" if told in ("RUNNING", "COMPLETING") else "waiting"), f"Slurm: {told}"
    counts = {s: sum(1 for j in jobs if j.state == s) for s in STATES}
    rows = []
    for j in sorted(jobs, key=lambda j: (STATES.index(j.state) if j.state in STATES else 9, j.started or "", j.key)):
        took = j.wall_s
        if j.state == "running" and j.started:
            took = round((now - datetime.fromisoformat(j.started)).total_seconds(), 1)
        rows.append({**asdict(j), "seconds": took})
    return {"counts": {k: v for k, v in counts.items() if v}, "jobs": rows}
