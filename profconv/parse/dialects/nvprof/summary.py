"""nvprof summary tables (`Type Time(%) Time Calls Avg Min Max Name`, every layout): the header,
plain rows in bulk (C row scanner or one regex), and rows line by line (markup, wrapped names, rows
a PDF split over lines or glued together, a changed decimal mark)."""

from __future__ import annotations

import re
from array import array
from itertools import takewhile
from operator import add, truth
from typing import Any

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import (
    _FAST_ROW,
    _GLUED_ROW,
    _LABEL,
    _PCT_HEADER,
    _PREFIX,
    _UNIT_EXP,
    _UNIT_NS,
    BULK_LINES,
    FULL_LAYOUT,
    LABEL_SECTIONS,
    _body,
    _continues,
    _header_word,
    _name_continues,
    _needs_clean,
    _row_from,
    _row_run,
    _tokens,
    looks_like_data,
    parse_header,
    parse_summary_row,
)
from profconv.parse.dialects.nvprof.state import Nvprof, NvprofReader
from profconv.parse.dialects.nvprof.table import _Table, flag
from profconv.parse.engine import CLAIMED, SKIPPED, UNPLACED, Cursor, Verdict
from profconv.parse.model import Block
from profconv.parse.schema import Row
from profconv.parse.table import Rows
from profconv.parse.text import FENCE, clean, is_neutral

_MATCHED = _FAST_ROW.match(" 1.00%  1s  1  1s  1s  1s  k")  # stands for a match not yet made

def _units_row(body: str) -> str | None:
    """'%  ms  ms  ms  ms  ms' under a summary header: the one time unit every bare number is in."""
    toks = body.split()
    if len(toks) < 3 or toks[0] != "%" or any(t not in _UNIT_NS for t in toks[1:]) or len(set(toks[1:])) != 1:
        return None
    return toks[1]



def _cell_per_line_header(lines: list[str], i: int) -> tuple[tuple[list[str], str | None], int] | None:
    """A summary header with each cell on a line of its own, from index i up to the 'Name' line:
    its fields and the index of that line, or None."""
    words: list[str] = []
    if i > 0 and clean(lines[i - 1]).strip() == "Type":  # a line with no keyword: the loop passed it
        words.append("Type")
    j = i
    while j < len(lines) and j < i + 9:
        w = clean(lines[j]).strip()
        m = _PREFIX.match(w)
        w = w[m.end():].strip() if m else w
        if not _header_word(w):
            return None
        words.append(w)
        if w == "Name":
            got = parse_header(" ".join(words))
            return (got, j) if got is not None and len(words) >= 4 else None
        j += 1
    return None


def _count_only(body: str) -> bool:
    """A line holding one plain count ('6'): the Calls cell of a row a PDF put one cell per line."""
    t = body.strip()
    return t.isdigit() and len(t) <= 15


def _numbers_only(body: str) -> bool:
    """A line of nothing but numbers, times and percentages (one piece of a split row)."""
    m = _LABEL.match(body)
    toks = (body[m.end() :] if m else body).split()
    return bool(toks) and all(t[:1].isdigit() or t[:1] == "<" for t in toks) and any(
        units.is_time(t) or t.endswith("%") for t in toks)


def _numeric_row(body: str) -> bool:
    """A line of four or more numbers and a name: a summary row this table could not read."""
    toks = body.split()
    return len(toks) >= 5 and sum(1 for t in toks[:8] if t[:1].isdigit() and units.is_number(t.rstrip("%"))) >= 4



_IDENT_TAIL = re.compile(r"[A-Za-z_][\w$]*$")
_IDENT_PART = re.compile(r"[\w$]+")


def _cut_token(raw: str, name: str) -> bool:
    """A line that is the rest of an identifier the line above was cut inside: one word of
    identifier characters at the line's very start (a continuation the log's writer wrapped, not
    an indented row or prose), after a name ending in an identifier."""
    return _IDENT_PART.fullmatch(raw.rstrip("\r\n ")) is not None and _IDENT_TAIL.search(name) is not None


def _row_follows(raw: str, table: _Table) -> bool:
    """Whether the line reads as a row of this summary table."""
    if _FAST_ROW.match(raw):
        return True
    line = clean(raw)
    pm = _PREFIX.match(line) if "=" in line else None
    return parse_summary_row(line[pm.end():] if pm else line, table.fields, table.time_unit, table.locale,
                             table.units_row) is not None


