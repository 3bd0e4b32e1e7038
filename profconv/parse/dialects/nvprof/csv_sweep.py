"""A machine-written `nvprof --csv` sweep read whole as columns: one C pass over its bytes, no line made a str.

A sweep's `nvprof --csv` logs concatenated (benchmarks/parse_throughput.py's 20 MB input: 52,000
profiles) are profiles of one shape, each

    ==PID== NVPROF is profiling process PID, command: COMMAND
    ==PID== Profiling result:
    "Type","Time(%)","Time","Calls","Avg","Min","Max","Name"
    UNITS (the same row throughout)
    one plain row or more ("GPU activities" or "API calls", six numbers, a name)

The stream reads such a file window by window, its lines split into str and each window's
profiles carried through the engine and the core (profconv.parse.stream; csv_batch reads the rows
in C): ~30 NumPy calls, thousands of list entries and a part to join a window. Here
`profconv.parse._summarycells.nvprof_sweep` finds the profiles and reads their rows straight from
the file's bytes (mapped: profconv.parse.file_windows; a file up to 256 MiB in one pass, which writes
the number columns into the arrays the rows keep), and what the core does to a sweep's rows (sections, blocks,
lines, short names, shares: profconv.parse.core._rows and ranked) is done once over them by NumPy
and C (`_kahan.rank_blocks`, `nvprof_take`, `nvprof_runs`): `read` gives the whole file (the
library), `parts` a part a MiB (the stream's parts: the CLI writes them as they come). Only profiles
of that shape are read so, and only where the core would say nothing of them: every row plain
(csv_batch's checks: Time(%) at most 100, the times finite, each total within 1% of calls x
average, no GPU activity named as a CUDA API call), each section's rows one run, each table's
Time(%) clearly adding up to 100 (no note), no share to note, no other dialect's marker or context
keyword in a name or command (nor another dialect's marker in the file's head). Anything else: the
stream's windows read the file from the first part not read so, as before (the reference; tests
compare both on mutated sweeps). Not used in the pure-Python mode (PROFCONV_PURE_PYTHON=1: the C
module is not loaded) nor without the columnar reader."""

from __future__ import annotations

from array import array
from collections.abc import Generator, Iterator
from contextlib import closing
from itertools import chain
from typing import Any

import numpy as np

from profconv.parse import columnar, native, sweep_rows, units
from profconv.parse.colviews import Const, Runs
from profconv.parse.dialects.nvprof.csv_batch import HEADER, TIMES, _api_calls_among_gpu, units_of

CHUNK = 4 << 20  # bytes read and scanned at a time (`read` of a file not mapped: file_windows.WHOLE where mapped)
PART = 1 << 18  # bytes of the file a part holds (`parts`: a stream's parts, written as they come)
_SECTIONS = {"GPU activities": "gpu", "API calls": "api"}  # common.LABEL_SECTIONS of the two a sweep holds
_NUMBERS = (("time_pct", 0, "d"), ("total_ns", 1, "d"), ("calls", 2, "q"), ("avg_ns", 3, "d"), ("min_ns", 4, "d"),
            ("max_ns", 5, "d"))


def read(path: str, label: str) -> Any:
    """The ProfileSet of the file at `path` where it is such a sweep (see the module's docstring), else None."""
    scan = _scanner()
    if scan is None:
        return None
    with open(path, "rb") as f, closing(_scanned(scan, f, CHUNK, whole=True)) as scanned:
        chunks, numbers = [], _numbers()
        for found in scanned:
            if found is None:
                return None  # (closed on the way out: where the file was cut short meanwhile, InputChanged)
            chunks.append(_numbers_into(numbers, found[0]))
    return _profile_set(chunks, label, 1, 1, numbers) if chunks else None


def _numbers() -> dict[str, array]:
    """Empty number columns: arrays 'd', the calls 'q'."""
    return {name: array(kind) for name, _, kind in _NUMBERS}


def _numbers_into(numbers: dict[str, array], chunk: tuple) -> tuple:
    """The chunk's numbers appended to `numbers` (its bytes copied once; the first chunk's columns, arrays
    the pass wrote into, taken as they are) and let go: the chunk less them (the next chunk's C pass uses
    their memory again: no page new to the process for it)."""
    cells = chunk[2][0]
    for name, j, kind in _NUMBERS:
        if not numbers[name] and type(cells[j]) is array and cells[j].typecode == kind:
            numbers[name] = cells[j]  # (the pass wrote them into this array: the column itself)
        else:
            numbers[name].frombytes(memoryview(cells[j]).cast("B"))
    cells[:] = [b""] * len(cells)
    return chunk


