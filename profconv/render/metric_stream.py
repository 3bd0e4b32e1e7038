"""The Metrics table's cells (metric_table's and --all's), and the table of every metric row
(`profconv parse --all`) written a slice of rows at a time.

`--all` lists every metric row of a profile: an `ncu --csv --page raw` page of 20 MB holds 716,000 of
them. `profile_tables.metric_table` makes a record (a dict) and a string a cell for every row, and rich
lays them out: 1.4 GB of memory for that page. Where the output is a file or a pipe (render/plain
writes what rich would print there) the table is written here instead in two passes over slices of
the rows: the first finds what metric_table finds over all of them (which value columns are printed,
each column's width, whether a value printed as text was cut), the second writes the rows; the same
bytes as plain.Writer.table of metric_table's table (tests compare both). A table plain would leave
to rich (one wider than the console: rich wraps its Kernel column; a character whose width rich works
out its own way) is left to metric_table as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from profconv.parse.colviews import View
from profconv.parse.table import Rows, missing_value
from profconv.render import plain
from profconv.render.format import PAD, fit_widths

SLICE = 8192  # rows made into strings at a time (--all)
FROM = 1000  # rows from which --all's Metrics table is written so (profile_tables.METRIC_ROWS_SHOWN)
WRAP_MIN = 16  # metric_table's wrap_min: the Kernel column's least width
# the columns the Metrics table may print; Min and Max (and Avg for Value) where a row has them, Total too
KERNEL, METRIC, UNIT, MIN, MAX, VALUE, TOTAL = range(7)
LEFT = {KERNEL, METRIC, UNIT}  # (the others right-justified)
DROP = {MIN: 2, MAX: 3, TOTAL: 1}  # left out in this order where the table does not fit
VALUE_TEXT_SHOWN = 40  # characters of a metric's printed text in the terminal's table (ncu 2025's
# `--print-details all` body items print a value and its items: '8,524 (100; 100; 75; ...)', 3,000 characters)
CUT_NOTE = f"values printed as text cut at {VALUE_TEXT_SHOWN} characters (…): --json and --csv hold them whole"


def metric_cell(value: Any, text: Any) -> str:
    """A metric value as printed when the tool printed text (a level 'Low (1)', n/a, another unit;
    past VALUE_TEXT_SHOWN characters cut with '…'), else its number; '—' where it printed nothing."""
    if text is not None:
        text = str(text)
        return text if len(text) <= VALUE_TEXT_SHOWN else text[: VALUE_TEXT_SHOWN - 1] + "…"
    if value is None or value != value:
        return "—"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"  # a count as printed ('1,048,576', not '1.04858e+06')
    return f"{value:,}"  # the shortest digits that read back as the value: the printed ones ('63,656.74')


def value_columns(rows: Rows, at: Sequence[int]) -> tuple[bool, bool]:
    """Whether these rows print Min, Max and Avg (a row has a Min or Max), and a Total."""
    spread = _present_in(rows, at, "value_min", "value_text_min") or _present_in(rows, at, "value_max", "value_text_max")
    return spread, _present_in(rows, at, "value_total")


def shown(spread: bool, total: bool) -> list[int]:
    """The columns printed, in order."""
    return [KERNEL, METRIC, UNIT, *([MIN, MAX] if spread else []), VALUE, *([TOTAL] if total else [])]


def headers(spread: bool) -> dict[int, str]:
    return {KERNEL: "Kernel", METRIC: "Metric", UNIT: "Unit", MIN: "Min", MAX: "Max",
            VALUE: "Avg" if spread else "Value", TOTAL: "Total"}


@dataclass
class _Scan:
    """What metric_table finds over all the rows, gathered a slice at a time: whether any row has a
    Min or Max (then Min, Max and Avg are printed), a Total; each column's natural width (characters)
    and cell width (None: one rich measures its own way); whether a value printed as text was cut."""

    spread: bool = False
    total: bool = False
    natural: list[int] = field(default_factory=lambda: [0] * 7)
    cells: list[int | None] = field(default_factory=lambda: [0] * 7)
    cut: list[bool] = field(default_factory=lambda: [False] * 7)


def write_all(fast: plain.Writer, rows: Rows, idx: Sequence[int], width: int) -> bool:
    """The Metrics table of the rows at `idx` (every one) written through `fast` as plain would write
    metric_table(rows, profile, width, None); False, having written nothing, where plain would not."""
    scan = _Scan()
    for lo in range(0, len(idx), SLICE):
        _scan_slice(scan, rows, idx[lo : lo + SLICE])
    names = headers(scan.spread)
    printed = shown(scan.spread, scan.total)
    natural = [max(len(names[c]), scan.natural[c]) for c in printed]
    fits = [min(n, WRAP_MIN) if c == KERNEL else n for c, n in zip(printed, natural)]
    kept, gone = fit_widths(fits, [DROP.get(c) for c in printed], [c == KERNEL for c in printed], width)
    cols = [printed[i] for i in kept]
    widths = [scan.cells[c] for c in cols]
    if any(w is None for w in widths):
        return False
    widths = [max(w, len(names[c])) for w, c in zip(widths, cols)]  # type: ignore[type-var]
    table_width = sum(widths) + PAD * (len(cols) - 1)  # type: ignore[arg-type]
    caption = _caption(scan, printed, [printed[i] for i in gone], names, width)
    notes = _notes(caption, table_width)
    if table_width > fast.width or notes is None or table_width < len("Metrics"):
        return False
    head = "   ".join(plain._justified([names[c]], [len(names[c])], w, "left" if c in LEFT else "right")[0]
                      for c, w in zip(cols, widths))  # type: ignore[arg-type]
    fast.write("Metrics" + " " * (table_width - len("Metrics")) + "\n" + head + "\n" + "─" * table_width + "\n")
    for lo in range(0, len(idx), SLICE):
        fast.write(_lines(columns(rows, idx[lo : lo + SLICE], cols), cols, widths))  # type: ignore[arg-type]
        fast.flush()
    fast.write("".join(a + " " * (table_width - (plain.width(a) or 0)) + "\n" for a in notes))
    return True


def columns(rows: Rows, at: Sequence[int], which: Sequence[int]) -> dict[int, list[str]]:
    """The Metrics table's strings of the rows at `at`, for the columns `which` (KERNEL ... TOTAL)."""
    def cells(name: str) -> Sequence[Any]:
        return _cells(rows, name, at)

    make = {
        KERNEL: lambda: list(map(str, cells("short_name"))),
        METRIC: lambda: list(map(str, cells("metric"))),
        UNIT: lambda: ["" if u is None else str(u) for u in cells("unit")],
        MIN: lambda: list(map(metric_cell, cells("value_min"), cells("value_text_min"))),
        MAX: lambda: list(map(metric_cell, cells("value_max"), cells("value_text_max"))),
        VALUE: lambda: list(map(metric_cell, cells("value"), cells("value_text"))),
        TOTAL: lambda: [metric_cell(v, None) for v in cells("value_total")],
    }
    return {c: make[c]() for c in which}


