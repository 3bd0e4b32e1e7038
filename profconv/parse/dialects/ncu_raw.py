"""An `ncu --csv --page raw` page read as columns: one wide row per launch, one column per metric.

The page's rows are read from bytes in one pass (profconv.parse._ncucells where it is built, the
pure-Python twin `_scan_py` here otherwise: the same result): each metric cell that is a plain
C-locale number becomes a double in one array (launch by launch, metric by metric), the others
('n/a', '1.5e+03', ' 12 ') are read one by one as the row reader reads them, and the page's decimal
mark is voted on every cell as `ncu._vote` votes. The ncu-metric rows are then columns that hold no
Python object per row (profconv.parse.colviews): the values, each launch's kernel name and line
(repeated once per metric), each metric's name and unit (tiled once per launch), the text of the
few cells that are no number. The per-kernel GPU rows come from the duration column.

Where the page is big, its rows are found on the input's bytes before it is decoded (`find`, from
core.parse_whole): they are blank lines in the text the engine decodes, normalizes and splits, and
ncu's reader takes them from the PreRead (profconv.parse.bytescan) when it meets the header. Pages
read from text (core.parse_text) go through the same reader on their lines' bytes.

A page whose cells leave the C decimal mark in doubt, whose rows are not all quoted cells of the
header's width, or whose bytes hold anything `normalize` would rewrite is not read here: the row
reader (`ncu._raw_cells` + `ncu._read`) reads it, with the same output as ever.
"""

from __future__ import annotations

import mmap
import os
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from profconv.nogc import paused
from profconv.parse import bytescan, columnar, native, units
from profconv.parse.colviews import Const, Floats, Repeated, Sparse, Tiled
from profconv.parse.dialects import ncu_console
from profconv.parse.file_windows import guarded
from profconv.parse.model import Block
from profconv.parse.table import Rows
from profconv.parse.text import csv_row

MIN_LAUNCHES = 8  # pages of more launches are read here (ncu.RAW_COLUMNS_FROM; a 92-launch page of 64 KB:
# 0.060 s by the row reader, 0.004 s here; each gives the other's rows)
_PLAIN_C = re.compile(r"\d+(?:\.\d*)?|[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?")  # _ncucells.c plain_read
_UNDECIDED = re.compile(r"[1-9]\d{0,2}[.,]\d{3}")
_DOT_GROUPED = re.compile(r"\d{1,3}(?:\.\d{3})+")
_COMMA_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")
# bytes `normalize` may rewrite (or that change what it does to the rest of the text), besides
# non-ASCII: control characters but the newline, '&', '\\', '//', '/*', '--', '<br', '<pre'
_UNCLEAN = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f&\\]|//|/\*|--|<[bBpP]")
_PAGE_END = re.compile(rb'\n(?:[^"]|"(?:ID|Process ID)",)')  # the first line after a page's rows


@dataclass
class Scan:
    """What one pass over a page's rows gives: launches, the vote of the plain cells, each launch's
    kernel name, the odd cells (index in `values`, text)."""

    rows: int
    dot: int
    comma: int
    undecided: bool
    names: list[str]
    odd: list[tuple[int, str]]