_GROUPS = re.Match.groups
SUMMARY_CHUNK = 64  # lines matched at a time by the bulk summary reader (doubling up to BULK_LINES)


def _scan_regex(lines: list[str], k: int, first: re.Match | None = None, limit: int | None = None) -> tuple:
    """The plain rows of a standard nvprof summary table from index k, by the regex: what
    profconv.parse._rowscan.scan(lines, k, limit) returns, the same values to the bit (see its
    source): (count, stop, segments, pct_at), or (count, stop) where no row is kept. The run is
    the lines _FAST_ROW matches, up to the first with markup or a share above 100 (stop 1 there,
    else 0); `first` is line k's match where the caller has it."""
    n = len(lines) if limit is None else min(len(lines), k + limit)
    if first is None:
        first = _FAST_ROW.match(lines[k]) if k < n else None
        if first is None:
            return 0, 0
    found: list[Any] = [first]
    j, step = k + 1, SUMMARY_CHUNK
    while j < n:
        # lazily: matching stops at the first line that is not a row (the next table is not read)
        got = len(found)
        found.extend(takewhile(truth, map(_FAST_ROW.match, lines[j : min(j + step, n)])))
        if len(found) - got < step:
            break
        j += step
        step = min(2 * step, BULK_LINES)
    stop = 0
    if _needs_clean("\n".join(lines[k : k + len(found)])):  # markup a report added: the run ends before it
        del found[next(x for x, r in enumerate(lines[k : k + len(found)]) if _needs_clean(r)) :]
        stop = 1
    if not found:
        return 0, stop
    # C-level maps from here: the groups transposed into columns, numbers by float() and int()
    cols = list(zip(*map(_GROUPS, found)))
    del found
    pct = list(map(float, cols[1]))
    if max(pct) > 100.0:  # not a share: the run ends before it
        cut = next(x for x, p in enumerate(pct) if p > 100.0)
        if not cut:
            return 0, 1
        del pct[cut:]
        cols = [c[:cut] for c in cols]
        stop = 1
    count = len(pct)
    names = list(map(str.rstrip, cols[11]))
    calls = list(map(int, cols[4]))
    unit = _UNIT_EXP.__getitem__
    times = [list(map(float, map(add, cols[v], map(unit, cols[v + 1])))) for v in (2, 5, 7, 9)]
    labels = cols[0]
    # a segment ends where a label names another section (the first's is unknown without a label)
    cuts = [0]
    if labels.count(None) != count:
        cur = LABEL_SECTIONS[labels[0]] if labels[0] else None
        for x, lab in enumerate(labels):
            if x and lab and LABEL_SECTIONS[lab] != cur:
                cuts.append(x)
                cur = LABEL_SECTIONS[lab]
    cuts.append(count)
    segments = []
    for a, b in zip(cuts, cuts[1:]):
        whole = a == 0 and b == count
        segments.append((labels[a], a, names if whole else names[a:b], calls if whole else calls[a:b],
                         array("d", pct[a:b]), *(array("d", t[a:b]) for t in times)))
    pct_at = next(x for x, nm in enumerate(names) if "%" in nm) if "%" in "\x00".join(names) else -1
    return count, stop, segments, pct_at


def _bulk_summary(lines: list[str], k: int, got: tuple, table: _Table, ctx: Nvprof) -> int:
    """Plain rows of a standard nvprof summary table (8 columns, '.' decimal mark, no markup)
    from index k, as `got` holds them (_rowscan.scan or _scan_regex: segments of one section
    each), kept as columns of their block, no Row object per row. Returns the index after them (k:
    none here, the line path reads line k). A row glued after a name ends them; a last row whose
    name may go on (a wrapped name) is left to the line path, which keeps a row open."""
    count, _, segments, pct_at = got
    n = count
    if pct_at >= 0:  # a row glued after a name (line breaks lost): from there on, the line path
        names = [nm for seg in segments for nm in seg[2]]
        count = next((x for x in range(pct_at, count) if "%" in names[x] and _GLUED_ROW.search(names[x])), count)
    if count:
        last = segments[-1] if count == n else next(seg for seg in reversed(segments) if seg[1] < count)
        name = last[2][count - 1 - last[1]]
        if _name_continues(name) or (count == n and k + count + 1 < len(lines) and lines[k + count].strip()
                                     and _FAST_ROW.match(lines[k + count + 1])):
            # a name that may go on (wrapped), or a line between this row and another (the rest of a
            # name cut mid-word, or text): the line path keeps the row open and decides
            count -= 1
    if not count:
        return k
    if count < n:  # the segments up to row `count`
        segments = [seg if seg[1] + len(seg[2]) <= count else (*seg[:2], *(c[: count - seg[1]] for c in seg[2:]))
                    for seg in segments if seg[1] < count]
    table.open_row = None
    table.neutral_run = 0
    table.orphan_text = False
    ctx.result.rows_read.append((k + 1, k + count))  # claimed by their range (no set of a number per row)
    # one block per section: a label switches it ('GPU activities:' rows, then 'API calls:')
    for seg in segments:
        _bulk_segment(lines, k, seg, table, ctx)
    return k + count


