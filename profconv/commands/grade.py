"""`profconv grade`: every submission x model as one isolated `profconv run --kernel` job, then the leaderboard."""

from __future__ import annotations

import shlex
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv.commands import comma_list
from profconv.errors import ExitStatus, InputError
from profconv.grade import executors as ex
from profconv.grade import leaderboard, manifest
from profconv.grade.gpus import Gpu, query
from profconv.grade.jobs import JobResult, build_command, validate_template
from profconv.grade.pool import poolable
from profconv.grade.schedule import schedule
from profconv.grade.submissions import discover
from profconv.io import write_atomic
from profconv.render import leaderboard as render
from profconv.run.models import get_model
from profconv.ui import console

FORMATS = ("terminal", "markdown", "csv")


def _warm_up(engine: ex.Executor, warm: list, book: manifest.Manifest, con) -> None:
    """The untimed warm-up runs (manifest.warmup_specs), before the timed jobs; a failed one is said and
    the grade goes on (the jobs then compile what it would have)."""
    t0 = time.monotonic()
    got: list[JobResult] = []
    try:
        engine.run(warm, got.append)
    except KeyboardInterrupt:
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    book.warmup = got
    book.write()
    # a GPU type no GPU here has: its jobs come back unplaced anyway, nothing to warm
    bad = [r for r in got if r.status != "unplaced" and (r.status != "finished" or r.returncode != 0)]
    con.print(f"warm-up: {len(got)} untimed run(s) filled CuPy's kernel cache in {time.monotonic() - t0:.1f} s"
              + (f"; [yellow]{len(bad)} failed ({escape(bad[0].reason or f'exit {bad[0].returncode}')}), "
                 "the jobs compile what it would have[/yellow]" if bad else ""), soft_wrap=True)


def _term_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _local_gpus(ids: str | None) -> list[Gpu] | None:
    if ids is None:
        return None
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    if not wanted or not all(i.isdigit() for i in wanted):
        raise InputError(f"--gpus takes GPU indices such as 0,1, not {ids!r}")
    found = {g.index: g for g in query()}
    return [found.get(i, Gpu(i, "GPU (not listed by nvidia-smi)")) for i in wanted]


def slurm_params(given: list[str]) -> dict[str, object]:
    """--slurm-param KEY=VALUE (repeatable) -> submitit's slurm_additional_parameters (sbatch --KEY=VALUE)."""
    extra: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not all(c.isalnum() or c in "-_" for c in key.strip()):
            raise InputError(f"--slurm-param takes KEY=VALUE such as qos=course or account=ece408, not {item!r}")
        extra[key.strip().replace("-", "_")] = value.strip()
    return {"slurm_additional_parameters": extra} if extra else {}


def cache_dir(given: Path | None) -> Path:
    """--cache, else $PROFCONV_CACHE, else $XDG_CACHE_HOME/profconv/grade, else ~/.cache/profconv/grade."""
    import os

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
    """report.md written by one long-lived process (imports paid once; matplotlib never shared between threads)."""

    def __init__(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))

    def __call__(self, record: str, markdown: str) -> bool:
        return bool(self.pool.submit(write_report, record, markdown).result(timeout=300))

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def make_executor(engine: str, out: Path, *, dry_run: bool, gpus: str | None, workers: int, parallelism: int,
                  partition: str | None, cluster: str | None, cpus_per_task: int, ray_address: str | None,
                  retries: int, setup: list[str] | None = None, cache: Path | None = None,
                  reporter=None, constraint: str | None = None, jobs_per_task: int = 1,
                  params: list[str] | None = None) -> ex.Executor:
    if engine == "local":
        return ex.LocalExecutor(gpus=_local_gpus(gpus), dry_run=dry_run, workers=workers, cache=cache,
                                logs=out / "workers", reporter=reporter)
    if engine == "slurm":
        return ex.SlurmExecutor(out / "slurm", cluster=cluster, parallelism=parallelism, partition=partition,
                                cpus_per_task=cpus_per_task, dry_run=dry_run, setup=setup, constraint=constraint,
                                jobs_per_task=jobs_per_task, cache=cache, extra=slurm_params(params or []),
                                reporter=write_report if cache is not None else None)
    if engine == "ray":
        return ex.RayExecutor(address=ray_address, retries=retries, dry_run=dry_run)
    raise InputError(f"--executor takes one of {', '.join(ex.ENGINES)}, not {engine!r}")


