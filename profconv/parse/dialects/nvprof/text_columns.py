"""Summary-only nvprof text read whole as columns: one C pass over its bytes, no line made a str.

A sweep's summary-only nvprof logs concatenated (benchmarks/parse_throughput.py's 20 MB input: 8,231
profiles) are profiles of one shape, each

    ==PID== NVPROF is profiling process PID, command: COMMAND
    program output
    ==PID== Profiling application: COMMAND
    ==PID== Profiling result:
                Type  Time(%)      Time     Calls       Avg       Min       Max  Name
     GPU activities:   49.75%  2.2027ms       400  5.5060us  5.4390us  6.1110us  fill(void)
                       ...
          API calls:   87.72%  98.832ms         2  49.416ms     564ns  98.831ms  cudaEventCreate
                       ...

The stream reads such a file window by window, its lines made str, each window's profiles carried
through the engine (text_sweep: a C call, then per profile a RawProfile and a Block a section) and
the core (~30 µs a profile). Here `profconv.parse._rowscan.text_sweep` finds the profiles that
text_sweep takes (the same C checks: each line one the engine gives to the same reader) and reads
their rows straight from the file's bytes, and what the core does to them (sections, blocks, lines,
short names, shares) is done once over their columns (`_kahan.rank_blocks`, `_summarycells`'
nvprof_take and nvprof_runs): `read` gives the whole file (the library), `parts` a part a quarter
MiB (the stream's parts: the CLI writes them as they come). Only where the core would say nothing
of them: every row's numbers finite, each total within 1% of calls x average, each table's Time(%)
clearly adding up to 100, no share to note; and only where the stream would read the file as
nvprof with nothing around: the file starts with a profile, every PID prefix is the profile's, no
other dialect's marker or context keyword in a line (the rows: in a name), and no byte the text's
normalize would rewrite (markup, comment prefixes, a star first in a line, blanks ending a line,
control characters, non-ASCII). Anything else: the stream's windows read the file from the first part not read so, as
before (the reference; tests/test_parse_nvprof_text_columns.py compares both on mutated sweeps).
Not used in the pure-Python mode (PROFCONV_PURE_PYTHON=1: the C modules are not loaded). NumPy is
not imported (a CLI run does not load it)."""

from __future__ import annotations

from array import array
from collections.abc import Generator, Iterator
from contextlib import closing
from itertools import chain
from typing import Any

import numpy as np

from profconv.parse import native, sweep_rows
from profconv.parse.context import contains_any

CHUNK = 4 << 20  # bytes read and scanned at a time (`read`)
HEAD = 1 << 12  # bytes whose profiles are looked at first
_SECTIONS = ("gpu", "api", "openacc")  # text_sweep's section codes


def read(path: str, label: str) -> Any:
    """The ProfileSet of the file at `path` where it is such a sweep (see the module's docstring), else None."""
    mods = _modules()
    if mods is None:
        return None
    from profconv.parse import stream

    with open(path, "rb") as f:
        if not _head_plain(mods[0], f, stream.WINDOW):
            return None
        got = []
        with closing(_scanned(mods[0], f, CHUNK)) as scanned:
            for found in scanned:
                if found is None:
                    return None  # (closed on the way out: where the file was cut short meanwhile, InputChanged)
                got.append(found[0])
    return _profile_set(got, label, mods) if got else None


def parts(path: str, label: str, window: int) -> Iterator[tuple[Any, int, int]]:
    """`read`'s profiles a part at a time, each the part of a window of `window` bytes that the
    stream would make (stream.Stream._parts: its windows read and cut the same way): (the part, the
    file's offset after it, the size of the stream's next read from there) -- a ProfileSet numbered
    as in the whole file, as a stream's parts are -- then (None, where the rest of the file begins,
    the size the stream's window from there reads first) where the rest is not such a sweep (the
    whole file where no part came): the stream's windows from there are the ones it would have made."""
    mods = _modules()
    if mods is None:
        yield None, 0, window
        return
    number = 1
    at, size = 0, window
    with open(path, "rb") as f:
        if not _head_plain(mods[0], f, window):
            yield None, 0, window
            return
        for found in _windows(mods[0], f, window):
            part = None if found is None else _profile_set([found[0]], label, mods, number)
            if part is None:
                yield None, at, size
                return
            yield part, found[1], found[2]
            number += len(part.profiles)
            at, size = found[1], found[2]


