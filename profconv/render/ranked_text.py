"""The ranked tables of many profiles as plain text, a run of profiles at a time (a file or a pipe).

`profconv parse` of a sweep prints two small tables for each of tens of thousands of profiles; laid
out one by one (a Rows.take, a dict a row, a Column and a fit a table) that took ~300 µs a profile, 16 s
for a 20 MB nvprof `--csv` sweep. Here the timed rows of a run of profiles are ranked at once (NumPy),
each column's cells are formatted in one pass, a table's column widths are its group's maximum, and
the layout (the columns that fit, the line format) is worked out once for each set of widths. The
text is what render/plain.Writer.table writes for profile_tables.ranked_table (the bytes rich prints
there); a table this module does not reproduce exactly (shares to recompute, a name that is not
plain narrow text, a table wider than the console, a title or caption wider than the table) is
answered None and drawn one by one as before. tests/test_render_ranked_text.py compares both.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from profconv.parse.colviews import View
from profconv.parse.schema import SECTION_TITLES, TIMED_SECTIONS
from profconv.parse.table import Rows
from profconv.render import plain
from profconv.render.format import PAD, count, fit_widths
from profconv.render.profile_tables import summary_text

# the columns of profile_tables.ranked_table: header, the key that must be present, drop rank
SPEC: tuple[tuple[str, str | None, int | None], ...] = (
    ("", None, None),
    ("Time(%)", "time_pct", 4),
    ("Share", None, None),
    ("Cum.", None, 3),
    ("Total", None, None),
    ("Calls", "calls", 5),
    ("Avg", "avg_ns", 6),
    ("Min", "min_ns", 1),
    ("Max", "max_ns", 2),
    ("Name", None, None),
)
HEADERS = [h for h, _, _ in SPEC]
OPTIONAL = [k for _, k, _ in SPEC if k is not None]  # time_pct, calls, avg_ns, min_ns, max_ns
WRAP_MIN = 24
_SECTION_ORDER = {s: i for i, s in enumerate(TIMED_SECTIONS)}


class Block(NamedTuple):
    """One ranked section of one profile: its table as text, with its summary line where Writer.line
    writes that (else `summary` says it); `text` None: drawn one by one."""

    section: str
    text: str | None
    summary: str | None  # the summary line, where `text` does not end with it


def _floats(col: Sequence[Any], pos: np.ndarray) -> np.ndarray:
    """A column's values at `pos` as doubles (None: NaN)."""
    if type(col) is array and col.typecode == "d":
        return np.frombuffer(col, dtype=np.float64)[pos] if len(col) else np.zeros(0)
    if isinstance(col, np.ndarray) and col.dtype == np.float64:
        return col[pos]
    return np.array([col[i] for i in pos.tolist()], dtype=np.float64)


_UNITS = np.array(["ns", "µs", "ms", "s"])
_SCALE = np.array([1.0, 1e3, 1e6, 1e9])


def durations(ns: np.ndarray) -> list[str]:
    """format.duration of each value (NaN: '—'), the same strings: the value scaled to its unit."""
    a = np.abs(ns)
    unit = (a >= 1e3).astype(np.intp) + (a >= 1e6) + (a >= 1e9)
    out = [f"{v:.4g} {u}" for v, u in zip((ns / _SCALE[unit]).tolist(), _UNITS[unit].tolist())]
    for i in np.flatnonzero(np.isnan(ns)).tolist():
        out[i] = "—"
    return out


