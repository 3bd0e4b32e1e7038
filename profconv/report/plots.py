"""PNG plots for the markdown report (matplotlib, headless): Op Time bars and a roofline."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from profconv.hardware import Peak  # noqa: E402


def op_time_bars(df: pd.DataFrame, title: str, path: Path) -> Path:
    """Median Op Time per variant, one group of bars per conv layer, log scale."""
    ok = df[df["status"] == "ok"]
    n = int(ok["images"].max())
    ok = ok[ok["images"] == n]
    layers = list(dict.fromkeys(ok["layer"]))
    variants = list(dict.fromkeys(ok["variant"]))
    fig, ax = plt.subplots(figsize=(min(11.0, max(6.0, 0.9 * len(variants) * len(layers))), 4.0))
    width = 0.8 / max(1, len(layers))
    x = np.arange(len(variants))
    for i, layer in enumerate(layers):
        t = [ok[(ok["variant"] == v) & (ok["layer"] == layer)]["median_s"].sum() * 1e3 for v in variants]
        ax.bar(x + i * width, t, width, label=layer)
    ax.set_xticks(x + width * (len(layers) - 1) / 2, variants, rotation=20)
    ax.set_yscale("log")
    ax.set_ylabel("Op Time, median (ms, log scale)")
    ax.set_title(f"{title}: {n:,} images")
    ax.legend()
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def roofline(eff: pd.DataFrame, peak: Peak, title: str, path: Path) -> Path:
    """Each variant placed at its layer's arithmetic intensity (FLOPs over minimum bytes)."""
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    lo = max(0.1, float(eff["intensity"].min()) / 4)
    hi = max(float(eff["intensity"].max()) * 4, peak.fp32_tflops * 1e3 / (peak.dram_tbps * 1e3) * 4)
    xs = np.logspace(np.log10(lo), np.log10(hi), 200)
    roof = np.minimum(peak.fp32_tflops * 1e3, xs * peak.dram_tbps * 1e3)
    ax.plot(xs, roof, color="black", label=f"roof ({peak.source})")
    markers = "osD^v<>p*h"
    for k, (variant, part) in enumerate(eff.groupby("variant", sort=False)):
        ax.scatter(part["intensity"], part["gflops"], marker=markers[k % len(markers)], label=variant, s=40)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per minimum byte)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(title)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
