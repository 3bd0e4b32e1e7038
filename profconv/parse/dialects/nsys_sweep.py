"""A sweep's nsys runs made into profiles at once, their tables held as columns (profconv.parse.model.Sweep).

A sweep's log holds thousands of runs, each a `Generating …` line (a profile's start) and one small
summary table, read with the others of its header from the input's bytes (nsys_batch). nsys's reader
notes such a table as a `Batched` event (its range of the batch, section and report: no Block yet);
once the lines are read, `events` turns each run of a start followed by the one table of its profile
into a `profiles` event of SweptProfiles, as grouping would make them of those events: the core then
passes over their blocks as the batch's columns (core._rows, _block_notes, _drop_inconsistent), and
a block is made only where something asks for it. Any other batched table becomes its block event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profconv.parse import grouping
from profconv.parse.model import Block, Sweep, swept

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


def events(evs: list[grouping.Event]) -> list[grouping.Event]:
    """`evs` with each run of (a start, the batched table that is its profile's one table) of one
    batch as one `profiles` event, and every other batched table as its block event."""
    out: list[grouping.Event] = []
    k = 0
    while k < len(evs):
        ev = evs[k]
        if isinstance(ev, Batched):
            out.append(grouping.Event("block", ev.line, block=block_of(ev)))
            k += 1
            continue
        j = k
        if k + 1 < len(evs) and isinstance(evs[k + 1], Batched):
            batch = evs[k + 1].batch  # type: ignore[attr-defined]
            while _pair(evs, j, batch):
                j += 2
        if j > k:
            out.append(_profiles(evs[k:j:2], evs[k + 1 : j : 2]))  # type: ignore[arg-type]
            k = j
            continue
        out.append(ev)
        k += 1
    return out


def _pair(evs: list[grouping.Event], j: int, batch: Any) -> bool:
    """Events j and j + 1: a start naming nothing and a table of `batch` that its profile holds alone
    (what follows opens another profile, or ends them)."""
    if j + 1 >= len(evs):
        return False
    start, table = evs[j], evs[j + 1]
    if (start.kind != "start" or start.pid is not None or start.command is not None or start.device is not None
            or not isinstance(table, Batched) or table.batch is not batch or not table.n):
        return False
    return j + 2 == len(evs) or evs[j + 2].kind in ("start", "break")


def _profiles(starts: list[grouping.Event], tables: list[Batched]) -> grouping.Event:
    """The profiles the start and block events of these runs make (grouping), made at once."""
    batch = tables[0].batch

    def made(t: int) -> list[Block]:
        return [block_of(tables[t])]

    sweep = Sweep(batch.table, batch.text, list(range(len(tables) + 1)), [t.first for t in tables],
                  [t.n for t in tables], [t.section for t in tables], [t.line + 1 for t in tables], made)
    none: list[Any] = [None] * len(tables)
    profiles = swept(sweep, TOOL, 0, [s.line for s in starts], [t.line + t.n for t in tables], none, none)
    return grouping.Event("profiles", starts[0].line, profiles=profiles)
