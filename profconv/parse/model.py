"""What a dialect parser returns: profiles made of blocks of rows, plus the lines it could not place."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, ClassVar

from profconv.parse.schema import Row
from profconv.parse.table import Rows


@dataclass
class Span:
    """Rows `first` .. first + n - 1 of a batch: the columns of many small tables read together
    (profconv.parse.dialects.nsys_batch), schema columns without section, line numbers or profile.
    A block that is such a range holds no column of its own: the batch's are gathered once for all
    of its blocks (core._rows), whatever the number of profiles. `checked`: every row's total was
    found within 1% of calls x average where the batch was read (core._drop_inconsistent passes
    over the range; else it looks, and a block with a row it drops gets columns of its own)."""

    rows: Rows
    first: int
    n: int
    text: Any = None  # the batch's name column dictionary-encoded (profconv.parse.columnar.Text), if read so
    checked: bool = False

    def col(self, name: str) -> Any:
        """This range of one of the batch's columns (a slice: a copy)."""
        return self.rows.col(name)[self.first : self.first + self.n]


@dataclass
class Block:
    """One table of one section; `table` holds bulk rows (traces) already as schema columns."""

    section: str | None
    rows: list[Row] = field(default_factory=list)
    table: Rows | None = None
    line_start: int = 0
    line_end: int = 0
    kind: str | None = None  # the report it came from, when one section has several
    notes: list[str] = field(default_factory=list)  # said next to this table, not at the end
    rows_left_out: int = 0  # rows read but counted in another table (so its Time(%) need not add up to 100)
    # the name column dictionary-encoded (profconv.parse.columnar.Text), where the columnar reader read it
    names: Any = None
    # the printed step of its Time and Avg cells in ns, where the table says (nvprof --csv: a column in
    # seconds with six decimals steps by 1,000 ns): a total within half a step is calls x average
    resolution: tuple[float, float] = (0.0, 0.0)
    # its rows as a range of a batch (no `rows`, no `table`): every row of it at line_start + its index
    span: Span | None = None

    def empty(self) -> bool:
        return not self.rows and (self.table is None or not len(self.table)) and (self.span is None or not self.span.n)


@dataclass
class RawProfile:
    tool: str
    line_start: int
    line_end: int
    blocks: list[Block] = field(default_factory=list)
    pid: int | None = None
    command: str | None = None
    device: str | None = None
    # a SweptProfile's Sweep while its blocks are held there as columns (not made)
    sweep: ClassVar[Sweep | None] = None

    def sections(self) -> set[str]:
        return {b.section for b in self.blocks if b.section}

    def empty(self) -> bool:
        """No row left in any of its tables (a sweep's profile whose blocks were not made: never)."""
        return self.sweep is None and all(b.empty() for b in self.blocks)


class Sweep:
    """Profiles made at once from one batch of rows (a sweep's thousands of small tables), their
    blocks held as columns: no Block, Span or list of them a profile. Profile t (SweptProfile.index)
    holds blocks lo[t] .. lo[t + 1] - 1; block b is rows first[b] .. first[b] + size[b] - 1 of the
    batch (`rows`, names dictionary-encoded in `text`), of section[b], at lines line[b] + shift on
    (one row a line). Every row was checked where the batch was read (as Span.checked), so the core
    passes over such blocks in bulk (core._rows, _block_notes, _drop_inconsistent); `made(t)`
    gives profile t's blocks as a reader's (for anything else that asks: SweptProfile.blocks)."""

    def __init__(self, rows: Rows, text: Any, lo: list[int], first: list[int], size: list[int],
                 section: list[str], line: list[int], made: Any, arrays: Any = None) -> None:
        self.rows, self.text = rows, text
        self.lo, self.first, self.size, self.section, self.line = lo, first, size, section, line
        self.shift = 0  # added to every block's line numbers (a stream window's -> the file's)
        self._made = made
        # where the reader has them: lo, first, size, line as NumPy int64 arrays and section as an
        # object array (the same values): the core gathers ranges of blocks by NumPy (core._SpanRun)
        self.arrays = arrays

    def made(self, t: int) -> list[Block]:
        blocks: list[Block] = self._made(t)
        for b in blocks:
            b.line_start += self.shift
            b.line_end += self.shift
        return blocks


class SweptProfile(RawProfile):
    """A profile of a Sweep: its blocks made only where something asks for them (then it is a
    RawProfile as any other: `sweep` None). Made by `swept`, not by RawProfile's __init__."""

    index: int

    @property  # type: ignore[override]
    def blocks(self) -> list[Block]:
        got: list[Block] | None = self.__dict__.get("_blocks")
        if got is None:
            sweep = self.sweep
            assert sweep is not None
            got = self.__dict__["_blocks"] = sweep.made(self.index)
            self.__dict__["sweep"] = None
        return got

    @blocks.setter
    def blocks(self, value: list[Block]) -> None:
        self.__dict__["_blocks"] = value
        self.__dict__["sweep"] = None


