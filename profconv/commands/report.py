"""`profconv report`: the report a student or kernel engineer hands in, from runs and logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv.commands._options import FullNames, Regression, Threshold, Width
from profconv.errors import ExitStatus, InputError
from profconv.report import compare as compare_mod
from profconv.report.build import ReportOptions, build
from profconv.report.inputs import load
from profconv.run.record import write_atomic
from profconv.ui import console, print_markdown


def report_command(
    inputs: Annotated[list[str], typer.Argument(help="Run directories (or run.json files) and profiler logs.")],
    markdown_out: Annotated[str | None, typer.Option("--markdown", help="Write GitHub markdown to FILE (plots beside it); '' for reports/<name>.md.", show_default=False)] = None,
    compare: Annotated[bool, typer.Option("--compare", help="Compare exactly two runs or two logs: A then B.")] = False,
    threshold: Threshold = 0.90,
    regression: Regression = 0.05,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="With --compare: exit 1 when a regression is found.")] = False,
    full_names: FullNames = False,
    width: Width = None,
) -> None:
    """Write the report: environment, Op Times, speedups, the ladder, efficiency, plots, >=90% tables."""
    loaded = load(inputs)
    if compare:
        if len(loaded) != 2:
            raise InputError(f"--compare takes exactly two inputs (A B), got {len(loaded)}")
        df = compare_mod.compare(loaded[0], loaded[1], regression)
        text = compare_mod.to_markdown(df, inputs[0], inputs[1], regression)
        _emit(text, markdown_out, "comparison", None)
        if fail_on_regression and bool(df["regression"].any()):
            console().print(f"[red]{int(df['regression'].sum())} regression(s) beyond {regression:.0%}[/red]")
            raise typer.Exit(int(ExitStatus.FAILURE))
        return
    name = Path(inputs[0].rstrip("/")).name.replace(".json", "") or "report"
    _emit(None, markdown_out, name, (loaded, threshold, full_names))


def _emit(text: str | None, markdown_out: str | None, name: str, build_args) -> None:
    if markdown_out is None:
        if text is None:
            loaded, threshold, full_names = build_args
            text = build(loaded, ReportOptions(threshold=threshold, full_names=full_names))
        print_markdown(console(), text)
        return
    path = Path(markdown_out) if markdown_out else Path("reports") / f"{name}.md"
    if text is None:
        loaded, threshold, full_names = build_args
        plots_dir = path.parent / f"{path.stem}-plots"
        text = build(loaded, ReportOptions(threshold=threshold, full_names=full_names, plots_dir=plots_dir,
                                           link_base=path.parent))
    write_atomic(path, text)
    console().print(f"wrote {escape(str(path))}")
