"""The job model: one submission x one model = one isolated `profconv run` process with a time limit.

`build_command` is pure (tests check the exact argv); `run_job` is what every executor's worker
calls -- on this host, in a Slurm task or in a Ray task -- and never raises for anything the job
does: a kernel that fails, hangs or crashes its process becomes that job's JobResult, written
atomically as <job dir>/job.json before it is returned.

JobResult.status:
  finished  the command ran to its end and wrote its run record (exit 0, or 1 = a variant FAILED:
            the kernel's verdict is in the record)
  error     it exited with another code or without a record (the reason is its last output line)
  timeout   killed after the time limit (its process group: the kernel's child process too)
  crashed   killed by a signal (segfault, out of memory)
  unplaced  no GPU of the submission's type on this executor
  lost      the engine lost it (a Slurm task killed, a Ray worker gone after its retries)
  capped    not run: its student's GPU seconds (--student-gpu-seconds) were used up
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.io import write_atomic

JOB_FILE = "job.json"
LOG_FILE = "job.log"
RECORD_FILE = "run.json"
REPORT_FILE = "report.md"
TEMPLATE_FIELDS = ("python", "model", "kernel", "out", "submission", "variant")
STATUSES = ("finished", "error", "timeout", "crashed", "unplaced", "lost", "capped")
KILL_GRACE_S = 5.0
# a class's timing (grade's defaults; --repeat, --ci-target, --time-budget): each timed call of a course-form
# kernel at 10,000 images moves ~1.3 GB through pageable memory and is checked in full (~0.25 s on an H200), so
# `profconv run`'s stop rule (at least 5 calls, on until the median's 95% interval is within ±1%, 2 s at most)
# cost a job ~3.4 s of its 8.5 (window s3c). An interval of the median needs 6 samples, so any target ran to
# its time budget (window s4b: 5-6 calls a layer at ±2% within 1 s); a class gets exactly 3 calls on fresh
# inputs, their median and spread (docs/grade.md)
GRADE_REPEAT = 3
GRADE_CI_TARGET = 0.0
GRADE_TIME_BUDGET_S = 1.0

# the jobs this process is running (their process groups), so Ctrl-C can end them all
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()


def start_all() -> None:
    """A new batch of jobs in this process: an earlier Ctrl-C (stop_all) no longer marks its jobs lost (a
    notebook or a script that grades again after an interrupted grade)."""
    _stopping.clear()


def stop_all() -> int:
    """End every job this process runs (Ctrl-C in `profconv grade`); they are recorded as `lost`, so
    the next run of the same command runs them again. Returns how many were running."""
    _stopping.set()
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    return len(procs)


@dataclass(frozen=True)
class JobSpec:
    """Everything a worker needs to run one job (picklable: it travels to Slurm and Ray workers)."""

    submission: str
    path: str  # the submission's kernel file or directory, absolute
    digest: str  # the submission's content hash
    model: str
    out_dir: str  # this job's directory, absolute
    gpu: str | None = None  # GPU type required
    timeout_s: float = 900.0
    variant: str = "cudnn"  # the reference run beside the user's kernel
    images: str | None = None  # --images for profconv run (None: its default)
    repeat: int | None = None  # timed calls per layer at least (None: GRADE_REPEAT)
    ci_target: float = GRADE_CI_TARGET  # more timed calls until the median's 95% interval is within ±this (0: exactly repeat)
    time_budget_s: float = GRADE_TIME_BUDGET_S  # seconds of timed calls per layer at most, with ci_target
    kernel_timeout_s: float | None = None  # --kernel-timeout for profconv run (None: its default)
    data: str | None = None  # --data for profconv run (absolute): the course's dataset
    weights: str | None = None  # --weights for profconv run (absolute)
    profile: str | None = None  # --profile for profconv run (cupti, ncu, ...)
    sanitize: bool = False  # --sanitize for profconv run (compute-sanitizer memcheck + racecheck)
    course: str | None = None  # --course for profconv run: the term whose rules judge the kernel
    job_command: str | None = None  # a template replacing the profconv run command (see build_command)
    report: bool = True  # also write the submission's own report.md
    dry_run: bool = False  # CPU only: the job sees no GPU
    run: int = 1  # which of the repeat runs of this submission x model (--runs N: 1..N)
    secret: str | None = None  # a hash of --secret-seed (the seed itself travels as $PROFCONV_SECRET_SEED)
    student: str | None = None  # whose GPU seconds the job spends (--student-gpu-seconds); None: the submission
    cap_s: float | None = None  # seconds of GPU time the kernel may take (--job-gpu-seconds, or what its student has left)

    @property
    def key(self) -> str:
        return f"{self.submission}/{self.model}" + (f"/run{self.run}" if self.run > 1 else "")

    @property
    def timed_repeat(self) -> int:
        return self.repeat or GRADE_REPEAT

    @property
    def owner(self) -> str:
        return self.student or self.submission

    def fingerprint(self) -> str:
        """What makes a finished job's result reusable: same files, same model, same settings."""
        parts = [self.digest, self.model, self.variant, str(self.images), str(self.repeat),
                 f"timing={self.timed_repeat}/{self.ci_target:g}/{self.time_budget_s:g}",
                 str(self.kernel_timeout_s), str(self.data), str(self.weights), str(self.profile), str(self.job_command),
                 str(self.dry_run)] + (["sanitize"] if self.sanitize else []) + (
                     [f"course={self.course}"] if self.course else []) + (
                     [f"run={self.run}"] if self.run > 1 else []) + ([f"secret={self.secret}"] if self.secret else [])
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@dataclass
class JobResult:
    key: str
    submission: str
    model: str
    digest: str
    fingerprint: str
    status: str  # one of STATUSES
    reason: str | None = None  # one line, for anything but a clean finish
    returncode: int | None = None
    engine: str = "local"
    engine_job_id: str | None = None
    host: str | None = None
    gpu_type: str | None = None  # what the submission asked for
    visible_devices: str | None = None  # CUDA_VISIBLE_DEVICES the job ran with
    gpu: str | None = None
    driver: str | None = None
    profconv_version: str | None = None
    started: str | None = None  # the job's process started (ISO 8601, milliseconds)
    ended: str | None = None  # its process ended: the GPU was free again from here
    finished: str | None = None  # job.json written (after the report, which needs no GPU)
    wall_s: float | None = None  # started -> ended: the time the job held its GPU
    report_s: float | None = None  # the submission's report.md, made after the GPU was released
    cpu_threads: int | None = None  # OMP/MKL/OpenBLAS threads the job was given (None: the library default)
    command: list[str] = field(default_factory=list)  # pool jobs: the `profconv run` command they stand for
    runner: str = "process"  # process: a `profconv run` process; pool: a grade worker's child (grade.pool)
    cost: dict[str, float] = field(default_factory=dict)  # pool jobs: where the time went (grade.pool)
    run: int = 1  # which repeat run of the submission x model (--runs)
    student: str | None = None  # whose GPU seconds it spent (None: the submission's own)
    out_dir: str = ""
    record: str | None = None  # run.json, when written
    report: str | None = None  # report.md, when written
    log: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> JobResult:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in doc.items() if k in known})


