"""Read profiler text into a ProfileSet: detect dialects, parse, attach run context, gather the rows.

The core is plain Python (no pandas): rows come out as `Rows` columns; the DataFrame is built only
when a caller asks for `ProfileSet.frame`.
"""

from __future__ import annotations

import math
import os
import re
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping
from itertools import accumulate, chain, islice, repeat
from operator import add, attrgetter, itemgetter, le, sub
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profconv.errors import InputError, NoProfileFound, StrictModeError
from profconv.io import gunzip
from profconv.nogc import paused
from profconv.parse import bytescan, context, engine, native, unix_twin
from profconv.parse.colviews import Chain, Const, View, Window, holds_views, positions
from profconv.parse.dialect import dialect_list, registry
from profconv.parse.model import Block, DialectResult, Document, RawProfile, Span, Sweep, SweptRun, expanded, walk
from profconv.parse.names import short_name, strip_correlation
from profconv.parse.profile_infos import ProfileColumns, columns_of
from profconv.parse.schema import (
    COLUMNS,
    ROW_FIELDS,
    ProfileInfo,
)
from profconv.parse.shares import Notable, ranked, share_rows
from profconv.parse.table import FLOAT_COLUMNS, Rows, missing_value
from profconv.parse.text import decode, normalize, utf16_codec

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd


class ProfileSet:
    """Everything parsed from one input: canonical rows, per-profile context, what was not placed.

    `rows` holds the canonical rows as plain columns (profconv.parse.table.Rows); `frame` is the
    same rows as the documented DataFrame (profconv/parse/schema.py), built on first use. Either
    may be given; assigning one replaces the other."""

    def __init__(self, frame: pd.DataFrame | None = None, profiles: Sequence[ProfileInfo] | None = None,
                 source: str = "", unplaced: list[tuple[int, str]] | None = None, notes: list[str] | None = None,
                 table_notes: Mapping[tuple[int, str], list[str]] | None = None, *, rows: Rows | None = None) -> None:
        if frame is None and rows is None:
            rows = Rows()
        self._frame = frame
        self._rows = rows
        # what surrounds each profile (a list, or ProfileColumns: the same records held as columns)
        self.profiles: Sequence[ProfileInfo] = profiles if profiles is not None else []
        self.source = source
        self.unplaced: list[tuple[int, str]] = unplaced if unplaced is not None else []
        self.notes: list[str] = notes if notes is not None else []  # every warning, table notes included
        # how many of `notes`, at their front, the whole file's read says before every other note (the
        # dialects' notes, a damaged row's): a long log's parts' notes in the whole file's order are every
        # part's first `lead`, then the rest of each (profconv.parse.stream.whole_notes)
        self.lead = 0
        # (profile, section) -> notes said next to that table (a dict, or an nsys sweep's GroupNotes: read-only)
        self.table_notes: Mapping[tuple[int, str], list[str]] = table_notes if table_notes is not None else {}

    def __repr__(self) -> str:
        return (f"ProfileSet(source={self.source!r}, profiles={len(self.profiles)}, rows={len(self.rows)}, "
                f"unplaced={len(self.unplaced)})")

    @property
    def rows(self) -> Rows:
        if self._rows is None:
            assert self._frame is not None
            self._rows = Rows.from_frame(self._frame)
        return self._rows

    @rows.setter
    def rows(self, value: Rows) -> None:
        self._rows, self._frame = value, None

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            assert self._rows is not None
            self._frame = self._rows.to_frame()
        return self._frame

    @frame.setter
    def frame(self, value: pd.DataFrame) -> None:
        self._frame, self._rows = value, None

    def general_notes(self) -> list[str]:
        """The notes that belong to no one table (the others are shown next to their table)."""
        own = {table_note(p, s, n) for (p, s), items in self.table_notes.items() for n in items}
        return [n for n in self.notes if n not in own]

    def profile(self, number: int) -> ProfileSet:
        """Only profile `number` (1-based), for --profile."""
        numbers = columns_of(self.profiles).column("profile")
        if number not in numbers:
            raise InputError(f"{self.source}: no profile {number} (it holds {len(self.profiles)})")
        sub = _profile_rows(self.rows, number)
        infos = [self.profiles[k] for k, p in enumerate(numbers) if p == number]
        notes = {k: v for k, v in self.table_notes.items() if k[0] == number}
        return ProfileSet(None, infos, self.source, self.unplaced, self.notes, notes, rows=sub)

    def rethreshold(self, threshold: float) -> None:
        """Mark the smallest set of rows reaching `threshold` of each section's time (in_top)."""
        self.rows = share_rows(self.rows, threshold)


def _profile_rows(rows: Rows, number: int) -> Rows:
    """The rows of profile `number`: where the rows are views (big ncu pages) and the profile's follow
    one another, a window of each column (colviews.Window: --profile 2 of two 10 MB pages took 295
    MiB as lists), else a copy of them."""
    prof = rows.col("profile")
    if holds_views(rows.cols.values()):
        at = positions(prof, (number,))
        if isinstance(at, range) and at.step == 1:
            a, b = at.start, at.stop
            return Rows({k: Window(v, a, b) if isinstance(v, View) else v[a:b] for k, v in rows.cols.items()}, b - a)
    return rows.where(p == number for p in prof)


def table_note(profile: int, section: str, note: str) -> str:
    return f"profile {profile}, {section} table, {note}"


def source_label(path: str) -> str:
    """How rows name their input: '<stdin>' for '-', else the path; bytes of a file name that are
    not UTF-8 (which Python keeps as lone surrogates) are written as backslash escapes (`\\xff`),
    so the label can go into UTF-8 output (--json, --csv) at all. A plain twin read in a file's
    place (profconv.parse.unix_twin) has that file's label."""
    if path == "-":
        return "<stdin>"
    if path in unix_twin.LABELS:
        return unix_twin.LABELS[path]
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path


def read_text(path: str) -> tuple[str, str]:
    """The text of a file, '-' (stdin) or a .gz file; one clear error for anything unusable."""
    data, label = read_bytes(path)
    return decode(data), label


