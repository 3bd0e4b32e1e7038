"""`profconv run`: the variant ladder on a real model, timed and checked."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from profconv import provenance
from profconv.commands import _complete, comma_list, fresh_directory, out_directory
from profconv.commands._options import Repeat, Warmup, Width
from profconv.errors import ExitStatus, GpuUnavailable, InputError, ProfilerFailed
from profconv.records import DataInfo, Environment, ModelInfo, ProfileInfo, RunRecord, RunSettings, VariantResult, struct_from
from profconv.records.provenance import Provenance
from profconv.render.format import Column, fitted_table, seconds
from profconv.run import gpu, peers
from profconv.run.models import get_model
from profconv.run.record import write_atomic
from profconv.run.user import isolate
from profconv.run.user import manifest as user_manifest
from profconv.ui import console

if TYPE_CHECKING:
    from profconv.profile.activity import Records
    from profconv.profile.external import NcuSettings

# NumPy and pandas (the runner, the variants, the profilers) are imported when the run starts, so that
# `profconv run --help` and completing a value (`--model ece<TAB>`) stay fast (tests/test_cli_text.py)
MAX_IMAGES = 1_000_000


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(t.replace("_", "")) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--images takes a number or a comma list such as 10,100,10000, not {text!r}") from None
    if not counts or any(c <= 0 for c in counts):
        raise InputError("--images must be positive")
    if any(c > MAX_IMAGES for c in counts):
        raise InputError(f"--images takes at most {MAX_IMAGES:,} images per run, not {max(counts):,}")
    if len(set(counts)) != len(counts):
        raise InputError(f"--images lists {next(c for c in counts if counts.count(c) > 1)} twice")
    return counts


def load_kernels(paths: list[str], contract: str | None) -> list[user_manifest.Declaration]:
    from profconv.run.variants import VARIANTS

    return user_manifest.load_many(paths, contract, {v.name for v in VARIANTS})


def variant_label(r: VariantResult) -> str:
    return f"{r.variant} (user)" if r.user else r.variant


def unseen_failures(failed: list[VariantResult]) -> list[str]:
    """Why each failed run failed when its per-layer rows all say ok (edge shapes, sanitizer, forward pass)."""
    return [f"{variant_label(r)} ({r.images}): {r.error}" for r in failed
            if r.error and r.conv and all(c.status == "ok" for c in r.conv)]


def user_notes(record: RunRecord) -> list[str]:
    """Each user kernel's notes (a profiler that could not cover it, a racecheck warning), one line each."""
    return [f"{variant_label(r)} ({r.images}): {n}" for r in record.results for n in (r.user or {}).get("notes", [])]


def _speedup(base: float | None, t: float | None) -> str:
    return f"{base / t:.3g}x" if base and t else "—"


