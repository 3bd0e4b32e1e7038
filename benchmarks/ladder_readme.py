"""The README's course-shape table (issue 25) from a bench record, between its markers in README.md.

    python benchmarks/ladder_readme.py BENCH.json [docs/bench.md [README.md]] [--label "window 4, 2026-11-28"]

Per layer and precision (fp32, TF32, fp16): the fastest correct variant, its median, its share of its
own floor (for fp32 also of the FP32 floor: 3xTF32 runs on the Tensor Cores and can beat it) and its
ratio to the fastest cuDNN peer of that precision in either layout; the fused conv + activation + pool
against the separate ops; then the targets counted. Replaces the text between
`<!-- ladder-table -->` and `<!-- /ladder-table -->`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_table import TENSOR, fp32_floors  # noqa: E402

from profconv.records import BenchRecord, load  # noqa: E402
from profconv.run.bench import best_per_layer, frame  # noqa: E402

START, END = "<!-- ladder-table -->", "<!-- /ladder-table -->"
SHORT_START, SHORT_END = "<!-- ladder-summary -->", "<!-- /ladder-summary -->"
PRECISIONS = ("fp32", "tf32", "fp16")


def cell(r: pd.Series | None, fp32_floor: float | None) -> str:
    if r is None:
        return "—"
    share = f"{r['floor_share']:.0%}"
    if fp32_floor and r["variant"] in TENSOR:
        share += f" ({fp32_floor / r['median_s']:.0%} of FP32)"
    return f"{r['variant']} {r['median_s'] * 1e3:.3f} ms, {share}, {r['ratio']:.2f}×"


def table(record: BenchRecord) -> tuple[list[str], dict[str, int]]:
    df = frame(record)
    best = best_per_layer(df)
    floors = fp32_floors(record)
    fused = df[(df["op"] != "conv") & (df["variant"] == "fused-layer")]
    lines = ["| layer | shape | fp32 best | TF32 best | fp16 best | fused layer / separate ops |",
             "|---|---|---|---|---|---|"]
    counts = {"fp32 >= 80%": 0, "Tensor Core >= 60%": 0, "faster than cuDNN": 0, "cells": 0, "tc cells": 0,
              "fp32 cells": 0}
    for la in record.layers:
        if la.same_as:
            continue
        rows = best[(best["model"] == la.model) & (best["layer"] == la.layer)]
        by = {p: (rows[rows["precision"] == p].iloc[0] if (rows["precision"] == p).any() else None) for p in PRECISIONS}
        f32 = floors.get((la.model, la.layer))
        for p, r in by.items():
            if r is None:
                continue
            counts["cells"] += 1
            counts["faster than cuDNN"] += int(pd.notna(r["ratio"]) and r["ratio"] < 1)
            if r["variant"] in TENSOR:
                counts["tc cells"] += 1
                counts["Tensor Core >= 60%"] += int(r["floor_share"] >= 0.6)
            if p == "fp32":
                counts["fp32 cells"] += 1
                share = (f32 / r["median_s"]) if f32 else r["floor_share"]
                counts["fp32 >= 80%"] += int(share >= 0.8)
        fz = fused[(fused["model"] == la.model) & (fused["layer"] == la.layer)]
        fcell = (f"{fz.iloc[0]['median_s'] * 1e3:.3f} ms, {fz.iloc[0]['ratio']:.2f}×" if not fz.empty else "—")
        lines.append(f"| {la.model} {la.layer} | {la.shape} | {cell(by['fp32'], f32)} | {cell(by['tf32'], None)} | "
                     f"{cell(by['fp16'], None)} | {fcell} |")
    return lines, counts


def short_cell(r: pd.Series | None) -> str:
    return "—" if r is None else f"{r['variant']} {r['median_s'] * 1e3:.3f} ms ({r['ratio']:.2f}×)"


def summary(record: BenchRecord) -> list[str]:
    """README's short form: per layer the best of each precision and its ratio to cuDNN of that precision."""
    best = best_per_layer(frame(record))
    lines = ["| layer | fp32 | TF32 | fp16 |", "|---|---|---|---|"]
    for la in record.layers:
        if la.same_as:
            continue
        rows = best[(best["model"] == la.model) & (best["layer"] == la.layer)]
        cells = [short_cell(rows[rows["precision"] == p].iloc[0] if (rows["precision"] == p).any() else None)
                 for p in PRECISIONS]
        lines.append(f"| {la.model} {la.layer} | " + " | ".join(cells) + " |")
    return lines


def replace_block(path: Path, start: str, end: str, block: str) -> None:
    text = path.read_text()
    if start not in text:
        raise SystemExit(f"{path}: no {start} marker")
    path.write_text(re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m: block, text, flags=re.S))


def main(argv: list[str]) -> int:
    label = argv[argv.index("--label") + 1] if "--label" in argv else ""
    args = [a for i, a in enumerate(argv) if a != "--label" and (i == 0 or argv[i - 1] != "--label")]
    record = load(Path(args[0]))
    assert isinstance(record, BenchRecord), f"{args[0]} is not a bench record"
    lines, c = table(record)
    env, st = record.environment, record.settings
    head = (f"{env.gpu}{', ' + label if label else ''}: `profconv bench` at {st.images:,} images, {st.sets} input "
            f"sets, {st.l2} L2 figure; each cell: the fastest correct variant of the precision, its median, its "
            f"share of its own floor (3xTF32: also of the FP32 floor), its ratio to the fastest cuDNN of the "
            f"precision (either layout). Bandwidth measured: {record.device.bandwidth_Bps / 1e12:.2f} TB/s.")
    targets = (f"Targets: fp32 at >= 80% of the FP32 floor on {c['fp32 >= 80%']} of {c['fp32 cells']} layers; "
               f"Tensor Core bests at >= 60% of their floor in {c['Tensor Core >= 60%']} of {c['tc cells']} cells; "
               f"faster than the best cuDNN of the precision in {c['faster than cuDNN']} of {c['cells']} cells.")
    block = "\n".join([START, head, "", *lines, "", targets, END])
    if len(args) > 1:  # the full table into args[1]; with a third path, the short one into it (the README)
        replace_block(Path(args[1]), START, END, block)
        if len(args) > 2:
            short = "\n".join([SHORT_START, f"{env.gpu}{', ' + label if label else ''}, 10,000 images, the fastest "
                               f"correct variant per precision and its ratio to the fastest cuDNN of that "
                               f"precision:", "", *summary(record), "", targets, SHORT_END])
            replace_block(Path(args[2]), SHORT_START, SHORT_END, short)
    else:
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
