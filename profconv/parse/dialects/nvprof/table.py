"""The state of the nvprof summary table being read (its columns, rows, decimal mark)."""

from __future__ import annotations

from dataclasses import dataclass, field

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import _body, _row_from, parse_summary_row
from profconv.parse.model import Block
from profconv.parse.schema import Row


@dataclass
class _Table:
    """The summary table being read: its columns and the row whose name may continue."""

    fields: list[str]
    time_unit: str | None
    section: str | None
    block: Block | None = None
    open_row: Row | None = None
    neutral_run: int = 0
    by_section: dict[str, Block] = field(default_factory=dict)
    fast: bool = False  # the standard 8-column layout: rows may take the one-regex path
    units_row: bool = False  # a units row under the header: every time cell may be a bare number
    pending: list[tuple[int, str]] = field(default_factory=list)  # numbers of a row split over lines
    orphan_text: bool = False  # a text line no row took since the last row: a name out of place?
    headerless: bool = False  # rows pasted without their header: a code fence ends them (their paste)
    unlabelled: bool = False  # and without a section label: a blank line ends them too (their paragraph)
    cell_per_line: bool = False  # the header came one cell a line (PDF text): a row's name follows its numbers
    nvtx: bool = False  # a table of an 'NVTX result:' block: one range's time, its GPU activities and API calls
    votes: units.LocaleVote = field(default_factory=units.LocaleVote)  # every numeric cell so far
    locale: units.Locale = units.C_LOCALE
    read: list[tuple[Row, str, list[str], str | None]] = field(default_factory=list)  # to re-read if the locale changes
    # rows read in bulk are columns of their block (Block.table); where their lines are (index
    # ranges into `lines`), per section key, so they can become Row objects again (a row read line
    # by line joins the block, or the locale changes and every row is read again)
    bulk_raw: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # the parse's lines (summary rows stay in them)

    def new_block(self, section: str | None, line: int) -> Block:
        """A block of this table's (an NVTX range's tables: each a kind of its own, so that one
        profile holds them all; profconv.parse.dialects.nvprof.nvtx)."""
        return Block(section=section, line_start=line, line_end=line, kind=f"nvtx-range@{line}" if self.nvtx else None)

    def materialize(self, key: str) -> None:
        """The bulk rows of the block of `key` as Row objects (in blk.rows), listed in `read`."""
        spans = self.bulk_raw.pop(key, None)
        blk = self.by_section.get(key)
        if spans is None or blk is None or blk.table is None:
            return
        raws = [ln for a, b in spans for ln in self.lines[a:b]]
        c = blk.table.cols
        rows = list(map(Row, c["section"], c["name"], c["line_start"], c["line_end"], c["time_pct"],
                        c["total_ns"], c["calls"], c["avg_ns"], c["min_ns"], c["max_ns"]))
        blk.rows = rows + blk.rows
        blk.table = None
        self.read.extend((r, _body(raw), self.fields, self.time_unit) for r, raw in zip(rows, raws))

    def vote(self, body: str) -> tuple[units.Locale, units.LocaleVote]:
        v = self.votes.copy().add(t for t in body.split() if t[:1].isdigit())
        return v.locale(), v

    def relocate(self, loc: units.Locale) -> None:
        """The table's decimal mark turned out different: read its earlier rows again."""
        self.locale = loc
        for key in list(self.bulk_raw):
            self.materialize(key)
        for row, body, fields, unit in self.read:
            parsed = parse_summary_row(body, fields, unit, loc)
            if parsed is not None:
                fresh = _row_from(parsed[1], row.name, row.section, row.line_start)
                for f in ("time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns"):
                    setattr(row, f, getattr(fresh, f))
        for blk in self.by_section.values():
            blk.notes = [units.AMBIGUOUS_NOTE] if loc.ambiguous else []


