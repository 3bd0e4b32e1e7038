"""A big ncu console details page read from the input's bytes, its metrics held as columns.

One process of thousands of kernels prints one console page of tens of megabytes after its
'[N] app@host' line: each kernel's line, its sections, their tables of (Metric Name, Metric
Unit, Metric Value) rows. The row reader (ncu._Page over the text's lines, ncu._Run) holds the
whole text's lines, each kernel's cells until the run ends (its decimal mark is voted by every
kernel together: one process prints in one locale) and a Row object a metric: 7.9 bytes of memory
a byte of input for 20 MB of one process.

Here the page's lines are found on the bytes before the input is decoded (`region_at`, from
ncu_raw.find: a PreRead table keyed by the '[N]' line) and fed, a window of whole lines at a time,
to the same ncu._Page code the row reader runs (`_RegionPage`), whose run keeps its metrics as
columns (`ColumnRun`): a kernel's values are read as soon as its own cells decide their decimal
mark, the few kernels they leave in doubt when the run's vote is known. The lines are blank in the
text the engine decodes, and ncu's reader adopts the page's run and state where it meets the
'[N]' line (ncu._Page.adopt). The region ends before the first line the row reader reads in the
light of what lies outside it (a '[N]' or '==PROF== Connected' line, a --csv page, another
profiler's output) or at the end of the input; the row reader goes on from there.

A region is read here only where the text path would see the same lines and nothing else would
look at them: printable ASCII, none of what `normalize` rewrites (comment prefixes on two lines in
a row, HTML, LaTeX, a C comment's stars, a PID in dashes, a markdown code block), no line another
dialect's detect or the run-context scan would take, no --print-summary table, no line it cannot
place (its text would be reported). Else the row reader reads it, as ever; the output is the same
either way (tests compare both on every console test log).
"""

from __future__ import annotations

import re
from array import array
from functools import cache
from typing import Any

from profconv.parse import bytescan, columnar, grouping, units
from profconv.parse.colviews import Const, Floats, Sparse
from profconv.parse.model import Block, Document
from profconv.parse.table import Rows

# a region this big is read from the bytes (smaller ones: the row reader, as fast; a stream's window of
# several runs of a few hundred KB each is read by the row reader at ~8 bytes a byte: 4 MB, 32 MB)
MIN_BYTES = 1 << 16
WINDOW = 1 << 20  # bytes of a region decoded and read at a time
_PROCESS = re.compile(rb"\[\d+\] \S")
_CSV_PAGE = ('"ID",', '"Process ID",')
# what normalize may act on in a region's lines (printable ASCII aside): an entity, a LaTeX escape,
# a '<br'/'<pre' tag, a C comment or '//' prefix (`in` tests first: sre tries an alternation at every
# byte), and at a line's start a comment mark (text._PREFIX's), a PID between dashes, a C comment's star
_TAG = re.compile(rb"<[bBpP]")
_CONTROL = bytes(range(10)) + bytes(range(11, 32)) + b"\x7f"
_NOT_PRINTABLE = re.compile(rb"[^\x20-\x7e\n]")
_LINE_MARK = re.compile(rb"\n[ \t]*(--(?!-)|#+(?![\w{])|>|//|[ \t]\*)")
_NOT_INDENTED = re.compile(rb"\n[^ \n]")  # a line that starts with neither a blank nor a newline
_PARAGRAPH = re.compile(rb"(?:[^\s][^\n]*\n)*")  # lines not indented (blank lines aside)
_BLANKS = re.compile(rb"(?:[ \t]*\n)*")


class _Stop(Exception):
    """The line is one the row reader reads in the light of what lies outside the region."""