def parts(path: str, label: str, size: int = 0) -> Iterator[tuple[Any, int, int]]:
    """`read`'s profiles a part at a time, about `size` bytes of the file each (PART where 0): (the
    part, the file's offset after it, the file's line there) -- a ProfileSet numbered as in the whole
    file, as a stream's parts are -- then (None, where the rest of the file begins, its line) where
    the rest is not such a sweep (the whole file where no part came). A part ends where a start line
    of the sweep's shape follows: what comes after it cannot change it."""
    scan = _scanner()
    if scan is None:
        yield None, 0, 1
        return
    number = line = 1
    at = 0
    with open(path, "rb") as f, closing(_scanned(scan, f, size or PART)) as scanned:
        for found in scanned:
            part = None if found is None else _profile_set([found[0]], label, number, line)
            if part is None:
                scanned.close()  # (where the file was cut short while mapped: InputChanged, not the readers)
                yield None, at, line
                return
            line = part.profiles.cols["line_end"][-1] + 1
            at = found[1]
            yield part, at, line
            number += len(part.profiles)


def resume_state(part: Any) -> tuple:
    """The nvprof reader's state after the part's last profile (Nvprof.resume_state: what a stream's
    window carries past a profile start): the result line's 'gpu' pending, its PID the last seen."""
    return "gpu", False, None, part.profiles.cols["pid"][-1], None, None


def _scanner() -> Any:
    """profconv.parse._summarycells, where it is built with nvprof_sweep and the columnar reader is on."""
    scan = native.load("_summarycells")
    if scan is None or not hasattr(scan, "nvprof_sweep") or not columnar.enabled():
        return None
    return scan


def _head_units(head: bytes) -> tuple[bytes, tuple[int, ...]] | None:
    """The first profile's units row and its time columns' exponents, where its header is HEADER
    and its units row one csv_batch reads."""
    lines = head.split(b"\n", 4)
    if len(lines) < 5 or lines[2] != HEADER.encode() or not lines[3].isascii():
        return None
    unit = units_of(lines[3].decode())
    if unit is None or _marked([], [lines[3].decode(), HEADER]):
        return None
    exps = tuple(int(units.EXPONENT[units.TIME_UNITS_NS[unit[c]]][1:] or 0) for c in TIMES)
    return lines[3], exps


def _scanned(scan: Any, f: Any, size: int, whole: bool = False) -> Generator[tuple[tuple, int] | None, None, None]:
    """nvprof_sweep's results, window after window of about `size` bytes of the file (profconv.parse.
    file_windows: mapped, or read through a buffer; `whole`: a whole-file read's), each with profiles, with
    the file's offset after them (then None, and no more, where one is not of the shape). The head is
    looked at first: a file of another dialect is told by it, not by `size` bytes read."""
    from profconv.parse import context, file_windows, stream

    with file_windows.windows(f, size, whole) as src:
        head = src.head(max(4096, stream.HEAD))
        got = _head_units(head[:4096])
        if got is None or context.contains_any(head[: stream.HEAD], tuple(stream.other_markers("nvprof"))):
            yield None
            return
        yield from _swept(scan, src, got)


def _swept(scan: Any, src: Any, shape: tuple) -> Iterator[tuple[tuple, int] | None]:
    """`_scanned`'s results, the file's windows from `src`, `shape` its units row and exponents
    (`_head_units`): a window twice as large where no profile in it is whole. The pass writes its number
    columns straight into arrays (`_alloc`) where the build can."""
    header, want = HEADER.encode(), src.step
    alloc = (_alloc,) if getattr(scan, "NVPROF_SWEEP_ALLOC", 0) else ()
    while True:
        data, last = src.window(want)
        found = scan.nvprof_sweep(data, header, shape[0], shape[1], last, *alloc)
        data.release()
        if found is None:
            yield None
            return
        if found[0]:
            yield found[1:], src.base + found[0]
        if last:
            return
        want = src.step if found[0] else 2 * want
        src.advance(found[0])


def _alloc(rows: int) -> list[array]:
    """The six number columns of `rows` rows nvprof_sweep writes into (arrays 'd', the calls 'q')."""
    return [array(kind, bytes(8)) * rows for _, _, kind in _NUMBERS]  # (one zero, repeated)


