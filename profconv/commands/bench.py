"""`profconv bench`: every variant against cuDNN of its precision on every layer shape, one process."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated

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
from profconv.commands import _complete, comma_list, out_directory
from profconv.commands._options import Width
from profconv.errors import ExitStatus, GpuUnavailable, InputError
from profconv.records import BenchLayer, BenchRecord, BenchSettings, Environment, struct_from
from profconv.records.provenance import Provenance
from profconv.render.format import Column, fitted_table
from profconv.run import gpu
from profconv.run.models import get_model
from profconv.run.record import write_atomic
from profconv.run.user import manifest as user_manifest
from profconv.ui import console

# NumPy and pandas (the bench, the variants, the report tables) are imported when the bench starts, so
# that `profconv bench --help` and completing a value (`--model ece<TAB>`) stay fast

DEFAULT_MODELS = ["ece408-high", "ece408", "cifar10"]


def layer_table(layer: BenchLayer, fused: bool = False, width: int = 120) -> Table:
    """One layer's variants: the headline Op Time with its ±95% interval and the other L2 figure; at a
    narrow width the error, bound, floor-share, precision, other-L2 and interval columns go, in that order."""
    title = f"{layer.model} {layer.layer}: {layer.shape}, {layer.images} images"
    if fused:
        title = f"{layer.model} fused layer {layer.fused_ops}: {layer.shape}, {layer.images} images"
    rows = []
    for r in layer.fused if fused else layer.results:
        t = r.op_time.median_s if r.op_time else None
        ci = r.op_time.ci_rel if r.op_time else None
        other = r.op_time_warm if r.op_time is r.op_time_cold else r.op_time_cold
        rows.append([r.variant, r.precision, f"{t * 1e3:.3f} ms" if t else "—", f"{ci:.1%}" if ci is not None else "—",
                     f"{other.median_s * 1e3:.3f} ms" if other else "—", f"{r.ratio:.2f}x" if r.ratio else "—",
                     r.reference or "—", f"{r.floor_share:.0%}" if r.floor_share else "—", r.bound or "—",
                     f"{r.rel_error:.1e}" if r.rel_error is not None else "—",
                     Text("ok", style="green") if r.status == "ok"
                     else Text.from_markup(f"[red]FAILED[/red]: {escape(r.error or '')}")])
    spec = [("variant", "left", None), ("precision", "left", 4), ("Op Time", "right", None), ("±", "right", 6),
            ("other L2", "right", 5), ("ratio", "right", None), ("vs", "left", None), ("floor", "right", 3),
            ("bound", "left", 2), ("rel. error", "right", 1), ("status", "left", None)]
    columns = [Column(h, [row[i] for row in rows], justify=j, drop=d, wrap=h == "status")
               for i, (h, j, d) in enumerate(spec)]
    return fitted_table(title, columns, width, wrap_min=8,
                        caption="± the median's 95% interval; other L2: the warm figure when the headline is cold "
                                "(and the other way round); floor: share of the roofline floor")


def checked_user_variants(decls: list, models: list, timeout: float, con) -> tuple[list, dict[str, str]]:
    """Each user kernel checked in a child process on every chosen model (a crash or hang there costs
    nothing here); those that pass are benched in this process, where all variants share one GPU
    context and interleaved rounds (fairness needs one process). (variants, name -> why not benched)"""
    from profconv.run.user import contracts, isolate

    passed, failures = [], {}
    for d in decls:
        provenance = contracts.UserKernel(d).provenance()
        for m in models:
            con.print(f"checking your kernel {d.name} on {m.name} in a child process")
            job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract, model=m.name,
                                    images=100, repeat=1, warmup=0, timeout=d.timeout or timeout)
            res = isolate.run_isolated(d, provenance, job, lambda msg: None)
            if res.status != "ok":
                failures[d.name] = f"{m.name}: {res.error}"
                con.print(f"[red]{escape(d.name)} FAILED its check on {m.name}, not benched:[/red] {escape(res.error or '')}")
                break
        else:
            passed.append(contracts.user_variant(d)[0])
    return passed, failures


def bench_command(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", metavar="MODEL[,MODEL...]", autocompletion=_complete.models, help="Models whose conv layers to bench (repeatable or comma list; default: ece408-high, ece408, cifar10).")] = None,
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="NAME[,NAME...]", autocompletion=_complete.gpu_variants, help="GPU variants to bench (repeatable or comma list; default: all GPU variants and both cuDNN references).")] = None,
    images: Annotated[int, typer.Option("--images", "-n", metavar="N", help="Images per input set (the batch of every layer).")] = 10000,
    sets: Annotated[int, typer.Option(metavar="N", help="Input sets per layer (different images), interleaved so no variant finds its input cached.")] = 3,
    repeat: Annotated[int, typer.Option(metavar="N", min=1, max=100_000, help="Timed rounds; each round calls every variant once per input set.")] = 10,
    warmup: Annotated[int, typer.Option(metavar="N", min=0, max=100_000, help="Untimed rounds first.")] = 3,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Directory for bench.json, made if missing (default: runs/bench-TIMESTAMP/).")] = None,
    markdown_out: Annotated[Path | None, typer.Option("--markdown", metavar="FILE", help="Also write the tables as markdown to FILE.")] = None,
    fuse: Annotated[bool, typer.Option("--fuse/--no-fuse", help="Also time each conv + activation + pool as one fused kernel against separate ops.")] = True,
    l2: Annotated[str, typer.Option("--l2", metavar="warm|cold", help="Headline figure: warm (the same call issued right behind itself: device time, data in L2; the default) or cold (L2 flushed, device idle before: host and launch time included); both are recorded.")] = "warm",
    ci_target: Annotated[float, typer.Option(metavar="FRACTION", min=0.0, max=1.0, help="Rounds past --repeat until every median's 95% interval is within ±this fraction (0: exactly --repeat rounds).")] = 0.01,
    time_budget: Annotated[float, typer.Option(metavar="SECONDS", min=0.001, help="Seconds of timing rounds per layer at most, with --ci-target.")] = 15.0,
    cudnn_kernels: Annotated[bool, typer.Option("--cudnn-kernels", help="Record the kernels (the algorithm) each cuDNN peer runs, via torch.profiler after each layer's timing.")] = False,
    width: Width = None,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", metavar="PATH", help="Your kernel (repeatable): checked first in a child process, then benched in this one next to the variants.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", metavar="CONTRACT", autocompletion=_complete.contracts, help="How to run --kernel files: device, host, course or python (default: detected).")] = None,
    kernel_timeout: Annotated[float, typer.Option(metavar="SECONDS", min=1.0, help="Seconds each --kernel's isolated check may take.")] = 600.0,
) -> None:
    """Time every variant and cuDNN on every layer shape: ratios to cuDNN, shares of the roofline floor."""
    from profconv.report.bench import fmt_ms, fmt_ratio, fmt_share, to_markdown
    from profconv.run import bench
    from profconv.run import weights as weights_mod
    from profconv.run.variants import VARIANTS, cudnn_unavailable, get_variants

    if images < 1 or sets < 1 or repeat < 1 or warmup < 0:
        raise InputError("--images, --sets and --repeat must be at least 1, --warmup at least 0")
    if l2 not in bench.L2_MODES:
        raise InputError(f"--l2 takes cold or warm, not {l2!r}")
    out_directory(out, "bench.json")
    models = [get_model(m) for m in (comma_list(model, "--model") or DEFAULT_MODELS)]
    chosen = [v for v in get_variants(comma_list(variant, "--variant") or None) if v.device != "cpu"]
    user_kernels = user_manifest.load_many(kernel or [], contract, {v.name for v in VARIANTS})
    if not chosen and not user_kernels:
        raise InputError("bench times GPU variants: the CPU reference is not one (see `profconv run`)")
    cp = gpu.cupy_or_none()
    if cp is None:
        raise GpuUnavailable(f"bench needs a CUDA GPU and CuPy: {gpu.why_no_gpu()}")
    con = console()
    failures: dict[str, str] = {}
    if user_kernels:
        passed, failures = checked_user_variants(user_kernels, models, kernel_timeout, con)
        chosen += passed
    if (why := cudnn_unavailable()) and any(v.device == "cudnn" for v in chosen):
        skipped = [v.name for v in chosen if v.device == "cudnn"]
        chosen = [v for v in chosen if v.device != "cudnn"]
        con.print(f"[yellow]{', '.join(skipped)} skipped:[/yellow] cuDNN needs PyTorch with CUDA ({escape(why)}); "
                  "ratios to cuDNN will be missing")
    stamp = datetime.now(timezone.utc)
    run_dir = out or Path("runs") / f"bench-{stamp.strftime('%Y%m%d-%H%M%S')}"
    env = gpu.environment(cp)
    opts = bench.BenchOptions(images=images, sets=sets, repeat=repeat, warmup=warmup, l2=l2,
                              target=ci_target or None, budget_s=time_budget,
                              max_rounds=repeat if not ci_target else max(repeat, 100), cudnn_kernels=cudnn_kernels)
    record = BenchRecord(argv=["profconv", *sys.argv[1:]], created=stamp.isoformat(),
                         environment=struct_from(Environment, env),
                         settings=BenchSettings(models=[m.name for m in models], variants=[v.name for v in chosen],
                                                images=images, sets=sets, repeat=repeat, warmup=warmup, fuse=fuse,
                                                l2=l2, ci_target=ci_target or None,
                                                time_budget_s=time_budget if ci_target else None,
                                                cudnn_kernels=cudnn_kernels,
                                                kernels=[str(d.source or d.where) for d in user_kernels],
                                                kernel_failures=failures))
    recorder = provenance.Recorder(cp)
    record.provenance = struct_from(Provenance, recorder.start())
    con.print(f"GPU: {escape(str(env['gpu']))} (compute capability {env['compute_capability']}); "
              f"{len(chosen)} variants, {sets} input sets of {images} images, {repeat} rounds after {warmup} warm-up")
    seen: dict[tuple, str] = {}
    try:
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20), MofNCompleteColumn(),
                      TextColumn("layers · ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
                      console=con, transient=True) as prog:
            task = prog.add_task("measuring device bandwidth", total=sum(len(m.conv_shapes(1)) for m in models))
            record.device = bench.device_facts(cp, env)
            for m in models:
                layers = bench.bench_model(cp, m, weights_mod.load(m, None), chosen, opts, record.device, seen,
                                           lambda msg: prog.update(task, description=escape(msg)), fuse=fuse)
                prog.advance(task, len(layers))
                for layer in layers:
                    record.layers.append(layer)
                    write_atomic(run_dir / "bench.json", record.to_json())
                    if layer.same_as:
                        prog.console.print(f"{m.name} {layer.layer}: same shape as {layer.same_as}")
                    else:
                        prog.console.print(layer_table(layer, width=con.width))
                        for r in layer.results:
                            if "sweep" in r.params:  # a user kernel's declared sweep, run on this shape
                                prog.console.print(f"{escape(r.variant)} sweep: {escape(str(r.params['sweep']))}")
                        if layer.fused:
                            prog.console.print(layer_table(layer, fused=True, width=con.width))
    except KeyboardInterrupt:
        record.interrupted = True
        record.provenance = struct_from(Provenance, recorder.finish(None))
        write_atomic(run_dir / "bench.json", record.to_json())
        con.print(f"interrupted: partial record in {escape(str(run_dir / 'bench.json'))}")
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    prov = recorder.finish(None)
    record.provenance = struct_from(Provenance, prov)
    write_atomic(run_dir / "bench.json", record.to_json())
    df = bench.frame(record)
    peers_df = bench.best_peers(df)
    if not peers_df.empty:
        p = peers_df.to_dict("records")
        cols = [Column("model", [str(r["model"]) for r in p], "left", drop=2),
                Column("layer", [str(r["layer"]) for r in p], "left"),
                Column("precision", [str(r["precision"]) for r in p], "left"),
                Column("best cuDNN", [str(r["peer"]) for r in p], "left"),
                Column("layout", [str(r["layout"]) for r in p], "left", drop=3),
                Column("Op Time", [fmt_ms(r["median_s"]) for r in p]),
                Column("other layouts", [str(r["others"]) for r in p], "left", drop=1, wrap=True)]
        con.print(fitted_table(f"Best cuDNN per layer and precision ({l2} L2; layout converted before timing)", cols,
                               con.width, wrap_min=16))
    best = bench.best_per_layer(df)
    if not best.empty:
        b = best.to_dict("records")
        cols = [Column("model", [str(r["model"]) for r in b], "left", drop=2),
                Column("layer", [str(r["layer"]) for r in b], "left"),
                Column("precision", [str(r["precision"]) for r in b], "left"),
                Column("variant", [str(r["variant"]) for r in b], "left"),
                Column("Op Time", [fmt_ms(r["median_s"]) for r in b]),
                Column("vs best cuDNN", [fmt_ratio(r["ratio"]) for r in b]),
                Column("cuDNN", [str(r["reference"]) for r in b], "left", drop=3),
                Column("floor share", [fmt_share(r["floor_share"]) for r in b], drop=1)]
        con.print(fitted_table("Best variant per layer and precision", cols, con.width))
    con.print(f"[dim]provenance: {escape(provenance.summary_line(prov))}[/dim]")
    if markdown_out is not None:
        write_atomic(markdown_out, to_markdown(record))
        con.print(f"wrote {escape(str(markdown_out))}")
    con.print(f"record: {escape(str(run_dir / 'bench.json'))}")
