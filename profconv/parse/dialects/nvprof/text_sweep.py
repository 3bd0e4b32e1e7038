"""Summary-only nvprof profiles read in one go: start line, program output, application line, result
line, summary header and plain rows, again and again.

nvprof's console output without --print-gpu-trace is thousands of such profiles when a sweep's
logs are concatenated (about 28 lines each: ~50 µs of the engine's loop). Once the profile-start
reader took a start line, the profiles from there are read here without the loop: each line is
checked to be one that the engine gives to the same reader (cleaned as the context cleans it, none of
the keys of the readers asked before it in it, its own pattern), program output to be a line the
context's `quick` test sends straight to `stray`, the rows to be a run the bulk summary reader takes
whole (one C call, _rowscan.scan, or the regex), and what those readers do is done: the start
events with their PID and command, the parse's state kept at each start, the lines claimed, the
rows as columns of one block per section. A profile is made only where the next profile's start
line follows its rows (that line ends its table in the engine, so nothing after the rows can join
it); the first line that is not so goes back to the engine's loop, so the result is the engine's
either way (tests/test_parse_nvprof_text_sweep.py compares both)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple

from profconv.parse import native, units
from profconv.parse.dialects.nvprof.common import (
    _API_CALL,
    _APPLICATION,
    _FAST_ROW,
    _KEYWORD,
    _RESULT,
    _START,
    FULL_LAYOUT,
    LABEL_SECTIONS,
    TOOL,
    _name_continues,
    _row_run,
    looks_like_data,
    parse_header,
)
from profconv.parse.dialects.nvprof.summary import _scan_regex
from profconv.parse.dialects.nvprof.sweep import _asked_before_start, _body
from profconv.parse.engine import Cursor
from profconv.parse.grouping import Event
from profconv.parse.model import Block, RawProfile, Span
from profconv.parse.table import Rows

if TYPE_CHECKING:
    from profconv.parse.dialects.nvprof.state import Nvprof

# the keys of the readers the engine asks before the application, result and summary readers (a line
# holding one may be theirs: left to the engine)
_BEFORE_APPLICATION = ("CPU profiling result", '",', "Time(%),Time,Calls,", "NVPROF is profiling process ")
_BEFORE_RESULT = (*_BEFORE_APPLICATION, "Profiling application: ")
_BEFORE_SUMMARY = (*_BEFORE_RESULT, "Profiling result", 'Device "', "API calls", "NVTX result", '"', "Invocations",
                   "Kernel: ", "Unified Memory profiling result", "Start")
_PLAIN_HEADER = (["type", *FULL_LAYOUT], None)


class _Start(NamedTuple):
    pid: int | None  # the start line's PID (its pattern's)
    command: str
    prefix: str | None  # its PID prefix's digits (the context's last PID)


class _Planned(NamedTuple):
    """A profile checked to be read as the engine reads it, nothing done yet."""

    start: _Start
    line: int  # the start line's index
    unplaced: list[int]  # program output that looks like data (line numbers)
    prefixes: tuple[str | None, str | None, str | None]  # the application, result and header lines' PID digits
    app_command: str
    marks: tuple[int, int, int]  # the application, result and header lines' indices
    rows: int  # the index of its first row
    n_rows: int
    segments: list[tuple]


def _pid(digits: str) -> int | None:
    """A PID prefix's digits as the context keeps them (`Nvprof.prepare`)."""
    return int(digits) if len(digits) < 19 else units.pid(digits)


def _start(lines: list[str], j: int) -> _Start | None:
    """Line j as the profile-start reader takes it (with no reader open), or None."""
    if j >= len(lines) or "%" in lines[j]:  # (no summary row: the bulk reader passes over it)
        return None
    body, prefix = _body(lines[j])
    if "NVPROF is profiling process " not in body or _asked_before_start(body) or not (m := _START.search(body)):
        return None
    return _Start(units.pid(m.group(1)), m.group(2).strip(), prefix)


def _without(body: str, keys: tuple[str, ...]) -> bool:
    return not any(k in body for k in keys)


def _output(lines: list[str], j: int, body: str, prefix: str | None) -> bool:
    """Program output: a line the context's `quick` test sends to `stray` (no PID prefix here)."""
    return prefix is None and _KEYWORD.search(body) is None and not _row_run(body, lines, j + 1)


def _head(lines: list[str], j: int) -> tuple[list[int], int, str, tuple] | None:
    """From the line after a start (index j): program output up to the application line, then the
    result line and the summary header, each as its reader takes it. The program output that looks
    like data (line numbers), the header's index, the application's command and the three lines'
    PID prefixes; None where the profile is not of that shape."""
    n = len(lines)
    unplaced: list[int] = []
    while j < n:
        body, prefix = _body(lines[j])
        if "Profiling application: " in body:
            break
        if not _output(lines, j, body, prefix):
            return None
        if looks_like_data(body):
            unplaced.append(j + 1)
        j += 1
    if j + 3 >= n:  # (the header's next line: its first row)
        return None
    app, pa = body, prefix
    res, pr = _body(lines[j + 1])
    hdr, ph = _body(lines[j + 2])
    if not (_without(app, _BEFORE_APPLICATION) and (m := _APPLICATION.search(app))
            and "Profiling result" in res and _without(res, _BEFORE_RESULT) and _RESULT.match(res)
            and _without(hdr, _BEFORE_SUMMARY) and parse_header(hdr) == _PLAIN_HEADER):
        return None
    return unplaced, j + 2, m.group(1).strip(), (pa, pr, ph)


