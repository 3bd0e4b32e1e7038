"""Assemble the report Document from run records, bench records and profiler logs.

The report a student hands in: per run the environment, Op Time, the ladder, efficiency, plots and,
per variant or profile, the rows that make up >=90% of the time (the seeds' shape). Everything else
(full kernel and API tables, every Op Time column) goes into appendix sections: markdown prints them
with --full, HTML folds them. Analysis lives in profconv.analysis; drawing in profconv.render."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profconv.analysis import runs
from profconv.analysis.profiles import TOP_COLUMNS, metric_rows, profile_titles, ranked, top_rows
from profconv.hardware import Peak, peak_for
from profconv.parse.schema import SECTION_TITLES, TIMED_SECTIONS, conform, context_facts
from profconv.profile.session import NCU_COLUMNS, metric_text, metrics_frame
from profconv.records import RunRecord, to_builtins
from profconv.records.run import ProfileInfo
from profconv.render import plots
from profconv.render.document import Bullets, Column, Document, Figure, Paragraph, Section, Table
from profconv.report.bench import bench_section
from profconv.report.inputs import BenchInput, Input, LogInput, RunInput
from profconv.report.verdicts import verdict_section


@dataclass(frozen=True)
class ReportOptions:
    threshold: float = 0.90
    plots_dir: Path | None = None  # None: no plots (terminal output)
    title: str = "profconv report"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")


TOP_TABLE = [Column("group", "variant"), Column("time_pct", "Time(%)", "percent"), Column("total_s", "Time", "seconds"),
             Column("calls", "Calls", "int"), Column("avg_s", "Avg", "seconds"),
             Column("name", "Name", "code", full_key="full_name")]
FULL_TABLE = [Column("time_pct", "Time(%)", "percent"), Column("share", "share", "fraction"),
              Column("cumulative", "cum.", "fraction"), Column("total_s", "Time", "seconds"),
              Column("calls", "Calls", "int"), Column("avg_s", "Avg", "seconds"),
              Column("name", "Name", "code", full_key="full_name")]


def _top_table(uid: str, section: str, top: pd.DataFrame, group_header: str, threshold: float) -> Table:
    title = SECTION_TITLES.get(section, section)
    cols = [Column("group", group_header), *TOP_TABLE[1:]]
    return Table(uid, f"{title} taking ≥{threshold:.0%} of the time, per {group_header}", top, cols,
                 highlight="in_top", group="group")


def _full_tables(uid: str, frame: pd.DataFrame, number: int, label: str, threshold: float,
                 sections: tuple[str, ...]) -> list[Table]:
    out = []
    for section in sections:
        rows = ranked(frame, number, section, threshold, label)
        if rows.empty:
            continue
        top = rows[rows["in_top"]]
        out.append(Table(f"{uid}-{section}", f"{SECTION_TITLES.get(section, section)} — {len(top)} of {len(rows)} "
                         f"take {top['share'].sum():.1%} of the time", rows, FULL_TABLE, highlight="in_top"))
    return out


def environment(rec: RunRecord) -> Bullets:
    env = rec.environment
    gpu = env.gpu or f"none — {env.gpu_unavailable or 'no CUDA'}"
    cc = f" (compute capability {env.compute_capability})" if env.compute_capability else ""
    return Bullets([
        f"GPU: {gpu}{cc}; driver {env.driver_version or '—'}, runtime {env.runtime_version or '—'}",
        f"CuPy {env.cupy_version or '—'}, PyTorch {env.torch_version or '—'} / cuDNN {env.cudnn_version or '—'}, "
        f"profconv {env.profconv_version or '—'}, Python {env.python or '—'}",
        f"command: `{' '.join(rec.argv)}` ({rec.created})",
        f"data: {rec.data.source} (weights: {rec.data.weights}); timing: {timing_line(rec)}",
        *([f"provenance: {provenance_line(to_builtins(rec.provenance))}"] if rec.provenance else []),
    ])


FORWARD_NOTE = ("The whole net, layer by layer, on every image (the correctness pass): on the GPU the median of "
                "up to 3 passes, on the CPU one pass. Its conv column is measured inside the net, so it differs "
                "from the sum of the Op Times (the conv alone, repeated, warm caches) by a few percent; read Op Time "
                "for the conv itself.")


def timing_line(rec: RunRecord) -> str:
    """How the run's Op Times were taken: CUDA events on the GPU, perf_counter passes for the CPU
    reference; a CPU-only run names only the latter (it ran no CUDA event)."""
    st = rec.settings
    ran = {r.variant for r in rec.results if r.status != "skipped"}
    cpu = (f"CPU reference: median of {st.cpu_repeat or 1} pass(es) over every image (perf_counter)"
           if "cpu" in ran else "")
    gpu_ran = any(v != "cpu" for v in ran)
    gpu = (f"{st.warmup} warm-up and {st.repeat} timed repeats" + (
        f" at least, more until the median's 95% interval is within ±{st.ci_target:.1%} or "
        f"{st.time_budget_s:g} s per op" if st.ci_target else "") + ", CUDA events, median") if gpu_ran else ""
    return "; ".join(p for p in (gpu, cpu) if p) or "no variant ran"


def skipped_section(rec: RunRecord) -> Section | None:
    """What did not run, so nothing asked for vanishes from the report: each of your kernels with its
    contract and file, the built-in variants grouped by reason."""
    items = []
    for r in rec.results:
        if r.status == "skipped" and r.user:
            u = r.user
            where = f", `{u['path']}`" if u.get("path") else ""
            items.append(f"`{r.variant}` (your kernel, {u.get('contract') or 'unknown'} contract{where}), "
                         f"{r.images:,} images: skipped — {r.error or 'not run'}; its manifest and contract were "
                         "checked")
    by_reason: dict[str, list[str]] = {}
    for r in rec.results:
        if r.status == "skipped" and not r.user:
            names = by_reason.setdefault(r.error or "not run", [])
            if r.variant not in names:
                names.append(r.variant)
    items += [f"{', '.join(f'`{n}`' for n in names)}: skipped — {why}" for why, names in by_reason.items()]
    return Section("Skipped").add(Bullets(items)) if items else None


def skipped_reason(rec: RunRecord) -> str:
    """The reasons the skipped variants give, each once ('needs CUDA and CuPy')."""
    return "; ".join(dict.fromkeys(r.error or "skipped" for r in rec.results if r.status == "skipped"))


def provenance_line(prov: dict) -> str:
    from profconv.records.provenance import summary_line

    return summary_line(prov)


OP_COLUMNS = [Column("images", "images", "int"), Column("variant", "variant"),
              Column("precision", "precision", drop=2), Column("layer", "layer"),
              Column("median_s", "Op Time", "seconds"), Column("spread", "spread", "fraction", drop=3),
              Column("vs_naive", "vs naive", "ratio", drop=4), Column("vs_cudnn", "vs cuDNN¹", "ratio"),
              Column("rel_error", "rel. error", "sci", drop=1), Column("status", "status")]
OP_FULL = [Column("images", "images", "int"), Column("variant", "variant"), Column("technique", "technique"),
           Column("precision", "precision"), Column("layer", "layer"), Column("shape", "shape"),
           Column("median_s", "Op Time (median)", "seconds"), Column("min_s", "min", "seconds"),
           Column("max_s", "max", "seconds"), Column("spread", "spread", "fraction"),
           Column("vs_naive", "vs naive", "ratio"), Column("vs_cpu", "vs CPU", "ratio"),
           Column("vs_cudnn", "vs cuDNN¹", "ratio"), Column("rel_error", "rel. error", "sci"),
           Column("correctness", "Correctness", "number", digits=".4f"), Column("status", "status"),
           Column("error", "error")]


def run_section(inp: RunInput, opts: ReportOptions) -> Section:
    rec = inp.record
    model = rec.model.name
    sec = Section(f"Run: {model} on {rec.environment.gpu or 'no GPU'}")
    sec.add(Paragraph(f"Record: `{inp.path}`"), environment(rec))
    if rec.data.synthetic:
        sec.add(Paragraph("Data: profconv's synthetic image set and bundled weights — Correctness is not "
                          "comparable with the course's published accuracy.", "note"))
    if rec.interrupted:
        sec.add(Paragraph("This run was interrupted: only the variants listed finished.", "warning"))
    df = runs.op_times(rec)
    skipped = skipped_section(rec)
    if df.empty:
        sec.add(Paragraph("No variant ran (all skipped): nothing to report."))
        if skipped is not None:
            sec.sections.append(skipped)
        return sec
    df = runs.with_speedups(df, rec)
    sec.sections += [_op_section(df), _ladder_section(df, rec)]
    if skipped is not None:
        sec.sections.append(skipped)
    peak = peak_for(rec.environment.gpu)
    gpu_rows = df[df["variant"] != "cpu"]
    eff = runs.efficiency(gpu_rows[gpu_rows["images"] == gpu_rows["images"].max()], peak)
    if not eff.empty:
        sec.sections.append(_efficiency_section(eff, peak))
    forward = _forward_section(rec)
    if forward is not None:
        sec.sections.append(forward)
    if opts.plots_dir is not None:
        sec.sections.append(_plots_section(df, eff, peak, rec, opts.plots_dir))
    sec.sections += profile_sections(inp, opts)
    sec.sections += _closing_sections(inp, df)
    return sec


def _op_section(df: pd.DataFrame) -> Section:
    """Op Time per conv layer and variant, and the Correctness of each."""
    shapes = ", ".join(f"{lay} {shape}" for lay, shape in dict(zip(df["layer"], df["shape"], strict=True)).items())
    correctness = df.groupby(["images", "variant"], sort=False)["correctness"].first().dropna()
    op = Section("Op Time per conv layer")
    how = ("CUDA events, device synchronised before and after, after warm-up" if (df["variant"] != "cpu").any()
           else "perf_counter around each pass over every image, chunk by chunk")
    op.add(Paragraph(f"Layers: {shapes}. Median of the timed repeats ({how}); spread is (max − min) / median. "
                     "Speedups compare medians on the same layer and image count; ¹ against the fastest cuDNN of the "
                     "row's precision in this run (any layout), as the terminal shows it."),
           Table("op-time", "", df, OP_COLUMNS))
    if not correctness.empty:
        values = sorted({f"{v:.4f}" for v in correctness})
        pairs = [(int(k[0]), str(k[1]), float(c)) for k, c in correctness.items()  # type: ignore[index]
                 ]
        at = f" ({pairs[0][0]:,} images)" if len({p[0] for p in pairs}) == 1 else ""
        op.add(Paragraph("Correctness" + at + ": " + (f"{values[0]} for every variant" if len(values) == 1 else
                         ", ".join(f"{v} {c:.4f}" + ("" if at else f" ({n:,} images)") for n, v, c in pairs))))
    return op


def _ladder_section(df: pd.DataFrame, rec: RunRecord) -> Section:
    """Each GPU rung's gain over the previous rung of its precision (or why there is no ladder)."""
    order = rec.settings.variants or list(dict.fromkeys(df["variant"]))
    lad = runs.ladder(df, order)
    n = int(df["images"].max())
    ladder = Section("Optimisation ladder")
    if lad.empty:  # a CPU-only run: say so, no table of headers alone
        not_run = [r.variant for r in rec.results if r.status == "skipped" and r.variant != "cpu"]
        ladder.add(Paragraph("No GPU rungs ran" + (f" ({len(not_run)} skipped: {skipped_reason(rec)})" if not_run
                                                   else "") + ": the ladder compares the GPU variants."))
        return ladder
    ladder.add(
        Paragraph(f"All conv layers, {n:,} images. Each rung's gain is over the previous rung **of the same "
                  "precision** that ran correctly (fp16 rungs are not compared with fp32 ones); the CPU reference "
                  "and the end-to-end variants (their time includes host copies) are not rungs."),
        Table("ladder", "", lad, [Column("variant", "rung"), Column("technique", "technique", drop=1),
                                  Column("precision", "precision"),
                                  Column("conv_s", "conv time (all layers)", "seconds"),
                                  Column("previous", "over"), Column("gain_vs_previous", "gain", "ratio"),
                                  Column("status", "status")]))
    return ladder


