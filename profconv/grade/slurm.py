"""The Slurm executor: submitit job arrays, sbatch-free from a login node.

- One array per GPU type, submitted at once; `--parallelism` is the array throttle (`%N`), which keeps a
  course within its per-user job limit (QOS MaxJobsPerUser); one GPU per task (`--gpus-per-node 1`, or
  the gres of the listing's GPU type); `--partition`, `--constraint` and any `--slurm-param key=value`
  go to sbatch; the time limit is the tasks' job time limits plus a margin.
- A task runs `jobs_per_task` jobs (default 1) with the grade worker of grade.pool when it can (the
  model bundle and builds from the shared cache): several jobs per task pay the worker's start once,
  and run `jobs_per_gpu` at once on the task's GPU (as the local executor: run.user.gpushare).
- Job states come from squeue (`SqueueWatcher`): a cluster without an accounting database (sacct
  disabled, as on a single-node test Slurm) is followed as well as one with. A task that ends without a
  result (time limit, node failure after its requeues, scancel) is `lost`; every job it finished before
  keeps its job.json.
- Ctrl-C or SIGTERM in `profconv grade` cancels the arrays (scancel): nothing of the grade stays queued
  or running; the same command later runs what did not finish (resume).
- A task whose node fails is requeued by Slurm (`--requeue`) and runs again from the start of its jobs
  (each job's job.json is rewritten when it runs again).

submitit's `local` and `debug` clusters run the same path without Slurm (tests).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.grade import gpus as gpus_mod
from profconv.grade.builds import BuildCache, query_arch
from profconv.grade.jobs import JOB_FILE, JobResult, JobSpec, Reporter, finish, not_run, read_result, run_job, start_all
from profconv.grade.pool import PoolWorker, poolable

OnResult = Any
SLURM_MARGIN_MIN = 10  # the report and the process start on top of the jobs' own time limits
POLL_S = 2.0
TERMINAL_WITHOUT_RESULT = "ended without a result"


_STATE = re.compile(r"timed.out|state: \w+|\b(TIMEOUT|NODE_FAIL|CANCELLED|OUT_OF_MEMORY|PREEMPTED|FAILED)\b")


def slurm_reason(text: str) -> str:
    """The line of submitit's error that says what Slurm did (time limit, node failure, scancel), else its
    last line that is not a log file's path (pure)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    told = next((ln for ln in lines if _STATE.search(ln)), None)
    if told is None:
        told = next((ln for ln in reversed(lines) if not ln.startswith(("- /", "/"))), "")
    return told[:200]


def squeue_states(job_ids: list[str]) -> dict[str, str]:
    """Slurm's state of each task (`123_4` -> RUNNING, PENDING, ...) from squeue; {} when squeue is absent
    or fails (the queue view then shows what the grade wrote)."""
    arrays = sorted({j.split("_")[0] for j in job_ids if j})
    if not arrays or shutil.which("squeue") is None:
        return {}
    try:
        out = subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%i|%T", "-j", ",".join(arrays)],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return {}
    pairs = (line.split("|", 1) for line in out.stdout.splitlines() if "|" in line)
    return {task.strip(): state.strip() for task, state in pairs} if out.returncode == 0 else {}


def _watcher_class(submitit: Any) -> Any:
    """A submitit watcher reading squeue: job states with or without an accounting database."""
    from submitit.slurm.slurm import SlurmInfoWatcher

    class SqueueWatcher(SlurmInfoWatcher):  # type: ignore[misc, valid-type]
        def _make_command(self) -> list[str] | None:
            to_check = sorted({x.split("_")[0] for x in self._registered - self._finished})
            if not to_check:
                return None
            return ["squeue", "-h", "-r", "--states=all", "-o", "%i|%T|%N", "-j", ",".join(to_check)]

        def read_info(self, string: bytes | str) -> dict[str, dict[str, str]]:
            text = string.decode() if isinstance(string, bytes) else string
            info = super().read_info("JobID|State|NodeList\n" + text)
            # a task squeue no longer lists (-r lists every task, pending ones too) has ended and its
            # record was purged (MinJobAge): done, and without a result file it is lost
            for job_id in self._registered - self._finished:
                info.setdefault(job_id, {"JobID": job_id, "State": "GONE", "NodeList": ""})
            return info

    return SqueueWatcher


