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

from pathlib import Path

import pandas as pd

from profconv.analysis import comparison, runs
from profconv.analysis.stats import compare_samples, samples_needed
from profconv.errors import InputError
from profconv.records import to_builtins
from profconv.render.document import Column, Document, Figure, Paragraph, Section, Table
from profconv.report.inputs import BenchInput, Input, LogInput, RunInput
from profconv.run import bench

COLUMNS = ["a", "b", "ratio", "regression", "only_in", "p_value", "verdict", "why", "n_a", "n_b", "ci_low", "ci_high"]


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


def _decide(df: pd.DataFrame, key: list[str], sa: dict, sb: dict, threshold: float, alpha: float,
            flag_sections: tuple[str, ...] | None = None) -> pd.DataFrame:
    """p_value, verdict, why, regression, n per side and the ratio's interval per paired row
    (analysis/stats.compare_samples). Rows without samples (profiler logs) are decided on the ratio
    alone, marked untested; of a log only the `flag_sections` rows (its GPU work) are flagged."""
    rows: list[tuple] = []  # p_value, verdict, why, regression, n_a, n_b, ci_low, ci_high
    for r in df.to_dict("records"):
        k = tuple(r[c] for c in key)
        if r["only_in"]:
            rows.append((None, f"only in {r['only_in']}", "", False, None, None, None, None))
            continue
        d = compare_samples(sa.get(k, []), sb.get(k, []), threshold, alpha)
        if d.verdict == "no-samples":
            flagged = flag_sections is None or r.get("section") in flag_sections
            reg = bool(r["ratio"] > 1.0 + threshold) and flagged
            rows.append((None, "regression (untested)" if reg else "same (untested)", d.why, reg, None, None,
                         None, None))
        elif d.verdict == "untestable":  # samples too few for any p < alpha: the ratio alone, marked untested
            reg = d.ratio is not None and d.ratio > 1.0 + threshold
            rows.append((None, "regression (untested)" if reg else "untestable", d.why, reg, d.n_a, d.n_b,
                         d.ci_low, d.ci_high))
        else:
            rows.append((d.p_value, d.verdict, d.why, d.verdict == "regression", d.n_a, d.n_b, d.ci_low, d.ci_high))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 8
    return df.assign(p_value=pd.Series(cols[0], index=df.index, dtype="float64"), verdict=list(cols[1]),
                     why=list(cols[2]), regression=list(cols[3]),
                     n_a=pd.Series(cols[4], index=df.index, dtype="Int64"),
                     n_b=pd.Series(cols[5], index=df.index, dtype="Int64"),
                     ci_low=pd.Series(cols[6], index=df.index, dtype="float64"),
                     ci_high=pd.Series(cols[7], index=df.index, dtype="float64"))


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
    df = _decide(df, key, sa, sb, threshold, alpha, ("gpu",) if isinstance(a, LogInput) else None)
    if isinstance(a, LogInput):
        df = df.assign(_t=df["a"].fillna(df["b"])).sort_values(["_t"], ascending=False, kind="stable").drop(columns="_t")
    out = _ordered(df, orders)
    env: tuple[dict, dict] = ({}, {})
    if not isinstance(a, LogInput) and not isinstance(b, LogInput):
        env = (to_builtins(a.record.environment), to_builtins(b.record.environment))
    out.attrs["warnings"] = comparison.environment_warnings(*env)
    if isinstance(a, RunInput) and isinstance(b, RunInput):
        out.attrs["warnings"] += kernel_changes(a, b)
    if isinstance(a, LogInput) and isinstance(b, LogInput):
        out.attrs["warnings"] += command_changes(a, b)
    return out


def command_changes(a: LogInput, b: LogInput) -> list[str]:
    """A warning when the two logs profiled different commands: their rows may not be comparable."""
    ca = sorted({p.command for p in a.profiles.profiles if p.command})
    cb = sorted({p.command for p in b.profiles.profiles if p.command})
    if ca and cb and ca != cb:
        return [f"A and B profiled different commands (A: `{'; '.join(ca)}`, B: `{'; '.join(cb)}`): "
                "their kernels and calls may not be the same work"]

    def kernels(inp: LogInput) -> set[str]:
        f = inp.profiles.frame
        return {n for n in f.loc[f["section"] == "gpu", "name"] if not str(n).startswith("[")}

    ka, kb = kernels(a), kernels(b)
    if ka and kb and not ka & kb:
        return ["A and B have no kernel in common: they look like different programs, so their rows are not "
                "the same work (compare two logs of one program)"]
    return []


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


def _flag(verdict: str, regression: bool, only_in: str, ratio: float) -> str:
    if regression:
        return "REGRESSION" + (" (untested)" if "untested" in verdict else "")
    if only_in:
        return f"only in {only_in}"
    if verdict == "untestable":
        return "too few samples"
    return "improvement" if verdict == "improvement" else ""


def _n(a, b) -> str:
    return f"{a}/{b}" if a is not pd.NA and a == a and a is not None else "—"


