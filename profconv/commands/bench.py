"""`profconv bench`: every variant against cuDNN of its precision on every layer shape, one process."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv import provenance
from profconv.commands import _complete, comma_list
from profconv.commands._live import Live
from profconv.commands._options import Width
from profconv.errors import ExitStatus, Interrupted
from profconv.session.bench import DEFAULT_MODELS, BenchOutcome, BenchRequest, BenchSession
from profconv.ui import console, error_console

# NumPy and pandas (the bench, the variants, the report tables) are imported when the bench starts, so
# that `profconv bench --help` and completing a value (`--model ece<TAB>`) stay fast

__all__ = ["DEFAULT_MODELS", "bench_command"]


def bench_command(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", metavar="MODEL[,MODEL...]", autocompletion=_complete.models, help="Models whose conv layers to bench (repeatable or comma list; `course`: every ECE408 term's model; default: the course models and cifar10).")] = None,
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="NAME[,NAME...]", autocompletion=_complete.gpu_variants, help="GPU variants to bench (repeatable or comma list; default: all GPU variants and both cuDNN references).")] = None,
    images: Annotated[int, typer.Option("--images", "-n", metavar="N", help="Images per input set (the batch of every layer).")] = 10000,
    sets: Annotated[int, typer.Option(metavar="N", help="Input sets per layer (different images), interleaved so no variant finds its input cached.")] = 3,
    repeat: Annotated[int, typer.Option(metavar="N", min=1, max=100_000, help="Timed rounds; each round calls every variant once per input set.")] = 10,
    warmup: Annotated[int, typer.Option(metavar="N", min=0, max=100_000, help="Untimed rounds first.")] = 3,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Directory for bench.json, made if missing (default: runs/bench-TIMESTAMP/); a bench.json already there is never replaced without --force.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the bench.json already in --out DIR.")] = False,
    markdown_out: Annotated[Path | None, typer.Option("--markdown", metavar="FILE", help="Also write the tables as markdown to FILE.")] = None,
    fuse: Annotated[bool, typer.Option("--fuse/--no-fuse", help="Also time each conv + activation + pool as one fused kernel against separate ops.")] = True,
    l2: Annotated[str, typer.Option("--l2", metavar="warm|cold", help="Headline figure: warm (the same call issued right behind itself: device time, data in L2; the default) or cold (L2 flushed, device idle before: host and launch time included); both are recorded.")] = "warm",
    ci_target: Annotated[float, typer.Option(metavar="FRACTION", min=0.0, max=1.0, help="Rounds past --repeat until every median's 95% interval is within ±this fraction (0: exactly --repeat rounds).")] = 0.01,
    time_budget: Annotated[float, typer.Option(metavar="SECONDS", min=0.001, help="Seconds of timing rounds per layer at most, with --ci-target.")] = 15.0,
    only_layers: Annotated[list[str] | None, typer.Option("--layer", metavar="MODEL/LAYER", help="Only these conv layers (repeatable or comma list, e.g. ece408/conv2; default: every conv layer of the models).")] = None,
    cudnn_kernels: Annotated[bool, typer.Option("--cudnn-kernels/--no-cudnn-kernels", help="Record the kernels (the algorithm) each cuDNN peer runs, via torch.profiler after each layer's timing and its plain-loop check.")] = True,
    width: Width = None,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", metavar="PATH", help="Your kernel (repeatable): checked first in a child process, then benched in this one next to the variants.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", metavar="CONTRACT", autocompletion=_complete.contracts, help="How to run --kernel files: device, host, course or python (default: detected).")] = None,
    kernel_timeout: Annotated[float, typer.Option(metavar="SECONDS", min=1.0, help="Seconds each --kernel's isolated check may take.")] = 600.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the bench record (the bench.json written) as JSON instead of the tables; progress and notes go to stderr.")] = False,
) -> None:
    """Time every variant and cuDNN on every layer shape: ratios to cuDNN, shares of the roofline floor."""
    request = BenchRequest(
        models=comma_list(model, "--model") if model else list(DEFAULT_MODELS),
        variants=comma_list(variant, "--variant") if variant else None, images=images, sets=sets, repeat=repeat,
        warmup=warmup, out=out, replace=force, fuse=fuse, l2=l2, ci_target=ci_target, time_budget=time_budget,
        layers=comma_list(only_layers, "--layer") if only_layers else [], cudnn_kernels=cudnn_kernels,
        kernels=kernel or [], contract=contract, kernel_timeout=kernel_timeout)
    con = error_console() if json_out else console()  # --json: stdout holds the record alone
    try:
        with Live(con, "layers · ") as live:
            session = BenchSession(request, live.callbacks)
            if not json_out:
                live.callbacks.result = lambda layer: _show_layer(live.console, session)
            outcome = session.run()
    except Interrupted as exc:
        con.print(escape(str(exc)))
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    if json_out:
        sys.stdout.write(outcome.record.to_json() + "\n")
    else:
        show(outcome, con)
    if markdown_out is not None:
        from profconv.io import write_atomic
        from profconv.report.bench import to_markdown

        write_atomic(markdown_out, to_markdown(outcome.record))
        con.print(f"wrote {escape(str(markdown_out))}")


def _show_layer(con, session: BenchSession) -> None:
    """The layer just measured as the report shows it, laid out for this terminal."""
    from profconv.render import terminal
    from profconv.report.bench import layer_section
    from profconv.run import bench

    record = session.record
    assert record is not None
    terminal.section(con, layer_section(record.layers[-1], len(record.layers) - 1, bench.frame(record)))


def show(outcome: BenchOutcome, con) -> None:
    """The best variant and the best cuDNN per layer and precision, the provenance, the record's path."""
    from profconv.records import to_builtins
    from profconv.render import terminal
    from profconv.report.bench import summary_sections

    for section in summary_sections(outcome.record):
        terminal.section(con, section)
    if outcome.record.provenance is not None:
        con.print(f"[dim]provenance: {escape(provenance.summary_line(to_builtins(outcome.record.provenance)))}[/dim]")
    con.print(f"record: {escape(str(outcome.path))}")