@dataclass
class Page:
    """A raw page read as columns (see the module docstring); `first_line`: the 1-based line of
    its first launch (the others follow, one a line)."""

    header: list[str]
    has_units: bool
    metrics: list[str]
    units: list[str | None]
    names: list[str]
    values: array
    texts: dict[int, str]
    first_line: int
    cut_row: bool = False  # the input's last line, after these rows, is one of the page cut between its cells

    @property
    def last_line(self) -> int:
        """The line of the page's last launch."""
        return self.first_line + len(self.names) - 1

    def blocks(self, line_start: int, line_end: int) -> list[Block]:
        """The ncu-metric block (columns) and the per-kernel GPU block of the page."""
        from profconv.parse.dialects import ncu

        n, m = len(self.names), len(self.metrics)
        lines = range(self.first_line, self.first_line + n)
        at = sorted(self.texts)
        table = Rows({"section": Const("ncu-metric", n * m), "name": Repeated(self.names, m),
                      "line_start": Repeated(lines, m), "line_end": Repeated(lines, m),
                      "metric": Tiled(self.metrics, n), "unit": Tiled(self.units, n), "value": Floats(self.values),
                      "value_text": Sparse(None, n * m, at, [self.texts[k] for k in at])}, n * m)
        blocks = [Block(section="ncu-metric", table=table, line_start=line_start, line_end=line_end)]
        summary = ncu.summarize_ns(self._durations())
        if summary:
            blocks.append(Block(section="gpu", rows=summary, line_start=line_start, line_end=line_end))
        return blocks

    def _durations(self) -> Iterable[tuple[str, float, int]]:
        """Each launch's (kernel name, duration in ns or NaN, line), launch by launch: where one
        column holds the durations, as a whole column (its unit looked up once), else cell by cell."""
        from profconv.parse.dialects import ncu

        n, m = len(self.names), len(self.metrics)
        timed = [j for j, name in enumerate(self.metrics) if name in ncu.DURATION_METRICS]
        lines = range(self.first_line, self.first_line + n)
        if len(timed) != 1:
            values, units_of = self.values, self.units
            return ((self.names[r], ncu.duration_ns(values[r * m + j], units_of[j]), lines[r])
                    for r in range(n) for j in timed)
        j = timed[0]
        u = ncu.TIME_UNIT.get((self.units[j] or "").strip())
        if u is None:
            return ()  # no duration: every one NaN
        column, factor = self.values[j::m], units.TIME_UNITS_NS[u]
        return zip(self.names, column.tolist() if factor == 1.0 else [units.scaled(v, factor) for v in column], lines)


def read(data: bytes, start: int, end: int, header: list[str], units_row: list[str] | None,
         first_line: int, launches: int | None = None) -> Page | None:
    """The page whose rows are data[start:end] (each line ending in '\\n'), under `header` and its
    units row (None: the page has none); None where the row reader must read it. `launches`: its
    lines, where the caller has counted them."""
    from profconv.parse.dialects import ncu

    metric_at = ncu._metric_columns(header)
    kname = _kernel_column(header)
    if len(set(header)) != len(header) or not metric_at or kname is None:
        return None
    units_of = [((units_row[h] if units_row is not None and h < len(units_row) else "") or None) for h in metric_at]
    kinds = bytearray(b"i" * len(header))
    kinds[kname] = ord("n")
    for h, u in zip(metric_at, units_of):
        kinds[h] = ord("d") if header[h] in ncu.DURATION_METRICS and u in ncu._WHOLE_NS else ord("m")
    launches = _newlines(data, start, end) if launches is None else launches
    values = array("d", [0.0]) * (launches * len(metric_at))
    scan = _scan(data, start, end, bytes(kinds), values)
    if scan is None or scan.rows != launches:
        return None
    texts = _odd_cells(scan, bytes(b for b in kinds if b in b"md"), values)
    if texts is None:
        return None
    return Page(header, units_row is not None, [header[h] for h in metric_at], units_of, scan.names, values, texts,
                first_line)


def _kernel_column(header: list[str]) -> int | None:
    col = {h: k for k, h in enumerate(header)}
    return col.get("Kernel Name", col.get("Function Name"))


def _scan(data: Any, start: int, end: int, kinds: bytes, values: array) -> Scan | None:
    """The rows data[start:end] scanned a window of whole lines at a time (a mapped file's pages
    let go after each: `_drop`); the odd cells' texts taken as each window is read."""
    mod = native.load("_ncucells")
    rows = mod.rows if mod is not None else _scan_py
    m = sum(k in b"md" for k in kinds)
    out = Scan(0, 0, 0, False, [], [])
    view = memoryview(values)
    lo = start
    while lo < end:
        hi = end if end - lo <= WINDOW else data.rfind(b"\n", lo, lo + WINDOW) + 1
        hi = end if hi <= lo else hi  # a line longer than a window: the rest in one go
        got = rows(data, lo, hi, kinds, view[out.rows * m :])
        if got is None:
            return None
        base = out.rows * m
        out.odd += [(base + k, data[a:b].decode("ascii")) for k, a, b in got[5]]
        out.rows, out.dot, out.comma = out.rows + got[0], out.dot + got[1], out.comma + got[2]
        out.undecided = out.undecided or bool(got[3])
        out.names += got[4]
        _drop(data, lo, hi)
        lo = hi
    return out


