"""Big machine-written tables found on the input's bytes, before it is decoded and split into lines.

A big `nsys stats --format csv` table (a trace of a million kernel launches) is most of its log. The
text path decodes the whole input, normalizes it and splits it into lines -- about as much CPU as
`pandas.read_csv` of the same rows -- before a dialect reads the table's columns from those lines.
Here such a table is found on the bytes (a header line, then one line per row, each starting with a
digit: the table ends at the first line that does not), its rows are left out of the text that is
decoded (blank lines in their place: every line keeps its number) and its bytes go to the columnar
reader straight from the input's buffer (`profconv.parse.columnar`, pyarrow: no copy, no line).

The rows in the input's first bytes stay in the text too (`keep_from`: the engine looks for
dialects in the text's first HEAD characters; `expect_first` checks that no blank row is among
them). Rows qualify only where the text path would read the same table from them:
  - nothing in them that `profconv.parse.text.normalize` rewrites or that changes what it does to
    the rest of the text: a carriage return, form feed, vertical tab, file/group/record separator,
    '&' (HTML entities), '\\' (LaTeX), a non-ASCII character; '<' and '/' only inside the names
    the table reader checks ('<br', '<pre', '/*' there keep the text path: `Table.plain_names`);
  - the line after them not indented (a markdown code block would start there once they are blank).
Small summary tables (`Time (%),Total Time (ns),…`, fewer than MIN_ROWS rows, a blank line after
them: a sweep's thousands of `nsys stats --format csv` runs) are read together, one C pass (or one
pyarrow call) per header for all of them (profconv.parse.dialects.nsys_batch, from BATCH_ROWS rows in all); a table
is taken (its rows blank in the text) only where that reader finds it plain rows, whose values the
row reader gives; the others stay in the text.
What the text path decides from the rest of the file is checked once it has run (`PreRead.check`,
the engine's detection, the dialect's own table end): wherever the two could differ, `Reparse` is
raised and the input is parsed the old way, whole. The output is the same either way (tests compare
both on every test log).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from profconv.parse import columnar, native

# the headers of nsys CSV tables whose rows start with a number (a trace's start, a summary's Time (%))
SUMMARY = b"Time (%),Total Time (ns),"
HEADERS = (b"Start (ns),", SUMMARY)
MIN_ROWS = 2000  # profconv.parse.dialects.nsys.BULK_ROWS: smaller tables are read row by row
BATCH_ROWS = 2000  # rows: small summary tables of one header read together from this many on
# bytes of such tables that pay for loading pyarrow in a process that has not (~0.3 s of CPU): read
# row by row they cost ~12 us a row, ~0.1 s a MB (a big table's rows are read in bulk on the text
# path too: it pays only from core.BYTES_PAY_FROM)
BATCH_PAYS_FROM = 4 << 20
KEEP = 1 << 18  # bytes: rows that start here stay in the text (they may be in the engine's first 64 Ki characters)
HEAD = 1 << 16  # characters where the engine looks for dialects first (profconv.parse.core.HEAD)
# ASCII bytes after HEAD whose rows stay in the text too: what normalize may take out of the first
# HEAD characters (blanks ending lines) before rows blank in the text could fall in the engine's
# first lines (expect_first checks they do not)
HEAD_MARGIN = 1 << 12
_NOT_ROW = re.compile(rb"\n[^0-9]")  # the first line after the header that does not start with a digit
_NEVER = b"&\\"  # bytes never in blanked rows, besides control characters (a newline aside) and non-ASCII
_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f]")
_IN_NAMES = b"</"  # bytes only inside names, and there not as '<br', '<pre', '/*'
_NAME_MARKS = ("<br", "<BR", "<pre", "<PRE", "/*", "\t", "\x85")


class Reparse(Exception):
    """The tables read from the bytes may not be what the text path reads: parse the whole text."""


@dataclass
class Table:
    """One table found on the bytes: its header's line index (0-based) and text, its bytes in the
    input (the header and every row, each ending with a newline), its rows, how many of them stay
    in the text (`kept`: the first ones) and the characters of its lines, newlines not counted."""

    line: int
    header: str
    data: columnar.Span
    rows: int
    kept: int
    chars: int
    cut: int  # the offset in the input where the rows that are blank in the text begin
    marks: dict[int, int] = field(default_factory=dict)  # how many of each _IN_NAMES byte the rows hold
    used: bool = False
    # a small summary table read with the others of its header (dialects.nsys_batch.Batch), its
    # first row's index there
    batch: Any = None
    first: int = 0

    @property
    def dialect(self) -> str:
        """The dialect whose reader takes the table (nsys, or the one its batch names: nvprof's traces)."""
        return getattr(self.batch, "dialect", "nsys")

    def trim(self) -> None:
        """Only the bytes of the header and the kept rows held (what PreRead.check compares): the
        rows are read, and the input they were in can go."""
        head = self.data.data[self.data.start : self.cut]
        self.data, self.cut = columnar.Span(head, 0, len(head), lines=self.kept + 1, clean=True), len(head)

    def plain_name_list(self, names: list[str]) -> bool:
        """plain_names of the names as a list (nsys's split reader: one str per distinct name)."""
        from collections import Counter

        counts = Counter(names)
        if any(m in k for k in counts for m in _NAME_MARKS):
            return False
        return all(not found or found == sum(k.count(chr(ch)) * c for k, c in counts.items())
                   for ch, found in self.marks.items())

    def plain_names(self, names: Any) -> bool:
        """Whether the bytes of the blanked rows that are '<' or '/' are all inside the name
        column (a columnar.Text over every row), and no name holds what normalize rewrites."""
        if any(m in k for k in names.distinct for m in _NAME_MARKS):
            return False
        return all(not found or found == _count_in(names, chr(ch)) for ch, found in self.marks.items())


class SmallTable:
    """A small summary table read with the others of its header (nsys_batch) where `find` read a
    sweep's window at once (`_summaries_at_once`): what nsys's reader and PreRead ask of a `Table`
    whose rows are all blank in the text (`kept` 0), no bytes held (its rows are the batch's)."""

    __slots__ = ("line", "header", "rows", "batch", "first", "used", "data")
    kept = 0
    dialect = "nsys"

    def __init__(self, line: int, header: str, rows: int, batch: Any, first: int) -> None:
        self.line, self.header, self.rows, self.batch, self.first, self.used = line, header, rows, batch, first, False

    def trim(self) -> None:
        """(Table.trim: no bytes held.)"""


def _count_in(names: Any, ch: str) -> int:
    """How many times `ch` occurs in the name column, over every row."""
    import numpy as np

    pool = names.pool.to_pylist()
    per = np.array([k.count(ch) for k in pool], dtype=np.int64)
    if not per.any():
        return 0
    return int((np.bincount(names.codes, minlength=len(pool)) * per).sum())


@dataclass
class PreRead:
    """The input with the found tables' rows blanked (`data`), and those tables by header line."""

    data: bytes
    source: bytes
    tables: dict[int, Table] = field(default_factory=dict)
    dialect: str = "nsys"  # whose tables they are (ncu's raw pages: profconv.parse.dialects.ncu_raw.find)

    def check(self, lines: list[str]) -> None:
        """After the text path's normalize and split: each table's header and kept rows still their
        lines, as in the input, its other rows blank lines; else Reparse."""
        for t in self.tables.values():
            first, end = t.line + 1 + t.kept, t.line + 1 + t.rows
            if end > len(lines) or lines[first:end].count("") != t.rows - t.kept:
                raise Reparse
            if not t.kept:  # the header alone (a sweep's thousands of small tables): its text is `header`
                if lines[t.line] != t.header:
                    raise Reparse
                continue
            head = t.data.data[t.data.start : t.cut].decode("ascii").split("\n")
            if lines[t.line : first] != head[: t.kept + 1]:
                raise Reparse

    def take(self, line: int) -> Table | None:
        """The table whose header is line index `line`, marked as read (None: no table found there)."""
        t = self.tables.get(line)
        if t is not None:
            t.used = True
        return t

    def unused(self) -> bool:
        return any(not t.used for t in self.tables.values())

    def detach(self) -> None:
        """Let the input's bytes go as soon as no table needs them, the caller being able to read
        the input again for a Reparse (a regular file): the tables whose rows were read already
        (nvprof traces, batched summaries: `batch`) keep only their header and kept rows, which
        `check` compares with the text; a big nsys table, read when its header is met, keeps its
        bytes until then (Table.trim)."""
        self.source = b""
        for t in self.tables.values():
            if t.batch is not None:
                t.trim()

    def release(self) -> None:
        """Let the input's bytes (and the batches' columns) go once every table is read (no Reparse
        can follow)."""
        self.source = self.data = b""
        empty = columnar.Span(b"", 0, 0)
        for t in self.tables.values():
            t.data = empty
            t.batch = None


def checked(pre: PreRead | None, lines: list[str]) -> PreRead | None:
    """`pre` once PreRead.check has passed on the text path's lines (Reparse where it does not)."""
    if pre is not None:
        pre.check(lines)
    return pre


def expect_first(pre: PreRead | None, early: list[str], head_lines: int) -> None:
    """Where tables were read from the bytes, the engine's first dialects (those whose marks are in
    the first lines) must be their dialect alone (another would read the text, rows and all, before
    it), found on the text's first `head_lines` lines as the text path has them: no row blank in
    the text among them (Reparse otherwise)."""
    if pre is None:
        return
    if early != [pre.dialect] or any(t.kept < t.rows and t.line + 1 + t.kept < head_lines for t in pre.tables.values()):
        raise Reparse


def keep_from(data: bytes) -> int:
    """The offset from which a table's rows are blank in the text (those before stay in it): a
    margin past the engine's first HEAD characters where they are as many ASCII bytes, else KEEP."""
    n = HEAD + HEAD_MARGIN
    return n if data[:n].isascii() else KEEP


def find(data: bytes, pays_from: int, keep: int | None = None, batch_rows: int = BATCH_ROWS) -> PreRead | None:
    """The big nsys CSV tables in `data` worth reading as columns, and the small summary tables read
    together (see the module's docstring), or None when there is none (or the columnar reader is off).
    `keep`: rows that start in the first `keep` bytes stay in the text (keep_from's, not given; a
    window of a long log read part by part, whose head was looked at already: profconv.parse.stream,
    0); `batch_rows`:
    small summary tables are read together from this many rows in all (BATCH_ROWS; a window's, fewer)."""
    if not columnar.enabled() or b"\x00" in data[:4096] or data[:3] == b"\xef\xbb\xbf":
        return None
    if keep == 0 and (pre := _summaries_at_once(data, pays_from, batch_rows)) is not None:
        return pre  # a sweep's window: its small summary tables as columns, at once
    small: list[tuple[int, int, int, int]] = []  # summary tables too small to read alone
    spans = sorted(_sweep(data, small) + _batched(data, small, pays_from, batch_rows))
    pieces: list[bytes] = []
    tables: dict[int, Table] = {}
    pos = line = 0
    keep_to = keep_from(data) if keep is None else keep
    for a, b, e, rows, marks, batch, first in spans:  # header start, rows start, rows end (after the last newline)
        if a < pos:
            continue
        cut = max(data.rfind(b"\n", b, min(e, keep_to)) + 1, b) if b < keep_to else b  # rows before keep_to stay
        kept = data.count(b"\n", b, cut) if cut > b else 0
        line += data.count(b"\n", pos, a)
        header = data[a : b - 1].decode("ascii")
        span = columnar.Span(data, a, e, lines=rows + 1, clean=True)
        tables[line] = Table(line, header, span, rows, kept, e - a - rows - 1, cut, marks, batch=batch, first=first)
        pieces += [data[pos:cut], b"\n" * (rows - kept)]
        line += rows + 1
        pos = e
    if not tables:
        return None
    pieces.append(data[pos:])
    # the dialect whose reader takes them (nsys, or nvprof for its traces); tables of two: no dialect's
    # alone (expect_first sends the input to the text path)
    dialect = "+".join(sorted({t.dialect for t in tables.values()}))
    return PreRead(b"".join(pieces), data, tables, dialect)


def _sweep(data: bytes, small: list[tuple[int, int, int, int]]) -> list[tuple[Any, ...]]:
    """find's spans of the nvprof traces and the big nsys tables taken, and (in `small`) the small
    summary tables, as `_spans` finds each kind alone, in one walk from the input's start to its end:
    the next header line of any kind is looked for, its table read and the walk goes on after its
    rows. No header of one kind starts on another's header or rows (an nvprof trace's rows start
    with blanks and a time, an nsys table's with a digit), so those bytes are not searched again
    (a 20 MB table's rows, once for each kind: ~15 ms)."""
    from profconv.parse.dialects.nvprof import trace_bytes

    scan = native.load("_bytescan")  # once, not once a table
    traces = trace_bytes.available()
    needles = ([trace_bytes.MARK] if traces else []) + [b"\n" + h for h in HEADERS]
    hits: list[int] = [-1] * len(needles)  # each kind's next header line found (-1: not looked for)
    upto = [0] * len(needles)  # each kind's header lines are none before this (looked for up to there)
    out: list[tuple[Any, ...]] = []
    pos = 0
    find = scan.find if scan is not None and hasattr(scan, "find") else bytes.find  # C's memmem: 3-6 times faster
    if _only_summaries(data, needles, find):
        return _summaries(data, small, scan, find)  # no header of another kind: a sweep's window
    while (line := _earliest(data, pos, needles, hits, upto, find)) >= 0:
        b = data.find(b"\n", line) + 1
        if b == 0:  # the input's last line: no rows after it
            break
        pos, span = _table_at(data, line, b, small, scan, traces)
        if span is not None:
            out.append(span)
    return out


def _only_summaries(data: bytes, needles: list[bytes], find: Any) -> bool:
    """Whether no header line but the summary one's (needles[-1]) is in `data`."""
    return all(_line_with(data, needle, 0, len(data), find) < 0 for needle in needles[:-1])


def _summaries_at_once(data: bytes, pays_from: int, batch_rows: int) -> PreRead | None:
    """find(data, pays_from, keep=0, batch_rows) of a sweep's window (only summary header lines in
    it, no table of MIN_ROWS rows, the small ones of one header, every one read in C), made from the
    tables' columns at once: the same tables (SmallTable each) and text; None where the window is
    not such a one (find's walk then reads it as before)."""
    from profconv.parse.dialects.nvprof import trace_bytes

    scan, cells = native.load("_bytescan"), native.load("_summarycells")
    if scan is None or cells is None or not hasattr(scan, "tables"):
        return None
    needles = ([trace_bytes.MARK] if trace_bytes.available() else []) + [b"\n" + h for h in HEADERS]
    if not _only_summaries(data, needles, scan.find):
        return None
    small = _small_spans(data, scan)
    if small is None or sum(n for *_, n in small[0]) < batch_rows:
        return None
    from profconv.parse.dialects import nsys_batch

    spans = small[0]
    got = nsys_batch.read(data, spans, small[1])
    if got is None:
        return None
    batch, firsts = got
    taken = [sp for sp, k in zip(spans, firsts) if k >= 0]
    rows = [sp[3] for sp in taken]
    # each header's line index: the newlines before it (find's count from the table before)
    gaps = [data.count(b"\n", e, sp[0]) for e, sp in zip([0] + [sp[2] for sp in taken], taken)]
    lines = list(accumulate(g + n + 1 for g, n in zip(gaps, [-1, *rows])))
    header = data[spans[0][0] : spans[0][1] - 1].decode("ascii")
    tables = {ln: SmallTable(ln, header, n, batch, k) for ln, n, k in zip(lines, rows, (k for k in firsts if k >= 0))}
    return PreRead(b"".join(_blanked(data, taken)), data, tables, "nsys")


def _small_spans(data: bytes, scan: Any) -> tuple[list[tuple[int, int, int, int]], Any] | None:
    """_summaries_in_c's small tables (header start, rows start, rows end, rows), and their (rows
    start, rows end) as a NumPy array, where there is no big one and every small one has the same
    header; else None."""
    import numpy as np

    marks = _NEVER + _IN_NAMES
    w, never = 6 + len(marks), 6 + len(_NEVER)
    vals = np.frombuffer(scan.tables(data, SUMMARY, marks), dtype=np.int64).reshape(-1, w)
    a, b, e, rows, flags, after = vals[:, :6].T
    plain = (flags == 0) & ~vals[:, 6:never].any(axis=1)
    if (plain & (rows >= MIN_ROWS) & (after != 0x20) & (after != 0x09)).any():
        return None  # a big table: find's walk
    ok = plain & (rows > 0) & (rows < MIN_ROWS) & ((after == 0x0A) | (after == -1))
    spans = list(zip(a[ok].tolist(), b[ok].tolist(), e[ok].tolist(), rows[ok].tolist()))
    if not spans or len({data[x:y] for x, y, _, _ in spans}) > 1:
        return None
    return spans, np.ascontiguousarray(vals[ok, 1:3])


def _blanked(data: bytes, spans: list[tuple[int, int, int, int]]) -> list[bytes]:
    """data's bytes in pieces, the rows of each table (a span: header start, rows start, rows end,
    rows) left out but their newlines."""
    out = [x for (b, n), pos in zip([(sp[1], sp[3]) for sp in spans], [0] + [sp[2] for sp in spans])
           for x in (data[pos:b], b"\n" * n)]
    out.append(data[spans[-1][2] :])
    return out


def _summaries(data: bytes, small: list[tuple[int, int, int, int]], scan: Any, find: Any) -> list[tuple[Any, ...]]:
    """_sweep's spans where the summary header is the one kind of header line in `data` (a sweep's
    window: thousands of small tables), the same walk with one search a table."""
    if scan is not None and hasattr(scan, "tables"):
        return _summaries_in_c(data, small, scan)
    needle = b"\n" + SUMMARY
    out: list[tuple[Any, ...]] = []
    at = _line_with(data, needle, 0, len(data), find)
    while at >= 0:
        b = data.find(b"\n", at) + 1
        if b == 0:  # the input's last line: no rows after it
            break
        e, span = _header_table(data, at, b, SUMMARY, small, scan)
        if span is not None:
            out.append((*span, None, 0))
        at = find(data, needle, e - 1, len(data))
        at = at + 1 if at >= 0 else -1
    return out


def _summaries_in_c(data: bytes, small: list[tuple[int, int, int, int]], scan: Any) -> list[tuple[Any, ...]]:
    """_summaries by one C walk over every table (_bytescan.tables), each judged as _header_table
    judges it (no NumPy: a short log's CLI does not load it)."""
    marks = _NEVER + _IN_NAMES
    w, never = 6 + len(marks), 6 + len(_NEVER)
    vals = memoryview(scan.tables(data, SUMMARY, marks)).cast("q").tolist()
    out: list[tuple[Any, ...]] = []
    for k in range(0, len(vals), w):
        a, b, e, rows, flags, after = vals[k : k + 6]
        if flags & 4 and e == len(data):  # the input cut in its last row: the rows end before it (_header_table)
            e = max(data.rfind(b"\n", b, e) + 1, b)
            flags, after = flags & ~4, data[e]
        if flags or any(vals[k + 6 : k + never]):  # not plain
            continue
        if rows >= MIN_ROWS and after not in (0x20, 0x09):
            out.append((a, b, e, rows, dict(zip(_IN_NAMES, vals[k + never : k + w])), None, 0))
        elif 0 < rows < MIN_ROWS and after in (0x0A, -1):
            small.append((a, b, e, rows))
    return out


def _earliest(data: bytes, pos: int, needles: list[bytes], hits: list[int], upto: list[int], find: Any) -> int:
    """The first line from offset `pos` (a line start) that holds a needle where its kind looks
    (one starting with a newline: at the line's start; else anywhere), -1 where none does; each
    kind looked for only up to the best line found so far (`hits`, `upto`: what is known already)."""
    best = -1
    for k, needle in enumerate(needles):
        if hits[k] >= pos:
            best = hits[k] if best < 0 else min(best, hits[k])
            continue
        start, end = max(pos, upto[k]), (len(data) if best < 0 else best)
        hits[k] = _line_with(data, needle, start, end, find) if start < end else -1
        if hits[k] >= 0:
            best = hits[k]
        else:
            upto[k] = max(upto[k], end)
    return best


def _line_with(data: bytes, needle: bytes, start: int, end: int, find: Any) -> int:
    """The start of the first line that starts in [start, end) (both line starts, or the input's
    end) and holds `needle` as _earliest says; -1: none. `find`: bytes.find or the C search."""
    if needle[:1] != b"\n":
        at = find(data, needle, start, end)  # (no match crosses `end`: a newline is before it)
        return data.rfind(b"\n", 0, at) + 1 if at >= 0 else -1
    if start == 0 and data.startswith(needle[1:]):
        return 0
    stop = end - 2 + len(needle)  # its newline before end - 1
    at = find(data, needle, max(start - 1, 0), stop)
    return at + 1 if at >= 0 else -1


def _table_at(data: bytes, line: int, b: int, small: list[tuple[int, int, int, int]], scan: Any,
              traces: bool) -> tuple[int, tuple[Any, ...] | None]:
    """The header line data[line:b]'s table: where the walk goes on, and its span where taken
    (an nvprof trace's, or an nsys table's as `_spans` gives it)."""
    from profconv.parse.dialects.nvprof import trace_bytes

    if traces and data.find(trace_bytes.MARK, line, b) >= 0:
        got = trace_bytes.table(data, line, b)
        if got is not None:
            return got[2], got
    for head in HEADERS:
        if data.startswith(head, line):
            e, span = _header_table(data, line, b, head, small, scan)
            return e, (None if span is None else (*span, None, 0))
    return b, None


def _spans(data: bytes, head: bytes, small: list[tuple[int, int, int, int]],
           skip: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int, int, int, dict[int, int]]]:
    """(header start, rows start, rows end, rows, _IN_NAMES counts) of each qualifying table whose
    header is `head`; summary tables of fewer rows, followed by a blank line (or the end), go to
    `small` as (header start, rows start, rows end, rows). `skip`: byte ranges (sorted, each from a
    line start to one) where no such header starts, not searched."""
    out = []
    scan = native.load("_bytescan")  # once, not once a table
    at = 0 if data.startswith(head) else _next(data, head, 0, skip)
    while at >= 0:
        b = data.find(b"\n", at) + 1
        if b == 0:
            break
        e, span = _header_table(data, at, b, head, small, scan)
        if span is not None:
            out.append(span)
        at = _next(data, head, e - 1, skip)  # (e >= b: the rows start at b)
    return out


