"""`GradeSession`: a whole class graded as a library call (what `profconv grade` does).

    from profconv.session.grade import GradeRequest, GradeSession
    outcome = GradeSession(GradeRequest(["class/"], models=["ece408-fa20"], dry_run=True)).run()
    outcome.board          # the leaderboard (grade.leaderboard.board), ranked; repeat runs combined
    outcome.ranking        # what a course publishes (grade.ranking.ranking): rank, total, verdict, ...
    outcome.results        # every job's JobResult, in the plan's order

The request is planned (submissions, one job per submission x model x repeat run, resume of what
finished on the same submission hash), the jobs run on the chosen executor (local: a grade worker per
GPU, grade.pool; slurm; ray), and the grade directory gets its manifest, queue, leaderboards
(md, csv, html), ranking.csv and, with `previous` grades, history.csv. Callbacks: `progress` after each
job ("[i/N] key status"), `result` with each JobResult, `note` for what the CLI prints as it goes
(kept jobs, the warm-up, the class's time), `stop` to end it as Ctrl-C does. Ctrl-C, SIGTERM (in the
main thread) or `stop`: every running job is ended (Slurm: its arrays cancelled), the manifest keeps
what finished, and profconv.errors.Interrupted is raised; the same request later runs the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from profconv.errors import InputError, Interrupted
from profconv.grade import executors as ex
from profconv.grade import hostload, leaderboard, manifest, ranking
from profconv.grade.caps import MIN_JOB_S, StudentBudget
from profconv.grade.gpus import Gpu, query
from profconv.grade.jobs import GRADE_CI_TARGET, GRADE_TIME_BUDGET_S, JobResult, JobSpec, not_run, validate_template
from profconv.grade.pool import poolable
from profconv.grade.queue import Queue
from profconv.grade.schedule import Schedule, schedule
from profconv.grade.submissions import Submission, discover
from profconv.io import write_atomic
from profconv.session.events import Callbacks, Note

ENGINES = ex.ENGINES
SECRET_ENV = "PROFCONV_SECRET_SEED"


@dataclass
class GradeRequest:
    """What `profconv grade` does, as data (the options of the same names)."""

    submissions: list[str]
    models: list[str] = field(default_factory=lambda: ["ece408-high"])
    out: Path = Path("grade")
    executor: str = "local"
    timeout: float = 900.0
    dry_run: bool = False
    gpus: str | None = None
    workers: int = 1
    jobs_per_gpu: int = 0  # with the pool (local; a Slurm task's jobs): at once per GPU (0: two on >= 40 GiB, else one)
    images: str | None = None
    repeat: int | None = None  # timed calls per layer at least (None: grade.jobs.GRADE_REPEAT)
    ci_target: float = GRADE_CI_TARGET
    time_budget: float = GRADE_TIME_BUDGET_S
    kernel_timeout: float | None = None
    data: Path | None = None
    weights: Path | None = None
    profile: str | None = None
    sanitize: bool = False
    course: str | None = None
    variant: str = "cudnn"
    job_command: str | None = None
    warmup: bool | None = None
    report: bool = True
    retry_failed: bool = False
    force: bool = False
    parallelism: int = 16
    partition: str | None = None
    slurm_setup: list[str] = field(default_factory=list)
    slurm_cluster: str | None = None
    cpus_per_task: int = 4
    constraint: str | None = None
    slurm_params: dict[str, Any] = field(default_factory=dict)
    jobs_per_task: int = 1
    ray_address: str | None = None
    retries: int = 2
    previous: list[Path] = field(default_factory=list)
    pool: bool = True
    cache: Path | None = None
    runs: int = 1  # repeat runs per submission x model
    combine: str = "best"  # best | mean of the runs
    secret_seed: str | None = None  # hidden inputs: handed to the jobs as $PROFCONV_SECRET_SEED, never recorded
    job_gpu_seconds: float | None = None
    student_gpu_seconds: float | None = None
    regression: float = ranking.REGRESSION
    argv: list[str] | None = None

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.previous = [Path(p) for p in self.previous]

    def check(self) -> None:
        if self.executor not in ENGINES:
            raise InputError(f"--executor takes one of {', '.join(ENGINES)}, not {self.executor!r}")
        if (self.timeout <= 0 or self.workers < 1 or self.parallelism < 1 or self.retries < 0
                or self.cpus_per_task < 1 or self.runs < 1 or self.jobs_per_task < 1 or self.jobs_per_gpu < 0):
            raise InputError("--timeout, --workers, --parallelism, --cpus-per-task, --runs and --jobs-per-task must "
                             "be positive, --retries and --jobs-per-gpu >= 0")
        if self.combine not in leaderboard.COMBINE:
            raise InputError(f"--combine takes {' or '.join(leaderboard.COMBINE)}, not {self.combine!r}")
        for cap, what in ((self.job_gpu_seconds, "--job-gpu-seconds"), (self.student_gpu_seconds, "--student-gpu-seconds")):
            if cap is not None and cap < MIN_JOB_S:
                raise InputError(f"{what} must be at least {MIN_JOB_S:g} s")
        if self.job_command is not None:
            validate_template(self.job_command)
        if self.kernel_timeout is not None and not 0 < self.kernel_timeout < self.timeout:
            raise InputError(f"--kernel-timeout must be positive and below --timeout ({self.timeout:g} s)")
        for given, what in ((self.data, "--data"), (self.weights, "--weights")):
            if given is not None and not given.exists():
                raise InputError(f"{what}: no such file or directory: {given}")
        if self.course is not None:
            from profconv import judge

            judge.load(self.course)  # an unknown term is a usage error before any job starts

    def settings(self) -> manifest.JobSettings:
        secret = hashlib.sha256(self.secret_seed.encode()).hexdigest()[:16] if self.secret_seed else None
        return manifest.JobSettings(
            models=tuple(self.models) or ("ece408-high",), timeout_s=self.timeout, variant=self.variant,
            images=self.images, repeat=self.repeat, ci_target=self.ci_target, time_budget_s=self.time_budget,
            kernel_timeout_s=self.kernel_timeout,
            data=str(self.data.resolve()) if self.data else None,
            weights=str(self.weights.resolve()) if self.weights else None, profile=self.profile,
            sanitize=self.sanitize, course=self.course, job_command=self.job_command, report=self.report,
            dry_run=self.dry_run, runs=self.runs, secret=secret, job_gpu_seconds=self.job_gpu_seconds)

    def uses_pool(self) -> bool:
        return self.pool


@dataclass
class GradePlan:
    submissions: list[Submission]
    specs: list[JobSpec]
    todo: list[JobSpec]
    kept: dict[str, JobResult]
    warmup: list[JobSpec]  # the untimed warm-up runs before the jobs (empty: none)


@dataclass
class GradeOutcome:
    out: Path
    plan: GradePlan
    results: list[JobResult]
    board: pd.DataFrame
    ranking: pd.DataFrame
    history: pd.DataFrame | None
    schedule: Schedule
    notes: list[str]
    title: str
    seconds: float | None  # the jobs' wall time in this run (None: nothing ran)
    engine: dict[str, Any] = field(default_factory=dict)

    def files(self) -> dict[str, str]:
        names = ["manifest.json", "queue.json", "leaderboard.md", "leaderboard.csv", "leaderboard.html", "ranking.csv"]
        if self.history is not None:
            names.append("history.csv")
        return {n: str(self.out / n) for n in names}

    def summary(self) -> dict[str, Any]:
        """Everything `profconv grade --json` prints: the class, the jobs' cost, the board's rows."""
        ran = [r for r in self.results if r.key not in self.plan.kept]
        walls = sorted(r.wall_s for r in ran if r.wall_s is not None)
        board = self.board.astype(object).where(self.board.notna(), None)
        return {"schema": "profconv.grade-outcome", "out": str(self.out), "title": self.title,
                "submissions": len(self.plan.submissions), "jobs": len(self.plan.specs), "ran": len(ran),
                "kept": len(self.plan.kept), "seconds": self.seconds,
                "per_job_wall_s": {"median": walls[len(walls) // 2], "min": walls[0], "max": walls[-1],
                                   "sum": round(sum(walls), 3)} if walls else None,
                "statuses": {s: sum(1 for r in self.results if r.status == s) for s in sorted({r.status for r in self.results})},
                "verdicts": {str(k): int(v) for k, v in self.board["verdict"].value_counts().items()},
                "engine": self.engine, "schedule": self.schedule.to_dict(), "notes": self.notes,
                "files": self.files(), "board": board.to_dict(orient="records")}


def _local_gpus(ids: str | None) -> list[Gpu] | None:
    if ids is None:
        return None
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    if not wanted or not all(i.isdigit() for i in wanted):
        raise InputError(f"--gpus takes GPU indices such as 0,1, not {ids!r}")
    found = {g.index: g for g in query()}
    return [found.get(i, Gpu(i, "GPU (not listed by nvidia-smi)")) for i in wanted]


def cache_dir(given: Path | None) -> Path:
    """--cache, else $PROFCONV_CACHE, else $XDG_CACHE_HOME/profconv/grade, else ~/.cache/profconv/grade."""
    if given is not None:
        return given.resolve()
    if os.environ.get("PROFCONV_CACHE"):
        return Path(os.environ["PROFCONV_CACHE"]).resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "profconv" / "grade"


def write_report(record: str, markdown: str) -> bool:
    """A job's report.md from its run.json (what `profconv report RECORD --markdown FILE` writes)."""
    from profconv.render import markdown as md_renderer
    from profconv.render.document import RenderOptions
    from profconv.report.build import ReportOptions, build
    from profconv.report.inputs import load

    path = Path(markdown)
    doc = build(load([record]), ReportOptions(plots_dir=path.parent / f"{path.stem}-plots"))
    write_atomic(path, md_renderer.render(doc, RenderOptions(link_base=path.parent)))
    return True


