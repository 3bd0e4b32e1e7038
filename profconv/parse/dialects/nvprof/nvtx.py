"""nvprof's 'NVTX result:' block: per thread, domain and range, a table of the range's own time
('Range:' row) and the GPU activities and API calls inside it.

The ranges become `nvtx` rows of the profile the block is in (each range's table its own source
table: its printed Time(%) is of that table). The GPU activities and API calls inside a range are
part of the profile's own GPU activities and API calls: they are not kept as rows a second time
(that would count them twice); a note next to the NVTX table says so."""

from __future__ import annotations

from profconv.parse.grouping import Event

INSIDE_NOTE = ("the GPU activities and API calls listed inside each NVTX range (lines {lines}) are not kept as "
               "rows: they are part of the profile's own GPU activities and API calls")


def nvtx_ranges(events: list[Event]) -> None:
    """Drop the blocks of the GPU activities and API calls inside NVTX ranges from `events` (in
    place), noting their lines on the first range's block of their profile."""
    first = None  # the first NVTX range block since the last profile start
    inside: list[tuple[int, int]] = []
    keep: list[Event] = []
    for ev in events:
        blk = ev.block
        if ev.kind in ("start", "profiles"):
            _note(first, inside)
            first, inside = None, []
        elif blk is not None and (blk.kind or "").startswith("nvtx-range@"):
            if blk.section != "nvtx":
                inside.append((blk.line_start, blk.line_end))
                continue
            first = first or blk
        keep.append(ev)
    _note(first, inside)
    events[:] = keep


def _note(first, inside: list[tuple[int, int]]) -> None:
    if first is None or not inside:
        return
    spans = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in inside[:5]) + (", …" if len(inside) > 5 else "")
    first.notes.append(INSIDE_NOTE.format(lines=spans))
