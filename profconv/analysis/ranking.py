"""Rank a section by time and mark the rows that together reach a share (the ">90%" set)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Ranked:
    """One profile section ranked by time; `rows` has share, cumulative and in_top columns."""

    profile: int
    section: str
    rows: pd.DataFrame
    top_count: int
    top_share: float  # fraction of the section's time taken by the marked rows
    basis: str  # "total_ns" or "time_pct": what the shares were computed from


def rank(section_rows: pd.DataFrame, threshold: float = 0.90) -> pd.DataFrame:
    """Sort by time and add share (0-1), cumulative share and in_top (True until `threshold` is reached).

    Shares come from total_ns when the tool printed times, else from the printed Time(%).
    """
    df = section_rows.copy()
    times = df["total_ns"].astype("float64")
    if times.notna().any():
        key = times.fillna(0.0)
    else:
        key = df["time_pct"].astype("float64").fillna(0.0)
    total = float(key.sum())
    df["share"] = key / total if total > 0 else 0.0
    df = df.assign(_key=key).sort_values("_key", ascending=False, kind="stable").drop(columns="_key")
    df["cumulative"] = df["share"].cumsum()
    before = df["cumulative"] - df["share"]
    df["in_top"] = (before < threshold - 1e-12) & (df["share"] > 0)
    return df.reset_index(drop=True)


def rank_profile(frame: pd.DataFrame, profile: int, sections: list[str], threshold: float = 0.90) -> list[Ranked]:
    out = []
    for section in sections:
        rows = frame[(frame["profile"] == profile) & (frame["section"] == section)]
        if rows.empty:
            continue
        ranked = rank(rows, threshold)
        top = ranked[ranked["in_top"]]
        basis = "total_ns" if rows["total_ns"].notna().any() else "time_pct"
        out.append(Ranked(profile, section, ranked, len(top), float(top["share"].sum()), basis))
    return out