def resume_state(part: Any) -> tuple:
    """The nvprof reader's state after the part's last profile (Nvprof.resume_state at the next
    start line: what text_sweep leaves there): nothing pending, its PID the last seen."""
    return None, False, None, part.profiles.cols["pid"][-1], None, None


def _modules() -> tuple[Any, Any, Any] | None:
    """_rowscan, _kahan and _summarycells where built with what this reader calls (none in the
    pure-Python mode), and no other dialect's detect must look at the text (a plugin's)."""
    from profconv.parse import stream

    mods = native.load("_rowscan"), native.load("_kahan"), native.load("_summarycells")
    if (not hasattr(mods[0], "text_sweep") or not hasattr(mods[1], "rank_blocks")
            or not hasattr(mods[2], "nvprof_take") or stream._detects_left("nvprof")):
        return None
    return mods


def _needles() -> tuple[str, ...]:
    """What the stream looks for in a window's text (another dialect's markers, the context's keywords)."""
    from profconv.parse import context, stream

    return stream.other_markers("nvprof") + context.KEYWORDS


def _head_plain(scan: Any, f: Any, window: int) -> bool:
    """Whether the file's first profiles are of the shape (another file: not a chunk looked at), and
    its first window is one the stream reads as nvprof, as it is (stream.Stream._head: the window
    not grown, nvprof's detect taking it); `f` left at its start."""
    from profconv.parse import stream
    from profconv.parse.dialect import registry
    from profconv.parse.model import Document

    head = f.read(HEAD)
    if scan.text_sweep(head, _needles_bytes(), False, 1, 0) is None:
        return False
    data = head + f.read(window - len(head))
    f.seek(0)
    eof = len(data) < window
    data = data if eof else data[: data.rfind(b"\n") + 1]
    nvprof, mark = registry()["nvprof"], registry()["nvprof"].part_start.encode()
    if data.count(mark) < 2 or (not eof and len(data) < stream.STREAM_FROM and len(data) < stream.HEAD):
        return False
    return nvprof.detect(Document(lines=[], label="", text=data.decode("ascii", "replace")))


def _needles_bytes() -> tuple[bytes, ...]:
    return tuple(k.encode() for k in _needles())


def _scanned(scan: Any, f: Any, size: int) -> Generator[tuple[tuple, int] | None, None, None]:
    """text_sweep's results, window after window of the file (profconv.parse.file_windows: mapped, a
    file up to 256 MiB one window; else read through a buffer `size` bytes at a time), each with
    profiles, with the file's offset after them (then None, and no more, where one is not of the
    shape); a window twice as large where it holds no whole profile."""
    from profconv.parse import file_windows

    needles = _needles_bytes()
    with file_windows.windows(f, size, whole=True) as src:
        line, want = 1, src.step  # (line: the file's number of the window's first line)
        while True:
            data, last = src.window(want)
            found = scan.text_sweep(data, needles, last, line, 0)
            data.release()
            if found is None:
                yield None
                return
            if found[0]:
                yield found, src.base + found[0]
            if last:
                return
            want = src.step if found[0] else 2 * want
            src.advance(found[0])
            line += found[1]


def _windows(scan: Any, f: Any, window: int) -> Iterator[tuple[tuple, int, int] | None]:
    """text_sweep's results window by window, the windows the stream makes (stream.Stream._parts:
    `window` bytes read at a time, each window's whole lines cut at the last profile start but its
    first that is MARGIN lines before its end, a window without one read on with twice as many
    bytes): each with the file's offset of its cut and the size of the stream's next read; None
    (and no more) where a profile before a cut is not of the shape."""
    from profconv.parse import stream

    needles = _needles_bytes()
    carry = b""  # the file's bytes from the last cut on, not looked at yet
    base, pos, line, size = 0, 0, 1, window  # carry's offset and first line; the file's offset read up to
    while True:
        block = f.read(size)
        pos += len(block)
        eof = len(block) < size
        nl = len(block) if eof else block.rfind(b"\n") + 1
        if not eof and not nl:
            carry, size = carry + block, 2 * size
            continue
        data, tail = carry + block[:nl], block[nl:]
        found = scan.text_sweep(data, needles, eof, line, 0 if eof else stream.MARGIN)
        if found is None or (eof and found[0] != len(data)):
            yield None
            return
        if not found[0]:  # no place to cut: read on
            carry, size = data + tail, 2 * size
            continue
        yield found, base + found[0], pos - base - found[0] + window
        if eof:
            return
        carry, size = data[found[0]:] + tail, window
        base += found[0]
        line += found[1]