def swept(sweep: Sweep, tool: str, first: int, starts: list[int], ends: list[int], pids: Sequence[int | None],
          commands: Sequence[str | None]) -> list[RawProfile]:
    """Profiles first, first + 1, ... of `sweep` (their start and last lines, pids, commands)."""
    new = SweptProfile.__new__
    out: list[RawProfile] = []
    for t, a, b, pid, command in zip(range(first, first + len(starts)), starts, ends, pids, commands):
        p = new(SweptProfile)
        p.__dict__ = {"tool": tool, "line_start": a, "line_end": b, "pid": pid, "command": command, "device": None,
                      "sweep": sweep, "index": t}
        out.append(p)
    return out


class SweptRun(RawProfile):
    """Profiles t0 .. t0 + count - 1 of a Sweep (consecutive in it and in the input, their blocks
    not made) as ONE entry of a profile list: their start and last lines, pids and commands held as
    columns, no object a profile. The core, grouping and the stream take it as its `count`
    profiles (`count`, `walk`); `profiles()` makes them one by one (SweptProfiles) for anything
    else. `line_start`/`line_end`: the first one's start and the last one's end; `pid`/`command`:
    the last one's (what a `profiles` event says); `device`: every one's."""

    index = -1  # (no SweptProfile: runs_of passes over it)

    def __init__(self, sweep: Sweep, tool: str, t0: int, starts: list[int], ends: list[int],
                 pids: Sequence[int | None], commands: Sequence[str | None]) -> None:
        self.__dict__.update(tool=tool, sweep=sweep, t0=t0, starts=list(starts), ends=list(ends), pids=list(pids),
                             commands=list(commands), device=None)

    starts: list[int]
    ends: list[int]
    pids: list[int | None]
    commands: list[str | None]
    t0: int

    @property
    def count(self) -> int:
        return len(self.starts)

    @property
    def line_start(self) -> int:  # type: ignore[override]
        return self.starts[0]

    @property
    def line_end(self) -> int:  # type: ignore[override]
        return self.ends[-1]

    @property
    def pid(self) -> int | None:  # type: ignore[override]
        return self.pids[-1]

    @property
    def command(self) -> str | None:  # type: ignore[override]
        return self.commands[-1]

    @property
    def blocks(self) -> list[Block]:  # type: ignore[override]
        raise TypeError("a SweptRun stands for several profiles: take its profiles() (model.expanded)")

    def empty(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"SweptRun({self.count} profiles, lines {self.line_start}-{self.line_end}, t0={self.t0})"

    __eq__ = object.__eq__  # (not its fields: its blocks are not made)
    __hash__ = None  # type: ignore[assignment]

    def profiles(self) -> list[RawProfile]:
        """Its profiles one by one (SweptProfiles of its sweep)."""
        got = swept(self.sweep, self.tool, self.t0, self.starts, self.ends, self.pids,  # type: ignore[arg-type]
                    self.commands)
        if self.device is not None:
            for p in got:
                p.device = self.device
        return got

    def part(self, a: int, b: int) -> SweptRun:
        """Its profiles a .. b - 1 (0-based, within it) as a run of their own."""
        run = SweptRun(self.sweep, self.tool, self.t0 + a, self.starts[a:b], self.ends[a:b],  # type: ignore[arg-type]
                       self.pids[a:b], self.commands[a:b])
        run.device = self.device
        return run

    def follows(self, other: RawProfile) -> bool:
        """Whether it continues run `other` (the next profile of the same sweep: one Sweep, or two
        of one batch group's columns, as csv_batch's group makes one a call)."""
        mine, theirs = self.sweep, other.sweep
        return (type(other) is SweptRun and mine is not None and theirs is not None
                and (theirs is mine or (theirs.rows is mine.rows and theirs.lo is mine.lo and theirs.shift == mine.shift))
                and other.t0 + other.count == self.t0 and other.device == self.device and other.tool == self.tool)

    def extend(self, other: SweptRun) -> None:
        """Its profiles, then those of `other` (which `follows` it)."""
        self.starts += other.starts
        self.ends += other.ends
        self.pids += other.pids
        self.commands += other.commands


def count(raw: Sequence[RawProfile]) -> int:
    """How many profiles a profile list holds (a SweptRun: its count)."""
    runs = [p.count for p in raw if type(p) is SweptRun]
    return len(raw) - len(runs) + sum(runs)


def expanded(raw: list[RawProfile]) -> list[RawProfile]:
    """The profiles of a list one by one (each SweptRun as its profiles)."""
    if not any(type(p) is SweptRun for p in raw):
        return raw
    out: list[RawProfile] = []
    for p in raw:
        if type(p) is SweptRun:
            out.extend(p.profiles())
        else:
            out.append(p)
    return out


def walk(raw: list[RawProfile], first: int = 1) -> Iterator[tuple[int, RawProfile, tuple[Sweep, int, int] | None]]:
    """(number of its first profile, entry, (sweep, t0, t1) or None) for each entry of a profile
    list, numbered from `first`: a SweptRun, or consecutive SweptProfiles of one sweep whose blocks
    are not made (runs_of), as one entry holding profiles t0 .. t1 - 1 of `sweep`; any other profile
    with None."""
    k, number, n = 0, first, len(raw)
    while k < n:
        p = raw[k]
        sweep = p.sweep
        if type(p) is SweptRun and sweep is not None:
            c = p.count
            yield number, p, (sweep, p.t0, p.t0 + c)
            number += c
            k += 1
            continue
        j = runs_of(raw, k)
        if j > k and sweep is not None:
            t0: int = p.index  # type: ignore[attr-defined]
            yield number, p, (sweep, t0, t0 + j - k)
            number += j - k
            k = j
            continue
        yield number, p, None
        number += 1
        k += 1


def runs_of(raw: list[RawProfile], k: int) -> int:
    """The end j of the profiles raw[k:j] that are consecutive profiles of one Sweep, their blocks
    not made (j == k: raw[k] is no such profile; a SweptRun is none)."""
    sweep = raw[k].sweep
    if sweep is None or type(raw[k]) is SweptRun:
        return k
    t = raw[k].index  # type: ignore[attr-defined]
    j = min(len(raw), k + len(sweep.lo) - 1 - t)
    theirs = list(map(_SWEEP, raw[k:j]))
    if theirs.count(sweep) == j - k and raw[j - 1].index - t == j - 1 - k:  # type: ignore[attr-defined]
        return j  # (a sweep's profiles come in its order)
    i = k + 1
    while i < j and theirs[i - k] is sweep and raw[i].index == t + i - k:  # type: ignore[attr-defined]
        i += 1
    return i


_SWEEP = attrgetter("sweep")


@dataclass
class DialectResult:
    profiles: list[RawProfile] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)  # line numbers that belong to a profile (and `bulk`)
    unplaced: list[int] = field(default_factory=list)  # lines that look like data but fit nowhere
    notes: list[str] = field(default_factory=list)
    # notes that speak of their own lines only ('lines A-B: ...', a table profconv does not read), by their
    # index in `notes`: (A, B). A long log's window that holds those lines whole says such a note as the
    # whole file's read says it (profconv.parse.stream); any other note asks for the whole file
    lined_notes: dict[int, tuple[int, int]] = field(default_factory=dict)
    # 1-based inclusive line ranges read in bulk as rows of one table (trace rows): no other
    # dialect's marker and no run context can be in them, later scans skip them
    bulk: list[tuple[int, int]] = field(default_factory=list)
    # 1-based inclusive line ranges read as plain rows of a summary table (one regex each): claimed,
    # and like `bulk` for detection and the run-context scan, but their text stays in the lines (a
    # row found damaged later is reported with its text)
    rows_read: list[tuple[int, int]] = field(default_factory=list)
    # the dialect's own state where a fresh parse could begin at a line (the line number's profile
    # start): what it carries from one profile to the next (profconv/parse/stream.py reads a long
    # log part by part from such lines, each part's parse starting from this state)
    resume: dict[int, Any] = field(default_factory=dict)
    # 1-based inclusive line ranges claimed at once (a sweep's thousands of profiles: no set of a
    # number per line), as if their numbers were in `claimed`: `claims` and `claimed_lines` read both
    claimed_runs: list[tuple[int, int]] = field(default_factory=list)

    # runs of profile starts whose states were kept at once (a sweep's: no tuple and dict entry a
    # profile), each (starts, state_of): state_of(k) the state at line starts[k] (ascending), as if in
    # `resume`; `resume_at` and `resumes` read both
    resume_runs: list[tuple[list[int], Any]] = field(default_factory=list)

    def resume_at(self, lineno: int) -> Any:
        """The state kept at the line (`resume.get`, or a run's), None where there is none."""
        got = self.resume.get(lineno)
        if got is None:
            for starts, state_of in self.resume_runs:
                k = bisect_left(starts, lineno)
                if k < len(starts) and starts[k] == lineno:
                    return state_of(k)
        return got

    def resumes(self, lineno: int) -> bool:
        """Whether a state was kept at the line (in `resume` or a run)."""
        if lineno in self.resume:
            return True
        for starts, _ in self.resume_runs:
            k = bisect_left(starts, lineno)
            if k < len(starts) and starts[k] == lineno:
                return True
        return False

    def claims(self, lineno: int) -> bool:
        """Whether the line is claimed (in `claimed` or a claimed run)."""
        return lineno in self.claimed or any(a <= lineno <= b for a, b in self.claimed_runs)

    def claimed_lines(self) -> set[int]:
        """Every claimed line number (`claimed` itself where no run was claimed)."""
        if not self.claimed_runs:
            return self.claimed
        out = set(self.claimed)
        for a, b in self.claimed_runs:
            out.update(range(a, b + 1))
        return out


@dataclass
class Document:
    """The input text as 1-based lines, with a label for messages."""

    lines: list[str]
    label: str
    text: str = ""  # the whole input, for detection by one regex search instead of a loop over lines
    skip: list[tuple[int, int]] = field(default_factory=list)  # line ranges `text` holds blank (rows_read)
    state: dict[str, Any] = field(default_factory=dict)  # dialect -> DialectResult.resume state to begin with
    # tables found on the input's bytes and read from them (profconv.parse.bytescan.PreRead): their
    # rows are blank lines here
    pre: Any = None

    def numbered(self):
        return enumerate(self.lines, start=1)