def grade_command(
    submissions: Annotated[list[str], typer.Argument(help="Submission directories or kernel files, class directories (one submission per entry), or a CSV/TOML listing (submission, name, model, gpu).", show_default=False)],
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="Model(s) for submissions whose listing names none (repeatable or comma list).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Grade directory: manifest, one directory per job, leaderboards. Re-running skips finished jobs.")] = Path("grade"),
    executor: Annotated[str, typer.Option("--executor", "-e", help="local (a process per job, one job per GPU), slurm (submitit job arrays) or ray.")] = "local",
    timeout: Annotated[float, typer.Option(help="Seconds one job may take; a job past it is killed and reported as timeout.")] = 900.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Run every job with no GPU visible (CPU only): checks submissions, isolation and the leaderboard without timing a kernel.")] = False,
    plan_only: Annotated[bool, typer.Option("--plan", help="Print the jobs and their command lines; run nothing.")] = False,
    gpus: Annotated[str | None, typer.Option(help="local: the GPUs to use, e.g. 0,1 (default: every GPU nvidia-smi lists).")] = None,
    workers: Annotated[int, typer.Option(help="local --dry-run: jobs at once.")] = 1,
    images: Annotated[str | None, typer.Option("--images", "-n", help="Passed to profconv run (default: its own).")] = None,
    repeat: Annotated[int | None, typer.Option(help="Passed to profconv run (default: its own).")] = None,
    kernel_timeout: Annotated[float | None, typer.Option("--kernel-timeout", help="Passed to profconv run: seconds the kernel may take in its child process (compile, sweep, checks, timing) before it is FAILED; keep it below --timeout so the job still records the reference.")] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Passed to profconv run: the dataset directory (Fashion-MNIST or CIFAR-10), for the course's Correctness.")] = None,
    weights: Annotated[Path | None, typer.Option("--weights", help="Passed to profconv run: a .npz of weights.")] = None,
    profile: Annotated[str | None, typer.Option("--profile", help="Passed to profconv run: also profile each job (cupti, ncu, nsys, nvprof).")] = None,
    sanitize: Annotated[bool, typer.Option("--sanitize", help="Passed to profconv run: also run each kernel's checks under compute-sanitizer memcheck and racecheck (an over-read or a race the output check cannot see is FAILED).")] = False,
    course: Annotated[str | None, typer.Option("--course", metavar="TERM", help="Passed to profconv run: judge each kernel by this course term's rules (sp25, fa24, sp24, minidnn, mxnet, profconv; default: the term the model implies).")] = None,
    variant: Annotated[str, typer.Option("--variant", help="Reference variant run beside each kernel (the x cuDNN column).")] = "cudnn",
    job_command: Annotated[str | None, typer.Option("--job-command", help="Replace the job's command; placeholders {python} {model} {kernel} {out} {submission} {variant}. The command must write {out}/run.json.")] = None,
    warmup: Annotated[bool | None, typer.Option("--warmup/--no-warmup", help="Before the jobs, one untimed run per model that compiles profconv's own kernels into CuPy's cache, so the first jobs on a fresh machine do not spend their --kernel-timeout on them (default: on for the local and ray executors).", show_default=False)] = None,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write each submission's own report.md beside its run.json.")] = True,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Re-run jobs that ended in error, timeout or crash (finished ones are kept).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Re-run every job, finished or not.")] = False,
    parallelism: Annotated[int, typer.Option(help="slurm: array tasks running at once (slurm_array_parallelism).")] = 16,
    partition: Annotated[str | None, typer.Option(help="slurm: partition.")] = None,
    slurm_setup: Annotated[list[str] | None, typer.Option("--slurm-setup", help="slurm: a shell line run before each task, e.g. 'module load cuda' (repeatable).")] = None,
    slurm_cluster: Annotated[str | None, typer.Option("--slurm-cluster", help="slurm: submitit cluster: slurm (default when sbatch exists), local or debug (no Slurm: for trying the path).")] = None,
    cpus_per_task: Annotated[int, typer.Option(help="slurm: CPUs per task (the float64 reference runs on them).")] = 4,
    constraint: Annotated[str | None, typer.Option("--constraint", help="slurm: node features the tasks need (sbatch --constraint), e.g. 'a100|h100'.")] = None,
    slurm_param: Annotated[list[str] | None, typer.Option("--slurm-param", help="slurm: another sbatch option as KEY=VALUE, e.g. qos=course or account=ece408 (repeatable).")] = None,
    jobs_per_task: Annotated[int, typer.Option("--jobs-per-task", help="slurm: jobs run one after the other in one array task (its grade worker starts once).")] = 1,
    ray_address: Annotated[str | None, typer.Option(help="ray: cluster address (default: $RAY_ADDRESS, else a local instance on this host's GPUs).")] = None,
    retries: Annotated[int, typer.Option(help="ray: retries of a task whose worker died.")] = 2,
    previous: Annotated[Path | None, typer.Option("--previous", help="An earlier grade directory (the previous milestone): adds each submission's ratio to its total there.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="What to print: terminal, markdown or csv (leaderboard.md, .csv and .html are always written).")] = "terminal",
    pool: Annotated[bool, typer.Option("--pool/--no-pool", help="local: a long-lived grade worker per GPU (model reference and cuDNN times made once, nvcc builds ahead on the CPU, each kernel in a child forked from a warm process); --no-pool: a `profconv run` process per job.")] = True,
    cache: Annotated[Path | None, typer.Option("--cache", help="The grade workers' cache (model bundles, builds), reused by later grades: default $PROFCONV_CACHE, else ~/.cache/profconv/grade.")] = None,
) -> None:
    """Grade a class: each submission x model as one isolated profconv run, then the leaderboard."""
    if fmt not in FORMATS:
        raise InputError(f"--format takes one of {', '.join(FORMATS)}, not {fmt!r}")
    if timeout <= 0 or workers < 1 or parallelism < 1 or retries < 0 or cpus_per_task < 1:
        raise InputError("--timeout, --workers, --parallelism and --cpus-per-task must be positive, --retries >= 0")
    if job_command is not None:
        validate_template(job_command)
    if kernel_timeout is not None and not 0 < kernel_timeout < timeout:
        raise InputError(f"--kernel-timeout must be positive and below --timeout ({timeout:g} s)")
    for given, what in ((data, "--data"), (weights, "--weights")):
        if given is not None and not given.exists():
            raise InputError(f"{what}: no such file or directory: {given}")
    models = tuple(comma_list(model, "--model")) or ("ece408-high",)
    if course is not None:
        from profconv import judge

        judge.load(course)  # an unknown term is a usage error before any job starts
    subs = discover(submissions)
    for name in {m for s in subs for m in (s.models or models)}:
        get_model(name)  # an unknown model is a usage error before any job starts
    settings = manifest.JobSettings(models=models, timeout_s=timeout, variant=variant, images=images, repeat=repeat,
                                    kernel_timeout_s=kernel_timeout,
                                    data=str(data.resolve()) if data else None,
                                    weights=str(weights.resolve()) if weights else None, profile=profile, sanitize=sanitize,
                                    course=course, job_command=job_command, report=report, dry_run=dry_run)
    prev_results = manifest.results(manifest.read(previous), previous) if previous is not None else None
    specs = manifest.plan(subs, settings, out)
    todo, kept = manifest.resume(specs, retry_failed=retry_failed, force=force)
    con = console()
    use_pool = pool and executor in ("local", "slurm")
    # the pool's model bundle compiles profconv's own kernels before its jobs: the warm-up is for the others
    warm_for = [s for s in todo if not (use_pool and poolable(s))]
    if warmup is None:
        warmup = executor in ("local", "ray") and not dry_run and job_command is None and bool(warm_for)
    if plan_only:
        if todo and warmup:
            for spec in manifest.warmup_specs(warm_for or todo, out):
                con.print(f"warm-up, untimed [dim]({spec.model}{', GPU ' + spec.gpu if spec.gpu else ''})[/dim]")
                con.print(f"  {escape(shlex.join(build_command(spec, sys.executable)))}", soft_wrap=True)
        for spec in specs:
            state = "done, kept" if spec.key in kept else "to run"
            con.print(f"{escape(spec.key)} [dim]({state}{', GPU ' + spec.gpu if spec.gpu else ''})[/dim]")
            con.print(f"  {escape(shlex.join(build_command(spec, sys.executable)))}", soft_wrap=True)
        con.print(f"{len(specs)} job(s): {len(todo)} to run, {len(kept)} finished before")
        return
    reports = Reports() if use_pool and report and executor == "local" else None
    engine = make_executor(executor, out.resolve(), dry_run=dry_run, gpus=gpus, workers=workers,
                           parallelism=parallelism, partition=partition, cluster=slurm_cluster,
                           cpus_per_task=cpus_per_task, ray_address=ray_address, retries=retries, setup=slurm_setup,
                           cache=cache_dir(cache) if use_pool else None, reporter=reports, constraint=constraint,
                           jobs_per_task=jobs_per_task, params=slurm_param)
    book = manifest.Manifest(out=out, argv=["profconv", *sys.argv[1:]], engine=engine.describe(), submissions=subs)
    book.jobs.update(kept)
    book.write()
    if kept:
        con.print(f"{len(kept)} job(s) finished before on the same submission hash: kept "
                  "(--retry-failed or --force to re-run)")
    lock = threading.Lock()
    done = 0

    def on_result(result: JobResult) -> None:
        nonlocal done
        with lock:
            done += 1
            book.add(result)
            colour = "green" if result.status == "finished" else "red"
            where = f" on {result.gpu}" if result.gpu else ""
            if result.visible_devices and result.gpu:
                where = f" on GPU {result.visible_devices} ({result.gpu})"
            wall = f" {result.wall_s:.1f} s" if result.wall_s is not None else ""
            con.print(f"[{done}/{len(todo)}] {escape(result.key)} [{colour}]{result.status}[/{colour}]{wall}{escape(where)}"
                      + (f" [dim]({escape(result.reason)})[/dim]" if result.reason else ""), soft_wrap=True)

    previous_term = None
    if threading.current_thread() is threading.main_thread():
        # a batch system's SIGTERM (Slurm's time limit, `timeout`, kill) ends the jobs as Ctrl-C does:
        # no job process is left running on a GPU, the manifest keeps what finished
        previous_term = signal.signal(signal.SIGTERM, _term_as_interrupt)
    try:
        if todo and warmup:
            _warm_up(engine, manifest.warmup_specs(warm_for or todo, out), book, con)
        if todo:
            con.print(f"running {len(todo)} job(s) with the {engine.name} executor"
                      + (" (dry run: no GPU)" if dry_run else ""))
            t0 = time.monotonic()
            try:
                engine.run(todo, on_result)
            except KeyboardInterrupt:
                con.print(f"interrupted after {done} of {len(todo)} job(s): {out / manifest.MANIFEST} keeps them; "
                          "the same command runs the rest")
                raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
            book.engine = engine.describe()  # now with what the engine found (Ray: the cluster's GPUs and nodes)
            walls = sorted(r.wall_s for k, r in book.jobs.items() if k not in kept and r.wall_s is not None)
            cost = (f"; per job: median {walls[len(walls) // 2]:.1f} s, min {walls[0]:.1f} s, max {walls[-1]:.1f} s, "
                    f"sum {sum(walls):.1f} s" if walls else "")
            con.print(f"{len(todo)} job(s) in {time.monotonic() - t0:.1f} s{cost}")
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
        close = getattr(engine, "close", None)
        if close is not None:
            close()
        if reports is not None:
            reports.close()
    results = [book.jobs[s.key] for s in specs if s.key in book.jobs]
    ran = [r for r in results if r.key not in kept]
    spread = schedule(ran or results)
    book.schedule = spread.to_dict()
    book.write()
    missing = [s.key for s in specs if s.key not in book.jobs]
    if missing:  # an executor that returned without reporting a job: say so, never drop it
        raise InputError(f"{len(missing)} job(s) got no result from the {engine.name} executor: {', '.join(missing[:5])}")
    board = leaderboard.board(leaderboard.layers(results, reference=variant))
    if prev_results is not None:
        board = leaderboard.with_previous(board, leaderboard.board(leaderboard.layers(prev_results, reference=variant)))
    title = f"Leaderboard: {len(subs)} submission(s), {len(specs)} job(s)"
    said = spread.lines()
    where = [f"{'This run' if ran else 'The jobs kept'}: " + said[0], *said[1:]] if said else []
    if (host_bound := leaderboard.host_bound_note(board)) is not None:
        where.append(host_bound)
    write_atomic(out / "leaderboard.md", render.markdown(board, title, base=out.resolve(), notes=where))
    write_atomic(out / "leaderboard.csv", render.csv(board))
    write_atomic(out / "leaderboard.html", render.html(board, title, base=out.resolve(), notes=where))
    if fmt == "markdown":
        con.print(render.markdown(board, title, base=out.resolve(), notes=where), markup=False, highlight=False,
                  soft_wrap=True)
    elif fmt == "csv":
        con.print(render.csv(board), markup=False, highlight=False, soft_wrap=True, end="")
    else:
        con.print(render.terminal(board, title, con.width))
        for line in render.reasons(board):
            con.print(f"[red]-[/red] {escape(line)}", soft_wrap=True)
        counts = board["verdict"].value_counts()
        con.print(", ".join(f"{n} {v}" for v, n in counts.items()) + f" of {len(board)}")
        for line in where:
            con.print(f"[yellow]{escape(line)}[/yellow]" if line == host_bound else escape(line), soft_wrap=True)
        con.print(f"leaderboard: {out / 'leaderboard.md'} (.csv, .html); manifest: {out / manifest.MANIFEST}")
