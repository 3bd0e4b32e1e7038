"""A bench record as markdown: per layer every variant against cuDNN of its precision, then the
best variant per layer and precision (the table the issue's targets are read from)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from profconv.run.bench import best_per_layer, frame

LAYER_HEADER = "| variant | precision | Op Time (ms) | min (ms) | ratio | vs | share of floor | bound | rel. error | status |"


def fmt_ms(v: Any) -> str:
    return f"{v * 1e3:.3f}" if pd.notna(v) else "—"


def fmt_ratio(v: Any) -> str:
    return f"{v:.2f}×" if pd.notna(v) else "—"


def fmt_share(v: Any) -> str:
    return f"{v:.0%}" if pd.notna(v) else "—"


def _result_row(r: dict) -> str:
    t = r.get("op_time") or {}
    err = r.get("rel_error")
    status = "ok" if r["status"] == "ok" else f"FAILED: {r.get('error') or ''}"
    return (f"| {r['variant']} | {r['precision']} | {fmt_ms(t.get('median_s'))} | {fmt_ms(t.get('min_s'))} | "
            f"{fmt_ratio(r.get('ratio'))} | {r.get('reference') or '—'} | {fmt_share(r.get('floor_share'))} | "
            f"{r.get('bound') or '—'} | {f'{err:.1e}' if err is not None else '—'} | {status} |")


def to_markdown(record: dict, level: int = 1) -> str:
    """`level` 1 for a report of its own, 2 inside `profconv report`'s document."""
    h = "#" * level
    env, dev, st = record.get("environment", {}), record.get("device", {}), record.get("settings", {})
    df = frame(record)
    bw = dev.get("bandwidth_Bps")
    lines = [
        f"{h} profconv bench — {env.get('gpu') or 'no GPU'}",
        "",
        f"`{' '.join(record.get('argv', []))}` · {record.get('created', '')}",
        "",
        f"- GPU: {env.get('gpu')} (compute capability {env.get('compute_capability')}), driver "
        f"{env.get('driver_version')}, CuPy {env.get('cupy_version')}, PyTorch {env.get('torch_version', '—')} / "
        f"cuDNN {env.get('cudnn_version', '—')}",
        f"- {st.get('images')} images per input set, {st.get('sets')} input sets, {st.get('repeat')} interleaved "
        f"rounds after {st.get('warmup')} warm-up rounds: every time below is the median of "
        f"{(st.get('sets') or 0) * (st.get('repeat') or 0)} single calls between CUDA events",
        f"- Floor = max(minimum bytes / measured bandwidth, FLOPs / datasheet peak of the variant's arithmetic); "
        f"bandwidth measured here: {bw / 1e12:.2f} TB/s ({dev.get('bandwidth_method', '')}); peaks: "
        + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in dev.get("peaks", {}).items())
        + f" ({dev.get('peak_source', '')})" if bw else "- No bandwidth measured: no floors",
        "- ratio = time / time of the reference (cuDNN of the same precision; `streams` against `e2e`): below 1 is faster",
        "",
    ]
    if record.get("interrupted"):
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
    for layer in record.get("layers", []):
        title = f"{h}# {layer['model']} {layer['layer']}: {layer['shape']}, {layer['images']} images"
        if layer.get("same_as"):
            lines += [title, "", f"Same shape as {layer['same_as']}: measured there.", ""]
            continue
        lines += [title, "", LAYER_HEADER, "|---|---|---:|---:|---:|---|---:|---|---:|---|"]
        lines += [_result_row(r) for r in layer.get("results", [])]
        if layer.get("fused"):
            lines += ["", f"Fused layer — {layer['fused_ops']}, timed as one op (floor from the pooled output's bytes):", "",
                      LAYER_HEADER, "|---|---|---:|---:|---:|---|---:|---|---:|---|"]
            lines += [_result_row(r) for r in layer["fused"]]
        chosen = [r for r in layer.get("results", []) + layer.get("fused", []) if r.get("params")]
        if chosen:
            lines += ["", "Swept parameters: " + "; ".join(
                f"{r['variant']} " + ", ".join(f"{k}={v}" for k, v in r["params"].items()) for r in chosen)]
        lines.append("")
    return "\n".join(lines)
