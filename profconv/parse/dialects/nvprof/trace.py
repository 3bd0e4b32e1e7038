"""nvprof --print-gpu-trace / --print-api-trace tables: rows in bulk where aligned, else line by
line (wrapped names, units rows, elisions), with the per-name summary of each trace."""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from typing import Any

from profconv.parse import bytescan, engine, native, units
from profconv.parse.colviews import Const
from profconv.parse.dialects.nvprof.common import _INF, _NAN, _UNIT_EXP, _UNIT_NS, is_marker, looks_like_data
from profconv.parse.dialects.nvprof.state import Nvprof, NvprofReader
from profconv.parse.engine import CLAIMED, SKIPPED, UNPLACED, Cursor, Verdict
from profconv.parse.model import Block
from profconv.parse.names import brackets_open, short_name
from profconv.parse.table import Rows
from profconv.parse.text import ELISION
from profconv.parse.traces import base_codes as _base_codes
from profconv.parse.traces import summarize_trace

_SUFFIX_EXP = {"ms": "e6", "us": "e3", "ns": ""}
_TRACE_ROW = re.compile(
    # context and stream ids are bounded ('\d+' there backtracked super-quadratically on a long digit
    # run: a 12,000-digit cell took 23 s; bounded, each place is tried in constant time)
    r"^\s*(?P<start>\S+)\s+(?P<dur>\S+)\s+(?P<mid>.*?)\s*(?P<ctx>\d{1,10})\s+(?P<stream>\d{1,10})\s+"
    r"(?P<name>[^\d\s].*)$"
)
_API_TRACE_ROW = re.compile(r"^\s*(?P<start>\S+)\s+(?P<dur>\S+)\s+(?P<name>[A-Za-z_].*)$")
BULK_LINES = 20_000
_BULK_LINE = re.compile(r" *(\d{1,15}(?:\.\d{1,12})?)(ms|us|ns|s) +(\d{1,15}(?:\.\d{1,12})?)(ms|us|ns|s) ")

_TRACE_UNIT_CELLS = {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "B/s", "KB/s", "MB/s", "GB/s", "TB/s"}


def _trace_units(raw: str) -> tuple[str, str] | None:
    """'      ms        ms   KB  KB  MB  GB/s' under a trace header (--normalized-time-unit): the
    units of the Start and Duration columns; None when the line is not such a row."""
    toks = raw.split()
    if len(toks) < 2 or toks[0] not in _UNIT_NS or toks[1] not in _UNIT_NS:
        return None
    return (toks[0], toks[1]) if all(t in _UNIT_NS or t in _TRACE_UNIT_CELLS for t in toks) else None



# ---------------------------------------------------------------- traces


def _trace_block(rows: list[tuple], section: str, start_line: int, end_line: int,
                 bulk: list[dict] | None = None) -> tuple[Block, tuple[list[int], list[str]]]:
    """The trace rows (tuples, and column chunks read in bulk) as one block of columns in line
    order, short names filled once per distinct name without its correlation id. Also returns the
    rows' base-name codes and the distinct base names, for the summary."""
    parts = list(bulk or [])
    if rows:
        names, starts, durs, lo, hi = zip(*rows)
        part: dict = {"name": list(names), "start_ns": array("d", starts), "total_ns": array("d", durs),
                      "line": list(lo)}
        if lo != hi:  # a name wrapped over lines
            part["line_end"] = list(hi)
        parts.append(part)
    if len(parts) > 1:
        parts.sort(key=lambda c: int(c["line"][0]))
    codes, uniques = _codes(parts)
    shorts = [short_name(b) for b in uniques]
    line, line_end, names_all, start, total = _joined_parts(parts)
    n = len(line)
    table = Rows({
        # one value all along: a view, no list (core then gives the profile, tool and table columns so)
        "section": Const(section, n), "name": names_all, "short_name": _taken(shorts, codes),
        "start_ns": start, "total_ns": total, "calls": Const(1, n), "line_start": line,
        # a column of its own (core._joined extends a big part's columns in place, not one behind two)
        "line_end": _copy(line) if line_end is None else line_end,
    }, n)
    return Block(section=section, table=table, line_start=start_line, line_end=end_line), (codes, uniques)


