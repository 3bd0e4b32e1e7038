"""An `ncu --csv --page raw` page read as columns: one wide row per launch, one column per metric.

pyarrow's CSV reader (profconv.parse.columnar) gives each metric column dictionary-encoded; the
page's decimal mark is voted on its distinct cells and each distinct cell is read once, with
pyarrow's compute functions, into the long ncu-metric rows (one per launch x metric, in the order
the row reader gives them) -- no Python object per cell until the rows are written. A page whose
cells leave the C decimal mark in doubt, or hold anything unusual, returns None: the row reader
(`ncu._raw_cells` + `ncu._read`) reads it, with the same output.
"""

from __future__ import annotations

from array import array
from typing import Any

from profconv.parse import columnar, units
from profconv.parse.model import Block
from profconv.parse.table import Rows

# a cell units.number reads as the C locale prints it: digits, an optional '.' decimal part, or
# thousands grouped by ',' (first group not 0); its vote (units.LocaleVote.add) is '.' or nothing,
# but for the one-group cells that read either way ('524.288', '1,024'): undecided
_C_NUMBER = r"^(?:\d+(?:\.\d*)?|[1-9]\d{0,2}(?:,\d{3})+(?:\.\d*)?)$"
_UNDECIDED = r"^[1-9]\d{0,2}[.,]\d{3}$"
_ODD = r"^\s|\s$|\(!\)"  # a cell to clean before it is read


def raw_columns(lines: list[str], start: int, end: int, header: list[str], kname: int) -> list[Block] | None:
    """The ncu-metric block (and the per-kernel GPU block) of the raw page whose header is line
    index `start` and whose rows run to `end`; None where the row reader must read it."""
    from profconv.parse.dialects import ncu

    metric_at = ncu._metric_columns(header)
    if len(set(header)) != len(header) or not metric_at:
        return None
    names = [header[h] for h in metric_at]
    wanted = list(dict.fromkeys([header[0], header[kname], *names]))
    cols = columnar.read_strings("\n".join(lines[start:end]).encode(), wanted)
    if cols is None:
        return None
    first = cols[header[0]]
    has_units = len(first.codes) > 0 and not first.pool[int(first.codes[0])].as_py().strip()
    skip = 1 if has_units else 0
    units_of = [(cols[c].pool[int(cols[c].codes[0])].as_py() or None) if has_units else None for c in names]
    read = _cells([cols[c] for c in names], names, skip, units_of)
    if read is None:
        return None
    values, texts = read
    launches = len(first.codes) - skip
    kernels = cols[header[kname]].values[skip:]
    line_nos = list(range(start + 2 + skip, start + 2 + skip + launches))
    table = _long_rows(kernels, line_nos, names, units_of, values, texts)
    blocks = [Block(section="ncu-metric", table=table, line_start=start + 1, line_end=end)]
    timed = [j for j, m in enumerate(names) if m in ncu.DURATION_METRICS]
    durations = [(kernels[r], values[r * len(names) + j], units_of[j], line_nos[r])
                 for r in range(launches) for j in timed] if timed else []
    summary = ncu.summarize_durations(durations)
    if summary:
        blocks.append(Block(section="gpu", rows=summary, line_start=start + 1, line_end=end))
    return blocks


def _long_rows(kernels: list[str], line_nos: list[int], names: list[str], units_of: list[str | None],
               values: array, texts: list[str | None]) -> Rows:
    """One ncu-metric row per launch x metric, launch by launch."""
    import numpy as np

    m, n = len(names), len(kernels)
    per_launch = np.empty(n, dtype=object)
    per_launch[:] = kernels
    metric = np.empty(m, dtype=object)
    metric[:] = names
    unit = np.empty(m, dtype=object)
    unit[:] = units_of
    lines = np.repeat(np.asarray(line_nos, dtype=np.int64), m).tolist()
    return Rows({"section": ["ncu-metric"] * (n * m), "name": np.repeat(per_launch, m).tolist(),
                 "line_start": lines, "line_end": lines, "metric": np.tile(metric, n).tolist(),
                 "unit": np.tile(unit, n).tolist(), "value": values, "value_text": texts}, n * m)


