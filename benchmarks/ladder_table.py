"""Issue 25's compact tables from a bench record (and the GPU tests' measured errors), as markdown.

    python benchmarks/ladder_table.py BENCH.json [ACCURACY.jsonl]

1. per layer: every variant's median, share of its floor, ratio to the best cuDNN of its precision;
2. per layer and precision: the best variant against the targets (fp32 >= 80% of floor, Tensor Core
   >= 60%, faster than the best cuDNN of that precision in any layout);
3. the cuDNN peers' plain-loop checks and kernels; 4. the largest relative error per variant.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from profconv.records import BenchRecord, load
from profconv.run.bench import best_peers, best_per_layer, frame, peer_checks
from profconv.run.peers import BY_NAME

TENSOR = ("tensorcore", "tensorcore-tf32", "tensorcore-3xtf32", "tf32-wmma")


def _ms(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{v * 1e3:.3f}"


def _pct(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{v:.0%}"


def variants_table(df: pd.DataFrame) -> list[str]:
    conv = df[(df["op"] == "conv") & ~df["variant"].isin(list(BY_NAME))]
    names = list(dict.fromkeys(conv["variant"]))
    lines = ["| layer | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for (model, layer), g in conv.groupby(["model", "layer"], sort=False):
        cells = []
        for n in names:
            r = g[g["variant"] == n]
            if r.empty:
                cells.append("")
            elif r.iloc[0]["status"] != "ok":
                cells.append("FAILED")
            else:
                r = r.iloc[0]
                cells.append(f"{_ms(r['median_s'])} ({_pct(r['floor_share'])}, {r['ratio']:.2f}x)"
                             if pd.notna(r["ratio"]) else f"{_ms(r['median_s'])} ({_pct(r['floor_share'])})")
        lines.append(f"| {model}/{layer} | " + " | ".join(cells) + " |")
    return lines


def fp32_floors(record: BenchRecord) -> dict[tuple[str, str], float]:
    """(model, layer) -> the FP32 floor: max(fp32 bytes / measured bandwidth, FLOPs / FP32 FMA peak)."""
    from profconv.run.bench import floor
    from profconv.run.models import ConvShape

    bw, peak = record.device.bandwidth_Bps, record.device.peaks.get("fp32")
    out = {}
    for la in record.layers:
        d = la.dims
        f, _ = floor(ConvShape(d.B, d.M, d.C, d.H, d.W, d.K, d.P), 4, bw, peak)
        if f:
            out[(la.model, la.layer)] = f
    return out


def targets_table(df: pd.DataFrame, record: BenchRecord) -> list[str]:
    """Shares of the variant's own floor; for fp32 also of the FP32 floor (a 3xTF32 result can beat it)."""
    best = best_per_layer(df)
    fp32 = fp32_floors(record)
    lines = ["| layer | precision | best variant | ms | share of its floor | of the FP32 floor | target | vs best cuDNN | peer |",
             "|---|---|---|---:|---:|---:|---|---:|---|"]
    for _, r in best.iterrows():
        target = 0.6 if r["variant"] in TENSOR else 0.8 if r["precision"] == "fp32" else None  # half2 fp16: none stated
        share_ok = target is not None and pd.notna(r["floor_share"]) and r["floor_share"] >= target
        ratio_ok = pd.notna(r["ratio"]) and r["ratio"] < 1
        f32 = fp32.get((r["model"], r["layer"])) if r["precision"] == "fp32" else None
        lines.append(f"| {r['model']}/{r['layer']} | {r['precision']} | {r['variant']} | {_ms(r['median_s'])} | "
                     f"{_pct(r['floor_share'])} | {_pct(f32 / r['median_s']) if f32 else ''} | "
                     f"{('met' if share_ok else 'MISSED') + f' ({target:.0%})' if target else '—'} | "
                     f"{r['ratio']:.3f} {'' if ratio_ok else 'SLOWER'} | {r['reference']} |")
    return lines


def fused_table(df: pd.DataFrame) -> list[str]:
    fused = df[df["op"] != "conv"]
    if fused.empty:
        return []
    lines = ["| layer | ops | separate ms (share) | fused-layer ms (share) | fused / separate |", "|---|---|---:|---:|---:|"]
    for (model, layer, op), g in fused.groupby(["model", "layer", "op"], sort=False):
        sep, fus = g[g["variant"] == "separate"], g[g["variant"] == "fused-layer"]
        if sep.empty or fus.empty:
            continue
        a, b = sep.iloc[0], fus.iloc[0]
        lines.append(f"| {model}/{layer} | {op} | {_ms(a['median_s'])} ({_pct(a['floor_share'])}) | "
                     f"{_ms(b['median_s'])} ({_pct(b['floor_share'])}) | {b['ratio']:.2f} |")
    return lines


def peers_table(df: pd.DataFrame, record: BenchRecord) -> list[str]:
    peers = best_peers(df, peer_checks(record))
    lines = ["| layer | precision | best peer | ms | plain loop ms | check | kernels |", "|---|---|---|---:|---:|---|---|"]
    for _, r in peers.iterrows():
        lines.append(f"| {r['model']}/{r['layer']} | {r['precision']} | {r['peer']} | {_ms(r['median_s'])} | "
                     f"{_ms(r['plain_loop_s'])} | {r['check']} | {str(r['kernels'])[:120]} |")
    return lines


def accuracy_table(path: Path) -> list[str]:
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        return []
    acc = pd.DataFrame(rows).groupby("variant")["rel_error"].agg(["count", "median", "max"])
    return ["| variant | checks | median rel. error | max |", "|---|---:|---:|---:|",
            *(f"| {v} | {int(r['count'])} | {r['median']:.3g} | {r['max']:.3g} |" for v, r in acc.iterrows())]


def main(argv: list[str]) -> int:
    record = load(Path(argv[0]))
    assert isinstance(record, BenchRecord), f"{argv[0]} is not a bench record"
    df = frame(record)
    out = [f"# {record.environment.gpu}, {record.settings.images} images, {record.settings.l2} L2 figure", "",
           "## Every variant: median ms (share of floor, ratio to the best cuDNN of its precision)", "",
           *variants_table(df), "", "## Best variant per layer and precision against the targets", "",
           *targets_table(df, record), "", "## conv + activation + pool: separate ops and the fused kernel", "",
           *fused_table(df), "", "## cuDNN peers: plain-loop check and kernels", "", *peers_table(df, record)]
    bench_errors = df[df["rel_error"].notna()].groupby("variant")["rel_error"].max()
    out += ["", "## Largest relative error on the bench's data", "",
            *(f"- {v}: {e:.3g}" for v, e in bench_errors.items())]
    if len(argv) > 1:
        out += ["", "## GPU tests' measured errors (random normal data)", "", *accuracy_table(Path(argv[1]))]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
