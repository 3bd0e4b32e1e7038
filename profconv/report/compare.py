"""Two runs, two bench records or two logs side by side: time in each, the ratio, regressions.

Rows come in ladder order (images, then the variants in the order the run lists them, then layers in
model order), not alphabetically. Runs of different models are refused: their layers have different
shapes, so pairing them would report invented regressions; a layer whose shape differs between A
and B is not paired (listed as only in A and only in B, with a warning).

The decision for each pair of records is taken on the stored samples (profconv/analysis/stats.py:
Mann-Whitney U at `alpha` and a minimum effect of `threshold`); profiler logs have no samples, so
their rows get the ratio alone, marked untested. A different GPU, driver, CUDA runtime or cuDNN on
the two sides is warned about (df.attrs["warnings"])."""

from __future__ import annotations

import pandas as pd

from profconv.analysis import comparison, runs
from profconv.analysis.stats import compare_samples
from profconv.errors import InputError
from profconv.records import to_builtins
from profconv.render.document import Column, Document, Paragraph, Section, Table
from profconv.report.inputs import BenchInput, Input, LogInput, RunInput
from profconv.run import bench

COLUMNS = ["a", "b", "ratio", "regression", "only_in", "p_value", "verdict", "why"]


def _ordered(df: pd.DataFrame, orders: dict[str, list]) -> pd.DataFrame:
    keys = []
    for col, order in orders.items():
        rank = {v: i for i, v in enumerate(dict.fromkeys(order))}
        df[f"_{col}"] = df[col].map(lambda v, rank=rank: rank.get(v, len(rank)))
        keys.append(f"_{col}")
    return df.sort_values(keys, kind="stable").drop(columns=keys).reset_index(drop=True)


def _check_same_model(a: RunInput, b: RunInput) -> None:
    ma, mb = a.record.model.name, b.record.model.name
    if ma != mb:
        raise InputError(f"--compare: A is a run of {ma}, B of {mb}: their conv layers have different shapes; "
                         "compare two runs of the same model")


def _samples(rows: pd.DataFrame, key: list[str]) -> dict[tuple, list[float]]:
    return {tuple(r[k] for k in key): list(r["samples"]) for r in rows.to_dict("records")}


def _decide(df: pd.DataFrame, key: list[str], sa: dict, sb: dict, threshold: float, alpha: float) -> pd.DataFrame:
    """p_value, verdict, why and regression per paired row (analysis/stats.compare_samples)."""
    rows: list[tuple[float | None, str, str, bool]] = []  # p_value, verdict, why, regression
    for r in df.to_dict("records"):
        k = tuple(r[c] for c in key)
        if r["only_in"]:
            rows.append((None, f"only in {r['only_in']}", "", False))
            continue
        d = compare_samples(sa.get(k, []), sb.get(k, []), threshold, alpha)
        if d.verdict == "no-samples":
            reg = bool(r["ratio"] > 1.0 + threshold)
            rows.append((None, "regression (untested)" if reg else "same (untested)", d.why, reg))
        else:
            rows.append((d.p_value, d.verdict, d.why, d.verdict == "regression"))
    cols = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return df.assign(p_value=pd.Series(cols[0], index=df.index, dtype="float64"), verdict=list(cols[1]),
                     why=list(cols[2]), regression=list(cols[3]))


