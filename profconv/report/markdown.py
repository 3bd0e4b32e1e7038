"""GitHub-flavoured markdown for a report: pure functions from frames and records to text."""

from __future__ import annotations

import pandas as pd

from profconv.analysis.ranking import Ranked
from profconv.parse.schema import SECTION_TITLES
from profconv.records import RunRecord
from profconv.render.format import duration


def table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    align = align or ["l"] * len(headers)
    sep = ["---:" if a == "r" else "---" for a in align]
    esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


def seconds(v: float | None) -> str:
    return "—" if v is None or pd.isna(v) else f"{v:.6f} s"


def ratio(v: float | None) -> str:
    if v is None or pd.isna(v):
        return "—"
    return f"{v:,.0f}×" if v >= 100 else f"{v:.3g}×"


def environment(record: RunRecord) -> str:
    env = record.environment
    items = [
        ("GPU", env.gpu or f"none ({env.gpu_unavailable or 'no CUDA'})"),
        ("compute capability", env.compute_capability or "—"),
        ("driver / runtime", f"{env.driver_version or '—'} / {env.runtime_version or '—'}"),
        ("CuPy", env.cupy_version or "—"),
        ("PyTorch / cuDNN", f"{env.torch_version or '—'} / {env.cudnn_version or '—'}"),
        ("profconv", env.profconv_version or "—"),
        ("Python", env.python or "—"),
        ("command", "`" + " ".join(record.argv) + "`"),
        ("created", record.created),
        ("data", f"{record.data.source} (weights: {record.data.weights})"),
        ("timing", f"{record.settings.warmup} warm-up, {record.settings.repeat} timed repeats, "
                   "CUDA events, median"),
    ]
    return table(["", ""], [[k, str(v)] for k, v in items])


def op_time_table(df: pd.DataFrame) -> str:
    rows = []
    for r in df.to_dict("records"):
        status = "ok" if r["status"] == "ok" else f"**FAILED**: {r['error']}"
        rows.append([f"{int(r['images']):,}", r["variant"], r["layer"], r["shape"], seconds(r["median_s"]),
                     seconds(r["min_s"]), "—" if pd.isna(r["spread"]) else f"{r['spread'] * 100:.1f}%",
                     ratio(r["vs_naive"]), ratio(r["vs_cpu"]), ratio(r["vs_cudnn"]),
                     "—" if pd.isna(r["rel_error"]) else f"{r['rel_error']:.1e}",
                     "—" if pd.isna(r["correctness"]) else f"{r['correctness']:.4f}", status])
    return table(["images", "variant", "layer", "shape", "Op Time (median)", "min", "spread", "vs naive",
                  "vs CPU", "vs cuDNN¹", "rel. error", "Correctness", "status"], rows,
                 ["r", "l", "l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "l"])


def ladder_table(lad: pd.DataFrame) -> str:
    rows = [[r["variant"], r["technique"], seconds(r["conv_s"]), ratio(r["gain_vs_previous"]), r["status"]]
            for r in lad.to_dict("records")]
    return table(["rung", "technique", "conv time (all layers)", "gain over previous rung", "status"], rows,
                 ["l", "l", "r", "r", "l"])


def efficiency_table(eff: pd.DataFrame) -> str:
    has_floor = "floor_s" in eff.columns
    headers = ["variant", "layer", "GFLOP", "min. GB", "Op Time", "GFLOP/s", "GB/s"]
    if has_floor:
        headers += ["floor", "bound", "of floor"]
    rows = []
    for r in eff.to_dict("records"):
        row = [r["variant"], r["layer"], f"{r['gflop']:.2f}", f"{r['min_gb']:.3f}", seconds(r["median_s"]),
               f"{r['gflops']:,.0f}", f"{r['gbps']:,.0f}"]
        if has_floor:
            row += [seconds(r["floor_s"]), r["bound"], f"{r['of_floor'] * 100:.1f}%"]
        rows.append(row)
    return table(headers, rows, ["l", "l"] + ["r"] * (len(headers) - 2))


def breakdown_table(bd: pd.DataFrame) -> str:
    cols = [c for c in bd.columns if c not in ("images", "variant")]
    rows = [[f"{int(r['images']):,}", r["variant"], *[seconds(r[c]) for c in cols]] for r in bd.to_dict("records")]
    return table(["images", "variant", *cols], rows, ["r", "l"] + ["r"] * len(cols))


def ranked_table(r: Ranked, full_names: bool = False) -> str:
    rows = []
    for row in r.rows.to_dict("records"):
        name = row["name"] if full_names else row["short_name"]
        mark = "✔" if row["in_top"] else ""
        fmt = (lambda s: f"**{s}**") if row["in_top"] else (lambda s: s)
        pct = "—" if pd.isna(row["time_pct"]) else f"{row['time_pct']:.2f}"
        calls = "—" if pd.isna(row["calls"]) else f"{int(row['calls']):,}"
        rows.append([mark, pct, f"{row['share'] * 100:.2f}%", f"{row['cumulative'] * 100:.1f}%",
                     duration(row["total_ns"]), calls, duration(row["avg_ns"]), fmt(f"`{name}`")])
    title = SECTION_TITLES.get(r.section, r.section)
    head = f"**{title}** — {r.top_count} of {len(r.rows)} take {r.top_share * 100:.1f}% of the time (✔)\n\n"
    return head + table(["", "Time(%)", "share", "cum.", "total", "calls", "avg", "name"], rows,
                        ["l", "r", "r", "r", "r", "r", "r", "l"])
