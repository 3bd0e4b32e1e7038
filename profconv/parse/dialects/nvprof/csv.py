"""nvprof --csv tables: summary, GPU/API trace, Unified Memory, metric/event summary and trace.

A table is its header line, an optional units row, and its rows, one a line. A line among them
that is no CSV row of the table (program output, a warning: 'Done.') does not end it: the rows
after it are read on, and the line itself is reported where it looks like data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import (
    _CSV_HEADER,
    _PREFIX,
    LABEL_SECTIONS,
    _row_from,
    is_marker,
    looks_like_data,
)
from profconv.parse.dialects.nvprof.metrics import _metric_row
from profconv.parse.dialects.nvprof.trace import _trace_block
from profconv.parse.model import Block
from profconv.parse.names import brackets_open, strip_correlation
from profconv.parse.schema import Row
from profconv.parse.text import clean, csv_rows
from profconv.parse.traces import summarize_trace

STRAY_RUN = 3  # lines that are no rows a table may hold between two of its rows (more: it ended)


def _csv_like(c: str) -> bool:
    """A line that may be a CSV row of nvprof's (a quoted cell, an empty one, or a number first)."""
    return bool(c.strip()) and (c[0] in '",' or c[0].isdigit())


def _csv_rows(lines: list[str], i: int) -> tuple[list[tuple[int, list[str]]], list[int], int]:
    """The CSV table's lines from index i (each cleaned of its report markup and PID prefix): its
    rows with their line numbers, the line numbers of stray lines among them (no CSV row, with rows
    of the table after them), and the index after the table. Only the table's own lines are read:
    linear in the file."""
    texts = [_csv_line(lines[i])]
    numbers = [i + 1]
    stray: list[int] = []
    j = i + 1
    if j < len(lines) and "," in lines[j]:
        texts.append(_csv_line(lines[j]))
        numbers.append(j + 1)
        j += 1
    width = texts[0].count(",")
    while j < len(lines):
        c = _csv_line(lines[j])
        if _csv_like(c) or _units_like(c, width, len(texts)):
            texts.append(c)
            numbers.append(j + 1)
            j += 1
            continue
        k = _resumes(lines, j, width, len(texts))
        if k is None:
            break
        stray.extend(range(j + 1, k + 1))
        j = k
    return list(zip(numbers, csv_rows(texts))), stray, j


def _units_like(c: str, width: int, read: int) -> bool:
    """The line under the header may be its units row ('ms,ms,,,KB,…': a unit first, the header's
    commas); `read` is the number of the table's lines read so far (1: the header alone)."""
    return read == 1 and c.count(",") == width and not _CSV_HEADER.match(c.strip())


def _resumes(lines: list[str], j: int, width: int, read: int) -> int | None:
    """Where the table goes on after stray lines from index j: the index of its next row (a CSV
    line with as many commas as the header, or its units row right after the header, at most
    STRAY_RUN lines on, no marker of nvprof's among the lines before it and no header itself),
    else None."""
    for k in range(j, min(len(lines), j + 1 + STRAY_RUN)):
        c = _csv_line(lines[k])
        if k > j and (_csv_like(c) or _units_like(c, width, read)):
            return k if c.count(",") >= width and not _CSV_HEADER.match(c.strip()) else None
        if is_marker(c) or not c.strip():
            return None  # a marker, a header, a blank line: the table ended
    return None


def _csv_line(line: str) -> str:
    c = clean(line)
    m = _PREFIX.match(c)
    return c[m.end() :] if m else c


def _csv_value(cell: str, unit: str, kind: str) -> float:
    cell = cell.strip()
    if cell in ("", "-", "<OVERFLOW>", "n/a"):
        return float("nan")
    if kind == "time":
        return units.time_ns(cell, unit if unit in units.TIME_UNITS_NS else None)
    if kind == "size":
        return units.size_bytes(cell) if not units.is_number(cell) else units.number(cell) * (
            units.SIZE_UNITS_BYTES.get(unit.lower(), 1)
        )
    return units.number(cell)


_NUMBER_STARTS = ("+", ".")