def result_table(record: RunRecord, width: int = 120) -> Table:
    """Op Time per conv layer; comparison columns with nothing to compare (a CPU-only run) are left out."""
    from profconv.run.variants import VARIANTS

    VARIANTS_BY_NAME = {v.name: v for v in VARIANTS}
    by_key = {(r.images, r.variant, c.layer): c for r in record.results for c in r.conv
              if c.status == "ok" and c.op_time}
    rows: list[list] = []
    for r in record.results:
        if r.status == "skipped":
            continue  # said once above the table
        for c in r.conv:
            t = c.op_time.median_s if c.op_time else None
            naive = by_key.get((r.images, "naive", c.layer))
            reference = (VARIANTS_BY_NAME[r.variant].reference if r.variant in VARIANTS_BY_NAME and not r.user
                         else "cudnn-fp16" if r.precision == "fp16" else "cudnn")  # a user's kernel: cuDNN of its precision
            if reference in peers.BY_NAME or r.variant in peers.BY_NAME:
                prec = r.precision
                times = {n: k.op_time.median_s for (i, n, lay), k in by_key.items()
                         if i == r.images and lay == c.layer and k.op_time}
                reference = peers.best_peer(times, prec) if r.variant not in peers.BY_NAME else \
                    peers.best_per_precision(times).get(prec)
            cudnn = by_key.get((r.images, reference or "", c.layer))
            ok = c.status == "ok"
            rows.append([
                str(r.images), variant_label(r), c.layer, seconds(t),
                f"{c.op_time.ci_rel:.1%}" if c.op_time and c.op_time.ci_rel is not None else "—",
                seconds(c.op_time.min_s) if c.op_time else "—",
                str(len(c.op_time.samples_s)) if c.op_time and c.op_time.samples_s else "—",
                _speedup(naive.op_time.median_s, t) if ok and naive and naive.op_time else "—",
                _speedup(cudnn.op_time.median_s, t) if ok and cudnn and cudnn.op_time else "—",
                f"{c.rel_error:.2e}" if c.rel_error is not None else "nan",
                f"{r.correctness:.4f}" if r.correctness is not None else "—",
                Text("ok", style="green") if ok else Text.assemble(("FAILED", "red"), f": {c.error or ''}"),
            ])
    spec = [("images", "right", None), ("variant", "left", None), ("layer", "left", None), ("Op Time", "right", None),
            ("±", "right", 2), ("min", "right", 3), ("n", "right", 1), ("vs naive", "right", 4), ("vs cuDNN¹", "right", 5),
            ("rel. error", "right", 2), ("Correctness", "right", 6), ("status", "left", None)]
    columns = [Column(h, [row[i] for row in rows], justify=j, drop=d, wrap=h == "status") for i, (h, j, d) in enumerate(spec)]
    columns = [c for c in columns if c.header not in ("vs naive", "vs cuDNN¹", "±") or any(v != "—" for v in c.cells)]
    caption = "Op Time: median of the n timed runs" + (
        "; ± its 95% interval (half-width / median)" if any(c.header == "±" for c in columns) else "")
    if any(c.header == "vs cuDNN¹" for c in columns):
        caption += "\n¹ speedup over the fastest cuDNN of the same precision in this run (any layout)"
    return fitted_table(f"{record.model.name}: Op Time per conv layer", columns, width, wrap_min=12, caption=caption)


def breakdown_table(record: RunRecord, width: int = 120) -> Table:
    kinds: list[str] = []
    for r in record.results:
        for k in r.type_totals:
            if k not in kinds:
                kinds.append(k)
    ok = [r for r in record.results if r.status == "ok"]
    columns = [Column("images", [str(r.images) for r in ok]), Column("variant", [variant_label(r) for r in ok], justify="left")]
    # at a narrow width the layer types that take the least time are left out first; conv and forward stay
    small_first = sorted((k for k in kinds if k != "conv"), key=lambda k: sum(r.type_totals.get(k, 0.0) for r in ok))
    columns += [Column(k, [seconds(r.type_totals.get(k, 0.0)) for r in ok],
                       drop=small_first.index(k) + 1 if k in small_first else None) for k in kinds]
    columns.append(Column("forward", [seconds(r.forward_s) for r in ok]))
    return fitted_table("Forward pass by layer type (median)", columns, width)


def profiler_sections(record: RunRecord, path: Path) -> list:
    """The report's Nsight Compute metrics and profilers-vs-Op-Time sections of this run (`profconv
    report` shows the same tables; the CUPTI tables are printed from the profile set above)."""
    from profconv.render.document import Table as DocTable
    from profconv.report.build import ReportOptions, profile_sections
    from profconv.report.inputs import RunInput

    return [s for s in profile_sections(RunInput(path, record), ReportOptions())
            if any(isinstance(b, DocTable) and b.id in ("ncu", "agreement") for b in s.blocks)]


