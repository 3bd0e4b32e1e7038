"""A bench record as markdown: per layer every variant against cuDNN of its precision, then the
best variant per layer and precision (the table the issue's targets are read from)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from profconv.records import BenchRecord, BenchResult
from profconv.run.bench import best_per_layer, frame

LAYER_HEADER = "| variant | precision | Op Time (ms) | min (ms) | ratio | vs | share of floor | bound | rel. error | status |"


def fmt_ms(v: Any) -> str:
    return f"{v * 1e3:.3f}" if pd.notna(v) else "—"


def fmt_ratio(v: Any) -> str:
    return f"{v:.2f}×" if pd.notna(v) else "—"


def fmt_share(v: Any) -> str:
    return f"{v:.0%}" if pd.notna(v) else "—"


def _result_row(r: BenchResult) -> str:
    t = r.op_time
    err = r.rel_error
    status = "ok" if r.status == "ok" else f"FAILED: {r.error or ''}"
    return (f"| {r.variant} | {r.precision} | {fmt_ms(t.median_s if t else None)} | {fmt_ms(t.min_s if t else None)} | "
            f"{fmt_ratio(r.ratio)} | {r.reference or '—'} | {fmt_share(r.floor_share)} | "
            f"{r.bound or '—'} | {f'{err:.1e}' if err is not None else '—'} | {status} |")


def to_markdown(record: BenchRecord, level: int = 1) -> str:
    """`level` 1 for a report of its own, 2 inside `profconv report`'s document."""
    h = "#" * level
    env, dev, st = record.environment, record.device, record.settings
    df = frame(record)
    bw = dev.bandwidth_Bps
    lines = [
        f"{h} profconv bench — {env.gpu or 'no GPU'}",
        "",
        f"`{' '.join(record.argv)}` · {record.created}",
        "",
        f"- GPU: {env.gpu} (compute capability {env.compute_capability}), driver "
        f"{env.driver_version}, CuPy {env.cupy_version}, PyTorch {env.torch_version or '—'} / "
        f"cuDNN {env.cudnn_version or '—'}",
        f"- {st.images} images per input set, {st.sets} input sets, {st.repeat} interleaved "
        f"rounds after {st.warmup} warm-up rounds: every time below is the median of "
        f"{(st.sets or 0) * (st.repeat or 0)} single calls between CUDA events",
        f"- Floor = max(minimum bytes / measured bandwidth, FLOPs / datasheet peak of the variant's arithmetic); "
        f"bandwidth measured here: {bw / 1e12:.2f} TB/s ({dev.bandwidth_method or ''}); peaks: "
        + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in dev.peaks.items())
        + f" ({dev.peak_source or ''})" if bw else "- No bandwidth measured: no floors",
        "- ratio = time / time of the reference (cuDNN of the same precision; `streams` against `e2e`): below 1 is faster",
        "",
    ]
    if record.interrupted:
        lines += ["**Interrupted: the record holds the layers finished before Ctrl-C.**", ""]
    best = best_per_layer(df)
    if not best.empty:
        lines += [f"{h}# Best variant per layer", "",
                  "| model | layer | shape | precision | best variant | Op Time (ms) | vs cuDNN | share of floor |",
                  "|---|---|---|---|---|---:|---:|---:|"]
        for r in best.itertuples():
            lines.append(f"| {r.model} | {r.layer} | {r.shape} | {r.precision} | {r.variant} | {fmt_ms(r.median_s)} | "
                         f"{fmt_ratio(r.ratio)} | {fmt_share(r.floor_share)} |")
        lines.append("")
    for layer in record.layers:
        title = f"{h}# {layer.model} {layer.layer}: {layer.shape}, {layer.images} images"
        if layer.same_as:
            lines += [title, "", f"Same shape as {layer.same_as}: measured there.", ""]
            continue
        lines += [title, "", LAYER_HEADER, "|---|---|---:|---:|---:|---|---:|---|---:|---|"]
        lines += [_result_row(r) for r in layer.results]
        if layer.fused:
            lines += ["", f"Fused layer — {layer.fused_ops}, timed as one op (floor from the pooled output's bytes):", "",
                      LAYER_HEADER, "|---|---|---:|---:|---:|---|---:|---|---:|---|"]
            lines += [_result_row(r) for r in layer.fused]
        chosen = [r for r in layer.results + layer.fused if r.params]
        if chosen:
            lines += ["", "Swept parameters: " + "; ".join(
                f"{r.variant} " + ", ".join(f"{k}={v}" for k, v in r.params.items()) for r in chosen)]
        lines.append("")
    return "\n".join(lines)
