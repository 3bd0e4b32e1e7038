"""A sweep's nsys runs made into profiles at once, their tables held as columns (profconv.parse.model.Sweep).

A sweep's log holds thousands of runs, each a `Generating …` line (a profile's start) and one small
summary table, read with the others of its header from the input's bytes (nsys_batch). nsys's reader
notes such a table (`add`) as a `Batched` event (its range of the batch, section and report: no Block
yet), or, right after a bare start, as one more run of the `Runs` before it (start lines and tables as
columns: no event a run); once the lines are read, `events` turns each run of a start followed by the
one table of its profile into a `profiles` event of one SweptRun (its profiles as columns), as grouping would make them of those
events: the core then passes over their blocks as the batch's columns (core._rows, _block_notes,
_drop_inconsistent), and a block is made only where something asks for it. Any other batched table
becomes its block event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from profconv.parse import grouping
from profconv.parse.model import Block, Sweep, SweptRun

TOOL = "nsys"


@dataclass
class Batched(grouping.Event):
    """A table read with the others of its header (nsys_batch), its block not made: rows `first` ..
    first + n - 1 of `batch`, its header at line `line` and its rows on the lines after it."""

    batch: Any = None
    first: int = 0
    n: int = 0
    section: str = ""
    report: str = ""


def block_of(ev: Batched) -> Block:
    """The block nsys's CSV reader makes of a batched table (nsys._batched_block)."""
    return Block(section=ev.section, span=ev.batch.span(ev.first, ev.n), line_start=ev.line + 1,
                 line_end=ev.line + ev.n, kind=ev.report)


@dataclass
class Runs(grouping.Event):
    """Runs of one batch one after the other, each a bare start (no pid, command or device) right
    before a batched table of its profile (`add`): their start lines and tables as columns (no
    event a run), the tables' fields as Batched's (`line`: the first start's)."""

    batch: Any = None
    starts: list[int] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)  # each table's header line (Batched.line)
    firsts: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    sections: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)

    def table(self, t: int) -> Batched:
        return Batched("batched", self.heads[t], batch=self.batch, first=self.firsts[t], n=self.sizes[t],
                       section=self.sections[t], report=self.reports[t])


def add(evs: list[grouping.Event], line: int, batch: Any, first: int, n: int, section: str, report: str) -> None:
    """A batched table (Batched's fields) after the events so far: where it follows a bare start, the
    two join the runs of its batch right before that start (or open runs); else a Batched event."""
    start = evs[-1] if evs else None
    if not n or type(start) is not grouping.Event or not _bare(start):
        evs.append(Batched("batched", line, batch=batch, first=first, n=n, section=section, report=report))
        return
    runs = evs[-2] if len(evs) > 1 else None
    if type(runs) is not Runs or runs.batch is not batch:
        runs = evs[-1] = Runs("runs", start.line, batch=batch)
    else:
        evs.pop()
    runs.starts.append(start.line)
    runs.heads.append(line)
    runs.firsts.append(first)
    runs.sizes.append(n)
    runs.sections.append(section)
    runs.reports.append(report)


def extend(evs: list[grouping.Event], batch: Any, got: dict[str, list]) -> None:
    """What `add` makes of runs of `batch` one after the other, each a bare start (`got['starts']`)
    noted right before its table (Runs' columns of the same names), from their lists at once: they
    join the runs of that batch the events end with, or open runs."""
    runs = evs[-1] if evs else None
    if type(runs) is not Runs or runs.batch is not batch:
        runs = Runs("runs", got["starts"][0], batch=batch)
        evs.append(runs)
    for key in ("starts", "heads", "firsts", "sizes", "sections", "reports"):
        getattr(runs, key).extend(got[key])


def _bare(ev: grouping.Event) -> bool:
    return ev.kind == "start" and ev.pid is None and ev.command is None and ev.device is None


def reports(evs: list[grouping.Event]) -> tuple[set[str | None], set[str | None]]:
    """The reports and the sections of the batched tables among the events."""
    kinds: set[str | None] = set()
    sections: set[str | None] = set()
    for ev in evs:
        if type(ev) is Runs:
            kinds.update(ev.reports)
            sections.update(ev.sections)
        elif type(ev) is Batched:
            kinds.add(ev.report)
            sections.add(ev.section)
    return kinds, sections


def events(evs: list[grouping.Event]) -> list[grouping.Event]:
    """`evs` with each run of (a start, the batched table that is its profile's one table: what
    follows opens another profile or ends them) of one batch as one `profiles` event, and every other
    batched table as its block event."""
    out: list[grouping.Event] = []
    for k, ev in enumerate(evs):
        if type(ev) is Batched:
            out.append(grouping.Event("block", ev.line, block=block_of(ev)))
        elif type(ev) is Runs:
            after = evs[k + 1].kind if k + 1 < len(evs) else "start"
            m = len(ev.starts) - (after not in ("start", "break", "runs"))  # the last table: not its profile's one
            if m:
                out.append(_profiles(ev, m))
            if m < len(ev.starts):
                out += [grouping.Event("start", ev.starts[m]), grouping.Event("block", ev.heads[m],
                                                                               block=block_of(ev.table(m)))]
        else:
            out.append(ev)
    return out


def _profiles(runs: Runs, m: int) -> grouping.Event:
    """The profiles the first m runs' start and block events make (grouping), made at once."""
    batch = runs.batch

    def made(t: int) -> list[Block]:
        return [block_of(runs.table(t))]

    heads, sizes = runs.heads[:m], runs.sizes[:m]
    sweep = Sweep(batch.table, batch.text, list(range(m + 1)), runs.firsts[:m], sizes, runs.sections[:m],
                  [h + 1 for h in heads], made)
    none: list[Any] = [None] * m
    run = SweptRun(sweep, TOOL, 0, runs.starts[:m], [h + n for h, n in zip(heads, sizes)], none, none)
    return grouping.Event("profiles", runs.starts[0], profiles=[run])