def _user_result(d: user_manifest.Declaration, job: isolate.KernelJob, sanitize: bool, have_gpu: bool, progress,
                 cupti_records: Path | None = None) -> tuple[VariantResult, Records | None]:
    """A user kernel checked and timed in its child process (with `cupti_records`, under CUPTI: the
    child's activity comes back to be profiled with ours; what keeps it from coming is the kernel's note)."""
    from profconv.profile import cupti_child
    from profconv.profile.activity import Records
    from profconv.run.user.contracts import UserKernel

    provenance = UserKernel(d).provenance()
    if not have_gpu:
        return VariantResult(job.images, d.name, f"user kernel ({d.contract})", d.precision, status="skipped",
                             error="needs CUDA and CuPy", user=provenance), None
    wrap = None if cupti_records is None else (lambda argv: cupti_child.wrap(cupti_records, argv))
    res = isolate.run_isolated(d, provenance, job, progress, sanitize=sanitize, wrap=wrap)
    res.variant = d.name  # the name made unique here, whatever the child read from the manifest
    records = None
    if cupti_records is not None:
        raw, why = cupti_child.read(cupti_records)
        try:
            records = Records.from_dict(raw) if raw is not None else None
        except ValueError as exc:
            why = str(exc)
        if records is None:
            isolate.note(res, f"CUPTI: {why}; its kernels are not in the CUPTI tables")
        cupti_records.unlink(missing_ok=True)
    return res, records


def _user_ncu(d: user_manifest.Declaration, job: isolate.KernelJob, res: VariantResult, tool_path: str,
              ranges: list[str], settings: NcuSettings, run_dir: Path, everything: bool,
              progress) -> tuple[object | None, dict | None]:
    """A user kernel's child re-run under ncu (`job`: one timed call, no warm-up), replaying only the
    kernels in its NVTX ranges: (ProfileSet, ncu part) or (None, None) with the reason as its note."""
    if res.status != "ok":
        isolate.note(res, "ncu: not profiled (the kernel FAILED its checks)")
        return None, None
    from profconv.profile import session
    from profconv.run.user.contracts import UserKernel

    log = run_dir / f"ncu-{d.name}.log"
    under, output = isolate.run_under(
        d, UserKernel(d).provenance(), job, progress, tag="ncu",
        wrap=lambda argv: session.external.ncu_argv(tool_path, argv, ranges, settings=settings, everything=everything))
    write_atomic(log, output)
    csv = session.ncu_csv(output)
    if under.status != "ok" or not csv:
        why = (f"its run under ncu failed: {under.error}" if under.status != "ok" else
               f"ncu profiled no kernel inside {', '.join(ranges)}")
        isolate.note(res, f"ncu: {why} (log: {log.name})")
        return None, None
    return session.ncu_part(csv, run_dir / f"ncu-{d.name}.csv", log, job.repeat + job.warmup,
                            {"tool": "ncu", "argv": session.external.ncu_argv(tool_path, [], ranges, settings=settings,
                                                                             everything=everything),
                             **settings.as_dict()}, everything)


def _sweep_plan(run_dir: Path) -> dict[str, str]:
    """Write this process's sweep choices to the run directory; the environment that hands them to a
    child run (run/sweep.py PLAN_ENV), or {} when nothing was swept."""
    import json

    from profconv.run import sweep

    plan = sweep.export_plan()
    if not plan:
        return {}
    path = run_dir / "sweep-plan.json"
    write_atomic(path, json.dumps(plan, indent=1, sort_keys=True))
    return {sweep.PLAN_ENV: str(path.resolve())}