def _ints(data: bytes, stride: int, at: int) -> array:
    """Field `at` of each record of `stride` int64 (text_sweep's profiles and blocks)."""
    return array("q", np.frombuffer(data, dtype=np.int64)[at::stride].tobytes())  # (not one int at a time)


def _profile_set(got: list[tuple], label: str, mods: tuple, number: int = 1) -> Any:
    """The ProfileSet of text_sweep's chunks, its profiles numbered from `number` (None where the core
    would note something of them, or a name or command holds what the stream looks for)."""
    from profconv.parse.core import ProfileSet
    from profconv.parse.profile_infos import ProfileColumns

    chunks = []
    for found in got:
        chunk = _chunk(found, number, mods)
        if chunk is None:
            return None
        chunks.append(chunk)
        number += len(chunk[1]["profile"])
    cols, profiles = chunks[0] if len(chunks) == 1 else _joined(chunks)  # (one: its columns as they are, views too)
    count = len(profiles["profile"])
    return ProfileSet(None, ProfileColumns(profiles, count), label, [], [], {},
                      rows=sweep_rows.trusted(cols, len(cols["name"])))


def _joined(chunks: list[tuple[dict, dict]]) -> tuple[dict, dict]:
    """The chunks' row and profile columns, one after the other (a view made a list)."""
    cols: dict[str, Any] = {}
    profiles: dict[str, list] = {k: [] for k in ("profile", "tool", "line_start", "line_end", "pid", "command")}
    for rows, per in chunks:
        for k, v in rows.items():
            cols.setdefault(k, v[:0]).extend(v)
        for k, v in per.items():
            profiles[k].extend(v)
    return cols, profiles


def _chunk(found: tuple, number: int, mods: tuple) -> tuple[dict, dict] | None:
    """One chunk's rows and profiles as the core gives them (core._rows, ranked: each (profile,
    section) one block: sweep_rows.ranked_names), its profiles numbered from `number`."""
    cells = mods[2]
    _, _, profs, blocks, lines, codes, calls, pool, commands, pct, total, avg, lo, hi = found
    if contains_any("\n".join(chain(pool, commands)), _needles()):  # (joined: one pass of the C search)
        return None
    cols = sweep_rows.ranked_names({"time_pct": pct, "total_ns": total}, _ints(blocks, 4, 0), pool, codes)
    if cols is None:
        return None
    n = len(pct)
    sizes, rows = _ints(blocks, 4, 1), _ints(profs, 5, 2)
    count = len(rows)
    row_lines = array("q", lines)  # (as the readers' rows hold them: core._shift_lines)
    cols.update({
        "profile": cells.nvprof_runs(list(range(number, number + count)), rows), "tool": ["nvprof"] * n,
        "section": cells.nvprof_runs([_SECTIONS[c] for c in _ints(blocks, 4, 2)], sizes),
        "calls": array("q", calls).tolist(), "avg_ns": avg, "min_ns": lo, "max_ns": hi,
        "table": cells.nvprof_runs(_ints(blocks, 4, 3).tolist(), sizes), "line_start": row_lines,
        "line_end": array("q", row_lines),
    })
    per = {"profile": list(range(number, number + count)), "tool": ["nvprof"] * count,
           "line_start": _ints(profs, 5, 0).tolist(), "line_end": _ints(profs, 5, 1).tolist(),
           "pid": _ints(profs, 5, 3).tolist(), "command": cells.nvprof_take(commands, _ints(profs, 5, 4))}
    return cols, per
