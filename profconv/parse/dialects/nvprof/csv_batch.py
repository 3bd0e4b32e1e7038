"""nvprof --csv summary tables of one parse read together as columns: one C pass (or pyarrow call) for their rows.

A sweep's `nvprof --csv` logs concatenated hold thousands of small summary tables (the header
'"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"', a units row, a few rows each). Read table
by table (profconv.parse.dialects.nvprof.csv.read_table), every cell goes through the unit rules in
Python and every row becomes a Row object: 5 s for 50,000 tables at 20 MB. Here, the first time the
--csv reader meets such a header in a parse, every table under the same header and units row in the
parse's lines is found and their rows read together: by one C pass over their text where it is
built (profconv.parse._summarycells.nvprof: each row checked and its cells read there, whatever the
number of rows, pyarrow not loaded -- a stream's quarter-megabyte windows each pay for it), else
joined and read by one pyarrow call (profconv.parse.columnar) where pyarrow is loaded or the rows pay
for loading it, each cell checked by pyarrow's compute functions; the values checked by NumPy either
way. Where the reader then meets one of those headers, its table becomes blocks of column slices
(`Prepared.take`), no Row object.

A table is taken only where read_table reads it as plain rows and gives these values, checked here:
  - the header exactly as nvprof prints it (no PID prefix, no markup), a units row under it with as
    many cells, a time unit over Time, Avg, Min and Max, and no number;
  - rows one a line, each starting and ending with '"' and holding four (the quoted Type and Name,
    no quote inside them), nothing in them that `text.clean` rewrites ('&', '\\', '|', '**', HTML
    bold, dashes around a PID), the line after them blank or a marker of nvprof's (no stray line);
  - every number plain (digits, one '.'; the calls whole, at most 18 digits), Time(%) at most 100,
    every time finite once in nanoseconds: float(text + the unit's exponent), correctly rounded, which
    is what `units.time_ns` gives (pyarrow casts text to double with fast_float, also correctly rounded);
  - each section's rows one run (a section that comes back after another: the row reader's).
The C reader leaves a few more rows to read_table than pyarrow's reading does (a name empty or with
blanks around it, a label empty, a byte that is not printable ASCII, a cell of over 255 decimals).
Any other table is read by read_table, as before: the output is the same either way (tests compare
all three). Switched off with the columnar reader (PROFCONV_PURE_PYTHON=1, PROFCONV_NO_ARROW=1, no pyarrow).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from operator import add, itemgetter, sub
from typing import Any

from profconv.parse import columnar, native, units
from profconv.parse.dialects.nvprof.common import _API_CALL, LABEL_SECTIONS, is_marker
from profconv.parse.dialects.nvprof.csv import _csv_like, _csv_line
from profconv.parse.model import Block, Span, Sweep
from profconv.parse.table import Rows
from profconv.parse.text import clean, csv_row

HEADER = '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"'
CELLS = ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
TIMES = {"Time": "total_ns", "Avg": "avg_ns", "Min": "min_ns", "Max": "max_ns"}
MIN_ROWS = 100  # rows under one header and units row from which they are read together (tests lower it)
PAYS_FROM = 1 << 20  # bytes of such rows that pay for loading pyarrow in a process that has not (~0.3 s)
_PLAIN = r"^[0-9]+(?:\.[0-9]+)?$"
_WHOLE = r"^[0-9]{1,18}$"
# what text.clean may rewrite in a line that starts with '"' (its leading-markup rule needs a '#', '>'
# or '\\*' first): entities, LaTeX, table bars, bold, dashes around a PID, a carriage return
_REWRITTEN_CHARS = ("\\", "&", "|", "\r", "\u2013", "\u2014", "**")
_BOLD_TAG = re.compile(r"</?(?:b|strong|code|em|i|tt)>")


def _rewritten(text: str) -> bool:
    """Whether text.clean may rewrite a line of `text` (one substring search each: C speed)."""
    return any(c in text for c in _REWRITTEN_CHARS) or ("<" in text and _BOLD_TAG.search(text) is not None)
_UNIT_FIRST = ("", "%", "ms", "us", "s", "ns")  # csv._has_units: what the units row's first cell may be


def extent(lines: list[str], h: int, ends: dict[str, bool]) -> int | None:
    """The index after the rows of the table whose header is at index h, where its rows are plain
    lines (see the module's docstring) and the line after them ends it (`ends`: that verdict by
    line, kept between calls); None otherwise."""
    n = len(lines)
    j = h + 2
    while j < n and lines[j][:1] == '"' and lines[j][-1:] == '"' and len(lines[j]) > 1:
        j += 1
    if j == h + 2:
        return None
    if j < n:
        after = lines[j]
        ok = ends.get(after)
        if ok is None:
            ok = ends[after] = _may_end(after)
        if not ok:
            return None  # a stray line or a row of another shape: the row reader decides
    return j


def _may_end(line: str) -> bool:
    """Whether a line may follow a table's rows: blank or nvprof's own (no stray line, no row of another shape)."""
    c = _csv_line(line)
    return not _csv_like(c) and (not c.strip() or is_marker(c))


def units_of(line: str) -> dict[str, str] | None:
    """The units row's unit per column, where it is one read_table takes as such (csv._has_units)
    with a time unit over every time column; None otherwise."""
    cells = csv_row(line)
    if len(cells) != len(CELLS) or cells[0] not in _UNIT_FIRST or clean(line) != line:
        return None
    if any(c.strip()[:1] in ("+", ".") or c.strip()[:1].isdigit() for c in cells):
        return None
    got = dict(zip(CELLS, cells))
    if any(units.TIME_UNITS_NS.get(got[c]) not in units.EXPONENT for c in TIMES):
        return None
    return got


@dataclass
class _Group:
    """The tables of one header and units row read together: per table its header's index, first row
    (in the columns) and number of rows; the columns; the number of decimals of each row's Time and
    Avg cells (a block's printed step: csv._step)."""

    heads: list[int]
    firsts: list[int]
    sizes: list[int]
    ok: list[bool]
    sections: list[str]
    names: columnar.Text
    numbers: dict[str, Any]
    decimals: tuple[Any, Any]
    scales: tuple[float, float]

    section_codes: Any = None  # each row's section as a number (NumPy): the blocks of every table found at once

    def __post_init__(self) -> None:
        # the rows as one batch: a block is a range of them (model.Span), gathered once (core._rows)
        self.rows = Rows.trusted({**self.numbers, "name": self.names.values}, len(self.sections))
        self.runs: _Runs | None = None

    def blocks(self, k: int) -> list[Block] | None:
        """Table k's blocks, one per section in the order they come (None: a section comes back)."""
        if self.section_codes is None:
            return self._blocks(k)
        runs = self.runs or self._runs()
        if runs.again[k]:
            return None
        rows, names, line = self.rows, self.names, self.heads[k] + 3 - self.firsts[k]  # row r: line + r
        start, size, section, res = runs.start, runs.size, runs.section, self._resolution
        return [Block(section=section[i], span=Span(rows, start[i], size[i], text=names, checked=True),
                      line_start=line + start[i], line_end=line + start[i] + size[i] - 1, resolution=res(start[i]))
                for i in range(runs.lo[k], runs.lo[k + 1])]

    def following(self, k: int) -> int:
        """The end m of the tables k .. m - 1 that follow one another two lines apart (a start line
        and a result line between them), each taken whole (`ok`, no section that comes back):
        `blocks_of` gives theirs at once (m == k: table k is not taken whole)."""
        if self.section_codes is None:
            return k
        runs = self.runs or self._runs()
        if runs.chain is None:
            import numpy as np

            heads, sizes = np.asarray(self.heads, dtype=np.int64), np.asarray(self.sizes, dtype=np.int64)
            fine = np.asarray(self.ok, dtype=bool) & ~np.asarray(runs.again, dtype=bool)
            link = np.append((heads[1:] == heads[:-1] + sizes[:-1] + 4) & fine[1:], False)
            breaks = np.flatnonzero(~link)  # table t's chain ends at the first break at or after t
            every = np.arange(len(heads))
            runs.chain = np.where(fine, breaks[np.searchsorted(breaks, every)] + 1, every).tolist()
        return runs.chain[k]

    def sweep(self) -> Sweep:
        """The group's tables as a Sweep (profile t: table t's blocks, as `blocks(t)` gives them),
        for the profiles `following` gives (made in one go). Not kept here: the group and its
        sweep would hold each other (a cycle, freed only once the parse is over: nogc.paused)."""
        runs = self.runs or self._runs()
        return Sweep(self.rows, self.names, runs.lo, runs.start, runs.size, runs.section, runs.line, self.blocks,
                     arrays=runs.arrays)

    def _resolution(self, r: int) -> tuple[float, float]:
        """The printed step of the Time and Avg cells of a block whose first row is r (csv._step)."""
        return _step(self.scales[0], self.decimals[0][r]), _step(self.scales[1], self.decimals[1][r])

    def _runs(self) -> _Runs:
        """Every table's runs of one section (its blocks), found at once by NumPy."""
        import numpy as np

        codes = np.asarray(self.section_codes, dtype=np.int64)
        firsts = np.asarray(self.firsts, dtype=np.int64)
        begins = np.zeros(len(codes), dtype=bool)
        begins[firsts[firsts < len(codes)]] = True
        begins[1:] |= codes[1:] != codes[:-1]
        start = np.flatnonzero(begins)
        table = np.searchsorted(firsts, start, side="right") - 1
        lo = np.searchsorted(table, np.arange(len(firsts) + 1))
        key = table * (int(codes.max(initial=0)) + 1) + codes[start]
        distinct = np.bincount(table[np.unique(key, return_index=True)[1]], minlength=len(firsts))
        again = (distinct != np.diff(lo)).tolist()
        size = np.diff(np.append(start, len(codes)))
        # each run's first line: its table's first row's line (header index + 3) plus its place in the table
        line = np.asarray(self.heads, dtype=np.int64)[table] + 3 - firsts[table] + start
        first = start.tolist()
        section = list(map(self.sections.__getitem__, first))
        held = np.empty(len(section), dtype=object)
        held[:] = section
        self.runs = _Runs(first, size.tolist(), section, lo.tolist(), again, line.tolist(),
                          arrays=(lo, start, size, line, held))
        return self.runs

    def _blocks(self, k: int) -> list[Block] | None:
        """blocks(k), table by table (a group made without section codes)."""
        first, n, line = self.firsts[k], self.sizes[k], self.heads[k] + 3
        secs = self.sections[first : first + n]
        out: list[Block] = []
        seen: set[str] = set()
        a = 0
        while a < n:
            s = secs[a]
            if s in seen:
                return None
            seen.add(s)
            b = a + 1
            while b < n and secs[b] == s:
                b += 1
            out.append(self._block(first + a, b - a, s, line + a))
            a = b
        return out

    def _block(self, r: int, m: int, section: str, line: int) -> Block:
        return Block(section=section, span=Span(self.rows, r, m, text=self.names, checked=True), line_start=line,
                     line_end=line + m - 1,
                     resolution=(_step(self.scales[0], self.decimals[0][r]), _step(self.scales[1], self.decimals[1][r])))


@dataclass
class _Runs:
    """A group's runs of rows of one section (by run: first row, rows, section, first line), the
    runs of table k at lo[k] .. lo[k + 1] - 1, `again[k]`: a section of table k comes back."""

    start: list[int]
    size: list[int]
    section: list[str]
    lo: list[int]
    again: list[bool]
    line: list[int]  # each run's first line
    chain: list[int] | None = None  # per table, `_Group.following`'s end (found on first use)
    arrays: Any = None  # lo, start, size, line (int64) and section (objects) as NumPy arrays (model.Sweep.arrays)


_STEPS: dict[tuple[float, int], float] = {}


def _step(scale: float, decimals: int) -> float:
    """csv._step of a plain cell with that many decimals, in a unit of `scale` ns."""
    got = _STEPS.get((scale, decimals))
    if got is None:
        got = _STEPS[(scale, decimals)] = scale * 10.0 ** -decimals
    return got


class Prepared:
    """The summary tables of one parse's lines read together, by their header's index (built the
    first time a header is met: `take`)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.scanned = False
        self.tables: dict[int, tuple[_Group, int]] = {}

    def take(self, i: int) -> tuple[list[Block], int] | None:
        """The blocks of the table whose header is at index i and the index after its rows; None
        where read_table reads it (it was not taken here)."""
        if not self.scanned and self.lines[i] == HEADER:
            self.scanned = True
            if columnar.enabled():
                self._scan(i)
        got = self.tables.pop(i, None)
        if got is None:
            return None
        group, k = got
        if not group.ok[k]:
            return None
        blocks = group.blocks(k)
        return None if blocks is None else (blocks, group.heads[k] + 2 + group.sizes[k])

    def _scan(self, i: int) -> None:
        """Every plain table under HEADER from index i on, grouped by units row, read together."""
        lines = self.lines
        for units_line, tables in _found(lines, i).items():
            unit = units_of(units_line)
            if unit is None or sum(map(_END, tables)) - sum(map(_HEAD, tables)) - 2 * len(tables) < MIN_ROWS:
                continue
            group = _read_group(lines, tables, unit)
            if group is not None:
                self.tables.update(zip(group.heads, zip(repeat(group), range(len(group.heads)))))


_HEAD, _END = itemgetter(0), itemgetter(1)


def _found(lines: list[str], i: int) -> dict[str, list[tuple[int, int]]]:
    """The tables under HEADER from index i on whose rows are plain lines and end where the line
    after them may end one (`extent`): (header index, index after the rows) by units row. Found in
    C where built (profconv.parse._summarycells.nvprof_found), else table by table."""
    scan = native.load("_summarycells")
    find = getattr(scan, "nvprof_found", None)
    if find is None:
        return _found_one_by_one(lines, i)
    pairs, units, after = find(lines, i, HEADER)
    if not pairs:
        return {}
    verdict = {line: _may_end(line) for line in set(after)}  # (a log repeats them)
    if units is not None and all(verdict.values()):  # one units row, every table ends where one may
        return {units: pairs}
    ok = list(map(verdict.__getitem__, after)) + [True] * (len(pairs) - len(after))  # (the last may end the lines)
    found: dict[str, list[tuple[int, int]]] = {}
    for pair, good in zip(pairs, ok):
        if good:
            found.setdefault(lines[pair[0] + 1], []).append(pair)
    return found


def _found_one_by_one(lines: list[str], i: int) -> dict[str, list[tuple[int, int]]]:
    """`_found`, table by table."""
    found: dict[str, list[tuple[int, int]]] = {}
    ends: dict[str, bool] = {}  # whether a line may follow a table's rows (a log repeats them)
    k = i
    while True:
        end = extent(lines, k, ends)
        if end is not None:
            found.setdefault(lines[k + 1], []).append((k, end))
        try:
            k = lines.index(HEADER, k + 1)
        except ValueError:
            break
    return found


def _read_group(lines: list[str], tables: list[tuple[int, int]], unit: dict[str, str]) -> _Group | None:
    """The tables of one units row read together: in C where built (profconv.parse._summarycells:
    no pyarrow loaded, whatever the size), else by pyarrow where it is loaded or the rows pay for it."""
    scan = native.load("_summarycells")
    if scan is not None and hasattr(scan, "nvprof"):  # (a module built from an older source has no reader of these)
        return read_in_c(scan, lines, tables, unit)
    tables, text = _unrewritten(lines, tables)
    if tables and columnar.worth(len(text), PAYS_FROM):
        return read(text, tables, unit)
    return None


def _rows_text(lines: list[str], tables: list[tuple[int, int]]) -> str:
    return "\n".join(chain.from_iterable(map(lines.__getitem__, map(slice, _row_starts(tables), map(_END, tables)))))


def _row_starts(tables: list[tuple[int, int]]) -> Any:
    """Each table's first row's index (its header's plus two)."""
    return map(add, map(_HEAD, tables), repeat(2))


def _sizes(tables: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Each table's rows and the first's place among all of theirs (in C where built)."""
    got = getattr(native.load("_summarycells"), "nvprof_sizes", None)
    if got is not None:
        return got(tables)
    sizes = list(map(sub, map(_END, tables), _row_starts(tables)))
    return sizes, [0, *accumulate(sizes[:-1])] if sizes else []


def _unrewritten(lines: list[str], tables: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], str]:
    """The tables none of whose rows text.clean would rewrite, and that hold four quotes a row; the
    text of their rows."""
    text = _rows_text(lines, tables)
    if not _rewritten(text) and text.count('"') == 4 * sum(e - h - 2 for h, e in tables):
        return tables, text
    tables = [(h, e) for h, e in tables
              if not _rewritten(t := _rows_text(lines, [(h, e)])) and t.count('"') == 4 * (e - h - 2)]
    return tables, _rows_text(lines, tables)


def read(text: str, tables: list[tuple[int, int]], unit: dict[str, str]) -> _Group | None:
    """The rows of `tables` ((header index, index after the rows), every header HEADER, every units
    row `unit`; `text` their rows' lines joined) read by one pyarrow call and checked (see the
    module's docstring); None where the reader does not read them as such a table."""
    data = f"{HEADER}\n{text}\n".encode()
    cols = columnar.read_strings(data, CELLS)
    del data
    columnar.release_unused()
    if cols is None:
        return None
    sizes, firsts = _sizes(tables)
    got = _columns(cols, unit)
    if got is None:
        return None
    numbers, bad, decimals = got
    import numpy as np

    kinds = cols["Type"]
    sections = [LABEL_SECTIONS.get(t, "gpu") for t in kinds.pool.to_pylist()]
    bad |= _api_calls_among_gpu(cols["Name"], np.array([s == "gpu" for s in sections] or [False])[kinds.codes])
    ok = _per_table(bad, firsts)
    per_row = np.array(sections, dtype=object)[kinds.codes].tolist() if sections else []
    distinct = list(dict.fromkeys(sections))
    codes = np.array([distinct.index(s) for s in sections] or [0], dtype=np.int64)[kinds.codes]
    scales = (units.TIME_UNITS_NS[unit["Time"]], units.TIME_UNITS_NS[unit["Avg"]])
    return _Group(list(map(_HEAD, tables)), firsts, sizes, ok, per_row, cols["Name"], numbers, decimals, scales,
                  section_codes=codes)


def read_in_c(scan: Any, lines: list[str], tables: list[tuple[int, int]], unit: dict[str, str]) -> _Group | None:
    """`read`'s group, the rows read straight from their text by profconv.parse._summarycells (each
    row checked there as `_unrewritten` and the plain-number patterns check it, the values as
    `_floats`/`_counts` give them), the values checked as `read` checks them; the tables that do not
    pass left out (their rows read again without them), None where none passes."""
    import numpy as np

    exps = tuple(int(units.EXPONENT[units.TIME_UNITS_NS[unit[c]]][1:] or 0) for c in TIMES)
    for _ in range(2):  # a second pass only where a table is left out: its rows not in the group
        cells, type_codes, types, name_codes, names, decimals, bad_rows = _read_rows(scan, lines, tables, exps)
        sizes, firsts = _sizes(tables)
        numbers = {name: _array("d", cells[j]) for j, name in ((0, "time_pct"), (1, "total_ns"), (3, "avg_ns"),
                                                                (4, "min_ns"), (5, "max_ns"))}
        numbers["calls"] = _array("q", cells[2])
        kinds = np.frombuffer(type_codes, dtype=np.int32)
        sections = [LABEL_SECTIONS.get(t, "gpu") for t in types]
        text = columnar.Text(np.frombuffer(name_codes, dtype=np.int32).copy(), columnar.Pool(names))
        bad = np.frombuffer(bad_rows, dtype=np.uint8).astype(bool)
        if not bad.all():
            bad |= _values_bad(numbers, text, np.array([s == "gpu" for s in sections] or [False])[np.maximum(kinds, 0)])
        ok = _per_table(bad, firsts)
        if all(ok):
            break
        tables = [t for t, good in zip(tables, ok) if good]
        if not tables:
            return None
    else:
        return None
    per_row = np.array(sections, dtype=object)[kinds].tolist() if sections else []
    distinct = list(dict.fromkeys(sections))
    codes = np.array([distinct.index(s) for s in sections] or [0], dtype=np.int64)[kinds]
    scales = (units.TIME_UNITS_NS[unit["Time"]], units.TIME_UNITS_NS[unit["Avg"]])
    return _Group(list(map(_HEAD, tables)), firsts, sizes, ok, per_row, text, numbers, (decimals[0::2], decimals[1::2]),
                  scales, section_codes=codes)


def _read_rows(scan: Any, lines: list[str], tables: list[tuple[int, int]], exps: tuple[int, ...]) -> tuple:
    """`scan.nvprof` of the tables' rows: read from the lines themselves where the module has
    `nvprof_lines` (no text joined and encoded), else from their text."""
    if hasattr(scan, "nvprof_lines"):
        return scan.nvprof_lines(lines, tables, exps)
    return scan.nvprof((_rows_text(lines, tables) + "\n").encode("utf-8", "surrogatepass"), exps)


def _array(kind: str, cell: bytes) -> array:
    out = array(kind)
    out.frombytes(cell)
    return out


def _values_bad(numbers: dict[str, Any], names: columnar.Text, gpu: Any) -> Any:
    """Which rows `read` would refuse for their values: Time(%) above 100, a time not finite, a
    total not within 1% of calls x average, a GPU activity named as a CUDA API call."""
    import numpy as np

    pct = np.frombuffer(numbers["time_pct"], dtype=np.float64)
    bad = ~(pct <= 100.0 + 1e-9)
    for name in TIMES.values():
        bad |= ~np.isfinite(np.frombuffer(numbers[name], dtype=np.float64))
    t = np.frombuffer(numbers["total_ns"], dtype=np.float64)
    a = np.frombuffer(numbers["avg_ns"], dtype=np.float64)
    bad |= ~(np.abs(t - np.frombuffer(numbers["calls"], dtype=np.int64).astype(np.float64) * a) <= 0.01 * t)
    return bad | _api_calls_among_gpu(names, gpu)


def _api_calls_among_gpu(names: columnar.Text, gpu: Any) -> Any:
    """Rows of the GPU activities named as a CUDA API call (common._api_calls_out reports them as
    unplaced: the row reader's)."""
    import numpy as np

    api = np.array([n[:2] == "cu" and _API_CALL.fullmatch(n) is not None for n in names.pool.to_pylist()] or [False])
    return api[names.codes] & gpu


def _per_table(bad: Any, firsts: list[int]) -> list[bool]:
    import numpy as np

    if not len(bad):
        return []
    return [not x for x in np.logical_or.reduceat(bad, np.asarray(firsts, dtype=np.int64)).tolist()]


def _columns(cols: dict[str, columnar.Text], unit: dict[str, str]) -> tuple[dict[str, Any], Any, tuple] | None:
    """The schema columns of the rows, which rows do not read plainly, and the decimals of each
    row's Time and Avg cells."""
    import numpy as np

    n = len(cols["Name"].codes)
    bad = np.zeros(n, dtype=bool)
    numbers: dict[str, Any] = {}
    pct, bad_pct = _floats(cols["Time(%)"], "")
    bad |= bad_pct | ~(pct <= 100.0 + 1e-9)
    numbers["time_pct"] = _doubles(pct)
    for cell, name in TIMES.items():
        exp = units.EXPONENT[units.TIME_UNITS_NS[unit[cell]]]
        v, bad_v = _floats(cols[cell], exp)
        bad |= bad_v | ~np.isfinite(v)
        numbers[name] = _doubles(v)
    calls, bad_calls = _counts(cols["Calls"])
    bad |= bad_calls
    numbers["calls"] = calls
    # every total within 1% of calls x average (core._any_inconsistent's first test): core's
    # consistency check passes over a batch's ranges
    t = np.frombuffer(numbers["total_ns"], dtype=np.float64)
    a = np.frombuffer(numbers["avg_ns"], dtype=np.float64)
    bad |= ~(np.abs(t - np.asarray(calls, dtype=np.float64) * a) <= 0.01 * t)
    for cell in ("Type", "Name"):
        pool = cols[cell].pool.to_pylist()
        quoted = np.array(['"' in t for t in pool] or [False])
        bad |= quoted[cols[cell].codes]
    decimals = (_decimals(cols["Time"]), _decimals(cols["Avg"]))
    return numbers, bad, decimals


def _compute() -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa, pc


def _floats(text: columnar.Text, exp: str) -> tuple[Any, Any]:
    """A column of plain numbers (the text plus `exp`, read as a double); which rows are not plain."""
    pa, pc = _compute()
    plain = pc.match_substring_regex(text.pool, _PLAIN)
    cells = pc.if_else(plain, text.pool, pa.scalar("0"))
    if exp:
        cells = pc.binary_join_element_wise(cells, pa.scalar(exp), pa.scalar(""))
    values = pc.cast(cells, pa.float64()).to_numpy(zero_copy_only=False)
    ok = plain.to_numpy(zero_copy_only=False)
    return values[text.codes], ~ok[text.codes]


def _counts(text: columnar.Text) -> tuple[list[int], Any]:
    pa, pc = _compute()
    whole = pc.match_substring_regex(text.pool, _WHOLE)
    values = pc.cast(pc.if_else(whole, text.pool, pa.scalar("0")), pa.int64()).to_numpy(zero_copy_only=False)
    ok = whole.to_numpy(zero_copy_only=False)
    return values[text.codes].tolist(), ~ok[text.codes]


def _decimals(text: columnar.Text) -> list[int]:
    """How many digits follow the '.' in each row's cell (0 where none)."""
    import numpy as np

    _, pc = _compute()
    length = pc.utf8_length(text.pool).to_numpy(zero_copy_only=False)
    dot = pc.find_substring(text.pool, ".").to_numpy(zero_copy_only=False)
    per = np.where(dot < 0, 0, length - dot - 1)
    return per[text.codes].tolist()


def _doubles(v: Any) -> array:
    import numpy as np

    out = array("d")
    out.frombytes(np.ascontiguousarray(v, dtype=np.float64).tobytes())
    return out
