"""A long-lived grade worker per GPU slot: the jobs' cost close to the measurement itself.

`profconv run --kernel` per job pays, every time: a Python start and its imports, two CUDA contexts,
the inputs and the float64 reference pass, cuDNN's sweep and timing, and nvcc -- seconds for a kernel
that runs milliseconds. A PoolWorker pays each of them once:

- the model bundle (grade.bundle): inputs, reference pass and the reference variant's (cuDNN's)
  result, made once per model and GPU in a process of its own, kept on disk under the cache;
- builds (grade.builds): nvcc on the CPU cores ahead of the GPU, kept in the build cache;
- the zygote (grade.zygote): a process that imported NumPy, CuPy, PyTorch and profconv's checks once,
  holds the bundles in memory and forks one child per job. Only the child touches the GPU for the
  student's code: a fresh process, its own session and CUDA context, the same checks and timing code
  as `profconv run --kernel` (run.user.worker.run_job). A crash, a hang (killed at its time limit with
  its process group) or a corrupted context ends with the child; the next job is a new child.

The job's run.json is then assembled here -- the bundle's reference row, the child's row for each of
the submission's kernels -- with the same schema and the same verdict logic (run.user.isolate.outcome
for a child that died) as `profconv run` writes, so the leaderboard reads both alike.

Jobs the pool does not take (`poolable`): --job-command, --profile, --sanitize, several image counts;
they run as `profconv run` processes (grade.jobs.execute), as before.

Each JobResult of the pool carries `runner = "pool"` and `cost`: where its time went --
  bundle_s  making or loading the model bundle (the first job of a model on a worker pays it; another job
            of the same GPU waiting for it meanwhile: bundle_wait_s)
  startup_s the zygote's imports (the worker's first job; started with the worker, in the background
            while that job makes its model bundle)
  build_s   waiting for the submission's nvcc build (0 when it was ready)
  child_s   the kernel's child, fork to the moment it gives its GPU back (grade.zygote.give_back_gpu):
            checks, sweep, timing (under CUPTI); the next job's child starts then
  tail_s    waiting, after the GPU was given back, for the child to flush and write its CUPTI records
  judge_s   the verdict by the course's rules (CUPTI records, the build's SASS through cuobjdump), and
  record_s  assembling and writing run.json: both in `complete`, after the GPU was given back
(and report_s, filled when the report is written).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from profconv.errors import ProfconvError
from profconv.grade import bundle as bundle_mod
from profconv.grade import jobs
from profconv.grade.builds import BuildCache
from profconv.grade.jobs import JobResult, JobSpec

READY_TIMEOUT_S = 300.0  # imports on a cold file system
BUNDLE_TIMEOUT_S = 3600.0  # the CPU reference of a dry run at 10,000 images takes minutes
REAP_GRACE_S = 30.0  # a killed child stuck in the GPU driver
TAIL_S = 120.0  # a child that gave its GPU back: the least time left it for its CUPTI records (Timeline.deadline)
DEFAULT_KERNEL_TIMEOUT_S = 600.0  # `profconv run --kernel-timeout`'s default (run.user.isolate)
SECRET_ENV = "PROFCONV_SECRET_SEED"  # how --secret-seed reaches the jobs (never on a command line)
# a CUDA driver that will not start in a forked child (a driver initialised in the zygote after all)
CUDA_INIT_FAILED = re.compile(r"cudaErrorInitializationError|CUDA_ERROR_NOT_INITIALIZED|initialization error|"
                              r"cannot reach a CUDA driver")


OUT_OF_MEMORY = re.compile(r"out of memory|OutOfMemoryError|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY",
                           re.IGNORECASE)


def out_of_memory(log: Path, result_file: Path) -> bool:
    """Whether a kernel's child ran out of GPU memory: its row's errors (the result it wrote) or its log."""
    for f in (result_file, log):
        try:
            if OUT_OF_MEMORY.search(f.read_text(errors="replace")):
                return True
        except OSError:
            continue
    return False


class WorkerDied(RuntimeError):
    """The zygote ended (killed, out of memory): the worker starts a new one for the next job."""


def poolable(spec: JobSpec) -> bool:
    """Whether the pool runs this job (else: a `profconv run` process, grade.jobs.execute)."""
    return (spec.job_command is None and spec.profile is None and not spec.sanitize
            and (spec.images is None or "," not in spec.images))


def image_count(spec: JobSpec) -> int:
    return int(str(spec.images).replace("_", "")) if spec.images is not None else 10000


class _Pid:
    """A pool child in grade.jobs' running set: stop_all (Ctrl-C) ends its process group as any job's."""

    def __init__(self, pid: int) -> None:
        self.pid = pid


class Zygote:
    """The driver's side of a zygote process: start, load, fork, wait, close."""

    def __init__(self, env: dict[str, str], log: Path, python: str | None = None) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        with log.open("ab") as fh:
            self.proc = subprocess.Popen([python or sys.executable, "-m", "profconv.grade.zygote"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=fh, env=env, start_new_session=True)
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        # children's exits apart from the replies: a child finishing its CUPTI tail is waited for by the
        # thread completing its job while the next job's thread forks and waits for its own child
        self.exits: dict[int, int] = {}
        self.ended = False
        self._exited = threading.Condition()
        self._rpc = threading.Lock()  # one request and its reply at a time (several jobs share a GPU's worker)
        threading.Thread(target=self._read, daemon=True, name="zygote-reader").start()
        ready = self._next(READY_TIMEOUT_S)
        if ready is None or "ready" not in ready:
            self.close()
            raise WorkerDied(f"the grade worker did not start ({self._tail()})")
        self.imports_s = float(ready.get("imports_s", 0.0))
        self.cuda_loaded = bool(ready.get("cuda_loaded"))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if "exit" in event:
                with self._exited:
                    self.exits[event["exit"]] = int(event["rc"])
                    self._exited.notify_all()
            else:
                self.events.put(event)
        with self._exited:
            self.ended = True
            self._exited.notify_all()
        self.events.put(None)

    def _tail(self) -> str:
        return jobs._last_line(self.log) or f"exit {self.proc.poll()}"

    def _next(self, timeout: float | None) -> dict[str, Any] | None:
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            return None
        if event is None:
            self.events.put(None)  # every later read sees the end too
            raise WorkerDied(f"the grade worker ended ({self._tail()})")
        return event

    def _send(self, doc: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(doc) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerDied(f"the grade worker ended ({self._tail()})") from None

    def _reply(self, field: str, timeout: float) -> dict[str, Any]:
        event = self._next(timeout)
        if event is None:
            raise WorkerDied("the grade worker did not answer")
        if "error" in event:
            raise ProfconvError(f"grade worker: {event['error']}")
        if field not in event:
            raise WorkerDied(f"the grade worker answered {event!r} instead of {field!r}")
        return event

    def load(self, where: Path) -> float:
        with self._rpc:
            self._send({"op": "load", "bundle": str(where)})
            return float(self._reply("loaded", READY_TIMEOUT_S).get("seconds", 0.0))

    def fork(self, job_id: int, job: Path, log: Path, where: Path | None) -> int:
        with self._rpc:
            self._send({"op": "fork", "id": job_id, "job": str(job), "log": str(log),
                        "bundle": str(where) if where else None})
            return int(self._reply("forked", READY_TIMEOUT_S)["pid"])

    def wait(self, job_id: int, timeout: float) -> int | None:
        """The child's exit code (negative: its signal), or None when `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._exited:
            while job_id not in self.exits:
                if self.ended:
                    raise WorkerDied(f"the grade worker ended ({self._tail()})")
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._exited.wait(left)
            return self.exits.pop(job_id)

    def close(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=REAP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class Timeline:
    """When each step of a kernel's child began (its `profconv-progress:` lines, read from its log while it
    runs): child-<name>.timeline.json beside the log, [[seconds since the fork, step], ...] -- where a
    job's child time goes (benchmarks/grade_throughput.py measure sums it by step)."""

    POLL_S = 0.05

    def __init__(self, log: Path) -> None:
        self.log, self.t0, self.steps = log, time.monotonic(), []  # type: ignore[var-annotated]
        self._seen = 0

    def _read(self) -> None:
        from profconv.run.user.worker import PROGRESS

        try:
            with self.log.open("rb") as fh:
                fh.seek(self._seen)
                chunk = fh.read()
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # whole lines only
        self._seen += end
        now = round(time.monotonic() - self.t0, 3)
        for line in chunk[:end].decode(errors="replace").splitlines():
            if line.startswith(PROGRESS):
                self.steps.append([now, line[len(PROGRESS):][:200]])

    def waited(self) -> float:
        """Seconds the child spent waiting for another job's timed call on its GPU (run.user.gpushare's
        `GPU wait` steps, the current one included): not counted in its time limit."""
        from profconv.run.user.gpushare import WAIT_STEP

        total = 0.0
        for i, (t, step) in enumerate(self.steps):
            if step == WAIT_STEP:
                end = self.steps[i + 1][0] if i + 1 < len(self.steps) else time.monotonic() - self.t0
                total += max(0.0, end - t)
        return total

    @property
    def released(self) -> bool:
        """The child said its GPU work is over (grade.zygote.give_back_gpu): only its CUPTI records are left."""
        return self.released_at() is not None

    def released_at(self) -> float | None:
        """Seconds after the fork when the child gave its GPU back, or None."""
        from profconv.run.user.worker import GPU_RELEASED

        return next((t for t, step in self.steps if step == GPU_RELEASED), None)

    def deadline(self, timeout: float) -> float:
        """When the child is killed (monotonic clock): `timeout` seconds of its own after the fork, its waits for
        another job's timed calls not counted; once it gave its GPU back, at least TAIL_S more for its CUPTI
        records' flush and write -- profconv's work, not the kernel's (a file launching a kernel per image
        flushes ~400,000 records, ~30 s: tenth session)."""
        end = self.t0 + timeout + self.waited()
        released = self.released_at()
        return end if released is None else max(end, self.t0 + released + TAIL_S)

    def follow(self, wait: Any, timeout: float, each: Any = None, until_released: bool = False) -> int | None:
        """`wait(seconds)` (the child's exit code, or None) in short steps until `timeout` seconds after the
        fork, its waits for another job's timed calls not counted (or, with `until_released`, until the child
        gives its GPU back), reading the log and calling `each()` between the steps."""
        while True:
            rc = wait(max(0.0, min(self.POLL_S, self.deadline(timeout) - time.monotonic())))
            self._read()
            if rc is not None or time.monotonic() >= self.deadline(timeout) or (
                    until_released and self.released):
                return rc
            if each is not None:
                each()

    def write(self, path: Path) -> None:
        self._read()
        self.steps.append([round(time.monotonic() - self.t0, 3), "(exit)"])
        try:
            path.write_text(json.dumps(self.steps))
        except OSError:
            pass


class _Tail:
    """A forked child from its fork to its exit. Once it has given its GPU back (Timeline.released) the job's
    GPU time is over: its exit -- the CUPTI records flushed and written -- is waited for in `complete`, while
    the next job's child already runs on the GPU (grade.zygote.give_back_gpu frees its memory first)."""

    def __init__(self, zygote: Zygote, job_id: int, pid: int, log: Path, timeout: float) -> None:
        self.zygote, self.job_id, self.pid, self.timeout = zygote, job_id, pid, timeout
        self.handle = _Pid(pid)
        self.timeline = Timeline(log)
        self.log = log
        with jobs._running_lock:
            jobs._running.add(self.handle)  # type: ignore[arg-type]
            self.stopped = jobs._stopping.is_set()

    def follow(self, until_released: bool = False) -> int | None:
        # Ctrl-C may come before the child has made its session (killpg then finds no group): ask again
        return self.timeline.follow(lambda wait: self.zygote.wait(self.job_id, wait), self.timeout,
                                    lambda: _kill_group(self.pid) if jobs._stopping.is_set() else None,
                                    until_released)

    @property
    def pending(self) -> bool:
        """Given its GPU back, not ended, inside its time limit."""
        return self.timeline.released and time.monotonic() < self.timeline.deadline(self.timeout)

    def settle(self, rc: int | None) -> int | None:
        """The child's end: killed with its group when `rc` is None (its time limit), forgotten by Ctrl-C's
        set, its timeline written beside its log."""
        try:
            if rc is None:
                _kill_group(self.pid)
                self.zygote.wait(self.job_id, REAP_GRACE_S)
            return rc
        finally:
            with jobs._running_lock:
                jobs._running.discard(self.handle)  # type: ignore[arg-type]
            self.timeline.write(self.log.with_suffix(".timeline.json"))

    def wait(self) -> int | None:
        """Its exit code, waited for after its GPU was given back (None: killed at its time limit)."""
        try:
            rc = self.follow()
        except BaseException:
            _kill_group(self.pid)
            self.settle(-9)
            raise
        return self.settle(rc)


class _Later:
    """A kernel's row whose child gave its GPU back and is still writing its CUPTI records (`get` waits)."""

    def __init__(self, get: Any) -> None:
        self.get = get


def judged(res: Any, spec: JobSpec, records: Path | None, build_dir: Path) -> Any:
    """The kernel's verdict under the course's rules, from its result, its child's CUPTI records and the
    SASS of its build -- what `profconv run --kernel` stores (session.run: judge.assemble.apply)."""
    from profconv.judge.assemble import apply
    from profconv.profile import cupti_child
    from profconv.profile.activity import Records
    from profconv.run.user import isolate

    recs = None
    if records is not None:  # None: no child ran (a kernel not recognised), nothing to attribute
        raw, why = cupti_child.read(records)
        try:
            recs = Records.from_dict(raw) if raw is not None else None
        except ValueError as exc:
            why = str(exc)
        if recs is None and res.status != "skipped":
            isolate.note(res, f"CUPTI: {why}; the verdict has no attribution of its GPU work to the call's phases")
        records.unlink(missing_ok=True)
    # the rule set: --course, else the era of the kernel's own form, else the model's (judge.rules.choose)
    return apply(res, None, recs, build_dir, course=spec.course, model=spec.model)


def _kill_group(pid: int) -> None:
    """SIGKILL the child's process group (its session), or the child alone before it has made its session."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class PoolWorker:
    """One GPU slot's worker (or a CPU slot's, in a dry run): bundles, builds, a zygote, one job at a time."""

    def __init__(self, *, visible: str | None, dry_run: bool, cache: Path, logs: Path, builds: BuildCache | None = None,
                 cpu_threads: int | None = None, engine: str = "local", python: str | None = None,
                 device_id: str | None = None, gpu_lock: Path | None = None) -> None:
        self.visible, self.dry_run, self.cache, self.logs = visible, dry_run, cache, logs
        self.builds, self.cpu_threads, self.engine, self.python = builds, cpu_threads, engine, python
        self.device_id = device_id or ("cpu@" + os.uname().nodename if dry_run else f"gpu{visible}@{os.uname().nodename}")
        self.zygote: Zygote | None = None
        self._bundles: dict[str, tuple[Path, dict[str, Any]]] = {}
        self._failed: dict[str, str] = {}
        self._next_id = 0
        self._ids = threading.Lock()
        self._bundle_lock = threading.Lock()  # jobs sharing the GPU (--jobs-per-gpu) make or load a bundle once
        # the GPU's lock file (run.user.gpushare), when several children may share it: their timed calls alone
        self.gpu_lock = gpu_lock
        self._fork_proven = False  # a forked child ran to its end on this worker
        self._zygote_lock = threading.Lock()
        self._pending: dict[str, tuple[list, dict[str, Any], list]] = {}  # executed, not yet complete
        self._digests: dict[str | None, str | None] = {}
        self._versions: str | None = None

    # -- the environment of every process this worker starts
    def env(self, spec_key: str = "") -> dict[str, str]:
        spec = JobSpec(submission="", path="", digest="", model="", out_dir="", dry_run=self.dry_run)
        env = jobs._job_env(spec, self.visible, self.cpu_threads)
        if spec_key:
            env["PROFCONV_GRADE_JOB"] = spec_key
        return env

    # -- the model bundle
    def key(self, spec: JobSpec) -> bundle_mod.BundleKey:
        for path in (spec.data, spec.weights):
            if path not in self._digests:
                self._digests[path] = bundle_mod.file_digest(path)
        if self._versions is None:
            self._versions = bundle_mod.versions()
        return bundle_mod.BundleKey(
            model=spec.model, images=image_count(spec), variant="cpu" if self.dry_run else spec.variant,
            repeat=spec.repeat or 5, data=spec.data, data_digest=self._digests[spec.data], weights=spec.weights,
            weights_digest=self._digests[spec.weights], device=self.device_id, versions=self._versions)

    def bundle(self, spec: JobSpec) -> tuple[Path, dict[str, Any], float]:
        """The job's model bundle (made when missing, loaded into the zygote once): (dir, bundle.json, seconds)."""
        with self._bundle_lock:  # a job sharing the GPU waits for the bundle another one is making (bundle_wait_s)
            return self._bundle(spec)

    def _bundle(self, spec: JobSpec) -> tuple[Path, dict[str, Any], float]:
        key = self.key(spec)
        digest = key.digest()
        if digest in self._failed:
            raise bundle_mod.BundleError(self._failed[digest])
        if digest in self._bundles:
            return (*self._bundles[digest], 0.0)
        t0 = time.monotonic()
        where = bundle_mod.directory(self.cache, key)
        try:
            with bundle_mod.locked(where.with_name(where.name + ".lock")):
                meta = bundle_mod.read_meta(where) or self._make(key, where)
            if not self.dry_run:
                self._zygote().load(where)
        except bundle_mod.BundleError as exc:
            self._failed[digest] = str(exc)
            raise
        self._bundles[digest] = (where, meta)
        return where, meta, round(time.monotonic() - t0, 3)

    def _make(self, key: bundle_mod.BundleKey, where: Path) -> dict[str, Any]:
        key_file = where.with_name(where.name + ".key.json")
        key_file.write_text(json.dumps(asdict(key), indent=1))
        log = where.with_name(where.name + ".log")
        argv = [self.python or sys.executable, "-m", "profconv.grade.bundle", str(key_file), str(where)]
        with log.open("wb") as fh:
            fh.write(f"$ {shlex.join(argv)}\n".encode())
            fh.flush()
            try:
                done = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=self.env(), timeout=BUNDLE_TIMEOUT_S,
                                      check=False, stdin=subprocess.DEVNULL)
                rc: int | None = done.returncode
            except subprocess.TimeoutExpired:
                rc = None
        meta = bundle_mod.read_meta(where)
        if meta is None:
            why = "did not finish in time" if rc is None else (jobs._last_line(log) or f"exit {rc}")
            raise bundle_mod.BundleError(f"the {key.model} reference ({key.variant}, {key.images} images) "
                                         f"could not be made: {why} (log: {log})")
        return meta

    # -- the zygote
    def start(self) -> None:
        """Start the zygote (its imports: seconds) in the background, while the first job makes its model
        bundle: the zygote never touches the GPU, so the bundle's cuDNN timing is undisturbed."""
        if not self.dry_run and self.zygote is None:
            threading.Thread(target=self._zygote, daemon=True, name="zygote-start").start()

    def _zygote(self) -> Zygote:
        with self._zygote_lock:  # one start at a time: the background one, or the job's
            return self._zygote_locked()

    def _zygote_locked(self) -> Zygote:
        if self.zygote is None or self.zygote.proc.poll() is not None:
            # one BLAS/OpenMP thread: a thread pool started at import would be copied dead into every child
            # (the children compute on the GPU; the host's numbers are the bundle's, made elsewhere)
            env = {**self.env(), **{var: "1" for var in jobs.THREAD_VARS}}
            self.zygote = Zygote(env, self.logs / f"worker-{self.device_id.split('@')[0]}.log", self.python)
        return self.zygote

    def close(self) -> None:
        with self._zygote_lock:  # a zygote still starting in the background is waited for, then ended
            if self.zygote is not None:
                self.zygote.close()
                self.zygote = None

    # -- one job
    def execute(self, spec: JobSpec) -> JobResult:
        """The part of one job that holds its GPU: its kernels' children on this slot (never raises for what
        the job does). `complete` then judges them and writes run.json, after the GPU is given back."""
        out = Path(spec.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for stale in (jobs.RECORD_FILE, jobs.REPORT_FILE, jobs.JOB_FILE):
            (out / stale).unlink(missing_ok=True)
        python = self.python or sys.executable
        env = self.env(spec.key)
        result = JobResult(key=spec.key, submission=spec.submission, model=spec.model, digest=spec.digest,
                           fingerprint=spec.fingerprint(), status="error", engine=self.engine, host=os.uname().nodename,
                           gpu_type=spec.gpu, visible_devices=env.get("CUDA_VISIBLE_DEVICES"),
                           command=jobs.build_command(spec, python), out_dir=str(out), log=str(out / jobs.LOG_FILE),
                           started=jobs._now(), runner="pool", cpu_threads=self.cpu_threads, run=spec.run,
                           student=spec.student)
        t0 = time.monotonic()
        cost: dict[str, float] = {}
        try:
            self._run(spec, result, cost)
        except (ProfconvError, WorkerDied) as exc:
            result.status, result.reason = ("lost" if isinstance(exc, WorkerDied) else "error"), str(exc).splitlines()[0][:300]
        result.cost = cost
        result.wall_s = round(time.monotonic() - t0, 3)
        result.ended = jobs._now()
        if jobs._stopping.is_set():  # its child was ended by Ctrl-C or SIGTERM: not its verdict
            result.status, result.reason = "lost", "interrupted (Ctrl-C): runs again on the next grade"
            self._pending.pop(spec.key, None)
        return result

    def _run(self, spec: JobSpec, result: JobResult, cost: dict[str, float]) -> None:
        from profconv.run.user import manifest as user_manifest
        from profconv.run.variants import VARIANTS

        out = Path(spec.out_dir)
        with (out / jobs.LOG_FILE).open("w") as log:
            log.write(f"# the grade worker's equivalent of: {shlex.join(result.command)}\n")
        try:
            decls = user_manifest.load_many([spec.path], None, {v.name for v in VARIANTS})
        except ProfconvError as exc:
            result.reason = f"the submission cannot be run: {str(exc).splitlines()[0][:280]}"
            return
        if self.builds is not None and not self.dry_run:
            for d in decls:
                self.builds.submit(spec.digest, d)
        first = self.zygote is None and not self.dry_run
        t0 = time.monotonic()
        where, meta, cost["bundle_s"] = self.bundle(spec)
        if time.monotonic() - t0 - cost["bundle_s"] > 0.01:  # waited while another job of this GPU made it
            cost["bundle_wait_s"] = round(time.monotonic() - t0 - cost["bundle_s"], 3)
        if first and self.zygote is not None:
            cost["startup_s"] = round(self.zygote.imports_s, 3)
        self._pending[spec.key] = (decls, meta, [self._kernel(spec, d, where, cost) for d in decls])
        result.status = "finished"  # its kernels ran; complete() judges them and writes the record

    def complete(self, spec: JobSpec, result: JobResult) -> JobResult:
        """The part of a job that needs no GPU: each kernel's verdict by the course's rules (its child's CUPTI
        records, its build's SASS), then run.json; the result's exit code as `profconv run`'s."""
        pending = self._pending.pop(spec.key, None)
        if pending is None or result.status != "finished":
            return result
        decls, meta, raw = pending
        t = time.monotonic()
        raw = [(res.get() if isinstance(res, _Later) else res, *rest) for res, *rest in raw]
        t0 = time.monotonic()
        rows = [judged(res, spec, records, build_dir) if judge else res for res, records, build_dir, judge in raw]
        t1 = time.monotonic()
        self._write_record(spec, decls, meta, rows, result)
        result.cost = {**result.cost, "tail_s": round(t0 - t, 3), "judge_s": round(t1 - t0, 3),
                       "record_s": round(time.monotonic() - t1, 3)}
        result.record = str(Path(spec.out_dir) / jobs.RECORD_FILE)
        result.returncode = 1 if any(r.status == "failed" for r in rows) else 0
        env = meta.get("environment") or {}
        result.gpu, result.driver = env.get("gpu"), str(env["driver_version"]) if env.get("driver_version") else None
        result.profconv_version = env.get("profconv_version")
        return result

    def _write_record(self, spec: JobSpec, decls: list, meta: dict[str, Any], rows: list, result: JobResult) -> None:
        from profconv.grade import runrecord
        from profconv.io import write_atomic

        kernel_timeout = spec.kernel_timeout_s or DEFAULT_KERNEL_TIMEOUT_S
        record = runrecord.build(["profconv", *result.command[3:]], spec.model, image_count(spec), spec.variant,
                                 spec.timed_repeat, spec.data, spec.weights,
                                 [str(d.source or d.where) for d in decls], kernel_timeout, meta,
                                 [runrecord.reference_row(meta), *rows], self.dry_run, spec.ci_target,
                                 spec.time_budget_s)
        write_atomic(Path(spec.out_dir) / jobs.RECORD_FILE, record.to_json())

    def _kernel_job(self, spec: JobSpec, d: Any, build_dir: Path) -> Any:
        """The kernel's KernelJob as `profconv run --kernel` makes it (session.run: its defaults, the secret
        seed's fields from $PROFCONV_SECRET_SEED), with the job's cap on its time."""
        from profconv.run.user import isolate
        from profconv.run.user import manifest as user_manifest

        return isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract, model=spec.model,
                                 images=image_count(spec), repeat=spec.timed_repeat, warmup=2, data=spec.data,
                                 weights=spec.weights,
                                 timeout=min(d.timeout or spec.kernel_timeout_s or DEFAULT_KERNEL_TIMEOUT_S,
                                             spec.cap_s or float("inf")),
                                 ci_target=spec.ci_target or None, time_budget=spec.time_budget_s,
                                 build_dir=str(build_dir),
                                 **isolate.seed_fields(os.environ.get(SECRET_ENV) or None))

    def _kernel(self, spec: JobSpec, d: Any, where: Path, cost: dict[str, float]) -> tuple[Any, Path | None, Path, bool]:
        """One of the submission's kernels, unjudged: (its VariantResult -- not recognised: FAILED at once; skipped
        in a dry run; else from its child --, its child's CUPTI records, its build folder, whether to judge it)."""
        from profconv.records import VariantResult
        from profconv.run.user import isolate
        from profconv.run.user.contracts import UserKernel

        prov = UserKernel(d).provenance()
        out = Path(spec.out_dir)
        if d.error:  # not recognised: its FAILED row, GPU or not, no child started (as profconv run)
            job = self._kernel_job(spec, d, out / "build" / d.name)
            return isolate.run_isolated(d, prov, job, lambda message: None), None, out / "build" / d.name, True
        if self.dry_run:
            return (VariantResult(image_count(spec), d.name, f"user kernel ({d.contract})", d.precision,
                                  status="skipped", error="needs CUDA and CuPy", user=prov), None, out, False)
        t0 = time.monotonic()
        built = self.builds.get(spec.digest, d) if self.builds is not None else None
        cost["build_s"] = round(cost.get("build_s", 0.0) + time.monotonic() - t0, 3)
        job = self._kernel_job(spec, d, built.where if built is not None else out / "build" / d.name)
        res, records = self._child_result(spec, d, job, where, prov, cost)
        return res, records, Path(job.build_dir or ""), True

    def _child_result(self, spec: JobSpec, d: Any, job: Any, where: Path, prov: dict[str, Any],
                      cost: dict[str, float]) -> tuple[Any, Path]:
        """The kernel's child run to its end, its time limit or the moment it gives its GPU back: its
        VariantResult (isolate.outcome: the row a dead or hung child leaves; a _Later while the child writes
        its CUPTI records) and where those records are."""
        out = Path(spec.out_dir)
        result_file, records = out / f".child-{d.name}-result.json", out / f".child-{d.name}-cupti.json"
        log = out / f"child-{d.name}.log"
        t1 = time.monotonic()
        rc = self._run_child(out, d, job, where, alone=False)
        alone = self.gpu_lock is not None and out_of_memory(log, result_file)
        if alone:
            # out of memory on a GPU shared with another job's child, whose memory may be the cause: this
            # kernel again with the GPU to itself -- its verdict never depends on a neighbour's allocations
            if isinstance(rc, _Tail):
                rc.wait()
            log.replace(log.with_suffix(".shared.log"))
            rc = self._run_child(out, d, job, where, alone=True)
        cost["child_s"] = round(cost.get("child_s", 0.0) + time.monotonic() - t1, 3)

        def row(code: int | None) -> Any:
            res = self._outcome(out, d, job, prov, code, log, result_file)
            if alone:
                from profconv.run.user import isolate

                isolate.note(res, f"run again with its GPU to itself: out of memory beside another job's child "
                                  f"(that run's log: {log.with_suffix('.shared.log').name})")
            return res

        if isinstance(rc, _Tail):
            tail = rc
            return _Later(lambda: row(tail.wait())), records
        return row(rc), records

    def _run_child(self, out: Path, d: Any, job: Any, where: Path, alone: bool) -> int | None | _Tail:
        """The kernel's child (`alone`: holding its GPU exclusively from start to end), once more as a new
        process when CUDA refused a forked one."""
        result_file, job_file, records = (out / f".child-{d.name}-{part}.json" for part in ("result", "job", "cupti"))
        for stale in (result_file, records):
            stale.unlink(missing_ok=True)
        log = out / f"child-{d.name}.log"
        job_file.write_text(json.dumps({**asdict(job), "result": str(result_file), "bundle": str(where),
                                        "cupti": str(records), "gpu_lock": str(self.gpu_lock) if self.gpu_lock else None,
                                        "gpu_alone": alone, "gpu_steps": str(log.with_suffix(".gpusteps.json"))}))
        try:
            rc = self._child(job_file, log, where, max(1.0, job.timeout))
            if not isinstance(rc, _Tail) and self._fork_failed(log, result_file):
                result_file.unlink(missing_ok=True)  # CUDA refused a forked child: this job again, as a new process
                rc = self._child(job_file, log, where, max(1.0, job.timeout))
        finally:
            job_file.unlink(missing_ok=True)  # it holds the seed drawn from --secret-seed
        return rc

    @staticmethod
    def _outcome(out: Path, d: Any, job: Any, prov: dict[str, Any], rc: int | None, log: Path,
                 result_file: Path) -> Any:
        """The kernel's row from its ended child: its own result, or the row a dead or hung child leaves."""
        from profconv.run.user import isolate

        text = log.read_text(errors="replace") if log.is_file() else ""
        with (out / jobs.LOG_FILE).open("a") as fh:
            fh.write(text)
        partial = None
        if result_file.is_file():
            try:
                partial = json.loads(result_file.read_text())
                isolate.variant_from_dict(partial)
            except ValueError:
                partial = None
        res = isolate.outcome(job, d, prov, rc, text, partial)
        res.user = res.user or dict(prov)
        res.variant = d.name
        return res

    def _child(self, job_file: Path, log: Path, where: Path, timeout: float) -> int | None | _Tail:
        """The kernel's child, forked by the zygote (or started anew when forking is unsafe): its exit code,
        None when it was killed at the time limit, or the child itself once it gave its GPU back (_Tail)."""
        z = self._zygote()
        if z.cuda_loaded:
            return self._spawn(job_file, log, timeout)
        with self._ids:
            self._next_id += 1
            job_id = self._next_id
        pid = z.fork(job_id, job_file, log, where)
        child = _Tail(z, job_id, pid, log, timeout)
        try:
            if child.stopped:
                _kill_group(pid)
            rc = child.follow(until_released=True)
        except BaseException:
            _kill_group(pid)
            child.settle(-9)
            raise
        if rc is None and child.pending:
            self._fork_proven = True
            return child
        return child.settle(rc)

    def _fork_failed(self, log: Path, result_file: Path) -> bool:
        """Whether the first forked children show that CUDA cannot start in a child of this zygote (its
        initialisation refused before any step, in the log or the child's own row): then every later child
        is a new process. A forked child that reached its first step proves the fork."""
        z = self.zygote
        if z is None or z.cuda_loaded or self._fork_proven:
            return False
        text = log.read_text(errors="replace") if log.is_file() else ""
        if "profconv-progress" in text:
            self._fork_proven = True
            return False
        try:
            text += str(json.loads(result_file.read_text()).get("error") or "")
        except (OSError, ValueError, AttributeError):
            pass
        if CUDA_INIT_FAILED.search(text):
            z.cuda_loaded = True
            return True
        return False

    def _spawn(self, job_file: Path, log: Path, timeout: float) -> int | None:
        with log.open("wb") as fh:
            proc = subprocess.Popen([self.python or sys.executable, "-m", "profconv.grade.child", str(job_file)],
                                    stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**self.env(), "PYTHONUNBUFFERED": "1"}, start_new_session=True)
        with jobs._running_lock:
            jobs._running.add(proc)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
            return None
        except BaseException:
            _kill_group(proc.pid)
            raise
        finally:
            with jobs._running_lock:
                jobs._running.discard(proc)