def compare(a: Input, b: Input, threshold: float, alpha: float = 0.05) -> pd.DataFrame:
    """Rows keyed by what both sides share; ratio = B / A; the decision per row from the samples."""
    if type(a) is not type(b):
        raise InputError("--compare needs two run records, two bench records or two profiler logs, not a mix")
    orders: dict[str, list] = {}
    if isinstance(a, BenchInput) and isinstance(b, BenchInput):
        key = ["model", "layer", "shape", "variant"]
        fa, fb = bench.frame(a.record), bench.frame(b.record)
        fa, fb = fa[fa["op"] == "conv"], fb[fb["op"] == "conv"]
        ta = fa[fa["status"] == "ok"].set_index(key)["median_s"].rename("a")
        tb = fb[fb["status"] == "ok"].set_index(key)["median_s"].rename("b")
        sa = _samples(comparison.bench_rows(to_builtins(a.record)), key)
        sb = _samples(comparison.bench_rows(to_builtins(b.record)), key)
        orders = {"model": [*a.record.settings.models, *b.record.settings.models],
                  "layer": [*fa["layer"], *fb["layer"]],
                  "variant": [*a.record.settings.variants, *b.record.settings.variants, *fa["variant"], *fb["variant"]]}
    elif isinstance(a, RunInput) and isinstance(b, RunInput):
        _check_same_model(a, b)
        key = ["images", "variant", "layer", "shape"]
        oa, ob = runs.op_times(a.record), runs.op_times(b.record)
        ta = oa[oa["status"] == "ok"].set_index(key)["median_s"].rename("a")
        tb = ob[ob["status"] == "ok"].set_index(key)["median_s"].rename("b")
        sa = _samples(comparison.run_rows(to_builtins(a.record)), key)
        sb = _samples(comparison.run_rows(to_builtins(b.record)), key)
        orders = {"images": sorted({*oa["images"], *ob["images"]}),
                  "variant": [*a.record.settings.variants, *b.record.settings.variants, *oa["variant"], *ob["variant"]],
                  "layer": [*oa["layer"], *ob["layer"]]}
    else:
        assert isinstance(a, LogInput) and isinstance(b, LogInput)
        key = ["section", "name"]
        fa, fb = a.profiles.frame, b.profiles.frame
        ta = fa[fa["section"].isin(["gpu", "api"])].groupby(key)["total_ns"].sum().rename("a") / 1e9
        tb = fb[fb["section"].isin(["gpu", "api"])].groupby(key)["total_ns"].sum().rename("b") / 1e9
        orders = {"section": ["gpu", "api"]}
        sa, sb = {}, {}
    if ta.index.has_duplicates or tb.index.has_duplicates:
        raise InputError("--compare: a record lists the same layer and variant twice; compare records with one "
                         "result per layer, variant and image count")
    df = pd.concat([ta, tb], axis=1).reset_index()
    df["ratio"] = df["b"] / df["a"]
    df["regression"] = df["ratio"] > 1.0 + threshold
    df["only_in"] = ["A" if pd.isna(vb) else ("B" if pd.isna(va) else "") for va, vb in zip(df["a"], df["b"], strict=True)]
    df = _decide(df, key, sa, sb, threshold, alpha)
    if isinstance(a, LogInput):
        df = df.assign(_t=df["a"].fillna(df["b"])).sort_values(["_t"], ascending=False, kind="stable").drop(columns="_t")
    out = _ordered(df, orders)
    env: tuple[dict, dict] = ({}, {})
    if not isinstance(a, LogInput) and not isinstance(b, LogInput):
        env = (to_builtins(a.record.environment), to_builtins(b.record.environment))
    out.attrs["warnings"] = comparison.environment_warnings(*env)
    if isinstance(a, RunInput) and isinstance(b, RunInput):
        out.attrs["warnings"] += kernel_changes(a, b)
    return out


def kernel_changes(a: RunInput, b: RunInput) -> list[str]:
    """What changed in each user kernel (--kernel) present in both runs: its source, its compile flags."""

    def kernels(inp: RunInput) -> dict[str, dict]:
        return {r.variant: r.user for r in inp.record.results if r.user}

    ka, kb = kernels(a), kernels(b)
    notes = []
    for name in [n for n in ka if n in kb]:
        ua, ub = ka[name], kb[name]
        ha, hb = ua.get("source_sha256") or "", ub.get("source_sha256") or ""
        what = (f"source changed (sha256 {ha[:12]} -> {hb[:12]})" if ha != hb else f"same source (sha256 {ha[:12]})")
        fa, fb = ((u.get("compile") or {}).get("flags") for u in (ua, ub))
        if fa != fb:
            what += "; compile flags changed"
        if ua.get("defines") != ub.get("defines") or ua.get("sweep") != ub.get("sweep"):
            what += "; defines or sweep changed"
        notes.append(f"your kernel {name}: {what}")
    return notes


def shape_warnings(df: pd.DataFrame) -> list[str]:
    """Layers present on both sides under different shapes (not paired)."""
    if "shape" not in df.columns:
        return []
    out = []
    group = [c for c in ("model", "layer") if c in df.columns]
    for k, part in df.groupby(group, sort=False):
        shapes = part.groupby("only_in")["shape"].agg(lambda s: sorted(set(s)))
        if "A" in shapes and "B" in shapes and set(shapes["A"]) != set(shapes["B"]):
            name = " ".join(map(str, k)) if isinstance(k, tuple) else str(k)
            out.append(f"{name}: {', '.join(shapes['A'])} in A but {', '.join(shapes['B'])} in B — not compared")
    return out


def document(df: pd.DataFrame, a_name: str, b_name: str, threshold: float, alpha: float = 0.05) -> Document:
    keys = [c for c in df.columns if c not in COLUMNS]
    n_reg = int(df["regression"].sum())
    flags = []
    for r, o, v in zip(df["regression"], df["only_in"], df["verdict"], strict=True):
        flags.append(("REGRESSION" + (" (untested)" if "untested" in v else "")) if r
                     else f"only in {o}" if o else "improvement" if v == "improvement" else "")
    view = df.assign(flag=flags)
    cols = [Column(k, k, "int" if k == "images" else ("code" if k == "name" else "text")) for k in keys]
    cols += [Column("a", "A", "seconds"), Column("b", "B", "seconds"), Column("ratio", "B / A", "number", digits=".3f"),
             Column("p_value", "p", "number", digits=".2g"), Column("flag", "")]
    sec = Section("B against A")
    sec.add(Paragraph(f"A: `{a_name}`  \nB: `{b_name}`  \nratio = B / A; a regression is B slower by at least "
                      f"{threshold:.0%} with p < {alpha:g} (Mann-Whitney U on the stored samples; rows without "
                      f"samples: the ratio alone, marked untested) ({n_reg} found)."))
    for w in [*df.attrs.get("warnings", []), *shape_warnings(df)]:
        sec.add(Paragraph(w, "warning"))
    sec.add(Table("compare", "", view, cols, highlight="regression", highlight_kind="regression"))
    return Document("Comparison", [sec], exit_status=0)
