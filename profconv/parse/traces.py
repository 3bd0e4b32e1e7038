"""What trace rows add up to: a per-name summary, as the profiler's own summary table would be.

Shared by every dialect that reads a trace (nvprof --print-gpu-trace / --print-api-trace, nsys
cuda_gpu_trace / cuda_api_trace / gputrace, CSV and console tables): the summary is what ranks the
kernels and memcopies of a trace in the terminal view, and its rows go to --json / --csv and
`.frame` like any summary's (section gpu or api). Pure: rows in, a block out.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections import Counter
from typing import Any

from profconv.parse import native
from profconv.parse.model import Block
from profconv.parse.names import strip_correlation
from profconv.parse.table import Rows

NAN = float("nan")
_CORRELATION = re.compile(r"\[\d+\]\n")  # a [correlation id] ending a name (names joined by newlines)


def base_codes(names: list[str], index: dict[str, int]) -> list[int]:
    """Per name, the code of its base name (correlation id dropped), adding new bases to `index`
    (codes are numbered in order of first appearance)."""
    distinct = dict.fromkeys(names)
    if len(distinct) * 8 <= len(names):  # few names, many rows (nsys; API traces): each name once
        code_of = {}
        for n in distinct:
            code_of[n] = index.setdefault(strip_correlation(n), len(index))
        return list(map(code_of.__getitem__, names))
    joined = "\n".join(names)
    if "]" not in joined:
        bases = names
    elif "\x00" in joined or "])" in joined or len(joined.split("\n")) != len(names):
        bases = [strip_correlation(n) for n in names]
    else:  # one pass in C: each id becomes a NUL, the spaces before a NUL go with it
        joined = _CORRELATION.sub("\x00\n", joined + "\n")
        while " \x00" in joined:
            joined = joined.replace(" \x00", "\x00")
        bases = joined.replace("\x00", "").split("\n")
        bases.pop()
    for b in dict.fromkeys(bases):
        index.setdefault(b, len(index))
    return list(map(index.__getitem__, bases))


def text_bases(names: Any) -> tuple[Any, list[str]] | None:
    """base_codes of a dictionary-encoded name column (profconv.parse.columnar.Text, its pool in
    order of first appearance): each distinct name's base once, the codes by one NumPy take. None
    where the pool is in another order."""
    if not names.in_order():
        return None
    import numpy as np

    index: dict[str, int] = {}
    of_pool = np.fromiter((index.setdefault(strip_correlation(k), len(index)) for k in names.distinct),
                          dtype=np.int64, count=len(names.distinct))
    return of_pool[names.codes], list(index)


def _row_by_row(codes: list[int], t, lines, ends) -> dict[int, list]:
    """Per name code: [count, n timed, sum, compensation, min, max, first line, last line]."""
    acc: dict[int, list] = {}
    for k, code in enumerate(codes):
        v = t[k]
        ln = lines[k]
        a = acc.get(code)
        if a is None:
            a = acc[code] = [0, 0, 0.0, 0.0, NAN, NAN, ln, ln]
        a[0] += 1
        if v == v:
            a[1] += 1
            y = v - a[3]
            s = a[2] + y
            a[3] = s - a[2] - y
            if a[3] != a[3]:
                a[3] = 0.0
            a[2] = s
            if not (a[4] <= v):
                a[4] = v
            if not (a[5] >= v):
                a[5] = v
        if ln < a[6]:
            a[6] = ln
        if ends[k] > a[7]:
            a[7] = ends[k]
    return acc


def _by_name(codes: list[int], k: int, t, lines, ends) -> dict[int, list]:
    """The same as _row_by_row, bit for bit (the same Kahan sum over the same values in the same
    order), a name at a time: the rows put in name order by one stable sort (C), min/max/count by C
    loops, only the sum's loop in Python. Codes are numbered in order of first appearance (base_codes)."""
    n = len(codes)
    order = sorted(range(n), key=codes.__getitem__)  # stable: file order within a name
    vals = list(map(t.__getitem__, order))
    in_order = isinstance(lines, range) or list(lines) == sorted(lines)
    in_order = in_order and (ends is lines or isinstance(ends, range) or list(ends) == sorted(ends))
    acc: dict[int, list] = {}
    lo = 0
    for code, m in sorted(Counter(codes).items()):
        group = vals[lo : lo + m]
        total = sum(group)
        timed = group if total == total else [v for v in group if v == v]  # NaN: a row without a duration
        if timed is group and 0.0 <= total < EXACT and _integral(group) and min(group) >= 0.0:
            s, c = total, 0.0  # whole numbers (nsys's ns) summing below 2**53: every step exact, Kahan's sum is this
        else:
            s = c = 0.0
            for v in timed:
                y = v - c
                u = s + y
                c = u - s - y
                s = u
            if c != c:  # an overflow on the way: the row-by-row loop's reading
                return _row_by_row(codes, t, lines, ends)
        rows = order[lo : lo + m]
        if in_order:
            first, last = lines[rows[0]], ends[rows[-1]]
        else:
            first, last = min(map(lines.__getitem__, rows)), max(map(ends.__getitem__, rows))
        acc[code] = [m, len(timed), s, c, min(timed) if timed else NAN, max(timed) if timed else NAN, first, last]
        lo += m
    return acc