def _odd_cells(scan: Scan, kinds: bytes, values: array) -> dict[int, str] | None:
    """The odd cells voted on and read as the row reader reads them (their values set in `values`);
    their texts by index, or None where the page's decimal mark is not the C locale's."""
    from profconv.parse.dialects.ncu import _number_or_text, voting

    vote = units.LocaleVote()
    vote.dot, vote.comma, vote.undecided = scan.dot, scan.comma, scan.undecided
    cells = scan.odd
    m = len(kinds)
    for k, cell in cells:
        x = voting([cell])
        vote.add(x)
        if kinds[k % m] == ord("d"):
            vote.add_counts(x)
    if vote.locale() is not units.C_LOCALE:
        return None
    texts: dict[int, str] = {}
    for k, cell in cells:
        v, text = _number_or_text(cell)
        values[k] = v
        if text is not None:
            texts[k] = text
    return texts


def _scan_py(data: Any, start: int, end: int, kinds: bytes, values: Any,
             seen: dict[str, str] | None = None) -> tuple[Any, ...] | None:
    """_ncucells.rows in Python (see profconv/parse/_ncucells.c): the same result, each text the str
    `seen` holds for it where given (added where it holds none)."""
    body = data[start:end]
    if body and not body.endswith(b"\n"):
        return None
    tail = kinds.endswith(b"e")  # each line ends in an empty cell that is not quoted: '...,"21.30",'
    ncols = len(kinds) - tail
    metric_cols = [c for c, k in enumerate(kinds) if k in b"md"]
    text_cols = [c for c, k in enumerate(kinds) if k == ord("n")]  # a raw page's kernel; a details page's three
    vote = [0, 0, False]
    names: list[str] = []
    seen = {} if seen is None else seen
    odd: list[tuple[int, int, int]] = []
    full: list[tuple[int, int, int]] = []
    pos, rows = start, 0
    for whole in body.split(b"\n")[:-1]:
        parts = whole[1:].split(b'","', ncols) if tail else []
        is_full = len(parts) > ncols  # its cells go on past the 'e': handed out whole
        line = whole[: len(whole) - len(parts[-1]) - 2] if is_full else whole[:-1] if tail and whole.endswith(b",") \
            else b"" if tail else whole
        cells = _plain_cells(line, ncols)
        if cells is None:
            return None
        at = rows * len(metric_cols)
        if is_full:  # its cells read (their values written) but nothing of it kept
            _metric_cells(cells, metric_cols, kinds, values, at, pos, [0, 0, False], [])
            full.append((rows + len(full), pos, pos + len(whole) + 1))
        else:
            names += [seen.setdefault(cells[c], cells[c]) for c in text_cols]  # one str per text, as the C scan
            _metric_cells(cells, metric_cols, kinds, values, at, pos, vote, odd)
            rows += 1
        pos += len(whole) + 1
    return rows, vote[0], vote[1], vote[2], names, odd, full


def _plain_cells(line: bytes, ncols: int) -> list[str] | None:
    """The cells of a line of `ncols` quoted cells with no quote inside, each of bytes normalize leaves
    as they are (_ncucells.c cell_end); None for any other line."""
    if len(line) < 2 or line[:1] != b'"' or line[-1:] != b'"' or not line.isascii() or _UNCLEAN.search(line):
        return None
    cells = line[1:-1].decode("ascii").split('","')
    if len(cells) != ncols or b'"' in line[1:-1].replace(b'","', b""):
        return None
    return cells