class Reports:
    """report.md written by long-lived processes (imports paid once; matplotlib never shared between threads)."""

    def __init__(self, workers: int = 1) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def __call__(self, record: str, markdown: str) -> bool:
        return bool(self.pool.submit(write_report, record, markdown).result(timeout=300))

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _term_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class GradeSession:
    def __init__(self, request: GradeRequest, callbacks: Callbacks | None = None) -> None:
        self.request = request
        self.callbacks = callbacks or Callbacks()
        self.reports: Reports | None = None
        self.budget: StudentBudget | None = None

    # --- what will run ------------------------------------------------------------------------------
    def plan(self) -> GradePlan:
        from profconv.run.models import get_model

        req = self.request
        req.check()
        subs = discover(req.submissions)
        for name in {m for s in subs for m in (s.models or req.models)}:
            get_model(name)  # an unknown model is a usage error before any job starts
        specs = manifest.plan(subs, req.settings(), req.out)
        todo, kept = manifest.resume(specs, retry_failed=req.retry_failed, force=req.force)
        todo = manifest.longest_first(todo, [manifest.read(p) for p in req.previous])  # the longest known first
        # the pool's model bundle compiles profconv's own kernels before its jobs: the warm-up is for the others
        warm_for = [s for s in todo if not (req.uses_pool() and poolable(s))]
        warm = req.warmup
        if warm is None:
            warm = req.executor in ("local", "ray") and not req.dry_run and req.job_command is None and bool(warm_for)
        warmup = manifest.warmup_specs(warm_for or todo, req.out) if todo and warm else []
        return GradePlan(subs, specs, todo, kept, warmup)

    def _executor(self) -> ex.Executor:
        req = self.request
        out = req.out.resolve()
        cache = cache_dir(req.cache) if req.uses_pool() else None
        if req.executor == "local":
            if cache is not None and req.report:
                self.reports = Reports(max(1, min(4, (os.cpu_count() or 2) // 4)))
            return ex.LocalExecutor(gpus=_local_gpus(req.gpus), dry_run=req.dry_run, workers=req.workers, cache=cache,
                                    logs=out / "workers", reporter=self.reports, budget=self.budget,
                                    on_start=self._on_start, jobs_per_gpu=req.jobs_per_gpu)
        if req.executor == "slurm":
            extra = {"slurm_additional_parameters": dict(req.slurm_params)} if req.slurm_params else {}
            return ex.SlurmExecutor(out / "slurm", cluster=req.slurm_cluster, parallelism=req.parallelism,
                                    partition=req.partition, cpus_per_task=req.cpus_per_task, dry_run=req.dry_run,
                                    setup=req.slurm_setup, constraint=req.constraint, jobs_per_task=req.jobs_per_task,
                                    jobs_per_gpu=req.jobs_per_gpu,
                                    cache=cache, extra=extra, reporter=write_report if cache is not None else None,
                                    on_submit=lambda spec, job_id: self.queue.submitted(spec, job_id))
        return ex.RayExecutor(address=req.ray_address, retries=req.retries, dry_run=req.dry_run, cache=cache,
                              reporter=write_report if cache is not None else None)

    # --- the work -----------------------------------------------------------------------------------
    def run(self, plan: GradePlan | None = None) -> GradeOutcome:
        """Run the plan (`plan()`'s, made here when not given); the outcome, or Interrupted."""
        req, cb = self.request, self.callbacks
        plan = plan or self.plan()
        if req.student_gpu_seconds is not None:
            self.budget = StudentBudget(req.student_gpu_seconds, list(plan.kept.values()))
        previous = [self._grade_of(p) for p in req.previous]  # an unreadable one: one line, before any job
        engine = self._executor()
        self.book = book = manifest.Manifest(out=req.out, argv=self._argv(), engine=engine.describe(),
                                             submissions=plan.submissions)
        book.jobs.update(plan.kept)
        book.write()
        self.queue = Queue(req.out, plan.todo, plan.kept)
        self.queue.write()
        if plan.kept:
            cb.note(Note(f"{len(plan.kept)} job(s) finished before on the same submission hash: kept "
                         "(--retry-failed or --force to re-run)"))
        seconds = self._run_jobs(engine, plan)
        return self._outcome(plan, engine, seconds, previous)

    def _argv(self) -> list[str]:
        from profconv.run.user.isolate import redact_secret

        argv = list(self.request.argv) if self.request.argv is not None else ["profconv", *sys.argv[1:]]
        return redact_secret(argv)  # the secret seed never reaches the manifest

    def _on_start(self, spec: JobSpec, device: str) -> None:
        self.queue.start(spec, device)

    def _run_jobs(self, engine: ex.Executor, plan: GradePlan) -> float | None:
        req, cb = self.request, self.callbacks
        lock = threading.Lock()
        done = [0]

        def on_result(result: JobResult) -> None:
            with lock:
                done[0] += 1
                self.book.add(result)
                self.queue.done(result)
                cb.result(result)
                cb.progress(f"{result.key} {result.status}", done[0], len(plan.todo))
                cb.check_stop()

        previous_term = None
        if threading.current_thread() is threading.main_thread():
            # a batch system's SIGTERM (Slurm's time limit, `timeout`, kill) ends the jobs as Ctrl-C does:
            # no job process is left running on a GPU, the manifest keeps what finished
            previous_term = signal.signal(signal.SIGTERM, _term_as_interrupt)
        saved = os.environ.get(SECRET_ENV)
        if req.secret_seed is not None:  # the jobs' processes (and Slurm's, exported by sbatch) read it
            os.environ[SECRET_ENV] = req.secret_seed
        try:
            if plan.warmup:
                self._warm_up(engine, plan.warmup)
            todo = self._capped(plan.todo, on_result)
            if not todo:
                return None
            cb.note(Note(f"running {len(todo)} job(s) with the {engine.name} executor"
                         + (" (dry run: no GPU)" if req.dry_run else "")))
            t0 = time.monotonic()
            # this host's CPU and GPU use meanwhile (the local executor's jobs run here; Slurm's and Ray's do not)
            sampler = hostload.Sampler(gpus=not req.dry_run) if req.executor == "local" else None
            try:
                with sampler or contextlib.nullcontext():
                    engine.run(todo, on_result)
            finally:  # an interrupted grade keeps the load of what ran too
                if sampler is not None:
                    self.book.load = sampler.load.to_dict()
                    self.book.write()
            self.book.engine = engine.describe()  # now with what the engine found (Ray: the cluster's GPUs)
            return round(time.monotonic() - t0, 3)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted after {done[0]} of {len(plan.todo)} job(s): "
                              f"{req.out / manifest.MANIFEST} keeps them; the same command runs the rest",
                              None, req.out / manifest.MANIFEST) from None
        finally:
            if req.secret_seed is not None and saved is None:
                os.environ.pop(SECRET_ENV, None)
            elif req.secret_seed is not None and saved is not None:
                os.environ[SECRET_ENV] = saved
            if previous_term is not None:
                signal.signal(signal.SIGTERM, previous_term)
            close = getattr(engine, "close", None)
            if close is not None:
                close()
            if self.reports is not None:
                self.reports.close()
            self.queue.write()

    def _capped(self, todo: list[JobSpec], on_result) -> list[JobSpec]:
        """Slurm and Ray: each job's even share of its student's GPU seconds as its cap; a job with less
        than MIN_JOB_S left is not run (capped). The local executor admits jobs one by one instead."""
        if self.budget is None or self.request.executor == "local":
            return todo
        out = []
        for spec in self.budget.split(todo):
            if spec.cap_s is not None and spec.cap_s < MIN_JOB_S:
                on_result(not_run(spec, "capped", self.budget.reason(spec), self.request.executor))
            else:
                out.append(spec)
        return out

    def _warm_up(self, engine: ex.Executor, warm: list[JobSpec]) -> None:
        """The untimed warm-up runs (manifest.warmup_specs), before the timed jobs; a failed one is said and
        the grade goes on (the jobs then compile what it would have)."""
        t0 = time.monotonic()
        got: list[JobResult] = []
        engine.run(warm, got.append)
        self.book.warmup = got
        self.book.write()
        # a GPU type no GPU here has: its jobs come back unplaced anyway, nothing to warm
        bad = [r for r in got if r.status != "unplaced" and (r.status != "finished" or r.returncode != 0)]
        text = f"warm-up: {len(got)} untimed run(s) filled CuPy's kernel cache in {time.monotonic() - t0:.1f} s"
        if bad:
            text += f"; {len(bad)} failed ({bad[0].reason or f'exit {bad[0].returncode}'}), the jobs compile what it would have"
        self.callbacks.note(Note(text, "warning" if bad else "info"))

    # --- the leaderboard ----------------------------------------------------------------------------
    def _grade_of(self, where: Path) -> ranking.Grade:
        doc = manifest.read(where)
        lay = leaderboard.layers(manifest.results(doc, where), reference=self.request.variant)
        return ranking.Grade(where.resolve().name, doc.get("created"), leaderboard.board(lay, self.request.combine))

    def _outcome(self, plan: GradePlan, engine: ex.Executor, seconds: float | None,
                 previous: list[ranking.Grade]) -> GradeOutcome:
        req, book = self.request, self.book
        results = [book.jobs[s.key] for s in plan.specs if s.key in book.jobs]
        ran = [r for r in results if r.key not in plan.kept]
        spread = schedule(ran or results)
        book.schedule = spread.to_dict()
        book.write()
        missing = [s.key for s in plan.specs if s.key not in book.jobs]
        if missing:  # an executor that returned without reporting a job: say so, never drop it
            raise InputError(f"{len(missing)} job(s) got no result from the {engine.name} executor: "
                             f"{', '.join(missing[:5])}")
        board = leaderboard.board(leaderboard.layers(results, reference=req.variant), req.combine)
        history = None
        if previous:
            board = ranking.with_history(board, previous, req.regression)
            history = ranking.history(ranking.Grade(req.out.resolve().name, book.created, board), previous)
        runs = f", {req.runs} runs each ({req.combine})" if req.runs > 1 else ""
        title = f"Leaderboard: {len(plan.submissions)} submission(s), {len(plan.specs)} job(s){runs}"
        said = spread.lines()
        notes = [f"{'This run' if ran else 'The jobs kept'}: " + said[0], *said[1:]] if said else []
        if (host_bound := leaderboard.host_bound_note(board)) is not None:
            notes.append(host_bound)
        outcome = GradeOutcome(req.out, plan, results, board, ranking.ranking(board), history, spread, notes, title,
                               seconds, book.engine)
        self._write(outcome)
        return outcome

    def _write(self, o: GradeOutcome) -> None:
        from profconv.render import leaderboard as render

        base = o.out.resolve()
        write_atomic(o.out / "leaderboard.md", render.markdown(o.board, o.title, base=base, notes=o.notes))
        write_atomic(o.out / "leaderboard.csv", render.csv(o.board))
        write_atomic(o.out / "leaderboard.html", render.html(o.board, o.title, base=base, notes=o.notes))
        write_atomic(o.out / "ranking.csv", o.ranking.to_csv(index=False, float_format="%.6g"))
        if o.history is not None:
            write_atomic(o.out / "history.csv", o.history.to_csv(index=False, float_format="%.6g"))