def _joined(chunks: list[tuple], numbers: dict[str, array] | None = None) -> dict[str, Any] | None:
    """The chunks' columns as one: per profile pid, command, rows; per row the six numbers as arrays
    (`numbers` where `_numbers_into` took them already), section (0 gpu, 1 api) and name codes into
    `names`. None where a row's label is another."""
    names: dict[str, int] = {}
    commands: dict[str, int] = {}
    parts: dict[str, list[Any]] = {k: [] for k in ("pid", "command", "rows", "section", "name")}
    for (pids, cmd_codes, counts), cmds, (_, type_codes, types, name_codes, pool, _) in chunks:
        if any(t not in _SECTIONS for t in types):
            return None
        parts["pid"].append(np.frombuffer(pids, dtype=np.int64))
        parts["command"].append(_recoded(commands, cmds, cmd_codes))
        parts["rows"].append(np.frombuffer(counts, dtype=np.int64))
        sections = np.array([_SECTIONS[t] == "api" for t in types] or [False], dtype=np.int8)
        parts["section"].append(sections[np.frombuffer(type_codes, dtype=np.int32)])
        parts["name"].append(_recoded(names, pool, name_codes))
    got: dict[str, Any] = {k: v[0] if len(v) == 1 else np.concatenate(v) for k, v in parts.items()}  # (one: no copy)
    if numbers is None:
        numbers = _numbers()
        for chunk in chunks:
            _numbers_into(numbers, chunk)
    got.update(numbers)
    got["names"], got["commands"] = list(names), list(commands)
    return None if _marked(got["names"], got["commands"]) else got


def _marked(names: list[str], commands: list[str]) -> bool:
    """Whether a name (quoted, as in its row) or a command holds another dialect's marker or a context
    keyword (what the stream looks for in a window's text: it reads such a file otherwise), or
    another dialect's detect must look at the text (a plugin's). The other lines of the sweep's shape
    are fixed (HEADER and the units row: looked at by `_head_units`) or digits around them."""
    from profconv.parse import context, stream

    if stream._detects_left("nvprof"):
        return True
    needles = stream.other_markers("nvprof") + context.KEYWORDS  # (none holds a newline: the texts joined by one)
    return context.contains_any("\n".join(chain(map('"{}"'.format, names), commands)), needles)


def _recoded(index: dict[str, int], pool: list[str], codes: bytes) -> Any:
    """A chunk's codes into `pool` as codes into `index`'s keys (added to it in order)."""
    mapping = np.array([index.setdefault(s, len(index)) for s in pool] or [0], dtype=np.int64)
    return mapping[np.frombuffer(codes, dtype=np.int32)]


def _array(kind: str, data: Any) -> array:
    """An array of `kind` holding the values of `data` (an int64 NumPy array or a buffer of bytes), copied once."""
    out = array(kind)
    out.frombytes(memoryview(np.ascontiguousarray(data)).cast("B") if hasattr(data, "dtype") else data)
    return out


_BLOCK = 1 << 15  # rows a block of _values_plain's arithmetic (its temporaries 256 KiB, not a column's size)


def _values_plain(got: dict[str, Any]) -> bool:
    """Whether every row passes csv_batch's checks of its values (csv_batch._values_bad)."""
    pct = np.frombuffer(got["time_pct"], dtype=np.float64)
    if not (pct <= 100.0 + 1e-9).all():
        return False
    for name in TIMES.values():
        if not np.isfinite(np.frombuffer(got[name], dtype=np.float64)).all():
            return False
    t = np.frombuffer(got["total_ns"], dtype=np.float64)
    a = np.frombuffer(got["avg_ns"], dtype=np.float64)
    calls = np.frombuffer(got["calls"], dtype=np.int64)
    gap = np.empty(min(len(t), _BLOCK))  # |total - calls x avg|, a block of rows at a time (in the cache)
    for lo in range(0, len(t), _BLOCK):
        g, tt = gap[: min(_BLOCK, len(t) - lo)], t[lo : lo + _BLOCK]
        np.multiply(calls[lo : lo + _BLOCK], a[lo : lo + _BLOCK], out=g)
        np.subtract(tt, g, out=g)
        if not (np.abs(g, out=g) <= 0.01 * tt).all():
            return False
    names = columnar.Text(got["name"], columnar.Pool(got["names"]))
    return not _api_calls_among_gpu(names, got["section"] == 0).any()