@dataclass
class _Csv:
    """One --csv table: header, units row (blank cells where none), data rows with line numbers."""

    header: list[str]
    units: list[str]
    data: list[tuple[int, list[str]]]
    col: dict[str, int] = field(default_factory=dict)
    blocks: dict[str, Block] = field(default_factory=dict)
    bad: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.col = {h: k for k, h in enumerate(self.header)}

    def block(self, section: str, line: int) -> Block:
        if section not in self.blocks:
            self.blocks[section] = Block(section=section, line_start=line, line_end=line)
        return self.blocks[section]

    def add(self, section: str, line: int, row: Row) -> None:
        b = self.block(section, line)
        b.rows.append(row)
        b.line_end = line

    def unit(self, name: str) -> str:
        return self.units[self.col[name]]


def _has_units(rows: list[tuple[int, list[str]]]) -> bool:
    """The line under the header is a units row ('', '%', 'ms', …: no number in it)."""
    if len(rows) < 2:
        return False
    second = rows[1][1]
    return (not second or second[0] in ("", "%", "ms", "us", "s", "ns")) and not any(
        units.is_number(c) for c in second if c.strip()[:1] in _NUMBER_STARTS or c.strip()[:1].isdigit()
    )  # a number starts with a digit, '+' or '.' (a unit cell is looked at no further)


def _parse_csv_table(rows: list[tuple[int, list[str]]]) -> tuple[list[Block], list[int]]:
    """A --csv table (header, optional units row, data) -> blocks; returns unparsable line numbers."""
    header = rows[0][1]
    if not header:
        return [], [n for n, _ in rows]
    has_units = _has_units(rows)
    if has_units and len(rows[1][1]) != len(header):  # a units row of another width: no cell's unit is known
        return [], [n for n, _ in rows]
    t = _Csv(header, rows[1][1] if has_units else [""] * len(header), rows[2:] if has_units else rows[1:])
    layout = next((read for test, read in _LAYOUTS if test(t)), None)
    if layout is None:
        return [], [n for n, _ in rows]
    layout(t)
    return list(t.blocks.values()), t.bad


def _summary(t: _Csv) -> None:
    """The summary: one row per name (and Type: GPU activities, API calls, …)."""
    header, col = t.header, t.col
    try:
        at = [col[h] for h in ("Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name")]
    except KeyError:
        t.bad.extend(line for line, _ in t.data)
        return
    kind = col.get("Type")
    unit = [t.units[k] for k in at[1:6]]
    for line, r in t.data:
        if (len(r) > len(header) and header[-1] == "Name" and brackets_open(r[len(header) - 1])
                and all(x.startswith(" ") for x in r[len(header) :])):
            # an unquoted name with commas ('red_sor(float*, float*)'): the name is the last
            # column, so the extra fields are the rest of it
            r = r[: len(header) - 1] + [",".join(r[len(header) - 1 :])]
        if len(r) != len(header):
            t.bad.append(line)
            continue
        try:
            section = LABEL_SECTIONS.get(r[kind], "gpu") if kind is not None else "gpu"
            vals = {
                "pct": units.percent(r[at[0]]),
                "time": _csv_value(r[at[1]], unit[0], "time"),
                "calls": units.plain_count(r[at[2]]),
                "avg": _csv_value(r[at[3]], unit[2], "time"),
                "min": _csv_value(r[at[4]], unit[3], "time"),
                "max": _csv_value(r[at[5]], unit[4], "time"),
            }
        except (ValueError, IndexError):
            t.bad.append(line)
            continue
        new = section not in t.blocks
        t.add(section, line, _row_from(vals, r[at[6]], section, line))
        if new:  # nvprof prints a column with one number of decimals: its first row says its step
            t.blocks[section].resolution = (_step(r[at[1]], unit[0]), _step(r[at[3]], unit[2]))


def _step(cell: str, unit: str) -> float:
    """The printed step of a time cell in ns ('0.000469' in s: 1,000 ns); 0 where it is not known
    (a unit in the cell, no unit row)."""
    c = cell.strip()
    scale = units.TIME_UNITS_NS.get(unit)
    if scale is None or not c.replace(".", "", 1).isdigit():
        return 0.0
    decimals = len(c) - c.index(".") - 1 if "." in c else 0
    return scale * 10.0 ** -decimals