def _codes(parts: list[dict]) -> tuple[Any, list[str]]:
    """The rows' base-name codes (traces.base_codes) and the distinct base names, those of a lone part
    read on the bytes as it has them (trace_bytes: an array of int64), else a list."""
    given = parts[0].get("bases") if len(parts) == 1 else None
    if given is not None:
        return given
    index: dict[str, int] = {}
    codes: list[int] = []
    for c in parts:
        given = c.get("bases")
        if given is not None and not index:  # the first part's codes, found where it was read (trace_bytes)
            codes.extend(given[0])
            index.update(zip(given[1], range(len(given[1]))))
        else:
            codes.extend(_base_codes(c["name"], index))
    return codes, list(index)


def _taken(values: list[str], codes: Any) -> list[str]:
    """values[c] for each code (one C pass for an array of codes, where built)."""
    scan = native.load("_bytescan")
    if type(codes) is array and scan is not None and hasattr(scan, "take"):
        return scan.take(values, codes)
    return list(map(values.__getitem__, codes))


def _copy(line: Sequence[int]) -> Sequence[int]:
    """Another column of the same line numbers (a range as a range: no int object a row)."""
    return range(line.start, line.stop, line.step) if type(line) is range else list(line)


def _joined_parts(parts: list[dict]) -> tuple[Sequence[int], list[int] | None, list[str], Any, Any]:
    """The parts' line numbers (and line ends where a name wrapped), names, starts and durations,
    one after the other; a lone part's own names and arrays (no copy; its rows' line numbers as
    the range they are, where a name wrapped over none), and its parts let go."""
    if len(parts) == 1:
        c = parts.pop()
        lines = c["line"]
        return (lines if type(lines) is range and "line_end" not in c else list(lines),
                (list(c["line_end"]) if "line_end" in c else None), c["name"], c["start_ns"], c["total_ns"])
    line: list[int] = []
    line_end: list[int] | None = [] if any("line_end" in c for c in parts) else None
    names_all: list[str] = []
    start = array("d")
    total = array("d")
    for c in parts:
        line.extend(c["line"])
        if line_end is not None:
            line_end.extend(c.get("line_end", c["line"]))
        names_all.extend(c["name"])
        start.extend(c["start_ns"])
        total.extend(c["total_ns"])
    parts.clear()
    return line, line_end, names_all, start, total


_ALIGNED: dict[int, re.Pattern] = {}


def _aligned_row(name_col: int) -> re.Pattern:
    """A trace row whose name starts at `name_col` (a space before it, none at it): the two
    leading times, units glued on, captured."""
    rx = _ALIGNED.get(name_col)
    if rx is None:
        rx = _ALIGNED[name_col] = re.compile(rf"(?=.{{{name_col - 1}}} [^ ])" + _BULK_LINE.pattern)
    return rx


def _bulk_trace(lines: list[str], i: int, name_col: int) -> tuple[dict | None, int]:
    """Aligned trace rows from index i read by one regex pass (the common case: 'start duration …
    name' with units glued on); returns the chunk and the index after it. Rows that do not read
    cleanly are left to the line-by-line path."""
    row = _aligned_row(name_col)
    n = min(len(lines), i + BULK_LINES)  # a slice at a time: the temporaries stay small
    found: list[Any] = list(map(row.match, lines[i : min(n, i + 64)]))
    if len(found) < 64 or None in found:
        return None, i
    found.extend(map(row.match, lines[i + 64 : n]))
    if None in found:  # stop before the first row that needs a closer look
        del found[found.index(None) :]
    j = i + len(found)
    block = lines[i:j]
    # digits and a dot only (the pattern says so): every value is finite
    unit = _UNIT_EXP
    start = array("d", [float(m[1] + unit[m[2]]) for m in found])
    dur = array("d", [float(m[3] + unit[m[4]]) for m in found])
    names = [ln[name_col:].rstrip() for ln in block]
    del block, found
    lines[i:j] = [""] * (j - i)  # read: the rows are theirs alone (DialectResult.bulk), free the text as we go
    return {"name": names, "start_ns": start, "total_ns": dur, "line": range(i + 1, j + 1)}, j


