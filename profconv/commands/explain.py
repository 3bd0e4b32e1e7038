"""`profconv explain RUN`: why each conv kernel of a run takes its time, and what to try next."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv.commands._options import Width
from profconv.ui import console, print_markdown


def explain_command(
    run: Annotated[str, typer.Argument(metavar="RUN", help="A run directory (or its run.json).")],
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="NAME[/LAYER]", help="Only these variants (or variant/layer ops); repeatable.")] = None,
    collect: Annotated[str, typer.Option("--collect", metavar="auto|yes|no|ncu|sass", help="Collect the evidence the run lacks: the SASS (nvcc + cuobjdump) and, on the GPU machine, the targeted ncu pass; stored in run.json. auto: what this machine can and the run lacks; yes: both, again; ncu or sass: that one, again; no: none.")] = "auto",
    images: Annotated[int | None, typer.Option("--images", metavar="N", min=1, help="Images for the ncu pass (default: the run's).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", min=1.0, help="Seconds the ncu pass may take.")] = 1800.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the diagnoses and advice as JSON (schema profconv.explain).")] = False,
    markdown_out: Annotated[str | None, typer.Option("--markdown", metavar="FILE", help="Write the explanation as GitHub markdown to FILE.", show_default=False)] = None,
    html_out: Annotated[str | None, typer.Option("--html", metavar="FILE", help="Write it as one self-contained HTML page.", show_default=False)] = None,
    width: Width = None,
) -> None:
    """Why each conv kernel of a run takes its time, and what to try next (diagnosis + ranked advice)."""
    from profconv.io import write_atomic
    from profconv.render import html as html_renderer
    from profconv.render import markdown as md_renderer
    from profconv.render import terminal as terminal_renderer
    from profconv.render.document import Document, RenderOptions
    from profconv.report.explain import explain_json, explain_sections
    from profconv.report.inputs import RunInput
    from profconv.session.events import Callbacks, Note
    from profconv.session.explain import ExplainRequest, ExplainSession
    from profconv.ui import error_console

    err = error_console()  # progress and notes on stderr: stdout stays the explanation (and valid --json)

    def note(n: Note) -> None:
        head = f"[yellow]{escape(n.head or 'note')}:[/yellow] " if n.level == "warning" else "[dim]"
        err.print(head + escape(n.text) + ("" if n.level == "warning" else "[/dim]"))

    outcome = ExplainSession(ExplainRequest(run, list(variant or []), collect, images, timeout),
                             Callbacks(progress=lambda m, d, t: err.print(f"[dim]{escape(m)}[/dim]"), note=note)).run()
    path, ops = outcome.path, outcome.explanations
    inp = RunInput(path, outcome.record)
    if json_out:
        sys.stdout.write(json.dumps(explain_json(path, ops), indent=1) + "\n")
        return
    doc = Document(f"profconv explain: {inp.record.model.name} on {inp.record.environment.gpu or 'no GPU'}",
                   explain_sections(inp, ops))
    con = console()
    for out, render in ((markdown_out, lambda: md_renderer.render(doc, RenderOptions())),
                        (html_out, lambda: html_renderer.render(doc, RenderOptions(full=True)))):
        if out is not None:
            write_atomic(Path(out), render())
            con.print(f"wrote {escape(out)}")
    if markdown_out is None and html_out is None:
        if con.is_terminal:
            terminal_renderer.render(doc, con, RenderOptions())
        else:
            print_markdown(con, md_renderer.render(doc, RenderOptions()))
