"""Run records -> DataFrames: Op Times, speedups, the ladder, efficiency, the forward pass. Pure.

Every frame holds base units (seconds, fractions, GFLOP); renderers format them."""

from __future__ import annotations

import msgspec
import numpy as np
import pandas as pd

from profconv.hardware import Peak, roofline_floor
from profconv.records import ConvResult, RunRecord, VariantResult
from profconv.run import peers
from profconv.run.models import MODELS, ConvShape
from profconv.run.variants import VARIANTS

END_TO_END = frozenset(v.name for v in VARIANTS if v.host_io)
REFERENCE = {v.name: v.reference for v in VARIANTS}
"""A built-in variant -> the variant its "vs cuDNN" is taken against (streams: e2e; cpu, e2e: none)."""

OP_COLUMNS = ["images", "variant", "technique", "precision", "layer", "shape", "status", "error",
              "median_s", "min_s", "max_s", "spread", "rel_error", "correctness", "B", "M", "C", "H", "W", "K", "P"]


def _dims(record: RunRecord, images: int, layer: str, conv: ConvResult) -> dict[str, int]:
    """Dimensions stored with the result, else derived from the model table (older records)."""
    if conv.dims is not None:
        return msgspec.structs.asdict(conv.dims)
    model = MODELS.get(record.model.name)
    if model is None:
        return {}
    for lay, s in model.conv_shapes(images):
        if lay.name == layer:
            return {"B": s.B, "M": s.M, "C": s.C, "H": s.H, "W": s.W, "K": s.K, "P": s.P}
    return {}


def ratio(num, den) -> np.ndarray:
    """num / den elementwise, NaN where it has no meaning (den 0, negative or missing, an overflow):
    a record of all-zero or denormal times gives no speedup rather than inf or a numpy warning."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(all="ignore"):
        out = num / den
    return np.where(np.isfinite(out) & (den > 0), out, np.nan)


def op_times(record: RunRecord) -> pd.DataFrame:
    """One row per (images, variant, conv layer); skipped variants are left out, failed ones kept."""
    rows = []
    for res in record.results:
        if res.status == "skipped":
            continue
        for conv in res.conv:
            t = conv.op_time
            med = t.median_s if t else None
            rows.append({
                "images": res.images, "variant": res.variant, "technique": res.technique,
                "precision": res.precision, "layer": conv.layer, "shape": conv.shape,
                "status": conv.status, "error": conv.error,
                "median_s": med, "min_s": t.min_s if t else None, "max_s": t.max_s if t else None,
                "spread": float(ratio(t.max_s - t.min_s, med)) if t and med else None,
                "rel_error": conv.rel_error, "correctness": res.correctness,
                **_dims(record, res.images, conv.layer, conv),
            })
    df = pd.DataFrame(rows, columns=OP_COLUMNS)
    for c in ("median_s", "min_s", "max_s", "spread", "rel_error", "correctness"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def with_speedups(df: pd.DataFrame, record: RunRecord | None = None) -> pd.DataFrame:
    """Speedup of each ok row over naive, cpu and cuDNN on the same layer and image count. With the
    `record` the rows come from, "vs cuDNN" is the terminal's (`conv_speedups`: the fastest cuDNN peer of
    the row's precision, any layout) and `cudnn` names it; without, cuDNN of the row's precision in NCHW."""
    out = df.copy()
    ok = out[out["status"] == "ok"]
    key = pd.MultiIndex.from_frame(out[["images", "layer"]])

    def base_times(name: str) -> np.ndarray:
        ref = ok[ok["variant"] == name].set_index(["images", "layer"])["median_s"]
        return ref.reindex(key).to_numpy()

    for base in ("naive", "cpu"):
        out[f"vs_{base}"] = np.where(out["status"] == "ok", ratio(base_times(base), out["median_s"]), np.nan)
    if record is not None:
        same = conv_speedups(record).drop_duplicates(["images", "variant", "layer"]).set_index(["images", "variant", "layer"])
        at = pd.MultiIndex.from_frame(out[["images", "variant", "layer"]])
        out["cudnn"] = same["cudnn"].reindex(at).to_numpy()
        out["vs_cudnn"] = pd.to_numeric(same["vs_cudnn"].reindex(at), errors="coerce").to_numpy()
        return out
    cudnn = np.where(out["precision"] == "fp16", base_times("cudnn-fp16"), base_times("cudnn"))
    out["vs_cudnn"] = np.where(out["status"] == "ok", ratio(cudnn, out["median_s"]), np.nan)
    return out


CONV_COLUMNS = ["images", "variant", "user", "precision", "layer", "status", "error", "kernel_status", "median_s",
                "ci_rel", "min_s", "n", "vs_naive", "cudnn", "vs_cudnn", "rel_error", "correctness"]
"""`conv_speedups`: one row per conv layer of each variant that ran (skipped ones left out), in record order.
`status`/`error`: the layer's check; `kernel_status`: the whole variant's (a user's kernel can fail on edge
shapes or the sanitizer with every layer ok); `median_s`, `min_s`, `ci_rel` (the median's 95% interval,
half-width over the median) and `n` (timed samples, 0: none kept) of its Op Time; `vs_naive` and `vs_cudnn`:
speedups of an ok layer over naive and over `cudnn` (the variant it is compared with, `compared_cudnn`) on
the same layer and image count, NaN where either is missing, failed or not a positive time."""


def _ok_medians(record: RunRecord) -> dict[tuple[int, str, str], float]:
    """(images, variant, layer) -> the median Op Time of every layer that passed its check and was timed."""
    return {(r.images, r.variant, c.layer): c.op_time.median_s for r in record.results for c in r.conv
            if c.status == "ok" and c.op_time}


def compared_cudnn(r: VariantResult, layer: str, medians: dict[tuple[int, str, str], float]) -> str | None:
    """The variant `r`'s "vs cuDNN" is taken against on `layer`: the fastest cuDNN peer of its precision that
    ran there, any layout (`peers.best_peer`; a user's kernel and a variant outside the registry are
    compared with cuDNN of their precision); for a peer, the fastest peer of its own precision
    (`peers.best_per_precision`); else the variant's own reference (streams: e2e) or None (cpu, e2e)."""
    ref = REFERENCE[r.variant] if r.variant in REFERENCE and not r.user else \
        "cudnn-fp16" if r.precision == "fp16" else "cudnn"
    if ref not in peers.BY_NAME and r.variant not in peers.BY_NAME:
        return None  # cpu, e2e, streams: their reference is no cuDNN (streams' is e2e), not under "vs cuDNN"
    times = {v: t for (i, v, lay), t in medians.items() if i == r.images and lay == layer}
    if r.variant in peers.BY_NAME:
        return peers.best_per_precision(times).get(r.precision)
    return peers.best_peer(times, r.precision)


