"""Human units for nanosecond values, and tables that fit a width without losing names or units."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from rich.table import Table


def duration(ns: float | None) -> str:
    """A time with its unit, 4 significant digits: 812 ns, 5.506 µs, 2.203 ms, 1.25 s."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "—"
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.4g} s"
    if a >= 1e6:
        return f"{ns / 1e6:.4g} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.4g} µs"
    return f"{ns:.4g} ns"


def count(v) -> str:
    try:
        if v is None or v != v:
            return "—"
    except TypeError:
        return "—"
    return f"{int(v):,}"


def _missing(v) -> bool:
    try:
        return v is None or v != v
    except (TypeError, ValueError):
        return v is None


def seconds(s: float | None) -> str:
    """A time in seconds with the unit a reader expects: '1.541 s', '7.374 ms', '654.2 µs', '912 ns'."""
    if _missing(s):
        return "—"
    assert s is not None
    a = abs(s)
    if a >= 1.0:
        return f"{s:.4g} s"
    if a >= 1e-3:
        return f"{s * 1e3:.4g} ms"
    if a >= 1e-6:
        return f"{s * 1e6:.4g} µs"
    return f"{s * 1e9:.4g} ns"


def ratio(v: float | None) -> str:
    """A speedup or slowdown: '2,355×', '11.3×', '0.775×'."""
    if _missing(v):
        return "—"
    assert v is not None
    return f"{v:,.0f}×" if abs(v) >= 100 else f"{v:.3g}×"


def percent(fraction: float | None, digits: int = 1) -> str:
    """A share given as a fraction: 0.913 -> '91.3%'."""
    if _missing(fraction):
        return "—"
    assert fraction is not None
    return f"{fraction * 100:.{digits}f}%"


def number(v: float | None, fmt: str = ",.4g") -> str:
    if _missing(v):
        return "—"
    assert v is not None
    return format(v, fmt)


@dataclass
class Column:
    """One table column: its cells as strings (or rich Text), how it aligns, and when it may be left out.

    `drop`: columns with a rank are left out, lowest rank first, while the table does not fit;
    None keeps the column. `wrap`: the one column (the name) that wraps instead of being cut."""

    header: str
    cells: list[Any] = field(default_factory=list)
    justify: str = "right"
    drop: int | None = None
    wrap: bool = False
    style: str | None = None

    def natural(self) -> int:
        cells = self.cells
        if all(type(c) is str for c in cells):
            return max([len(self.header), *map(len, cells)])
        return max([len(self.header), *(len(c) if isinstance(c, str) else c.cell_len for c in cells)])


PAD = 3  # SIMPLE_HEAD without edges: a space either side of each cell and one between columns (minus the two edges)


def fit(columns: list[Column], width: int, wrap_min: int = 24) -> tuple[list[Column], list[str]]:
    """The columns that fit `width` with the wrapping column at least `wrap_min` wide (or its natural
    width when narrower), dropping droppable columns lowest rank first; also the headers dropped."""
    widths = [min(c.natural(), wrap_min) if c.wrap else c.natural() for c in columns]
    kept, gone = fit_widths(widths, [c.drop for c in columns], [c.wrap for c in columns], width)
    return [columns[i] for i in kept], [columns[i].header for i in gone]


def fit_widths(widths: list[int], drops: list[int | None], wraps: list[bool], width: int) -> tuple[list[int], list[int]]:
    """`fit` on the columns' widths (the wrapping one's already at most wrap_min), drop ranks and
    whether each wraps: the positions kept (in order) and those left out (in the order they went)."""
    kept = list(range(len(widths)))

    def needed() -> int:
        return sum(widths[i] + PAD for i in kept) - PAD

    gone: list[int] = []
    for i in sorted((i for i in kept if drops[i] is not None), key=lambda i: drops[i]):  # type: ignore[arg-type, return-value]
        if needed() <= width:
            break
        kept.remove(i)
        gone.append(i)
    for i in [i for i in reversed(gone) if not wraps[i]]:  # a narrow column left out on the way may fit again
        kept.append(i)
        kept.sort()
        if needed() > width:
            kept.remove(i)
        else:
            gone.remove(i)
    return kept, gone


@dataclass
class Fitted:
    """A table laid out for a width: the columns kept (fit), its title and caption (rich markup).
    Drawn by rich (`rich()`, or printing it: `__rich__`), or written as plain lines without rich by
    render/plain.Writer.table where the output is a file or a pipe (the same bytes)."""

    title: str
    columns: list[Column]
    caption: str | None
    wrap_min: int = 24

    def min_width(self, c: Column) -> int:
        """The width a column is given at least (rich's min_width): numbers their natural width, the
        folding column up to `wrap_min`."""
        return min(c.natural(), self.wrap_min) if c.wrap else c.natural()

    def rich(self) -> Table:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(title=self.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                      caption=self.caption, caption_justify="left")
        for c in self.columns:
            justify: Literal["left", "center", "right"] = (
                "left" if c.justify == "left" else "center" if c.justify == "center" else "right")
            if c.wrap:
                table.add_column(c.header, justify=justify, overflow="fold", min_width=self.min_width(c), style=c.style)
            else:
                table.add_column(c.header, justify=justify, no_wrap=True, min_width=self.min_width(c), style=c.style)
        kept = self.columns
        for i in range(len(kept[0].cells) if kept else 0):  # a str cell is text, never rich markup (user names)
            table.add_row(*[Text(c.cells[i]) if isinstance(c.cells[i], str) else c.cells[i] for c in kept])
        return table

    __rich__ = rich


def fit_table(title: str, columns: list[Column], width: int, wrap_min: int = 24, caption: str | None = None) -> Fitted:
    """`columns` laid out for `width`: numbers never wrap or lose their unit, the name column wraps
    (fold) instead of shrinking to nothing, and columns that do not fit are left out (named in the
    caption)."""
    kept, dropped = fit(columns, width, wrap_min)
    notes = [caption] if caption else []
    if dropped:
        notes.append(f"{', '.join(dropped)} not shown at {width} columns (--width N shows them)")
    return Fitted(title, kept, "\n".join(notes) or None, wrap_min)


def fitted_table(title: str, columns: list[Column], width: int, wrap_min: int = 24, caption: str | None = None) -> Table:
    """fit_table drawn by rich: a rich Table."""
    return fit_table(title, columns, width, wrap_min, caption).rich()
