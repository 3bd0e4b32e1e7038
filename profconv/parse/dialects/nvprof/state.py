"""What the nvprof readers of one parse share (the engine's context): the summary table being read,
the section a marker announced, the device, the last PID prefix, the metric kernel and layout."""

from __future__ import annotations

import re

from profconv.parse import engine, native, units
from profconv.parse.dialects.nvprof.common import _KEYWORD, _PREFIX, _group, _row_run, looks_like_data
from profconv.parse.dialects.nvprof.nvtx import nvtx_ranges
from profconv.parse.dialects.nvprof.table import _Table
from profconv.parse.engine import UNPLACED, Cursor
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row
from profconv.parse.text import clean


class Nvprof(engine.Context):
    """One nvprof parse: the engine's context with nvprof's state. `table` is the summary table
    being read (it outlives the summary reader's turn: a --csv Unified Memory table leaves it
    unended); `line`, `pm` and `body` are the current line cleaned of report markup, its PID
    prefix match and the text after it (set by `prepare`)."""

    def __init__(self, doc: Document) -> None:
        super().__init__(doc)
        self.table: _Table | None = None
        self.um_block: Block | None = None
        self.pending_section: str | None = None
        self.cell_header = False  # the header just read came one cell a line
        self.device: str | None = None
        self.last_pid: int | None = None
        self.metric_kernel: str | None = None
        self.metric_layout: str | None = None  # metric | event (the header's), None for a fragment without one
        self.nvtx = False  # after 'NVTX result:' (until the next profile starts): tables per NVTX range
        self.nvtx_seen = False
        self.rowscan = native.load("_rowscan")  # looked up per parse: PROFCONV_PURE_PYTHON=1 switches it off
        self.line = self.body = ""
        self.pm: re.Match | None = None
        if "nvprof" in doc.state:  # a part of a longer log, from a profile start (DialectResult.resume)
            (self.pending_section, self.cell_header, self.device, self.last_pid, self.metric_kernel,
             self.metric_layout) = doc.state["nvprof"]

    def resume_state(self) -> tuple:
        """All this parse carries past a profile start: a fresh parse from there is this one."""
        return (self.pending_section, self.cell_header, self.device, self.last_pid, self.metric_kernel,
                self.metric_layout)

    def prepare(self, cur: Cursor) -> None:
        self.line = line = clean(cur.raw)
        self.pm = pm = _PREFIX.match(line) if "=" in line else None
        self.body = line[pm.end() :] if pm else line
        if pm and (g := pm.group(1)):
            self.last_pid = int(g) if len(g) < 19 else units.pid(g)  # thousands of digits: no pid

    def view(self, cur: Cursor) -> str:
        return self.body

    def quick(self, cur: Cursor) -> bool:
        # no marker, header or label any reader looks for (program output, prose): only whether it
        # holds numbers that look like a row is left to decide
        return _KEYWORD.search(self.body) is None and not _row_run(self.body, self.lines, cur.next)

    def stray(self, cur: Cursor) -> int | None:
        return UNPLACED if looks_like_data(self.body) else None

    def end_table(self) -> None:
        """A marker or another table ends the summary table (and a Unified Memory table)."""
        table = self.table
        if table is not None:
            self.drop_nameless(table)
            if table.pending:
                self.result.unplaced.extend(n for n, _ in table.pending)  # numbers that never made a row
        self.table = None
        self.um_block = None
        self.close_open()

    def drop_nameless(self, t: _Table) -> None:
        """A row whose numbers were read but whose name never came (a PDF lost that cell): its
        lines are reported, the row is not kept (a row without a name is no row)."""
        row = t.open_row
        if row is None or row.name:
            return
        blk = t.by_section.get(row.section or "?")
        if blk is not None:
            blk.rows = [r for r in blk.rows if r is not row]
        t.read = [x for x in t.read if x[0] is not row]
        span = range(row.line_start, row.line_end + 1)
        self.result.claimed.difference_update(span)
        self.result.unplaced.extend(span)
        t.open_row = None

    def keep(self, table: _Table, blk: Block, row: Row, body: str, fields: list[str], unit: str | None,
             lineno: int) -> None:
        """A summary row read line by line joins its block (and may be re-read if the mark changes)."""
        table.read.append((row, body, fields, unit))
        blk.rows.append(row)
        blk.line_end = lineno
        table.open_row = row
        table.neutral_run = 0
        table.orphan_text = False
        self.result.claimed.add(lineno)

    def finish(self) -> DialectResult:
        # a table the input ends inside (a log cut short): its numbers still waiting for a name, a
        # row without one, are reported as any table's end reports them, not dropped
        self.end_table()
        if self.nvtx_seen:
            nvtx_ranges(self.events)
        self.result.profiles = _group(self.events, len(self.lines), self.device, self.result.unplaced)
        return self.result


class NvprofReader(engine.Reader):
    """A reader of nvprof's: its context is an Nvprof."""

    ctx: Nvprof

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)
