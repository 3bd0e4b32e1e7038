"""Shares of a profile section's time, computed where the frame is built (pure, no I/O).

Shares come from the Time column when it is consistent with the printed Time(%) of its source
table; when a table's times contradict its own Time(%) (mislabelled units), that table ranks by
Time(%) and says so. Tables merged into one section (nsys kernel + memcpy reports) each print
Time(%) relative to themselves: the share is over their summed time.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from profconv.parse import native
from profconv.parse.colviews import Sparse, View
from profconv.parse.schema import TIMED_SECTIONS
from profconv.parse.table import Rows

if TYPE_CHECKING:
    import pandas as pd

SHARE_COLUMNS = ("share", "cumulative", "in_top", "share_basis")
PCT_TOLERANCE = 5.0  # percentage points between a printed Time(%) and the one its times imply


def inconsistent_tables(rows: pd.DataFrame) -> list[int]:
    """Source tables (by first line) whose Time column contradicts their own printed Time(%)."""
    import numpy as np
    import pandas as pd

    bad = []
    key = rows["table"] if "table" in rows.columns else pd.Series(0, index=rows.index)
    for table, grp in rows.groupby(key.fillna(0).astype("int64"), sort=False):
        pct = grp["time_pct"].astype("float64")
        t = grp["total_ns"].astype("float64")
        both = pct.notna() & t.notna()
        total = float(t[both].sum())
        if both.sum() < 2 or total <= 0 or float(pct[both].sum()) < 50.0:
            continue
        implied = 100.0 * t[both] / total * (float(pct[both].sum()) / 100.0)
        if (np.abs(pct[both] - implied) > PCT_TOLERANCE).any():
            bad.append(int(table))
    return bad


def basis_of(rows: pd.DataFrame) -> str:
    """What a section's shares come from: its times, unless they contradict the printed Time(%)."""
    times = rows["total_ns"].astype("float64")
    if not times.notna().any():
        return "time_pct"
    n_tables = rows["table"].nunique(dropna=True) if "table" in rows.columns else 1
    # rows printed '<0.01' have no Time(%) value: they rank as 0 when the shares come from Time(%)
    if n_tables <= 1 and int(rows["time_pct"].notna().sum()) >= 2 and inconsistent_tables(rows):
        return "time_pct"
    return "total_ns"


def rank(section_rows: pd.DataFrame, threshold: float = 0.90, basis: str | None = None) -> pd.DataFrame:
    """Sort by time and add share (0-1), cumulative share and in_top (True until `threshold` is reached)."""
    df = section_rows.copy()
    basis = basis or basis_of(df)
    key = df[basis].astype("float64").fillna(0.0)
    total = float(key.sum())
    df["share"] = key / total if total > 0 else 0.0
    df = df.assign(_key=key).sort_values("_key", ascending=False, kind="stable").drop(columns="_key")
    df["cumulative"] = df["share"].cumsum()
    before = df["cumulative"] - df["share"]
    df["in_top"] = (before < threshold - 1e-12) & (df["share"] > 0)
    df["share_basis"] = basis
    return df.reset_index(drop=True)


def add_shares(frame: pd.DataFrame, threshold: float = 0.90) -> pd.DataFrame:
    """The frame with share, cumulative, in_top and share_basis filled for every ranked (timed)
    section of every profile; other rows keep them empty. Vectorised: one pass however many profiles.
    The columns are set on `frame` itself (no copy of a large trace), which is returned."""
    import numpy as np
    import pandas as pd

    out = frame
    n = len(out)
    share = np.full(n, np.nan)
    cum = np.full(n, np.nan)
    top = np.zeros(n, dtype=bool)
    basis = np.full(n, None, dtype=object)
    timed = out["section"].isin(TIMED_SECTIONS).fillna(False).to_numpy(dtype=bool)
    if timed.any():
        pos = np.flatnonzero(timed)
        d = _timed_frame(out.loc[timed])
        by_pct = _ranked_by_pct(d)
        key = np.nan_to_num(np.where(by_pct, d["p"].to_numpy(), d["t"].to_numpy()), nan=0.0)
        d["key"] = key
        g = ["profile", "section"]
        total = d.groupby(g)["key"].transform("sum").to_numpy()
        sh = np.divide(key, total, out=np.zeros_like(key), where=total > 0)
        d["share"] = sh
        d["order"] = np.arange(len(d))
        ranked = d.sort_values(["profile", "section", "key", "order"], ascending=[True, True, False, True],
                               kind="stable")
        c = ranked.groupby(g)["share"].cumsum().to_numpy()
        rs = ranked["share"].to_numpy()
        at = pos[ranked["order"].to_numpy()]
        share[pos] = sh
        cum[at] = c
        top[at] = ((c - rs) < threshold - 1e-12) & (rs > 0)
        basis[pos] = np.where(by_pct, "time_pct", "total_ns")
    out["share"] = share
    out["cumulative"] = cum
    out["in_top"] = pd.array(np.where(timed, top, None), dtype="boolean")  # type: ignore[call-overload]
    out["share_basis"] = pd.array(basis, dtype="string")
    return out


