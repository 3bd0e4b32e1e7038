"""What `report --compare` decides on: the stored samples of each (layer, variant) of a record, and
the environment differences worth a warning. Pure: records as plain mappings in (to_builtins).

The pairing, the refusal of different models and the shape check live in report/compare.py; each
pair is decided there by `analysis.stats.compare_samples` on the samples gathered here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

ENV_KEYS = [("gpu", "GPU"), ("driver_version", "driver"), ("runtime_version", "CUDA runtime"),
            ("cudnn_version", "cuDNN")]


def environment_warnings(env_a: dict, env_b: dict) -> list[str]:
    out = []
    for key, label in ENV_KEYS:
        va, vb = env_a.get(key), env_b.get(key)
        if va != vb and (va is not None or vb is not None):
            out.append(f"different {label}: A {va} vs B {vb}")
    return out


def run_rows(record: dict[str, Any]) -> pd.DataFrame:
    rows = []
    model = (record.get("model") or {}).get("name")
    for res in record.get("results", []):
        if res.get("status") == "skipped":
            continue
        for c in res.get("conv", []):
            t = c.get("op_time") or {}
            if c.get("status") != "ok" or t.get("median_s") is None:
                continue
            rows.append({"model": model, "images": res["images"], "variant": res["variant"], "layer": c["layer"],
                         "shape": c.get("shape"), "median": t["median_s"], "samples": t.get("samples_s") or []})
    return pd.DataFrame(rows, columns=["model", "images", "variant", "layer", "shape", "median", "samples"])


def bench_rows(record: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for layer in record.get("layers", []):
        for r in layer.get("results", []):
            t = r.get("op_time") or {}
            if r.get("status") != "ok" or t.get("median_s") is None:
                continue
            rows.append({"model": layer["model"], "layer": layer["layer"], "shape": layer.get("shape"),
                         "variant": r["variant"], "median": t["median_s"], "samples": t.get("samples_s") or []})
    return pd.DataFrame(rows, columns=["model", "layer", "shape", "variant", "median", "samples"])
