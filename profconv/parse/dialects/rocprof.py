"""AMD rocprof statistics: `rocprof --stats` (results.stats.csv, results.hip_stats.csv,
results.copy_stats.csv) and `rocprofv3 --stats` (*_kernel_stats.csv, *_hip_api_stats.csv, …).

    "Name","Calls","TotalDurationNs","AverageNs","Percentage"[,"MinNs","MaxNs","StdDev"]
    "copy_kernel(float*, float*, int, int) [clone .kd]",1,165920,165920,100.0

One table per file, one row per name; times in nanoseconds. A table of HIP/HSA API names is the
`api` section, one of kernels or copies (`async-copy`) the `gpu` section; rocprofv3's domain
summary (one row per API domain: 'HIP_API') is claimed and noted, not read (its rows are the
other tables' sums). Several files shown one after the other (`cat *stats.csv`) are one profile,
until a table of a section it already has starts another.
"""

from __future__ import annotations

import re

from profconv.parse import engine, grouping, units
from profconv.parse.dialect import Dialect
from profconv.parse.engine import SKIPPED, Cursor, Verdict
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row
from profconv.parse.text import csv_row

TOOL = "rocprof"

_HEADER = re.compile(r'^"?Name"?,"?Calls"?,"?TotalDurationNs"?,"?AverageNs"?,"?Percentage"?'
                     r'(?:,"?MinNs"?,"?MaxNs"?(?:,"?StdDev"?)?)?\s*$')
_API = re.compile(r"^(?:hip[A-Z_]|__hip|hsa_|roctx|amd_comgr|hipblas|rocblas_)")
_DOMAIN = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # 'HIP_API', 'KERNEL_DISPATCH', 'MEMORY_COPY'
DOMAIN_NOTE = ("rocprofv3's domain summary (time per API domain, the sum of the other tables' rows) is not "
               "read as rows")
_COLUMNS = {"Calls": "calls", "TotalDurationNs": "total_ns", "AverageNs": "avg_ns", "Percentage": "time_pct",
            "MinNs": "min_ns", "MaxNs": "max_ns", "StdDev": "std_ns"}


_HEADER_IN_TEXT = re.compile(r'^[ \t]*"?Name"?,"?Calls"?,"?TotalDurationNs"?,"?AverageNs"?,"?Percentage"?', re.M)


def detect(doc: Document) -> bool:
    return "TotalDurationNs" in doc.text and _HEADER_IN_TEXT.search(doc.text) is not None


class Stats(engine.Context):
    """One parse: the events (a profile start where the first table is)."""

    def finish(self) -> DialectResult:
        self.result.profiles = grouping.group(self.events, TOOL)
        for p in self.result.profiles:  # a table that opens a profile carries nothing of the ones before:
            self.result.resume[p.line_start] = ()  # a long log may be cut there (profconv.parse.stream)
        return self.result


class Table(engine.Reader):
    """A statistics table, read at once from its header to the first line that is no row of it."""

    ctx: Stats

    def opens(self, cur: Cursor) -> Verdict | None:
        raw = cur.raw
        if "TotalDurationNs" not in raw or not _HEADER.match(raw.strip()):
            return None
        header = [h.strip() for h in csv_row(raw.strip())]
        rows, stray, cur.next = _rows_of(self.ctx.lines, cur.next, len(header))
        self.ctx.claim(cur.lineno)
        for n in stray:  # a line inside the table that is none of its rows: the table goes on after it
            if any(c.isdigit() for c in self.ctx.lines[n - 1]):
                self.ctx.unplace(n)
        self._table(header, rows, cur.lineno)
        return SKIPPED

    def _table(self, header: list[str], rows: list[tuple[int, list[str]]], line: int) -> None:
        ctx = self.ctx
        names = [cells[0] for _, cells in rows]
        last = rows[-1][0] if rows else line
        if names and all(_DOMAIN.match(n) for n in names):
            ctx.claim_range(line, last)
            blk = Block(section="api", line_start=line, line_end=last, kind="rocprof-domains", notes=[DOMAIN_NOTE])
            ctx.add_block(blk, line)  # empty: no rows, grouping passes it by
            ctx.result.lined_notes[len(ctx.result.notes)] = (line, last)  # (of these lines only: a stream says it)
            ctx.result.notes.append(f"lines {line}-{last}: {DOMAIN_NOTE}")
            return
        section = "api" if names and 2 * sum(1 for n in names if _API.match(n)) >= len(names) else "gpu"
        blk = Block(section=section, line_start=line, line_end=last)
        for n, cells in rows:
            row = _row(header, cells, section, n)
            if row is None:
                ctx.unplace(n)
            else:
                blk.rows.append(row)
                ctx.claim(n)
        ctx.add_block(blk, line)


def _is_row(line: str, width: int = 2) -> bool:
    s = line.strip()
    return not _HEADER.match(s) and len(csv_row(s)) >= width


def _rows_of(lines: list[str], j: int, width: int) -> tuple[list[tuple[int, list[str]]], list[int], int]:
    """The table's rows from index j (line number, cells), the stray lines among them (line
    numbers) and the index after the table."""
    rows: list[tuple[int, list[str]]] = []
    stray: list[int] = []
    while j < len(lines):
        if _is_row(lines[j]):
            rows.append((j + 1, csv_row(lines[j].strip())))
            j += 1
            continue
        k = engine.resumes(lines, j, lambda ln: _is_row(ln, width), lambda ln: not ln.strip() or bool(_HEADER.match(ln.strip())))
        if k is None:
            break
        stray.extend(range(j + 1, k + 1))
        j = k
    return rows, stray, j


def _row(header: list[str], cells: list[str], section: str, line: int) -> Row | None:
    """One row of the table (None when a cell is not the number its column holds)."""
    if len(cells) != len(header):
        return None
    row = Row(section=section, name=cells[0], line_start=line, line_end=line)
    try:
        for h, cell in zip(header[1:], cells[1:]):
            field = _COLUMNS.get(h)
            if field == "calls":
                row.calls = units.plain_count(cell)
            elif field is not None:
                setattr(row, field, units.number(cell))
    except ValueError:
        return None
    return row


READERS = (Table,)


def parse(doc: Document) -> DialectResult:
    ctx = Stats(doc)
    return engine.run(ctx, [cls(ctx) for cls in READERS])


DIALECT = Dialect(
    name="rocprof", title="rocprof", product="rocprof", tool=TOOL,
    markers=("TotalDurationNs",),
    part_start="TotalDurationNs",  # in each table's header; the stream cuts only where one opens a profile
    sections=("gpu", "api"),
    readers=READERS,
    foreign="rocprof",
    detect=detect, parse=parse,
)