def read_bytes(path: str) -> tuple[bytes, str]:
    """The bytes of a file, '-' (stdin) or a .gz file (read_text's checks, not decoded yet)."""
    label = source_label(path)
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            p = Path(path)
            if p.is_dir():
                raise InputError(f"{path}: is a directory, not a profiler log")
            if p.is_char_device() or p.is_block_device() or p.is_socket():
                raise InputError(f"{path}: a device or socket, not a file (pipe it in with '-' if you mean to)")
            data = _read_fifo(path) if p.is_fifo() else p.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gunzip(data, path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a profiler log") from None
    if not data or data.isspace():
        raise InputError(f"{label}: empty input, nothing to parse")
    if b"\x00" in data[:65536] and not _utf16(data):
        raise InputError(
            f"{label}: binary data, not profiler text output "
            "(for .nsys-rep/.ncu-rep files, export text with nsys stats / ncu --csv first)"
        )
    return data, label


FIFO_WAIT = 10.0  # seconds a named pipe may stay without a writer (PROFCONV_FIFO_WAIT)


def _read_fifo(path: str) -> bytes:
    """A named pipe's bytes (fifo_blocks). Where its spooling found no writer (profconv.parse.unix_twin:
    the inputs' pipes are spooled before the first is read), that error is said here, at its turn."""
    failed = unix_twin.FIFO_FAILED.pop(path, None)
    if failed is not None:
        raise failed
    return b"".join(fifo_blocks(path))


def fifo_blocks(path: str, block: int = 1 << 20) -> Iterator[bytes]:
    """A named pipe's bytes, a block at a time. Opened without waiting for a writer (open() would
    block forever where no program writes to it), then read to its end once a writer has written
    its first bytes; where none does within FIFO_WAIT seconds, one line says so ('<(cmd)' has its
    writer already)."""
    import fcntl
    import select
    import time

    wait = float(os.environ.get("PROFCONV_FIFO_WAIT", FIFO_WAIT))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        end = time.monotonic() + wait
        first = b""
        while not first:
            left = end - time.monotonic()
            if left <= 0:
                raise InputError(f"{path}: a named pipe that no program wrote to in {wait:g} s (nothing to read)")
            if select.select([fd], [], [], min(left, 0.2))[0]:
                first = os.read(fd, 1 << 16)  # b'': no writer (yet, or any more): wait on
                if not first:
                    time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        yield first
        with os.fdopen(fd, "rb", closefd=False) as f:
            while more := f.read(block):
                yield more
    finally:
        os.close(fd)


def _utf16(data: bytes) -> bool:
    """Whether NULs in `data` are those of text (UTF-16: text.utf16_codec, or text with NULs in one byte lane
    only), not binary data's."""
    return decode(data[:4096]).count("\x00") == 0 and (utf16_codec(data) is not None or data[:4096:2].count(0) == 0
                                                      or data[1:4096:2].count(0) == 0)


def parse(path: str, format: str | None = None, strict: bool = False) -> ProfileSet:
    """Parse a profiler log (path, '-' for stdin, .gz accepted) into a ProfileSet. A long log of
    many profiles (an nvprof sweep) is read part by part, as the CLI reads it (profconv.parse.stream):
    the same result without holding its whole text; `profconv.parse.parts(path)` gives the parts.
    A long log written on Windows or gzipped is read as its plain twin (profconv.parse.unix_twin)."""
    with unix_twin.unix_twin(path) as plain:
        if not strict:
            from profconv.parse.stream import read_long

            got = read_long(plain, format)
            if got is not None:
                return noted(got, plain) if plain != path else got
        got = parse_whole(plain, format, strict)
        return noted(got, plain) if plain != path else got


def noted(ps: ProfileSet, plain: str) -> ProfileSet:
    """`ps` with what reading the file its twin `plain` stands for found to say of it first among its
    notes (a .gz cut short: profconv.parse.unix_twin.input_notes)."""
    notes = unix_twin.input_notes(plain)
    if notes:
        ps.notes[0:0] = notes
        ps.lead += len(notes)
    return ps


def parse_whole(path: str, format: str | None = None, strict: bool = False) -> ProfileSet:
    """`parse`, the input read whole (what a long log read part by part is held to)."""
    from profconv.parse.dialects import ncu_raw

    # ncu's raw pages: their launches read from the file mapped in memory, never held whole
    pre = ncu_raw.find_file(path) if format in (None, "ncu") and _rereadable(path) else None
    data, label = (b"", source_label(path)) if pre is not None else read_bytes(path)
    # big machine-written tables read as columns from the bytes, their rows never decoded into lines
    if pre is None and format in (None, "nsys", "nvprof"):
        pre = bytescan.find(data, BYTES_PAY_FROM)
    if pre is None and format in (None, "ncu"):
        pre = ncu_raw.find(data, keep=not _rereadable(path))  # a file's bytes read again where needed
    if pre is not None:
        del data  # held by `pre` until its tables are read (then let go: bytescan.PreRead.release)
        if _rereadable(path):
            pre.detach()  # or now, where they are read already: a Reparse reads the file again
        try:
            return _parse([decode(pre.data)], label, format, strict, pre)
        except bytescan.Reparse:  # the text path could read them otherwise: it reads the whole text
            data = pre.source or read_bytes(path)[0]
        del pre
    box = [decode(data)]  # only _parse holds the text: it can let it go once the rows are out
    del data
    return _parse(box, label, format, strict)


def _rereadable(path: str) -> bool:
    """A regular file (not stdin, a pipe or a device): its bytes can be read again."""
    return path != "-" and os.path.isfile(path)


def parse_text(text: str, label: str = "<text>", format: str | None = None, strict: bool = False) -> ProfileSet:
    """Parse profiler text (any dialect, or the one `format` names) into a ProfileSet."""
    if not text.isascii():  # a lone surrogate (from JSON's \\ud800, or surrogateescape) cannot be written out
        from profconv.parse.text import whole_text

        text = whole_text(text)
    return _parse([text], label, format, strict)


# a table this big pays for loading pyarrow in a process that has not (nsys.COLUMNS_PAY_FROM)
BYTES_PAY_FROM = 32 << 20
BIG_TEXT = 1 << 20  # characters: above this a dialect's parse runs without the whole text held
HEAD = 1 << 16  # characters of the first lines where dialects are looked for first


def _run(name: str, doc: Document, end: str, results: dict[str, DialectResult], text: bool = True) -> None:
    """Parse `doc` with one dialect into `results`. `text` False: `doc.text` is left as it was
    (the rows read not blank in it: `blanked` makes that text where it is needed)."""
    lines = doc.lines
    big = len(doc.text) > BIG_TEXT
    if big:  # a dialect parses the lines: the whole text need not be held meanwhile
        doc.text = ""
    results[name] = r = registry()[name].parse(doc)
    if not end:  # the input ends mid-line: its last line is a row or marker cut short, or booked
        engine.cut_last_line(r, lines)
    if doc.pre is not None:
        if doc.pre.unused():
            raise bytescan.Reparse  # a table found on the bytes that the dialect did not read as such
        doc.pre.release()
    # rows read in bulk belong to that table alone: their lines are emptied (the dialect may have
    # done so already, to free them as it read), and later detection and the run-context scan pass
    # over what is left (line numbers stay)
    for a, b in r.bulk:
        lines[a - 1 : b] = [""] * (b - a + 1)
    doc.skip.extend(r.rows_read)
    if big or (text and (r.bulk or r.rows_read)):  # (big: the text was let go, made again)
        doc.text = blanked(doc, end)


def blanked(doc: Document, end: str) -> str:
    """The text later detection and the run-context scan look at: the lines, rows read in bulk
    blank (in the lines already) and plain summary rows (`doc.skip`) blank (kept in the lines)."""
    view = doc.lines
    if doc.skip:
        view = list(view)
        for a, b in doc.skip:
            view[a - 1 : b] = [""] * (b - a + 1)
    return "\n".join(view) + end


def _parse(box: list[str], label: str, format: str | None, strict: bool,
           pre: bytescan.PreRead | None = None) -> ProfileSet:
    # the parse allocates a few objects per input line and frees almost none of them until it ends:
    # the cyclic collector would walk all of them again and again (~10% of a big parse) for no
    # garbage; it runs once the parse is over (profconv/nogc.py)
    with paused():
        return _parse_text(box, label, format, strict, pre)


def _parse_text(box: list[str], label: str, format: str | None, strict: bool,
                pre: bytescan.PreRead | None = None) -> ProfileSet:
    doc, end = document(box.pop(), label)
    doc.pre = bytescan.checked(pre, doc.lines)  # tables read from the bytes: their rows are blank lines
    results = _read(doc, end, format)
    raw = _in_line_order([r.profiles for r in results.values()])
    unplaced = _unplaced(results, doc.lines)
    notes = [note for r in results.values() for note in r.notes]
    if not raw:
        _refuse(label, format, unplaced, doc.text)
    if strict and unplaced:
        nums = ", ".join(str(n) for n, _ in unplaced[:10])
        raise StrictModeError(f"{label}: {len(unplaced)} line(s) look like table data but could not be placed (lines {nums})")
    infos = _attach_context(raw, doc.text)
    damaged = _drop_inconsistent(raw)
    if damaged:
        lines = doc.lines
        unplaced = sorted(set(unplaced) | {(n, lines[n - 1]) for n in damaged})
        notes.append(damaged_note(damaged))
        raw = [p for p in raw if not p.empty()]
        if not raw:
            raise NoProfileFound(f"{label}: found profiler tables but no row could be read: line(s) "
                                 f"{', '.join(str(n) for n in damaged[:10])} are not consistent (total is not calls x average)")
    del doc, results  # the rows are out: let the input go before they are gathered
    lead = len(notes)
    ps = finish(raw, infos, label, unplaced, notes)
    ps.lead = lead
    return ps


def _in_line_order(lists: list[list[RawProfile]]) -> list[RawProfile]:
    """The dialects' profiles in the order of their start lines (a SweptRun, several profiles, is
    one entry where one dialect read profiles: its profiles one by one where several did)."""
    lists = [got for got in lists if got]
    if len(lists) > 1:
        lists = list(map(expanded, lists))
    return sorted((p for got in lists for p in got), key=_LINE_START)


def document(text: str, label: str) -> tuple[Document, str]:
    """The input as the dialects read it (normalized, its lines) and how it ends ('\n' or '')."""
    text = normalize(text)
    lines = text.split("\n")
    end = ""
    if lines and lines[-1] == "":
        lines.pop()
        end = "\n"
    return Document(lines=lines, label=label, text=text), end


def _read(doc: Document, end: str, format: str | None) -> dict[str, DialectResult]:
    """Each dialect found in the document (or the one `format` names) run over it, in the
    registry's order: dialects whose markers show in the first lines parse first (a marker there
    is a marker in the text); the others look at what is left once the rows read in bulk are out."""
    dialects = registry()
    if format is not None and format not in dialects:
        raise InputError(f"unknown format {format!r}: choose one of {', '.join(dialects)}")
    results: dict[str, DialectResult] = {}
    if format is not None:
        _run(format, doc, end, results)
        return results
    cut = doc.text.rfind("\n", 0, HEAD) + 1 if len(doc.text) > HEAD else len(doc.text)
    head = Document(lines=[], label=doc.label, text=doc.text[:cut])
    early = [name for name, d in dialects.items() if d.detect(head)]
    del head
    bytescan.expect_first(doc.pre, early, doc.text.count("\n", 0, cut))
    for name in early:
        _run(name, doc, end, results)
    for name, d in dialects.items():
        if name not in results and d.detect(doc):
            _run(name, doc, end, results)
    return {name: results[name] for name in dialects if name in results}  # the registry's order


def _unplaced(results: dict[str, DialectResult], lines: list[str]) -> list[tuple[int, str]]:
    """A line one dialect could not place is unplaced unless another dialect placed it."""
    unplaced_set: set[int] = set()
    for name, r in results.items():
        others = set().union(*(o.claimed_lines() for k, o in results.items() if k != name))
        spans = _Spans([ab for k, o in results.items() if k != name for ab in (*o.bulk, *o.rows_read)])
        unplaced_set.update(n for n in r.unplaced if n not in others and n not in spans)
    return [(n, lines[n - 1]) for n in sorted(unplaced_set)]


def _refuse(label: str, format: str | None, unplaced: list[tuple[int, str]], text: str) -> None:
    """No profile was read: why, in one line (NoProfileFound)."""
    if unplaced:
        nums = ", ".join(str(n) for n, _ in unplaced[:10])
        raise NoProfileFound(f"{label}: found profiler tables but no row could be read: line(s) {nums} "
                             "hold values that are not valid numbers, or columns that do not fit the header")
    what = f"no {format} profile" if format else f"no profiler output ({dialect_list()})"
    raise NoProfileFound(_no_profile_instead(label, text) or f"{label}: {what} found")


def damaged_note(damaged: list[int]) -> str:
    return (f"line(s) {', '.join(str(n) for n in damaged[:10])}: total is not calls x average "
            "(a damaged or mis-paired row): reported as unplaced, not used")


def finish(raw: list[RawProfile], infos: Sequence[ProfileInfo], label: str, unplaced: list[tuple[int, str]],
           notes: list[str], first: int = 1, shift: int = 0) -> ProfileSet:
    """The ProfileSet of profiles read (numbered from `first`, line numbers plus `shift`): their
    rows gathered and ranked, the notes next to their tables (added to `notes` too)."""
    table_notes = _block_notes(raw, first=first)
    rows, notable = ranked(_rows(raw, first=first, shift=shift))
    _share_notes(rows, table_notes, notable)
    table_notes = _in_block_order(table_notes, raw, first)
    for (number, section), items in table_notes.items():
        notes.extend(table_note(number, section, n) for n in items)
    return ProfileSet(None, infos, label, unplaced, notes, table_notes, rows=rows)


# `nsys analyze` (expert-system rules) prints its findings with the rule's name in parentheses
_NSYS_RULES = re.compile(r"^\s*\*\* .*\((cuda_memcpy_async|cuda_memcpy_sync|cuda_memset_sync|cuda_api_sync|"
                         r"gpu_gaps|gpu_time_util|dx12_mem_ops)\):", re.M)


class _Spans:
    """Line ranges claimed as ranges (rows read in bulk): `n in spans` by one bisection."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        spans = sorted(spans)
        self.starts = [a for a, _ in spans]
        self.reach: list[int] = []  # the furthest end of the spans up to each one (they may overlap)
        top = 0
        for _, b in spans:
            top = max(top, b)
            self.reach.append(top)

    def __contains__(self, n: int) -> bool:
        j = bisect_right(self.starts, n) - 1
        return j >= 0 and self.reach[j] >= n


def _no_profile_instead(label: str, text: str) -> str | None:
    """What a file without a profile holds instead, when that is something a user can act on."""
    rules = list(dict.fromkeys(m.group(1) for m in _NSYS_RULES.finditer(text)))
    if rules:
        return (f"{label}: nsys expert-system rules output ({', '.join(rules)}) lists single slow calls, "
                "not a time summary: nothing to rank (`nsys stats` prints the summary tables)")
    # the profiler ran but saved its results to a file instead of printing them
    for rx, tool, how in _SAVED_REPORT:
        if m := rx.search(text):
            path = m.group(1)
            return (f"{label}: no profiler output found: {tool} saved its results in {path} instead of printing "
                    f"them (`{how.format(path)}` prints them as text)")
    # Nsight Compute ran but printed no result: what it said why
    if said := _ncu_said(text):
        return f"{label}: no profiler output ({dialect_list()}) found: Nsight Compute printed no results ({said})"
    # another profiler's tables: say which, and what to run instead
    native_ = {d.foreign for d in registry().values()}
    for name, rx, what, hint in _FOREIGN:
        if name not in native_ and rx.search(text):
            return (f"{label}: no profiler output ({dialect_list()}) found: the tables are {what}, which profconv "
                    f"does not read ({hint})")
    return None


_NCU_SAID = re.compile(r"^==(ERROR|WARNING)== (.+?)\s*$", re.M)
_NCU_GENERIC = ("The application returned an error code", "An error occurred while trying to profile",
                "Profiling kernels launched by child processes")
_NCU_NOTHING = ("No kernels were profiled", "No metrics to collect found in sections")


def _ncu_said(text: str) -> str | None:
    """Why an ncu run printed no results: its most specific ==ERROR== line, else its own words
    that nothing was profiled or collected (quoted, cut at 150 characters)."""
    if "==ERROR==" not in text and "==WARNING==" not in text:
        return None
    errors, nothing = [], []
    for m in _NCU_SAID.finditer(text):
        what = m.group(2).removeprefix("Error: ")
        if m.group(1) == "ERROR":
            errors.append(what)
        elif what.startswith(_NCU_NOTHING):
            nothing.append(what)
    said = [e for e in errors if not e.startswith(_NCU_GENERIC)] or errors or nothing
    if not said:
        return None
    first = said[0] if len(said[0]) <= 150 else said[0][:149] + "…"
    return f'"{first}"'


_UNDER_NSYS = "run the program under `nsys profile --stats=true` or `ncu` for a profile profconv reads"
# (name, what tells it, what it is, what to do): a dialect that reads one names it as its `foreign`
_FOREIGN = [
    ("pytorch", re.compile(r"^.*\bSelf CPU %.*# of Calls", re.M), "PyTorch profiler output (key_averages().table())",
     _UNDER_NSYS),
    ("rocprof", re.compile(r'^"?Name"?,"?Calls"?,"?TotalDurationNs"?,"?AverageNs"?,"?Percentage"?', re.M),
     "rocprof's statistics (AMD GPUs)", "profconv reads NVIDIA profilers' output"),
    ("cuda.jl", re.compile(r"^(?:Host|Device)-side activity: ", re.M), "CUDA.jl's profiler output (CUDA.@profile)",
     "run Julia under `nsys profile --stats=true` for a profile profconv reads"),
    ("gprof", re.compile(r"^Flat profile:\s*\n(?:.*\n){0,3}.*Each sample counts as", re.M), "gprof's CPU profile",
     _UNDER_NSYS),
    ("cprofile", re.compile(r"^\s*ncalls\s+tottime\s+percall\s+cumtime\s+percall\s", re.M), "Python cProfile's CPU profile",
     _UNDER_NSYS),
    ("timeroutputs", re.compile(r"^\s*Tot / % measured:", re.M), "Julia TimerOutputs timings", _UNDER_NSYS),
]


_SAVED_REPORT = [
    # at the start of a line, as ncu prints it (README prose quoting `==PROF== Report: x.ncu-rep` is no report)
    (re.compile(r"^[ \t]*==PROF== Report: (\S+\.ncu-rep)", re.M), "Nsight Compute", "ncu --import {}"),
    # nsys 2020-2021 without --stats: 'Saved report file to "/tmp/….qdrep"', then where it was moved
    (re.compile(r'^Report file moved to "([^"\n]+\.(?:nsys-rep|qdrep))"', re.M), "Nsight Systems", "nsys stats {}"),
    (re.compile(r'^Saved report file to "([^"\n]+\.(?:nsys-rep|qdrep))"', re.M), "Nsight Systems", "nsys stats {}"),
    (re.compile(r"^[ \t]*(\S+\.(?:nsys-rep|qdrep))[ \t]*$", re.M), "Nsight Systems", "nsys stats {}"),
    (re.compile(r"^[ \t]*==\d+== Generated result file: (\S+)", re.M), "nvprof", "nvprof -i {}"),
]


Resolution = tuple[float, float]  # the printed step of a table's Time and Avg cells, in ns (0: not known)


def _inconsistent(t: float, c: float | None, a: float, acc: bool, res: Resolution = (0.0, 0.0)) -> bool:
    """Whether a printed total is not calls x average within print precision (two significant
    digits of the average but at least a whole ns, whole microseconds for OpenACC, 1% of the total,
    and where the table says its cells' printed step (nvprof --csv in seconds: 0.000012 s is a
    microsecond's step) half a step of the Time plus calls x half a step of the Avg)."""
    if c is None or t != t or a != a or c != c:
        return False
    quantum = 10.0 ** (math.floor(math.log10(a)) - 1) if a > 0 else 1.0
    quantum = max(quantum, 1000.0 if acc else 1.0)  # whole microseconds (OpenACC), whole ns
    printed = (res[0] + c * res[1]) / 2 * (1 + 1e-9)
    return abs(t - c * a) > max(0.01 * t, c * quantum, printed)


def _any_inconsistent(totals, calls, avgs, acc: bool, res: Resolution = (0.0, 0.0)) -> bool:
    """Whether some row may be inconsistent: a total within 1% of calls x average never is (the
    cheap test first; _inconsistent decides the others)."""
    for t, c, a in zip(totals, calls, avgs):
        if c is not None and abs(t - c * a) <= 0.01 * t:
            continue
        if _inconsistent(float(t), None if c is None else float(c), float(a), acc, res):
            return True
    return False


def _drop_inconsistent(raw: list[RawProfile], shift: int = 0) -> list[int]:
    """Rows whose printed total is not calls x average cannot all be right (a row damaged in
    transit, numbers of two PDF rows paired): they leave their table; their lines are returned
    (plus `shift`: a stream window's rows carry the window's line numbers)."""
    out: list[int] = []
    plausible = getattr(native.load("_kahan"), "plausible", None)  # the first test in C, where built
    for prof in raw:
        if prof.sweep is not None:
            continue  # a sweep's blocks not made: every row checked where its batch was read (Span.checked)
        acc = prof.tool == "nvhpc-acc"
        for blk in prof.blocks:
            sp = blk.span
            if sp is not None:
                if sp.checked or _consistent_span(blk, sp, plausible, acc):
                    continue
                blk.table, blk.span = _span_table(blk, shift), None  # a row may be dropped: columns of its own
            tb = blk.table
            if (plausible is not None and not blk.rows and tb is not None and tb.n and "avg_ns" in tb.cols
                    and plausible(tb.cols.get("total_ns"), tb.cols.get("calls"), tb.cols["avg_ns"])):
                continue  # every row's total within 1% of calls x average: none is inconsistent
            if blk.rows:
                _drop_rows(blk, acc, shift, out)
            elif blk.table is not None and len(blk.table) and blk.table.has("avg_ns"):
                _drop_table_rows(blk, acc, shift, out)
    return sorted(out)


def _consistent_span(blk: Block, span: Span, plausible: Any, acc: bool) -> bool:
    """Whether no row of a batch range can be inconsistent: checked where the batch was read, no
    Avg column (as a table without one), or every total within print precision of calls x average
    (_kahan.plausible's 1% first, where built)."""
    if span.checked or not span.rows.has("avg_ns"):
        return True
    tot, calls, avg = span.col("total_ns"), span.col("calls"), span.col("avg_ns")
    if plausible is not None and plausible(tot, calls, avg):
        return True
    return not _any_inconsistent(tot, calls, avg, acc, blk.resolution)


def _span_table(blk: Block, shift: int = 0) -> Rows:
    """A batch range's rows as columns of the block's own (section and line numbers added: a
    stream window's, as a reader's table holds them, less `shift`; the block's own have it)."""
    span = blk.span
    assert span is not None
    cols: dict[str, Any] = {name: span.col(name) for name in span.rows.cols}
    cols["section"] = [blk.section] * span.n
    cols["line_start"] = cols["line_end"] = range(blk.line_start - shift, blk.line_start - shift + span.n)
    return Rows.trusted(cols, span.n)


def _drop_rows(blk: Block, acc: bool, shift: int, out: list[int]) -> None:
    rows, res = blk.rows, blk.resolution
    if not _any_inconsistent([r.total_ns for r in rows], [r.calls for r in rows], [r.avg_ns for r in rows], acc, res):
        return
    bad = [_inconsistent(r.total_ns, r.calls, r.avg_ns, acc, res) for r in rows]
    if any(bad):
        out.extend(r.line_start + shift for r, b in zip(rows, bad) if b)
        blk.rows = [r for r, b in zip(rows, bad) if not b]


def _drop_table_rows(blk: Block, acc: bool, shift: int, out: list[int]) -> None:
    tb, res = blk.table, blk.resolution
    assert tb is not None
    if not _any_inconsistent(tb.col("total_ns"), tb.col("calls"), tb.col("avg_ns"), acc, res):
        return
    bad = [_inconsistent(float(t), None if c is None else float(c), float(a), acc, res)
           for t, c, a in zip(tb.col("total_ns"), tb.col("calls"), tb.col("avg_ns"))]
    if any(bad):
        out.extend(int(x) + shift for x, b in zip(tb.col("line_start"), bad) if b)
        blk.table = tb.where(not b for b in bad)


def _block_notes(raw: list[RawProfile], first: int = 1) -> dict[tuple[int, str], list[str]]:
    """What a reader must know next to a table, from its own rows: Time(%) that does not add up,
    numbers whose decimal mark is unknown (and whatever the dialect noted). Profiles are numbered
    from `first`. Only tables with a note have a key (`_in_block_order` puts keys in their tables'
    order). A batch's ranges (a sweep's thousands of small tables) are summed together by NumPy
    first: a range whose sum is clearly near 100% has no note; the others are summed as here."""
    out: dict[tuple[int, str], list[str]] = {}
    todo: list[tuple[int, Block]] = []
    ranges: dict[int, _Ranges] = {}
    state: list[Any] = [None, None]  # the batch the last range was of, and its _Ranges
    for number, prof, span in walk(raw, first):
        if span is not None:  # a sweep's profiles whose blocks were not made: their ranges at once
            sweep, t0, t1 = span
            if sweep.rows.has("time_pct"):
                ranges.setdefault(id(sweep.rows), _Ranges(sweep.rows)).add_sweep(sweep, t0, t1, number)
                continue
            for i, t in enumerate(range(t0, t1)):
                _blocks_to_sum(sweep.made(t), number + i, todo, ranges, state)
            continue
        _blocks_to_sum(prof.blocks, number, todo, ranges, state)
    for r in ranges.values():
        todo.extend(r.not_clear())
    for number, blk in todo:
        _notes_of(blk, number, out)
    return out


def _blocks_to_sum(blocks: list[Block], number: int, todo: list[tuple[int, Block]], ranges: dict[int, _Ranges],
                   state: list[Any]) -> None:
    """A profile's blocks to _block_notes: a batch's ranges to its _Ranges (summed together), the
    others to `todo` (summed one by one); `state`: the batch of the last range, and its _Ranges."""
    for blk in blocks:
        sp = blk.span
        if sp is None or blk.notes or blk.rows_left_out or not sp.n:
            todo.append((number, blk))
            continue
        if sp.rows is not state[0]:  # (a sweep's ranges come batch after batch)
            state[0] = batch = sp.rows
            state[1] = ranges.setdefault(id(batch), _Ranges(sp.rows)) if batch.has("time_pct") else None
        if state[1] is None:
            todo.append((number, blk))
        else:
            state[1].add(number, blk, sp)


_CLEAR = 1e-6  # how far inside the Time(%) tolerance NumPy's sum of a range must be to need no exact sum


class _Ranges:
    """The ranges of one batch that _block_notes sums together."""

    def __init__(self, rows: Rows) -> None:
        self.col = rows.col("time_pct")
        # (profile number, block), or (None, (sweep, profiles, first number)) for a sweep's blocks
        self.members: list[tuple[Any, Any]] = []
        self.firsts: list[int] = []
        self.sizes: list[int] = []

    def add(self, number: int, blk: Block, sp: Span) -> None:
        self.members.append((number, blk))
        self.firsts.append(sp.first)
        self.sizes.append(sp.n)

    def add_sweep(self, sweep: Sweep, t0: int, t1: int, number: int) -> None:
        """The blocks of profiles t0 .. t1 - 1 of a sweep (numbered from `number`), not made."""
        lo, hi = sweep.lo[t0], sweep.lo[t1]
        self.members.extend(repeat((None, (sweep, t0, number)), hi - lo))
        self.firsts.extend(sweep.first[lo:hi])
        self.sizes.extend(sweep.size[lo:hi])

    def not_clear(self) -> list[tuple[int, Block]]:
        """The ranges whose Time(%) do not clearly add up to 100% (NumPy sums all of them, in any
        order; those left are summed in order as Python sums them)."""
        import numpy as np

        firsts = np.array(self.firsts, dtype=np.int64)
        sizes = np.array(self.sizes, dtype=np.int64)
        bounds = np.empty(2 * len(firsts), dtype=np.int64)
        bounds[0::2], bounds[1::2] = firsts, firsts + sizes
        sums = np.add.reduceat(np.append(np.asarray(self.col, dtype=np.float64), 0.0), bounds)[0::2]
        clear = np.abs(sums - 100.0) < np.maximum(1.5, 0.01 * sizes) - _CLEAR  # False for NaN
        return [_member(self.members[i], self.firsts[i]) for i in np.flatnonzero(~clear).tolist()]


def _member(m: tuple[Any, Any], row: int) -> tuple[int, Block]:
    """A range's (profile number, block): a sweep's block (the one whose rows begin at `row`) made."""
    number, blk = m
    if number is not None:
        return number, blk
    sweep, t0, number = blk
    at = bisect_right(sweep.first, row, sweep.lo[t0]) - 1  # the block's place in the sweep
    k = bisect_right(sweep.lo, at, t0) - 1 - t0  # its profile's place
    made = sweep.made(t0 + k)
    return number + k, made[at - sweep.lo[t0 + k]]


def _notes_of(blk: Block, number: int, out: dict[tuple[int, str], list[str]]) -> None:
    """One table's notes (see _block_notes), added to `out` under its key."""
    key = (number, blk.section or "?")
    if blk.notes:
        out.setdefault(key, []).extend(f"lines {blk.line_start}-{blk.line_end}: {n}" for n in blk.notes)
    if blk.rows_left_out:
        return  # its printed Time(%) include the rows counted in another table (said in its note)
    if blk.rows:
        pcts = [r.time_pct for r in blk.rows if r.time_pct == r.time_pct]
        if blk.table is not None and blk.table.has("time_pct"):  # rows read in bulk
            pcts.extend(p for p in blk.table.col("time_pct") if p == p)
        total = sum(pcts)
        count = len(pcts)
    elif (col := _pct_column(blk)) is not None:
        total = sum(col)  # NaN in it ('<0.01' rows) makes the sum NaN: then without them
        count = len(col)
        if total != total:
            pcts = [p for p in col if p == p]
            total, count = sum(pcts), len(pcts)
    else:
        return
    if count and abs(total - 100.0) > max(1.5, 0.01 * count):
        out.setdefault(key, []).append(f"lines {blk.line_start}-{blk.line_end}: Time(%) adds up to {total:.2f}%, "
                                       "not 100% (rows missing or cut)")


def _in_block_order(notes: dict[tuple[int, str], list[str]], raw: list[RawProfile],
                    first: int) -> dict[tuple[int, str], list[str]]:
    """The keys that hold notes, in the order of their profile's first table of that section (where
    none is: after them, as they came)."""
    entries = list(walk(raw, first))
    numbers = [e[0] for e in entries]
    end = first + (entries[-1][0] - first + (entries[-1][2][2] - entries[-1][2][1] if entries[-1][2] else 1)
                   if entries else 0)

    def place(key: tuple[int, str]) -> tuple[int, int]:
        if first <= key[0] < end:
            number, prof, span = entries[bisect_right(numbers, key[0]) - 1]
            sections: Sequence[str | None]
            if span is None:
                sections = [blk.section for blk in prof.blocks]
            else:  # a sweep's profile: its blocks' sections from the sweep's columns
                sweep, t = span[0], span[1] + key[0] - number
                sections = sweep.section[sweep.lo[t] : sweep.lo[t + 1]]
            for i, sec in enumerate(sections):
                if (sec or "?") == key[1]:
                    return key[0] - first, i
        return end - first, 0

    keys = sorted((k for k, v in notes.items() if v), key=place)
    return {k: notes[k] for k in keys}


def _pct_column(blk: Block) -> Any:
    """The Time(%) column of a block's table or batch range (None: it has none)."""
    if blk.table is not None:
        return blk.table.col("time_pct") if blk.table.has("time_pct") else None
    if blk.span is not None and blk.span.rows.has("time_pct"):
        return blk.span.col("time_pct")
    return None


def _share_notes(rows: Rows, out: dict[tuple[int, str], list[str]], notable: Notable | None = None) -> None:
    """Notes on the ranked sections: ranked by Time(%) because the times contradict it, or merged
    from several source tables (added to `out`). `notable`: the sections that may need one, as
    shares.ranked gives them (else found here)."""
    # only the sections worth a note: ranked by Time(%), or merged from several tables
    basis, profile, section = rows.col("share_basis"), rows.col("profile"), rows.col("section")
    if notable is None:
        if basis.count(None) == len(basis):  # nothing ranked (a trace): no loop over its rows
            return
        groups: dict[tuple[int, str], list[int]] = {}
        for i, b in enumerate(basis):
            if b is not None:
                groups.setdefault((profile[i], section[i]), []).append(i)
        notable = [(number, sec, members) for (number, sec), members in groups.items()]
    if not notable:
        return
    table, pct = rows.col("table"), rows.col("time_pct")
    lo, hi = rows.col("line_start"), rows.col("line_end")
    total = rows.col("total_ns")
    for number, sec, members in notable:
        tables = list(dict.fromkeys(table[i] for i in members if table[i] is not None))
        by_pct = any(basis[i] == "time_pct" for i in members)
        if len(tables) <= 1 and not by_pct:
            continue
        key = (int(number), str(sec))
        where = f"lines {min(lo[i] for i in members)}-{max(hi[i] for i in members)}"
        if basis[members[0]] == "time_pct" and any(total[i] == total[i] for i in members):  # no times: nothing contradicts
            out.setdefault(key, []).append(
                f"{where}: the Time column contradicts the printed Time(%) (mislabelled units?): ranked by the printed Time(%)")
        elif len(tables) > 1 and any(pct[i] == pct[i] for i in members):
            starts = ", ".join(str(int(t)) for t in sorted(tables))
            out.setdefault(key, []).append(
                f"{where}: merged from {len(tables)} source tables (starting at lines {starts}); each printed Time(%) "
                "is relative to its own table, Share is of their summed time")
            for t in _inconsistent_tables(rows, members):
                out[key].append(f"the table at line {t}: its Time column contradicts its printed Time(%)")


def _inconsistent_tables(rows: Rows, members: list[int]) -> list[int]:
    """shares.inconsistent_tables on plain columns: source tables whose Time column contradicts
    their own printed Time(%)."""
    from profconv.parse.shares import PCT_TOLERANCE

    table, pct, tot = rows.col("table"), rows.col("time_pct"), rows.col("total_ns")
    by_table: dict[int, list[int]] = {}
    for i in members:
        by_table.setdefault(0 if table[i] is None else table[i], []).append(i)
    bad = []
    for t, tm in by_table.items():
        both = [i for i in tm if pct[i] == pct[i] and tot[i] == tot[i]]
        total = sum(tot[i] for i in both)
        psum = sum(pct[i] for i in both)
        if len(both) < 2 or total <= 0 or psum < 50.0:
            continue
        if any(abs(pct[i] - 100.0 * tot[i] / total * (psum / 100.0)) > PCT_TOLERANCE for i in both):
            bad.append(int(t))
    return bad


_TAIL = ("profile", "tool", "table")
_ROW_SET = frozenset(ROW_FIELDS)
SMALL_TABLE = 1000  # rows: a table this small joins the gathered columns; a bigger one stays a part
_FIELDS = attrgetter(*ROW_FIELDS)


def _doubles(values: list[Any]) -> bool:
    """Every one an array of C doubles (array('d'))."""
    try:
        return set(map(_TYPECODE, values)) == {"d"} and set(map(type, values)) == {array}
    except AttributeError:  # a list or tuple of values
        return False


_TYPECODE = attrgetter("typecode")
_LINE_START, _LINE_END = attrgetter("line_start"), attrgetter("line_end")


def _gathered(pieces: list[tuple[Any, int, int, str, int]]) -> Rows:
    """One set of columns from blocks' columns (see _rows): one C-level chain per column."""
    colsets = [p[0] for p in pieces]
    ns = [p[1] for p in pieces]
    uniform = all(map(colsets[0].keys().__eq__, map(dict.keys, colsets)))  # the same columns in every block
    names = [*colsets[0], *_TAIL] if uniform else list(dict.fromkeys(chain(colsets[0], _TAIL, *colsets[1:])))
    cols: dict[str, Any] = {}
    for name in names:
        if name == "profile":
            cols[name] = list(chain.from_iterable(map(repeat, [p[2] for p in pieces], ns)))
        elif name == "tool":
            cols[name] = list(chain.from_iterable(map(repeat, [p[3] for p in pieces], ns)))
        elif name == "table":
            cols[name] = list(chain.from_iterable(map(repeat, [p[4] for p in pieces], ns)))
        elif uniform:
            values = list(map(itemgetter(name), colsets))
            if name in FLOAT_COLUMNS and _doubles(values):  # the bulk reader's arrays: joined, no float made
                cols[name] = array("d", b"".join(values))
            else:
                cols[name] = list(chain.from_iterable(values))
        else:
            miss = missing_value(name)
            out: list[Any] = []
            for c, n in zip(colsets, ns):
                got = c.get(name)
                out.extend(got if got is not None else repeat(miss, n))
            cols[name] = out
    return Rows(cols, sum(ns))


def _joined(parts: list[Rows]) -> Rows:
    """Rows.concat of this reading's own parts, a big first part's column lists extended in place
    (a trace and the summary of it: no copy of the trace's columns)."""
    parts = [p for p in parts if p.n]
    head = parts[0] if parts else None
    if head is None or len(parts) == 1 or head.n < SMALL_TABLE:
        return Rows.concat(parts)
    if sum(holds_views(p.cols.values()) for p in parts) > 1:
        return _chained(parts)
    views = holds_views(head.cols.values())  # a page's columns kept as views: missing ones are views too
    own = [_extensible(name, c, parts[1:]) for name, c in head.cols.items()]
    if None in own or len(set(map(id, own))) != len(own):
        return Rows.concat(parts)  # one list behind two columns, numbers that no array holds: copied
    head.cols = dict(zip(head.cols, own))
    cols: dict[str, Any] = {}
    for name in [c for c in COLUMNS if any(c in p.cols for p in parts)]:
        col = head.cols.get(name)
        if col is None:
            col = Const(missing_value(name), head.n) if views else [missing_value(name)] * head.n
        for p in parts[1:]:
            got = p.cols.get(name)
            col.extend(got if got is not None else repeat(missing_value(name), p.n))  # type: ignore[attr-defined]
        cols[name] = col
    return Rows.trusted(cols, sum(p.n for p in parts))


def _chained(parts: list[Rows]) -> Rows:
    """The parts as one, where several hold views (big ncu pages of one file): each column a Chain of
    the parts' own columns (a missing one a Const), no list of the pages' rows (extending the first
    page's views would hold each row of the others as a list item: 11 bytes a byte for two pages)."""
    cols: dict[str, Any] = {}
    for name in [c for c in COLUMNS if any(c in p.cols for p in parts)]:
        cols[name] = Chain([p.cols[name] if name in p.cols else Const(missing_value(name), p.n) for p in parts])
    return Rows.trusted(cols, sum(p.n for p in parts))


def _extensible(name: str, col: Any, rest: list[Rows]) -> Any:
    """A big part's column that the other parts' values can extend in place: a list; an array of
    doubles (a float column: the others' floats, NaN for missing, fit it); a range of line numbers
    as an array of integers, where every other part has whole line numbers. None for anything else
    (the parts are copied into lists)."""
    if type(col) is list or isinstance(col, View):
        return col
    if type(col) is array and col.typecode == "d" and name in FLOAT_COLUMNS and all(
            not p.has(name) or _doubles([p.col(name)]) or all(type(x) is float for x in p.col(name)) for p in rest):
        return col
    if type(col) is array and col.typecode == "q" and name in ("line_start", "line_end") and all(
            p.has(name) and all(type(x) is int for x in p.col(name)) for p in rest):
        return col
    if type(col) is range and name in ("line_start", "line_end") and all(
            p.has(name) and all(type(x) is int for x in p.col(name)) for p in rest):
        np = sys.modules.get("numpy")
        if np is None:
            return array("q", col)
        out = array("q")
        out.frombytes(np.arange(col.start, col.stop, col.step, dtype=np.int64).tobytes())
        return out
    return None


def _rows(raw: list[RawProfile], first: int = 1, shift: int = 0) -> Rows:
    """All rows of all profiles in file order: row blocks and bulk (trace) columns gathered into
    one set of columns, short names filled once per distinct name (its [correlation id] aside).
    Each block's Row objects and small tables are let go as their values are taken; blocks that are
    consecutive ranges of one batch (Span) become one part, the batch's columns sliced once.
    Profiles are numbered from `first`; `shift` is added to every row's line numbers (a stream
    window's lines -> the file's)."""
    got = _Gathering(shift)
    for number, prof, span in walk(raw, first):
        if span is not None:  # a sweep's profiles whose blocks were not made: their ranges at once
            got.add_sweep(*span, prof.tool, number)
            continue
        for blk in prof.blocks:
            got.add(blk, number, prof.tool)
    got.flush()
    for p in got.parts:
        if id(p) not in got.coded and p.n:
            _short_names(p, got.by_base)
    rows = _joined(got.parts)
    if rows.n and shift:
        _shift_lines(rows, shift)
    return rows


class _Gathering:
    """The parts _rows joins, in file order: runs of small blocks' columns gathered into one set of
    columns (a column is there when some block has it, missing in the others' rows, in the order
    blocks first have them), runs of a batch's ranges, big tables as they are."""

    def __init__(self, shift: int = 0) -> None:
        self.shift = shift  # what _rows adds to every row's line numbers (blocks' line_start have it already)
        self.parts: list[Rows] = []
        self.pieces: list[tuple[Any, int, int, str, int]] = []  # (columns, rows, profile, tool, table)
        self.spans: _SpanRun | None = None  # consecutive ranges of one batch
        self.by_base: dict[str, str] = {}  # short names by base name (names may differ only by their [correlation id])
        self.coded: set[int] = set()  # the parts whose short names are filled already

    def flush(self) -> None:
        if self.pieces:
            self.parts.append(_gathered(self.pieces))
            self.pieces = []
        if self.spans is not None:
            part = _spanned(self.spans, self.by_base, self.shift)
            self.parts.append(part)
            if part.has("short_name"):
                self.coded.add(id(part))
            self.spans = None

    def _run_for(self, rows: Rows, first: int, text: Any) -> _SpanRun:
        """The run of ranges a range of `rows` from row `first` on joins (a new one where it does not follow)."""
        run = self.spans
        if self.pieces or (run is not None and (run.rows is not rows or run.hi != first)):
            self.flush()
            run = None
        if run is None:
            run = self.spans = _SpanRun(rows, first, text)
        return run

    def add_sweep(self, sweep: Sweep, t0: int, t1: int, tool: str, number: int) -> None:
        """The blocks of profiles t0 .. t1 - 1 of a sweep, not made (numbered from `number`)."""
        lo, hi = sweep.lo[t0], sweep.lo[t1]
        run = self._run_for(sweep.rows, sweep.first[lo], sweep.text)
        if sweep.arrays is not None:  # its blocks' columns as NumPy arrays: a chunk of them, no list extended
            run.add_chunk(sweep, t0, t1, tool, number)
            return
        sizes = sweep.size[lo:hi]
        run.sizes.extend(sizes)
        run.starts.extend(map(add, sweep.line[lo:hi], repeat(sweep.shift)))
        run.sections.extend(sweep.section[lo:hi])
        run.tools.extend(repeat(tool, hi - lo))
        run.numbers.extend(chain.from_iterable(map(repeat, range(number, number + t1 - t0),
                                                   map(sub, sweep.lo[t0 + 1 : t1 + 1], sweep.lo[t0:t1]))))
        run.hi = sweep.first[hi - 1] + sizes[-1]

    def add(self, blk: Block, number: int, tool: str) -> None:
        sp, tb = blk.span, blk.table
        if sp is not None:
            run = self._run_for(sp.rows, sp.first, sp.text) if sp.n else None
            if run is None:  # (an empty range: the run so far ends)
                if self.pieces or (self.spans is not None and (self.spans.rows is not sp.rows
                                                               or self.spans.hi != sp.first)):
                    self.flush()
                return
            run.blocks.append(blk)
            run.sizes.append(sp.n)
            run.starts.append(blk.line_start)
            run.sections.append(blk.section)
            run.tools.append(tool)
            run.numbers.append(number)
            run.hi = sp.first + sp.n
            return
        if self.spans:
            self.flush()
        if blk.rows:
            self.pieces.append((dict(zip(ROW_FIELDS, zip(*map(_FIELDS, blk.rows)))), len(blk.rows), number, tool,
                                blk.line_start))
            blk.rows = []
        elif tb is None or not tb.n:
            return
        elif tb.n <= SMALL_TABLE and tb.cols.keys() <= _ROW_SET:
            # a summary table read in bulk: its columns join the gathered ones (no part of its own)
            self.pieces.append((tb.cols, tb.n, number, tool, blk.line_start))
            blk.table = None
        else:
            self.flush()
            self._big(blk, tb, number, tool)

    def _big(self, blk: Block, tb: Rows, number: int, tool: str) -> None:
        """A big table: a part of its own, its profile, tool and table columns added."""
        n = len(tb)
        fill = Const if holds_views(tb.cols.values()) else _repeated  # an ncu page's columns kept as views
        tb.set("profile", fill(number, n))
        tb.set("tool", fill(tool, n))
        tb.set("table", fill(blk.line_start, n))
        if blk.names is not None and not tb.has("short_name"):  # dictionary-encoded: each name once
            tb.set("short_name", _coded_short_names(blk.names, self.by_base))
            self.coded.add(id(tb))
        elif tb.has("short_name"):  # every row's filled by its reader (nvprof traces: once per base name)
            self.coded.add(id(tb))
        self.parts.append(tb)
        blk.table = None


class _SpanRun:
    """Consecutive ranges of one batch (rows lo .. hi - 1), as columns by range: rows, first line
    (the file's: with a stream window's shift), section, tool, profile number; the blocks that hold
    them (they let their ranges go once gathered). A sweep's ranges given as NumPy arrays
    (Sweep.arrays) are held as chunks of such columns (`chunks`, in order with the lists': the
    lists so far become a chunk before each)."""

    def __init__(self, rows: Rows, lo: int, text: Any) -> None:
        self.rows, self.lo, self.hi, self.text = rows, lo, lo, text
        self.sizes: list[int] = []
        self.starts: list[int] = []
        self.sections: list[str | None] = []
        self.tools: list[str] = []
        self.numbers: list[int] = []
        self.blocks: list[Block] = []
        self.chunks: list[tuple[Any, Any, Any, Any, Any]] = []  # (sizes, starts, sections, tools, numbers)

    def add_chunk(self, sweep: Sweep, t0: int, t1: int, tool: str, number: int) -> None:
        """The ranges of profiles t0 .. t1 - 1 of a sweep with arrays (numbered from `number`) as a chunk."""
        import numpy as np

        self.chunk_lists()
        lo, first, size, line, section = sweep.arrays
        a, b = int(lo[t0]), int(lo[t1])
        count = np.diff(lo[t0 : t1 + 1])  # each profile's blocks
        held = np.empty(t1 - t0, dtype=object)  # one int a profile, shared by its blocks' rows
        held[:] = range(number, number + t1 - t0)
        tools = np.empty(b - a, dtype=object)
        tools[:] = tool
        self.chunks.append((size[a:b], line[a:b] + sweep.shift, section[a:b], tools, np.repeat(held, count)))
        self.hi = int(first[b - 1] + size[b - 1])

    def chunk_lists(self) -> None:
        """The ranges held in the lists so far made a chunk (where there are chunks, or one follows)."""
        import numpy as np

        if not self.sizes:
            return
        cols = []
        for values in (self.sections, self.tools, self.numbers):
            held = np.empty(len(values), dtype=object)
            held[:] = values
            cols.append(held)
        self.chunks.append((np.array(self.sizes, dtype=np.int64), np.array(self.starts, dtype=np.int64), *cols))
        self.sizes, self.starts, self.sections, self.tools, self.numbers = [], [], [], [], []


def _spanned(run: _SpanRun, by_base: dict[str, str], shift: int = 0) -> Rows:
    """One part from consecutive ranges of one batch: each of the batch's columns sliced once;
    section, profile, tool, table and line numbers repeated per range by NumPy (a range's rows are
    at its first line on, less `shift`: _rows adds it to every row's, and a stream window's blocks
    carry it already); short names once per distinct name where the batch's names are
    dictionary-encoded. The blocks let their ranges go."""
    import numpy as np

    lo, hi = run.lo, run.hi
    whole = lo == 0 and hi == run.rows.n  # the batch's own columns (theirs alone once its ranges go): no copy
    cols: dict[str, Any] = {name: c if whole else c[lo:hi] for name, c in run.rows.cols.items()}
    if run.chunks:  # (a sweep's ranges as arrays)
        run.chunk_lists()
        sizes, starts, sections, tools, numbers = (np.concatenate(c) for c in zip(*run.chunks))
        held = np.empty(len(starts), dtype=object)
        held[:] = starts.tolist()  # one int a block
        cols["section"], cols["tool"] = _each_held(sections, sizes), _each_held(tools, sizes)
        cols["profile"], cols["table"] = _each_held(numbers, sizes), _each_held(held, sizes)
    else:
        sizes = np.array(run.sizes, dtype=np.int64)
        starts = np.array(run.starts, dtype=np.int64)
        cols["section"] = _each(run.sections, sizes)
        cols["tool"] = _each(run.tools, sizes)
        # one int object a block (not one a row: a sweep's 160,000 rows would hold 320,000 of them)
        cols["profile"] = _each(run.numbers, sizes)
        cols["table"] = _each(run.starts, sizes)
    # row k of a block starting at line s is at line s + k: s - (rows before the block) + (row index)
    before = np.cumsum(sizes) - sizes
    lines = array("q")
    lines.frombytes((np.repeat(starts - shift - before, sizes) + np.arange(hi - lo)).astype(np.int64).tobytes())
    cols["line_start"] = cols["line_end"] = lines
    if run.text is not None:
        cols["short_name"] = _coded_short_names(_Codes(run.text.pool, run.text.codes[lo:hi]), by_base)
    for b in run.blocks:
        b.span = None
    return Rows.trusted(cols, hi - lo)


def _each(values: list[Any], sizes: Any) -> list[Any]:
    """Each value repeated its size's times (one list of the same objects, by NumPy; one value all
    along: one repetition)."""
    import numpy as np

    first = values[0]
    if values.count(first) == len(values):
        return [first] * int(sizes.sum())
    held = np.empty(len(values), dtype=object)
    held[:] = values
    out: list[Any] = np.repeat(held, sizes).tolist()
    return out


def _each_held(held: Any, sizes: Any) -> list[Any]:
    """`_each` of values held in a NumPy object array."""
    import numpy as np

    if len(held) and held[0] == held[-1] and (held == held[0]).all():
        return [held[0]] * int(sizes.sum())
    out: list[Any] = np.repeat(held, sizes).tolist()
    return out


class _Codes:
    """A range of a dictionary-encoded column (columnar.Text's pool and codes)."""

    def __init__(self, pool: Any, codes: Any) -> None:
        self.pool, self.codes = pool, codes


def _repeated(value: Any, n: int) -> list[Any]:
    return [value] * n


def _shift_lines(rows: Rows, shift: int) -> None:
    cols = rows.cols
    both = cols.get("line_start")
    if _int_array(both) and cols.get("line_end") is both:  # a batch's (_spanned): one array for both
        cols["line_start"] = cols["line_end"] = _shifted(both, shift)  # type: ignore[arg-type]
        return
    for c in ("line_start", "line_end"):
        col = cols.get(c)
        if _int_array(col):  # (columns read from bytes: no int object a row)
            cols[c] = _shifted(col, shift)  # type: ignore[arg-type]
        elif col is not None:
            try:  # (an int64 array: 8 bytes a row where a list holds an int object of 32 for each)
                rows.cols[c] = array("q", map(add, col, repeat(shift)))
            except (TypeError, OverflowError):  # a missing line number (None) stays missing
                rows.cols[c] = [x + shift if x is not None else None for x in col]


def _int_array(col: Any) -> bool:
    return type(col) is array and col.typecode == "q"


def _shifted(col: array, shift: int) -> array:
    """An array of line numbers plus `shift`, as an array (by NumPy)."""
    import numpy as np

    out = array("q")
    out.frombytes((np.frombuffer(col, dtype=np.int64) + shift).tobytes())
    return out


def _short_names(rows: Rows, by_base: dict[str, str]) -> None:
    """Short names filled where a row arrived without one, once per distinct name (its
    [correlation id] aside)."""
    names = rows.col("name")
    if isinstance(names, View) and not rows.has("short_name"):  # once per distinct name the view holds
        rows.set("short_name", names.mapped(lambda name: _short_of(name, by_base)))
        return
    short = list(rows.col("short_name"))  # None where a row arrived without one (trace blocks)
    if short.count(None) == len(short):
        todo: Sequence[int] = range(len(short))
        full: Sequence[str] = names
    else:
        todo = [i for i, s in enumerate(short) if s is None]
        full = [names[i] for i in todo]
    by_name = {name: _short_of(name, by_base) for name in dict.fromkeys(full)}  # once per distinct name
    if isinstance(todo, range):
        short = list(map(by_name.__getitem__, full))
    else:
        for i, got in zip(todo, map(by_name.__getitem__, full)):
            short[i] = got
    rows.set("short_name", short)


def _short_of(name: Any, by_base: dict[str, str]) -> str:
    """The short name of `name` (its [correlation id] aside), computed once per base name."""
    base = strip_correlation(str(name))
    got = by_base.get(base)
    if got is None:
        got = by_base[base] = short_name(base)
    return got


def _coded_short_names(names: Any, by_base: dict[str, str]) -> list[str]:
    """The short names of a dictionary-encoded name column (profconv.parse.columnar.Text), one per row."""
    import numpy as np

    pool = np.empty(len(names.pool), dtype=object)
    pool[:] = [_short_of(k, by_base) for k in names.pool.to_pylist()]
    return pool[names.codes].tolist()


def _attach_context(raw: list[RawProfile], text: str, first: int = 1,
                    found: list[context.ContextLine] | None = None) -> ProfileColumns:
    """Op Time / Correctness / command lines go to the profile of the same run.

    A run starts at a command line ('* Running …', '$ …'); context inside a profile's line span
    is its own; context before a profile and after the previous command line is its too.
    Profiles are numbered from `first`; `found` is the context of `text` when already scanned.
    The records are columns (ProfileColumns): a ProfileInfo is made only for a profile that some
    context goes to (and for any that a caller asks for).
    """
    cols = _profile_columns(raw)
    n = len(cols["line_start"])
    cols["profile"] = range(first, first + n)
    if cols["device"].count(None) == n:
        del cols["device"]
    starts, ends = cols["line_start"], cols["line_end"]
    infos = ProfileColumns(cols, n)
    if found is None:
        found = context.scan(text)
    if not found:
        return infos
    commands = sorted(c.line for c in found if c.kind == "command")
    place = _Placer(starts, ends, commands)
    for c in found:
        k = place(c)
        if k is None:
            continue
        target = infos[k]
        if c.kind == "command":
            target.command = target.command or c.text
        elif c.kind == "op_time" and c.value is not None:
            target.op_times_s.append(c.value)
        elif c.kind == "correctness":
            target.correctness = c.value
            target.model = c.text or target.model
    return infos


_TOOL, _PID, _COMMAND, _DEVICE = attrgetter("tool"), attrgetter("pid"), attrgetter("command"), attrgetter("device")
_FIELD_OF = {"tool": _TOOL, "line_start": _LINE_START, "line_end": _LINE_END, "pid": _PID, "command": _COMMAND,
             "device": _DEVICE}


def _profile_columns(raw: list[RawProfile]) -> dict[str, Any]:
    """The profiles' tool, lines, pid, command and device as columns (a SweptRun's: its own columns,
    its tool and device repeated)."""
    cols: dict[str, Any] = {name: [] for name in _FIELD_OF}
    k, n = 0, len(raw)
    while k < n:
        j = k
        while j < n and type(raw[j]) is not SweptRun:
            j += 1
        if j > k:  # profiles one by one: each field read by one map
            for name, get in _FIELD_OF.items():
                cols[name].extend(map(get, raw[k:j]))
        if j < n:
            run = raw[j]
            assert type(run) is SweptRun
            c = run.count
            cols["tool"].extend(repeat(run.tool, c))
            cols["line_start"].extend(run.starts)
            cols["line_end"].extend(run.ends)
            cols["pid"].extend(run.pids)
            cols["command"].extend(run.commands)
            cols["device"].extend(repeat(run.device, c))
        k = j + 1
    return cols


class _Placer:
    """Which profile a context line belongs to (its index), by bisection (linear in profiles and
    lines, where a scan of every profile per line was quadratic: 76 s on a 200 MB log of
    summaries): the first profile whose lines hold it; else the first profile after it, when no
    other run's command line comes between them (a command line itself: when no other comes
    between)."""

    def __init__(self, starts: list[int], ends: list[int], commands: list[int]) -> None:
        self.starts, self.ends = starts, ends
        self.commands = commands
        self.sorted = all(map(le, starts, islice(starts, 1, None)))
        self.reach = list(accumulate(ends, max))  # the furthest line_end up to each profile

    def __call__(self, c: context.ContextLine) -> int | None:
        if not self.sorted:
            return self._scan(c)
        k = bisect_right(self.starts, c.line)  # profiles [0, k) start at or before the line
        j = bisect_left(self.reach, c.line, 0, k)  # the first of them whose lines reach it
        if j < k:
            return j
        if k == len(self.starts):
            return None
        between = bisect_right(self.commands, c.line)
        if between < len(self.commands) and self.commands[between] < self.starts[k]:
            return None  # another run began between this line and the profile
        return k

    def _scan(self, c: context.ContextLine) -> int | None:
        """The same, profile by profile (profiles not in line order)."""
        starts, ends = self.starts, self.ends
        for k, (a, b) in enumerate(zip(starts, ends)):
            if a <= c.line <= b:
                return k
        nxt = next((k for k, a in enumerate(starts) if a > c.line), None)
        if nxt is None:
            return None
        if any(c.line < cmd < starts[nxt] for cmd in self.commands):
            return None
        return nxt
