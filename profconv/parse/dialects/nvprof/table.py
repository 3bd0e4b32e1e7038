"""The state of the nvprof summary table being read (its columns, rows, decimal mark)."""

from __future__ import annotations

from dataclasses import dataclass, field

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import _LABEL, LABEL_SECTIONS, _body, _row_from, parse_summary_row
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
    # the decimal mark per section (key: 'gpu', 'api', …, '?' before a label says): each decided from
    # its own numeric cells, so that one odd cell in the API calls cannot change the GPU activities
    votes: dict[str, units.LocaleVote] = field(default_factory=dict)
    locales: dict[str, units.Locale] = field(default_factory=dict)
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

    @property
    def locale(self) -> units.Locale:
        """The decimal mark of the section rows go to now."""
        return self.locales.get(self.section or "?", units.C_LOCALE)

    def all_c_locale(self) -> bool:
        return not self.locales or all(loc is units.C_LOCALE for loc in self.locales.values())

    def key_of(self, body: str) -> str:
        """The section a row's line goes to (its label's, else the current one)."""
        m = _LABEL.match(body)
        return LABEL_SECTIONS[m.group(1)] if m else (self.section or "?")

    def add_dots(self, key: str, n: int) -> None:
        """n cells of section `key` said '.' is the decimal mark (plain rows read in bulk)."""
        try:
            self.votes[key].dot += n
        except KeyError:
            v = self.votes[key] = units.LocaleVote()
            v.dot = n

    def vote(self, body: str) -> tuple[units.Locale, units.LocaleVote, str]:
        """The mark of the row's section with this line's cells counted (not kept yet: `commit`)."""
        key = self.key_of(body)
        v = self.votes.get(key)
        v = (v.copy() if v is not None else units.LocaleVote()).add(t for t in body.split() if t[:1].isdigit())
        return v.locale(), v, key

    def commit(self, key: str, votes: units.LocaleVote, loc: units.Locale) -> None:
        """A row was read with these votes: kept; its section's earlier rows read again if the
        mark they say differs."""
        self.votes[key] = votes
        if loc != self.locales.get(key, units.C_LOCALE):
            self.relocate(key, loc)

    def relocate(self, key: str, loc: units.Locale) -> None:
        """The section's decimal mark turned out different: read its earlier rows again (only then is
        a section's mark kept in `locales`: empty, every one is C's)."""
        self.locales[key] = loc
        if key in self.bulk_raw:
            self.materialize(key)
        for row, body, fields, unit in self.read:
            if (row.section or "?") != key:
                continue
            parsed = parse_summary_row(body, fields, unit, loc)
            if parsed is not None:
                fresh = _row_from(parsed[1], row.name, row.section, row.line_start)
                for f in ("time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns"):
                    setattr(row, f, getattr(fresh, f))
        blk = self.by_section.get(key)
        if blk is not None:
            flag(blk, loc)


def flag(blk: Block, loc: units.Locale) -> None:
    """The block's note that its decimal mark is undecided: there where it is, not where not."""
    if loc.ambiguous and units.AMBIGUOUS_NOTE not in blk.notes:
        blk.notes.append(units.AMBIGUOUS_NOTE)
    elif not loc.ambiguous and units.AMBIGUOUS_NOTE in blk.notes:
        blk.notes.remove(units.AMBIGUOUS_NOTE)