def _timed_frame(sub: pd.DataFrame) -> pd.DataFrame:
    """The ranked sections' rows as the columns ranking needs: profile, section, source table,
    printed Time(%) (p) and time (t)."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame({
        "profile": sub["profile"].to_numpy(),
        "section": sub["section"].astype(object).to_numpy(),
        "table": sub["table"].fillna(-1).to_numpy(dtype="int64") if "table" in sub else 0,
        "p": sub["time_pct"].to_numpy(dtype="float64", na_value=np.nan),
        "t": sub["total_ns"].to_numpy(dtype="float64", na_value=np.nan),
    })


def _ranked_by_pct(d: pd.DataFrame):
    """Per row, whether its section is ranked by the printed Time(%): it has no times, or it is one
    source table whose Time column contradicts its Time(%)."""
    g, gt = ["profile", "section"], ["profile", "section", "table"]
    both = d["p"].notna() & d["t"].notna()
    d["bt"] = d["t"].where(both)
    d["bp"] = d["p"].where(both)
    d["both"] = both
    tsum = d.groupby(gt)["bt"].transform("sum")
    psum = d.groupby(gt)["bp"].transform("sum")
    nboth = d.groupby(gt)["both"].transform("sum")
    implied = 100.0 * d["t"] / tsum.where(tsum > 0) * (psum / 100.0)
    d["bad"] = both & ((d["p"] - implied).abs() > PCT_TOLERANCE) & (nboth >= 2) & (tsum > 0) & (psum >= 50.0)
    d["pna"] = d["p"].notna()
    d["tna"] = d["t"].notna()
    grp = d.groupby(g)
    any_bad = grp["bad"].transform("any")
    n_tables = grp["table"].transform("nunique")
    n_pct = grp["pna"].transform("sum")  # '<0.01' rows have none: they rank as 0 by Time(%)
    has_time = grp["tna"].transform("any")
    return (~has_time | ((n_tables <= 1) & (n_pct >= 2) & any_bad)).to_numpy(dtype=bool)


def _kahan(values) -> float:
    """A sum as pandas' groupby sum takes it (Kahan-compensated, NaN skipped): the same bits."""
    total = comp = 0.0
    for v in values:
        if v != v:
            continue
        y = v - comp
        t = total + y
        comp = t - total - y
        if comp != comp:
            comp = 0.0
        total = t
    return total


Notable = list[tuple[Any, Any, list[int]]]  # (profile, section, rows) of a ranked section worth a note


def share_rows(rows: Rows, threshold: float = 0.90) -> Rows:
    """`add_shares` on plain columns (no pandas): share, cumulative, in_top and share_basis of every
    ranked (timed) section of every profile, the same numbers to the bit; set on `rows`, returned."""
    return ranked(rows, threshold)[0]


def ranked(rows: Rows, threshold: float = 0.90) -> tuple[Rows, Notable]:
    """`share_rows`, and the ranked sections that may need a note next to their table (merged from
    several source tables, or ranked by Time(%)): (profile, section, row positions), in the order
    they first appear. The C accelerator (profconv.parse._kahan, looked up at each call) does the
    work where it was built, to the bit what the Python path below does."""
    section = rows.col("section")
    if isinstance(section, View):  # a page's columns kept as views: its few timed rows ranked alone
        return _ranked_part(rows, section.positions(TIMED_SECTIONS), threshold)
    mod = native.load("_kahan")
    if mod is not None:
        missing = array("d", [NAN])
        got = mod.rank(rows.col("section"), rows.col("profile"), rows.col("table"), rows.col("time_pct"),
                       rows.col("total_ns"), TIMED_SECTIONS, threshold, missing * rows.n, missing * rows.n)
        if got is not None:  # None: values only Python may take (ints, NumPy scalars): its path below
            share, cum, top, basis, notable = got  # the shares written as doubles: no float object a row
            rows.set("share", share)
            rows.set("cumulative", cum)
            rows.set("in_top", top)
            rows.set("share_basis", basis)
            return rows, notable
    return _ranked(rows, threshold)