def _speedup(base: float | None, t: float | None) -> float:
    """base / t, NaN unless both are positive and the quotient finite."""
    return float(ratio(base, t)) if base is not None and base > 0 else float("nan")


def _conv_row(r: VariantResult, c: ConvResult, medians: dict[tuple[int, str, str], float]) -> dict:
    t = c.op_time
    cudnn = compared_cudnn(r, c.layer, medians)
    ok = c.status == "ok"
    return {"images": r.images, "variant": r.variant, "user": bool(r.user), "precision": r.precision,
            "layer": c.layer, "status": c.status, "error": c.error, "kernel_status": r.status,
            "median_s": t.median_s if t else None, "ci_rel": t.ci_rel if t else None,
            "min_s": t.min_s if t else None, "n": len(t.samples_s) if t else 0,
            "vs_naive": _speedup(medians.get((r.images, "naive", c.layer)), t.median_s) if ok and t else np.nan,
            "cudnn": cudnn,
            "vs_cudnn": _speedup(medians.get((r.images, cudnn or "", c.layer)), t.median_s) if ok and t else np.nan,
            "rel_error": c.rel_error, "correctness": r.correctness}


def conv_speedups(record: RunRecord) -> pd.DataFrame:
    """Each conv layer of each variant that ran, with its Op Time and its speedups over naive and over the
    cuDNN it is compared with (the schema: CONV_COLUMNS). Pure; `profconv run` draws it."""
    medians = _ok_medians(record)
    rows = [_conv_row(r, c, medians) for r in record.results if r.status != "skipped" for c in r.conv]
    df = pd.DataFrame(rows, columns=CONV_COLUMNS)
    for col in ("median_s", "ci_rel", "min_s", "vs_naive", "vs_cudnn", "rel_error", "correctness"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["n"] = df["n"].astype(int)
    df["user"] = df["user"].astype(bool)
    return df


LADDER_COLUMNS = ["variant", "technique", "precision", "conv_s", "previous", "gain_vs_previous", "status"]


def ladder(df: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Each variant's conv time (all layers) at the largest image count, in `order`, and its gain over
    the previous rung **of the same precision** that ran correctly (an fp16 kernel is not a gain over
    an fp32 one: it does different arithmetic). The CPU reference and the end-to-end variants (their
    time includes host copies) are not rungs; failed rungs carry no time and are skipped."""
    if df.empty:
        return pd.DataFrame(columns=LADDER_COLUMNS)
    n = int(df["images"].max())
    sub = df[df["images"] == n]
    order = list(dict.fromkeys([*order, *sub["variant"]]))
    rows = []
    prev: dict[str, tuple[str, float]] = {}
    for v in order:
        if v in END_TO_END or v == "cpu":
            continue
        part = sub[sub["variant"] == v]
        if part.empty:
            continue
        ok = bool((part["status"] == "ok").all())
        total = sum(float(t) for t in part["median_s"]) if ok else None  # Python's sum: inf, not a numpy warning
        total = total if total is not None and np.isfinite(total) else None
        precision = str(part["precision"].iloc[0])
        before = prev.get(precision)
        rows.append({"variant": v, "technique": part["technique"].iloc[0], "precision": precision, "conv_s": total,
                     "previous": before[0] if before else None,
                     "gain_vs_previous": float(ratio(before[1], total)) if (ok and before and total) else None,
                     "status": "ok" if ok else "failed"})
        if ok and total:
            prev[precision] = (v, total)
    return pd.DataFrame(rows, columns=LADDER_COLUMNS)


def efficiency(df: pd.DataFrame, peak: Peak | None) -> pd.DataFrame:
    """Achieved GFLOP/s and GB/s (minimum bytes in the row's precision) per ok kernel row; the floor
    time and its share where the peak of the row's arithmetic (fp32, fp16, fp16 Tensor Core) is known.
    End-to-end rows are left out: their time is mostly PCIe copies."""
    ok = df[(df["status"] == "ok") & df["B"].notna() & ~df["variant"].isin(list(END_TO_END))].copy()
    shapes = [ConvShape(*(int(r[k]) for k in ("B", "M", "C", "H", "W", "K", "P"))) for _, r in ok.iterrows()]
    itemsize = np.where(ok["precision"] == "fp16", 2, 4)
    ok["arithmetic"] = [arithmetic_of(v, p) for v, p in zip(ok["variant"], ok["precision"], strict=True)]
    ok["gflop"] = [s.flops / 1e9 for s in shapes]
    ok["min_gb"] = [s.min_bytes / 4 * n / 1e9 for s, n in zip(shapes, itemsize, strict=True)]
    ok["gflops"] = ratio(ok["gflop"], ok["median_s"])
    ok["gbps"] = ratio(ok["min_gb"], ok["median_s"])
    ok["intensity"] = ratio(ok["gflop"], ok["min_gb"])
    if peak is not None:
        floors = [roofline_floor(g * 1e9, b * 1e9, peak.dram_tbps * 1e12, (peak.tflops(a) or 0) * 1e12)
                  for g, b, a in zip(ok["gflop"], ok["min_gb"], ok["arithmetic"], strict=True)]
        ok["floor_s"] = pd.to_numeric(pd.Series([f for f, _ in floors], index=ok.index, dtype="object"),
                                      errors="coerce")
        ok["bound"] = [b or "—" for _, b in floors]
        ok["of_floor"] = ratio(ok["floor_s"], ok["median_s"])
    return ok.reset_index(drop=True)


def arithmetic_of(variant: str, precision: str) -> str:
    """Which datasheet peak bounds a variant: its registry entry, else its precision."""
    known = {v.name: v.arithmetic for v in VARIANTS}
    return known.get(variant, "fp16" if precision == "fp16" else "fp32")


def layer_breakdown(record: RunRecord) -> pd.DataFrame:
    rows = []
    for res in record.results:
        if res.status != "ok" or not res.type_totals:
            continue
        rows.append({"images": res.images, "variant": res.variant, **res.type_totals, "forward": res.forward_s})
    return pd.DataFrame(rows)