def _scanned(ctx: Nvprof, k: int) -> tuple | None:
    """The plain rows from index k as the summary reader's `early` reads them (C or the regex)."""
    lines = ctx.lines
    raw = lines[k]
    if "%" not in raw:
        return None
    rowscan = ctx.rowscan
    if rowscan is not None:
        got = rowscan.scan(lines, k, len(lines))
        if got[1] != 2:
            return got if got[0] else None
    m = _FAST_ROW.match(raw)
    got = _scan_regex(lines, k, m) if m is not None else None
    return got if got is not None and got[0] else None


def _whole(lines: list[str], k: int, got: tuple) -> bool:
    """Whether the bulk reader takes every row of the run (`_bulk_summary` keeps none back), one
    block per section, and no GPU row names a CUDA API call (those `_api_calls_out` takes out)."""
    count, _, segments, pct_at = got
    if pct_at >= 0 or _name_continues(segments[-1][2][-1]):
        return False
    if k + count + 1 < len(lines) and lines[k + count].strip() and _FAST_ROW.match(lines[k + count + 1]):
        return False
    section, seen = "gpu", set()
    for seg in segments:
        section = LABEL_SECTIONS[seg[0]] if seg[0] is not None else section
        if section in seen or (section == "gpu" and any(nm[:2] == "cu" and _API_CALL.fullmatch(nm) for nm in seg[2])):
            return False
        seen.add(section)
    return True


def _plan(ctx: Nvprof, j: int, start: _Start) -> _Planned | None:
    """The profile whose start line is at index j, checked (None: left to the engine)."""
    lines = ctx.lines
    got = _head(lines, j + 1)
    if got is None:
        return None
    unplaced, h, command, prefixes = got
    rows = _scanned(ctx, h + 1)
    if rows is None or not _whole(lines, h + 1, rows):
        return None
    return _Planned(start, j, unplaced, prefixes, command, (h - 2, h - 1, h), h + 1, rows[0], rows[2])


def _blocks(p: _Planned) -> list[Block]:
    """The planned rows as the bulk reader keeps them: per section a block whose table holds them."""
    out = []
    section = "gpu"  # the result line's pending section
    k = p.rows
    for label, a, names, calls, pct, total, avg, lo, hi in p.segments:
        if label is not None:
            section = LABEL_SECTIONS[label]
        b = a + len(names)
        starts = list(range(k + a + 1, k + b + 1))
        blk = Block(section=section, line_start=k + a + 1, line_end=k + b)
        blk.table = Rows.trusted({
            "section": [section] * (b - a), "name": names, "line_start": starts, "line_end": starts.copy(),
            "time_pct": pct, "total_ns": total, "calls": calls, "avg_ns": avg, "min_ns": lo, "max_ns": hi,
        }, b - a)
        out.append(blk)
    return out


def _made(ctx: Nvprof, p: _Planned) -> RawProfile:
    """What the engine's readers do with the planned profile's lines, done; the profile its start,
    application and block events make (grouping)."""
    result = ctx.result
    if p.start.prefix:
        ctx.last_pid = _pid(p.start.prefix)
    result.resume[p.line + 1] = ctx.resume_state()
    pa, pr, ph = p.prefixes
    if pa:
        ctx.last_pid = _pid(pa)
    pid = ctx.last_pid if ctx.last_pid is not None else p.start.pid  # the application line's start event's
    for digits in (pr, ph):
        if digits:
            ctx.last_pid = _pid(digits)
    result.unplaced.extend(p.unplaced)
    a, r, h = p.marks
    result.claimed.update((p.line + 1, a + 1, r + 1, h + 1))
    result.rows_read.append((p.rows + 1, p.rows + p.n_rows))
    ctx.pending_section = None  # the header took the result line's 'gpu'
    ctx.cell_header = False
    blocks = _blocks(p)
    return RawProfile(tool=TOOL, line_start=p.line + 1, line_end=max(p.line + 1, blocks[-1].line_end),
                      pid=pid, command=p.start.command or p.app_command, blocks=blocks)


_SECTIONS = ("gpu", "api", "openacc")  # _rowscan.profiles' section codes
# lines _rowscan.profiles reads at most a call (its columns' buffers, and the tuples of the profiles
# read, are held at once: a whole 20 MB input in one call had raised the CLI's peak by 12 MB)
BATCH_LINES = 1 << 16