def _ranked_part(rows: Rows, timed: Sequence[int], threshold: float) -> tuple[Rows, Notable]:
    """`ranked` of rows whose timed rows are only those at `timed`: those ranked (as a Rows of
    their own: each ranked group is the same rows in the same order), the ranking columns missing
    elsewhere without a value a row (colviews.Sparse)."""
    at = list(timed)
    sub, notable = ranked(rows.take(at), threshold)
    n = rows.n
    rows.set("share", Sparse(NAN, n, at, sub.col("share")))
    rows.set("cumulative", Sparse(NAN, n, at, sub.col("cumulative")))
    rows.set("in_top", Sparse(None, n, at, sub.col("in_top")))
    rows.set("share_basis", Sparse(None, n, at, sub.col("share_basis")))
    return rows, [(number, sec, [at[i] for i in members]) for number, sec, members in notable]


_TIMED = frozenset(TIMED_SECTIONS)


def _ranked(rows: Rows, threshold: float) -> tuple[Rows, Notable]:
    """`ranked` in Python."""
    n = rows.n
    section = rows.col("section")
    timed = [] if _TIMED.isdisjoint(section) else list(compress(range(n), map(_TIMED.__contains__, section)))
    out = _Ranks(n)
    notable: Notable = []
    if timed:
        profile = rows.col("profile")
        groups: dict[tuple, list[int]] = {}
        for i in timed:
            groups.setdefault((profile[i], section[i]), []).append(i)
        for (number, sec), members in groups.items():
            if _rank_group(rows, members, threshold, out):
                notable.append((number, sec, members))
    rows.set("share", out.share)
    rows.set("cumulative", out.cum)
    rows.set("in_top", out.top)
    rows.set("share_basis", out.basis)
    return rows, notable


class _Ranks:
    """The four ranking columns being filled (empty for rows of sections that are not ranked)."""

    def __init__(self, n: int) -> None:
        self.share = [NAN] * n
        self.cum = [NAN] * n
        self.top: list[bool | None] = [None] * n
        self.basis: list[str | None] = [None] * n


def _by_source_table(table: Sequence[Any], members: list[int]) -> dict[int, list[int]]:
    by_table: dict[int, list[int]] = {}
    for i in members:
        t = table[i]
        by_table.setdefault(-1 if t is None else t, []).append(i)
    return by_table


def _contradicts(pct: Sequence[float], tot: Sequence[float], tm: list[int]) -> bool:
    """Whether a source table's Time column contradicts its printed Time(%) (some row off by more
    than PCT_TOLERANCE from its share of the table's time)."""
    both = [i for i in tm if pct[i] == pct[i] and tot[i] == tot[i]]
    if len(both) < 2:
        return False
    tsum = _kahan(tot[i] for i in both)
    psum = _kahan(pct[i] for i in both)
    if not (tsum > 0 and psum >= 50.0):
        return False
    return any(abs(pct[i] - 100.0 * tot[i] / tsum * (psum / 100.0)) > PCT_TOLERANCE for i in both)


def _rank_group(rows: Rows, members: list[int], threshold: float, out: _Ranks) -> bool:
    """Share, cumulative share and the top set of one ranked section; whether it needs a note
    (merged from several source tables, or ranked by Time(%))."""
    pct, tot = rows.col("time_pct"), rows.col("total_ns")
    by_table = _by_source_table(rows.col("table"), members)
    any_bad = any(_contradicts(pct, tot, tm) for tm in by_table.values())
    has_time = any(tot[i] == tot[i] for i in members)
    n_pct = sum(1 for i in members if pct[i] == pct[i])  # '<0.01' rows have none: 0 by Time(%)
    by_pct = not has_time or (len(by_table) <= 1 and n_pct >= 2 and any_bad)
    src = pct if by_pct else tot
    keys = [src[i] for i in members]
    keys = [v if v == v else 0.0 for v in keys]
    total = _kahan(keys)
    how = "time_pct" if by_pct else "total_ns"
    share = out.share
    for i, v in zip(members, keys):
        share[i] = v / total if total > 0 else 0.0
        out.basis[i] = how
    acc = comp = 0.0
    # stable: file order among equal times
    for _, i in sorted(zip([-v for v in keys], members), key=itemgetter(0)):
        y = share[i] - comp
        t = acc + y
        comp = t - acc - y
        if comp != comp:
            comp = 0.0
        acc = t
        out.cum[i] = acc
        out.top[i] = (acc - share[i]) < threshold - 1e-12 and share[i] > 0
    return len(by_table) > 1 or by_pct


NAN = float("nan")