def _interval(lo: float, hi: float) -> str:
    return f"{lo:.3f}–{hi:.3f}" if lo == lo and hi == hi else "—"


def summary(df: pd.DataFrame, alpha: float = 0.05) -> tuple[str, list[str]]:
    """The counts line, and a warning for the rows whose samples are too few to test (never "same")."""
    verdicts = df["verdict"].tolist()
    n_reg, n_imp = int(df["regression"].sum()), verdicts.count("improvement")
    n_same = sum(v in ("same", "same (untested)") for v in verdicts)
    untestable = df[df["n_a"].notna() & df["p_value"].isna() & (df["only_in"] == "")]
    counts = (f"{n_reg} regression(s) found, {n_imp} improvement(s), {n_same} same"
              + (f", {verdicts.count('untestable')} too few samples to tell" if "untestable" in verdicts else ""))
    warnings = []
    if len(untestable):
        paired = int((df["only_in"] == "").sum())
        which = "any row" if len(untestable) == paired else f"{len(untestable)} of {paired} rows"
        sizes = ", ".join(dict.fromkeys(f"{x} vs {y}" for x, y in zip(untestable["n_a"], untestable["n_b"],
                                                                        strict=True) if x is not pd.NA))
        warnings.append(f"Too few samples to test {which} ({sizes or 'no'} samples; p < {alpha:g} needs "
                        f"{samples_needed(alpha)} a side): they are decided on the ratio alone (a slowdown beyond "
                        "the threshold is a REGRESSION (untested), anything else \"too few samples\", never "
                        "\"same\"). Rerun with more repeats (`--repeat`, `--cpu-repeat`), or read the ratio with "
                        "its interval.")
    return counts, warnings


def document(df: pd.DataFrame, a_name: str, b_name: str, threshold: float, alpha: float = 0.05,
             plots_dir: Path | None = None) -> Document:
    keys = [c for c in df.columns if c not in COLUMNS]
    counts, untestable = summary(df, alpha)
    view = df.assign(flag=[_flag(v, r, o, q) for v, r, o, q in zip(df["verdict"], df["regression"], df["only_in"],
                                                                    df["ratio"], strict=True)],
                     n=[_n(x, y) for x, y in zip(df["n_a"], df["n_b"], strict=True)],
                     interval=[_interval(lo, hi) for lo, hi in zip(df["ci_low"], df["ci_high"], strict=True)])
    # at a narrow width the verdict stays: the shape goes first, then p, the interval, n
    drops = {"shape": 1, "p_value": 2, "interval": 3, "n": 4}
    cols = [Column(k, k, "int" if k == "images" else ("code" if k == "name" else "text"), drop=drops.get(k))
            for k in keys]
    sampled = bool(df["n_a"].notna().any())  # logs have no samples: no n, interval or p to show
    cols += [Column("a", "A", "seconds"), Column("b", "B", "seconds"),
             *([Column("n", "n A/B", drop=drops["n"])] if sampled else []),
             Column("ratio", "B / A", "number", digits=".3f", keep=True),
             *([Column("interval", "95% CI of B / A", drop=drops["interval"]),
                Column("p_value", "p", "number", digits=".2g", drop=drops["p_value"])] if sampled else []),
             Column("flag", "verdict", keep=True)]
    sec = Section("B against A")
    if sampled:
        rule = (f"ratio = B / A with its 95% interval (bootstrap of the medians); a regression is B slower by at least "
                f"{threshold:.0%} with p < {alpha:g} (Mann-Whitney U on the stored samples; n A/B: samples per side; "
                "rows without samples: the ratio alone, marked untested)")
    else:
        rule = (f"ratio = B / A of the total times; profiler logs hold no samples, so nothing is tested: a GPU row "
                f"of B slower by at least {threshold:.0%} is a REGRESSION (untested); API rows are shown, never flagged")
    sec.add(Paragraph(f"A: `{a_name}`  \nB: `{b_name}`  \n{rule}. {counts}."))
    for w in [*untestable, *df.attrs.get("warnings", []), *shape_warnings(df)]:
        sec.add(Paragraph(w, "warning"))
    sec.add(Table("compare", "", view, cols, highlight="regression", highlight_kind="regression",
                  data_keys=("verdict", "why", "n_a", "n_b", "ci_low", "ci_high", "only_in")))
    if plots_dir is not None:
        from profconv.render import plots

        paired = view[view["only_in"] == ""]
        labels = [" ".join(str(r[k]) for k in keys if k != "shape") for r in paired.to_dict("records")]
        plots_dir.mkdir(parents=True, exist_ok=True)
        path = plots.compare_ratios(labels, paired["ratio"].tolist(), paired["ci_low"].tolist(),
                                    paired["ci_high"].tolist(), paired["regression"].tolist(), threshold,
                                    "B against A", plots_dir / "compare-ratios.png")
        if path is not None:
            sec.add(Figure(path, "B / A per row with its 95% interval"))
    return Document("Comparison", [sec], exit_status=0)
