"""Run records -> DataFrames for the report: Op Times, speedups, the ladder, efficiency. Pure."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from profconv.report.devices import Peak
from profconv.run.models import MODELS, ConvShape

OP_COLUMNS = ["images", "variant", "technique", "precision", "layer", "shape", "status", "error",
              "median_s", "min_s", "max_s", "spread", "rel_error", "correctness", "B", "M", "C", "H", "W", "K", "P"]


def _dims(record: dict[str, Any], images: int, layer: str, conv: dict[str, Any]) -> dict[str, int]:
    """Dimensions stored with the result, else derived from the model table (older records)."""
    if conv.get("dims"):
        return conv["dims"]
    model = MODELS.get(record["model"]["name"])
    if model is None:
        return {}
    for lay, s in model.conv_shapes(images):
        if lay.name == layer:
            return {"B": s.B, "M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P}
    return {}


def op_times(record: dict[str, Any]) -> pd.DataFrame:
    """One row per (images, variant, conv layer); skipped variants are left out, failed ones kept."""
    rows = []
    for res in record.get("results", []):
        if res["status"] == "skipped":
            continue
        for conv in res.get("conv", []):
            t = conv.get("op_time") or {}
            med = t.get("median_s")
            rows.append({
                "images": res["images"], "variant": res["variant"], "technique": res.get("technique", ""),
                "precision": res.get("precision", ""), "layer": conv["layer"], "shape": conv["shape"],
                "status": conv["status"], "error": conv.get("error"),
                "median_s": med, "min_s": t.get("min_s"), "max_s": t.get("max_s"),
                "spread": (t["max_s"] - t["min_s"]) / med if med else None,
                "rel_error": conv.get("rel_error"), "correctness": res.get("correctness"),
                **_dims(record, res["images"], conv["layer"], conv),
            })
    df = pd.DataFrame(rows, columns=OP_COLUMNS)
    for c in ("median_s", "min_s", "max_s", "spread", "rel_error", "correctness"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def with_speedups(df: pd.DataFrame) -> pd.DataFrame:
    """Speedup of each ok row over naive, cpu and cudnn on the same layer and image count."""
    out = df.copy()
    ok = out[out["status"] == "ok"]
    for base in ("naive", "cpu", "cudnn"):
        ref = ok[ok["variant"] == base].set_index(["images", "layer"])["median_s"]
        key = pd.MultiIndex.from_frame(out[["images", "layer"]])
        base_t = ref.reindex(key).to_numpy()
        out[f"vs_{base}"] = np.where(out["status"] == "ok", base_t / out["median_s"].to_numpy(), np.nan)
    return out


def ladder(df: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Each variant's conv time (all layers) at the largest image count, and its gain over the previous rung.

    Rungs that failed carry no time and are skipped when computing the next gain.
    """
    if df.empty:
        return pd.DataFrame(columns=["variant", "technique", "conv_s", "gain_vs_previous", "status"])
    n = int(df["images"].max())
    sub = df[df["images"] == n]
    rows, prev = [], None
    for v in order:
        part = sub[sub["variant"] == v]
        if part.empty:
            continue
        ok = bool((part["status"] == "ok").all())
        total = float(part["median_s"].sum()) if ok else None
        rows.append({"variant": v, "technique": part["technique"].iloc[0], "conv_s": total,
                     "gain_vs_previous": (prev / total) if (ok and prev and total) else None,
                     "status": "ok" if ok else "failed"})
        if ok and v != "cpu":
            prev = total
    return pd.DataFrame(rows)


def efficiency(df: pd.DataFrame, peak: Peak | None) -> pd.DataFrame:
    """Achieved GFLOP/s and GB/s (minimum bytes) per ok row; the floor time and its share if the peak is known."""
    ok = df[(df["status"] == "ok") & df["B"].notna()].copy()
    shapes = [ConvShape(*(int(r[k]) for k in ("B", "M", "C", "H", "W", "K", "P"))) for _, r in ok.iterrows()]
    ok["gflop"] = [s.flops / 1e9 for s in shapes]
    ok["min_gb"] = [s.min_bytes / 1e9 for s in shapes]
    ok["gflops"] = ok["gflop"] / ok["median_s"]
    ok["gbps"] = ok["min_gb"] / ok["median_s"]
    ok["intensity"] = ok["gflop"] / ok["min_gb"]
    if peak is not None:
        ok["floor_s"] = np.maximum(ok["gflop"] / (peak.fp32_tflops * 1e3), ok["min_gb"] / (peak.dram_tbps * 1e3))
        ok["bound"] = np.where(ok["gflop"] / (peak.fp32_tflops * 1e3) >= ok["min_gb"] / (peak.dram_tbps * 1e3),
                               "compute", "memory")
        ok["of_floor"] = ok["floor_s"] / ok["median_s"]
    return ok.reset_index(drop=True)


def layer_breakdown(record: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for res in record.get("results", []):
        if res["status"] != "ok" or not res.get("type_totals"):
            continue
        rows.append({"images": res["images"], "variant": res["variant"], **res["type_totals"],
                     "forward": res.get("forward_s")})
    return pd.DataFrame(rows)