def _bulk_segment(lines: list[str], k: int, seg: tuple, table: _Table, ctx: Nvprof) -> None:
    """One section's rows of a bulk run (`seg`: its label, first row, then its columns) into the
    section's block: as columns, or as rows where the block was read line by line so far."""
    label, a, names, calls, pct, total, avg, lo, hi = seg
    if label is not None:
        table.section = LABEL_SECTIONS[label]
    section = table.section
    key = section or "?"
    b = a + len(names)
    table.add_dots(key, b - a)
    blk = table.by_section.get(key)
    if blk is None:
        blk = table.by_section[key] = table.new_block(section, k + a + 1)
        ctx.add_block(blk, k + a + 1)
    starts = list(range(k + a + 1, k + b + 1))
    if blk.rows:  # a block read line by line so far: these join it as rows
        rows = list(map(Row, [key] * (b - a), names, starts, starts, pct, total, calls, avg, lo, hi))
        blk.rows.extend(rows)
        table.read.extend((r, _body(raw), table.fields, table.time_unit) for r, raw in zip(rows, lines[k + a : k + b]))
    elif blk.table is None:
        # times as arrays of doubles (no float object per cell while the input is held)
        blk.table = Rows.trusted({
            "section": [key] * (b - a), "name": names, "line_start": starts,
            "line_end": starts.copy(),  # the same int objects, a list of its own
            "time_pct": pct, "total_ns": total, "calls": calls, "avg_ns": avg, "min_ns": lo, "max_ns": hi,
        }, b - a)
        table.bulk_raw[key] = [(k + a, k + b)]
    else:  # a second part of this section's block (a table cut by a profile part, or labels alike)
        c = blk.table.cols
        for col, v in (("section", [key] * (b - a)), ("name", names), ("line_start", starts),
                       ("line_end", starts), ("time_pct", pct), ("total_ns", total), ("calls", calls),
                       ("avg_ns", avg), ("min_ns", lo), ("max_ns", hi)):
            c[col].extend(v)  # type: ignore[attr-defined]
        blk.table.n += b - a
        table.bulk_raw[key].append((k + a, k + b))
    blk.line_end = k + b




_RANGE = re.compile(r"^\s*Range\s*:\s*")


