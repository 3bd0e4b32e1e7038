"""Assemble the report document from run records and logs; plots written beside the markdown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profconv.analysis.ranking import rank_profile
from profconv.hardware import peak_for
from profconv.parse.schema import TIMED_SECTIONS, conform, context_facts
from profconv.profile.session import NCU_COLUMNS, metric_text, metrics_frame
from profconv.records import to_builtins
from profconv.report import analysis, markdown, plots
from profconv.report.bench import to_markdown as bench_markdown
from profconv.report.inputs import BenchInput, Input, LogInput, RunInput


@dataclass(frozen=True)
class ReportOptions:
    threshold: float = 0.90
    plots_dir: Path | None = None  # None: no plots (terminal output)
    link_base: Path | None = None  # plots are linked relative to this directory
    full_names: bool = False
    title: str = "profconv report"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")


def run_section(inp: RunInput, opts: ReportOptions) -> str:
    rec = inp.record
    model = rec.model.name
    parts = [f"## Run: {model}", f"Record: `{inp.path}`", "", "### Environment", "", markdown.environment(rec), ""]
    if rec.data.synthetic:
        parts += ["> Data: profconv's synthetic image set and bundled weights — Correctness is not comparable "
                  "with the course's published accuracy.", ""]
    if rec.interrupted:
        parts += ["> **This run was interrupted**: only the variants listed finished.", ""]
    df = analysis.op_times(rec)
    if df.empty:
        return "\n".join(parts + ["No variant ran (all skipped): nothing to report.", ""])
    df = analysis.with_speedups(df)
    parts += ["### Op Time per conv layer", "",
              "Median of the timed repeats (CUDA events, device synchronised before and after, after warm-up); "
              "spread is (max − min) / median. Speedups compare medians on the same layer and image count; "
              "¹ against cuDNN of the row's precision (fp16 rows: cudnn-fp16).", "",
              markdown.op_time_table(df), ""]
    order = rec.settings.variants or list(dict.fromkeys(df["variant"]))
    lad = analysis.ladder(df, order)
    parts += ["### Optimisation ladder", "", f"All conv layers, {int(df['images'].max()):,} images; each rung's gain is "
              "over the previous rung that ran correctly (the CPU reference and the end-to-end variants, whose "
              "time includes host copies, are not rungs).", "",
              markdown.ladder_table(lad), ""]
    peak = peak_for(rec.environment.gpu)
    gpu_rows = df[df["variant"] != "cpu"]
    eff = analysis.efficiency(gpu_rows[gpu_rows["images"] == gpu_rows["images"].max()], peak)
    if not eff.empty:
        if peak is None:
            note = "No datasheet peak is known for this GPU: achieved rates only."
        else:
            note = (f"Floor = max(FLOPs / peak of the variant's arithmetic (FP32 {peak.fp32_tflops}, FP16 "
                    f"{peak.fp16_tflops}, FP16 Tensor Core {peak.tensor_fp16_tflops} TFLOP/s), minimum bytes / "
                    f"{peak.dram_tbps} TB/s) from the {peak.source}; minimum bytes = input + weights + output, "
                    "each moved once, in the variant's precision. \"of floor\" is floor / Op Time: 100% would be at "
                    "the roof. End-to-end variants (host copies included) are not listed.")
        parts += ["### Efficiency", "", note, "", markdown.efficiency_table(eff), ""]
    bd = analysis.layer_breakdown(rec)
    if not bd.empty:
        parts += ["### Forward pass by layer type", "", markdown.breakdown_table(bd), ""]
    if opts.plots_dir is not None:
        opts.plots_dir.mkdir(parents=True, exist_ok=True)
        base = opts.link_base or opts.plots_dir
        bars = plots.op_time_bars(df, model, opts.plots_dir / f"{_slug(model)}-op-time.png")
        parts += [f"![Op Time per variant, {model}]({bars.relative_to(base).as_posix()})", ""]
        fp32 = eff[eff["arithmetic"] == "fp32"]
        if peak is not None and not fp32.empty:
            roof = plots.roofline(fp32, peak, f"{model} on {rec.environment.gpu}",
                                  opts.plots_dir / f"{_slug(model)}-roofline.png")
            parts += [f"![Roofline of the fp32 variants, {model}]({roof.relative_to(base).as_posix()})", ""]
    parts += profile_parts(inp, opts)
    failed = df[df["status"] != "ok"]
    if not failed.empty:
        parts += ["### Failed variants", ""]
        parts += [f"- `{r['variant']}` {r['layer']} ({int(r['images']):,} images): {r['error']}"
                  for r in failed.to_dict("records")]
        parts.append("")
    return "\n".join(parts)


def profile_parts(inp: RunInput, opts: ReportOptions) -> list[str]:
    """What `run --profile` stored: per-variant kernel/API tables (cupti) or ncu metrics per conv op."""
    parts: list[str] = []
    if inp.record.profile is None:
        return parts
    prof = inp.record.profile
    rows_file = inp.path.parent / (prof.rows or "")
    if prof.tool == "cupti" and prof.rows and rows_file.is_file():
        frame = conform(pd.read_csv(rows_file))
        logs = ", ".join(f"`{v}`" for v in prof.logs.values())
        parts += ["### Profile (CUPTI)", "", "Kernels and API calls recorded in-process while the variants ran, "
                  f"attributed to their NVTX ranges; nvprof-style logs: {logs}.", ""]
        for number, label in enumerate(prof.profiles, start=1):
            parts += [f"#### {'whole run' if label == 'all' else label}", ""]
            for ranked in rank_profile(frame, number, ["gpu", "api"], opts.threshold):
                parts += [markdown.ranked_table(ranked, opts.full_names), ""]
    if prof.launches:
        mf = metrics_frame(to_builtins(prof))
        units: dict[str, str] = {}
        for k in prof.launches:
            units.update(k.units)
        shown = [(m, t) for m, t in NCU_COLUMNS if m in mf.columns]
        headers = ["op", "kernel", *[f"{t} ({units[m]})" if units.get(m) else t for m, t in shown]]
        rows = [[r["range"], f"`{r['kernel']}`", *[metric_text(r[m]) for m, _ in shown]] for r in mf.to_dict("records")]
        parts += ["### Nsight Compute metrics", "", f"`ncu` on the conv kernels only (raw output: `{prof.raw}`), "
                  "mean over the timed launches.", "", markdown.table(headers, rows, ["l", "l"] + ["r"] * len(shown)), ""]
    return parts


def log_section(inp: LogInput, opts: ReportOptions) -> str:
    ps = inp.profiles
    parts = [f"## Profiler log: `{ps.source}`", ""]
    for info in ps.profiles:
        where = f", lines {info.line_start}–{info.line_end}" if info.line_start else ""
        parts += [f"### Profile {info.profile} ({info.tool}{where})", ""]
        facts = context_facts(info)
        parts += [f"- {f}" for f in facts] + ([""] if facts else [])
        for ranked in rank_profile(ps.frame, info.profile, list(TIMED_SECTIONS), opts.threshold):
            parts += [markdown.ranked_table(ranked, opts.full_names), ""]
    if ps.unplaced:
        parts += [f"> {len(ps.unplaced)} line(s) looked like table data but could not be placed: lines "
                  + ", ".join(str(n) for n, _ in ps.unplaced[:20]), ""]
    for note in ps.notes:
        parts += [f"> warning: {note}", ""]
    return "\n".join(parts)


def build(inputs: list[Input], opts: ReportOptions) -> str:
    parts = [f"# {opts.title}", ""]
    for inp in inputs:
        if isinstance(inp, BenchInput):
            parts.append(bench_markdown(inp.record, level=2))
        else:
            parts.append(run_section(inp, opts) if isinstance(inp, RunInput) else log_section(inp, opts))
    return "\n".join(parts).rstrip() + "\n"
