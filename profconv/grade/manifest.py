"""The grade directory: job specs from submissions, resuming finished jobs, and the manifest.

Layout of a grade directory (OUT):
  OUT/manifest.json                     this file's schema below, rewritten atomically after each job
  OUT/jobs/<submission>/<model>/        one per job: job.json (its JobResult), job.log (its output),
                                        run.json (its run record), report.md (its own report)
  OUT/leaderboard.{md,csv,html}         written by `profconv grade`

manifest.json:
  {"schema": "profconv.grade", "schema_version": 1, "created": ISO-8601, "updated": ISO-8601,
   "argv": [...], "engine": {"name": local|slurm|ray, "version": ..., "options": {...}},
   "submissions": [{name, path, digest, models, gpu}],
   "jobs": [JobResult as a dict: key, submission, model, digest, fingerprint, status, reason,
            returncode, engine, engine_job_id, host, gpu_type, visible_devices, gpu, driver,
            profconv_version, started, ended, finished, wall_s, report_s, cpu_threads, command,
            out_dir, record, report, log],
   "warmup": [JobResult as a dict: the untimed `profconv run --variant naive --images 2` per model
              run before the jobs to fill CuPy's kernel cache; absent without one],
   "schedule": {gpus: [{host, device, gpu, jobs, busy_s, max_at_once}], span_s, parallel_s,
                max_gpus, max_per_gpu, untimed}   (grade.schedule: the jobs this run ran; absent
                until a run ends),
   "load": {interval_s, samples, cpu_cores, cpu_busy_mean, cpu_busy_p90, cpu_busy_max,
            gpu_busy_mean: {index: share}, note}   (grade.hostload: this host's CPU and GPU busy shares
                while the jobs ran; the local executor only, absent otherwise)}
"""

from __future__ import annotations

import json
import math
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.grade import jobs
from profconv.grade.jobs import JobResult, JobSpec, read_result
from profconv.grade.submissions import Submission, safe_name
from profconv.io import write_atomic

SCHEMA = "profconv.grade"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class JobSettings:
    """What every job of one `profconv grade` shares."""

    models: tuple[str, ...]  # for submissions that name none
    timeout_s: float = 900.0
    variant: str = "cudnn"
    images: str | None = None
    repeat: int | None = None
    ci_target: float = jobs.GRADE_CI_TARGET
    time_budget_s: float = jobs.GRADE_TIME_BUDGET_S
    kernel_timeout_s: float | None = None
    data: str | None = None
    weights: str | None = None
    profile: str | None = None
    sanitize: bool = False
    course: str | None = None
    job_command: str | None = None
    report: bool = True
    dry_run: bool = False
    runs: int = 1  # repeat runs per submission x model (--runs), combined on the leaderboard
    secret: str | None = None  # a hash of --secret-seed (a different seed: the jobs run again)
    job_gpu_seconds: float | None = None  # --job-gpu-seconds: each kernel's cap


def job_dir(out: Path, submission: str, model: str, run: int = 1) -> Path:
    where = out / "jobs" / submission / safe_name(model)
    return where / f"run{run}" if run > 1 else where


def plan(subs: list[Submission], settings: JobSettings, out: Path) -> list[JobSpec]:
    """One JobSpec per submission x model, in submission order (pure apart from resolving `out`)."""
    out = out.resolve()
    specs = []
    for s in subs:
        for model in s.models or settings.models:
            for run in range(1, settings.runs + 1):
                specs.append(JobSpec(
                    submission=s.name, path=str(s.path), digest=s.digest, model=model,
                    out_dir=str(job_dir(out, s.name, model, run)), gpu=s.gpu, timeout_s=settings.timeout_s,
                    variant=settings.variant, images=settings.images, repeat=settings.repeat,
                    ci_target=settings.ci_target, time_budget_s=settings.time_budget_s,
                    kernel_timeout_s=settings.kernel_timeout_s, data=settings.data, weights=settings.weights,
                    profile=settings.profile, sanitize=settings.sanitize, course=settings.course,
                    job_command=settings.job_command, report=settings.report, dry_run=settings.dry_run, run=run,
                    secret=settings.secret, student=s.student, cap_s=settings.job_gpu_seconds))
    if not specs:
        raise InputError("no jobs: give --model or name models in the listing")
    return specs


def longest_first(todo: list[JobSpec], previous: list[dict[str, Any]]) -> list[JobSpec]:
    """The jobs in the order that ends a class soonest when their lengths are known: the longest first, by the
    latest earlier grade's wall time of the same submission and model (`--previous`, oldest first: a nightly
    class's last night), the ones never graded before first of all (their length unknown), ties in submission
    order. A file launching a kernel per image flushes its CUPTI records for ~30 s after its GPU work: started
    last it would be the class's last tail (tenth session; s11b: 27.7 s past every other job). A job's length is
    from its start to its record's end, that tail included (`wall_s` ends with its GPU work). Pure."""
    last: dict[tuple[str, str], float] = {}
    for doc in previous:
        for j in doc.get("jobs", []):
            span = _span(j)
            if span is not None and j.get("submission") and j.get("model"):
                last[(j["submission"], j["model"])] = span
    if not last:
        return todo
    return sorted(todo, key=lambda s: -last.get((s.submission, s.model), math.inf))