def _efficiency_section(eff: pd.DataFrame, peak: Peak | None) -> Section:
    """Achieved GFLOP/s and GB/s of the GPU variants, against the datasheet's floor where it is known."""
    cols = [Column("variant", "variant"), Column("layer", "layer"), Column("median_s", "Op Time", "seconds"),
            Column("gflops", "GFLOP/s", "number", digits=",.0f"), Column("gbps", "GB/s", "number", digits=",.0f")]
    if peak is None:
        note = "No datasheet peak is known for this GPU: achieved rates only."
    else:
        note = (f"Floor = max(FLOPs / peak of the variant's arithmetic (FP32 {peak.fp32_tflops}, FP16 "
                f"{peak.fp16_tflops}, FP16 Tensor Core {peak.tensor_fp16_tflops} TFLOP/s), minimum bytes / "
                f"{peak.dram_tbps} TB/s) from the {peak.source}; minimum bytes = input + weights + output, each "
                "moved once, in the variant's precision. \"of floor\" = floor / Op Time: 100% would be at the roof.")
        cols += [Column("floor_s", "floor", "seconds"), Column("bound", "bound"),
                 Column("of_floor", "of floor", "fraction")]
    return Section("Efficiency").add(Paragraph(note), Table("efficiency", "", eff, cols))