def _cells(columns: list[columnar.Text], names: list[str], skip: int,
           units_of: list[str | None]) -> tuple[array, list[str | None]] | None:
    """The value (and the text of a cell that is no number) of every cell, launch by launch, read
    once per distinct cell; None when the page's cells do not say '.' is the decimal mark."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from profconv.parse.dialects import ncu

    offsets = np.cumsum([0] + [len(c.pool) for c in columns])
    pool = pa.concat_arrays([c.pool for c in columns]) if columns else pa.array([], pa.string())
    clean = _strip(pool)
    plain = pc.match_substring_regex(clean, _C_NUMBER).to_numpy(zero_copy_only=False)
    durations = [k for k, m in enumerate(names) if units_of[k] in ncu._WHOLE_NS and m in ncu.DURATION_METRICS]
    if not _c_locale(clean, plain, [(offsets[k], offsets[k + 1]) for k in durations]):
        return None
    vals, texts = _numbers(pool, clean, plain)
    codes = np.stack([c.codes[skip:].astype(np.int64) + offsets[k] for k, c in enumerate(columns)], axis=1).ravel()
    values = array("d")
    values.frombytes(vals[codes].tobytes())
    text_pool = np.empty(len(texts), dtype=object)
    text_pool[:] = texts
    return values, text_pool[codes].tolist()


def _strip(pool: Any) -> Any:
    import pyarrow.compute as pc

    if not pc.any(pc.match_substring_regex(pool, _ODD)).as_py():
        return pool
    return pc.utf8_trim_whitespace(pc.replace_substring(pool, "(!)", ""))


def _c_locale(clean: Any, plain: Any, duration_spans: list[tuple[int, int]]) -> bool:
    """Whether the vote of these distinct cells (units.LocaleVote, as ncu._vote casts it) is the C
    locale; `plain`: the cells that match _C_NUMBER. Cells no pattern here decides are voted on
    one by one."""
    import numpy as np
    import pyarrow.compute as pc

    undecided = pc.match_substring_regex(clean, _UNDECIDED).to_numpy(zero_copy_only=False)
    marked = (pc.match_substring(clean, ".").to_numpy(zero_copy_only=False)
              | pc.match_substring(clean, ",").to_numpy(zero_copy_only=False))
    vote = units.LocaleVote()
    vote.dot = int((plain & marked & ~undecided).sum())
    vote.undecided = bool(undecided.any())
    rest = np.flatnonzero(~plain & ~undecided & marked)
    if len(rest):
        vote.add(clean.take(rest).to_pylist())
    for lo, hi in duration_spans:  # a whole number of nanoseconds groups thousands with the other mark
        vote.add_counts(clean.slice(lo, hi - lo).to_pylist())
    return vote.locale() is units.C_LOCALE


def _numbers(pool: Any, clean: Any, plain: Any) -> tuple[Any, list[str | None]]:
    """units.number of every distinct cell (NaN where it is none) and the cell's text where NaN:
    the C-locale numbers (`plain`) cast by pyarrow, the others read one by one as the row reader does."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    vals = np.full(len(pool), np.nan)
    idx = np.flatnonzero(plain)
    if len(idx):
        cells = pc.replace_substring(clean.take(pa.array(idx)), ",", "")
        vals[idx] = pc.cast(cells, pa.float64()).to_numpy(zero_copy_only=False)
    vals[~np.isfinite(vals)] = np.nan
    texts: list[str | None] = [None] * len(pool)
    odd = np.flatnonzero(np.isnan(vals))
    if len(odd):
        from profconv.parse.dialects.ncu import _number_or_text

        for k, cell in zip(odd.tolist(), pool.take(pa.array(odd)).to_pylist()):
            vals[k], texts[k] = _number_or_text(cell)  # '1'234.5', '1.5e+03', 'n/a': as the row reader
    return vals, texts
