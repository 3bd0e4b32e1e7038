"""`profconv report`: the report a student or kernel engineer hands in, from runs and logs."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv.commands._options import FullNames, Regression, Threshold, Width
from profconv.errors import ExitStatus, InputError
from profconv.io import write_atomic
from profconv.render import data as data_renderer
from profconv.render import html as html_renderer
from profconv.render import markdown as md_renderer
from profconv.render import terminal as terminal_renderer
from profconv.render.document import Document, RenderOptions
from profconv.report import compare as compare_mod
from profconv.report.build import ReportOptions, build
from profconv.report.inputs import load
from profconv.ui import console, print_markdown


def report_command(
    inputs: Annotated[list[str], typer.Argument(metavar="INPUT", help="Run or bench directories (or their .json records) and profiler logs.")],
    markdown_out: Annotated[str | None, typer.Option("--markdown", metavar="FILE", help="Write GitHub markdown to FILE (plots beside it); '' for reports/<name>.md.", show_default=False)] = None,
    html_out: Annotated[str | None, typer.Option("--html", metavar="FILE", help="Write one self-contained HTML page (plots embedded, sortable tables); '' for reports/<name>.html.", show_default=False)] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report's tables as JSON (raw values, base units) instead of markdown.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Markdown: add the appendix (every kernel and API row, every Op Time column).")] = False,
    compare: Annotated[bool, typer.Option("--compare", help="Compare exactly two runs, bench records or logs: A then B.")] = False,
    optimisations: Annotated[bool, typer.Option("--optimisations", help="The per-optimisation write-up: one step per pair of consecutive versions (the rungs of one run, one run per version, or a versions .toml).")] = False,
    threshold: Threshold = 0.90,
    regression: Regression = 0.05,
    alpha: Annotated[float, typer.Option("--alpha", metavar="P", min=1e-6, max=0.5, help="With --compare: significance level of the Mann-Whitney U test on the stored samples.")] = 0.05,
    fail_on_regression: Annotated[bool, typer.Option("--fail-on-regression", help="With --compare: exit 6 when a regression is found, or when a row has too few samples to test (see --allow-untestable).")] = False,
    allow_untestable: Annotated[bool, typer.Option("--allow-untestable", help="With --fail-on-regression: rows with too few samples to test do not fail it.")] = False,
    full_names: FullNames = False,
    width: Width = None,
) -> None:
    """Write the report: environment, Op Times, speedups, the ladder, efficiency, plots, >=90% tables."""
    manifest = None
    if optimisations and len(inputs) == 1 and inputs[0].endswith(".toml"):
        from profconv.report.optimisations import read_manifest

        manifest = read_manifest(Path(inputs[0]))
        inputs = manifest.runs
    loaded = load(inputs)
    name = Path(inputs[0].rstrip("/")).name.replace(".json", "") or "report"
    if optimisations:
        from profconv.report import optimisations as opt_mod

        doc_opt = opt_mod.document(loaded, "profconv report: optimisations", manifest)
        _emit(lambda plots_dir: doc_opt, markdown_out, html_out, json_out, full, full_names, f"{name}-optimisations")
        return
    if compare:
        if len(loaded) != 2:
            raise InputError(f"--compare takes exactly two inputs (A B), got {len(loaded)}")
        df = compare_mod.compare(loaded[0], loaded[1], regression, alpha)
        _emit(lambda plots_dir: compare_mod.document(df, inputs[0], inputs[1], regression, alpha, plots_dir),
              markdown_out, html_out, json_out, full, full_names, "comparison")
        if fail_on_regression and bool(df["regression"].any()):
            console().print(f"[red]{int(df['regression'].sum())} regression(s) beyond {regression:.0%}[/red]")
            raise typer.Exit(int(ExitStatus.REGRESSION))
        untestable = int((df["verdict"] == "untestable").sum())
        if fail_on_regression and untestable and not allow_untestable:
            console().print(f"[red]{untestable} row(s) with too few samples to test: no regression can be ruled "
                            "out[/red] (--allow-untestable accepts that)")
            raise typer.Exit(int(ExitStatus.REGRESSION))
        return

    def make(plots_dir: Path | None) -> Document:
        return build(loaded, ReportOptions(threshold=threshold, plots_dir=plots_dir))

    _emit(make, markdown_out, html_out, json_out, full, full_names, name)


def _target(value: str, name: str, suffix: str) -> Path:
    path = Path(value) if value else Path("reports") / f"{name}{suffix}"
    if path.is_dir():
        raise InputError(f"{path}: is a directory; give the {suffix[1:]} file to write (e.g. {path / (name + suffix)})")
    return path


def _emit(make, markdown_out: str | None, html_out: str | None, json_out: bool, full: bool, full_names: bool,
          name: str) -> None:
    hint = ("The full tables (every kernel and API row, every Op Time column) are in the appendix: "
            "add `--full`, or see the HTML report (`--html`).")
    if markdown_out is not None:
        path = _target(markdown_out, name, ".md")
        doc = make(path.parent / f"{path.stem}-plots")
        text = md_renderer.render(doc, RenderOptions(full=full, full_names=full_names, link_base=path.parent,
                                                     full_hint=hint))
        write_atomic(path, text)
        console().print(f"wrote {escape(str(path))}")
    if html_out is not None:
        path = _target(html_out, name, ".html")
        with tempfile.TemporaryDirectory(prefix="profconv-plots-") as tmp:
            doc = make(Path(tmp))
            write_atomic(path, html_renderer.render(doc, RenderOptions(full=True, full_names=full_names)))
        console().print(f"wrote {escape(str(path))}")
    if json_out:
        sys.stdout.write(data_renderer.render(make(None)))
        return
    if markdown_out is None and html_out is None:
        doc = make(None)
        con = console()
        opts = RenderOptions(full=full, full_names=full_names, full_hint=hint)
        if con.is_terminal:
            terminal_renderer.render(doc, con, opts)
        else:  # a pipe or a file: the markdown itself
            print_markdown(con, md_renderer.render(doc, opts))