def _task_worker(specs: list[JobSpec], cache: str) -> PoolWorker:
    """A task's grade worker on the GPU Slurm gave it, its jobs' nvcc builds started on the task's other CPUs."""
    dry = specs[0].dry_run
    visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0] or None
    builds = None
    if not dry:
        cpus = int(os.environ.get("SLURM_CPUS_PER_TASK") or os.cpu_count() or 2)
        builds = BuildCache(Path(cache), query_arch(visible), max(1, cpus - 1))
        builds.ahead([(s.digest, s.path) for s in specs if poolable(s)])
    uuid = None if dry else gpus_mod.uuid(visible)
    lock = None if dry or not (uuid or visible) else Path(gpus_mod.lock_path(uuid or f"gpu{visible}"))
    return PoolWorker(visible=None, dry_run=dry, cache=Path(cache), logs=Path(specs[0].out_dir).parents[2] / "workers",
                      builds=builds, engine="slurm", device_id=uuid, gpu_lock=lock)


def _task_share(specs: list[JobSpec], worker: PoolWorker | None, asked: int) -> int:
    """Jobs at once on the task's GPU (--jobs-per-gpu): with the pool and a GPU lock for every job, else one."""
    if worker is None or worker.dry_run or worker.gpu_lock is None or not all(poolable(s) for s in specs):
        return 1
    visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0] or None
    found = gpus_mod.query(visible) if visible and visible.isdigit() else []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()  # the task's CPUs
    return min(len(specs), gpus_mod.jobs_per_gpu(found[0] if found else gpus_mod.Gpu("?", "?"), asked, cores))


class _Ending:
    """Whether Slurm has told this task to end: SIGTERM (its node failed, it was preempted or cancelled) or
    SIGUSR2 (submitit's time-limit warning). submitit's task process handles both without ending, but the
    job it is running dies of the signal and would be recorded as `crashed` — a record the grade could read
    after the task was requeued or killed at its limit. A job killed while the task was being ended is no
    verdict: its record is removed and the task waits for Slurm's kill, so that the requeued task (or the
    grade's resume) runs it again, or it is `lost` with Slurm's reason. A job that finished is kept."""

    SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGUSR2") if hasattr(signal, n))

    def __init__(self) -> None:
        self.told = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Ending:
        if threading.current_thread() is threading.main_thread():  # submitit's debug executor: not a task
            for sig in self.SIGNALS:
                self._previous[sig] = signal.getsignal(sig)
                signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.told = True
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, frame)

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)

    def void(self, spec: JobSpec, result: JobResult) -> None:
        """A job that died with its task: its record removed, then wait to be killed (never returns)."""
        if result.status != "crashed":
            return
        (Path(spec.out_dir) / JOB_FILE).unlink(missing_ok=True)
        while True:
            time.sleep(1)


def _task(specs: list[JobSpec], cache: str | None, reporter: Reporter | None = None,
          jobs_per_gpu: int = 1) -> list[JobResult]:
    """What a Slurm (or submitit local/debug) task runs: its jobs, with Slurm's job id and GPU."""
    with _Ending() as ending:
        return _task_jobs(specs, cache, reporter, ending, jobs_per_gpu)


def _task_jobs(specs: list[JobSpec], cache: str | None, reporter: Reporter | None, ending: _Ending,
               jobs_per_gpu: int = 1) -> list[JobResult]:
    import submitit

    try:
        job_id = submitit.JobEnvironment().job_id
    except RuntimeError:  # submitit's debug executor runs in this process, with no job environment
        job_id = None
    out: list[JobResult] = []
    worker = _task_worker(specs, cache) if cache is not None and any(poolable(s) for s in specs) else None
    try:
        share = _task_share(specs, worker, jobs_per_gpu)
        if worker is not None and share > 1:
            return _shared_jobs(specs, worker, share, job_id, reporter, ending)
        for spec in specs:
            if worker is not None and poolable(spec):
                result = worker.complete(spec, worker.execute(spec))
                result.engine_job_id = job_id
                out.append(finish(spec, result, reporter=reporter))
            else:
                out.append(run_job(spec, engine="slurm", engine_job_id=job_id))
            if ending.told:
                ending.void(spec, out[-1])
    finally:
        if worker is not None:
            worker.close()
            if worker.builds is not None:
                worker.builds.close()
    return out


