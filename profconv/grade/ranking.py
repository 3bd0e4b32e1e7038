"""What a course publishes from a grade: the nightly ranking, and each student's history (pure).

`ranking(board)` -- the ranking file (ranking.csv), one row per submission x model, ranked:
  rank, submission, model, verdict, rule (the course rule that decided a failure), total_ms, one
  <layer>_ms per conv layer, runs and spread_pct (the repeat runs and their (max - min) / total),
  optimisations (what the kernel's SASS and launches show), vs_previous and regression (with
  --previous). No paths, hosts or devices: a file to post for the class.

`history(current, previous)` -- every grade of the same class, oldest first (history.csv): one row per
  submission x model x grade: grade (the directory's name), created, verdict, rank, total_s, and
  change (the total over the same submission's total in the grade before; NaN when either is not ok).

`with_history(board, previous)` -- the board with each submission's totals before and its regressions:
  previous_total_s (the latest earlier grade in which it was ok), best_before_s (its best total in any
  earlier grade), vs_previous (total_s / previous_total_s), regression: True when it was ok before and
  is not now, or when its total grew by more than `threshold` (default 5%) over previous_total_s and
  beyond its own spread (repeat runs); False otherwise; NA when it has no earlier ok grade.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

REGRESSION = 0.05


@dataclass(frozen=True)
class Grade:
    """An earlier grade of the class: its label (the directory's name), when it was made, its board."""

    label: str
    created: str | None
    board: pd.DataFrame


def _layers(board: pd.DataFrame) -> list[str]:
    return [c for c in board.columns if c.startswith("op_")]


def ranking(board: pd.DataFrame) -> pd.DataFrame:
    """The published ranking (see the module docstring)."""
    out = pd.DataFrame({"rank": board["rank"], "submission": board["submission"], "model": board["model"],
                        "verdict": board["verdict"],
                        "rule": board["rule"] if "rule" in board.columns else None,
                        "total_ms": board["total_s"] * 1e3})
    for c in _layers(board):
        out[f"{c[3:]}_ms"] = board[c] * 1e3
    if "runs" in board.columns:
        out["runs"] = board["runs"]
        out["spread_pct"] = board["spread"] * 100
    out["optimisations"] = board["optimisations"] if "optimisations" in board.columns else None
    for c in ("vs_previous", "regression"):
        if c in board.columns:
            out[c] = board[c]
    return out.reset_index(drop=True)


def _ok_totals(board: pd.DataFrame) -> pd.Series:
    ok = board[(board["verdict"] == "ok") & board["total_s"].notna()].drop_duplicates(["submission", "model"])
    return ok.set_index(["submission", "model"])["total_s"]


def with_history(board: pd.DataFrame, previous: list[Grade], threshold: float = REGRESSION) -> pd.DataFrame:
    """The board with previous_total_s, best_before_s, vs_previous and regression (module docstring)."""
    out = board.copy()
    keys = [(str(s), str(m)) for s, m in zip(out["submission"], out["model"])]
    latest: dict[tuple[str, str], float] = {}
    best: dict[tuple[str, str], float] = {}
    for g in previous:  # oldest first: a later grade's total replaces an earlier one
        totals = _ok_totals(g.board)
        for (sub, model), total in zip(totals.index, totals.to_numpy()):
            key = (str(sub), str(model))
            latest[key] = float(total)
            best[key] = min(best.get(key, float("inf")), float(total))
    out["previous_total_s"] = [latest.get(k, float("nan")) for k in keys]
    out["best_before_s"] = [best.get(k, float("nan")) for k in keys]
    out["vs_previous"] = out["total_s"] / out["previous_total_s"]
    spread = out["spread"].fillna(0.0) if "spread" in out.columns else pd.Series(0.0, index=out.index)
    flags: list[object] = []
    for i, key in enumerate(keys):
        if key not in latest:
            flags.append(pd.NA)
        elif out["verdict"].iloc[i] != "ok":
            flags.append(True)
        else:
            flags.append(bool(out["vs_previous"].iloc[i] > 1 + max(threshold, float(spread.iloc[i]))))
    out["regression"] = pd.Series(flags, index=out.index, dtype="boolean")
    return out


def history(current: Grade, previous: list[Grade]) -> pd.DataFrame:
    """Every grade of the class, oldest first, one row per submission x model x grade (module docstring)."""
    frames = []
    for g in [*previous, current]:
        b = g.board
        frames.append(pd.DataFrame({"submission": b["submission"], "model": b["model"], "grade": g.label,
                                    "created": g.created, "verdict": b["verdict"], "rank": b["rank"],
                                    "total_s": b["total_s"]}))
    df = pd.concat(frames, ignore_index=True)
    order = {g.label: i for i, g in enumerate([*previous, current])}
    df["_o"] = df["grade"].map(order)
    df = df.sort_values(["submission", "model", "_o"], kind="stable").drop(columns="_o").reset_index(drop=True)
    ok_total = df["total_s"].where(df["verdict"] == "ok")
    df["change"] = ok_total / ok_total.groupby([df["submission"], df["model"]]).shift(1)
    return df