class ColumnRun:
    """ncu._Run's work for a run of details pages, its metrics held as columns (the cells of one
    kernel at a time). A --print-summary row (its Minimum and Maximum) is not one it holds: it raises
    bytescan.Reparse (a region with one is left to the row reader before)."""

    def __init__(self) -> None:
        self.pending: list[Any] = []  # the current kernel's cells (ncu._Cells)
        self.launches: dict[int, tuple[int, int]] = {}
        self.summary_lines: set[int] = set()
        self.first_line = 0
        self._clear()

    def _clear(self) -> None:
        self.names: list[str] = []
        self.lines = array("q")
        self.metrics: list[str] = []
        self.units: list[str | None] = []
        self.values = array("d")
        self.texts: dict[int, str] = {}
        self.vote = units.LocaleVote()
        self.kernels = 0
        self.undecided: list[tuple[int, list[Any]]] = []  # (first row, cells) of kernels left in doubt

    def end_kernel(self) -> None:
        if not self.pending:
            return
        from profconv.parse.dialects import ncu

        cells, self.pending = self.pending, []
        if self.launches or any(c[5] is not None or c[6] is not None for c in cells):
            raise bytescan.Reparse  # a --print-summary table: ncu._Run's
        own = ncu._vote(cells)
        _merge(self.vote, own)
        self.kernels += 1
        loc = own.locale()
        at = len(self.names)
        kernel = cells[0][0]
        for _, ln, m, u, _, _, _ in cells:
            self.names.append(kernel)
            self.lines.append(ln)
            self.metrics.append(m)
            self.units.append(u or None)
        if loc.ambiguous:
            self.values.extend([float("nan")] * len(cells))
            self.undecided.append((at, cells))
        else:
            self._read(at, cells, loc)

    def _read(self, at: int, cells: list[Any], loc: units.Locale) -> None:
        from profconv.parse.dialects import ncu

        values, texts = self.values, self.texts
        grow = len(values) == at
        for r, c in enumerate(cells, at):
            v, text = ncu._number_or_text(c[4], loc)
            if grow:
                values.append(v)
            else:
                values[r] = v
            if text is not None:
                texts[r] = text

    def _run_locale(self) -> units.Locale | None:
        """ncu._Run._run_locale, of the vote gathered kernel by kernel."""
        vote = self.vote
        if self.kernels < 2 or not (vote.comma or vote.dot or vote.comma4 or vote.group4):
            return None
        run = vote.locale()
        return None if run.ambiguous else run

    def resolve(self) -> list[str]:
        """The kernels' values all read; the kernels whose decimal mark stayed in doubt."""
        from profconv.parse.dialects import ncu

        self.end_kernel()
        run = self._run_locale()
        ambiguous = []
        for at, cells in self.undecided:
            loc = run if run is not None else ncu._vote(cells).locale()  # (ncu._read: its own, in doubt)
            if run is None:
                ambiguous.append(cells[0][0])
            self._read(at, cells, loc)
        self.undecided = []
        return ambiguous

    def flush(self, events: list[grouping.Event]) -> None:
        ambiguous = self.resolve()
        if self.summary_lines:
            raise bytescan.Reparse
        n, first = len(self.names), self.first_line
        if n:
            notes = [f"{', '.join(ambiguous)}: {units.AMBIGUOUS_NOTE}"] if ambiguous else []
            for blk in self._blocks(first, notes):
                events.append(grouping.Event("block", first, block=blk))
            self.first_line = 0  # the next kernel line begins the next table
        self._clear()

    def _blocks(self, first: int, notes: list[str]) -> list[Block]:
        from profconv.parse.dialects import ncu

        n, lines = len(self.names), self.lines
        at = sorted(self.texts)
        table = Rows({"section": Const("ncu-metric", n), "name": self.names, "line_start": lines,
                      "line_end": array("q", lines), "metric": self.metrics, "unit": self.units,
                      "value": Floats(self.values), "value_text": Sparse(None, n, at, [self.texts[k] for k in at])}, n)
        last = lines[-1]
        blocks = [Block(section="ncu-metric", table=table, line_start=first, line_end=last, notes=notes)]
        names, values, units_of = self.names, self.values, self.units
        summary = ncu.summarize_durations((names[r], values[r], units_of[r], lines[r])
                                          for r, m in enumerate(self.metrics) if m in ncu.DURATION_METRICS)
        if summary:
            blocks.append(Block(section="gpu", rows=summary, line_start=first, line_end=last))
        return blocks


def _merge(into: units.LocaleVote, v: units.LocaleVote) -> None:
    into.comma += v.comma
    into.dot += v.dot
    into.comma4 += v.comma4
    into.undecided = into.undecided or v.undecided
    into.group4 = into.group4 or v.group4


class Region:
    """What a region's lines left: its run (the metrics so far, as columns), the page's state after
    its last line (ncu._Page.resume_from's), the lines it claims that stay in the text."""

    dialect = "ncu"
    has_units = False  # (what ncu._pre_read asks of a --csv page's table)

    def __init__(self, run: ColumnRun, state: tuple, claimed: set[int]) -> None:
        self.run, self.state, self.claimed = run, state, claimed