class _Columns:
    """A batch of rows _rowscan.profiles read, and how its profiles' blocks hold them: as ranges of
    the batch where NumPy is imported already (core gathers ranges with it: ~50 ms less of 20 MB),
    else as tables of their own (a CLI run: no parse makes it import NumPy, ~0.1 s)."""

    def __init__(self, got: tuple) -> None:
        _, _, names, calls, pct, total, avg, lo, hi = got
        self.cols = (names, pct, total, calls, avg, lo, hi)
        self.ranges = _numpy_imported()
        self.batch = Rows.trusted(dict(zip(_BATCH_COLUMNS, self.cols)), len(names))
        # every row's total within 1% of calls x average (core._drop_inconsistent's first test, in
        # C): the ranges are marked checked, so that core does not test them again one by one
        plausible = getattr(native.load("_kahan"), "plausible", None) if self.ranges else None
        self.checked = plausible is not None and plausible(total, calls, avg) is True

    def ranged(self, code: int, k: int, x: int, y: int, first: int) -> Block:
        """Rows k + x .. k + y - 1 of a profile whose first row is the batch's `first`, as a range."""
        return Block(_SECTIONS[code], [], None, k + x + 1, k + y, span=Span(self.batch, first + x, y - x, None,
                                                                             self.checked))

    def block(self, code: int, k: int, x: int, y: int, first: int) -> Block:
        """The same rows as a table of their own."""
        section = _SECTIONS[code]
        blk = Block(section=section, line_start=k + x + 1, line_end=k + y)
        a, b = first + x, first + y
        starts = list(range(k + x + 1, k + y + 1))
        cols = {"section": [section] * (b - a), **{name: c[a:b] for name, c in zip(_BATCH_COLUMNS, self.cols)},
                "line_start": starts, "line_end": starts.copy()}
        blk.table = Rows.trusted({name: cols[name] for name in _TABLE_COLUMNS}, b - a)
        return blk


def _numpy_imported() -> bool:
    return "numpy" in sys.modules


_BATCH_COLUMNS = ("name", "time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns")
_TABLE_COLUMNS = ("section", "name", "line_start", "line_end", "time_pct", "total_ns", "calls", "avg_ns", "min_ns",
                  "max_ns")  # the bulk summary reader's order


def _batch(ctx: Nvprof, got: tuple) -> list[RawProfile]:
    """The profiles _rowscan.profiles read (the same checks in C, on ASCII lines), made as `_made`
    makes them; their rows one batch of columns (_Columns). The context's state is kept in locals
    along the batch and set once at its end (no reader reads it meanwhile)."""
    cols = _Columns(got)
    block = cols.ranged if cols.ranges else cols.block
    result = ctx.result
    resume = result.resume
    claimed: list[int] = []
    rows_read: list[tuple[int, int]] = []
    out = []
    state = list(ctx.resume_state())  # (pending section, cell header, device, last PID, metric kernel, layout)
    last_pid = ctx.last_pid
    for s, a, r, h, k, first, pid, command, app_command, sp, ap, rp, hp, segments in got[1]:
        if sp is not None:
            last_pid = sp
        state[3] = last_pid
        resume[s + 1] = tuple(state)
        state[0], state[1] = None, False  # the header took the result line's 'gpu'
        if ap is not None:
            last_pid = ap
        app_pid = last_pid if last_pid is not None else pid  # the application line's start event's
        if rp is not None:
            last_pid = rp
        if hp is not None:
            last_pid = hp
        claimed += (s + 1, a + 1, r + 1, h + 1)
        n = segments[-1][2]
        rows_read.append((k + 1, k + n))
        out.append(RawProfile(TOOL, s + 1, max(s + 1, k + n), [block(code, k, x, y, first) for code, x, y in segments],
                              app_pid, command or app_command))
    if out:
        ctx.pending_section, ctx.cell_header, ctx.last_pid = None, False, last_pid
    result.claimed.update(claimed)
    result.rows_read += rows_read
    return out


def _one(ctx: Nvprof, j: int) -> _Planned | None:
    """The profile whose start line is at index j, planned, where the next one's start follows it."""
    lines = ctx.lines
    start = _start(lines, j)
    p = _plan(ctx, j, start) if start is not None else None
    return p if p is not None and _start(lines, p.rows + p.n_rows) is not None else None


def sweep(ctx: Nvprof, cur: Cursor) -> bool:
    """At a start line the profile-start reader took (no reader open, the context's `nvtx` off): the
    profiles from there read in one go (one `profiles` event), while each is of the shape above and
    the next one's start line follows its rows (in C while its lines are plain ASCII, a profile
    at a time in Python where C stops); cur.next left at the first start line not read here.
    False where none was made (the engine's readers go on with the start line)."""
    lines = ctx.lines
    j = cur.i
    rowscan = ctx.rowscan
    in_c = getattr(rowscan, "profiles", None)
    made: list[RawProfile] = []
    while True:
        got = in_c(lines, j, BATCH_LINES) if in_c is not None else None
        if got is not None:  # C again from where it stopped (None there: a profile left to Python)
            made.extend(_batch(ctx, got))
            j = got[0]
            continue
        p = _one(ctx, j)
        if p is None:
            break
        made.append(_made(ctx, p))
        j = p.rows + p.n_rows
    if not made:
        return False
    last = made[-1]
    ctx.events.append(Event("profiles", made[0].line_start, pid=last.pid, command=last.command, profiles=made))
    cur.next = j
    return True