def _forward_section(rec: RunRecord) -> Section | None:
    bd = runs.layer_breakdown(rec)
    if bd.empty:
        return None
    kinds = [c for c in bd.columns if c not in ("images", "variant")]
    return Section("Forward pass by layer type").add(Paragraph(FORWARD_NOTE), Table(
        "forward", "", bd, [Column("images", "images", "int"), Column("variant", "variant"),
                            *[Column(k, k, "seconds", drop=None if k in ("conv", "forward") else i + 1)
                              for i, k in enumerate(kinds)]]))


def _plots_section(df: pd.DataFrame, eff: pd.DataFrame, peak: Peak | None, rec: RunRecord, plots_dir: Path) -> Section:
    """The Op Time bars and the fp32 roofline, drawn into `plots_dir`."""
    model = rec.model.name
    plots_dir.mkdir(parents=True, exist_ok=True)
    figs = Section("Plots")
    bars = plots.op_time_bars(df, model, plots_dir / f"{_slug(model)}-op-time.png")
    unplottable = int((~plots.plottable(df["median_s"]) & (df["status"] == "ok")).sum())
    figs.add(Figure(bars, f"Op Time per variant, {model}") if bars is not None else Paragraph(
        "No Op Time plot: no time of this record can be drawn on a log axis (each is 0, below "
        f"{plots.PLOTTABLE_S[0]:g} s, above {plots.PLOTTABLE_S[1]:g} s or not a number).", "warning"))
    if bars is not None and unplottable:
        figs.add(Paragraph(f"{unplottable} Op Time(s) left out of the plot: 0, below {plots.PLOTTABLE_S[0]:g} s, "
                           f"above {plots.PLOTTABLE_S[1]:g} s or not a number (the tables show them).", "warning"))
    fp32 = eff[eff["arithmetic"] == "fp32"] if not eff.empty else eff
    if peak is not None and not fp32.empty:
        roof = plots.roofline(fp32, peak, f"Roofline of the fp32 variants: {model} on {rec.environment.gpu}",
                              plots_dir / f"{_slug(model)}-roofline.png")
        if roof is not None:
            figs.add(Figure(roof, f"Roofline of the fp32 variants, {model}"))
    return figs