def _span(job: dict[str, Any]) -> float | None:
    """Seconds from a job's start to its end, its tail (the records written after its GPU work) included:
    `finished` - `started` where both are there, else `wall_s` and the cost's `tail_s`; None: not known."""
    try:
        return (datetime.fromisoformat(job["finished"]) - datetime.fromisoformat(job["started"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        pass
    wall, tail = job.get("wall_s"), (job.get("cost") or {}).get("tail_s", 0.0)
    if not isinstance(wall, (int, float)):
        return None
    return float(wall) + (float(tail) if isinstance(tail, (int, float)) else 0.0)


WARMUP_IMAGES = "2"
WARMUP_COMMAND = "{python} -m profconv run --model {model} --images " + WARMUP_IMAGES + " --variant naive --out {out}"


def warmup_specs(todo: list[JobSpec], out: Path) -> list[JobSpec]:
    """One untimed `profconv run --variant naive --images 2` per model (and GPU type) of the jobs to
    run, before them: it compiles profconv's own kernels (reference pass, checks, forward pass) into
    CuPy's kernel cache, so the first jobs on a fresh machine do not spend their --kernel-timeout on
    them (seen on 2x H100: the first job on each GPU 27.6 s, the later ones 10-15 s). Pure."""
    seen: dict[tuple[str, str | None], JobSpec] = {}
    for spec in todo:
        key = (spec.model, spec.gpu)
        if key not in seen:
            name = safe_name(spec.model) + (f"-{safe_name(spec.gpu)}" if spec.gpu else "")
            seen[key] = JobSpec(submission="(warm-up)", path="", digest="", model=spec.model,
                                out_dir=str(out.resolve() / "warmup" / name), gpu=spec.gpu,
                                timeout_s=min(spec.timeout_s, 600.0), job_command=WARMUP_COMMAND, report=False)
    return list(seen.values())


def resume(specs: list[JobSpec], retry_failed: bool = False, force: bool = False
           ) -> tuple[list[JobSpec], dict[str, JobResult]]:
    """Split into jobs to run and results to keep: a job is kept when its job.json has the same
    fingerprint (same submission hash, model and settings) and it finished -- or ended in error,
    timeout or crash too, unless `retry_failed` (a hang or a crash is that submission's result, not a
    reason to re-run). Jobs the engine lost or could not place always run again."""
    todo: list[JobSpec] = []
    kept: dict[str, JobResult] = {}
    for spec in specs:
        prev = None if force else read_result(Path(spec.out_dir))
        if (prev is not None and prev.fingerprint == spec.fingerprint()
                and prev.status not in ("lost", "unplaced", "capped")
                and (prev.status == "finished" or not retry_failed)):
            kept[spec.key] = prev
        else:
            todo.append(spec)
    return todo, kept


@dataclass
class Manifest:
    out: Path
    argv: list[str]
    engine: dict[str, Any]
    submissions: list[Submission]
    jobs: dict[str, JobResult] = field(default_factory=dict)
    schedule: dict[str, Any] | None = None  # grade.schedule.Schedule of the jobs this run ran
    warmup: list[JobResult] = field(default_factory=list)  # the untimed warm-up runs before the jobs
    load: dict[str, Any] | None = None  # grade.hostload.Load: this host's CPU and GPU use while the jobs ran
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def add(self, result: JobResult) -> None:
        self.jobs[result.key] = result
        self.write()

    def to_json(self) -> str:
        doc = {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "created": self.created,
            "updated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "argv": self.argv, "driver_host": socket.gethostname(), "engine": self.engine,
            "submissions": [{"name": s.name, "path": str(s.path), "digest": s.digest, "models": list(s.models),
                             "gpu": s.gpu, "student": s.student} for s in self.submissions],
            "jobs": [self.jobs[k].to_dict() for k in sorted(self.jobs)],
        }
        if self.schedule is not None:
            doc["schedule"] = self.schedule
        if self.warmup:
            doc["warmup"] = [w.to_dict() for w in self.warmup]
        if self.load is not None:
            doc["load"] = self.load
        return json.dumps(doc, indent=1, default=str)

    def write(self) -> None:
        write_atomic(self.out / MANIFEST, self.to_json())


def read(out: Path) -> dict[str, Any]:
    """A grade directory's manifest (for `profconv grade --compare` and tests)."""
    path = out / MANIFEST if out.is_dir() else out
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no grade manifest here (run `profconv grade ... --out {out}` first)") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable grade manifest ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("jobs"), list):
        raise InputError(f"{path}: not a profconv grade manifest")
    if not isinstance(doc.get("schema_version"), int) or doc["schema_version"] > SCHEMA_VERSION:
        raise InputError(f"{path}: grade manifest version {doc.get('schema_version')} is newer than this "
                         f"profconv reads ({SCHEMA_VERSION}); upgrade profconv")
    return doc


def results(doc: dict[str, Any], label: Path) -> list[JobResult]:
    """The JobResults of a manifest read by `read`, or one line naming the first unusable job."""
    out = []
    for i, job in enumerate(doc["jobs"]):
        try:
            if not isinstance(job, dict):
                raise TypeError("not an object")
            out.append(JobResult.from_dict(job))
        except TypeError as exc:
            raise InputError(f"{label}: job {i} of the grade manifest is unusable ({exc})") from None
    return out
