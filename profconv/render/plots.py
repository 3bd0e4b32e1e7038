"""PNG plots for the reports (matplotlib, Agg, created on first use): Op Time bars with their
values, a roofline whose every point names its variant and layer, the >=90% kernels per variant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profconv.hardware import Peak
from profconv.render.format import seconds

DPI = 110


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _log_axis(axis: Any) -> None:
    """Decades only, labelled 10^k without minor labels: ticks never run into each other."""
    from matplotlib.ticker import LogFormatterMathtext, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, numticks=8))
    axis.set_major_formatter(LogFormatterMathtext())
    axis.set_minor_formatter(NullFormatter())


PLOTTABLE_S = (1e-12, 1e6)  # seconds a log axis of Op Times can show: a picosecond to eleven days


def plottable(seconds: pd.Series) -> pd.Series:
    """Which times a log axis can draw: finite, within PLOTTABLE_S (0, a denormal or 1e308 cannot)."""
    t = pd.to_numeric(seconds, errors="coerce")
    return t.notna() & np.isfinite(t.fillna(0.0)) & (t >= PLOTTABLE_S[0]) & (t <= PLOTTABLE_S[1])


def op_time_bars(df: pd.DataFrame, title: str, path: Path) -> Path | None:
    """Median Op Time per variant at the largest image count, one bar per conv layer, each bar
    labelled with its time; log scale (the CPU and the tuned kernels differ by 1000x). None when no
    time can be drawn (see `plottable`): the report says so instead."""
    ok = df[(df["status"] == "ok") & plottable(df["median_s"])]
    if ok.empty:
        return None
    plt = _pyplot()
    n = int(ok["images"].max())
    ok = ok[ok["images"] == n]
    layers = list(dict.fromkeys(ok["layer"]))
    variants = list(dict.fromkeys(ok["variant"]))
    width = 0.8 / max(1, len(layers))
    fig, ax = plt.subplots(figsize=(min(13.0, max(6.5, 0.95 * len(variants) * max(1, len(layers)) + 1.5)), 4.6))
    x = np.arange(len(variants))
    for i, layer in enumerate(layers):
        t = [ok[(ok["variant"] == v) & (ok["layer"] == layer)]["median_s"].sum() for v in variants]
        bars = ax.bar(x + i * width, [v * 1e3 for v in t], width, label=layer)
        ax.bar_label(bars, labels=[seconds(v) if v else "" for v in t], rotation=90, padding=3, fontsize=7)
    ax.set_xticks(x + width * (len(layers) - 1) / 2, variants, rotation=30, ha="right")
    ax.set_yscale("log")
    _log_axis(ax.yaxis)
    top = float(ok["median_s"].max()) * 1e3
    ax.set_ylim(top=top * 60)  # room for the value labels above the tallest bar
    ax.set_ylabel("Op Time, median (ms, log scale)")
    ax.set_title(f"{title}: Op Time per variant, {n:,} images", fontsize=10)
    if len(layers) > 1:
        ax.legend(title="layer", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.grid(axis="y", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _place_labels(ax: Any, xs: np.ndarray, ys: np.ndarray, labels: list[str], fig: Any,
                  colours: list[Any] | None = None) -> None:
    """Label every point without overlaps: points are grouped by x (within 40 px); each group's labels
    form a column to its right, spaced at least one text line apart, joined to their points by thin
    leader lines where they had to move."""
    fig.canvas.draw()
    to_px = ax.transData.transform
    pts = to_px(np.column_stack([xs, ys]))
    line = 11.0 * fig.dpi / 72  # one 7-pt text line plus spacing, in pixels
    bottom, top = ax.bbox.y0 + line / 2, ax.bbox.y1 - line / 2
    order = np.argsort(pts[:, 0])
    groups: list[list[int]] = []
    for i in order:
        if groups and pts[i, 0] - pts[groups[-1][0], 0] <= 40:
            groups[-1].append(int(i))
        else:
            groups.append([int(i)])
    for g in groups:
        g.sort(key=lambda i: -pts[i, 1])
        want = [float(pts[i, 1]) for i in g]
        placed: list[float] = []
        for y in want:
            y = min(y, top) if not placed else min(y, placed[-1] - line)
            placed.append(y)
        overflow = bottom - placed[-1]
        if overflow > 0:
            placed = [y + overflow for y in placed]
        x_label = max(pts[i, 0] for i in g) + 14
        for i, y in zip(g, placed, strict=True):
            dx, dy = (x_label - pts[i, 0]) * 72 / fig.dpi, (y - pts[i, 1]) * 72 / fig.dpi
            moved = abs(dy) > 2
            ax.annotate(labels[i], (xs[i], ys[i]), xytext=(dx, dy), textcoords="offset points", fontsize=7,
                        va="center", ha="left", color=colours[i] if colours else "black",
                        arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.55", "shrinkA": 0, "shrinkB": 3}
                        if moved else None)


def roofline(eff: pd.DataFrame, peak: Peak, title: str, path: Path) -> Path | None:
    """Each (variant, layer) at its arithmetic intensity (FLOPs over minimum bytes) and achieved
    GFLOP/s, labelled; the roof of the variants' arithmetic (fp32) from the datasheet; the legend
    sits outside the axes, so it hides no point. None when no point can be drawn."""
    finite = np.isfinite(pd.to_numeric(eff["gflops"], errors="coerce").fillna(np.nan).to_numpy(float))
    eff = eff[finite & (eff["gflops"] > 0) & (eff["intensity"] > 0) & plottable(eff["median_s"]).to_numpy()]
    if eff.empty:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 5.0))
    lo = max(0.1, float(eff["intensity"].min()) / 4)
    ridge = peak.fp32_tflops / peak.dram_tbps
    hi = max(float(eff["intensity"].max()) * 4, ridge * 4)
    xs = np.logspace(np.log10(lo), np.log10(hi), 200)
    roof = np.minimum(peak.fp32_tflops * 1e3, xs * peak.dram_tbps * 1e3)
    ax.plot(xs, roof, color="black", lw=1.2, label=f"roof: {peak.fp32_tflops:g} TFLOP/s FP32, {peak.dram_tbps:g} TB/s")
    markers = "osD^v<>p*hX"
    colour_of = {}
    for k, (variant, part) in enumerate(eff.groupby("variant", sort=False)):
        dots = ax.scatter(part["intensity"], part["gflops"], marker=markers[k % len(markers)], label=variant, s=36,
                          zorder=3)
        colour_of[variant] = dots.get_facecolor()[0]
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ymin = max(1.0, float(eff["gflops"].min()) / 5)
    ax.set_ylim(ymin, peak.fp32_tflops * 1e3 * 3)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP per minimum byte)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.grid(which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="variant")
    fig.tight_layout()
    many_layers = eff["layer"].nunique() > 1
    labels = [f"{v} {lay}" if many_layers else str(v) for v, lay in zip(eff["variant"], eff["layer"], strict=True)]
    _place_labels(ax, eff["intensity"].to_numpy(float), eff["gflops"].to_numpy(float), labels, fig,
                  [colour_of[v] for v in eff["variant"]])
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def legend_labels(names: list[str], width: int = 44) -> list[str]:
    """Names cut to `width` characters around a '…', every label different: names that would read the
    same once cut (cuDNN's long template names differ in the middle) show the part where they differ."""
    labels = [n if len(n) <= width else n[:20] + "…" + n[-(width - 21):] for n in names]
    for label in {x for x in labels if labels.count(x) > 1}:
        same = [i for i, x in enumerate(labels) if x == label]
        differ = next((k for k, cs in enumerate(zip(*(names[i] for i in same))) if len(set(cs)) > 1), 0)
        for i in same:
            start = max(0, min(differ - 8, len(names[i]) - width + 2))
            labels[i] = ("…" if start else "") + names[i][start:start + width - 2] + "…"
        if len({labels[i] for i in same}) < len(same):  # still alike: numbered
            for k, i in enumerate(same, 1):
                labels[i] = f"{labels[i][:width - 5]} [{k}]"
    return labels


def top_kernels(top: pd.DataFrame, title: str, path: Path) -> Path:
    """One horizontal bar per variant: its >=90% kernels as stacked shares of its GPU time."""
    plt = _pyplot()
    groups = list(dict.fromkeys(top["group"]))
    fig, ax = plt.subplots(figsize=(9.0, 0.45 * len(groups) + 1.6))
    cmap = plt.get_cmap("tab20")
    names = list(dict.fromkeys(top["name"]))
    colours = {n: cmap(i % 20) for i, n in enumerate(names)}
    for y, g in enumerate(groups):
        left = 0.0
        for r in top[top["group"] == g].itertuples():
            ax.barh(y, r.share * 100, left=left, color=colours[r.name], edgecolor="white", lw=0.5)
            if r.share >= 0.12:
                ax.text(left + r.share * 50, y, f"{r.share * 100:.0f}%", ha="center", va="center", fontsize=7)
            left += r.share * 100
    ax.set_yticks(range(len(groups)), groups)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the variant's GPU time (%)")
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[n]) for n in names]
    ax.legend(handles, legend_labels(names), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="kernel")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def compare_ratios(labels: list[str], ratio: list[float], low: list[float], high: list[float], flagged: list[bool],
                   threshold: float, title: str, path: Path) -> Path | None:
    """B / A per compared row as a horizontal bar with its interval, a line at 1 (no change) and one at
    1 + threshold; regressions in red. At most 60 rows (the first); None when no ratio can be drawn."""
    rows = [(lab, r, lo, hi, f) for lab, r, lo, hi, f in zip(labels, ratio, low, high, flagged, strict=True)
            if r == r and r is not None and 0 < r < 1e6][:60]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 0.28 * len(rows) + 1.4))
    ys = np.arange(len(rows))
    values = np.array([r[1] for r in rows], dtype=float)
    lo = np.array([r[2] if r[2] == r[2] and r[2] is not None else r[1] for r in rows], dtype=float)
    hi = np.array([r[3] if r[3] == r[3] and r[3] is not None else r[1] for r in rows], dtype=float)
    colours = ["#c0392b" if r[4] else "#4c72b0" for r in rows]
    ax.barh(ys, values - 1.0, left=1.0, color=colours, height=0.6)
    ax.errorbar(values, ys, xerr=[np.clip(values - lo, 0, None), np.clip(hi - values, 0, None)], fmt="none",
                ecolor="black", elinewidth=0.8, capsize=2)
    ax.axvline(1.0, color="black", lw=0.8)
    ax.axvline(1.0 + threshold, color="#c0392b", lw=0.6, ls="--", label=f"B {threshold:.0%} slower")
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("B / A (median time; > 1: B slower), with its 95% interval")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