def _closing_sections(inp: RunInput, df: pd.DataFrame) -> list[Section]:
    """The diagnosis (`profconv explain`), the judge's verdict, failed variants, notes, the full Op Time."""
    rec = inp.record
    out: list[Section] = []
    if rec.evidence is not None:  # `profconv explain` collected its evidence: the diagnosis and what to try next
        from profconv.report.explain import explain_run, explain_sections

        out += explain_sections(inp, explain_run(inp))
    judged = verdict_section(rec)
    if judged is not None:
        out.append(judged)
    failed = df[df["status"] != "ok"]
    if not failed.empty:
        out.append(Section("Failed variants").add(Bullets(
            [f"`{r['variant']}` {r['layer']} ({int(r['images']):,} images): {r['error']}"
             for r in failed.to_dict("records")])))
    notes = [f"`{r.variant}` ({r.images:,} images): {n}" for r in rec.results for n in r.notes]
    if notes:  # what a profiler or the sanitizer could not do for a user kernel, racecheck warnings
        out.append(Section("Notes on your kernels").add(Bullets(notes)))
    out.append(Section("Op Time, every column", appendix=True).add(Table("op-time-full", "", df, OP_FULL)))
    return out


def _cupti_rows(inp: RunInput) -> tuple[pd.DataFrame | None, str]:
    """The CUPTI rows file the record names, read only from the record's own directory: (frame, '') or
    (None, why not). A missing file is said too (a record copied without its directory)."""
    from profconv.errors import InputError
    from profconv.io import file_inside

    name = inp.record.profile.rows if inp.record.profile else None
    try:
        path = file_inside(inp.path.parent, name or "")
        raw = pd.read_csv(path)
        if missing := [c for c in ("profile", "section", "name", "total_ns") if c not in raw.columns]:
            raise ValueError(f"no {', '.join(missing)} column")
        return conform(raw), ""
    except InputError as exc:
        return None, f"The CUPTI tables are not shown: the record's profile.rows {exc}."
    except (ValueError, UnicodeDecodeError, OSError, pd.errors.ParserError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"The CUPTI tables are not shown: `{name}` is not a profconv rows file ({first})."


def profile_sections(inp: RunInput, opts: ReportOptions) -> list[Section]:
    """What `run --profile` stored: per variant the >=90% kernels and API calls (CUPTI), or the ncu
    metrics of the conv kernels; the full tables as appendix sections."""
    prof = inp.record.profile
    if prof is None:
        return []
    out = _cupti_sections(inp, opts, prof)
    whole, prof = prof, prof.ncu or prof
    if prof.launches:
        out.append(_ncu_section(prof))
    if whole.agreement:
        out.append(agreement_section(to_builtins(whole.agreement), prof.settings if prof.tool == "ncu" else None))
    return out


def _cupti_sections(inp: RunInput, opts: ReportOptions, prof: ProfileInfo) -> list[Section]:
    """Per variant the CUPTI kernels and API calls taking >= the threshold; every row in the appendix."""
    out: list[Section] = []
    frame, why = _cupti_rows(inp) if "cupti" in (prof.tools or [prof.tool]) and prof.rows else (None, "")
    if why:
        out.append(Section("Profile (CUPTI)").add(Paragraph(why, "warning")))
    if frame is not None:
        numbered = list(enumerate(prof.profiles, start=1))
        # "tuned" is the timed op; "tuned:tune", "profconv:reference", ... (with --all) only in the appendix
        variants = [(n, label) for n, label in numbered if label != "all" and ":" not in label]
        sec = Section("Profile (CUPTI)")
        logs = ", ".join(f"`{v}`" for v in prof.logs.values())
        scope = ("Each variant's table holds its timed op only: the autotuning sweep, cuDNN's algorithm search, "
                 "the correctness check, the forward pass and profconv's own reference kernels ran in NVTX ranges "
                 "of their own and are left out (`--all` records them as labelled profiles)" if prof.scope == "timed"
                 else "Recorded with `--all`: besides each variant's timed op, `variant:tune` (sweep or cuDNN's "
                 "algorithm search), `variant:check`, `variant:forward` and `profconv:*` (profconv's own work) are "
                 "profiles of their own, in the appendix" if prof.scope == "all"
                 else "The whole run also holds profconv's own float64 reference checks")
        sec.add(Paragraph("Kernels and API calls recorded in-process while each variant ran, attributed to its NVTX "
                          "range; per variant the rows that together take ≥"
                          f"{opts.threshold:.0%} of its time (as the course reports list them). {scope}. Every row of "
                          f"every profile, the whole run included, is in the appendix; nvprof-style logs: {logs}."))
        for section in ("gpu", "api"):
            top = top_rows(frame, variants, section, opts.threshold)
            if not top.empty:
                sec.add(_top_table(f"cupti-top-{section}", section, top, "variant", opts.threshold))
        gpu_top = top_rows(frame, variants, "gpu", opts.threshold)
        if opts.plots_dir is not None and not gpu_top.empty:
            model = inp.record.model.name
            path = plots.top_kernels(gpu_top, f"Kernels taking ≥{opts.threshold:.0%} of each variant's GPU time "
                                     f"({model})", opts.plots_dir / f"{_slug(model)}-top-kernels.png")
            sec.add(Figure(path, f"Kernels taking ≥{opts.threshold:.0%} of each variant's GPU time"))
        out.append(sec)
        for n, label in numbered:
            title = "whole run (includes profconv's reference checks)" if label == "all" else label
            full = Section(f"Profile (CUPTI): {title}, every row", appendix=True)
            full.blocks.extend(_full_tables(f"cupti-{_slug(label)}", frame, n, label, opts.threshold, ("gpu", "api")))
            out.append(full)
    return out


def _ncu_section(prof: ProfileInfo) -> Section:
    """The ncu metrics of the conv kernels (each op's mean over its timed launches) and how ncu ran."""
    mf = metrics_frame(to_builtins(prof))
    units: dict[str, str] = {}
    for k in prof.launches:
        units.update(k.units)
    shown = [(m, t) for m, t in NCU_COLUMNS if m in mf.columns]
    frame = mf.rename(columns={m: f"m{i}" for i, (m, _) in enumerate(shown)})
    for i, (m, _) in enumerate(shown):
        frame[f"m{i}"] = [metric_text(v) for v in mf[m]]
    cols = [Column("range", "op"), Column("kernel", "kernel", "code"),
            *[Column(f"m{i}", f"{t} ({units[m]})" if units.get(m) else t) for i, (m, t) in enumerate(shown)]]
    st = prof.settings or {}
    how = (f" ncu ran with `--clock-control {st.get('clock_control') or 'base'} --cache-control "
           f"{st.get('cache_control') or 'all'}` (its defaults, base clocks and caches flushed before each "
           "replay, read ~30% longer than Op Time)"
           if st.get("clock_control") or st.get("cache_control") else
           " ncu's clock and cache control were not recorded (its defaults: base clocks, caches flushed)")
    raws = ", ".join(f"`{f}`" for f in [prof.raw, *prof.kernels_raw.values()] if f)
    raws += "; each of your kernels profiled in a run of its own" if prof.kernels_raw else ""
    if "--nvtx-exclude" in (st.get("argv") or []):
        scope = (f"`ncu` on the timed conv ops only (raw output: {raws}): an NVTX include of each op's "
                 "range and an exclude of its check, so the correctness call, the sweep and cuDNN's algorithm "
                 "search were not replayed" + (f" ({prof.set_aside} other launch(es) set aside)"
                                              if prof.set_aside else "") + "; mean over the timed launches;")
    else:
        scope = (f"`ncu` on the conv kernels only (raw output: {raws}), mean over the timed launches "
                 f"(the check, sweep and cuDNN's search set aside: {prof.set_aside or 0} launch(es));")
    return Section("Nsight Compute metrics").add(Paragraph(f"{scope}{how}."), Table("ncu", "", frame, cols))


def agreement_section(rows: list[dict], ncu_settings: dict | None) -> Section:
    """CUPTI vs Op Time vs ncu per timed op (profconv/analysis/agreement.py), reasons for any gap."""
    from profconv.analysis.agreement import TARGET

    df = pd.DataFrame(rows)

    def pct(v):
        return "—" if v is None or v != v else f"{v:+.1%}"

    view = df.assign(op_label=[f"{v}/{lay}" for v, lay in zip(df["variant"], df["layer"])],
                     cupti_pct=[pct(v) for v in df["cupti_vs_op"]], ncu_pct=[pct(v) for v in df["ncu_vs_op"]],
                     verdict=["within" if w else why for w, why in zip(df["within"], df["why"])])
    # a narrow terminal keeps the op, its Op Time, the gap and the verdict; the raw profiler times go first
    cols = [Column("op_label", "op"), Column("op_time_s", "Op Time", "seconds"),
            Column("cupti_busy_s", "CUPTI busy", "seconds", drop=3), Column("cupti_span_s", "CUPTI span", "seconds", drop=1),
            Column("ncu_s", "ncu", "seconds", drop=2), Column("cupti_pct", "CUPTI vs Op"),
            Column("ncu_pct", "ncu vs Op", drop=4), Column("verdict", "")]
    s = ncu_settings or {}
    setting = (f"ncu ran with `--clock-control {s.get('clock_control') or 'base'} --cache-control "
               f"{s.get('cache_control') or 'all'}`" if s.get("clock_control") or s.get("cache_control")
               else "no ncu figures in this run")
    within = int(df["within"].sum())
    return Section("Profilers vs Op Time").add(
        Paragraph(f"Target: every profiler figure within {TARGET:.0%} of Op Time; {within} of {len(df)} op(s) within, "
                  "the others with the reason read off their numbers. CUPTI busy = the op's GPU activity per call "
                  f"(median over its calls), span = first start to last end; {setting}."),
        Table("agreement", "", view, cols))


def _lines(inp: LogInput) -> list[str] | None:
    try:
        return inp.path.read_text(errors="replace").splitlines() if inp.path.is_file() else None
    except OSError:
        return None


def _metric_columns(metrics: pd.DataFrame) -> list[Column]:
    """Kernel, metric, unit and the values the tool printed: Min/Max/Avg where it printed them
    (nvprof --metrics/--events, ncu --print-summary), an event's Total, else the one value."""
    def present(key: str) -> bool:
        return bool(metrics[key].notna().any())

    spread = present("min") or present("max")
    cols = [Column("kernel", "Kernel", "code", full_key="full_name"), Column("metric", "Metric"),
            Column("unit", "Unit")]
    if spread:
        cols += [Column("min", "Min", "value", digits=",.6g"), Column("max", "Max", "value", digits=",.6g")]
    cols.append(Column("avg", "Avg" if spread else "Value", "value", digits=",.6g"))
    if present("total"):
        cols.append(Column("total", "Total", "value", digits=",.6g"))
    return cols


def log_section(inp: LogInput, opts: ReportOptions) -> Section:
    ps = inp.profiles
    sec = Section(f"Profiler log: `{ps.source}`")
    titles = profile_titles(_lines(inp), ps.profiles)
    for info in ps.profiles:
        where = f", lines {info.line_start}–{info.line_end}" if info.line_start else ""
        sub = Section(titles[info.profile])
        facts = [f"{info.tool}{where}", *context_facts(info)]
        sub.add(Bullets(facts))
        for section in TIMED_SECTIONS:
            rows = ranked(ps.frame, info.profile, section, opts.threshold, titles[info.profile])
            if rows.empty:
                continue
            top = rows[rows["in_top"]]
            cols = TOP_TABLE[1:]
            sub.add(Table(f"log-{info.profile}-{section}", f"{SECTION_TITLES.get(section, section)} — {len(top)} of "
                          f"{len(rows)} take {top['share'].sum():.1%} of the time", top, cols, highlight="in_top"))
        metrics = metric_rows(ps.frame, info.profile)
        if len(metrics):
            sub.add(Table(f"log-{info.profile}-metrics", f"Metrics — {len(metrics)} rows", metrics,
                          _metric_columns(metrics)))
        sec.sections.append(sub)
        full = Section(f"{titles[info.profile]}: every row", appendix=True)
        full.blocks.extend(_full_tables(f"log-{info.profile}-full", ps.frame, info.profile, titles[info.profile],
                                        opts.threshold, TIMED_SECTIONS))
        if full.blocks:
            sec.sections.append(full)
    if ps.unplaced:
        count = len(ps.unplaced)
        sec.add(Paragraph(f"{count} line{'s' if count > 1 else ''} looked like table data but could not be placed: "
                          f"line{'s' if count > 1 else ''} "
                          + ", ".join(str(n) for n, _ in ps.unplaced[:20]), "warning"))
    for note in ps.notes:
        sec.add(Paragraph(note, "warning"))
    return sec


def build(inputs: list[Input], opts: ReportOptions) -> Document:
    doc = Document(opts.title)
    for inp in inputs:
        if isinstance(inp, BenchInput):
            doc.sections.append(bench_section(inp.record))
        elif isinstance(inp, RunInput):
            doc.sections.append(run_section(inp, opts))
        else:
            doc.sections.append(log_section(inp, opts))
    _lift_appendix(doc)
    return doc


def _lift_appendix(doc: Document) -> None:
    """Appendix sections move to the end of the document (markdown prints them there with --full)."""
    moved: list[Section] = []

    def walk(s: Section) -> None:
        keep = []
        for sub in s.sections:
            if sub.appendix:
                sub.title = f"{s.title} — {sub.title}"
                moved.append(sub)
            else:
                walk(sub)
                keep.append(sub)
        s.sections = keep

    for s in doc.sections:
        walk(s)
    doc.sections += moved


__all__ = ["TOP_COLUMNS", "ReportOptions", "build", "log_section", "run_section"]