class Summary(NvprofReader):
    """A summary table: its header (whole, broken over two or three lines, or one cell a line),
    rows pasted without a header, and its rows (plain ones in bulk first: `early`)."""

    greedy = True

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)

    # ------------------------------------------------------------ the header
    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        hdr = parse_header(body)
        if hdr is None and _header_word(body) and (got_hdr := _cell_per_line_header(ctx.lines, cur.i)):
            # a header a PDF put one cell per line ('Type' / 'Time(%)' / … / 'Name')
            hdr, last = got_hdr
            ctx.claim_range(cur.lineno - (hdr[0][0] == "type"), last + 1)
            cur.next = last + 1
            ctx.cell_header = True
        if hdr is None and _PCT_HEADER.search(body) and "Name" not in body.split():
            hdr = self._broken_header(cur)
        if hdr:
            fields, unit = hdr
            ctx.table = _Table(fields=fields, time_unit=unit, section=ctx.pending_section,
                               fast=fields == ["type", *FULL_LAYOUT] and unit is None, cell_per_line=ctx.cell_header,
                               lines=ctx.lines, nvtx=ctx.nvtx)
            ctx.pending_section = None  # a marker ('API calls:') names the one table after it, not the next log's
            ctx.cell_header = False
            ctx.opened(self)
            return CLAIMED
        if ctx.open is None and (_LABEL.match(body) or _row_run(body, ctx.lines, cur.next)) \
                and (hdr := parse_header("Type Time(%) Time Calls Avg Min Max Name")):
            # a labelled row with its header lost (PDF extraction), or rows pasted without their header
            # (two in a row in the 8-column layout): the label, or the layout, says the columns
            ctx.table = _Table(fields=hdr[0], time_unit=None, section=None, lines=ctx.lines, headerless=True,
                               unlabelled=_LABEL.match(body) is None)
            ctx.opened(self)  # the line is read as the table's first row (take)
        return None

    def _broken_header(self, cur: Cursor) -> tuple[list[str], str | None] | None:
        """A header a PDF broke over lines ('Type Time(%) Time Calls' / 'Avg Min Max Name')."""
        lines = self.ctx.lines
        for extra in (1, 2):
            if cur.i + extra < len(lines):
                joined = " ".join(clean(x) for x in lines[cur.i : cur.i + extra + 1])
                if hdr := parse_header(joined):
                    self.ctx.claim_range(cur.lineno, cur.lineno + extra)
                    cur.next += extra
                    return hdr
        return None

    # ------------------------------------------------------------ plain rows, before any marker
    def early(self, cur: Cursor) -> Verdict | None:
        table = self.ctx.table
        # every plain row holds its share's '%': a line without one (the next profile's start, a
        # marker) is none, whichever way it would be looked at below
        if table is None or "%" not in cur.raw or not table.fast or not table.all_c_locale():
            return None
        # the common case in one regex: a plain nvprof row, '12.34%' saying '.' is the decimal mark
        lines, i, raw = self.ctx.lines, cur.i, cur.raw
        rowscan = self.ctx.rowscan
        if rowscan is not None:  # the run of plain rows from here read in C
            got = rowscan.scan(lines, i, len(lines))
            if got[1] == 2:  # a line C leaves to the regex (not ASCII) before the run ended
                m = _FAST_ROW.match(raw)
                got = _scan_regex(lines, i, m) if m is not None else None
            else:
                m = _MATCHED if got[0] or got[1] else None  # the regex matches line i
        else:
            m = _FAST_ROW.match(raw)
            got = _scan_regex(lines, i, m) if m is not None else None
        if got is not None and got[0] and (j := _bulk_summary(lines, i, got, table, self.ctx)) > i:
            cur.next = j  # this row and the plain rows after it read at once
            return SKIPPED
        if m is _MATCHED:
            m = _FAST_ROW.match(raw)
        if m is None or _needs_clean(raw) or ("%" in m.group(12) and _GLUED_ROW.search(m.group(12))):
            return None
        g = m.groups()
        pct = float(g[1])
        if pct > 100.0:
            return None
        body = _body(raw)
        # what place() does, for this one layout (C locale: nothing ambiguous)
        blk = self.block_for(table, g[0], cur.lineno)
        table.add_dots(table.section or "?", 1)
        u = _UNIT_EXP
        fast = Row(table.section or "?", g[11].rstrip(), cur.lineno, cur.lineno, pct, float(g[2] + u[g[3]]),
                   int(g[4]), float(g[5] + u[g[6]]), float(g[7] + u[g[8]]), float(g[9] + u[g[10]]))
        self.ctx.keep(table, blk, fast, body, table.fields, table.time_unit, cur.lineno)
        return SKIPPED

    def block_for(self, table: _Table, label: str | None, lineno: int) -> Block:
        """The block of the section a row at `lineno` belongs to (its label switches it), made if new."""
        if label:
            table.section = LABEL_SECTIONS[label]
        section = table.section
        key = section or "?"
        blk = table.by_section.get(key)
        if blk is None:
            blk = table.new_block(section, lineno)
            table.by_section[key] = blk
            self.ctx.add_block(blk, lineno)
        elif blk.table is not None:
            table.materialize(key)
        return blk

    def place(self, table: _Table, parsed, body: str, row_fields: list[str], loc: units.Locale, lineno: int) -> None:
        label, values, name = parsed
        blk = self.block_for(table, label, lineno)
        row = _row_from(values, name, table.section or "?", lineno)
        if loc.ambiguous:
            flag(blk, loc)
        self.ctx.keep(table, blk, row, body, row_fields, table.time_unit if row_fields is table.fields else None,
                      lineno)

    # ------------------------------------------------------------ rows line by line
    def take(self, cur: Cursor) -> Verdict | None:
        table = self.ctx.table
        if table is None:
            return None
        body = self.ctx.body
        for step in (self._neutral, self._label_line, self._units_line, self._range, self._row, self._one_call,
                     self._name_goes_on, self._between_rows):
            v = step(table, body, cur)
            if v is not None:
                return v
        self.ctx.drop_nameless(table)
        table.open_row = None
        if _numbers_only(body) or table.pending:
            return self._pieces(table, body, cur)
        if looks_like_data(body) or _numeric_row(body):
            return UNPLACED
        if body.strip():
            table.orphan_text = True
        return SKIPPED

    def _neutral(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """Blank lines, fences, elisions: neither end nor belong to the table (rows pasted without
        header or label end with their paragraph or block: what follows is told apart by its own
        label or names, not classified with them)."""
        if not is_neutral(body):
            return None
        if table.headerless and (FENCE.match(body) or (table.unlabelled and not body.strip())):
            self.ctx.end_table()
            return SKIPPED
        table.neutral_run += 1
        return SKIPPED

    def _label_line(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """A section label on a line of its own (a table a PDF put one cell per line)."""
        lm = _LABEL.match(body)
        if not lm or body[lm.end():].strip() or table.pending:
            return None
        table.section = LABEL_SECTIONS[lm.group(1)]
        table.open_row = None
        table.orphan_text = False
        return CLAIMED

    def _units_line(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """--normalized-time-unit: '%  ms  ms …' under the header."""
        if table.read or not (unit := _units_row(body)):
            return None
        table.time_unit, table.units_row, table.fast = unit, True, False
        return CLAIMED

    def _range(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """'Range:  100.00%  758.78us  10  75.878us …  name': an NVTX range's own row (its table's
        first), in an 'NVTX result:' block only."""
        if not table.nvtx or not (m := _RANGE.match(body)):
            return None
        loc, votes, key = table.vote(body)
        parsed = parse_summary_row(body[m.end():], table.fields, table.time_unit, loc, table.units_row)
        if parsed is None:
            return UNPLACED
        table.commit(key, votes, loc)
        self.place(table, ("Range", parsed[1], parsed[2]), body, table.fields, loc, cur.lineno)
        return SKIPPED

    def _row(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """A row of the table (rows glued on one line, their line breaks lost: each its own row)."""
        loc, votes, key = table.vote(body)
        row_fields = table.fields
        parsed = parse_summary_row(body, table.fields, table.time_unit, loc, table.units_row)
        if parsed is None and table.fields != FULL_LAYOUT:
            # rows pasted in the full 7-column layout below a shortened header
            row_fields = FULL_LAYOUT
            parsed = parse_summary_row(body, FULL_LAYOUT, None, loc)
        self._loc = loc
        if parsed is None:
            return None
        table.commit(key, votes, loc)
        while "%" in parsed[2] and (gm := _GLUED_ROW.search(parsed[2])):
            rest = parsed[2][gm.start():].strip()
            second = parse_summary_row(rest, row_fields, table.time_unit, loc, table.units_row)
            if second is None:
                break
            cut = body.find(rest)
            self.place(table, (parsed[0], parsed[1], parsed[2][: gm.start()].rstrip()), body[:cut], row_fields, loc,
                       cur.lineno)
            parsed, body = second, body[cut:]
        self.place(table, parsed, body, row_fields, loc, cur.lineno)
        return SKIPPED

    def _one_call(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """A row of one call that lost one of its Avg/Min/Max cells (a PDF's text): with one call
        all three are its Time, so the missing one is that value, exactly; a note says so."""
        fixed = _one_call_body(body, table.fields)
        if fixed is None:
            return None
        parsed = parse_summary_row(fixed, table.fields, table.time_unit, self._loc, table.units_row)
        if parsed is None:
            return None
        v = parsed[1]
        if v.get("calls") != 1 or not v.get("time") == v.get("avg") == v.get("min") == v.get("max"):
            return None
        self.place(table, parsed, fixed, table.fields, self._loc, cur.lineno)
        blk = table.by_section.get(table.section or "?")
        if blk is not None:
            blk.notes.append(f"line {cur.lineno}: one call, and one of its Avg, Min and Max was missing: taken "
                             "equal to the others (with one call all three are its Time)")
        return SKIPPED

    def _name_goes_on(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """The rest of the open row's name, wrapped onto this line."""
        row = table.open_row
        if row is None or not _continues(row) or table.neutral_run > 4:
            return None
        if looks_like_data(body) or _PREFIX.match(self.ctx.line) or _numbers_only(body) or _count_only(body):
            return None
        part = body.replace("\t", " ").strip()
        # a name cut mid-token at the terminal's edge ('Plan<mshadow:' + ':expr::…') joins
        # without a space: C++ never puts one inside '::' or after '<', '(' or '['
        sep = "" if row.name.endswith((":", "<", "(", "[")) or part.startswith(":") else " "
        row.name = f"{row.name}{sep}{part}".strip() if row.name else part
        row.line_end = cur.lineno
        table.neutral_run = 0
        return CLAIMED

    def _between_rows(self, table: _Table, body: str, cur: Cursor) -> Verdict | None:
        """A line between two rows of one table: a name the log cut mid-token at a fixed byte
        count ('…  cudaH' / 'ostGetDevicePointer', rai's logs) joins its row; any other text there
        is reported (never dropped)."""
        row = table.open_row
        lines = self.ctx.lines
        if not (row is not None and row.line_end == cur.lineno - 1 and body.strip() and cur.next < len(lines)
                and _row_follows(lines[cur.next], table)):
            return None
        if _cut_token(cur.raw, row.name):
            row.name += body.strip()
            row.line_end = cur.lineno
            return CLAIMED
        return UNPLACED

    def _pieces(self, table: _Table, body: str, cur: Cursor) -> Verdict:
        """A row whose numbers a PDF spread over several lines: gathered until they read as one
        row; its name ends the last piece or follows on the next line(s)."""
        result = self.ctx.result
        loc = self._loc
        table.pending.append((cur.lineno, body))
        joined = " ".join(b for _, b in table.pending)
        got = parse_summary_row(joined, table.fields, table.time_unit, loc, table.units_row)
        if got is None and not _numbers_only(body) and not _count_only(body):
            table.pending.pop()
            result.unplaced.extend(n for n, _ in table.pending)
            table.pending = []
            if looks_like_data(body) or _numeric_row(body):
                return UNPLACED
            if table.cell_per_line and body.strip():
                return UNPLACED  # the name of the row whose cells did not add up
            if body.strip():
                table.orphan_text = True
            return SKIPPED
        if got is not None and got[2] and _numbers_only(got[2]):
            # more numbers than one row holds: pieces of two rows, never paired
            result.unplaced.extend(n for n, _ in table.pending)
            table.pending = []
            return SKIPPED
        if got is not None:
            first = table.pending[0][0]
            if table.orphan_text and not got[2] and not table.cell_per_line:
                # a name-like line came before: which name is theirs? (one cell a line: names follow)
                result.unplaced.extend(n for n, _ in table.pending)
            else:
                self.place(table, got, joined, table.fields, loc, cur.lineno)
                table.open_row.line_start = first  # type: ignore[union-attr]
                result.claimed.update(n for n, _ in table.pending)
            table.pending = []
        return SKIPPED


def _one_call_body(body: str, fields: list[str]) -> str | None:
    """The row with its Time written again after its count where, of the Avg/Min/Max cells, one is
    missing and the count is 1 (None where the row is not such: the parse then checks the values)."""
    values = [f for f in fields if f not in ("type", "name")]
    if not {"calls", "time", "avg", "min", "max"} <= set(values):
        return None
    m = _LABEL.match(body)
    at = m.end() if m else 0
    toks = _tokens(body[at:])
    k = len(values) - 1  # the cells there are (one missing) before the name
    if len(toks) <= k or units.is_time(toks[k][0]):
        return None
    calls, time = values.index("calls"), values.index("time")
    if toks[calls][0] != "1" or not all(units.is_time(t) for t, _, _ in toks[calls + 1 : k]):
        return None
    cut = at + toks[calls][2]
    return f"{body[:cut]} {toks[time][0]}{body[cut:]}"