def _present_in(rows: Rows, at: Sequence[int], key: str, text: str | None = None) -> bool:
    """Whether any of these rows holds a value (not NaN) in `key`, or a text in `text`."""
    return any(v is not None and v == v for v in _cells(rows, key, at)) or (
        text is not None and any(t is not None for t in _cells(rows, text, at)))


def _cells(rows: Rows, name: str, at: Sequence[int]) -> Sequence[Any]:
    """One column's cells at `at`: a slice where they follow one another (an ncu page's rows, kept as
    views: a slice of a view costs the slice, `take` would look through every column)."""
    col = rows.cols.get(name)
    if col is None:
        return [missing_value(name)] * len(at)
    if at and at[-1] - at[0] == len(at) - 1:  # (positions in order, each once: a run)
        return col[at[0] : at[-1] + 1]
    return col.take(at) if isinstance(col, View) else [col[i] for i in at]


def _scan_slice(scan: _Scan, rows: Rows, at: Sequence[int]) -> None:
    """One slice of rows added to the scan. A value column none of its rows fills is '—' in each (its
    strings not made)."""
    spread, total = value_columns(rows, at)
    scan.spread, scan.total = scan.spread or spread, scan.total or total
    strings = columns(rows, at, shown(spread, total))
    for c in range(7):
        got = strings.get(c)
        if got is None:  # ('—' a row)
            got = ["—"] if at else []
        if not got:
            continue
        scan.natural[c] = max(scan.natural[c], max(map(len, got)))
        if scan.cells[c] is not None:
            sized = plain._sizes(got, 0)
            scan.cells[c] = None if sized is None else max(scan.cells[c], sized[1])  # type: ignore[type-var]
        if c >= MIN and not scan.cut[c]:
            scan.cut[c] = any(x.endswith("…") and len(x) == VALUE_TEXT_SHOWN for x in got)


def _caption(scan: _Scan, printed: list[int], gone: list[int], names: dict[int, str], width: int) -> str | None:
    """metric_table's caption (the text cut note) and fit_table's (the columns not shown)."""
    lines = [CUT_NOTE] if any(scan.cut[c] for c in printed if c >= MIN) else []
    if gone:
        lines.append(f"{', '.join(names[c] for c in gone)} not shown at {width} columns (--width N shows them)")
    return "\n".join(lines) or None


def _notes(caption: str | None, table_width: int) -> list[str] | None:
    """The caption's lines as plain.Writer.table writes them (wrapped at the table's width as rich
    wraps them), None where plain leaves the table to rich."""
    out: list[str] = []
    for a in caption.split("\n") if caption else []:
        aw = plain.width(a)
        if aw is None or not plain.markup_free(a):
            return None
        got = [a] if aw <= table_width else plain._wrapped_lines(a, table_width)
        if got is None:
            return None
        out += got
    return out


def _lines(strings: dict[int, list[str]], cols: list[int], widths: list[int]) -> str:
    """The rows of one slice as plain.Writer.table writes them: each column's cells justified to its width."""
    bodies = []
    for c, w in zip(cols, widths):
        sized = plain._sizes(strings[c], 0)
        assert sized is not None  # (the scan measured every cell)
        bodies.append(plain._justified(strings[c], sized[0], w, "left" if c in LEFT else "right"))
    return "".join(line + "\n" for line in map("   ".join, zip(*bodies)))
