"""`profconv grade`: a class graded (profconv.session.grade.GradeSession), then the leaderboard printed.

The options become a `GradeRequest`; the session plans, runs the jobs and writes the grade directory;
this module prints the progress, the plan (--plan), the queue of a grade (--queue OUT) and the outcome
(terminal table, --format markdown|csv, --json).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from profconv.commands import comma_list
from profconv.errors import ExitStatus, InputError, Interrupted
from profconv.grade import manifest
from profconv.grade import queue as queue_mod
from profconv.grade.jobs import GRADE_CI_TARGET, GRADE_TIME_BUDGET_S, JobResult, build_command
from profconv.render import leaderboard as render
from profconv.session.events import Callbacks, Note
from profconv.session.grade import GradeOutcome, GradePlan, GradeRequest, GradeSession
from profconv.session.grade_builds import ClassBuilds, build_class
from profconv.ui import console, error_console

FORMATS = ("terminal", "markdown", "csv", "json")


def slurm_params(given: list[str]) -> dict[str, str]:
    """--slurm-param KEY=VALUE (repeatable) -> sbatch options (submitit's slurm_additional_parameters)."""
    extra: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not all(c.isalnum() or c in "-_" for c in key.strip()):
            raise InputError(f"--slurm-param takes KEY=VALUE such as qos=course or account=ece408, not {item!r}")
        extra[key.strip().replace("-", "_")] = value.strip()
    return extra


def _print_plan(plan: GradePlan, con) -> None:
    for spec in plan.warmup:
        con.print(f"warm-up, untimed [dim]({spec.model}{', GPU ' + spec.gpu if spec.gpu else ''})[/dim]")
        con.print(f"  {escape(shlex.join(build_command(spec, sys.executable)))}", soft_wrap=True)
    for spec in plan.specs:
        state = "done, kept" if spec.key in plan.kept else "to run"
        con.print(f"{escape(spec.key)} [dim]({state}{', GPU ' + spec.gpu if spec.gpu else ''})[/dim]")
        con.print(f"  {escape(shlex.join(build_command(spec, sys.executable)))}", soft_wrap=True)
    con.print(f"{len(plan.specs)} job(s): {len(plan.todo)} to run, {len(plan.kept)} finished before")


def _print_builds(b: ClassBuilds, as_json: bool, con) -> None:
    """`grade --build-only`'s outcome: the counts, then each failed build's first error line."""
    if as_json:
        print(json.dumps(b.summary(), indent=1))
        return
    n = b.counts()
    con.print(f"{len(b.builds)} kernel build(s) for {b.arch} in {b.seconds:.1f} s on {b.workers} thread(s): "
              f"{n['built']} compiled, {n['cached']} already in the cache, {n['failed']} failed; cache: "
              f"{escape(str(b.cache))}", soft_wrap=True)
    for f in (x for x in b.builds if x.built.error is not None):
        con.print(f"[red]-[/red] {escape(f.submission)} ({escape(f.kernel)}): {escape(f.built.error or '')}", soft_wrap=True)
    if n["failed"]:
        con.print("a failed build is the kernel's FAILED row when the class is graded (its child reports the "
                  "compiler's error whole)", soft_wrap=True)


def print_queue(out: Path, as_json: bool, con) -> None:
    """`profconv grade --queue OUT`: what is running, waiting, finished or failed, and how long each took."""
    from profconv.grade.slurm import squeue_states

    jobs = queue_mod.read(out)
    waiting = [j.engine_job_id for j in jobs if j.state == "waiting" and j.engine_job_id]
    s = queue_mod.summary(jobs, slurm=squeue_states(waiting) if waiting else None)
    if as_json:
        print(json.dumps(s, indent=1))
        return
    con.print(", ".join(f"{n} {k}" for k, n in s["counts"].items()) or "no jobs")
    table = Table(box=None, header_style="bold")
    for head in ("state", "job", "device", "seconds", "status / reason"):
        table.add_column(head, justify="right" if head == "seconds" else "left", overflow="fold")
    for j in s["jobs"]:
        took = f"{j['seconds']:.1f}" if isinstance(j["seconds"], (int, float)) else "—"
        why = j["status"] or ""
        if j["reason"]:
            why += f": {j['reason']}"
        table.add_row(j["state"], escape(j["key"]), escape(j["device"] or "—"), took, escape(why))
    con.print(table)


def _live(con, todo: int) -> Callbacks:
    """The terminal's callbacks: a line per job as it ends, the session's notes."""

    def result(r: JobResult) -> None:
        colour = "green" if r.status == "finished" else "red"
        where = f" on GPU {r.visible_devices} ({r.gpu})" if r.visible_devices and r.gpu else (f" on {r.gpu}" if r.gpu else "")
        wall = f" {r.wall_s:.1f} s" if r.wall_s is not None else ""
        done[0] += 1
        line = Text.from_markup(f"[{done[0]}/{todo}] {escape(r.key)} [{colour}]{r.status}[/{colour}]{wall}"
                                f"{escape(where)}" + (f" [dim]({escape(r.reason)})[/dim]" if r.reason else ""))
        if con.is_terminal:  # one line a job: its reason is given whole in the list under the leaderboard
            line.truncate(con.width, overflow="ellipsis")
        con.print(line, soft_wrap=True)

    def note(n: Note) -> None:
        con.print(f"[yellow]{escape(str(n))}[/yellow]" if n.level == "warning" else escape(str(n)), soft_wrap=True)

    done = [0]
    return Callbacks(result=result, note=note)


def _print_reasons(lines: list[str], con) -> None:
    """`- name (model): verdict: reason`, one line each in a file or a pipe; in a terminal wrapped between
    words under their own text (a long path folded), not broken mid-word by the terminal."""
    if not con.is_terminal:
        for line in lines:
            con.print(f"[red]-[/red] {escape(line)}", soft_wrap=True)
        return
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for line in lines:
        grid.add_row(Text("-", style="red"), Text(line))
    con.print(grid)


def _print_outcome(o: GradeOutcome, fmt: str, con) -> None:
    if fmt == "json":
        print(json.dumps(o.summary(), indent=1, default=str))
        return
    if fmt == "markdown":
        con.print(render.markdown(o.board, o.title, base=o.out.resolve(), notes=o.notes), markup=False,
                  highlight=False, soft_wrap=True)
        return
    if fmt == "csv":
        con.print(render.csv(o.board), markup=False, highlight=False, soft_wrap=True, end="")
        return
    ran = [r.wall_s for r in o.results if r.key not in o.plan.kept and r.wall_s is not None]
    if o.seconds is not None:
        walls = sorted(ran)
        cost = (f"; per job: median {walls[len(walls) // 2]:.1f} s, min {walls[0]:.1f} s, max {walls[-1]:.1f} s, "
                f"sum {sum(walls):.1f} s" if walls else "")
        con.print(f"{len(ran)} job(s) in {o.seconds:.1f} s{cost}")
    con.print(render.terminal(o.board, o.title, con.width))
    _print_reasons(render.reasons(o.board), con)
    if "regression" in o.board.columns:
        for _, r in o.board[o.board["regression"].fillna(False).astype(bool)].iterrows():
            con.print(f"[red]- regression:[/red] {escape(str(r['submission']))} ({escape(str(r['model']))}): "
                      f"{r['verdict']}, total x{r['vs_previous']:.2f} of the previous grade's", soft_wrap=True)
    counts = o.board["verdict"].value_counts()
    con.print(", ".join(f"{n} {v}" for v, n in counts.items()) + f" of {len(o.board)}")
    for line in o.notes:
        con.print(escape(line), soft_wrap=True)
    con.print(f"leaderboard: {o.out / 'leaderboard.md'} (.csv, .html); ranking: {o.out / 'ranking.csv'}; "
              f"manifest: {o.out / manifest.MANIFEST}")


def grade_command(
    submissions: Annotated[list[str], typer.Argument(help="Submission directories or kernel files, class directories (one submission per entry), or a CSV/TOML listing (submission, name, model, gpu, student); with --queue, grade directories.", show_default=False)],
    model: Annotated[list[str] | None, typer.Option("--model", "-m", metavar="MODEL[,MODEL]", help="Model(s) for submissions whose listing names none (repeatable or comma list).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Grade directory: manifest, queue, one directory per job, leaderboards, ranking. Re-running skips finished jobs.")] = Path("grade"),
    executor: Annotated[str, typer.Option("--executor", "-e", metavar="local|slurm|ray", help="local (a grade worker per GPU on this host), slurm (job arrays) or ray.")] = "local",
    timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds one job may take; a job past it is killed and reported as timeout.")] = 900.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Run every job with no GPU visible (CPU only): checks submissions, isolation and the leaderboard without timing a kernel.")] = False,
    plan_only: Annotated[bool, typer.Option("--plan", help="Print the jobs and their command lines; run nothing.")] = False,
    build_only: Annotated[bool, typer.Option("--build-only", help="Compile every submission's nvcc build into --cache on this host's CPU cores (a login node, the night before) and run nothing: the grade then finds them built.")] = False,
    arch: Annotated[str | None, typer.Option("--arch", metavar="sm_XX", help="With --build-only: the GPUs' architecture, e.g. sm_90 (default: this host's first GPU).")] = None,
    queue: Annotated[bool, typer.Option("--queue", help="The arguments are grade directories: print each one's queue (running now or done): every job's state, device and time; run nothing.")] = False,
    gpus: Annotated[str | None, typer.Option(metavar="I[,I]", help="local: the GPUs to use, e.g. 0,1 (default: every GPU nvidia-smi lists).")] = None,
    workers: Annotated[int, typer.Option(metavar="N", help="local --dry-run: jobs at once.")] = 1,
    jobs_per_gpu: Annotated[int, typer.Option("--jobs-per-gpu", metavar="N", min=0, help="Jobs at once on each GPU (local; slurm: of a task's --jobs-per-task), their checks side by side and each timed call alone on the GPU (default 0: one per 13 GiB of the GPU's memory and per 1.5 host cores, at most 10).")] = 0,
    images: Annotated[str | None, typer.Option("--images", "-n", metavar="N", help="Images per job (as profconv run; default: its own, 10000).")] = None,
    repeat: Annotated[int | None, typer.Option(metavar="N", help="Timed calls per layer on fresh inputs, at least (default: 3; profconv run's is 5).")] = None,
    ci_target: Annotated[float, typer.Option(metavar="FRACTION", min=0.0, max=1.0, help="More timed calls until the median's 95% interval is within ±this fraction (default 0: exactly --repeat; an interval needs 6 calls).")] = GRADE_CI_TARGET,
    time_budget: Annotated[float, typer.Option(metavar="SECONDS", min=0.001, help="Seconds of timed calls per layer at most, with --ci-target.")] = GRADE_TIME_BUDGET_S,
    runs: Annotated[int, typer.Option("--runs", metavar="N", help="Repeat runs of each submission (each its own job), combined on the leaderboard by --combine, their spread shown.")] = 1,
    combine: Annotated[str, typer.Option("--combine", metavar="best|mean", help="How the --runs of a submission make its total: the best run's, or the mean of the runs (ok only when every run is).")] = "best",
    kernel_timeout: Annotated[float | None, typer.Option("--kernel-timeout", metavar="SECONDS", help="Seconds the kernel may take in its child process (compile, sweep, checks, timing) before it is FAILED; below --timeout.")] = None,
    job_gpu_seconds: Annotated[float | None, typer.Option("--job-gpu-seconds", metavar="SECONDS", help="Cap on each submission's GPU time (its kernel's child); past it the kernel is FAILED (timed out).")] = None,
    student_gpu_seconds: Annotated[float | None, typer.Option("--student-gpu-seconds", metavar="SECONDS", help="Cap on the GPU time of all of a student's jobs in this grade (the listing's student column; else one student per submission); jobs beyond it are not run (capped).")] = None,
    secret_seed: Annotated[str | None, typer.Option("--secret-seed", metavar="TEXT", envvar="PROFCONV_SECRET_SEED", show_envvar=False, help="Hidden inputs for a final ranking: the jobs' fresh inputs and edge data come from this seed (or $PROFCONV_SECRET_SEED), never written to the grade directory.")] = None,
    data: Annotated[Path | None, typer.Option("--data", metavar="DIR", help="The dataset directory (Fashion-MNIST or CIFAR-10), for the course's Correctness.")] = None,
    weights: Annotated[Path | None, typer.Option("--weights", metavar="FILE", help="A .npz of weights.")] = None,
    profile: Annotated[str | None, typer.Option("--profile", metavar="TOOL", help="Passed to profconv run: also profile each job (cupti, ncu, nsys, nvprof).")] = None,
    sanitize: Annotated[bool, typer.Option("--sanitize", help="Passed to profconv run: also run each kernel's checks under compute-sanitizer memcheck and racecheck (an over-read or a race the output check cannot see is FAILED).")] = False,
    course: Annotated[str | None, typer.Option("--course", metavar="TERM", help="Judge each kernel by this course term's rules (sp25, fa24, sp24, minidnn, mxnet, profconv; default: the term the model implies).")] = None,
    variant: Annotated[str, typer.Option("--variant", metavar="NAME", help="Reference variant run beside each kernel (the x cuDNN column).")] = "cudnn",
    job_command: Annotated[str | None, typer.Option("--job-command", metavar="TEMPLATE", help="Replace the job's command; placeholders {python} {model} {kernel} {out} {submission} {variant}. The command must write {out}/run.json.")] = None,
    warmup: Annotated[bool | None, typer.Option("--warmup/--no-warmup", help="Before jobs run as `profconv run` processes, one untimed run per model that compiles profconv's own kernels into CuPy's cache (default: on for those jobs with the local and ray executors; the grade worker needs none).", show_default=False)] = None,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write each submission's own report.md beside its run.json.")] = True,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Re-run jobs that ended in error, timeout or crash (finished ones are kept).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Re-run every job, finished or not.")] = False,
    pool: Annotated[bool, typer.Option("--pool/--no-pool", help="A long-lived grade worker per GPU (the model's reference and cuDNN times made once, nvcc builds ahead on the CPU, each kernel in a child forked from a warm process); --no-pool: a `profconv run` process per job.")] = True,
    cache: Annotated[Path | None, typer.Option("--cache", metavar="DIR", help="The grade workers' cache (model bundles, builds), reused by later grades; on a cluster, a shared file system: default $PROFCONV_CACHE, else ~/.cache/profconv/grade.")] = None,
    parallelism: Annotated[int, typer.Option(metavar="N", help="slurm: array tasks running at once (the array's %N throttle: keep it within the course's per-user job limit).")] = 16,
    partition: Annotated[str | None, typer.Option(metavar="NAME", help="slurm: partition.")] = None,
    constraint: Annotated[str | None, typer.Option("--constraint", metavar="FEATURES", help="slurm: node features the tasks need (sbatch --constraint), e.g. 'a100|h100'.")] = None,
    slurm_param: Annotated[list[str] | None, typer.Option("--slurm-param", metavar="KEY=VALUE", help="slurm: another sbatch option, e.g. qos=course or account=ece408 (repeatable).")] = None,
    jobs_per_task: Annotated[int, typer.Option("--jobs-per-task", metavar="N", help="slurm: jobs run one after the other in one array task (its grade worker starts once).")] = 1,
    slurm_setup: Annotated[list[str] | None, typer.Option("--slurm-setup", metavar="LINE", help="slurm: a shell line run before each task, e.g. 'module load cuda' (repeatable).")] = None,
    slurm_cluster: Annotated[str | None, typer.Option("--slurm-cluster", metavar="slurm|local|debug", help="slurm: submitit cluster: slurm (default when sbatch exists), local or debug (no Slurm: for trying the path).")] = None,
    cpus_per_task: Annotated[int, typer.Option(metavar="N", help="slurm: CPUs per task.")] = 4,
    ray_address: Annotated[str | None, typer.Option(metavar="ADDRESS", help="ray: cluster address (default: $RAY_ADDRESS, else a local instance on this host's GPUs).")] = None,
    retries: Annotated[int, typer.Option(metavar="N", help="ray: retries of a task whose worker died.")] = 2,
    previous: Annotated[list[Path] | None, typer.Option("--previous", metavar="DIR", help="Earlier grade directories of the same class, oldest first (nights, milestones): each student's history (history.csv), the ratio to its last total, regressions marked; the jobs run longest first by their last wall time (repeatable).")] = None,
    regression: Annotated[float, typer.Option("--regression", metavar="FRACTION", help="With --previous: a total slower by more than this (and than its runs' spread) is a regression.")] = 0.05,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="terminal|markdown|csv|json", help="What to print (leaderboard.md, .csv, .html and ranking.csv are always written).")] = "terminal",
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON (as --format json; with --queue, the queue).")] = False,
) -> None:
    """Grade a class: each submission x model checked and timed in isolation, then the leaderboard and ranking."""
    con = console()
    if fmt not in FORMATS:
        raise InputError(f"--format takes one of {', '.join(FORMATS)}, not {fmt!r}")
    fmt = "json" if as_json else fmt
    if queue:
        for where in submissions:
            print_queue(Path(where), fmt == "json", con)
        return
    request = GradeRequest(
        submissions=list(submissions), models=list(comma_list(model, "--model")) or ["ece408-high"], out=out,
        executor=executor, timeout=timeout, dry_run=dry_run, gpus=gpus, workers=workers, jobs_per_gpu=jobs_per_gpu, images=images, repeat=repeat,
        ci_target=ci_target, time_budget=time_budget, kernel_timeout=kernel_timeout, data=data, weights=weights, profile=profile, sanitize=sanitize, course=course,
        variant=variant, job_command=job_command, warmup=warmup, report=report, retry_failed=retry_failed,
        force=force, parallelism=parallelism, partition=partition, slurm_setup=list(slurm_setup or []),
        slurm_cluster=slurm_cluster, cpus_per_task=cpus_per_task, constraint=constraint,
        slurm_params=slurm_params(slurm_param or []), jobs_per_task=jobs_per_task, ray_address=ray_address,
        retries=retries, previous=list(previous or []), pool=pool, cache=cache, runs=runs, combine=combine,
        secret_seed=secret_seed, job_gpu_seconds=job_gpu_seconds, student_gpu_seconds=student_gpu_seconds,
        regression=regression)
    quiet = fmt == "json"
    if plan_only:
        _print_plan(GradeSession(request).plan(), con)
        return
    if build_only:
        _print_builds(build_class(request, arch), fmt == "json", con)
        return
    session = GradeSession(request, Callbacks() if quiet else _live(con, 0))
    plan = session.plan()
    if not quiet:
        session.callbacks = _live(con, len(plan.todo))
    try:
        outcome = session.run(plan)
    except Interrupted as exc:
        (error_console() if quiet else con).print(escape(str(exc)), soft_wrap=True)
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    _print_outcome(outcome, fmt, con)