@cache
def _page_class() -> type:
    from profconv.parse.dialects import ncu

    class _RegionPage(ncu._Page):
        """ncu._Page over a region's lines: its run holds columns; a line whose reading depends on
        what lies outside the region (a flush, a process's line) stops it (_Stop) before it changes
        anything; a claim is kept only for the lines that stay in the text (`keep_to`)."""

        def __init__(self, keep_to: int) -> None:
            super().__init__(Document(lines=[], label="", text=""))
            self.run = ColumnRun()  # type: ignore[assignment]
            self.keep_to = keep_to
            self.last_claim = 0

        def claim(self, lineno: int) -> bool:
            if lineno <= self.keep_to:
                self.result.claimed.add(lineno)
            self.last_claim = lineno
            return True

        def flush(self) -> None:
            raise _Stop

        def run_line(self, line: str, lineno: int) -> bool:
            if "Connected to process" in line or line[:1] == "[":
                raise _Stop
            return False

    return _RegionPage


def region_at(data: Any, a: int, line: int) -> tuple[bytescan.Table, int, int] | None:
    """The console region after the '[N] app@host' line at offset `a` (line index `line`) as a PreRead
    table keyed by that line, the offset after the region and where its lines blank in the text
    begin; None where it is small or the row reader must read it (module docstring)."""
    from profconv.parse.dialects import ncu_raw

    b = data.find(b"\n", a) + 1
    head = data[a : b - 1] if b else b""
    if not b or not _PROCESS.match(head) or not head.isascii() or _NOT_PRINTABLE.search(head):
        return None
    if len(data) - b < MIN_BYTES or ncu_raw._first(data, b"\n[", b - 1, min(len(data), b + MIN_BYTES)) >= 0:
        return None  # (a region ends before the next '[N]' line)
    keep_to = line + 1 + (_newlines_before(data, b, bytescan.KEEP) if b < bytescan.KEEP else 0)  # 1-based
    got = _read_region(data, b, line + 2, keep_to)
    if got is None:
        return None
    e, rows, region = got
    cut = max(b, data.rfind(b"\n", b, min(e, bytescan.KEEP)) + 1) if b < bytescan.KEEP else b
    if e - b < MIN_BYTES or not _ends_plain(data, e, _indented_last(data, a, cut)):
        return None
    lead = b"\n".join(x.rstrip(b" ") for x in data[a:cut].split(b"\n"))  # the lines as normalize leaves them
    header = lead[: lead.find(b"\n")].decode("ascii")
    t = bytescan.Table(line, header, columnar.Span(lead, 0, len(lead)), rows, lead.count(b"\n") - 1, 0, len(lead),
                       batch=region)
    return t, e, cut


def _newlines_before(data: Any, b: int, keep: int) -> int:
    """The region's lines that start before offset `keep` (they stay in the text: bytescan.KEEP)."""
    from profconv.parse.dialects import ncu_raw

    k = data.rfind(b"\n", b, keep)
    return 0 if k < 0 else ncu_raw._newlines(data, b, k + 1)


def _indented_last(data: Any, a: int, cut: int) -> bool:
    """Whether the last line left in the text before the region's blank lines (of the '[N]' line at
    offset `a` and the region's lines before offset `cut`) that is not blank is indented."""
    k = data.rfind(b"\n", a, cut - 1) + 1 if cut > a else a  # (the start of the last line kept)
    while k > a and not data[k : data.find(b"\n", k)].strip():
        k = data.rfind(b"\n", a, k - 1) + 1
    return data[k : k + 1] in (b" ", b"\t")


def _ends_plain(data: Any, e: int, indented_before: bool) -> bool:
    """What follows the region is rewritten alike with the region's lines and with them blank: it
    starts with no comment mark, nor with an indented line where the last line before the blank ones
    is not indented (`indented_before`; a markdown code block opens there: a page cut mid-line by a
    profiler killed while it wrote ends so), and no code block opens after the lines not indented that
    start it (text._dedent_code_blocks: after the region's last line they are no markdown paragraph,
    after blank lines they are)."""
    nxt = data[e : e + (1 << 16)]
    if (nxt.startswith((b"    ", b"\t")) and not indented_before) or _LINE_MARK.match(b"\n" + nxt[:256]):
        return False
    para = _PARAGRAPH.match(nxt).end()  # type: ignore[union-attr]
    if para == len(nxt):
        return len(nxt) < 1 << 16  # the input ends in it (a paragraph longer than that: not looked through)
    blanks = _BLANKS.match(nxt, para).end()  # type: ignore[union-attr]
    return blanks == para or not nxt.startswith((b"    ", b"\t"), blanks)