def _shared_jobs(specs: list[JobSpec], worker: PoolWorker, share: int, job_id: Any, reporter: Reporter | None,
                 ending: _Ending) -> list[JobResult]:
    """The task's jobs, `share` at once on its GPU (run.user.gpushare: checks side by side, timed calls
    alone); each job's verdict, record and report once its GPU part is done, while the next one starts."""
    gpu = threading.BoundedSemaphore(share)

    def one(spec: JobSpec) -> JobResult:
        with gpu:
            result = worker.execute(spec)
        result = worker.complete(spec, result)
        result.engine_job_id = job_id
        return finish(spec, result, reporter=reporter)

    out: list[JobResult] = []
    with ThreadPoolExecutor(max_workers=2 * share, thread_name_prefix="grade-task") as pool:
        for spec, fut in [(s, pool.submit(one, s)) for s in specs]:
            out.append(fut.result())
            if ending.told:
                ending.void(spec, out[-1])
    return out


class SlurmExecutor:
    """submitit job arrays: `jobs_per_task` jobs per task, one GPU per task, a parallelism cap, a time limit."""

    name = "slurm"

    def __init__(self, folder: Path, cluster: str | None = None, parallelism: int = 16,
                 partition: str | None = None, cpus_per_task: int = 4, extra: dict[str, Any] | None = None,
                 dry_run: bool = False, setup: list[str] | None = None, constraint: str | None = None,
                 jobs_per_task: int = 1, cache: Path | None = None, requeue: bool = True,
                 reporter: Reporter | None = None, on_submit: Any = None, jobs_per_gpu: int = 0) -> None:
        try:
            import submitit
        except ImportError:
            raise InputError("the slurm executor needs submitit: pip install 'profconv[grade-slurm]'") from None
        if cluster not in (None, "slurm", "local", "debug"):
            raise InputError(f"--slurm-cluster takes slurm, local or debug, not {cluster!r}")
        if cluster in (None, "slurm") and submitit.AutoExecutor.which() != "slurm":
            raise InputError("no Slurm here (sbatch is not on PATH): run profconv grade on the cluster's login node, "
                             "or --slurm-cluster local|debug to try the path without Slurm")
        if cluster == "local" and parallelism > 1 and not dry_run:
            raise InputError("submitit's local cluster shows GPU 0 to every task: use --parallelism 1 "
                             "(or the local executor, which gives each job its own GPU)")
        if jobs_per_task < 1:
            raise InputError("--jobs-per-task must be at least 1")
        self.submitit = submitit
        self.folder, self.cluster, self.parallelism = folder, cluster, parallelism
        self.partition, self.cpus_per_task, self.extra, self.dry_run = partition, cpus_per_task, extra or {}, dry_run
        self.setup, self.constraint, self.jobs_per_task = list(setup or []), constraint, jobs_per_task
        self.cache, self.requeue, self.reporter = cache, requeue, reporter  # reporter: a module-level function
        self.on_submit = on_submit  # (spec, Slurm job id of its task): the grade's queue
        self.jobs_per_gpu = jobs_per_gpu  # a task's jobs at once on its GPU (0: two on a GPU of >= 40 GiB)
        self.jobs: list[Any] = []  # what is submitted and not yet done: cancelled on Ctrl-C

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.submitit.__version__,
                "options": {"cluster": self.cluster or "auto", "parallelism": self.parallelism,
                            "partition": self.partition, "constraint": self.constraint,
                            "cpus_per_task": self.cpus_per_task, "jobs_per_task": self.jobs_per_task,
                            "jobs_per_gpu": self.jobs_per_gpu,
                            "pool": self.cache is not None, "folder": str(self.folder), "setup": self.setup,
                            **self.extra}}

    def parameters(self, spec: JobSpec, jobs: int = 1) -> dict[str, Any]:
        """submitit parameters of the array that holds `spec` (`jobs`: per task) (pure; tests check them)."""
        params: dict[str, Any] = {
            "name": "profconv-grade", "timeout_min": math.ceil(jobs * spec.timeout_s / 60) + SLURM_MARGIN_MIN,
            "tasks_per_node": 1, "nodes": 1, "cpus_per_task": self.cpus_per_task,
            "slurm_array_parallelism": self.parallelism,
        }
        if not self.dry_run:
            if spec.gpu:
                params["slurm_gres"] = f"gpu:{gpus_mod.safe_type(spec.gpu)}:1"
            else:
                params["gpus_per_node"] = 1
        if self.partition:
            params["slurm_partition"] = self.partition
        if self.constraint:
            params["slurm_constraint"] = self.constraint
        if self.setup:
            params["slurm_setup"] = list(self.setup)
        extra = dict(self.extra)
        more = dict(extra.pop("slurm_additional_parameters", None) or {})
        if self.requeue and self.cluster in (None, "slurm"):
            more = {"requeue": True, **more}
        if more:
            params["slurm_additional_parameters"] = more
        params.update(extra)
        return params

    def _chunks(self, specs: list[JobSpec]) -> list[list[JobSpec]]:
        n = self.jobs_per_task
        return [specs[i:i + n] for i in range(0, len(specs), n)]

    def _results(self, job: Any, chunk: list[JobSpec]) -> list[JobResult]:
        """A task's results; for a task that ended without one, each job's job.json when it finished
        before the end, else `lost` with Slurm's reason."""
        try:
            return list(job.result())
        except Exception as exc:  # killed by Slurm (time, node failure, scancel), …
            why = f"Slurm job {job.job_id}: {slurm_reason(str(exc)) or type(exc).__name__}"
            out = []
            for spec in chunk:
                kept = read_result(Path(spec.out_dir))
                fresh = kept is not None and kept.fingerprint == spec.fingerprint() and kept.engine_job_id == job.job_id
                out.append(kept if fresh and kept is not None else not_run(spec, "lost", why, self.name))
            return out

    def _submit(self, executor: Any, groups: list[list[JobSpec]]) -> list[tuple[Any, list[JobSpec]]]:
        submitted: list[tuple[Any, list[JobSpec]]] = []
        for group in groups:
            chunks = self._chunks(group)
            executor.update_parameters(**self.parameters(group[0], self.jobs_per_task))
            try:
                jobs = executor.map_array(_task, chunks, [str(self.cache) if self.cache else None] * len(chunks),
                                          [self.reporter] * len(chunks), [self.jobs_per_gpu] * len(chunks))
            except Exception as exc:  # sbatch refused the array (bad partition, gres, constraint, quota)
                lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
                raise InputError(f"Slurm refused the job array: {lines[-1] if lines else type(exc).__name__}") from None
            submitted += list(zip(jobs, chunks))
            self.jobs += jobs
            if self.on_submit is not None:  # the queue view: each job's Slurm task
                for job, chunk in zip(jobs, chunks):
                    for spec in chunk:
                        self.on_submit(spec, str(job.job_id))
        return submitted

    def cancel(self) -> int:
        """scancel every task of this grade still queued or running (Ctrl-C, SIGTERM)."""
        ids = sorted({str(j.job_id).split("_")[0] for j in self.jobs})
        if ids and self.cluster in (None, "slurm"):
            subprocess.run(["scancel", *ids], capture_output=True, check=False, timeout=60)
        else:
            for j in self.jobs:
                try:
                    j.cancel(check=False)
                except Exception:
                    pass
        self.jobs = []
        return len(ids)

    def run(self, specs: list[JobSpec], on_result: OnResult) -> None:
        start_all()  # submitit's debug cluster runs the jobs in this process
        groups: dict[str | None, list[JobSpec]] = {}
        for spec in specs:
            groups.setdefault(spec.gpu if not self.dry_run else None, []).append(spec)
        if self.cluster in (None, "slurm"):
            from submitit.slurm import slurm as slurm_mod

            slurm_mod.SlurmJob.watcher = _watcher_class(self.submitit)(delay_s=10)
        executor = self.submitit.AutoExecutor(folder=self.folder, cluster=self.cluster)
        # Slurm: every array (one per GPU type) is submitted at once and the cluster runs them side
        # by side. submitit's local cluster has no array throttle: it gets `parallelism` tasks per wave.
        waves: list[list[list[JobSpec]]] = [list(groups.values())]
        if self.cluster == "local":
            size = self.parallelism * self.jobs_per_task
            waves = [[g[i:i + size]] for g in groups.values() for i in range(0, len(g), size)]
        try:
            for wave in waves:
                submitted = self._submit(executor, wave)
                by_job = {id(j): chunk for j, chunk in submitted}
                for job in self.submitit.helpers.as_completed([j for j, _ in submitted], poll_frequency=POLL_S):
                    for result in self._results(job, by_job[id(job)]):
                        on_result(result)
                self.jobs = []
        except BaseException:  # Ctrl-C or SIGTERM: nothing of this grade stays queued or running
            self.cancel()
            raise
