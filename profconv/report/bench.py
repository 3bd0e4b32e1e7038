"""A bench record as a report section: the best variant per layer and precision (the table the
targets are read from), then per layer every variant against cuDNN of its precision."""

from __future__ import annotations

import pandas as pd

from profconv.records import BenchLayer, BenchRecord, to_builtins
from profconv.records.provenance import summary_line
from profconv.render import markdown
from profconv.render.document import Bullets, Column, Document, Paragraph, RenderOptions, Section, Table
from profconv.run.bench import best_peers, best_per_layer, frame, peer_checks

# drop: what a narrow terminal leaves out first (the markdown and HTML reports show every column)
BEST = [Column("model", "model"), Column("layer", "layer"), Column("shape", "shape", drop=1),
        Column("precision", "precision"), Column("variant", "best variant"), Column("median_s", "Op Time", "seconds"),
        Column("ratio", "vs cuDNN", "ratio"), Column("reference", "cuDNN peer (layout)", drop=3),
        Column("floor_share", "share of floor", "fraction", drop=2)]
PEERS = [Column("model", "model"), Column("layer", "layer"), Column("precision", "precision"),
         Column("peer", "best cuDNN"), Column("layout", "layout"), Column("median_s", "Op Time", "seconds"),
         Column("ci_rel", "± (95%)", "fraction", drop=1), Column("others", "other layouts", drop=2),
         Column("plain_loop_s", "plain loop", "seconds", drop=3), Column("check", "loop check"),
         Column("kernels", "kernels (algorithm)", drop=4)]
# the layer table: the L2 figures (drop 1) and the interval (2) first, then these, lowest first
LAYER = [Column("variant", "variant"), Column("precision", "precision", drop=6),
         Column("median_s", "Op Time", "seconds"), Column("min_s", "min", "seconds", drop=5),
         Column("ratio", "ratio", "ratio"), Column("reference", "vs"),
         Column("floor_share", "share of floor", "fraction", drop=7), Column("bound", "bound", drop=4),
         Column("rel_error", "rel. error", "sci", drop=3), Column("status", "status"), Column("error", "error")]


def bench_section(record: BenchRecord) -> Section:
    env, dev, st = record.environment, record.device, record.settings
    df = frame(record)
    bw = dev.bandwidth_Bps
    sec = Section(f"profconv bench — {env.gpu or 'no GPU'}")
    sec.add(Paragraph(f"`{' '.join(record.argv)}` · {record.created}"))
    floor = (f"Floor = max(minimum bytes / measured bandwidth, FLOPs / datasheet peak of the variant's arithmetic); "
             f"bandwidth measured here: {bw / 1e12:.2f} TB/s ({dev.bandwidth_method or ''}); peaks: "
             + ", ".join(f"{k} {v / 1e12:.1f} TFLOP/s" for k, v in dev.peaks.items())
             + f" ({dev.peak_source or ''})") if bw else "No bandwidth measured: no floors"
    sec.add(Bullets([
        f"GPU: {env.gpu} (compute capability {env.compute_capability}), driver {env.driver_version}, CuPy "
        f"{env.cupy_version}, PyTorch {env.torch_version or '—'} / cuDNN {env.cudnn_version or '—'}",
        f"{st.images} images per input set, {st.sets} input sets, {st.repeat} interleaved rounds after {st.warmup} "
        f"warm-up rounds: every time below is the median of {(st.sets or 0) * (st.repeat or 0)} single calls "
        "between CUDA events" + (f" at least (more until every median's 95% interval was within ±{st.ci_target:.1%} "
                                 f"or {st.time_budget_s:g} s per layer)" if st.ci_target else "")
        + (f"; headline figure: {st.l2} (warm: the same call issued right behind itself, data in L2, host work "
           "overlapped; cold: L2 flushed and the device idle before, host and launch time included)" if st.l2 else ""),
        floor,
        "ratio = time / time of the reference (the fastest cuDNN of the same precision, layout in its name; "
        "`streams` against `e2e`): below 1 is faster",
        *([f"provenance: {summary_line(to_builtins(record.provenance))}"] if record.provenance else []),
    ]))
    if record.interrupted:
        sec.add(Paragraph("Interrupted: the record holds the layers finished before Ctrl-C.", "warning"))
    best = best_per_layer(df)
    if not best.empty:
        sec.sections.append(Section("Best variant per layer").add(Table("bench-best", "", best, BEST)))
    peers_df = best_peers(df, peer_checks(record))
    if not peers_df.empty:
        failed = peers_df[peers_df["check"].str.startswith("loop")]
        sec.sections.append(Section("Best cuDNN per layer and precision").add(
            Paragraph(f"Every cuDNN peer in both layouts (operands converted to the peer's dtype and layout before "
                      f"timing); the fastest of each precision is the one the variants' ratios are taken against "
                      f"({st.l2 or 'cold'} L2 figure). Plain loop: the same conv2d call in a plain PyTorch loop in "
                      f"this process (per call); the check fails where it beats the peer by more than the peer's "
                      f"95% interval."),
            Table("bench-peers", "", peers_df, PEERS),
            *([Paragraph(f"{len(failed)} peer(s) slower than a plain loop of the same call: their ratios flatter "
                         f"the variants.", "warning")] if not failed.empty else [])))
    for i, layer in enumerate(record.layers):
        sec.sections.append(layer_section(layer, i, df))
    return sec


