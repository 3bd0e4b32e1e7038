"""Two runs or two logs side by side: time in each, the ratio, regressions beyond a threshold."""

from __future__ import annotations

import pandas as pd

from profconv.errors import InputError
from profconv.report import analysis
from profconv.report.inputs import BenchInput, Input, LogInput, RunInput
from profconv.run import bench


def compare(a: Input, b: Input, threshold: float) -> pd.DataFrame:
    """Rows keyed by what both sides share; ratio = B / A; regression when ratio > 1 + threshold."""
    if type(a) is not type(b):
        raise InputError("--compare needs two run records, two bench records or two profiler logs, not a mix")
    if isinstance(a, BenchInput) and isinstance(b, BenchInput):
        key = ["model", "layer", "variant"]
        fa, fb = bench.frame(a.record), bench.frame(b.record)
        ta = fa[fa["status"] == "ok"].set_index(key)["median_s"].rename("a")
        tb = fb[fb["status"] == "ok"].set_index(key)["median_s"].rename("b")
    elif isinstance(a, RunInput) and isinstance(b, RunInput):
        key = ["images", "variant", "layer"]
        ta = analysis.op_times(a.record)
        tb = analysis.op_times(b.record)
        ta = ta[ta["status"] == "ok"].set_index(key)["median_s"].rename("a")
        tb = tb[tb["status"] == "ok"].set_index(key)["median_s"].rename("b")
    else:
        assert isinstance(a, LogInput) and isinstance(b, LogInput)
        key = ["section", "name"]
        fa, fb = a.profiles.frame, b.profiles.frame
        ta = fa[fa["section"].isin(["gpu", "api"])].groupby(key)["total_ns"].sum().rename("a") / 1e9
        tb = fb[fb["section"].isin(["gpu", "api"])].groupby(key)["total_ns"].sum().rename("b") / 1e9
    df = pd.concat([ta, tb], axis=1).reset_index()
    df["ratio"] = df["b"] / df["a"]
    df["regression"] = df["ratio"] > 1.0 + threshold
    df["only_in"] = df.apply(lambda r: "A" if pd.isna(r["b"]) else ("B" if pd.isna(r["a"]) else ""), axis=1)
    return df.sort_values(key, kind="stable").reset_index(drop=True)


def to_markdown(df: pd.DataFrame, a_name: str, b_name: str, threshold: float) -> str:
    from profconv.report.markdown import table

    keys = [c for c in df.columns if c not in ("a", "b", "ratio", "regression", "only_in")]
    rows = []
    for r in df.to_dict("records"):
        flag = "**REGRESSION**" if r["regression"] else (f"only in {r['only_in']}" if r["only_in"] else "")
        rows.append([*(f"{r[k]:,}" if isinstance(r[k], int) else str(r[k]) for k in keys),
                     "—" if pd.isna(r["a"]) else f"{r['a']:.6f} s", "—" if pd.isna(r["b"]) else f"{r['b']:.6f} s",
                     "—" if pd.isna(r["ratio"]) else f"{r['ratio']:.3f}×", flag])
    n_reg = int(df["regression"].sum())
    head = (f"# Comparison\n\nA: `{a_name}`  \nB: `{b_name}`  \nratio = B / A; a regression is a ratio above "
            f"{1 + threshold:.3f} ({n_reg} found).\n\n")
    return head + table([*keys, "A", "B", "ratio", ""], rows, ["l"] * len(keys) + ["r", "r", "r", "l"]) + "\n"
