"""nvprof --metrics / --events summary tables (and fragments pasted from a `Kernel:` line)."""

from __future__ import annotations

import re

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import _DEVICE, _PREFIX, is_marker, looks_like_data
from profconv.parse.dialects.nvprof.state import Nvprof, NvprofReader
from profconv.parse.engine import CLAIMED, SKIPPED, UNPLACED, Cursor, Verdict
from profconv.parse.model import Block
from profconv.parse.schema import Row
from profconv.parse.text import clean, is_neutral

_METRIC_VALUE = re.compile(r"^(\d[\d.]*(?:[eE][+-]?\d+)?)\s*([A-Za-z%/]+)?$")
_MVAL = r"(?:[A-Za-z]+ \(\d+\)|\S+)"  # '0.935178', '99.92%', '1.9424GB/s', 'Low (1)'
_METRIC_LINE = re.compile(
    r"^\s*(\d+)\s+(\w+ \(\d+ instances\))\s+(\S.*?)\s+(-)\s+(-)\s+(\[.*\])\s*$"  # per-instance values
    rf"|^\s*(\d+)\s+(\w+)\s+(\S.*?)\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s*$"
)
# --events: Invocations, Event Name, Min, Max, Avg, Total (no description)
_EVENT_LINE = re.compile(rf"^\s*(\d+)\s+(\w+)\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s*$")
_LEVEL = re.compile(r"^([A-Za-z]+) \((\d+)\)$")
_METRIC_HEADER = re.compile(r"^\s*Invocations\s+(?:Metric|Event) Name\s+(?:(?:Metric|Event) Description\s+)?Min\s+Max\s+Avg")
# (up to three lines of program output between them: a stray line does not hide the fragment)
_METRIC_FRAGMENT = re.compile(r"Kernel: [^\n]+\n(?:[^\n=]+\n){0,3}?\s*\d+\s+\w+\s+\S[^\n]*\s\S+\s+\S+\s+\S+\n")
# (a paste may have joined the device line to the kernel's: 'Device "GeForce GT 1030 (0)"    Kernel: mm$_omp_fn$0')
_KERNEL_LINE = re.compile(r'^\s*(?:Device "[^"]*"\s+)?Kernel: (\S.*?)\s*$')
_NOT_PRINTED = ("-",)  # a per-instance row's Min and Max
_NOT_AVAILABLE = ("n/a", "N/A")


def _metric_cell(cell: str) -> tuple[float, str | None, str | None] | None:
    """One Min/Max/Avg/Total cell of nvprof's --metrics/--events: (number, unit, text as printed
    when it is not a plain number); None when it is none of nvprof's forms. A utilization level
    ('Low (1)') is its number with its text; a per-instance list ('[ 1 2 ]') and n/a are text only."""
    c = cell.strip()
    if lv := _LEVEL.match(c):
        return units.number(lv.group(2)), None, c
    if c.startswith("[") or c in _NOT_AVAILABLE:
        return float("nan"), None, c
    if c in _NOT_PRINTED:
        return float("nan"), None, None
    if m := _METRIC_VALUE.match(c):
        return units.number(m.group(1)), m.group(2), None
    return None


def _metric_row(kernel: str, metric: str, invocations: str, cells: tuple[str, str, str], line: int,
                description: str | None = None, total: str | None = None) -> Row | None:
    """One --metrics / --events summary row: `value` is the Avg over the invocations, with Min and
    Max (and an event's Total) beside it, each in the row's unit: the Avg's as printed ('%', 'GB/s';
    where the Avg is no number, the unit Min and Max share). A Min or Max printed in another unit
    ('0.00000B/s' beside '1.2132GB/s') keeps its text only: nvprof's scale is not assumed (zero
    aside, which is zero in any unit). None when a cell is none of nvprof's forms (the line is
    reported)."""
    try:
        calls = units.count(invocations) if invocations.strip() else None
        got = [_metric_cell(c) for c in cells]
        tot = _metric_cell(total) if total is not None else None
    except ValueError:
        return None
    lo, hi, avg = got
    if lo is None or hi is None or avg is None or (total is not None and tot is None):
        return None
    unit = avg[1] if avg[0] == avg[0] else (lo[1] if lo[1] == hi[1] else None)

    def in_unit(c: tuple[float, str | None, str | None], printed: str) -> tuple[float, str | None]:
        v, u, text = c
        if u == unit or v == 0.0:
            return v, text
        return float("nan"), printed.strip()

    vmin, tmin = in_unit(lo, cells[0])
    vmax, tmax = in_unit(hi, cells[1])
    vtot = float("nan")
    if tot is not None:
        vtot, ttot = in_unit(tot, total or "")
        if ttot is not None and ttot not in _NOT_AVAILABLE:
            return None  # a Total printed as text or in another unit: no column keeps it, so reported
    return Row(section="metric", name=kernel.strip(), line_start=line, line_end=line, metric=metric.strip(),
               description=description.strip() or None if description is not None else None,
               unit=unit, value=avg[0], value_text=avg[2], value_min=vmin, value_max=vmax, value_total=vtot,
               value_text_min=tmin, value_text_max=tmax, calls=calls)


