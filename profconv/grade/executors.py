"""Executors behind one interface: run JobSpecs, hand each JobResult back as it arrives.

- `local`: a process per job on this host, one job per GPU at a time (never two timed jobs on one
  GPU); `dry_run` runs the jobs on CPU workers with no GPU visible.
- `slurm` (grade.slurm): submitit job arrays, one GPU per task, the parallelism cap, the time limit,
  states from squeue, cancellation on Ctrl-C, requeue on node failure, several jobs per task;
- `ray`: `ray.remote(num_gpus=1)` tasks, `accelerator_type` placement from the submission's GPU
  type, `max_retries` for lost workers; a task runs the job in its Ray worker process's grade worker
  (grade.pool: each kernel in a child of its own, so no two kernels share a CUDA context), kept
  between the tasks Ray gives that process.

Every executor calls `jobs.run_job` in its worker; none of them schedules GPUs by hand beyond the
local executor's one-job-per-GPU slots -- Slurm and Ray place the tasks.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from profconv.errors import InputError
from profconv.grade import gpus as gpus_mod
from profconv.grade.builds import BuildCache, query_arch
from profconv.grade.caps import StudentBudget
from profconv.grade.jobs import JobResult, JobSpec, Reporter, execute, finish, not_run, start_all, stop_all
from profconv.grade.pool import PoolWorker, poolable
from profconv.grade.slurm import SlurmExecutor  # noqa: F401 (grade.executors is where the engines are found)

OnResult = Callable[[JobResult], None]
ENGINES = ("local", "slurm", "ray")


SIGNAL_POLL_S = 0.2  # the main thread's longest wait: a Ctrl-C or SIGTERM is acted on within this


class Executor(Protocol):
    name: str

    def describe(self) -> dict[str, Any]:
        """Engine name, version and options, for the manifest."""
        ...

    def run(self, specs: list[JobSpec], on_result: OnResult) -> None:
        """Run every spec; call on_result (in the calling thread) once per spec, whatever happened."""
        ...


class _Slots:
    """The local executor's GPUs: a job takes a free GPU of its type and gives it back when it ends."""

    def __init__(self, slots: list[gpus_mod.Gpu]) -> None:
        self._free = list(slots)
        self._cond = threading.Condition()

    @contextmanager
    def take(self, gpu_type: str | None) -> Iterator[gpus_mod.Gpu]:
        with self._cond:
            while True:
                slot = next((s for s in self._free if gpus_mod.matches(gpu_type, s.name)), None)
                if slot is not None:
                    self._free.remove(slot)
                    break
                self._cond.wait()
        try:
            yield slot
        finally:
            with self._cond:
                self._free.append(slot)
                self._cond.notify_all()


