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

from profconv import provenance
from profconv.commands import _complete, comma_list, fresh_directory, out_directory
from profconv.commands._options import Width
from profconv.errors import ExitStatus, GpuUnavailable, InputError
from profconv.records import BenchRecord, BenchSettings, Environment, struct_from
from profconv.records.provenance import Provenance
from profconv.run import gpu
from profconv.run.models import get_model
from profconv.run.record import write_atomic
from profconv.run.user import manifest as user_manifest
from profconv.ui import console

# NumPy and pandas (the bench, the variants, the report tables) are imported when the bench starts, so
# that `profconv bench --help` and completing a value (`--model ece<TAB>`) stay fast

DEFAULT_MODELS = ["ece408-high", "ece408", "cifar10"]


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
    only_layers: Annotated[list[str] | None, typer.Option("--layer", metavar="MODEL/LAYER", help="Only these conv layers (repeatable or comma list, e.g. ece408/conv2; default: every conv layer of the models).")] = None,
    cudnn_kernels: Annotated[bool, typer.Option("--cudnn-kernels", help="Record the kernels (the algorithm) each cuDNN peer runs, via torch.profiler after each layer's timing.")] = False,
    width: Width = None,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", metavar="PATH", help="Your kernel (repeatable): checked first in a child process, then benched in this one next to the variants.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", metavar="CONTRACT", autocompletion=_complete.contracts, help="How to run --kernel files: device, host, course or python (default: detected).")] = None,
    kernel_timeout: Annotated[float, typer.Option(metavar="SECONDS", min=1.0, help="Seconds each --kernel's isolated check may take.")] = 600.0,
) -> None:
    """Time every variant and cuDNN on every layer shape: ratios to cuDNN, shares of the roofline floor."""
    from profconv.render import terminal
    from profconv.report.bench import layer_section, summary_sections, to_markdown
    from profconv.run import bench
    from profconv.run import weights as weights_mod
    from profconv.run.variants import VARIANTS, cudnn_unavailable, get_variants

    if images < 1 or sets < 1 or repeat < 1 or warmup < 0:
        raise InputError("--images, --sets and --repeat must be at least 1, --warmup at least 0")
    if l2 not in bench.L2_MODES:
        raise InputError(f"--l2 takes cold or warm, not {l2!r}")
    out_directory(out, "bench.json")
    models = [get_model(m) for m in (comma_list(model, "--model") or DEFAULT_MODELS)]
    only = comma_list(only_layers, "--layer") if only_layers else []
    known = {f"{m.name}/{la.name}" for m in models for la, _ in m.conv_shapes(1)}
    if bad := [x for x in only if x not in known]:
        raise InputError(f"--layer {bad[0]}: not a conv layer of {', '.join(m.name for m in models)} "
                         f"(one of {', '.join(sorted(known))})")
    models = [m for m in models if not only or any(x.startswith(m.name + "/") for x in only)]
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
    run_dir = out or fresh_directory(Path("runs"), f"bench-{stamp.strftime('%Y%m%d-%H%M%S')}")
    env = gpu.environment(cp)
    opts = bench.BenchOptions(images=images, sets=sets, repeat=repeat, warmup=warmup, l2=l2,
                              target=ci_target or None, budget_s=time_budget,
                              max_rounds=repeat if not ci_target else max(repeat, 100), cudnn_kernels=cudnn_kernels,
                              layers=tuple(only))
    record = BenchRecord(argv=["profconv", *sys.argv[1:]], created=stamp.isoformat(),
                         environment=struct_from(Environment, env),
                         settings=BenchSettings(models=[m.name for m in models], variants=[v.name for v in chosen],
                                                images=images, sets=sets, repeat=repeat, warmup=warmup, fuse=fuse,
                                                l2=l2, ci_target=ci_target or None,
                                                time_budget_s=time_budget if ci_target else None,
                                                cudnn_kernels=cudnn_kernels, layers=only,
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
            task = prog.add_task("measuring device bandwidth", total=sum(1 for m in models for la, _ in m.conv_shapes(1)
                                                                     if not only or f"{m.name}/{la.name}" in only))
            record.device = bench.device_facts(cp, env)
            for m in models:
                layers = bench.bench_model(cp, m, weights_mod.load(m, None), chosen, opts, record.device, seen,
                                           lambda msg: prog.update(task, description=escape(msg)), fuse=fuse)
                prog.advance(task, len(layers))
                for layer in layers:
                    record.layers.append(layer)
                    write_atomic(run_dir / "bench.json", record.to_json())
                    # the layer as the report shows it, laid out for this terminal, as soon as it is measured
                    terminal.section(prog.console, layer_section(layer, len(record.layers) - 1, bench.frame(record)))
    except KeyboardInterrupt:
        record.interrupted = True
        record.provenance = struct_from(Provenance, recorder.finish(None))
        write_atomic(run_dir / "bench.json", record.to_json())
        con.print(f"interrupted: partial record in {escape(str(run_dir / 'bench.json'))}")
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    prov = recorder.finish(None)
    record.provenance = struct_from(Provenance, prov)
    write_atomic(run_dir / "bench.json", record.to_json())
    for section in summary_sections(record):  # the best variant and the best cuDNN per layer and precision
        terminal.section(con, section)
    con.print(f"[dim]provenance: {escape(provenance.summary_line(prov))}[/dim]")
    if markdown_out is not None:
        write_atomic(markdown_out, to_markdown(record))
        con.print(f"wrote {escape(str(markdown_out))}")
    con.print(f"record: {escape(str(run_dir / 'bench.json'))}")
