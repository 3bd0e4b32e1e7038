"""Turn a dialect's events (profile starts, tables) into profiles, in file order."""

from __future__ import annotations

from dataclasses import dataclass

from profconv.parse.model import Block, RawProfile, SweptRun


@dataclass
class Event:
    # start | block | break (another profiler's output: the next table is another run's) | profiles
    # (profiles made at once by a reader of a sweep's shape: what their start and block events make)
    kind: str
    line: int
    pid: int | None = None
    command: str | None = None
    block: Block | None = None
    device: str | None = None  # a start that names its device (nvprof --print-summary-per-gpu)
    profiles: list[RawProfile] | None = None  # `profiles`: those profiles (pid, command: its last one's)


# Sections that may legitimately appear several times in one profile (one table per device
# or per kind of operation, e.g. nsys's kernel and memcpy-time reports both feed "gpu").
REPEATABLE = {"unified-memory", "ncu-metric", "metric"}


def group(events: list[Event], tool: str) -> list[RawProfile]:
    """A start line opens a profile; so does a second table of a section the profile already has."""
    profiles: list[RawProfile] = []
    current: RawProfile | None = None
    kinds: set[str | None] = set()  # the current profile's tables' kinds (or sections)
    for ev in events:
        what = ev.kind
        if what == "start":
            if current is None or current.sweep is not None or current.blocks:  # (a sweep's profiles have blocks)
                current = RawProfile(tool=tool, line_start=ev.line, line_end=ev.line)
                profiles.append(current)
                kinds = set()
            current.pid = ev.pid if ev.pid is not None else current.pid
            current.command = current.command or ev.command
            current.device = ev.device or current.device
            continue
        if what == "break":
            current = None
            continue
        if what == "profiles":  # each opened by its start, its tables joined to it: as they are
            assert ev.profiles
            made = ev.profiles
            if current is not None and current.sweep is None and not current.blocks:  # the first start goes on the profile open
                head, made = _first(made)
                _join(current, head)
            profiles.extend(made)
            current = profiles[-1] if profiles else None
            kinds = _kinds(current) if current is not None else set()
            continue
        blk = ev.block
        assert blk is not None and blk.section is not None
        if blk.empty():
            continue
        kind = blk.kind or blk.section
        if current is None or (kind in kinds and blk.section not in REPEATABLE):
            current = RawProfile(tool=tool, line_start=blk.line_start, line_end=blk.line_end)
            profiles.append(current)
            kinds = set()
        elif type(current) is SweptRun:  # a table of its last profile: that one on its own
            current = _last_alone(profiles)
        current.blocks.append(blk)
        kinds.add(kind)
        if blk.line_end > current.line_end:
            current.line_end = blk.line_end
    return [p for p in profiles if p.sweep is not None or p.blocks]  # (a sweep's profiles have blocks)


def _kinds(p: RawProfile) -> set[str | None]:
    """The kinds (or sections) of a profile's tables (a sweep's: from its columns, none made; a
    SweptRun's last profile's)."""
    sweep = p.sweep
    if sweep is None:
        return {b.kind or b.section for b in p.blocks}
    t = p.t0 + p.count - 1 if type(p) is SweptRun else p.index  # type: ignore[attr-defined]
    return set(sweep.section[sweep.lo[t] : sweep.lo[t + 1]])


def _first(made: list[RawProfile]) -> tuple[RawProfile, list[RawProfile]]:
    """The first profile of those made at once, and the others (a SweptRun's first one made alone)."""
    head = made[0]
    if type(head) is not SweptRun:
        return head, made[1:]
    rest = [head.part(1, head.count)] if head.count > 1 else []
    return head.part(0, 1).profiles()[0], rest + made[1:]


def _last_alone(profiles: list[RawProfile]) -> RawProfile:
    """The last profile of the SweptRun that ends `profiles` made alone (after the run, shortened)."""
    run = profiles[-1]
    assert type(run) is SweptRun
    last = run.part(run.count - 1, run.count).profiles()[0]
    if run.count > 1:
        profiles[-1] = run.part(0, run.count - 1)
        profiles.append(last)
    else:
        profiles[-1] = last
    return last


def _join(current: RawProfile, made: RawProfile) -> None:
    """A profile made at once whose start finds `current` open without a table: what its start
    and block events make of `current` (pid, command and device as a start gives them, its tables)."""
    current.pid = made.pid if made.pid is not None else current.pid
    current.command = current.command or made.command
    current.device = made.device or current.device
    current.blocks.extend(made.blocks)
    current.line_end = max(current.line_end, *(b.line_end for b in made.blocks))
