"""A sweep of `nvprof --csv` profiles read in one go: start line, result line, table, again and again.

A sweep's logs concatenated are thousands of profiles of seven lines each: '==PID== NVPROF is
profiling process PID, command: …', '==PID== Profiling result:', a summary table's header, units row
and rows. The tables are read together as columns (csv_batch); here, once the --csv reader has taken
one of them, the profiles that follow are read without the engine's loop: each start line and result
line is checked to be one that the engine gives to the profile-start and result readers (cleaned as
the context cleans it, none of the keys of the readers asked before them in it, their own pattern),
and what those readers do with it is done (the start event with its PID and command, the parse's
state kept at the start for a fresh parse from there, 'gpu' pending, the lines claimed); the table
is the --csv reader's. The first line that is not so goes back to the engine's loop: the result is
the engine's either way (tests/test_parse_nvprof_sweep.py compares both)."""

from __future__ import annotations

import re
from itertools import repeat
from operator import add, sub
from typing import TYPE_CHECKING

from profconv.parse import native, units
from profconv.parse.dialects.nvprof.common import _PREFIX, _RESULT, _START, TOOL
from profconv.parse.engine import Cursor
from profconv.parse.grouping import Event
from profconv.parse.model import RawProfile, SweptRun
from profconv.parse.text import clean

if TYPE_CHECKING:
    from profconv.parse.dialects.nvprof.csv_batch import Prepared
    from profconv.parse.dialects.nvprof.markers import Csv
    from profconv.parse.dialects.nvprof.state import Nvprof



def _asked_before_start(body: str) -> bool:
    """Whether a key of the readers the engine asks before the profile-start reader (CpuTree, Csv)
    is in the line: it is left to the engine."""
    return "CPU profiling result" in body or '",' in body or "Time(%),Time,Calls," in body


# what text.clean acts on (a line without any of them it gives back as it is: lines hold no '\n')
_MARKUP = re.compile("[\\\\&<*#>|\r\u2013\u2014]")


def _body(raw: str) -> tuple[str, str | None]:
    """A line as the context's `prepare` reads it: the text after its PID prefix, and the prefix's PID digits."""
    line = clean(raw) if _MARKUP.search(raw) else raw
    pm = _PREFIX.match(line) if "=" in line else None
    return (line[pm.end() :], pm.group(1)) if pm else (line, None)


# a start line and a result line as nvprof writes them, nothing in them that `_body` cleans or that
# `_asked_before_start` leaves to the engine (the command checked for those keys): `_profile` reads
# them without cleaning, the prefix's and the process's PID plain ints (up to 18 digits)
# (a '\\' not before a '%': a Windows path's, which neither clean nor normalize rewrites there)
_PLAIN_START = re.compile("==([0-9]{1,18})== NVPROF is profiling process ([0-9]{1,18}), command: "
                          "((?:[^\\\\&<*#>|\r\u2013\u2014]|\\\\(?!%))*)")
_PLAIN_RESULT = re.compile("==([0-9]{1,18})== Profiling result:")


def _plain(start: str, result: str) -> tuple[str, int, str, str] | None:
    """(the start line's prefix PID digits, its process's PID, its command, the result line's PID
    digits) where both lines are plain (see _PLAIN_START): what `_lines` gives them."""
    m = _PLAIN_START.fullmatch(start)
    if m is None:
        return None
    r = _PLAIN_RESULT.fullmatch(result)
    command = m.group(3)
    if r is None or '",' in command or "CPU profiling result" in command or "Time(%),Time,Calls," in command:
        return None
    return m.group(1), int(m.group(2)), command.strip(), r.group(1)


def sweep(reader: Csv, cur: Cursor) -> None:
    """After the --csv reader took a table (cur: its header, cur.next the line after its rows): the
    profiles that follow, while each is a start line, a result line and a table read with the
    others (each line as the engine would read it), made at once (one `profiles` event: what
    grouping makes of their start and block events); cur.next is left at the first line that is not."""
    ctx = reader.ctx
    if ctx.open is not None or ctx.table is not None or ctx.um_block is not None:
        return
    tables = reader.prepared.tables
    made: list[RawProfile] = []
    j = first = cur.next
    while j + 2 in tables:
        many = _following(ctx, j, reader.prepared)  # the next profiles whose lines are plain, at once
        if many is not None:
            made.append(many)
            j = many.line_end
            continue
        got = _profile(ctx, j, reader.prepared)
        if got is None:
            break
        made.append(got)
        j = got.line_end  # the index after its rows
    if made:
        ctx.result.claimed_runs.append((first + 1, j))  # start, result, header, units and rows lines
        made = joined(made)
        last = made[-1]
        ctx.events.append(Event("profiles", made[0].line_start, pid=last.pid, command=last.command, profiles=made))
        cur.next = j


def _profile(ctx: Nvprof, j: int, prepared: Prepared) -> RawProfile | None:
    """The profile whose start line is at index j, its table two lines on (read with the others),
    with what the engine's readers do with its start and result lines done; None (nothing done
    that the engine's loop would not do the same: a table the batch does not give is read by the
    row reader) where the engine may read those lines otherwise."""
    lines = ctx.lines
    plain = _plain(lines[j], lines[j + 1])
    got = _lines(lines[j], lines[j + 1]) if plain is None else plain
    if got is None:
        return None
    sp, pid, command, rp = got
    taken = prepared.take(j + 2)
    if taken is None:
        return None
    blocks = taken[0]
    # the start line: ProfileStart's (its keyword makes it no `quick` line; no table is open to end)
    if sp:
        ctx.last_pid = int(sp) if len(sp) < 19 else units.pid(sp)
    ctx.nvtx = False
    ctx.result.resume[j + 1] = ctx.resume_state()
    # the result line: Result's
    if rp:
        ctx.last_pid = int(rp) if len(rp) < 19 else units.pid(rp)
    ctx.pending_section = "gpu"
    # the table: the --csv reader's blocks (grouping: the start opens the profile, they join it)
    return RawProfile(tool=TOOL, line_start=j + 1, line_end=max(j + 1, *(b.line_end for b in blocks)),
                      pid=pid, command=command, blocks=blocks)