def validate_template(template: str) -> list[str]:
    """Split a --job-command template; refuse unknown {placeholders} before any job starts."""
    try:
        tokens = shlex.split(template)
    except ValueError as exc:
        raise InputError(f"--job-command: cannot split {template!r} ({exc})") from None
    if not tokens:
        raise InputError("--job-command is empty")
    for tok in tokens:
        try:
            tok.format(**{f: "" for f in TEMPLATE_FIELDS})
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(f"--job-command: {tok!r} uses an unknown placeholder ({exc}); "
                             f"known: {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}") from None
    return tokens


def build_command(spec: JobSpec, python: str) -> list[str]:
    """The job's argv: `python -m profconv run --model M --kernel PATH --variant V --out DIR` (V: cpu in a
    dry run), or the --job-command template with {python} {model} {kernel} {out} {submission} {variant} filled in."""
    if spec.job_command:
        values = {"python": python, "model": spec.model, "kernel": spec.path, "out": spec.out_dir,
                  "submission": spec.submission, "variant": spec.variant}
        return [tok.format(**values) for tok in validate_template(spec.job_command)]
    # a dry run has no GPU: the CPU reference instead of cuDNN (profconv run refuses GPU variants and
    # kernels alone without one); the kernel is still loaded, its contract detected, its row skipped
    variant = "cpu" if spec.dry_run else spec.variant
    argv = [python, "-m", "profconv", "run", "--model", spec.model, "--kernel", spec.path,
            "--variant", variant, "--out", spec.out_dir]
    if spec.images is not None:
        argv += ["--images", spec.images]
    argv += ["--repeat", str(spec.timed_repeat), "--ci-target", f"{spec.ci_target:g}",
             "--time-budget", f"{spec.time_budget_s:g}"]
    kernel_timeout = spec.kernel_timeout_s
    if spec.cap_s is not None:  # the kernel's GPU seconds are capped: its child's time limit
        kernel_timeout = min(kernel_timeout or 600.0, spec.cap_s)
    if kernel_timeout is not None:
        argv += ["--kernel-timeout", f"{kernel_timeout:g}"]
    if spec.data is not None:
        argv += ["--data", spec.data]
    if spec.weights is not None:
        argv += ["--weights", spec.weights]
    if spec.profile is not None:
        argv += ["--profile", spec.profile]
    if spec.sanitize:
        argv += ["--sanitize"]
    if spec.course is not None:
        argv += ["--course", spec.course]
    return argv


