"""The parse engine: a dialect's table readers run over a document's lines.

A dialect (profconv/parse/dialect.py) declares its readers in order; each reads one table shape
(a summary, a trace, a metric table, a marker line such as a profile start). The engine walks the
lines once and, for each, asks:

1. the open reader's `early` (only a `greedy` reader: rows it reads before any marker is looked
   for, e.g. trace rows; a reader may take many lines at once by moving `cur.next`);
2. the context's `prepare` (per-line work every reader shares: cleaning report markup, a PID
   prefix) and, where no reader is open, its `quick` test (a line none of the readers could want:
   straight to `stray`);
3. each reader in the declared order: `opens` (does this line open its table, or is it its marker?
   asked only where one of the reader's `keys` is in the line's `view`) and, for the open reader,
   right after its own `opens`, `take` (a line of its open table);
4. the context's `stray` (a line no reader took: unplaced when it looks like data).

Each answer is a verdict: CLAIMED (the line belongs to a profile), UNPLACED (it looks like data but
fits nowhere), SKIPPED (nothing to book: neutral, or the reader booked lines itself), or None (not
this reader's: ask the next). The engine books the verdict; readers that read several lines book
them on the context (`claim_range`, `unplace`). The context (one per parse) holds what readers
share: the result (DialectResult), the events (profile starts and tables, in file order; grouped
into profiles by profconv.parse.grouping), the open reader, and the dialect's own state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from profconv.parse.grouping import Event
from profconv.parse.model import Block, DialectResult, Document

R = TypeVar("R", bound="Reader")

CLAIMED = 1
UNPLACED = 2
SKIPPED = 3
Verdict = int


class Cursor:
    """The line the engine is at: `raw` (the document's text of it), `i` (its index), `next` (the
    index read next: a reader that reads several lines moves it)."""

    __slots__ = ("i", "lines", "next", "raw")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0
        self.next = 0
        self.raw = ""

    def at(self, i: int) -> None:
        self.i = i
        self.next = i + 1
        self.raw = self.lines[i]

    @property
    def lineno(self) -> int:
        return self.i + 1


class Context:
    """One parse's shared state; a dialect subclasses it for its own (`prepare`, `quick`, `stray`
    and `finish` are its hooks)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.lines = doc.lines
        self.result = DialectResult()
        self.events: list[Event] = []
        self.open: Reader | None = None
        self.readers: list[Reader] = []  # set by `run`

    def find(self, cls: type[R]) -> R:
        """This parse's reader of that class."""
        return next(r for r in self.readers if type(r) is cls)  # type: ignore[return-value]

    # bookkeeping
    def claim(self, lineno: int) -> None:
        self.result.claimed.add(lineno)

    def claim_range(self, first: int, last: int) -> None:
        self.result.claimed.update(range(first, last + 1))

    def unplace(self, lineno: int) -> None:
        self.result.unplaced.append(lineno)

    def add_block(self, block: Block, line: int) -> None:
        self.events.append(Event("block", line, block=block))

    def add_start(self, line: int, **kw) -> None:
        self.events.append(Event("start", line, **kw))

    # the open reader
    def opened(self, reader: Reader) -> None:
        self.open = reader

    def close_open(self) -> None:
        if self.open is not None:
            reader, self.open = self.open, None
            reader.close()

    # hooks
    def prepare(self, cur: Cursor) -> None:
        """Per-line work before the readers' `opens` (cleaning a line's markup, say)."""

    def quick(self, cur: Cursor) -> bool:
        """With no reader open: whether no reader can want this line (it goes to `stray`)."""
        return False

    def view(self, cur: Cursor) -> str:
        """The line's text as readers' `keys` are looked for in it (after `prepare`)."""
        return cur.raw

    def stray(self, cur: Cursor) -> Verdict | None:
        """A line no reader took."""
        return None

    def finish(self) -> DialectResult:
        """The result once every line was read (the open reader closed)."""
        return self.result