def _header_table(data: bytes, at: int, b: int, head: bytes, small: list[tuple[int, int, int, int]],
                  scan: Any) -> tuple[int, tuple[int, int, int, int, dict[int, int]] | None]:
    """The rows after the header line data[at:b] (`head`'s): where they end, and the table's span
    where it qualifies (a small summary table goes to `small`)."""
    e, rows, counts, odd = _rows_pass(data, b, scan)
    if e == len(data) and data[e - 1 : e] != b"\n":  # the input cut in its last row (a job's time limit):
        e = max(data.rfind(b"\n", b, e) + 1, b)  # the rows end before it (profconv.parse.dialects.nsys._with_cut_row)
    plain = (not odd and data[e - 1 : e] == b"\n" and data[at:b].isascii()
             and not any(map(counts.__getitem__, _NEVER)))
    # taken whether pyarrow pays for it or not: without it nsys's split reader reads the rows from
    # these bytes a slice at a time (nsys._RowLines), the input never decoded whole
    if plain and rows >= MIN_ROWS and data[e : e + 1] not in (b" ", b"\t"):
        return e, (at, b, e, rows, {c: counts[c] for c in _IN_NAMES})
    if plain and 0 < rows < MIN_ROWS and head == SUMMARY and data[e : e + 1] in (b"\n", b""):
        small.append((at, b, e, rows))
    return e, None