CHUNK = 512  # profiles `_following` looks at in one go (lines that are not plain: no search over all again)
_PLAIN_STARTS = re.compile("^==([0-9]{1,18})== NVPROF is profiling process ([0-9]{1,18}), command: "
                           "((?:[^\\\\&<*#>|\r\n\u2013\u2014]|\\\\(?!%))*)$", re.M)
_PLAIN_RESULTS = re.compile("^==([0-9]{1,18})== Profiling result:$", re.M)


def _following(ctx: Nvprof, j: int, prepared: Prepared) -> SweptRun | None:
    """What `_profile` makes of the profile at index j and of those after it, made in one go: the
    tables that follow one another two lines apart, each taken whole (csv_batch._Group.following),
    while their start and result lines are plain (`_plain_many`); None where fewer than two are so.
    They are one SweptRun (their blocks columns of the group's Sweep, their lines, pids and commands
    columns); the reader's state at each start (`resume`) is made at C speed (zip)."""
    got = prepared.tables.get(j + 2)
    if got is None:
        return None
    group, k = got
    m = min(group.following(k), k + CHUNK)
    if m - k < 2:
        return None
    heads = group.heads[k:m]
    said = _plain_before(ctx.lines, heads)
    if said is None:
        return None
    prefixes, pids, commands, last = said
    heads = heads[: len(pids)]
    for h in heads:
        del prepared.tables[h]
    # what each start line and result line leave (see _profile): the state at a start is the one
    # before it but its prefix's PID, and 'gpu' pending after the first
    ctx.nvtx = False
    before = ctx.resume_state()
    starts = list(map(sub, heads, repeat(1)))
    ctx.result.resume_runs.append((starts, _States(before, prefixes)))
    ctx.pending_section = "gpu"
    ctx.last_pid = int(last)
    ends = list(map(add, heads, map(add, group.sizes[k : k + len(pids)], repeat(2))))  # (header, units, rows)
    return SweptRun(group.sweep(), TOOL, k, starts, ends, pids, commands)


class _States:
    """The reader's state at each start of a run made in one go (DialectResult.resume_runs), made
    where asked for: the state before the run but the start's prefix PID, 'gpu' pending after the first."""

    def __init__(self, before: tuple, prefixes: list) -> None:
        self.before, self.prefixes = before, prefixes

    def __call__(self, k: int) -> tuple:
        b = self.before
        return ("gpu" if k else b[0], b[1], b[2], int(self.prefixes[k]), b[4], b[5])


def joined(made: list[RawProfile]) -> list[RawProfile]:
    """Runs that follow one another (SweptRun.follows) as one."""
    out: list[RawProfile] = []
    for p in made:
        if out and type(p) is SweptRun and p.follows(out[-1]):
            out[-1].extend(p)  # type: ignore[attr-defined]
        else:
            out.append(p)
    return out


def _plain_before(lines: list[str], heads: list[int]) -> tuple[list, list[int], list[str], str | int] | None:
    """`_plain_many` of the start and result lines two and one lines before each header in `heads`
    (the PID digits as ints where read in C: profconv.parse._summarycells.nvprof_starts)."""
    find = getattr(native.load("_summarycells"), "nvprof_starts", None)
    got = find(lines, heads) if find is not None else None
    if got is not None:
        return got if len(got[1]) >= 2 else None
    return _plain_many(list(map(lines.__getitem__, map(sub, heads, repeat(2)))),
                       list(map(lines.__getitem__, map(sub, heads, repeat(1)))))


def _plain_many(starts: list[str], results: list[str]) -> tuple[list[str], list[int], list[str], str] | None:
    """`_plain` of each start line and result line, up to the first pair that is not plain, as
    columns (the start lines' prefix PIDs, their processes' PIDs and commands) and the last result
    line's PID digits: one search over all of them where all are; None where fewer than two are."""
    text = "\n".join(starts)
    if '",' not in text and "CPU profiling result" not in text and "Time(%),Time,Calls," not in text:
        s, r = _PLAIN_STARTS.findall(text), _PLAIN_RESULTS.findall("\n".join(results))
        if len(s) == len(starts) == len(r) >= 2:  # each line matched (no match spans two)
            a, b, c = zip(*s)
            return list(a), list(map(int, b)), list(map(str.strip, c)), r[-1]
    out = []
    for start, result in zip(starts, results):
        got = _plain(start, result)
        if got is None:
            break
        out.append(got)
    if len(out) < 2:
        return None
    sp, pids, commands, rp = zip(*out)
    return list(sp), list(pids), list(commands), rp[-1]


def _lines(raw_start: str, raw_result: str) -> tuple[str | None, int | None, str, str | None] | None:
    """What the engine's readers take from a start line and a result line: (the start line's
    prefix PID digits, its process's PID, its command, the result line's PID digits; the digits
    None or empty where there are none); None where the engine may read those lines otherwise."""
    start, sp = _body(raw_start)
    if "NVPROF is profiling process " not in start or _asked_before_start(start):
        return None
    m = _START.search(start)
    result, rp = _body(raw_result)
    if m is None or not _RESULT.match(result):  # (no key of the readers before Result can be in such a line)
        return None
    return sp, units.pid(m.group(1)), m.group(2).strip(), rp
