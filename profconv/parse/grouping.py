"""Turn a dialect's events (profile starts, tables) into profiles, in file order."""

from __future__ import annotations

from dataclasses import dataclass

from profconv.parse.model import Block, RawProfile


@dataclass
class Event:
    kind: str  # start | block | break (another profiler's output: the next table is another run's)
    line: int
    pid: int | None = None
    command: str | None = None
    block: Block | None = None
    device: str | None = None  # a start that names its device (nvprof --print-summary-per-gpu)


# Sections that may legitimately appear several times in one profile (one table per device
# or per kind of operation, e.g. nsys's kernel and memcpy-time reports both feed "gpu").
REPEATABLE = {"unified-memory", "ncu-metric", "metric"}


def group(events: list[Event], tool: str) -> list[RawProfile]:
    """A start line opens a profile; so does a second table of a section the profile already has."""
    profiles: list[RawProfile] = []
    current: RawProfile | None = None
    for ev in events:
        if ev.kind == "break":
            current = None
            continue
        if ev.kind == "start":
            if current is None or current.blocks:
                current = RawProfile(tool=tool, line_start=ev.line, line_end=ev.line)
                profiles.append(current)
            current.pid = ev.pid if ev.pid is not None else current.pid
            current.command = current.command or ev.command
            current.device = ev.device or current.device
            continue
        blk = ev.block
        assert blk is not None and blk.section is not None
        if blk.empty():
            continue
        kinds = {b.kind or b.section for b in current.blocks} if current else set()
        kind = blk.kind or blk.section
        repeated = current is not None and kind in kinds and blk.section not in REPEATABLE
        if current is None or repeated:
            current = RawProfile(tool=tool, line_start=blk.line_start, line_end=blk.line_end)
            profiles.append(current)
        current.blocks.append(blk)
        current.line_end = max(current.line_end, blk.line_end)
    return [p for p in profiles if p.blocks]
