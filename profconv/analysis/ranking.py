"""Rank a section by time and mark the rows that together reach a share (the ">90%" set).

The share arithmetic lives with the frame (profconv/parse/shares.py: every parsed frame carries
share, cumulative, in_top and share_basis); this module ranks one profile's sections for renderers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from profconv.parse.shares import SHARE_COLUMNS, add_shares, basis_of, inconsistent_tables, rank

__all__ = ["Ranked", "add_shares", "basis_of", "inconsistent_tables", "rank", "rank_profile"]


@dataclass(frozen=True)
class Ranked:
    """One profile section ranked by time; `rows` has share, cumulative and in_top columns."""

    profile: int
    section: str
    rows: pd.DataFrame
    top_count: int
    top_share: float  # fraction of the section's time taken by the marked rows
    basis: str  # "total_ns" or "time_pct": what the shares were computed from


def rank_profile(frame: pd.DataFrame, profile: int, sections: list[str], threshold: float = 0.90) -> list[Ranked]:
    out = []
    for section in sections:
        rows = frame[(frame["profile"] == profile) & (frame["section"] == section)]
        if rows.empty:
            continue
        ranked = rank(rows.drop(columns=[c for c in SHARE_COLUMNS if c in rows.columns]), threshold)
        top = ranked[ranked["in_top"]]
        out.append(Ranked(profile, section, ranked, len(top), float(top["share"].sum()),
                          str(ranked["share_basis"].iloc[0])))
    return out