def build_report_command(spec: JobSpec, python: str) -> list[str]:
    """The submission's own report, from its run record."""
    return [python, "-m", "profconv", "report", str(Path(spec.out_dir) / RECORD_FILE),
            "--markdown", str(Path(spec.out_dir) / REPORT_FILE)]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM the job's process group (profconv and the kernel's child), SIGKILL what outlives the grace."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_line(log: Path) -> str | None:
    try:
        with log.open("rb") as fh:
            fh.seek(max(0, log.stat().st_size - 4096))
            lines = [ln.strip() for ln in fh.read().decode(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return None
    return lines[-1][:300] if lines else None


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _environment(record: Path, dry_run: bool, visible: str | None = None) -> dict[str, Any]:
    """GPU, driver, profconv version: from the run record when it has them, else from nvidia-smi."""
    env: dict[str, Any] = {}
    try:
        doc = json.loads(record.read_text())
        rec_env = doc.get("environment") or {}
        env = {"gpu": rec_env.get("gpu"), "driver": rec_env.get("driver_version"),
               "profconv_version": rec_env.get("profconv_version")}
    except (OSError, ValueError, AttributeError):
        pass
    if not env.get("gpu") and not dry_run:
        from profconv.grade import gpus

        found = gpus.query(visible.split(",")[0] if visible else None)
        if found:
            env["gpu"], env["driver"] = found[0].name, found[0].driver
    if env.get("driver") is not None:
        env["driver"] = str(env["driver"])
    if not env.get("profconv_version"):
        from profconv import __version__

        env["profconv_version"] = __version__
    return env


def run_job(spec: JobSpec, engine: str = "local", engine_job_id: str | None = None,
            visible_devices: str | None = None, python: str | None = None,
            cpu_threads: int | None = None) -> JobResult:
    """Run one job to its end (or its time limit) in its own process group; write and return its result
    (`execute` then `finish` in one worker: what a Slurm task does)."""
    return finish(spec, execute(spec, engine, engine_job_id, visible_devices, python, cpu_threads), python)


def _job_env(spec: JobSpec, visible_devices: str | None, cpu_threads: int | None) -> dict[str, str]:
    env = dict(os.environ)
    if spec.dry_run:
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif visible_devices is not None:  # an nvidia-smi index: make CUDA count GPUs the same way
        env["CUDA_VISIBLE_DEVICES"] = visible_devices
    if not spec.dry_run:  # Ray and Slurm give an nvidia-smi (PCI bus) index too
        env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    if cpu_threads is not None:  # concurrent jobs share the host's cores instead of each taking them all
        for var in THREAD_VARS:
            env.setdefault(var, str(cpu_threads))
    env["PROFCONV_GRADE_JOB"] = spec.key
    if env.get("PYTHONPATH"):  # the job runs in its own directory: PYTHONPATH=. must still find profconv
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else p for p in env["PYTHONPATH"].split(os.pathsep))
    return env


def execute(spec: JobSpec, engine: str = "local", engine_job_id: str | None = None,
            visible_devices: str | None = None, python: str | None = None,
            cpu_threads: int | None = None) -> JobResult:
    """The part of a job that holds its GPU: `profconv run` in its own process group, to its end or its
    time limit. Returns the result with status, exit code and times; `finish` completes it."""
    out = Path(spec.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in (RECORD_FILE, REPORT_FILE, JOB_FILE):
        (out / stale).unlink(missing_ok=True)
    python = python or sys.executable
    argv = build_command(spec, python)
    env = _job_env(spec, visible_devices, cpu_threads)
    threads = env.get(THREAD_VARS[0])
    result = JobResult(key=spec.key, submission=spec.submission, model=spec.model, digest=spec.digest,
                       fingerprint=spec.fingerprint(), status="error", engine=engine, engine_job_id=engine_job_id,
                       run=spec.run, student=spec.student,
                       host=socket.gethostname(), gpu_type=spec.gpu, visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
                       command=argv, out_dir=str(out), log=str(out / LOG_FILE), started=_now(),
                       cpu_threads=int(threads) if threads and threads.isdigit() else None)
    t0 = time.monotonic()
    with (out / LOG_FILE).open("wb") as log:
        log.write(f"$ {shlex.join(argv)}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=out, env=env, start_new_session=True)
        except OSError as exc:
            proc = None
            result.reason = f"cannot start {argv[0]}: {exc.strerror or exc}"
        if proc is not None:
            _supervise(proc, spec, result)
    result.wall_s = round(time.monotonic() - t0, 3)
    result.ended = _now()
    record = out / RECORD_FILE
    _classify_exit(result, record, out / LOG_FILE)
    if record.is_file():
        result.record = str(record)
    # the GPU, driver and profconv version: read now, on the job's host and with its CUDA_VISIBLE_DEVICES
    result.__dict__.update(_environment(record, spec.dry_run, env.get("CUDA_VISIBLE_DEVICES")))
    return result


def _supervise(proc: subprocess.Popen, spec: JobSpec, result: JobResult) -> None:
    """Wait for a started job within its time limit; Ctrl-C or SIGTERM (here or while it started) ends its
    process group."""
    with _running_lock:
        _running.add(proc)
        stopped = _stopping.is_set()  # Ctrl-C or SIGTERM came while this job was starting: stop_all missed it
    if stopped:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=spec.timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        result.status, result.reason = "timeout", f"killed after the {spec.timeout_s:g} s time limit"
    except BaseException:  # the worker itself is interrupted: leave no orphan on the GPU
        _kill_group(proc)
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
    result.returncode = proc.returncode
    if _stopping.is_set():
        result.status, result.reason = "lost", "interrupted (Ctrl-C): runs again on the next grade"


def _classify_exit(result: JobResult, record: Path, log: Path) -> None:
    """A finished job's status from its exit code and whether it left a run record."""
    if result.status in ("timeout", "lost") or result.returncode is None:
        return
    if result.returncode < 0:
        result.status, result.reason = "crashed", f"killed by {_signal_name(result.returncode)}"
    elif result.returncode in (0, 1) and record.is_file():
        result.status = "finished"
    else:
        last = _last_line(log)
        what = "no run record" if not record.is_file() else "a partial run record"
        result.reason = f"exit {result.returncode}, {what}" + (f": {last}" if last else "")


Reporter = Callable[[str, str], bool]  # (run.json, report.md) -> written; commands/grade.py gives one


def finish(spec: JobSpec, result: JobResult, python: str | None = None, reporter: Reporter | None = None) -> JobResult:
    """The part of a job that needs no GPU: the submission's report.md (by `reporter`, a long-lived report
    process, else a `profconv report` process), then job.json (atomically)."""
    out = Path(spec.out_dir)
    python = python or sys.executable
    if result.record and spec.report and result.status == "finished" and not spec.job_command:
        t0 = time.monotonic()
        try:
            if reporter is not None:
                written = reporter(str(out / RECORD_FILE), str(out / REPORT_FILE))
            else:
                done = subprocess.run(build_report_command(spec, python), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, cwd=out, env=_job_env(spec, "", None), timeout=300,
                                      check=False)
                written = done.returncode == 0
            if written and (out / REPORT_FILE).is_file():
                result.report = str(out / REPORT_FILE)
        except Exception:  # a report that fails costs the submission its report.md, never its row
            pass
        result.report_s = round(time.monotonic() - t0, 3)
    result.finished = _now()
    write_atomic(out / JOB_FILE, json.dumps(result.to_dict(), indent=1))
    return result


def read_result(out_dir: Path) -> JobResult | None:
    """A job directory's job.json, or None when absent or unreadable (then the job runs again)."""
    try:
        return JobResult.from_dict(json.loads((out_dir / JOB_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def not_run(spec: JobSpec, status: str, reason: str, engine: str) -> JobResult:
    """A result for a job that no worker ran (no GPU of its type, lost by the engine), written too."""
    result = JobResult(key=spec.key, submission=spec.submission, model=spec.model, digest=spec.digest,
                       fingerprint=spec.fingerprint(), status=status, reason=reason, engine=engine, run=spec.run,
                       student=spec.student,
                       gpu_type=spec.gpu, out_dir=spec.out_dir, started=_now(), finished=_now())
    Path(spec.out_dir).mkdir(parents=True, exist_ok=True)
    write_atomic(Path(spec.out_dir) / JOB_FILE, json.dumps(result.to_dict(), indent=1))
    return result