def _trace(t: _Csv) -> None:
    """A GPU or API trace: one row per event (and the per-name summary of them)."""
    name_col = t.col.get("Name", len(t.header) - 1)
    recs = []
    for line, r in t.data:
        try:
            start = _csv_value(r[0], t.units[0], "time")
            dur = _csv_value(r[1], t.units[1], "time")
            recs.append((r[name_col], start, dur, line, line))
        except (ValueError, IndexError):
            t.bad.append(line)
    section = "gpu-trace" if "Grid X" in t.col or "Size" in t.col else "api-trace"
    if recs:
        first = t.data[0][0]
        tb, bases = _trace_block(recs, section, first, t.data[-1][0])
        assert tb.table is not None
        t.blocks[section] = tb
        summary = summarize_trace(tb.table, "gpu" if section == "gpu-trace" else "api", bases)
        t.blocks[summary.section or "gpu"] = summary


def _unified_memory(t: _Csv) -> None:
    """Unified Memory: per device and kind of transfer or fault, its count, size and time."""
    col = t.col
    for line, r in t.data:
        try:
            count = r[col["Count"]].strip()
            t.add("unified-memory", line, Row(
                section="unified-memory", name=r[-1], line_start=line, line_end=line,
                calls=units.plain_count(count) if count else None, bytes=_csv_value(r[col["Total Size"]], "", "size"),
                total_ns=_csv_value(r[col["Total Time"]], t.unit("Total Time") or "s", "time")))
        except (ValueError, IndexError, KeyError):
            t.bad.append(line)


def _metric_summary(t: _Csv) -> None:
    """--metrics / --events summary: one row per kernel x metric (or event)."""
    col = t.col
    name_col = col["Metric Name"] if "Metric Name" in col else col["Event Name"]
    for line, r in t.data:
        if len(r) != len(t.header):
            t.bad.append(line)
            continue
        row = _metric_row(r[col["Kernel"]], r[name_col], r[col["Invocations"]] if "Invocations" in col else "",
                          (r[col["Min"]], r[col["Max"]], r[col["Avg"]]), line,
                          description=r[col["Metric Description"]] if "Metric Description" in col else None,
                          total=r[col["Total"]] if "Total" in col else None)
        if row is None:
            t.bad.append(line)
            continue
        t.add("metric", line, row)


def _metric_trace(t: _Csv) -> None:
    """--metrics / --events trace: one row per kernel launch, a column per metric."""
    kernel = t.col["Kernel"]
    first = t.col.get("Correlation_ID", kernel)
    for line, r in t.data:
        b = t.block("metric", line)
        for k, h in enumerate(t.header):
            if k <= first or k >= len(r):
                continue
            cell = r[k]
            try:
                value = units.number(cell) if cell.strip() else float("nan")
            except ValueError:
                value = float("nan")
            b.rows.append(Row(section="metric", name=strip_correlation(r[kernel]), line_start=line, line_end=line,
                              metric=h, unit=t.units[k] if k < len(t.units) else None, value=value))
        b.line_end = line


_LAYOUTS: list[tuple[Callable[[_Csv], bool], Callable[[_Csv], None]]] = [
    (lambda t: "Time(%)" in t.col, _summary),
    (lambda t: t.header[0] == "Start", _trace),
    (lambda t: t.header[0] == "Device" and "Count" in t.col, _unified_memory),
    (lambda t: "Kernel" in t.col and ("Metric Name" in t.col or "Event Name" in t.col)
     and {"Min", "Max", "Avg"} <= t.col.keys(), _metric_summary),
    (lambda t: t.header[0] == "Device" and "Kernel" in t.col, _metric_trace),
]


def read_table(lines: list[str], i: int) -> tuple[list[Block], list[int], list[int], int]:
    """The --csv table whose header is at index i: its blocks, the lines it holds (claimed), the
    lines it could not read (unplaced: rows that do not read, stray lines that look like data) and
    the index after it."""
    rows, stray, j = _csv_rows(lines, i)
    blocks, bad = _parse_csv_table(rows)
    held = [n for n, _ in rows]
    bad.extend(n for n in stray if looks_like_data(_csv_line(lines[n - 1])))
    return blocks, held, sorted(bad), j