class LocalExecutor:
    """A job at a time per GPU on this host (dry run: per CPU worker). With a `cache` directory, each GPU
    has a grade worker (grade.pool: model bundles, builds ahead on the CPU, a child per job forked from
    a warm zygote), which runs `jobs_per_gpu` jobs at once, their timed calls one at a time
    (run.user.gpushare); without one, or for a job the pool does not take, each job is a `profconv run`
    process, alone on its GPU."""

    name = "local"

    def __init__(self, gpus: list[gpus_mod.Gpu] | None = None, dry_run: bool = False, workers: int = 1,
                 python: str | None = None, cache: Path | None = None, logs: Path | None = None,
                 reporter: Reporter | None = None, budget: StudentBudget | None = None,
                 on_start: Callable[[JobSpec, str], None] | None = None, jobs_per_gpu: int = 0) -> None:
        if dry_run:
            self.slots = [gpus_mod.Gpu(f"cpu{i}", "cpu (dry run)") for i in range(max(1, workers))]
        else:
            found = gpus_mod.query() if gpus is None else gpus
            if not found:
                raise InputError("the local executor found no GPU (nvidia-smi lists none): give --gpus, or "
                                 "--dry-run to run the jobs on the CPU without timing a kernel")
            self.slots = found
        self.dry_run = dry_run
        self.python = python
        # the host's cores split between the jobs running at once (each job's float64 reference,
        # NumPy and PyTorch would otherwise each start a thread per core)
        # jobs at once per GPU (--jobs-per-gpu; 0: by its memory and the host's cores, gpus.jobs_per_gpu): with
        # the pool only, where the children share the GPU through run.user.gpushare -- checks side by side, each
        # timed phase alone
        cores = (os.cpu_count() or 1) // max(1, len(self.slots))
        self.per_gpu = {s.index: 1 if dry_run or cache is None else gpus_mod.jobs_per_gpu(s, jobs_per_gpu, cores)
                        for s in self.slots}
        self.cpu_threads = max(1, (os.cpu_count() or 1) // sum(self.per_gpu.values()))
        self.cache, self.logs, self.reporter = cache, logs or (cache / "logs" if cache else None), reporter
        self.budget, self.on_start = budget, on_start  # --student-gpu-seconds; the queue's "running" (device)
        self._workers: dict[str, PoolWorker] = {}
        self._lock = threading.Lock()
        self.builds: BuildCache | None = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": None,
                "options": {"dry_run": self.dry_run, "slots": [f"{s.index}: {s.name}" for s in self.slots],
                            "jobs_per_gpu": {s.index: self.per_gpu[s.index] for s in self.slots},
                            "cpu_threads_per_job": self.cpu_threads, "pool": self.cache is not None,
                            **({"cache": str(self.cache)} if self.cache is not None else {})}}

    def _worker(self, slot: gpus_mod.Gpu) -> PoolWorker:
        with self._lock:
            if slot.index not in self._workers:
                assert self.cache is not None and self.logs is not None
                uuid = None if self.dry_run else gpus_mod.uuid(slot.index)
                self._workers[slot.index] = PoolWorker(
                    visible=None if self.dry_run else slot.index, dry_run=self.dry_run, cache=self.cache,
                    logs=self.logs, builds=self.builds, cpu_threads=self.cpu_threads, engine=self.name,
                    python=self.python, device_id=uuid,
                    gpu_lock=None if self.dry_run else Path(gpus_mod.lock_path(uuid or f"gpu{slot.index}")))
                self._workers[slot.index].start()
            return self._workers[slot.index]

    def _one(self, slots: _Slots, spec: JobSpec) -> JobResult:
        # the GPU is held while the job's kernel runs; the report (CPU only) is written after it is
        # given back, so the next job starts on it meanwhile
        with slots.take(spec.gpu if not self.dry_run else None) as slot:
            admitted = self.budget.admit(spec) if self.budget is not None else spec
            if admitted is None:  # its student's GPU seconds are used up
                assert self.budget is not None
                return not_run(spec, "capped", self.budget.reason(spec), self.name)
            if self.on_start is not None:
                self.on_start(spec, slot.index)
            worker = self._worker(slot) if self.cache is not None and poolable(admitted) else None
            if worker is not None:
                result = worker.execute(admitted)
            else:
                result = execute(admitted, engine=self.name, engine_job_id=None,
                                 visible_devices=None if self.dry_run else slot.index, python=self.python,
                                 cpu_threads=self.cpu_threads)
            if self.budget is not None:
                self.budget.charge(admitted, result)
        if worker is not None:  # the verdict and run.json need no GPU: the next job has it already
            result = worker.complete(admitted, result)
        return finish(admitted, result, self.python, self.reporter)

    def _start_builds(self, specs: list[JobSpec]) -> None:
        """nvcc for every submission that needs it, on the CPU cores, ahead of its turn on a GPU."""
        if self.cache is None or self.dry_run:
            return
        self.builds = BuildCache(self.cache, query_arch(self.slots[0].index),
                                 max(1, (os.cpu_count() or 2) - len(self.slots)))
        self.builds.ahead([(s.digest, s.path) for s in specs if poolable(s)])

    def close(self) -> None:
        """End the slots' grade workers and the build threads."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.close()
        if self.builds is not None:
            self.builds.close()

    def run(self, specs: list[JobSpec], on_result: OnResult) -> None:
        start_all()
        runnable = []
        for spec in specs:
            if not self.dry_run and not any(gpus_mod.matches(spec.gpu, s.name) for s in self.slots):
                on_result(not_run(spec, "unplaced", f"no {spec.gpu} GPU here (this host has "
                                  f"{', '.join(sorted({s.name for s in self.slots}))})", self.name))
            else:
                runnable.append(spec)
        if not runnable:
            return
        if self.cache is not None and not self.dry_run:
            gpus_mod.check_lock_folder()  # the children of a GPU share it through lock files (run.user.gpushare)
        self._start_builds(runnable)
        # a job the pool does not take runs as a process of its own, outside the GPU's sharing: alone on its GPU
        shared = all(self.cache is not None and poolable(s) for s in runnable)
        most = max(self.per_gpu.values()) if shared else 1
        taken = [s for r in range(most) for s in self.slots if self.per_gpu[s.index] > r]  # every GPU, then again
        slots = _Slots(taken)
        # three threads a slot: a job whose child gave the GPU back (its CUPTI records still being written, then
        # its verdict and report) no longer holds it; the next one takes it, and the one after is ready to
        pool = ThreadPoolExecutor(max_workers=3 * len(taken), thread_name_prefix="grade")
        finished: queue.SimpleQueue = queue.SimpleQueue()
        try:
            futures = {}
            for spec in runnable:
                fut = pool.submit(self._one, slots, spec)
                futures[fut] = spec
                fut.add_done_callback(finished.put)
            # waited on in a C queue, not `as_completed`: a Ctrl-C or SIGTERM raised inside as_completed's
            # taking of every future's lock left some held, and the job thread that then finished hung on it;
            # and in short waits: a SIGTERM the kernel delivers to a job's thread only sets a flag that the main
            # thread acts on when it next runs -- an endless wait saw it when the job ended (grade alive 30 s
            # after SIGTERM: once on CI, once in the full suite here under load)
            for _ in futures:
                fut = _next(finished)
                try:
                    result = fut.result()
                except Exception as exc:  # run_job raised: the job directory is unwritable, …
                    result = not_run(futures[fut], "lost", f"{type(exc).__name__}: {exc}", self.name)
                on_result(result)
        except BaseException:  # Ctrl-C: end the running jobs, start no more
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise
        finally:
            pool.shutdown(wait=True)


def _next(finished: queue.SimpleQueue) -> Any:
    """The next finished future, waited for in steps short enough for a signal handler to run between them."""
    while True:
        try:
            return finished.get(timeout=SIGNAL_POLL_S)
        except queue.Empty:
            continue


_RAY_WORKERS: dict[tuple[str, bool, str], PoolWorker] = {}  # per Ray worker process: its grade workers


def _ray_worker(cache: str, dry_run: bool, logs: Path) -> PoolWorker:
    """The grade worker of this Ray worker process for the GPU Ray gave it (Ray reuses its worker processes
    between tasks, so the zygote and the bundles it holds outlive one job)."""
    visible = (os.environ.get("CUDA_VISIBLE_DEVICES") or "").split(",")[0]
    key = ("" if dry_run else visible, dry_run, cache)
    if key not in _RAY_WORKERS:
        _RAY_WORKERS[key] = PoolWorker(visible=None, dry_run=dry_run, cache=Path(cache), logs=logs, engine="ray",
                                       device_id=None if dry_run else gpus_mod.uuid(visible or None))
    return _RAY_WORKERS[key]


def _ray_gpu_task(spec: JobSpec, cache: str | None = None) -> JobResult:
    """What a Ray GPU task runs, on the GPU Ray gave it (Ray sets CUDA_VISIBLE_DEVICES): the job in this
    worker process's grade worker (grade.pool) when `cache` is given and the pool takes it, else its
    `profconv run` in a subprocess."""
    import ray

    ctx = ray.get_runtime_context()
    if cache is not None and poolable(spec):
        worker = _ray_worker(cache, spec.dry_run, Path(spec.out_dir).parents[2] / "workers")
        result = worker.complete(spec, worker.execute(spec))
        result.engine_job_id = ctx.get_task_id()
        return result
    return execute(spec, engine="ray", engine_job_id=ctx.get_task_id())


def _ray_finish_task(spec: JobSpec, result: JobResult, reporter: Reporter | None = None) -> JobResult:
    """What a Ray CPU task runs once the GPU task returned: the report and job.json (no GPU held)."""
    return finish(spec, result, reporter=reporter)


class RayExecutor:
    """`ray.remote(num_gpus=1)` tasks, placed by accelerator type, retried when a worker is lost; the
    report of each job is a CPU task chained on the GPU task's result, so no GPU waits on it."""

    name = "ray"
    CANCEL_GRACE_S = 10.0
    LOCAL_OBJECT_STORE = 256 * 2**20

    def __init__(self, address: str | None = None, retries: int = 2, dry_run: bool = False,
                 init_kwargs: dict[str, Any] | None = None, cache: Path | None = None,
                 reporter: Reporter | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise InputError("the ray executor needs Ray: pip install 'profconv[grade-ray]'") from None
        self.ray, self.address, self.retries, self.dry_run = ray, address, retries, dry_run
        self.init_kwargs = init_kwargs or {}
        self.cache, self.reporter = cache, reporter  # the pool's cache (a file system every node sees)
        self.cluster: dict[str, Any] = {}
        self._started = False

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.ray.__version__,
                "options": {"address": self.address or "local instance", "retries": self.retries,
                            "pool": self.cache is not None,
                            "dry_run": self.dry_run, **({"cluster": self.cluster} if self.cluster else {})}}

    def _accelerator(self, wanted: str | None, available: list[str]) -> str | None:
        if not wanted:
            return None
        return next((a for a in available if a.lower() == wanted.lower()), None)

    def _init(self) -> None:
        ray = self.ray
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **self.init_kwargs}
        if os.environ.get("PROFCONV_SECRET_SEED"):  # --secret-seed: the tasks' processes get it as the local ones do
            kwargs.setdefault("runtime_env", {"env_vars": {"PROFCONV_SECRET_SEED": os.environ["PROFCONV_SECRET_SEED"]}})
        if self.address is None and not os.environ.get("RAY_ADDRESS"):
            # a local instance of our own: no usage report sent from a grading host, and an object
            # store sized for what travels (job specs and results of a few kB), not 30% of the RAM
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            kwargs.setdefault("object_store_memory", self.LOCAL_OBJECT_STORE)
        try:
            ray.init(address=self.address, **kwargs)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise InputError(f"cannot reach the Ray cluster {self.address or '(local)'}: {exc}") from None

    def close(self) -> None:
        """Shut down the Ray instance this executor started (one the caller started is left running)."""
        if self._started:
            self.ray.shutdown()
            self._started = False

    def run(self, specs: list[JobSpec], on_result: OnResult) -> None:
        """Run the specs; an instance started here stays up for the next run (the warm-up, then the
        jobs) until `close`, or until this run is interrupted."""
        ray = self.ray
        if not ray.is_initialized():
            self._init()
            self._started = True
        refs: dict[Any, JobSpec] = {}
        gpu_refs: list[Any] = []
        try:
            resources = ray.cluster_resources()
            types = [k.split(":", 1)[1] for k in resources if k.startswith("accelerator_type:")]
            self.cluster = {"GPU": resources.get("GPU", 0), "CPU": resources.get("CPU", 0),
                            "accelerator_types": types, "nodes": len([n for n in ray.nodes() if n.get("Alive")])}
            if not self.dry_run and resources.get("GPU", 0) < 1:
                raise InputError("the Ray cluster has no GPU (ray.cluster_resources() lists none): "
                                 "use --dry-run to run the jobs on CPUs")
            gpu_task = ray.remote(num_cpus=1, num_gpus=0 if self.dry_run else 1, max_retries=self.retries,
                                  retry_exceptions=True)(_ray_gpu_task)
            finish_task = ray.remote(num_cpus=1, num_gpus=0, max_retries=self.retries,
                                     retry_exceptions=True)(_ray_finish_task)
            for spec in specs:
                accel = None if self.dry_run else self._accelerator(spec.gpu, types)
                if spec.gpu and not self.dry_run and accel is None:
                    on_result(not_run(spec, "unplaced", f"no {spec.gpu} GPU in the Ray cluster (accelerator "
                                      f"types: {', '.join(types) or 'none'})", self.name))
                    continue
                cache = str(self.cache) if self.cache is not None else None
                ran = (gpu_task.options(accelerator_type=accel).remote(spec, cache) if accel
                       else gpu_task.remote(spec, cache))
                gpu_refs.append(ran)
                refs[finish_task.remote(spec, ran, self.reporter)] = spec
            pending = list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1, timeout=SIGNAL_POLL_S)  # a signal acted on
                for ref in done:
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # the worker died more often than max_retries, …
                        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                        result = not_run(refs[ref], "lost", f"Ray: {first[:200]}", self.name)
                    on_result(result)
        except BaseException:  # Ctrl-C: a cancelled task's worker gets KeyboardInterrupt and ends its job's
            if refs:           # process group (jobs.execute) before the instance goes
                for ref in [*gpu_refs, *refs]:
                    ray.cancel(ref)
                ray.wait(gpu_refs, num_returns=len(gpu_refs), timeout=self.CANCEL_GRACE_S)
            self.close()
            raise