def _read_region(data: Any, b: int, first: int, keep_to: int) -> tuple[int, int, Region] | None:
    """The region's lines from offset `b` (line `first`, 1-based) read a window at a time: the offset
    after its last line, its line count and what it left; None where it is not plain."""
    from profconv.parse.dialects import ncu_raw

    page = _page_class()(keep_to)
    lo, lineno = b, first
    try:
        while lo < len(data):
            hi = data.rfind(b"\n", lo, min(len(data), lo + WINDOW)) + 1
            if hi <= lo:
                break  # a last line without its newline: the row reader's
            got = _window(data[lo:hi], page, lineno, lineno == first)
            ncu_raw._drop(data, lo, hi)
            if got is None:
                return None
            used, lines = got
            lo, lineno = lo + used, lineno + lines
            if lo < hi:
                break  # stopped inside the window
    except bytescan.Reparse:  # a --print-summary table
        return None
    if page.result.unplaced or page.run.summary_lines or page.events or lineno == first:
        return None
    state = (page.kernel, None if page.spans is None else tuple(page.spans), page.rows_in_table,
             page.invocations, page.kernel_line)
    if page.last_claim == lineno - 1:  # the region's last line, booked as the row reader books it: a
        page.result.claimed.add(lineno - 1)  # line cut short after it is reported (engine.cut_last_line)
    return lo, lineno - first, Region(page.run, state, page.result.claimed)


def _window(chunk: bytes, page: Any, lineno: int, opens: bool) -> tuple[int, int] | None:
    """The window's lines (whole) read by `page` until one stops the region: the bytes and lines read;
    None where a line read is not plain (the region is then the row reader's)."""
    texts = chunk.decode("latin-1").split("\n")
    texts.pop()  # (after the last newline)
    used = 0
    for k, text in enumerate(texts):
        line = text.rstrip(" ")
        if line.startswith(_CSV_PAGE):
            break
        try:
            page.line(line, lineno + k)
        except _Stop:
            break
        if opens and k == 0 and not (page.kernel is not None and page.run.first_line == lineno and page.invocations is None):
            return None  # a region begins with a kernel's line (what follows then is the region's own)
        used += len(text) + 1
    else:
        k = len(texts)
    return (used, k) if _plain(chunk[:used]) else None


def _plain(chunk: bytes) -> bool:
    """The region's bytes read as the text path reads them (module docstring): printable ASCII,
    nothing normalize rewrites, nothing another dialect or the context scan takes."""
    from profconv.parse import context
    from profconv.parse.stream import _other_dialect

    if not chunk.isascii() or len(chunk.translate(None, _CONTROL)) != len(chunk):
        return False
    if b"&" in chunk or b"\\" in chunk or (b"<" in chunk and _TAG.search(chunk)) or b"/*" in chunk or (
            _marked_lines(b"\n" + chunk)) or _NOT_INDENTED.search(b"\n" + chunk):
        return False  # (a line not indented may open a markdown code block: text._dedent_code_blocks)
    text = chunk.decode("ascii")
    return not _other_dialect(text, "ncu", head=False) and not context.scan(text)


def _marked_lines(view: bytes) -> bool:
    """Whether normalize acts on a line of `view` (each line after a newline) by its start: two
    lines in a row that start with the same comment mark (text._strip_prefixes takes it off), a PID
    between dashes, a C comment's star."""
    prev_end, prev_key = -1, b""
    for m in _LINE_MARK.finditer(view):
        mark = m.group(1)
        if mark.endswith(b"*"):
            return True
        if mark == b"--":
            nxt = view[m.end() : m.end() + 1]
            if nxt.isdigit():
                return True
            if nxt not in (b" ", b"\t", b"\n", b""):
                continue  # no comment mark ('--x')
        if m.start() == prev_end and mark[:1] == prev_key:
            return True
        prev_end, prev_key = view.find(b"\n", m.end()), mark[:1]
    return False