def _metric_cells(cells: list[str], metric_cols: list[int], kinds: bytes, values: Any, at: int, pos: int,
                  vote: list[Any], odd: list[tuple[int, int, int]]) -> None:
    """A row's metric cells into `values` from index `at`, their vote added to `vote` (dot, comma,
    undecided), the odd ones (index, start, end) to `odd`; the line starts at offset `pos`."""
    offsets = _cell_starts(pos, cells)
    for c in metric_cols:
        cell = cells[c]
        got = _plain_cell(cell, kinds[c] == ord("d"))
        if got is None:
            values[at] = float("nan")
            odd.append((at, offsets[c], offsets[c] + len(cell)))
        else:
            values[at], d, k, u = got
            vote[0], vote[1], vote[2] = vote[0] + d, vote[1] + k, vote[2] or u
        at += 1


def _cell_starts(pos: int, cells: list[str]) -> list[int]:
    """Where each cell's text starts in the bytes, the line starting at `pos`."""
    out, at = [], pos + 1
    for cell in cells:
        out.append(at)
        at += len(cell) + 3
    return out


def _plain_cell(cell: str, duration: bool) -> tuple[float, int, int, bool] | None:
    """A metric cell's (value, dot votes, comma votes, undecided) where it is empty or a plain
    C-locale number (_ncucells.c metric), else None."""
    if not cell:
        return float("nan"), 0, 0, False
    if not _PLAIN_C.fullmatch(cell):
        return None
    v = float(cell.replace(",", ""))
    if v in (float("inf"), float("-inf")):
        return None
    dot = comma = 0
    undecided = False
    if "." in cell or "," in cell:
        if _UNDECIDED.fullmatch(cell):
            undecided = True
        else:
            dot = 1
    if duration:
        if _DOT_GROUPED.fullmatch(cell):
            comma = 1
        elif _COMMA_GROUPED.fullmatch(cell):
            dot += 1
    return v, dot, comma, undecided


def find(data: Any, keep: bool = True) -> bytescan.PreRead | None:
    """The big raw pages of `data` read from its bytes (see the module docstring), or None. `keep`:
    the PreRead holds `data` for a Reparse (else its source is empty: the caller reads the input
    again then, and `data` may go as soon as the caller lets it go)."""
    if b"\x00" in data[:4096] or data[:3] == b"\xef\xbb\xbf":
        return None
    with paused():  # a kernel name a launch and not one cycle among them: profconv/nogc.py
        return _find(data, keep)


def _find(data: Any, keep: bool) -> bytescan.PreRead | None:
    pieces: list[bytes] = []
    tables: dict[int, bytescan.Table] = {}
    pos = 0  # the input is copied into `pieces` up to here
    at = line = 0  # the newlines before offset `at` (counted once: a sweep of pages left to the text path
    # had each one's count start where the last page read here ended, quadratic in the pages)
    a, console = _next_start(data, 0)
    while a >= 0:
        line, at = line + _newlines(data, at, a), a
        got = ncu_console.region_at(data, a, line) if console else _page_at(data, a, line)
        if got is None:
            a, console = _next_start(data, a + 1)
            continue
        t, e, cut = got
        tables[t.line] = t
        pieces += [data[pos:cut], b"\n" * (t.rows - t.kept)]
        line, pos = t.line + 1 + t.rows, e
        at = e
        a, console = _next_start(data, e)  # a page's own rows are not looked through for headers
    if not tables:
        return None
    pieces.append(data[pos:])
    return bytescan.PreRead(b"".join(pieces), data if keep else b"", tables, dialect="ncu")


FILE_FROM = 1 << 20  # bytes: smaller files are read whole first (core.read_bytes), then find()


def find_file(path: str) -> bytescan.PreRead | None:
    """`find` over a regular file mapped into memory, its pages let go as they are read (`_drop`):
    a big page's launches read without the file's bytes held at once (the PreRead's source is
    empty: core.parse_whole reads the file again on a Reparse). None where the file is small, or
    its first 64 KiB are not text with a --csv page header in them."""
    try:
        if os.path.getsize(path) < FILE_FROM:
            return None
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm, guarded(mm, f):
            head = mm[: 1 << 16]
            marks = (b'"ID",', b'"Process ID",', b"==PROF==")  # a --csv page, a console page's run
            if head[:2] == b"\x1f\x8b" or b"\x00" in head or not any(m in head for m in marks):
                return None
            return find(mm, keep=False)
    except (OSError, ValueError):  # cannot be mapped (a special file): read whole
        return None


