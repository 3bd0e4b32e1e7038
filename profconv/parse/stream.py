"""A long nvprof or nsys log read part by part, with the same result as reading it whole.

`profconv.parse.parse` holds the whole input, its lines and all of its rows until the end. A log of
thousands of summary-only profiles (one per run of a sweep) needs none of that: each profile's
rows, shares and notes are its own. `Stream` reads such a file a window of a quarter megabyte at a
time, parses the window, and hands out the profiles that end before the last profile start it
holds (a part); the next window begins at that start. The parts, one after the other, are
exactly what `parse` gives: the same profiles, numbers, rows, shares, unplaced lines and notes.

That holds because a part boundary is only ever put where the nvprof reader itself starts afresh
(a `NVPROF is profiling process` line that opens a profile, with no comment prefix: everything
before it is settled, and what the reader carries past it, `DialectResult.resume`, is handed to
the next window's parse), the run context before a profile is scanned with it, and line numbers
are shifted to the file's. Anything that makes the whole file matter raises `NotStreamable`
(before or while parts are handed out): another dialect's markers anywhere (it would be read
over the whole file), a notebook, gzip, UTF-16 or a decoding that changes part way, a Device line
(nvprof gives every profile the file's last one), no profile at all. A caller that has handed
parts on must then start over with `parse` (the CLI writes parts to a temporary file first;
profconv.commands.parse); `parts` checks the whole file for those markers before the first part,
so that it can hand parts to a caller as they come.

nsys streams alike (a sweep's runs, cut at a run's 'Generating …' line: nsys.STREAM): the dialect a
file is read as is the streaming one whose profile start its head holds twice (`which`); nsys's
windows are half a megabyte, their summary tables read from their bytes as a whole file's are
(profconv.parse.bytescan: `_pre_read`); nvprof's '%' markers, in every nsys header, are left to
nvprof's detect on each window (`local_markers`, `_around`); a table's note that names lines
(program output inside a table) makes the file be read whole (its numbers are the window's).
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_left
from collections.abc import Generator, Iterator, Sequence
from itertools import islice, repeat
from operator import add
from typing import Any, BinaryIO

from profconv.parse import bytescan, context, native
from profconv.parse.context import contains_any
from profconv.parse.core import (
    BYTES_PAY_FROM,
    ProfileInfo,
    ProfileSet,
    _attach_context,
    _drop_inconsistent,
    _run,
    _Spans,
    blanked,
    finish,
    source_label,
)
from profconv.parse.dialect import Dialect, markers_except, registry, streaming
from profconv.parse.dialects import BUILTIN
from profconv.parse.model import DialectResult, Document, RawProfile, SweptRun, count
from profconv.parse.profile_infos import ProfileColumns, columns_of

WINDOW = 1 << 18  # bytes read at a time (a window grows while it holds no place to cut)
# bytes of a machine-written sweep's part where the parts go to a spool (--json, --csv), not to a table:
# fewer parts, less of each part's fixed cost (nvprof --csv, 20 MB: -7% of the CLI's instructions against
# 256 KiB parts; summary-only nvprof text's windows, 20 MB --json: -3.7%); a table holds each part's
# rendered text, so it keeps the sweep's own part size (the text's: a stream window's)
SPOOL_PART = 1 << 20
STREAM_FROM = 4 << 20  # bytes: smaller files are read whole
# bytes: a sweep of two profiles or more this long, machine-written (nvprof --csv, nvprof's summary-only
# text, nsys stats --format csv), is read as columns whatever its length (below, the readers take as long)
SWEEP_FROM = 4 << 10
SWEEP_HEAD = 1 << 16  # bytes of such a shorter sweep where two of its runs' starts are looked for
# bytes from which a short sweep read as columns pays for loading NumPy (~0.2 s of CPU in a CLI run) in a
# process that has not loaded it (where it has, every sweep is from SWEEP_FROM): the readers of an nvprof
# --csv sweep load it themselves from ~16 KiB, those of nsys's default reports take ~0.4 s a MB, those of
# nvprof's summary-only text ~0.03 s a MB (never worth it below STREAM_FROM)
SWEEP_PAYS_FROM = {"nvprof-csv": 16 << 10, "nvprof-text": STREAM_FROM, "nsys": 512 << 10}
MARGIN = 64  # lines a window holds past a cut: what the reader may look ahead of a line
HEAD = 1 << 16  # characters where dialects are looked for first (profconv.parse.core.HEAD)

# what another dialect's detection may find in a whole file and in none of its parts is declared by
# each dialect (Dialect.markers: substrings of which one is in any text its detect takes). A text is
# taken for another dialect's where one of those is in it or where that dialect's own detect finds
# itself in it; tests/test_parse_stream.py checks on every test file, cut at every line, that what
# detect finds in the whole is found so


def streamed(format: str | None, counts: dict[str, int] | None = None) -> Dialect | None:
    """The dialect a long log is read part by part as (None: read whole): the one the format names
    when it streams, else (no format) the first streaming dialect whose part start the file's head
    holds twice (`counts`: how many times each one's is there; not given: the one streaming dialect)."""
    got = streaming()
    if format is not None:
        return next((d for d in got if d.name == format), None)
    if counts is not None:
        return next((d for d in got if counts.get(d.name, 0) >= 2), None)
    return got[0] if len(got) == 1 else None


def options(name: str) -> dict:
    """How a long log of dialect `name` is read part by part (Dialect.extra['stream']: its window,
    whether its windows' tables are read from their bytes, the markers of other dialects that the
    stream leaves to their detect, the most bytes a window may grow to without a place to cut before
    the file is read whole: 'window_most')."""
    return registry()[name].extra.get("stream", {})


def other_markers(name: str = "nvprof") -> tuple[str, ...]:
    """The markers of every dialect but `name` (the one streamed), but those the streamed dialect
    leaves to that dialect's detect on each window (`options(name)['local_markers']`)."""
    local = options(name).get("local_markers", {})
    if not local:
        return markers_except(name)
    return tuple(dict.fromkeys(m for d in registry().values() if d.name != name
                               for m in d.markers if m not in local.get(d.name, ())))


# dialect -> the module that reads a machine-written sweep of it from its bytes (`parts`, `resume_state`),
# and the lines from a part's last profile end to the next part's first line
_SWEEPS = {"nvprof": "profconv.parse.dialects.nvprof.csv_sweep", "nsys": "profconv.parse.dialects.nsys_csv_sweep"}


class NotStreamable(Exception):
    """This input must be read whole (profconv.parse.parse) to be read right."""


def _other_dialect(text: str, name: str = "nvprof", head: bool = True) -> bool:
    """Whether a dialect other than `name` may be read in a file that holds `text` (its markers).
    `head`: the text is the file's head; else a dialect whose markers `name` leaves to its detect
    (`local_markers`) is detected on the lines that hold one of those, each with the two after it
    (what that detect looks at outside the file's head). A built-in dialect's detect takes no text
    without one of its markers (Dialect.markers: each detect reads so, and tests/test_parse_stream.py
    holds them to it), so where none is in the text it is not run; a plugin's is, and so is one whose
    markers `name` leaves to it."""
    if contains_any(text, other_markers(name)):
        return True
    local = options(name).get("local_markers", {})
    todo = [d for d in registry().values() if d.name != name and (d.name not in BUILTIN or d.name in local)]
    if not todo:
        return False
    doc = Document(lines=[], label="", text=text)
    return any(d.detect(doc if head or d.name not in local else Document(lines=[], label="", text=_around(text, local[d.name])))
               for d in todo)


def _detects_left(name: str) -> bool:
    """Whether `_other_dialect` runs some detect on a text without any of `other_markers(name)` (a
    plugin's, or one that `name` leaves its markers to)."""
    local = options(name).get("local_markers", {})
    return any(d.name != name and (d.name not in BUILTIN or d.name in local) for d in registry().values())


def _around(text: str, marks: tuple[str, ...]) -> str:
    """The lines of `text` that hold one of `marks`, each with the two lines after it (runs of them
    that overlap as one), each distinct run once: what a detect that looks at a line and the two
    after it finds in the text, it finds here."""
    marks = tuple(m for m in marks if not any(o != m and o in m for o in marks))  # '%' finds '(%)' too
    if len(marks) == 1 and len(marks[0]) == 1 and marks[0] != "\n":
        got = _one_run(text, marks[0])
        if got is not None:
            return got
    if text.isascii() and len(text) > 4096:
        return _around_at_once(text, marks)
    return _around_walk(text, marks)


def _one_run(text: str, mark: str) -> str | None:
    """_around of a text where every line that holds `mark` (one character) is one same line H with
    two empty lines after it, and no run of those three lines is right before another (a sweep's
    window, its rows blank: the '%' of each table's header): H and the two, once, found by a few
    counts over the text. None where the text is not so."""
    at = text.find(mark)
    if at < 0:
        return None
    a = text.rfind("\n", 0, at) + 1
    e = text.find("\n", at)
    if e < 0:
        return None
    head = text[a:e]
    run = head + "\n\n\n"
    # the runs counted are disjoint whole lines: where they hold every mark, no other line holds one
    n = text.count("\n" + run) + text.startswith(run)
    if text.count(mark) != n * head.count(mark) or run + head in text:
        return None
    return run


def _around_walk(text: str, marks: tuple[str, ...]) -> str:
    """_around's walk over the text (marks reduced)."""
    starts: set[int] = set()
    for m in marks:
        at = text.find(m)
        while at >= 0:
            starts.add(text.rfind("\n", 0, at) + 1)
            at = text.find("\n", at)
            at = text.find(m, at) if at >= 0 else -1
    runs: dict[str, None] = {}
    a0 = reach = -1
    for a in sorted(starts):
        e = a
        for _ in range(3):
            e = text.find("\n", e) + 1 or len(text)
        if a > reach:  # not within the run so far: that run is done
            if a0 >= 0:
                runs[text[a0:reach]] = None
            a0 = a
        reach = max(reach, e)
    if a0 >= 0:
        runs[text[a0:reach]] = None
    return "".join(run if run.endswith("\n") else run + "\n" for run in runs)


def _around_at_once(text: str, marks: tuple[str, ...]) -> str:
    """_around of an ASCII text, its lines' starts and ends found by NumPy over its bytes (a sweep's
    window: a '%' in each of its ~200 headers)."""
    import numpy as np

    b = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    nl = np.flatnonzero(b == 10)
    at = np.concatenate([np.flatnonzero(b == ord(m)) if len(m) == 1 else
                         np.array([k.start() for k in re.finditer(re.escape(m), text)], dtype=np.int64) for m in marks])
    if not len(at):
        return ""
    k = np.searchsorted(nl, at)  # the newline that ends each mark's line (len(nl): none)
    starts = np.unique(np.where(k > 0, nl[np.maximum(k - 1, 0)] + 1 if len(nl) else 0, 0))
    k = np.searchsorted(nl, starts) + 2  # the third newline from each start
    ends = np.where(k < len(nl), nl[np.minimum(k, len(nl) - 1)] + 1 if len(nl) else 0, len(text))
    reach = np.maximum.accumulate(ends)
    first = np.ones(len(starts), dtype=bool)
    first[1:] = starts[1:] > reach[:-1]  # a start past every run so far: a new run
    a0 = starts[first]
    e0 = reach[np.append(np.flatnonzero(first)[1:] - 1, len(starts) - 1)]
    size = int(e0[0] - a0[0])
    if (e0 - a0 == size).all() and len(a0) * size <= 1 << 20:  # runs of one length: one of them, or not
        each = b[a0[:, None] + np.arange(size)]
        if (each == each[0]).all():
            a0, e0 = a0[:1], e0[:1]
    runs = dict.fromkeys(text[x:y] for x, y in zip(a0.tolist(), e0.tolist()))
    return "".join(run if run.endswith("\n") else run + "\n" for run in runs)


def _shift(raw: list[RawProfile], d: int) -> None:
    """Window line numbers -> the file's, for the profiles and their blocks (their rows' are
    shifted where they are gathered: _rows and _drop_inconsistent take the shift)."""
    if not d:
        return
    for p in raw:
        if type(p) is SweptRun:  # its profiles' lines as columns
            p.starts = list(map(add, p.starts, repeat(d)))
            p.ends = list(map(add, p.ends, repeat(d)))
        else:
            p.line_start += d
            p.line_end += d
        if p.sweep is not None:  # its blocks' lines: its sweep's, shifted once for all of them
            p.sweep.shift = d
            continue
        for b in p.blocks:
            b.line_start += d
            b.line_end += d


_LINES = re.compile(r"\blines? ?(?:\(s\) )?\d|\(lines \d")  # 'line(s) 94, 95', 'line 94:', '(lines 93-99)'


def _blank_already(doc: Document, r: DialectResult) -> bool:
    """Whether the window's text is `blanked`'s already: every row read is a row of a table read
    from its bytes (blank in the pre-read text, and so in the lines) and none was read in bulk
    from the lines (blank in the lines only)."""
    pre = doc.pre
    if pre is None or r.bulk or not doc.text:
        return False
    tables = pre.tables
    return all((t := tables.get(a - 2)) is not None and not t.kept and t.rows == b - a + 1 for a, b in r.rows_read)


def _names_lines(raw: list[RawProfile]) -> bool:
    """Whether a table's note names lines (a window's numbers, which _shift does not rewrite). (A
    sweep's blocks not made have no note.)"""
    return any(_LINES.search(n) for p in raw if p.sweep is None for b in p.blocks for n in b.notes)


class _LineStarts:
    """Where a window's lines begin, found from its end (where a cut is): no split of the window
    into lines. `span(k)`: the byte range of line k (1-based, without its line end)."""

    def __init__(self, data: bytes, newlines: int) -> None:
        self.data = data
        self.newlines = newlines
        self.line, self.start, self.end = newlines + 1, len(data), len(data)  # the (empty) line after the last

    def span(self, k: int) -> tuple[int, int]:
        if k > self.line:  # a line after the ones walked: walk again from the end
            self.line, self.start, self.end = self.newlines + 1, len(self.data), len(self.data)
        while self.line > k:
            self.end = self.start - 1
            self.start = self.data.rfind(b"\n", 0, self.end) + 1
            self.line -= 1
        return self.start, self.end


def _prefixed(raw_line: bytes) -> bool:
    """A line that may carry a comment prefix (profconv.parse.text.normalize): not a place to cut,
    unless _prefix_kept_on says so."""
    s = raw_line.lstrip(b" \t")
    return s[:1] in (b"#", b">", b"*") or s[:2] == b"//"  # '*': inside a /* … */ block


def _prefix_kept_on(raw_line: bytes, raw_next: bytes) -> bool:
    """Whether a prefixed line is a place to cut all the same: the line after it carries the same
    comment prefix, so that normalize strips it from a window that begins there as from the whole
    file (a prefix goes where the same one is on the line before or after it: text._strip_prefixes);
    the legacy CUDA profiler's logs open with '# CUDA_PROFILE_LOG_VERSION' over '# CUDA_DEVICE'."""
    from profconv.parse.text import _PREFIX

    m, n = _PREFIX.match(raw_line.decode("latin-1")), _PREFIX.match(raw_next.decode("latin-1"))
    return m is not None and n is not None and m.group(1) == n.group(1)


class Stream:
    """The parts of one file (ProfileSet each, profiles and lines numbered as in the whole file).

    Iterate once. `warnings(notes)` gives the whole file's warnings from the parts' notes;
    `profiles` counts the profiles handed out."""

    def __init__(self, path: str, format: str | None = None, window: int | None = None, sweep_part: int = 0) -> None:
        self.path = path
        # bytes of a sweep's part (a CSV sweep's own size, the text's a window, where 0: SPOOL_PART for a spool)
        self.sweep_part = sweep_part
        self.label = source_label(path)
        self.format = format
        self.given = window  # else the dialect's window (options: 'window'), else WINDOW
        self.window = window or WINDOW
        self.damaged: list[int] = []  # lines of rows whose total is not calls x average
        self.profiles = 0  # profiles numbered in the context records (before damaged ones leave)
        self.numbered = 0  # profiles numbered in the rows (after)

    def warnings(self, part_notes: list[str]) -> list[str]:
        """The notes `parse` gives for the whole file, from the notes of its parts (in order)."""
        if not self.damaged:
            return list(part_notes)
        nums = ", ".join(str(n) for n in self.damaged[:10])
        return [f"line(s) {nums}: total is not calls x average (a damaged or mis-paired row): reported as "
                "unplaced, not used", *part_notes]

    def __iter__(self) -> Iterator[ProfileSet]:
        try:
            dialect = which(self.path, self.format)
        except OSError:
            raise NotStreamable("cannot be opened") from None  # parse says why
        if dialect is None:
            raise NotStreamable("a format or dialect the stream does not know")
        self.dialect = dialect
        self.whole_if = [m.encode() for m in dialect.whole_if]  # (a window holding one is read whole)
        self.window = self.given or options(dialect.name).get("window", WINDOW)
        resume = yield from self._swept()
        if resume is None:
            return
        try:
            f = open(self.path, "rb")
        except OSError:
            raise NotStreamable("cannot be opened") from None  # parse says why
        with f:
            f.seek(resume[0])
            yield from self._parts(f, *resume[1:])
        if not self.profiles:  # what parse says then depends on the whole file
            raise NotStreamable("no profile")

    def _swept(self) -> Generator[ProfileSet, None, tuple[int, int, tuple | None, int | None] | None]:
        """The parts of a machine-written `nvprof --csv` sweep (or nsys CSV summaries sweep), each read
        by one C pass over its bytes, no line split (profconv.parse.dialects.nvprof.csv_sweep: what the
        windows' parts hold), else those of summary-only nvprof text (_text_swept); returns None where
        they were the whole file, else where the windows go on from (the file's offset and line number
        there, the reader's state, the size of the first read: from the start where no part came). Not
        where a window is asked for (the parts are then the caller's)."""
        if self.given is not None or self.dialect.name not in _SWEEPS:
            return 0, 1, None, None
        import importlib

        sweep = importlib.import_module(_SWEEPS[self.dialect.name])
        resume: tuple[int, int, tuple | None, int | None] = (0, 1, None, None)
        for part, at, line in sweep.parts(self.path, self.label, self.sweep_part):
            if part is None:
                return resume if at or self.dialect.name != "nvprof" else (yield from self._text_swept())
            self.profiles = self.numbered = self.profiles + len(part.profiles)
            yield part
            resume = (at, line, sweep.resume_state(part), None)
        return None

    def _text_swept(self) -> Generator[ProfileSet, None, tuple[int, int, tuple | None, int | None] | None]:
        """_swept's parts of summary-only nvprof text (text_columns: each the part of a window that
        _parts would make, a window of sweep_part bytes for a spool, of the stream's own for a table);
        where it stops, the windows from there are the ones _parts would have made (the size its
        first read takes). A spool's bytes are the same whatever the windows (tests: a cut log read
        part by part is its whole parse)."""
        from profconv.parse.dialects.nvprof import text_columns

        resume: tuple[int, int, tuple | None, int | None] = (0, 1, None, None)
        for part, at, size in text_columns.parts(self.path, self.label, self.sweep_part or self.window):
            if part is None:
                return resume
            self.profiles = self.numbered = self.profiles + len(part.profiles)
            yield part
            resume = (at, part.profiles.cols["line_end"][-1] + 1, text_columns.resume_state(part), size)
        return None

    def _parts(self, f: BinaryIO, start: int = 1, state: tuple | None = None,
               first: int | None = None) -> Iterator[ProfileSet]:
        """The parts of the file from where `f` is, the file's line `start` (a profile start, after the
        first: `state` the dialect's reader state there), its first read `first` bytes (else a window's)."""
        carry: list[bytes] = []  # the file's bytes from the last cut on, not read yet (pieces: joined once)
        # start: the file's number of the first line of `carry`
        gap: list[str] = []  # lines after the last profile handed out, before `start`: their context is the next profile's
        # state: the dialect's reader state at `start`
        decoder = _Decoder()
        head = start == 1
        looked = False  # _head has looked at the first HEAD characters (another dialect's marks there)
        mark = self.dialect.part_start.encode()
        size = first or self.window
        while True:
            try:
                block = f.read(size)
            except OSError:
                raise NotStreamable("cannot be read") from None
            eof = len(block) < size
            data, tail = _whole_lines(carry, block, eof)
            carry, block = [], b""  # (the window holds their bytes: they go before it is parsed)
            if data is None:  # no line end in it yet: read on
                carry, size = [tail], 2 * size
                continue
            if head and (data[:2] in (b"\x1f\x8b", b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:65536]):
                raise NotStreamable("gzip, UTF-16 or binary")  # gzip, UTF-16, binary: read whole (and said so there)
            if looked and not eof and len(data) < STREAM_FROM and data.count(mark) < 2:
                carry, size = [data, tail], 2 * size  # what _head says again (its head looked at already)
                continue
            # an ASCII window whose tables are read from its bytes is decoded only where they are not
            lazy = not head and options(self.dialect.name).get("pre_read") and data.isascii()
            text = None if lazy else decoder.decode(data, head)
            if text is not None and head and not self._head(text, data, eof):
                carry, size = [data, tail], 2 * size  # the first window holds the head and two profile starts
                looked = True
                continue
            head = False
            got = self._window(data, text, eof, start, gap, state)
            if got is None:  # no place to cut in this window: read on (up to the dialect's most)
                if len(data) >= options(self.dialect.name).get("window_most", 1 << 62):
                    raise NotStreamable("a profile longer than the dialect reads part by part")
                carry, size = [data, tail], 2 * size
                continue
            part, c, at, gap, state = got
            carry = [] if eof else [data[at:], tail]
            data, text = b"", None  # (the window's bytes let go before its part is written out)
            if part is not None:
                yield part
            if eof:
                return
            start += c - 1
            size = self.window

    def _head(self, text: str, data: bytes, eof: bool) -> bool:
        """Whether the first window holds enough to go on (False: read more); NotStreamable where
        the head says the file must be read whole (a notebook, fewer than two profile starts,
        another dialect's markers)."""
        name, mark = self.dialect.name, self.dialect.part_start
        if self.format is None and len(text) >= HEAD and _other_dialect(text[:HEAD], name):
            # what the check below finds on any longer window too (the same first HEAD characters):
            # a big trace of another dialect is not read on to 4 MiB first
            raise NotStreamable("head: another dialect")
        if not eof and (len(text) < HEAD or text.count(mark) < 2) and len(data) < STREAM_FROM:
            return False
        if text.lstrip()[:1] == "{" or text.count(mark) < 2 or (
                self.format is None and (not self.dialect.detect(Document(lines=[], label=self.label, text=text))
                                         or _other_dialect(text[:HEAD], name))):
            raise NotStreamable("head: notebook, fewer than two profile starts, not this dialect or another")
        return True

    def _window(self, data: bytes, text: str | None, eof: bool, start: int, gap: list[str],
                state: tuple | None) -> tuple[ProfileSet | None, int, int, list[str], tuple | None] | None:
        """Parse one window (lines from the file's line `start`); the part before its cut, the cut
        (a window line number) and its byte offset in `data`, the next gap and reader state, or None
        when it cannot be cut."""
        name = self.dialect.name
        doc, r, newlines, end = self._read(data, text, state)
        # the window's text with its rows read blank (as detection and the run-context scan see a
        # file's), made only where the text as read holds another dialect's marker or a context
        # keyword, or where a detect must look (blanking rows takes text away, never adds a marker)
        if contains_any(doc.text, other_markers(name) + context.KEYWORDS) or _detects_left(name):
            doc.text = doc.text if _blank_already(doc, r) else blanked(doc, end)
        else:
            doc.text = ""
        if self.format is None and doc.text and _other_dialect(doc.text, name, head=start == 1):
            raise NotStreamable("another dialect")  # another dialect would be read over the whole file
        if len(r.lined_notes) < len(r.notes) or _names_lines(r.profiles) or any(m in data for m in self.whole_if):
            raise NotStreamable("dialect notes, a table's note that names lines, or what its dialect says holds "
                                "for the whole file (nvprof's Device line: Dialect.whole_if)")
        n = len(doc.lines)
        c, at = (n + 1, len(data)) if eof else _cut(r, data, newlines, n)
        if not c:
            return None
        keep = _before(r.profiles, c)
        lead = _lined_before(r, c, start - 1)
        if lead and not keep:
            raise NotStreamable("a note of lines before the window's first profile")  # (no part to say it)
        found = _found(doc.text, c, start, gap)
        # what follows the last profile handed out, as the context scan sees it: the next one's
        blank = _Spans(doc.skip)
        after = keep[-1].line_end + 1 if keep else 1
        next_gap = ([] if keep else gap) + ["" if k in blank else doc.lines[k - 1] for k in range(after, c)]
        next_state = r.resume_at(c)
        if not keep:
            return None, c, at, next_gap, next_state
        return self._part(keep, r, doc.lines, c, start - 1, found, lead), c, at, next_gap, next_state

    def _read(self, data: bytes, text: str | None, state: tuple | None) -> tuple[Document, DialectResult, int, str]:
        """A window parsed by the streamed dialect: its document, the dialect's result and the line
        ends its bytes hold. Its tables read from its bytes where the dialect asks for it (as a file
        read whole has them read: profconv.parse.bytescan), else (or where the text path could read
        them otherwise: bytescan.Reparse) from its text (None: an ASCII window not decoded yet)."""
        pre = _pre_read(data, self.dialect.name, ascii=text is None)  # (a window not decoded: ASCII)
        if pre is not None:
            try:
                return self._parse(data, pre.data.decode("ascii"), state, pre)
            except bytescan.Reparse:
                pass
        return self._parse(data, data.decode("ascii") if text is None else text, state, None)

    def _parse(self, data: bytes, text: str, state: tuple | None,
               pre: bytescan.PreRead | None) -> tuple[Document, DialectResult, int, str]:
        doc, end, newlines = _window_document(data, text, self.label)
        # where normalize changed nothing the lines are the pre-read text's own: each table where
        # find put it (PreRead.check would find so)
        doc.pre = pre if pre is not None and doc.text is text else bytescan.checked(pre, doc.lines)
        name = self.dialect.name
        if state:
            doc.state = {name: state}
        results: dict[str, DialectResult] = {}
        _run(name, doc, end, results, text=False)
        return doc, results[name], newlines, end

    def _part(self, keep: list[RawProfile], r: DialectResult, lines: list[str], c: int, d: int,
              found: list[context.ContextLine], lead: list[str]) -> ProfileSet:
        """The profiles before the cut `c` as a part (window line numbers plus `d`: the file's), `lead`
        its dialect's notes (ProfileSet.lead)."""
        unplaced = [(k + d, lines[k - 1]) for k in sorted(set(r.unplaced)) if k < c]
        _shift(keep, d)
        infos = _attach_context(keep, "", first=self.profiles + 1, found=found)
        self.profiles += len(infos)
        damaged = _drop_inconsistent(keep, shift=d)
        if damaged:
            self.damaged.extend(damaged)
            unplaced = sorted(set(unplaced) | {(k, lines[k - 1 - d]) for k in damaged})
            keep = [p for p in keep if not p.empty()]
        part = finish(keep, infos, self.label, unplaced, list(lead), first=self.numbered + 1, shift=d)
        part.lead = len(lead)
        self.numbered += count(keep)
        return part


def _lined_before(r: DialectResult, c: int, d: int) -> list[str]:
    """The window's notes of lines before its cut `c` (each of lines it holds whole: r.lined_notes), their
    line numbers made the file's (plus `d`), in order; NotStreamable where one's lines cross the cut."""
    out = []
    for k, (a, b) in sorted(r.lined_notes.items()):
        if a >= c:
            continue  # (the next window's, read again from the cut)
        prefix = f"lines {a}-{b}: "
        note = r.notes[k]
        if b >= c or not note.startswith(prefix):
            raise NotStreamable("a note of lines across the window's cut")
        out.append(f"lines {a + d}-{b + d}: {note[len(prefix):]}")
    return out


def whole_notes(parts: list[tuple[list[str], int]], damaged: list[str]) -> list[str]:
    """The whole file's notes from its parts' (each part's notes and its `lead`, in order) and the
    stream's note of damaged rows (Stream.warnings([])): every part's lead notes, that note, the rest."""
    return [n for notes, lead in parts for n in notes[:lead]] + damaged + [n for notes, lead in parts for n in notes[lead:]]


class _Decoder:
    """A file's windows decoded as the whole file is: UTF-8 (a BOM at its start), or Latin-1 where
    a byte is not UTF-8 -- NotStreamable where that comes after a window of non-ASCII UTF-8 (the
    windows already handed out would read differently)."""

    def __init__(self) -> None:
        self.utf8 = False  # a window held non-ASCII UTF-8
        self.latin1 = False

    def decode(self, data: bytes, head: bool) -> str:
        if self.latin1:
            return data.decode("latin-1")
        try:
            text = data.decode("utf-8-sig" if head else "utf-8")
        except UnicodeDecodeError:
            if self.utf8:
                raise NotStreamable("UTF-8, then a byte that is not") from None
            self.latin1 = True  # the whole file is read as Latin-1; the windows so far were ASCII
            return data.decode("latin-1")
        self.utf8 = self.utf8 or not data.isascii()
        return text


def _pre_read(data: bytes, name: str, ascii: bool = False) -> bytescan.PreRead | None:
    """A window's tables found on its bytes and read from them, where dialect `name` asks for it
    (options: 'pre_read', True for bytescan.find's, or the dialect's own finder, data -> PreRead) and
    the window is ASCII (its text then the bytes with those tables' rows blank, decoded alike).
    `ascii`: the caller knows it is (not looked at again)."""
    how = options(name).get("pre_read")
    if not how or not (ascii or data.isascii()):
        return None
    if callable(how):  # the dialect's own finder (ncu's pages: ncu_raw.find)
        pre = how(data)
    else:  # the head's rows were looked at by _head; every window's tables read alike (the last one's are fewer)
        pre = bytescan.find(data, BYTES_PAY_FROM, keep=0, batch_rows=1)
    return pre if pre is not None and pre.dialect == name else None


def _whole_lines(carry: list[bytes], block: bytes, eof: bool) -> tuple[bytes | None, bytes]:
    """Of the pieces of `carry`, then block: (the bytes up to the last line end, the rest); (None,
    all) where none is in them yet. (The block's last line end found first: one copy of its bytes,
    the pieces joined once, not copied into one carry each time a window grows.)"""
    if eof:
        return b"".join((*carry, block)), b""
    nl = block.rfind(b"\n") + 1
    if nl:
        return b"".join((*carry, memoryview(block)[:nl])), block[nl:]
    data = b"".join((*carry, block))
    nl = data.rfind(b"\n") + 1
    if nl == 0:
        return None, data
    return data[:nl], data[nl:]


def _window_document(data: bytes, text: str, label: str) -> tuple[Document, str, int]:
    """A window's text as the dialect reads it, how it ends, and how many line ends its bytes hold
    (NotStreamable where normalizing changed how its lines map onto the file's)."""
    from profconv.parse.text import normalize

    decoded = text
    text = normalize(text)
    lines = text.split("\n")
    end = ""
    if lines and lines[-1] == "":
        lines.pop()
        end = "\n"
    n = len(lines)
    # the window's '\n' are its bytes' (UTF-8 and Latin-1 alike): where normalize changed nothing
    # its lines are the file's; else they are counted
    newlines = n - (0 if end else 1) if text is decoded else data.count(b"\n")
    if n != newlines + (0 if end else 1):
        raise NotStreamable("lines do not map onto the file")  # lines do not map one to one onto the file's
    return Document(lines=lines, label=label, text=text), end, newlines


def _cut(r: DialectResult, data: bytes, newlines: int, n: int) -> tuple[int, int]:
    """Where a window is cut: the last profile start (not its first) where a fresh parse may begin,
    MARGIN lines before the window's end, not comment-prefixed (window line number, byte offset);
    (0, 0) where there is none."""
    starts = _LineStarts(data, newlines)
    for ls in islice(_starts_backwards(r.profiles), max(count(r.profiles) - 1, 0)):  # (not the first)
        if ls + MARGIN > n or not r.resumes(ls):
            continue
        after = starts.span(ls + 1)
        a, b = starts.span(ls)
        if not _prefixed(data[a:b]) or _prefix_kept_on(data[a:b], data[after[0] : after[1]]):
            return ls, a
    return 0, 0


def _starts_backwards(raw: list[RawProfile]) -> Iterator[int]:
    """The profiles' start lines, last first (a SweptRun's from its column)."""
    for p in reversed(raw):
        if type(p) is SweptRun:
            yield from reversed(p.starts)
        else:
            yield p.line_start


def _before(raw: list[RawProfile], c: int) -> list[RawProfile]:
    """The profiles that start before line c (of a SweptRun that c cuts: its profiles before c, a run)."""
    keep = [p for p in raw if p.line_start < c]
    last = keep[-1] if keep else None
    if type(last) is SweptRun and last.starts[-1] >= c:
        cut = bisect_left(last.starts, c)
        keep[-1] = last.part(0, cut)
    return keep


def _found(text: str, c: int, start: int, gap: list[str]) -> list[context.ContextLine]:
    """The run context before the cut (the window's text: plain summary rows blank), the gap's
    before it, in the file's line numbers."""
    d = start - 1
    found = [item for item in context.scan(text) if item.line < c]
    for item in found:
        item.line += d
    if gap:
        before = context.scan("\n".join(gap) + "\n")
        for item in before:
            item.line += start - len(gap) - 1
        found = before + found
    return found


def read_long(path: str, format: str | None = None) -> ProfileSet | None:
    """A long log read part by part, its parts joined into one ProfileSet: what reading it whole
    gives (profconv.parse.parse), without holding its text or more than a window of its lines; a
    machine-written sweep (see _columns) from SWEEP_FROM bytes on, read as columns. None where it is
    not such a log (too short, another dialect, …: read it whole)."""
    import os

    from profconv.nogc import paused
    from profconv.parse.table import Rows

    if path == "-" or not streaming():
        return None
    try:
        size = os.path.getsize(path) if os.path.isfile(path) else -1
        # (a shorter one: two starts in its first SWEEP_HEAD bytes, not a look through a trace of 3 MB)
        dialect = which(path, format, 0 if size >= STREAM_FROM else SWEEP_HEAD) if size >= SWEEP_FROM else None
    except OSError:
        return None
    if dialect is None:
        return None
    whole = _columns(path, format, dialect.name, size)
    if whole is not None or size < STREAM_FROM:  # (a shorter log the stream does not read: whole)
        return whole
    stream = Stream(path, format)
    got: list[ProfileSet] = []
    with paused():
        try:
            got.extend(stream)
        except NotStreamable:
            return None
    table_notes: dict[tuple[int, str], list[str]] = {}
    for p in got:
        table_notes.update(p.table_notes)
    rows = Rows.concat([p.rows for p in got])
    damaged = stream.warnings([])
    whole = ProfileSet(None, ProfileColumns.concat([p.profiles for p in got]), stream.label,
                       [u for p in got for u in p.unplaced], whole_notes([(p.notes, p.lead) for p in got], damaged),
                       table_notes, rows=rows)
    whole.lead = sum(p.lead for p in got) + len(damaged)
    return whole


def _columns(path: str, format: str | None, dialect: str, size: int) -> ProfileSet | None:
    """A machine-written sweep of `dialect` (nvprof --csv, nvprof's summary-only text, nsys stats
    --format csv) read whole as columns by one C pass, else None. A short one only where that pays
    (SWEEP_PAYS_FROM)."""
    import sys

    def pays(kind: str) -> bool:
        return "numpy" in sys.modules or size >= SWEEP_PAYS_FROM[kind]

    label = source_label(path)
    if format in (None, "nvprof"):
        if pays("nvprof-csv") and (size >= STREAM_FROM or _holds(path, _NVPROF_CSV_HEADER)):
            from profconv.parse.dialects.nvprof import csv_sweep

            whole = csv_sweep.read(path, label)
            if whole is not None:
                return whole
        if dialect == "nvprof" and pays("nvprof-text"):
            from profconv.parse.dialects.nvprof import text_columns

            return text_columns.read(path, label)
    if format in (None, "nsys") and dialect == "nsys" and pays("nsys"):
        from profconv.parse.dialects import nsys_csv_sweep

        return nsys_csv_sweep.read(path, label)
    return None


# an nvprof --csv summary's header (profconv.parse.dialects.nvprof.csv_batch.HEADER: not imported for it,
# ~0.1 s in a CLI run that reads no nvprof log)
_NVPROF_CSV_HEADER = b'"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"'


def _holds(path: str, needle: bytes) -> bool:
    """Whether the (short) file holds `needle`."""
    with open(path, "rb") as f:
        return needle in f.read()


def starts_twice(path: str, format: str | None) -> bool:
    """Whether the file's first STREAM_FROM bytes hold two profile starts of a streaming dialect:
    where they do not, the stream would read on to about there and then give up (a single long
    trace; another dialect's file), so the file is read whole at once. (Either way the result is
    the same.) A file that cannot be read: True (the stream says why)."""
    try:
        return which(path, format) is not None
    except OSError:
        return True


def which(path: str, format: str | None, within: int = 0) -> Dialect | None:
    """The dialect the file is read part by part as (streamed: the format's, else the first whose
    profile start its first STREAM_FROM bytes, or `within` bytes where given, hold twice), or None.
    OSError where it cannot be read."""
    got = [streamed(format)] if format is not None else streaming()
    marks = {d.name: d.part_start.encode() for d in got if d is not None}
    if not marks:
        return None
    counts = dict.fromkeys(marks, 0)
    scan = native.load("_bytescan")
    # a window at a time into one buffer (no 4 MiB buffer left on the heap, no copy a window), after
    # the last TAIL bytes of the window before it (a mark cut by the window's start counted once)
    buf = bytearray(TAIL + WINDOW)
    with open(path, "rb") as f:
        tail, left = 0, within or max(STREAM_FROM, WINDOW)  # the stream reads a window first
        while left > 0 and max(counts.values()) < 2:
            size = f.readinto(memoryview(buf)[TAIL : TAIL + min(WINDOW, left)])
            if not size:
                break
            for name, mark in marks.items():
                lo = TAIL - min(tail, len(mark) - 1)
                counts[name] += _marks(buf, mark, 2 - counts[name], scan, lo, TAIL + size)
            tail, left = min(TAIL, size), left - size
            buf[TAIL - tail : TAIL] = buf[TAIL + size - tail : TAIL + size]
    return streamed(format, counts) if format is None else (streamed(format) if max(counts.values()) >= 2 else None)


TAIL = 64  # bytes of a window searched again with the next one (a part start is shorter)


def _marks(data: Any, mark: bytes, most: int, scan: Any, lo: int, hi: int) -> int:
    """data[lo:hi].count(mark), counted up to `most`: by the C search where built (a 4 MiB look at
    the head of a 20 MB trace: 0.3 ms, not 1.3)."""
    if scan is None:
        return bytes(data[lo:hi]).count(mark)
    n, at = 0, scan.find(data, mark, lo, hi)
    while at >= 0 and n < most:
        n += 1
        at = scan.find(data, mark, at + len(mark), hi)
    return n


def parts(path: str, format: str | None = None, *, checked: bool = False) -> Iterator[ProfileSet]:
    """The profiles of a long nvprof or nsys log, a part at a time (ProfileSet each; numbered as in
    the whole file): what `profconv.parse.parse(path)` gives, without holding the whole file or all
    of its rows. A file that must be read whole is (one ProfileSet). The whole file's notes are every
    part's first `lead` notes (a report not read, noted part by part), then the other notes of each
    (`whole_notes`); a note that concerns the whole file (a damaged row's) is the last part's last lead
    note. Where a window's parse finds what only the whole-file reader reads right after parts were
    given (an nsys table's note naming other lines than its own), the last part is the rest of the
    whole file's parse: its profiles after
    those given, and its unplaced lines and notes that the parts given did not hold. `checked`:
    the caller has seen `_streamable_file` say so (the file is not looked through again). A long log
    written on Windows or gzipped is read as its plain twin (profconv.parse.unix_twin)."""
    from profconv.parse.core import noted
    from profconv.parse.unix_twin import unix_twin

    if checked:  # (the caller's path: its twin already, where it has one)
        yield from _parts(path, format, checked)
        return
    with unix_twin(path) as plain:
        first = True
        for part in _parts(plain, format, checked):
            yield noted(part, plain) if first and plain != path else part
            first = False


def _parts(path: str, format: str | None, checked: bool) -> Iterator[ProfileSet]:
    from profconv.parse.core import parse, parse_whole

    if not checked and not _streamable_file(path, format):
        yield parse(path, format)
        return
    stream = Stream(path, format)
    buffered: ProfileSet | None = None
    given: list[tuple[tuple[int, int], list, list[str]]] = []  # the parts given: seen(profiles), unplaced, notes
    try:
        for part in stream:
            if buffered is not None:
                yield buffered
                given.append((seen(buffered.profiles), buffered.unplaced, buffered.notes))
            buffered = part
    except NotStreamable:
        yield rest(parse_whole(path, format), given)
        return
    assert buffered is not None
    if stream.damaged:  # (a whole read says it after the dialects' notes: a lead note of the last part)
        buffered.notes[buffered.lead : buffered.lead] = stream.warnings([])[:1]
        buffered.lead += 1
    yield buffered


def seen(profiles: Sequence[ProfileInfo]) -> tuple[int, int]:
    """How many profiles and a hash of their fields: what `rest` checks the parts given against.
    The profiles are not held (~370 bytes a ProfileInfo object: a 20 MB nvprof --csv sweep's
    51,814 took the terminal table's peak from 40 to 58 MiB); their fields are read as columns."""
    if not profiles:
        return 0, 0
    cols = columns_of(profiles).columns()
    h = hash(tuple(tuple(map(tuple, col)) if name == "op_times_s" else tuple(col) for name, col in cols.items()))
    return len(profiles), h


def rest(whole: ProfileSet, given: list[tuple[tuple[int, int], list, list[str]]]) -> ProfileSet:
    """The whole file's parse after the parts `given` (`seen` of their profiles, their unplaced
    lines and notes): its later profiles with their rows and table notes, the unplaced lines and
    notes not given."""
    from profconv.parse.table import Rows

    at = 0
    for (n, digest), _, _ in given:
        if seen(whole.profiles[at : at + n]) != (n, digest):
            raise NotStreamable("the parts given are not the whole file's first profiles")  # cannot be
        at += n
    if not given:
        return whole
    keep = whole.profiles[at:]
    numbers = {i.profile for i in keep}
    rows = whole.rows.where(p in numbers for p in whole.rows.col("profile")) if keep else Rows()
    table_notes = {k: v for k, v in whole.table_notes.items() if k[0] in numbers}
    said = [n for g in given for n in g[2]]
    part = ProfileSet(None, keep, whole.source, _left(whole.unplaced, [u for g in given for u in g[1]]),
                      _left(whole.notes, said), table_notes, rows=rows)
    part.lead = len(_left(whole.notes[: whole.lead], said))
    return part


def _left(items: list, given: list) -> list:
    """`items` but those in `given` (each as many times as given), in their order."""
    from collections import Counter

    held = Counter(given)
    out = []
    for x in items:
        if held[x]:
            held[x] -= 1
        else:
            out.append(x)
    return out


def _streamable_file(path: str, format: str | None) -> bool:
    """A file worth reading part by part in which nothing asks for the whole (checked by one pass)."""
    import os

    if path == "-" or not streaming():
        return False
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < STREAM_FROM:
            return False
        dialect = which(path, format)
        if dialect is None:
            return False
        whole = [m.encode() for m in dialect.whole_if]
        with open(path, "rb") as f:
            utf8 = codecs.getincrementaldecoder("utf-8")()
            prev = b""
            while block := f.read(WINDOW):
                if any(m in prev + block for m in whole):  # nvprof gives every profile the file's last device
                    return False
                if format is None and _other_dialect((prev + block).decode("latin-1"), dialect.name, head=not prev):
                    return False
                if not block.isascii():
                    utf8.decode(block)  # UnicodeDecodeError: the file is read as Latin-1, whole
                again = _overlap(prev + block, bool(options(dialect.name).get("local_markers")))
                if again is None:
                    return False
                prev = again
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _overlap(data: bytes, lines: bool) -> bytes | None:
    """What of the bytes looked at is looked at again with the next block: their last 64 bytes (a
    marker cut by the block), or where another dialect's detect is run on each block in place of
    some of its markers (`local_markers`) their last three lines whole (what that detect looks at
    around a line); None where those are longer than a window (the file is read whole)."""
    if not lines:
        return data[-64:]
    at = len(data)
    for _ in range(3):
        at = data.rfind(b"\n", 0, at)
        if at < 0:
            break
    got = data[at + 1 :]
    return got if len(got) <= WINDOW else None