def layer_title(layer: BenchLayer) -> str:
    return f"{layer.model} {layer.layer}: {layer.shape}, {layer.images:,} images"


def layer_section(layer: BenchLayer, i: int, df: pd.DataFrame) -> Section:
    """One layer (the i-th of the record; `df` its frame): every variant against cuDNN of its precision,
    the fused layer, the swept parameters. `profconv bench` prints it as soon as the layer is measured."""
    sub = Section(layer_title(layer))
    if layer.same_as:
        return sub.add(Paragraph(f"Same shape as {layer.same_as}: measured there."))
    rows = df[(df["model"] == layer.model) & (df["layer"] == layer.layer)]
    cols = LAYER if rows["error"].notna().any() else LAYER[:-1]
    extra = [Column("ci_rel", "± (95%)", "fraction", drop=2)] if rows["ci_rel"].notna().any() else []
    if rows["cold_s"].notna().any() and rows["warm_s"].notna().any():
        extra += [Column("cold_s", "cold L2", "seconds", drop=1), Column("warm_s", "warm L2", "seconds", drop=1)]
    cols = cols[:4] + extra + cols[4:]
    sub.add(Table(f"bench-{i}", "", rows[rows["op"] == "conv"], cols))
    if layer.fused:
        sub.add(Table(f"bench-{i}-fused", f"Fused layer — {layer.fused_ops}, timed as one op (floor from the "
                      "pooled output's bytes)", rows[rows["op"] != "conv"], cols))
    chosen = [r for r in layer.results + layer.fused if r.params]
    if chosen:
        sub.add(Paragraph("Swept parameters: " + "; ".join(
            f"{r.variant} " + ", ".join(f"{k}={v}" for k, v in r.params.items()) for r in chosen)))
    return sub


def summary_sections(record: BenchRecord) -> list[Section]:
    """The bench report's sections other than the per-layer ones (the best variant and the best cuDNN
    per layer and precision): what `profconv bench` prints at the end, the layers having been printed."""
    layers = {layer_title(layer) for layer in record.layers}
    return [s for s in bench_section(record).sections if s.title not in layers]


def to_markdown(record: BenchRecord) -> str:
    """The bench report on its own (`profconv bench --markdown`)."""
    sec = bench_section(record)
    doc = Document(sec.title, sections=sec.sections)
    doc.sections.insert(0, Section("Setting", blocks=sec.blocks))
    return markdown.render(doc, RenderOptions(full=True))