NAN_ = float("nan")


def _trace_like(raw: str) -> bool:
    """A line that starts as a trace row: a time, then a time or '-' (a duration it has not)."""
    toks = raw.split(None, 2)
    return len(toks) >= 2 and units.is_time(toks[0]) and (toks[1] == "-" or units.is_time(toks[1]))


def _trace_ends(raw: str) -> bool:
    """A line after which a trace's rows are another table's: a blank line, a PID marker, a header."""
    return not raw.strip() or is_marker(raw)


def _trace_header(body: str) -> str | None:
    if "Start" not in body:
        return None
    toks = body.split()
    if len(toks) >= 3 and toks[0] == "Start" and toks[1] == "Duration" and toks[-1] == "Name":
        return "gpu-trace" if len(toks) > 3 else "api-trace"
    return None




class Trace(NvprofReader):
    """A --print-gpu-trace or --print-api-trace table, from its 'Start  Duration … Name' header to
    the first line that is not one of its rows."""

    keys = ("Start",)

    greedy = True

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)
        self.rows: list[tuple] = []
        self.bulk: list[dict] = []
        self.section = "gpu-trace"
        self.start = 0
        self.units: tuple[str | None, str | None] = (None, None)  # a normalized trace's Start and Duration units
        self.name_col = 0
        self.end = 0  # the last line of the trace, once it ended

    def opens(self, cur: Cursor) -> Verdict | None:
        sec = _trace_header(self.ctx.body)
        if sec is None:
            return None
        self.ctx.end_table()
        self.section = sec
        # nvprof left-aligns Name under its header word
        self.name_col = cur.raw.rfind(" Name") + 1 if not self.ctx.pm else 0
        self.start = cur.lineno + 1
        self.units = (None, None)
        self.end = len(self.ctx.lines)
        self.ctx.opened(self)
        pre = self.ctx.doc.pre
        if pre is not None and (table := pre.take(cur.i)) is not None:
            self._pre_read(table, cur)
        return CLAIMED

    def _pre_read(self, table: bytescan.Table, cur: Cursor) -> None:
        """The trace's rows as read on the input's bytes (profconv.parse.dialects.nvprof.trace_bytes):
        taken as the bulk reader's, where the text says what the bytes said (its header, where the
        rows end); else bytescan.Reparse."""
        cols, n = table.batch, table.rows
        j = cur.i + 1 + n
        lines = self.ctx.lines
        # (the input's last line after them, not a trace's end, is one cut short: trace_bytes._ends_there;
        # this reader reads it next, as it does on the text path)
        if (table.dialect != "nvprof" or cols.name_col != self.name_col or cols.section != self.section
                or (j < len(lines) - 1 and not _trace_ends(lines[j]))):
            raise bytescan.Reparse
        first = cur.lineno + 1
        self.bulk.append({"name": cols.names, "start_ns": cols.start_ns, "total_ns": cols.total_ns,
                          "line": range(first, first + n), "bases": cols.bases})
        self.ctx.result.bulk.append((first, first + n - 1))
        cur.next = j

    def close(self) -> None:
        """The trace's rows as a block, and the per-name summary of them."""
        ctx = self.ctx
        ctx.result.claimed.update(r[3] for r in self.rows)
        if self.rows or self.bulk:
            tb, bases = _trace_block(self.rows, self.section, self.start, self.end, self.bulk)
            assert tb.table is not None
            ctx.add_block(tb, self.start)
            summary = summarize_trace(tb.table, "gpu" if self.section == "gpu-trace" else "api", bases)
            ctx.add_block(summary, self.start)
        self.rows = []
        self.bulk = []

    def early(self, cur: Cursor) -> Verdict | None:
        if self.name_col:
            chunk, j = _bulk_trace(self.ctx.lines, cur.i, self.name_col)
            if chunk is not None:
                self.bulk.append(chunk)
                self.ctx.result.bulk.append((cur.lineno, j))
                cur.next = j
                return SKIPPED
        raw, lineno = cur.raw, cur.lineno
        if lineno == self.start and (tu := _trace_units(raw)) is not None:
            # --normalized-time-unit: a units row under the header; the times below are bare numbers
            self.units = tu
            return CLAIMED
        for read in (self._aligned, self._wrapped, self._matched):
            v = read(raw, lineno)
            if v is not None:
                return v
        if ELISION.match(raw):  # '.', '......', '< snip >': rows were left out of the paste; the trace goes on
            return CLAIMED
        first = raw.split(None, 1)[:1]
        if first and units.is_time(first[0]):
            # a trace row that does not read (cut short, a cell lost): it starts with a time, so it is
            # one of the trace's rows: reported, and the trace goes on
            return UNPLACED
        if engine.resumes(self.ctx.lines, cur.i, _trace_like, _trace_ends) is not None:
            # a line among the rows that is none of them (program output: 'Done.'): the trace goes
            # on after it; the line is reported where it looks like data
            return UNPLACED if looks_like_data(raw) else SKIPPED
        self.end = lineno - 1
        self.ctx.close_open()
        return None

    def _under_name(self, raw: str) -> bool:
        """The line has a cell starting right under the header's Name."""
        c = self.name_col
        return bool(c) and len(raw) > c and raw[c - 1] == " " and raw[c] != " "

    def _aligned(self, raw: str, lineno: int) -> Verdict | None:
        """The fast path: the name under its header word, the times first (rows are claimed when
        the trace ends)."""
        if not self._under_name(raw):
            return None
        parts = raw.split(None, 2)
        try:
            a, d = parts[0], parts[1]
            fa, fd = _SUFFIX_EXP.get(a[-2:]), _SUFFIX_EXP.get(d[-2:])
            start = float(a[:-2] + fa) if fa is not None else units.time_ns(a, self.units[0])
            # Unified Memory events (page faults, …) print '-' for a duration they do not have
            dur = float(d[:-2] + fd) if fd is not None else (_NAN if d == "-" else units.time_ns(d, self.units[1]))
        except (ValueError, IndexError):
            return None
        # float() also takes 'nan', 'inf', '-5', '1_0': only digits are times here
        plain = a[0].isdigit() and (d[0].isdigit() or d == "-") and "_" not in a + d and "e" not in a + d
        if plain and start < _INF and not dur >= _INF:
            self.rows.append((raw[self.name_col:].rstrip(), start, dur, lineno, lineno))
            return SKIPPED
        return None

    def _wrapped(self, raw: str, lineno: int) -> Verdict | None:
        """A name wrapped onto the next line ('cudaLaunchKernel (k(float*,' / '   int) [112])')."""
        part = raw.strip()
        rows = self.rows
        if not (rows and rows[-1][4] == lineno - 1 and part and not part[0].isdigit() and brackets_open(rows[-1][0])):
            return None
        name, start, dur, first, _ = rows[-1]
        sep = "" if name.endswith((":", "<", "(", "[")) or part.startswith(":") else " "
        rows[-1] = (f"{name}{sep}{part}", start, dur, first, lineno)
        return CLAIMED

    def _matched(self, raw: str, lineno: int) -> Verdict | None:
        """A row read by the trace's pattern (columns not aligned under the header)."""
        m = _TRACE_ROW.match(raw) if self.section == "gpu-trace" else _API_TRACE_ROW.match(raw)
        if not m:
            return None
        try:
            start = units.time_ns(m.group("start"), self.units[0])
            dur = units.time_ns(m.group("dur"), self.units[1])
        except ValueError:
            return UNPLACED  # a trace row with a value that is no time: said, not kept
        name = m.group("name").rstrip()
        if self._under_name(raw):
            name = raw[self.name_col:].rstrip()  # under its header word (columns of '-' before it)
        self.rows.append((name, start, dur, lineno, lineno))
        return CLAIMED
