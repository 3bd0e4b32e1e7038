"""Shares of a profile section's time, computed where the frame is built (pure, no I/O).

Shares come from the Time column when it is consistent with the printed Time(%) of its source
table; when a table's times contradict its own Time(%) (mislabelled units), that table ranks by
Time(%) and says so. Tables merged into one section (nsys kernel + memcpy reports) each print
Time(%) relative to themselves: the share is over their summed time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profconv.parse.schema import TIMED_SECTIONS

SHARE_COLUMNS = ("share", "cumulative", "in_top", "share_basis")
PCT_TOLERANCE = 5.0  # percentage points between a printed Time(%) and the one its times imply


def inconsistent_tables(rows: pd.DataFrame) -> list[int]:
    """Source tables (by first line) whose Time column contradicts their own printed Time(%)."""
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
    if n_tables <= 1 and rows["time_pct"].notna().all() and inconsistent_tables(rows):
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
    """The frame with share, cumulative, in_top and share_basis filled for every ranked
    (timed) section of every profile; other rows keep them empty."""
    out = frame.copy()
    share = np.full(len(out), np.nan)
    cum = np.full(len(out), np.nan)
    top = pd.array([pd.NA] * len(out), dtype="boolean")
    basis = pd.array([pd.NA] * len(out), dtype="string")
    timed = out["section"].isin(TIMED_SECTIONS).to_numpy()
    if timed.any():
        sub = out.loc[timed]
        pos = pd.Series(np.flatnonzero(timed), index=sub.index)
        for _, rows in sub.groupby(["profile", "section"], sort=False):
            ranked = rank(rows.assign(_pos=pos[rows.index].to_numpy()), threshold)
            at = ranked["_pos"].to_numpy()
            share[at] = ranked["share"].to_numpy()
            cum[at] = ranked["cumulative"].to_numpy()
            top[at] = ranked["in_top"].to_numpy()
            basis[at] = ranked["share_basis"].to_numpy()
    out["share"] = share
    out["cumulative"] = cum
    out["in_top"] = top
    out["share_basis"] = basis
    return out