def _layout(got: dict[str, Any], line: int) -> dict[str, Any] | None:
    """Where the profiles, rows and blocks are: each profile's first and last line, each row's line,
    each block's (run of one section in a profile) first row and rows; None where a section comes
    back in a profile or a table's Time(%) does not clearly add up to 100% (core._Ranges.not_clear).
    The first profile starts at the file's line `line`."""
    counts = got["rows"]
    n, profiles = int(counts.sum()), len(counts)
    if not profiles:
        return None
    spans = counts + 4
    starts = np.cumsum(spans) - spans + line  # each profile's start line (its rows from the line 4 after it)
    firsts = np.cumsum(counts) - counts  # each profile's first row
    lines = array("q", [1]) * n  # each row's line: one more than the row's before, five more past a profile's start
    steps = np.frombuffer(lines, dtype=np.int64)
    steps[firsts[1:]] = 5
    steps[0] = line + 4
    np.cumsum(steps, out=steps)
    begins = np.zeros(n, dtype=bool)
    begins[firsts] = True
    section = got["section"]
    begins[1:] |= section[1:] != section[:-1]
    block = np.flatnonzero(begins)
    if (np.add.reduceat(begins, firsts, dtype=np.int64) > 2).any():
        return None  # (two sections: a third block is one that comes back)
    size = np.diff(np.append(block, n))
    sums = np.add.reduceat(np.frombuffer(got["time_pct"], dtype=np.float64), block)
    if not (np.abs(sums - 100.0) < np.maximum(1.5, 0.01 * size) - 1e-6).all():  # (core._CLEAR)
        return None
    return {"starts": starts, "ends": starts + 3 + counts, "lines": lines, "block": block, "size": size}


def _rows(got: dict[str, Any], where: dict[str, Any], numbers: list[int]) -> Any:
    """The rows as core._rows gives them for the sweep, ranked (shares.ranked, each (profile, section)
    group one block: sweep_rows.ranked_names), in the schema's column order; None where ranking them
    would note something (or the C modules are older than this reader). Each profile's number in
    `numbers` (the ProfileColumns' list: one int object a profile for both)."""
    scan, kahan = native.load("_summarycells"), native.load("_kahan")
    if not hasattr(kahan, "rank_blocks") or not hasattr(scan, "nvprof_take"):
        return None
    n = len(got["section"])
    cols = sweep_rows.ranked_names({name: got[name] for name, _, _ in _NUMBERS}, where["block"], got["names"],
                                   got["name"], views=True)
    if cols is None:
        return None
    # section and profile a value a run of rows (a block's section, a profile's number), not a list entry a
    # row (Runs: as lists to the terminal table, colviews.holds_page_views)
    cols["section"] = Runs(scan.nvprof_take(["gpu", "api"], got["section"][where["block"]].astype(np.int64)),
                           np.ascontiguousarray(where["size"], dtype=np.int64))
    cols["tool"] = Const("nvprof", n)
    cols["profile"] = Runs(numbers, np.ascontiguousarray(got["rows"], dtype=np.int64))
    lines = np.frombuffer(where["lines"], dtype=np.int64)
    cols["table"] = Runs(lines[where["block"]], where["size"])  # (its list made where a row is asked for)
    cols["line_start"] = cols["line_end"] = where["lines"]  # (a row a line: one array for both)
    return sweep_rows.trusted(cols, n)


def _profile_set(chunks: list[tuple], label: str, number: int, line: int, numbers: dict | None = None) -> Any:
    """The ProfileSet of the chunks' profiles, numbered from `number`, the first at the file's line
    `line` (None where the core would note something of them); `numbers`: their number columns where
    `_numbers_into` took them already."""
    from profconv.parse.core import ProfileSet
    from profconv.parse.profile_infos import ProfileColumns

    got = _joined(chunks, numbers)
    if got is None or not _values_plain(got):
        return None
    where = _layout(got, line)
    if where is None:
        return None
    count = len(got["rows"])
    profile_numbers = list(range(number, number + count))
    rows = _rows(got, where, profile_numbers)
    if rows is None:
        return None
    take = native.load("_summarycells").nvprof_take
    profiles = ProfileColumns({"profile": profile_numbers, "tool": ["nvprof"] * count,
                               "line_start": _array("q", where["starts"].astype(np.int64, copy=False)),
                               "line_end": _array("q", where["ends"].astype(np.int64, copy=False)),
                               "pid": got["pid"].tolist(), "command": take(got["commands"], got["command"])}, count)
    return ProfileSet(None, profiles, label, [], [], {}, rows=rows)
