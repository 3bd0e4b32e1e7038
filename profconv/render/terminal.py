"""A Document on a terminal: headings as rules, every table laid out for the console's width with
the shared table layout (render/format.fitted_table: numbers never wrap, the name column folds,
columns that do not fit are left out and named), notes and warnings in colour."""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from profconv.render import format as fmt
from profconv.render.document import Bullets, Document, Figure, Paragraph, RenderOptions, Section, Table


def _plain(text: str) -> str:
    """Inline markdown as the terminal shows it: `code` and **bold** markers dropped."""
    return re.sub(r"\*\*([^*]+)\*\*", r"\1", text).replace("`", "").replace("  \n", "\n")


NUMBER = re.compile(r"^[+-]?(\d[\d,]*)?\.?\d+(e[+-]?\d+)?\s?(%|×|x)?$")


def _numeric(cells: list[str]) -> bool:
    """Cells already formatted as numbers (ncu's metrics, `+1.2%`): aligned right and never folded."""
    shown = [c for c in cells if c not in ("—", "")]
    return bool(shown) and all(NUMBER.match(c) for c in shown)


def table(t: Table, width: int, opts: RenderOptions) -> object:
    """A Document table laid out for `width`. Columns the table gives no drop rank still go when it
    does not fit, from the right (the first column and the name stay), after those it ranks."""
    cells = t.cells(opts.full_names)
    marked = t.marked()
    if all(marked) and t.highlight_kind == "top":
        marked = [False] * len(marked)
    columns: list[fmt.Column] = []
    for i, c in enumerate(t.columns):
        col_cells: list[object] = []
        for row, mark in zip(cells, marked, strict=True):
            col_cells.append(Text(row[i], style="bold" if mark else ""))  # Text: names are never markup
        numeric = c.numeric or _numeric([row[i] for row in cells])
        columns.append(fmt.Column(c.header or " ", col_cells, justify="right" if numeric else "left",
                                  drop=c.drop, wrap=c.kind == "code"))
    kept = {id(columns[i]) for i, c in enumerate(t.columns) if c.keep}
    if not any(col.wrap for col in columns):
        text = [col for col in columns if col.justify == "left"]
        if text:  # one text column folds so the table fits; numbers never do
            max(text, key=lambda col: col.natural()).wrap = True
    ranked = max((col.drop for col in columns if col.drop is not None), default=0)
    for i, col in enumerate(columns):
        if col.drop is None and i > 0 and not col.wrap and id(col) not in kept:
            col.drop = ranked + len(columns) - i  # the rightmost first
    caption = None
    if any(marked):
        caption = "bold: regressions" if t.highlight_kind == "regression" else "bold: the rows that take the ≥90% share"
    return fmt.fitted_table(escape(_plain(t.title)), columns, width, caption=caption)


def _rule(con: Console, title: str) -> None:
    """A heading across a terminal; one plain line `── title ──` in a file or a pipe (no 1,000 dashes)."""
    if con.is_terminal:
        con.rule(Text(title, style="bold"), align="left")
    else:
        con.print(Text(f"── {title} ──"), highlight=False)


def section(con: Console, s: Section, opts: RenderOptions | None = None, level: int = 2) -> None:
    """One section with its sub-sections, as `render` draws it: what a live command (bench, run
    --profile) prints as it goes, in the same layout as the report."""
    _section(con, s, level, opts or RenderOptions())


def _section(con: Console, s: Section, level: int, opts: RenderOptions) -> None:
    if level <= 2:
        _rule(con, _plain(s.title))
    else:
        con.print(Text(_plain(s.title), style="bold underline"))
    for b in s.blocks:
        if isinstance(b, Table):
            if b.note:
                con.print(_plain(b.note), highlight=False, markup=False)
            con.print(table(b, con.width, opts))
        elif isinstance(b, Paragraph):
            style = {"note": "cyan", "warning": "yellow"}.get(b.kind)
            prefix = "warning: " if b.kind == "warning" else ""
            con.print(Text(prefix + _plain(b.text), style=style or ""), highlight=False)
        elif isinstance(b, Bullets):  # a long item wraps under its text, not under the bullet
            from rich.table import Table as Grid

            grid = Grid.grid(padding=(0, 1))
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold")
            for item in b.items:
                grid.add_row("•", Text(_plain(item)))
            con.print(grid)
        elif isinstance(b, Figure):
            con.print(f"[dim]plot: {escape(str(b.path))}[/dim]")
        con.print()
    for sub in s.sections:
        if sub.appendix and not opts.full:
            continue
        _section(con, sub, level + 1, opts)


def render(doc: Document, con: Console, opts: RenderOptions) -> None:
    con.print(Text(doc.title, style="bold"))
    body = [s for s in doc.sections if not s.appendix]
    appendix = [s for s in doc.sections if s.appendix]
    for s in body:
        _section(con, s, 2, opts)
    if appendix and opts.full:
        _rule(con, "Appendix: full tables")
        for s in appendix:
            _section(con, s, 3, opts)
    elif appendix and opts.full_hint:
        con.print(Text(_plain(opts.full_hint), style="dim"))