EXACT = 2.0**53  # below this every whole number is a double, and so is every sum of them


def _by_name_np(codes: Any, t: Any, lines: Any, ends: Any) -> dict[int, list] | None:
    """_by_name with NumPy, where its result is the same bit for bit without the Kahan loop: every
    duration a whole number of nanoseconds (nsys), none missing, their sum below 2**53 (every partial
    sum exact in any order), rows in line order (`lines`, `ends`: ranges). None elsewhere, or where
    NumPy is not loaded already (a process that reads columns with pyarrow has it)."""
    np = sys.modules.get("numpy")
    if np is None or type(t) is not array or not isinstance(lines, range) or not isinstance(ends, range):
        return None
    v = np.frombuffer(t, dtype=np.float64)
    n = len(v)
    if not n or len(codes) != n or not (np.isfinite(v).all() and v.min() >= 0.0 and v.sum() < EXACT
                                        and (v == np.floor(v)).all()):
        return None
    c = np.asarray(codes, dtype=np.int64)
    few = 0 <= c.min() and c.max() < 1 << 16  # (a stable sort of 16-bit keys is NumPy's radix sort, ~3x faster)
    order = np.argsort(c.astype(np.uint16) if few else c, kind="stable")  # file order within a name
    sc, sv = c[order], v[order]
    starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    last = np.r_[starts[1:], n] - 1
    sums = np.add.reduceat(sv, starts).tolist()
    mins = np.minimum.reduceat(sv, starts).tolist()
    maxs = np.maximum.reduceat(sv, starts).tolist()
    counts = (last - starts + 1).tolist()
    firsts, lasts = order[starts].tolist(), order[last].tolist()
    return {code: [m, m, s, 0.0, lo, hi, lines[a], ends[b]]
            for code, m, s, lo, hi, a, b in zip(sc[starts].tolist(), counts, sums, mins, maxs, firsts, lasts)}


def _by_name_c(codes: Any, t: Any, lines: Any, ends: Any, k: int) -> dict[int, list] | None:
    """_by_name in one C pass (profconv.parse._bytescan.by_name: the same Kahan steps in the same
    order, per name in file order; first and last lines as min and max, which _by_name's are too),
    for codes in a list or an array of int64, durations in an array of doubles, lines and ends lists of ints or ranges.
    None where it is not built, for other columns, or where a sum overflowed (_by_name reads those
    row by row)."""
    scan = native.load("_bytescan")
    if (scan is None or not hasattr(scan, "by_name") or type(codes) not in (list, array) or type(t) is not array
            or t.typecode != "d" or type(lines) not in (list, range) or type(ends) not in (list, range)):
        return None
    got = scan.by_name(codes, t, lines, ends, k)
    return dict(got) if got is not None else None


def _integral(values: list) -> bool:
    """Every value a float holding a whole number (a C loop)."""
    try:
        return all(map(float.is_integer, values))
    except TypeError:  # an int, a NumPy scalar: the loop takes it
        return False


def _plain(col):
    """A column read one value at a time: a NumPy array (pandas' reader) as Python numbers."""
    return col.tolist() if type(col).__module__ == "numpy" else col


def summarize_trace(trace: Rows, section: str, bases: tuple[Any, list[str]] | None = None) -> Block:
    """Aggregate trace rows per name (correlation ids dropped), as nvprof's summary would: calls,
    total (Kahan-summed as pandas does; no total when no event had a duration), avg, min, max,
    the lines the name's rows span; largest total first. `section` is gpu (a GPU trace) or api (an
    API trace); Unified Memory events of an nvprof GPU trace (page faults, UM memcpy) go to the
    unified-memory section. `bases`: the rows' base-name codes and the distinct base names, when
    the reader already has them."""
    if bases is None:
        index: dict[str, int] = {}
        names = trace.col("name")
        codes = base_codes(names if isinstance(names, list) else list(map(str, names)), index)
        uniques = list(index)
    else:
        codes, uniques = bases
    t = _plain(trace.col("total_ns"))
    lines = _plain(trace.col("line_start"))
    ends = _plain(trace.col("line_end")) if trace.has("line_end") else lines
    acc = _by_name_np(codes, t, lines, ends)
    if acc is None:
        acc = _by_name_c(codes, t, lines, ends, len(uniques))
    if acc is None:
        acc = _by_name(codes if isinstance(codes, list) else codes.tolist(), len(uniques), t, lines, ends)
    recs = []
    for code, a in acc.items():
        total = a[2] if a[1] else NAN
        avg = a[2] / a[1] if a[1] else NAN
        recs.append((uniques[code], a[0], avg, a[4], a[5], a[6], a[7], total))
    # by total, largest first, events without a total last (file order among equals)
    recs.sort(key=lambda r: (r[7] != r[7], -r[7] if r[7] == r[7] else 0.0))
    table = Rows.from_tuples(recs, ["name", "calls", "avg_ns", "min_ns", "max_ns", "line_start", "line_end", "total_ns"],
                             {"section": section})
    if section == "gpu":  # nvprof's own summary keeps Unified Memory events out of GPU activities
        table.cols["section"] = ["unified-memory" if r[0].startswith("[Unified Memory") else section for r in recs]
    return Block(section=section, table=table, line_start=min(r[5] for r in recs), line_end=max(r[6] for r in recs))