@contextlib.contextmanager
def _environ(extra: dict[str, str]):
    """os.environ with `extra` set for the duration (a child process started inside inherits it)."""
    import os

    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_command(
    model: Annotated[str, typer.Option("--model", "-m", metavar="MODEL", autocompletion=_complete.models, help="Model to run (see `profconv models`).")] = "ece408-high",
    images: Annotated[str, typer.Option("--images", "-n", metavar="N[,N...]", help="Images to run: a number or a list such as 10,100,10000.")] = "10000",
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="NAME[,NAME...]", autocompletion=_complete.variants, help="Variants to run (repeatable or comma list; default: all; `none`: only your --kernel).")] = None,
    repeat: Repeat = 5,
    warmup: Warmup = 2,
    cpu_repeat: Annotated[int, typer.Option(metavar="N", min=1, max=1000, help="Timed repeats of the CPU reference's conv layers (median reported).")] = 3,
    data: Annotated[str | None, typer.Option("--data", metavar="DIR", help="Directory with Fashion-MNIST IDX files or CIFAR-10 batches.")] = None,
    weights: Annotated[str | None, typer.Option("--weights", metavar="FILE", help="A .npz of weights overriding the bundled ones.")] = None,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Run directory, made if missing (default: runs/MODEL-TIMESTAMP/).")] = None,
    profile: Annotated[str | None, typer.Option("--profile", metavar="TOOL[,TOOL]", help="Also profile: cupti (in-process), ncu, nsys or nvprof (re-run under the tool); cupti,ncu for both and the agreement table.")] = None,
    profile_timeout: Annotated[float, typer.Option(metavar="SECONDS", min=1.0, help="Seconds an external profiler may take.")] = 1800.0,
    show_all: Annotated[bool, typer.Option("--all", help="Profiles: also show the sweeps, checks, forward passes and profconv's own kernels, labelled (default: each variant's timed op only).")] = False,
    ci_target: Annotated[float, typer.Option(metavar="FRACTION", min=0.0, max=1.0, help="Repeat past --repeat until the median's 95% interval is within ±this fraction (0: exactly --repeat).")] = 0.01,
    time_budget: Annotated[float, typer.Option(metavar="SECONDS", min=0.001, help="Seconds of timed repeats per conv op at most, with --ci-target.")] = 2.0,
    ncu_clock_control: Annotated[str, typer.Option(metavar="none|base", help="ncu --clock-control: none (the card's own clocks, as Op Time) or base (ncu's default).")] = "none",
    ncu_cache_control: Annotated[str, typer.Option(metavar="none|all", help="ncu --cache-control: none (as Op Time) or all (flush before each replay, ncu's default).")] = "none",
    width: Width = None,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", metavar="PATH", help="Your kernel: a .cu/.cuh/.py file, a folder or a .toml manifest (repeatable). Runs in a child process next to the variants.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", metavar="CONTRACT", autocompletion=_complete.contracts, help="How to run --kernel files: device, host, course or python (default: detected).")] = None,
    kernel_timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds each --kernel may take (compile, sweep, checks, timing) before it is killed and FAILED.")] = isolate.DEFAULT_TIMEOUT_S,
    sanitize: Annotated[bool, typer.Option("--sanitize", help="Also run each --kernel's checks under compute-sanitizer memcheck and racecheck: a memcheck error or a racecheck hazard (Error) fails the kernel, with its source line; racecheck warnings are notes.")] = False,
) -> None:
    """Run each convolution variant, and your own kernels, on a model's forward pass: Op Time, check, Correctness.

    `--variant none --kernel my_conv.cu` runs only your kernel (checked against the float64 reference).
    """
    from profconv.profile import session
    from profconv.render import terminal
    from profconv.render.profile_tables import TableOptions, render
    from profconv.run import runner
    from profconv.run import weights as weights_mod
    from profconv.run.data import SYNTHETIC_NOTE
    from profconv.run.variants import cudnn_unavailable, get_variants

    m = get_model(model)
    counts = parse_counts(images)
    if repeat < 1 or warmup < 0 or cpu_repeat < 1:
        raise InputError("--repeat and --cpu-repeat must be at least 1, --warmup at least 0")
    if kernel_timeout <= 0:
        raise InputError("--kernel-timeout must be positive")
    if (contract or sanitize) and not kernel:
        raise InputError("--contract and --sanitize apply to --kernel files: name one with --kernel PATH")
    out_directory(out, "run.json")
    chosen = get_variants(comma_list(variant, "--variant") or None)
    user_kernels = load_kernels(kernel or [], contract)
    if not chosen and not user_kernels:
        raise InputError("--variant none leaves nothing to run: add --kernel PATH")
    tools = comma_list([profile], "--profile") if profile else []
    bad = [t for t in tools if t not in session.TOOLS]
    if profile is not None and (bad or not tools):
        raise InputError(f"--profile takes one of {', '.join(session.TOOLS)} (or cupti,ncu), not {profile!r}")
    external_tools = [t for t in tools if t != "cupti"]
    if len(external_tools) > 1:
        raise InputError(f"--profile: one external profiler per run, not {', '.join(external_tools)}")
    if ncu_clock_control not in session.external.CLOCK_CONTROLS or ncu_cache_control not in session.external.CACHE_CONTROLS:
        raise InputError(f"--ncu-clock-control takes {' or '.join(session.external.CLOCK_CONTROLS)}, "
                         f"--ncu-cache-control {' or '.join(session.external.CACHE_CONTROLS)}")
    ncu_settings = session.external.NcuSettings(ncu_clock_control, ncu_cache_control)
    params = weights_mod.load(m, weights)
    cp = gpu.cupy_or_none()
    con = console()
    if profile is not None and cp is None:
        raise GpuUnavailable(f"--profile {profile} needs a CUDA GPU and CuPy: {gpu.why_no_gpu()}")
    skip: dict[str, str] = {}
    if cp is None and all(v.device != "cpu" for v in chosen):
        raise GpuUnavailable(f"{', '.join(v.name for v in chosen)}: the GPU variants need CUDA and CuPy "
                             f"({gpu.why_no_gpu()}); `--variant cpu` runs the CPU reference")
    if cp is None:
        reason = gpu.why_no_gpu()
        for v in chosen:
            if v.device != "cpu":
                skip[v.name] = "needs CUDA and CuPy"
        con.print(f"[yellow]GPU variants skipped:[/yellow] they need CUDA and CuPy ({escape(reason)}); running the CPU reference only.")
        if user_kernels:
            con.print(f"[yellow]your kernels skipped:[/yellow] {', '.join(d.name for d in user_kernels)} need CUDA and CuPy.")
    elif any(v.device == "cudnn" for v in chosen) and (why := cudnn_unavailable()):
        for v in chosen:
            if v.device == "cudnn":
                skip[v.name] = f"cuDNN reference needs PyTorch with CUDA ({why})"
                con.print(f"[yellow]{v.name} skipped:[/yellow] {escape(skip[v.name])}")
    if user_kernels and any(t in ("nsys", "nvprof") for t in tools):
        con.print(f"[yellow]--profile {', '.join(external_tools)} covers the built-in variants; your kernels are profiled with "
                  "--profile cupti or ncu[/yellow]")
    if data is None:
        con.print(f"[dim]{SYNTHETIC_NOTE}[/dim]")
    stamp = datetime.now(timezone.utc)
    run_dir = out or fresh_directory(Path("runs"), f"{m.name}-{stamp.strftime('%Y%m%d-%H%M%S')}")
    env = gpu.environment(cp)
    record = RunRecord(
        argv=["profconv", *sys.argv[1:]], created=stamp.isoformat(), environment=struct_from(Environment, env),
        model=struct_from(ModelInfo, {
            "name": m.name, "semester": m.semester, "input_shape": list(m.input_shape), "spec": m.spec,
            "reference_accuracy": m.reference_accuracy,
            "conv_layers": [{"layer": layer.name, "shape": s.text()} for layer, s in m.conv_shapes(1)]}),
        data=DataInfo(source=data or "synthetic", synthetic=data is None, weights=weights or "bundled"),
        settings=RunSettings(repeat=repeat, warmup=warmup, cpu_repeat=cpu_repeat, images=counts,
                             variants=[v.name for v in chosen], ci_target=ci_target or None,
                             time_budget_s=time_budget if ci_target else None, l2="warm (the same call repeated)",
                             kernels=[str(d.source or d.where) for d in user_kernels],
                             kernel_timeout=kernel_timeout if user_kernels else None, sanitize=sanitize),
    )
    recorder = provenance.Recorder(cp)
    record.provenance = struct_from(Provenance, recorder.start())
    if env.get("gpu"):
        con.print(f"GPU: {escape(str(env['gpu']))} (compute capability {env['compute_capability']}), CuPy {env['cupy_version']}")
    ext = external_tools[0] if external_tools else None
    if "cupti" in tools:
        session.check_available("cupti", env.get("compute_capability"))
    tool_path = session.check_available(ext, env.get("compute_capability")) if ext else None
    collector = session.CuptiCollector() if "cupti" in tools else None
    child_records: list[Records] = []  # the user kernels' child processes' CUPTI activity
    builds = tempfile.TemporaryDirectory(prefix="profconv-builds-")  # each kernel's, shared by its children
    rule = gpu.StopRule(ci_target, time_budget) if ci_target > 0 else None

    def on_result(res: VariantResult) -> None:
        record.results.append(res)
        write_atomic(run_dir / "run.json", record.to_json())

    try:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20), MofNCompleteColumn(),
                      TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(), console=con, transient=True) as prog:
            task = prog.add_task("starting", total=None)

            def on_progress(message: str, done: int | None = None, total: int | None = None) -> None:
                """A step with a size (images done of total) gets a bar and an ETA; others a spinner."""
                prog.update(task, description=escape(message), completed=done or 0, total=total)
                if done is None:
                    prog.reset(task, total=None, description=escape(message))

            with collector if collector is not None else contextlib.nullcontext():
                runner.execute(m, params, chosen, counts,
                               runner.RunOptions(images=counts[0], repeat=repeat, warmup=warmup,
                                                 cpu_repeat=cpu_repeat, data_dir=data, rule=rule),
                               cp, on_progress, on_result, skip)
            for count in counts:
                for d in user_kernels:
                    job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract,
                                            model=m.name, images=count, repeat=repeat, warmup=warmup, data=data,
                                            weights=weights, timeout=d.timeout or kernel_timeout,
                                            ci_target=ci_target or None, time_budget=time_budget,
                                            build_dir=str(Path(builds.name) / d.name))
                    res, recs = _user_result(d, job, sanitize, cp is not None, on_progress,
                                             run_dir / f".cupti-{d.name}-{count}.json" if collector else None)
                    if recs is not None:
                        child_records.append(recs)
                    on_result(res)
    except KeyboardInterrupt:
        record.interrupted = True
        write_atomic(run_dir / "run.json", record.to_json())
        con.print(f"interrupted: partial record in {escape(str(run_dir / 'run.json'))}")
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    profiled, profiled_ext = None, None
    summary: dict = {}
    ext_failed: ProfilerFailed | None = None
    if collector is not None:
        profiled, summary = session.cupti_results(collector, run_dir, " ".join(record.argv), show_all,
                                                  children=child_records)
    prov = recorder.finish(None)  # the GPU state at the end of the timed run, before any re-run
    gpu_variants = [v.name for v in chosen if v.device != "cpu" and v.name not in skip]
    if ext is not None and tool_path is not None and gpu_variants:
        child = session.external.ChildRun(m.name, counts[-1], gpu_variants,
                                          run_dir / f"{ext}-child", data, weights,
                                          layers=tuple(layer.name for layer, _ in m.conv_shapes(1)))
        con.print(f"re-running the GPU variants under {ext} ({escape(' '.join(child.argv()[2:]))})")
        plan_env = _sweep_plan(run_dir)  # the child builds the configurations this run's sweeps chose
        try:
            with _environ(plan_env):
                profiled_ext, ext_summary = session.external_results(ext, tool_path, child, run_dir, profile_timeout,
                                                                     everything=show_all, ncu_settings=ncu_settings)
        except ProfilerFailed as exc:
            if not summary and not (ext == "ncu" and user_kernels):
                raise
            ext_failed = exc  # the CUPTI part and your kernels' own ncu runs are kept; the failure is reported at the end
        else:
            summary = ({**summary, "tools": [*summary.get("tools", []), ext], ext: ext_summary} if summary
                       else ext_summary)
    user_ncu: list = []
    if ext == "ncu" and tool_path is not None:
        layers = [layer.name for layer, _ in m.conv_shapes(1)]
        for d in user_kernels:
            res = next(r for r in record.results if r.variant == d.name and r.images == counts[-1])
            if res.status == "skipped":
                continue
            con.print(f"re-running your kernel {escape(d.name)} under ncu (its timed op only)")
            job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract, model=m.name,
                                    images=counts[-1], repeat=1, warmup=0, data=data, weights=weights,
                                    timeout=profile_timeout, build_dir=str(Path(builds.name) / d.name),
                                    layers_only=True)
            ps_user, part = _user_ncu(d, job, res, tool_path, [f"{m.name}/{d.name}/{lay}" for lay in layers],
                                      ncu_settings, run_dir, show_all, lambda msg: None)
            if part is not None:
                summary = session.with_user_ncu(summary, part, d.name)
                user_ncu.append(ps_user)
        write_atomic(run_dir / "run.json", record.to_json())  # the notes of kernels ncu could not cover
    ncu_part = summary.get("ncu") or summary
    if summary:
        prov["profiler"] = {t: (summary.get(t) or summary).get("settings")
                            for t in summary.get("tools", [summary.get("tool")])}
        op_times = {f"{m.name}/{r.variant}/{c.layer}": c.op_time.median_s for r in record.results
                    if r.images == counts[-1] for c in r.conv if c.status == "ok" and c.op_time}
        agree = session.agreement_frame(summary, op_times)
        if not agree.empty and (summary.get("ops") or summary.get("tool") == "ncu"):
            summary["agreement"] = session.agreement_records(agree)
        record.profile = struct_from(ProfileInfo, summary)
    record.provenance = struct_from(Provenance, prov)
    write_atomic(run_dir / "run.json", record.to_json())
    con.print(result_table(record, con.width))
    con.print(breakdown_table(record, con.width))
    for ps in (profiled, profiled_ext, *user_ncu):
        if ps is not None:
            render(ps, con, TableOptions(max_rows=15, metrics=False))
    if ncu_part.get("launches") or summary.get("agreement"):
        for s in profiler_sections(record, run_dir / "run.json"):
            terminal.section(con, s)
    con.print(f"[dim]provenance: {escape(provenance.summary_line(prov))}[/dim]")
    for count in counts:
        best = [r for r in record.results if r.images == count and r.status == "ok" and r.correctness is not None]
        ref = next((r for r in best if r.variant == "cpu"), best[0] if best else None)
        if ref is not None:
            con.print(f"Correctness: {ref.correctness:.4g} Model: {m.name}  [dim]({count} images, {ref.variant})[/dim]")
    con.print(f"run record: {escape(str(run_dir / 'run.json'))}")
    for line in user_notes(record):
        con.print(f"[yellow]note:[/yellow] {escape(line)}")
    if ext_failed is not None:
        raise ext_failed  # after the CUPTI tables and the record: one line, exit 1
    failed = [r for r in record.results if r.status == "failed"]
    if failed:
        con.print(f"[red]{len(failed)} variant run(s) FAILED:[/red] " + ", ".join(f"{variant_label(r)} ({r.images})" for r in failed))
        for line in unseen_failures(failed):
            con.print(f"  {escape(line)}")
        raise typer.Exit(int(ExitStatus.FAILURE))
