"""`profconv explain RUN`: why each conv kernel of a run takes its time, and what to try next."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from profconv.commands._options import Width
from profconv.errors import InputError, ProfconvError
from profconv.ui import console, print_markdown

COLLECT = ("auto", "yes", "no", "ncu", "sass")


def _collect(inp, what: str, images: int | None, timeout: float) -> None:
    """Collect the evidence the record lacks (auto) or all of it (yes), and store it in run.json:
    the SASS wherever nvcc and cuobjdump are found (a CPU machine too), the targeted ncu pass where
    a GPU and ncu are. `auto` skips, with a note, what this machine cannot collect."""
    from profconv.io import write_atomic
    from profconv.profile import sass_capture
    from profconv.profile.external import find_tool
    from profconv.report import evidence
    from profconv.run import gpu
    from profconv.ui import error_console

    rec, run_dir = inp.record, inp.path.parent
    have = rec.evidence
    con = error_console()  # progress and notes on stderr: stdout stays the explanation (and valid --json)
    want_sass = what in ("yes", "sass") or (what == "auto" and not (have and have.sass))
    want_ncu = what in ("yes", "ncu") or (what == "auto" and not (have and have.ncu))
    notes = []
    if want_sass:
        try:
            sass_capture.find_tool("nvcc"), sass_capture.find_tool("cuobjdump")
        except ProfconvError as exc:
            if what in ("yes", "sass"):
                raise
            notes.append(f"SASS not collected: {exc}")
            want_sass = False
    if want_ncu:
        why = None if gpu.cupy_or_none() is not None else gpu.why_no_gpu()
        if why is None:
            try:
                find_tool("ncu")
            except ProfconvError as exc:
                why = str(exc)
        if why is not None:
            if what in ("yes", "ncu"):
                raise InputError(f"--collect {what} needs the GPU machine for the ncu pass: {why}")
            notes.append(f"ncu counters not collected here ({why})")
            want_ncu = False
    if want_sass or want_ncu:
        got = evidence.collect(rec, run_dir, ncu=want_ncu, sass=want_sass, images=images, timeout=timeout,
                               say=lambda m: con.print(f"[dim]{escape(m)}[/dim]"))
        notes += got.notes
        if got.sass or got.ncu:  # the record changes only when something was collected
            rec.evidence = got
            write_atomic(inp.path, rec.to_json())
            con.print(f"[dim]evidence stored in {escape(str(inp.path))}[/dim]")
    for n in notes:
        con.print(f"[yellow]note:[/yellow] {escape(n)}")


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
    from profconv.report.explain import explain_json, explain_run, explain_sections
    from profconv.report.inputs import RunInput, read_record

    if collect not in COLLECT:
        raise InputError(f"--collect takes {', '.join(COLLECT)}, not {collect!r}")
    path = Path(run)
    if path.is_dir():
        path = path / "run.json"
    if not path.is_file():
        raise InputError(f"{run}: no run.json there: give a run directory of `profconv run`")
    inp = RunInput(path, read_record(path))
    if collect != "no":
        _collect(inp, collect, images, timeout)
    ops = explain_run(inp, set(variant) if variant else None)
    if variant and not ops:
        raise InputError(f"--variant {', '.join(variant)}: no such diagnosable op in {run}")
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