def _batched(data: bytes, small: list[tuple[int, int, int, int]], pays_from: int,
             batch_rows: int = BATCH_ROWS) -> list[tuple[Any, ...]]:
    """The small summary tables taken, as find's spans: those of one header read together
    (profconv.parse.dialects.nsys_batch), where together they have `batch_rows` rows and pay for
    pyarrow."""
    groups: dict[bytes, list[tuple[int, int, int, int]]] = {}
    for span in small:
        groups.setdefault(data[span[0] : span[1]], []).append(span)
    out: list[tuple[Any, ...]] = []
    for group in groups.values():
        rows = sum(n for *_, n in group)
        size = sum(e - a for a, _, e, _ in group) - rows
        # read in C (profconv.parse._summarycells) where built: then pyarrow need not be loaded for them
        if rows < batch_rows or not (native.load("_summarycells") or columnar.worth(size, min(pays_from, BATCH_PAYS_FROM))):
            continue
        from profconv.parse.dialects import nsys_batch

        got = nsys_batch.read(data, group)
        if got is not None:
            batch, firsts = got
            out += [(a, b, e, n, {}, batch, k) for (a, b, e, n), k in zip(group, firsts) if k >= 0]
    return out


_LOAD: Any = object()  # _rows_pass: load the C pass (where built)