def _group_starts(keys: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else np.zeros(0, np.intp)


@dataclass
class _Ranked:
    """The timed rows of a run of profiles in display order: `at` (row positions), grouped by
    (profile, section) in `keys`; `starts` of each group."""

    at: np.ndarray
    keys: list[tuple[Any, str]]
    gid: np.ndarray
    starts: np.ndarray
    share: np.ndarray
    cum: np.ndarray


def _ranked(rows: Rows, pos: Sequence[int]) -> _Ranked | None:
    """The timed rows among `pos` ranked as profile_tables.rank_rows ranks them: by section, then
    by time (Time(%) where the section's shares are of it) largest first, ties in row order."""
    prof, sec = rows.col("profile"), rows.col("section")
    ids: dict[tuple[Any, str], int] = {}
    timed = [i for i in pos if sec[i] in _SECTION_ORDER]
    if not timed:
        return None
    gid = np.array([ids.setdefault((prof[i], sec[i]), len(ids)) for i in timed], dtype=np.intp)
    at = np.array(timed, dtype=np.intp)
    keys = list(ids)
    first = np.zeros(len(keys), dtype=np.intp)
    first[gid[::-1]] = np.arange(len(at) - 1, -1, -1)  # each group's first row (in row order)
    basis = rows.col("share_basis")
    by_pct = np.array([basis[i] == "time_pct" for i in at[first].tolist()], dtype=bool)
    key = np.where(by_pct[gid], _floats(rows.col("time_pct"), at), _floats(rows.col("total_ns"), at))
    key[np.isnan(key)] = 0.0
    order = np.lexsort((at, -key, gid))
    at, gid = at[order], gid[order]
    return _Ranked(at, keys, gid, _group_starts(gid), _floats(rows.col("share"), at), _floats(rows.col("cumulative"), at))


def _top_shares(share: np.ndarray, top: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> list[float]:
    """Each group's sum of its top rows' shares, added in rank order as rank_rows adds them (not
    NumPy's pairwise sums): position by position over the groups at once."""
    x = np.where(top, share, 0.0)
    total = np.zeros(len(starts))
    for k in range(int(sizes.max()) if len(sizes) else 0):
        live = np.flatnonzero(sizes > k)
        total[live] += x[starts[live] + k]
    return total.tolist()


def _present(rows: Rows, r: _Ranked) -> np.ndarray:
    """Which of OPTIONAL each group has a value of (any row): groups x 5 booleans; a section merged
    from several source tables shows no Time(%) (each is of its own table)."""
    cols = []
    for key in OPTIONAL:
        col = rows.col(key)
        vals = _floats(col, r.at) if key != "calls" else np.array(
            [v is not None and v == v for v in (col[i] for i in r.at.tolist())], dtype=np.float64)
        has = ~np.isnan(vals) if key != "calls" else vals > 0
        cols.append(np.logical_or.reduceat(has, r.starts))
    table = rows.col("table")
    codes: dict[Any, int] = {}
    code = np.array([-1 if (t := table[i]) is None else codes.setdefault(t, len(codes)) for i in r.at.tolist()])
    hi = np.maximum.reduceat(code, r.starts)
    lo = np.minimum.reduceat(np.where(code < 0, np.iinfo(np.int64).max, code), r.starts)
    cols[0] &= ~((hi >= 0) & (lo < hi))
    return np.stack(cols, axis=1)


@dataclass(frozen=True)
class _Layout:
    """How a table of given column widths is written: the columns kept, the line format, the lines
    above the rows, the caption of the columns left out; None where Writer.table would not write it."""

    kept: list[int]
    fmt: str
    head: str
    dropped: str | None
    width: int
    trim: bool


def _layout(section: str, present: tuple[bool, ...], widths: tuple[int, ...], console: int,
            trim: bool) -> _Layout | None:
    """ranked_table's fit and Writer.table's lines for these natural widths (every column of SPEC);
    `trim`: without the spaces that end a line (the console's file drops them: ui.TrimmedLines)."""
    shown = [j for j, (_, key, _) in enumerate(SPEC) if key is None or present[OPTIONAL.index(key)]]
    kept_at, gone_at = fit_widths([min(widths[j], WRAP_MIN) if j == 9 else widths[j] for j in shown],
                                  [SPEC[j][2] for j in shown], [j == 9 for j in shown], console)
    kept = [shown[i] for i in kept_at]
    table_width = sum(widths[j] for j in kept) + PAD * (len(kept) - 1)
    title = SECTION_TITLES.get(section, section)
    dropped = (f"{', '.join(HEADERS[shown[i]] for i in gone_at)} not shown at {console} columns "
               "(--width N shows them)") if gone_at else None
    if table_width > console or not all(_fits(a, table_width) for a in (title, dropped) if a is not None):
        return None
    fmt = "   ".join(("{}" if trim else "{:<" + str(widths[j]) + "}") if j == 9 else "{:>" + str(widths[j]) + "}"
                       for j in kept)  # the name (last) left-justified, the numbers right
    head = "\n".join([_padded(title, table_width, trim), fmt.format(*(HEADERS[j] for j in kept)), "─" * table_width, ""])
    return _Layout(kept, fmt, head, _padded(dropped, table_width, trim) if dropped else None, table_width, trim)


def _fits(text: str, width: int) -> bool:
    """Writer.line writes `text` (markup) as it is."""
    w = plain.width(text)
    return w is not None and w <= width and plain.markup_free(text)


def _padded(text: str, width: int, trim: bool = False) -> str:
    return text.rstrip(" ") if trim else text + " " * (width - (plain.width(text) or 0))


def _floats_once(x: np.ndarray, fmt: Callable[[np.ndarray], list[str]]) -> tuple[list[str], np.ndarray]:
    """fmt of each value and the strings' lengths, each distinct value (bit for bit: -0.0 is not 0.0)
    formatted once: a sweep's rows repeat their numbers."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    u, inv = np.unique(bits, return_inverse=True)
    strings = fmt(u.view(np.float64))
    lens = np.fromiter(map(len, strings), dtype=np.intp, count=len(strings))
    return np.array(strings, dtype=object)[inv].tolist(), lens[inv]


def _values_once(values: list[Any], fmt: Callable[[Any], str]) -> tuple[list[str], np.ndarray]:
    """_floats_once for any hashable values (calls, names)."""
    code = {v: i for i, v in enumerate(dict.fromkeys(values))}
    inv = np.fromiter(map(code.__getitem__, values), dtype=np.intp, count=len(values))
    strings = list(map(fmt, code))
    lens = np.fromiter(map(len, strings), dtype=np.intp, count=len(strings))
    return np.array(strings, dtype=object)[inv].tolist(), lens[inv]


def _time_pct(x: np.ndarray) -> list[str]:
    return ["—" if v != v else f"{v:.2f}" for v in x.tolist()]


def _pct2(x: np.ndarray) -> list[str]:
    return [f"{v:.2f}%" for v in (x * 100).tolist()]


def _pct1(x: np.ndarray) -> list[str]:
    return [f"{v:.1f}%" for v in (x * 100).tolist()]


class _Cells:
    """The shown rows' cells, column by column (SPEC's order), their lengths, and each column's
    widest cell per group."""

    def __init__(self, rows: Rows, at: np.ndarray, top: np.ndarray, share: np.ndarray, cum: np.ndarray,
                 full_names: bool) -> None:
        idx = at.tolist()
        calls, names = rows.col("calls"), rows.col("name" if full_names else "short_name")
        got = [
            (np.where(top, "●", "").tolist(), top.astype(np.intp)),
            _floats_once(_floats(rows.col("time_pct"), at), _time_pct),
            _floats_once(share, _pct2),
            _floats_once(cum, _pct1),
            _floats_once(_floats(rows.col("total_ns"), at), durations),
            _values_once([calls[i] for i in idx], count),
            _floats_once(_floats(rows.col("avg_ns"), at), durations),
            _floats_once(_floats(rows.col("min_ns"), at), durations),
            _floats_once(_floats(rows.col("max_ns"), at), durations),
            _values_once(names.take(idx) if isinstance(names, View) else [names[i] for i in idx], str),
        ]
        self.cols = [c for c, _ in got]
        self.lens = [n for _, n in got]
        self.narrow = np.fromiter(map(_narrow_name, self.cols[9]), dtype=bool, count=len(idx))

    def widths(self, starts: np.ndarray) -> np.ndarray:
        """groups x columns: the widest cell of each group (with the header)."""
        out = np.empty((len(starts), len(SPEC)), dtype=np.intp)
        for j, lens in enumerate(self.lens):
            out[:, j] = np.maximum(np.maximum.reduceat(lens, starts), len(HEADERS[j]))
        return out


_NAME_OK: dict[str, bool] = {}


def _narrow_name(name: str) -> bool:
    """A name Writer.table writes as it is, a cell a character (memoised: names repeat)."""
    ok = _NAME_OK.get(name)
    if ok is None:
        ok = plain.width(name) == len(name) and name[-1:] not in ("", " ")  # (the last column: trimmed or not)
        if len(_NAME_OK) < 100_000:
            _NAME_OK[name] = ok
    return ok


def blocks(rows: Rows, pos: Sequence[int], threshold: float, max_rows: int | None, full_names: bool,
           console: int, trim: bool = False) -> dict[Any, list[Block]]:
    """The ranked sections of the profiles whose rows are at `pos`: for each profile its Blocks in
    TIMED_SECTIONS order (a section without rows has none). `trim`: lines without the spaces that
    end them, for a file that drops them (the same bytes come out, with less work)."""
    r = _ranked(rows, pos)
    if r is None:
        return {}
    n = len(r.at)
    sizes = np.diff(np.append(r.starts, n))
    group = np.repeat(np.arange(len(sizes)), sizes)
    top = ((r.cum - r.share) < threshold - 1e-12) & (r.share > 0)
    tops = np.add.reduceat(top.astype(np.intp), r.starts)
    shown_n = sizes if max_rows is None else np.minimum(sizes, np.maximum(max_rows, tops))
    shown = (np.arange(n) - r.starts[group]) < shown_n[group]
    redo = ~np.logical_and.reduceat(r.share == r.share, r.starts) | (shown_n == 0)  # NaN shares: rank_rows redoes
    cells = _Cells(rows, r.at[shown], top[shown], r.share[shown], r.cum[shown], full_names)
    live = np.flatnonzero(shown_n > 0)
    sstarts = np.concatenate(([0], np.cumsum(shown_n[live])[:-1])).astype(np.intp)
    widths = np.zeros((len(sizes), len(SPEC)), dtype=np.intp)
    if len(live):
        widths[live] = cells.widths(sstarts)
        redo[live] |= ~np.logical_and.reduceat(cells.narrow, sstarts)
    lays = _layouts(r.keys, _present(rows, r), widths, console, trim)
    hidden = sizes - shown_n
    for g in np.flatnonzero(hidden > 0).tolist():  # the caption of rows not shown must fit the table
        lay = lays[g]
        if lay is not None and len(_hidden_note(hidden[g])) > lay.width:
            lays[g] = None
    for g in np.flatnonzero(redo).tolist():
        lays[g] = None
    lines = _lines(cells.cols, lays, group[shown])
    summaries = list(map(summary_text, (s for _, s in r.keys), sizes.tolist(), tops.tolist(),
                         _top_shares(r.share, top, r.starts, sizes)))
    ends = np.cumsum(shown_n)
    spans = zip((ends - shown_n).tolist(), ends.tolist(), hidden.tolist())
    out: dict[Any, list[Block]] = {}
    for (profile, section), lay, (a, b, more), summary in zip(r.keys, lays, spans, summaries):
        out.setdefault(profile, []).append(Block(section, None, None) if lay is None
                                           else _block(section, lay, lines[a:b], more, summary, console))
    for got in out.values():
        if len(got) > 1:
            got.sort(key=lambda b: _SECTION_ORDER[b.section])
    return out


def _hidden_note(hidden: int) -> str:
    return f"{hidden} more row(s) below the threshold not shown (--all shows them)"


_LAYOUTS: dict[tuple, _Layout | None] = {}


def _layouts(keys: list[tuple[Any, str]], present: np.ndarray, widths: np.ndarray, console: int,
             trim: bool) -> list[_Layout | None]:
    """Each group's layout, worked out once for each (section, columns present, widths)."""
    if not keys:
        return []
    seen: dict[tuple, _Layout | None] = {}
    out = []
    for (_, section), has, wide in zip(keys, present.tolist(), widths.tolist()):
        key = (section, tuple(has), tuple(wide), console, trim)
        if key not in seen:
            seen[key] = _LAYOUTS[key] if key in _LAYOUTS else _layout(*key)
            if len(_LAYOUTS) < 10_000:
                _LAYOUTS[key] = seen[key]
        out.append(seen[key])
    return out


def _lines(cols: list[list[str]], lays: list[_Layout | None], group: np.ndarray) -> list[str]:
    """Each shown row's line in its group's layout ('' where rich draws the table): the rows of each
    layout formatted in one pass."""
    ids: dict[int, int] = {}
    uses = np.array([-1 if lay is None else ids.setdefault(id(lay), len(ids)) for lay in lays], dtype=np.intp)
    by_use = list({id(lay): lay for lay in lays if lay is not None}.values())  # (in the order of `ids`)
    row_use = uses[group] if len(group) else np.zeros(0, np.intp)
    if len(ids) == 1 and (row_use == 0).all():
        return list(map(by_use[0].fmt.format, *(cols[j] for j in by_use[0].kept)))
    out = np.full(len(group), "", dtype=object)
    order = np.argsort(row_use, kind="stable")  # the rows of each layout together, in row order
    bounds = np.searchsorted(row_use[order], np.arange(len(ids) + 1))
    for u, lay in enumerate(by_use):
        at = order[bounds[u]:bounds[u + 1]].tolist()
        pick = itemgetter(*at) if len(at) > 1 else lambda col, i=at[0]: (col[i],)
        out[at] = list(map(lay.fmt.format, *(pick(cols[j]) for j in lay.kept)))
    return out.tolist()


def _block(section: str, lay: _Layout, lines: list[str], hidden: int, summary: str, console: int) -> Block:
    """A group's table as Writer.table writes it, and its summary line as Writer.line writes it where
    that fits (else the summary apart)."""
    if hidden > 0:
        lines.append(_padded(_hidden_note(hidden), lay.width, lay.trim))
    if lay.dropped:
        lines.append(lay.dropped)
    line = f"  ● {summary}"
    if _fits(line, console):
        lines.append(line)
        return Block(section, lay.head + "\n".join(lines) + "\n", None)
    return Block(section, lay.head + "\n".join(lines) + "\n", summary)