def _metric_line(body: str, layout: str | None, kernel: str, lineno: int) -> tuple[Row | None, str | None] | None:
    """A --metrics or --events row under `layout` ('metric', 'event', or None when no header was
    seen: a fragment pasted from its 'Kernel:' line, where a row whose description would be a
    number is an event row): the row (None if its cells do not read) and the layout it had; None
    when the line is no such row."""
    if layout != "metric" and (em := _EVENT_LINE.match(body)):
        if layout == "event" or _METRIC_VALUE.match(em.group(3).strip()):
            inv, name, lo, hi, avg, total = em.groups()
            return _metric_row(kernel, name, inv, (lo, hi, avg), lineno, total=total), "event"
    if layout == "event":
        return None
    mm = _METRIC_LINE.match(body)
    if mm is None:
        return None
    g = mm.groups()
    inv, name, desc, lo, hi, avg = g[:6] if g[0] is not None else g[6:]
    return _metric_row(kernel, name, inv, (lo, hi, avg), lineno, description=desc), "metric"


def _metric_follows(lines: list[str], i: int) -> bool:
    """A 'Kernel: name' line opens a metric summary fragment when metric rows follow it (from index
    i, past at most STRAY_RUN lines of program output, none of them blank or nvprof's own)."""
    for raw in lines[i : i + 1 + STRAY_RUN]:
        if _METRIC_LINE.match(raw) is not None:
            return True
        if not raw.strip() or is_marker(clean(raw)):
            return False
    return False




STRAY_RUN = 3  # lines that are no rows a table may hold between two of its rows (more: it ended)


class Metrics(NvprofReader):
    """A --metrics / --events summary: its 'Invocations  Metric Name …' header (or a 'Kernel:' line
    that metric rows follow), then per kernel its rows."""

    keys = ("Invocations", "Kernel: ")

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)
        self.block: Block | None = None

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, body = self.ctx, self.ctx.body
        header = "Invocations" in body and _METRIC_HEADER.match(body)
        if not header and not (ctx.open is not self and "Kernel: " in body and _KERNEL_LINE.match(body)
                               and _metric_follows(ctx.lines, cur.next)):
            return None
        ctx.end_table()
        ctx.opened(self)
        self.block = Block(section="metric", line_start=cur.lineno, line_end=cur.lineno)
        ctx.add_block(self.block, cur.lineno)
        if not header:
            ctx.metric_kernel = _KERNEL_LINE.match(body).group(1)  # type: ignore[union-attr]
            ctx.metric_layout = None  # a fragment without its header: each row tells
        else:
            ctx.metric_layout = "event" if "Event Name" in body else "metric"
        return CLAIMED

    def take(self, cur: Cursor) -> Verdict | None:
        ctx, body, blk = self.ctx, self.ctx.body, self.block
        if blk is None:
            return None
        if is_neutral(body):
            return SKIPPED
        if km := _KERNEL_LINE.match(body):
            ctx.metric_kernel = km.group(1)
            return CLAIMED
        if dm := _DEVICE.match(body):
            ctx.device = dm.group(1)
            return CLAIMED
        if ctx.metric_kernel is not None and (got := _metric_line(body, ctx.metric_layout, ctx.metric_kernel,
                                                                   cur.lineno)):
            row = got[0]
            if row is None:
                return UNPLACED
            blk.rows.append(row)
            blk.line_end = cur.lineno
            return CLAIMED
        if self._resumes(cur.next):
            # a line inside the table that is none of its rows (program output: 'Done.'): the
            # table goes on after it; the line is reported where it looks like data
            return UNPLACED if looks_like_data(body) else SKIPPED
        self.block = None
        ctx.close_open()
        return None

    def _resumes(self, k: int) -> bool:
        """Whether a row of this table is among the next STRAY_RUN lines from index k (before any
        marker or header of nvprof's)."""
        ctx = self.ctx
        if ctx.metric_kernel is None or is_marker(ctx.body):
            return False
        for raw in ctx.lines[k : k + STRAY_RUN]:
            line = clean(raw)
            pm = _PREFIX.match(line) if "=" in line else None
            body = line[pm.end():] if pm else line
            if is_neutral(body):
                continue
            if _metric_line(body, ctx.metric_layout, ctx.metric_kernel, 0) is not None:
                return True
            if is_marker(body) or _KERNEL_LINE.match(body):
                return False
        return False