_MARKS = (b'"ID",', b'"Process ID",')  # the lines that start a --csv page


def _next_start(data: Any, lo: int) -> tuple[int, bool]:
    """Where the first line at or after offset `lo` (a line's start) that starts a --csv page or a
    console page ('[N] app@host': ncu_console) starts, and whether it is a console page's; -1 where
    none does."""
    a = _next_header(data, lo)
    hi = len(data) if a < 0 else a
    if lo == 0 and data[:1] == b"[":
        return 0, True
    k = _first(data, b"\n[", max(lo - 1, 0), hi)
    return (k + 1, True) if k >= 0 else (a, False)


def _next_header(data: Any, lo: int) -> int:
    """Where the first line at or after offset `lo` (a line's start) that starts a --csv page
    starts; -1 where none does."""
    if lo == 0 and data[:13].startswith(_MARKS):
        return 0
    found = -1
    for mark in _MARKS:  # the second looked for only before the first
        k = _first(data, b"\n" + mark, max(lo - 1, 0), len(data) if found < 0 else found)
        found = k + 1 if k >= 0 else found
    return found


WINDOW = 1 << 22  # bytes of a page looked at a time (a mapped file's pages let go after each)


def _first(data: Any, sub: bytes, lo: int, hi: int) -> int:
    """Where `sub` first starts in data[lo:hi] (-1: nowhere), a window at a time (the windows
    looked through let go)."""
    for a in range(lo, hi, WINDOW):
        b = min(hi, a + WINDOW + len(sub) - 1)
        k = data.find(sub, a, b)
        if k >= 0:
            return k
        _drop(data, a, b)
    return -1


def _page_end(data: Any, start: int) -> tuple[int, int]:
    """The offset of the first line after the rows from `start` (_PAGE_END) and the rows' '\n'
    before it, a window at a time: by _ncucells.page_end in one pass where it is built."""
    mod = native.load("_ncucells")
    page_end = getattr(mod, "page_end", None)  # None: not built, or built from an older source
    if page_end is None:
        for lo in range(start - 1, len(data), WINDOW):
            m = _PAGE_END.search(data, lo, min(len(data), lo + WINDOW + 16))
            _drop(data, lo, lo + WINDOW)
            if m is not None:
                return m.start() + 1, _newlines(data, start, m.start() + 1)
        return len(data), _newlines(data, start, len(data))
    lo, rows = start, 0
    while True:
        end, lines, nxt = page_end(data, lo, lo + WINDOW)
        rows += lines
        _drop(data, lo, nxt)
        if end >= 0:
            return end, rows
        lo = nxt


def _newlines(data: Any, a: int, b: int) -> int:
    if isinstance(data, bytes):
        return data.count(b"\n", a, b)
    n = 0
    for lo in range(a, b, WINDOW):
        n += data[lo : min(b, lo + WINDOW)].count(b"\n")
        _drop(data, lo, lo + WINDOW)
    return n


def _drop(data: Any, a: int, b: int) -> None:
    """A mapped file's pages from a to b let go (read again from the file if looked at again)."""
    if isinstance(data, mmap.mmap) and b > a:
        lo = a - a % mmap.PAGESIZE
        data.madvise(mmap.MADV_DONTNEED, lo, min(b, len(data)) - lo)