def _rows_pass(data: bytes, b: int, scan: Any = _LOAD) -> tuple[int, int, dict[int, int], bool]:
    """From offset b (a line start after a newline), the lines that start with a digit: (the offset
    after them, their newlines, how many of each _NEVER and _IN_NAMES byte they hold, whether any
    byte of them is not ASCII or a control character other than the newline). One C pass where
    built (profconv.parse._bytescan), else the same by a regex and bytes methods."""
    marks = _NEVER + _IN_NAMES
    scan = native.load("_bytescan") if scan is _LOAD else scan
    if scan is not None:
        e, rows, counts, wide, control = scan.rows(data, b, marks)
        return e, rows, dict(zip(marks, counts)), bool(wide or control)
    m = _NOT_ROW.search(data, b - 1)
    e = m.start() + 1 if m else len(data)
    found = {c: data.count(bytes([c]), b, e) if data.find(bytes([c]), b, e) >= 0 else 0 for c in marks}
    odd = not data[b:e].isascii() or _CONTROL.search(data, b, e) is not None
    return e, data.count(b"\n", b, e), found, odd


def _next(data: bytes, head: bytes, pos: int, skip: Sequence[tuple[int, int]] = ()) -> int:
    """Where the next line that starts with `head` starts, from `pos` on (-1: none), outside the
    ranges in `skip` (sorted (a, e): a and e line starts; the newline before e is searched from)."""
    needle = b"\n" + head
    for a, e in skip:
        if e <= pos + 1:
            continue
        if pos < a:
            k = data.find(needle, pos, a)  # a match ending past a would start a line inside the range
            if k >= 0:
                return k + 1
        pos = max(pos, e - 1)
    k = data.find(needle, pos)
    return k + 1 if k >= 0 else -1