class Reader:
    """One table shape of a dialect (see the module docstring for when each method is asked)."""

    greedy = False
    # substrings of which one is in every line `opens` takes (None: it is asked of every line): a
    # line without them skips `opens` (the open reader's `take` is asked all the same)
    keys: tuple[str, ...] | None = None

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def early(self, cur: Cursor) -> Verdict | None:
        return None

    def opens(self, cur: Cursor) -> Verdict | None:
        return None

    def take(self, cur: Cursor) -> Verdict | None:
        return None

    def close(self) -> None:
        """The table ends (the next table or marker, or the end of the input)."""


STRAY_RUN = 3  # lines that are no rows a table may hold between two of its rows (more: it ended)


def resumes(lines: list[str], j: int, is_row: Callable[[str], bool], ends: Callable[[str], bool],
            run: int = STRAY_RUN) -> int | None:
    """Where a table interrupted at index j (a line that is none of its rows: program output, a
    warning) goes on: the index of its next row within `run` lines, where no line before it `ends`
    the table (a marker, a header, a blank line); None where it ended. A reader that goes on there
    reports the lines between as unplaced when they look like data: never silence and loss."""
    for k in range(j, min(len(lines), j + 1 + run)):
        if k > j and is_row(lines[k]):
            return k
        if ends(lines[k]):
            return None
    return None


def step(ctx: Context, readers: Sequence[Reader], cur: Cursor) -> Verdict | None:
    """One line through the readers (the module docstring's order)."""
    op = ctx.open
    if op is not None and op.greedy:
        v = op.early(cur)
        if v is not None:
            return v
    ctx.prepare(cur)
    if ctx.open is None and ctx.quick(cur):
        return ctx.stray(cur)
    text = ctx.view(cur)
    for r in readers:
        keys = r.keys
        if keys is not None and r is not ctx.open:
            for k in keys:
                if k in text:
                    break
            else:
                continue  # none of its keys: it does not open here
        v = r.opens(cur)
        if v is None and r is ctx.open:
            v = r.take(cur)
        if v is not None:
            return v
    return ctx.stray(cur)


def run(ctx: Context, readers: Sequence[Reader]) -> DialectResult:
    """Every line of the context's document through the readers; the context's result."""
    ctx.readers = list(readers)
    try:
        lines = ctx.lines
        claimed, unplaced = ctx.result.claimed, ctx.result.unplaced
        cur = Cursor(lines)
        i, n = 0, len(lines)
        while i < n:
            cur.at(i)
            v = step(ctx, readers, cur)
            if v == CLAIMED:
                claimed.add(i + 1)
            elif v == UNPLACED:
                unplaced.append(i + 1)
            i = cur.next
        ctx.close_open()
        return ctx.finish()
    finally:
        # readers and their context refer to each other: the cycle is broken here, so that a parse's
        # lines and rows are freed when it ends even while the cyclic collector is paused
        # (profconv/nogc.py: a long log read part by part had kept every window's)
        ctx.readers = []
        ctx.open = None


def cut_last_line(result: DialectResult, lines: list[str]) -> None:
    """The end of an input that ends mid-line (no line end after its last line: a file cut while it
    was written or copied): its last line, where no reader took it and the line before it belongs to
    a profile (a row, header or marker the dialect booked), is a row or marker cut short -- `83`,
    `"GPU act`, `393.07ms  1.2`, text -- and is reported unplaced, never silently lost (a markdown
    fence that closes a pasted log without a line end is not cut): in the middle of a table a
    reader takes or unplaces such a line (or the table goes on after it), at the end nothing
    follows to tell. Called for every dialect's result by the core (profconv.parse.core._run), the
    whole file's and a long log's last part alike."""
    n = len(lines)
    last = lines[-1].strip()
    if n > 1 and last and last.strip("`~") and not _booked(result, n) and _booked(result, n - 1):
        result.unplaced.append(n)  # (a markdown fence of ``` or ~~~ closed without a line end: not cut)


def _booked(result: DialectResult, lineno: int) -> bool:
    """Whether the dialect booked the line: claimed (a row, header, marker), read in bulk, or unplaced."""
    return (result.claims(lineno) or any(a <= lineno <= b for a, b in (*result.bulk, *result.rows_read))
            or lineno in result.unplaced)