def _page_at(data: bytes, a: int, line: int) -> tuple[bytescan.Table, int, int] | None:
    """The page whose header starts at offset `a` (line index `line`) as a PreRead table keyed by
    the line before its first row (a raw page's units row, else the header), the offset after its
    rows and where its rows blank in the text begin; None where it is small or the text path must
    read it. A details page (a "Metric Name" column) is read by ncu_details."""
    from profconv.parse.dialects import ncu_details

    b = data.find(b"\n", a) + 1
    if b == 0 or not data[a:b].isascii():
        return None
    header = csv_row(data[a : b - 1].decode("ascii"))
    c = data.find(b"\n", b) + 1
    if not header or c == 0 or data[b : b + 1] != b'"':
        return None
    details = "Metric Name" in header
    unit_line = data[b : c - 1]
    units_row = csv_row(unit_line.decode("latin-1")) if unit_line.isascii() and not details else None
    has_units = bool(units_row) and not units_row[0].strip()  # type: ignore[index]
    start = c if has_units else b
    e, rows = _page_end(data, start)
    e, cut_row = _before_cut_row(data, start, e, header)
    least = ncu_details.MIN_ROWS if details else MIN_LAUNCHES
    if rows <= least or data[e - 1 : e] != b"\n" or data[e : e + 1] in (b" ", b"\t") or _stray_after(data, e, len(header)):
        return None
    if details:
        page: Any = ncu_details.read(data, start, e, header, line + 2, rows)
    else:
        page = read(data, start, e, header, units_row if has_units else None, line + 2 + has_units, rows)
    if page is None:
        return None
    page.cut_row = cut_row
    key = line + has_units
    cut = max(start, data.rfind(b"\n", start, min(e, bytescan.KEEP)) + 1) if start < bytescan.KEEP else start
    # what PreRead.check compares with the text's lines: the line before the rows and the rows
    # kept in the text, copied (the input's bytes are not held by the table)
    lead = data[b if has_units else a : cut]
    # its first line (the units row, else the header) is the table's header line: all PreRead.check
    # compares where no row is kept (a page past the first KEEP bytes: it held the header's first
    # cell, and every file of two big pages was read again by the text path)
    t = bytescan.Table(key, lead[: lead.find(b"\n")].decode("ascii"), columnar.Span(lead, 0, len(lead)), rows,
                       lead.count(b"\n") - 1, 0, len(lead), batch=page)
    return t, e, cut


def _before_cut_row(data: Any, start: int, e: int, header: list[str]) -> tuple[int, bool]:
    """Where a page's rows that run to the end of an input cut mid-line (a job's time limit) end, and
    whether that last line is a row of the page cut between its cells (Page.cut_row): before that
    line where it is cut inside a cell (a quote left open: the row reader leaves it out of the page,
    ncu._csv_extent, for the engine to report unplaced, engine.cut_last_line) or between cells
    before the ones a row needs (the row reader's page holds it, reported unplaced: ncu._csv);
    else `e` (the text path's: a row whole but for its line end)."""
    if e != len(data) or e == start or data[e - 1 : e] == b"\n":
        return e, False
    k = max(data.rfind(b"\n", start, e) + 1, start)
    last = bytes(data[k:e])  # (a mapped file has no count())
    if last.count(b'"') % 2:
        return k, False
    cells = len(csv_row(last.decode("latin-1")))
    return (k, True) if last.startswith(b'"') and cells <= _cells_needed(header) else (e, False)


def _cells_needed(header: list[str]) -> int:
    """How many cells a page's row must have to be read (ncu._raw_cells, ncu._details_cells)."""
    if "Metric Name" not in header:
        return len(header) - 1
    kname = "Kernel Name" if "Kernel Name" in header else "Function Name"
    return max(header.index(c) for c in (kname, "Metric Name", "Metric Value", "Metric Unit") if c in header)


def _stray_after(data: bytes, e: int, width: int) -> bool:
    """Whether the line at offset e is one the row reader takes for program output inside the page
    (ncu._csv_extent: a row of the page follows it): then the text path reads the page."""
    from profconv.parse.dialects import ncu

    f = data.find(b"\n", e)
    if f < 0:
        return False
    g = data.find(b"\n", f + 1)
    nxt = data[f + 1 : g if g >= 0 else len(data)]
    return ncu._stray(data[e:f].decode("latin-1")) and ncu._row_of(nxt.decode("latin-1"), width)

