"""`profconv run`: the variant ladder on a real model, timed and checked.

The options become a `RunRequest`; `profconv.session.run.RunSession` does the work and writes the
record; this module draws the outcome (the tables below).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from profconv import provenance
from profconv.commands import _complete, comma_list
from profconv.commands._live import Live
from profconv.commands._options import Repeat, Warmup, Width
from profconv.errors import ExitStatus, InputError, Interrupted
from profconv.records import RunRecord, VariantResult
from profconv.render.format import Column, fitted_table, seconds
from profconv.run.user import isolate
from profconv.session.run import MAX_IMAGES, RunOutcome, RunRequest, RunSession, load_kernels
from profconv.ui import console, error_console

# NumPy and pandas (the runner, the variants, the profilers) are imported when the run starts, so that
# `profconv run --help` and completing a value (`--model ece<TAB>`) stay fast (tests/test_cli_text.py)
__all__ = ["MAX_IMAGES", "load_kernels", "parse_counts", "result_table", "run_command"]


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(t.replace("_", "")) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--images takes a number or a comma list such as 10,100,10000, not {text!r}") from None
    if not counts or any(c <= 0 for c in counts):
        raise InputError("--images must be positive")
    if any(c > MAX_IMAGES for c in counts):
        raise InputError(f"--images takes at most {MAX_IMAGES:,} images per run, not {max(counts):,}")
    if len(set(counts)) != len(counts):
        raise InputError(f"--images lists {next(c for c in counts if counts.count(c) > 1)} twice")
    return counts


def variant_label(r: VariantResult) -> str:
    return f"{r.variant} (user)" if r.user else r.variant


def unseen_failures(failed: list[VariantResult]) -> list[str]:
    """Why each failed run failed when its per-layer rows all say ok (edge shapes, sanitizer, forward pass)."""
    return [f"{variant_label(r)} ({r.images}): {r.error}" for r in failed
            if r.error and r.conv and all(c.status == "ok" for c in r.conv)]


def user_notes(record: RunRecord) -> list[str]:
    """Each user kernel's notes (a profiler that could not cover it, a racecheck warning), one line each."""
    return [f"{variant_label(r)} ({r.images}): {n}" for r in record.results for n in r.notes]


def _status_cell(kernel_status: str, status: str, error: str | None) -> Text:
    """A layer's status; a layer whose checks passed in a kernel that FAILED as a whole (edge shapes, the
    sanitizer, the forward pass: listed under the table) says so, never `ok`."""
    if status != "ok":
        return Text.assemble(("FAILED", "red"), f": {error or ''}")
    if kernel_status == "failed":
        return Text.assemble(("FAILED", "red"), " (the kernel, see below; this layer's checks passed)")
    return Text("ok", style="green")


def _times(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3g}x"


def _cells(row) -> list:
    """One row of `conv_speedups` as the table's cells."""
    return [str(row.images), f"{row.variant} (user)" if row.user else row.variant, row.layer, seconds(row.median_s),
            "—" if math.isnan(row.ci_rel) else f"{row.ci_rel:.1%}", seconds(row.min_s), str(row.n) if row.n else "—",
            _times(row.vs_naive), _times(row.vs_cudnn), f"{row.rel_error:.2e}",
            "—" if math.isnan(row.correctness) else f"{row.correctness:.4f}",
            _status_cell(row.kernel_status, row.status, row.error if isinstance(row.error, str) else None)]


_RESULT_COLUMNS = [("images", "right", None), ("variant", "left", None), ("layer", "left", None),
                   ("Op Time", "right", None), ("±", "right", 2), ("min", "right", 3), ("n", "right", 1),
                   ("vs naive", "right", 4), ("vs cuDNN¹", "right", 5), ("rel. error", "right", 2),
                   ("Correctness", "right", 6), ("status", "left", None)]
"""header, justification, drop order at a narrow width (None: kept)"""
_OPTIONAL = ("vs naive", "vs cuDNN¹", "±")  # left out when nothing in them (a CPU-only run)


def result_table(record: RunRecord, width: int = 120) -> Table:
    """Op Time per conv layer (`analysis.runs.conv_speedups`, drawn); comparison columns with nothing to
    compare (a CPU-only run) are left out."""
    from profconv.analysis.runs import conv_speedups

    rows = [_cells(row) for row in conv_speedups(record).itertuples(index=False)]
    columns = [Column(h, [row[i] for row in rows], justify=j, drop=d, wrap=h == "status")
               for i, (h, j, d) in enumerate(_RESULT_COLUMNS)]
    columns = [c for c in columns if c.header not in _OPTIONAL or any(v != "—" for v in c.cells)]
    headers = {c.header for c in columns}
    caption = "Op Time: median of the n timed runs"
    if "±" in headers:
        caption += "; ± its 95% interval (half-width / median)"
    if "vs cuDNN¹" in headers:
        caption += "\n¹ speedup over the fastest cuDNN of the same precision in this run (any layout)"
    return fitted_table(f"{record.model.name}: Op Time per conv layer", columns, width, wrap_min=12, caption=caption)


def breakdown_table(record: RunRecord, width: int = 120) -> Table:
    kinds: list[str] = []
    for r in record.results:
        for k in r.type_totals:
            if k not in kinds:
                kinds.append(k)
    ok = [r for r in record.results if r.status == "ok"]
    columns = [Column("images", [str(r.images) for r in ok]), Column("variant", [variant_label(r) for r in ok], justify="left")]
    # at a narrow width the layer types that take the least time are left out first; conv and forward stay
    small_first = sorted((k for k in kinds if k != "conv"), key=lambda k: sum(r.type_totals.get(k, 0.0) for r in ok))
    columns += [Column(k, [seconds(r.type_totals.get(k, 0.0)) for r in ok],
                       drop=small_first.index(k) + 1 if k in small_first else None) for k in kinds]
    columns.append(Column("forward", [seconds(r.forward_s) for r in ok]))
    return fitted_table("Forward pass by layer type (median)", columns, width,
                        caption="conv inside the whole net (one pass on the CPU): Op Time is the conv alone, repeated")


def profiler_sections(record: RunRecord, path: Path) -> list:
    """The report's Nsight Compute metrics and profilers-vs-Op-Time sections of this run (`profconv
    report` shows the same tables; the CUPTI tables are printed from the profile set above)."""
    from profconv.render.document import Table as DocTable
    from profconv.report.build import ReportOptions, profile_sections
    from profconv.report.inputs import RunInput

    return [s for s in profile_sections(RunInput(path, record), ReportOptions())
            if any(isinstance(b, DocTable) and b.id in ("ncu", "agreement") for b in s.blocks)]


def run_command(
    model: Annotated[str, typer.Option("--model", "-m", metavar="MODEL", autocompletion=_complete.models, help="Model to run (see `profconv models`).")] = "ece408-high",
    images: Annotated[str, typer.Option("--images", "-n", metavar="N[,N...]", help="Images to run: a number or a list such as 10,100,10000.")] = "10000",
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="NAME[,NAME...]", autocompletion=_complete.variants, help="Variants to run (repeatable or comma list; default: all; `none`: only your --kernel).")] = None,
    repeat: Repeat = 5,
    warmup: Warmup = 2,
    cpu_repeat: Annotated[int, typer.Option(metavar="N", min=1, max=1000, help="Timed repeats of the CPU reference's conv layers (median reported; 5 a side let report --compare test a difference, 3 cannot).")] = 5,
    data: Annotated[str | None, typer.Option("--data", metavar="DIR", help="Directory with Fashion-MNIST IDX files or CIFAR-10 batches.")] = None,
    weights: Annotated[str | None, typer.Option("--weights", metavar="FILE", help="A .npz of weights overriding the bundled ones.")] = None,
    out: Annotated[Path | None, typer.Option("--out", metavar="DIR", help="Run directory, made if missing (default: runs/MODEL-TIMESTAMP/); a run.json already there is never replaced without --force.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the run.json already in --out DIR.")] = False,
    profile: Annotated[str | None, typer.Option("--profile", metavar="TOOL[,TOOL]", help="Also profile: cupti (in-process), ncu, nsys or nvprof (re-run under the tool); cupti,ncu for both and the agreement table.")] = None,
    profile_timeout: Annotated[float, typer.Option(metavar="SECONDS", min=1.0, help="Seconds an external profiler may take.")] = 1800.0,
    show_all: Annotated[bool, typer.Option("--all", help="Profiles: also show the sweeps, checks, forward passes and profconv's own kernels, labelled (default: each variant's timed op only).")] = False,
    ci_target: Annotated[float, typer.Option(metavar="FRACTION", min=0.0, max=1.0, help="Repeat past --repeat until the median's 95% interval is within ±this fraction (0: exactly --repeat).")] = 0.01,
    time_budget: Annotated[float, typer.Option(metavar="SECONDS", min=0.001, help="Seconds of timed repeats per conv op at most, with --ci-target.")] = 2.0,
    ncu_clock_control: Annotated[str, typer.Option(metavar="none|base", help="ncu --clock-control: none (the card's own clocks, as Op Time) or base (ncu's default).")] = "none",
    ncu_cache_control: Annotated[str, typer.Option(metavar="none|all", help="ncu --cache-control: none (as Op Time) or all (flush before each replay, ncu's default).")] = "none",
    width: Width = None,
    kernel: Annotated[list[str] | None, typer.Option("--kernel", "-k", metavar="PATH", help="Your kernel: a .cu/.cuh/.py file, a folder or a .toml manifest (repeatable). Runs in a child process next to the variants.")] = None,
    contract: Annotated[str | None, typer.Option("--contract", metavar="CONTRACT", autocompletion=_complete.contracts, help="How to run --kernel files: device, host, course or python (default: detected).")] = None,
    kernel_timeout: Annotated[float, typer.Option(metavar="SECONDS", help="Seconds each --kernel may take (compile, sweep, checks, timing) before it is killed and FAILED.")] = isolate.DEFAULT_TIMEOUT_S,
    course: Annotated[str | None, typer.Option("--course", metavar="TERM", help="Judge --kernel files by this course term's rules: sp25, fa24, sp24, minidnn, mxnet or profconv (default: the term --model implies, else profconv's own strict rules).")] = None,
    sanitize: Annotated[bool, typer.Option("--sanitize", help="Also run each --kernel's checks under compute-sanitizer memcheck and racecheck: a memcheck error or a racecheck hazard (Error), with its source line, fails the kernel by profconv's own rules (--course profconv) and is a warning by a course's (the course never ran it); racecheck warnings are notes.")] = False,
    secret_seed: Annotated[str | None, typer.Option("--secret-seed", metavar="TEXT", envvar="PROFCONV_SECRET_SEED", show_envvar=False, help="Draw each --kernel's fresh inputs and edge-shape data from this seed (any text; or $PROFCONV_SECRET_SEED, which keeps it off the command line), kept out of the record (for a final ranking the students cannot tune to).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the run record (the run.json written) as JSON instead of the tables; progress and notes go to stderr.")] = False,
) -> None:
    """Run each convolution variant, and your own kernels, on a model's forward pass: Op Time, check, Correctness.

    `--variant none --kernel my_conv.cu` runs only your kernel (checked against the float64 reference).
    """
    tools = comma_list([profile], "--profile") if profile is not None else []
    if profile is not None and not tools:
        raise InputError(f"--profile takes one of cupti, ncu, nsys, nvprof (or cupti,ncu), not {profile!r}")
    names = comma_list(variant, "--variant") if variant else None
    request = RunRequest(
        model=model, images=parse_counts(images), variants=names or None, repeat=repeat, warmup=warmup,
        cpu_repeat=cpu_repeat, data=data, weights=weights, out=out, replace=force, profile=tools,
        profile_timeout=profile_timeout, show_all=show_all, ci_target=ci_target, time_budget=time_budget,
        ncu_clock_control=ncu_clock_control, ncu_cache_control=ncu_cache_control, kernels=kernel or [],
        contract=contract, kernel_timeout=kernel_timeout, sanitize=sanitize, course=course, secret_seed=secret_seed)
    con = error_console() if json_out else console()  # --json: stdout holds the record alone
    try:
        with Live(con) as live:
            outcome = RunSession(request, live.callbacks).run()
    except Interrupted as exc:
        if isinstance(exc.record, RunRecord) and any(r.status != "skipped" for r in exc.record.results):
            con.print(result_table(exc.record, con.width))  # what had finished before the interruption
        con.print(escape(str(exc)))
        raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
    if json_out:
        sys.stdout.write(outcome.record.to_json() + "\n")
    else:
        show(outcome, con)
    if outcome.profiler_failure is not None:
        raise outcome.profiler_failure  # after the tables and the record: one line, exit 1
    if outcome.failed:
        show_failed(outcome.failed, con)
        raise typer.Exit(int(ExitStatus.FAILURE))


def show_failed(failed: list[VariantResult], con) -> None:
    """The closing line naming every failed run, and why each failed where its layer rows all say ok."""
    con.print(f"[red]{len(failed)} variant run(s) FAILED:[/red] "
              + ", ".join(f"{variant_label(r)} ({r.images})" for r in failed))
    for line in unseen_failures(failed):
        con.print(f"  {escape(line)}")


def course_timing_lines(record: RunRecord) -> list[str]:
    """Each user kernel's Op Time as the course timed it (each layer's one cold call, summed) beside the warm
    median the table shows: a cuBLAS handle made inside conv_forward_gpu costs hundreds of ms only cold."""
    out = []
    for r in record.results:
        timed = [(lf.layer, lf.timing.cold_s, lf.timing.op_median_s or 0.0) for lf in (r.facts.layers if r.facts else [])
                 if lf.timing is not None and lf.timing.cold_s is not None]
        if not timed:
            continue
        cold = float(sum(c for _, c, _ in timed if c is not None))
        warm = float(sum(w for _, _, w in timed))
        each = ", ".join(f"{name} {seconds(c)}" for name, c, _ in timed)
        out.append(f"{variant_label(r)} ({r.images}): Op Time as the course timed it (one cold call): {seconds(cold)} "
                   f"({each}); warm median {seconds(warm)}")
    return out


def verdict_lines(record: RunRecord) -> list[str]:
    """Each user kernel's verdict: the rule that decided it, the optimisations seen, where its work ran."""
    from profconv.judge.text import lines

    return [ln for r in record.results if r.verdict is not None
            for ln in lines(f"{variant_label(r)} ({r.images})", r.verdict)]


def show(outcome: RunOutcome, con) -> None:
    """The run's tables, profiles and closing lines, laid out for `con`."""
    from profconv.render import terminal
    from profconv.render.profile_tables import TableOptions, render

    record, summary = outcome.record, outcome.summary
    con.print(result_table(record, con.width))
    con.print(breakdown_table(record, con.width))
    for ps in outcome.profiles:
        if ps is not None:
            render(ps, con, TableOptions(max_rows=15, metrics=False))
    if (summary.get("ncu") or summary).get("launches") or summary.get("agreement"):
        for s in profiler_sections(record, outcome.path):
            terminal.section(con, s)
    prov = record.provenance
    if prov is not None:
        from profconv.records import to_builtins

        con.print(f"[dim]provenance: {escape(provenance.summary_line(to_builtins(prov)))}[/dim]")
    for count in record.settings.images:
        best = [r for r in record.results if r.images == count and r.status == "ok" and r.correctness is not None]
        ref = next((r for r in best if r.variant == "cpu"), best[0] if best else None)
        if ref is not None:
            con.print(f"Correctness: {ref.correctness:.4g} Model: {record.model.name}  [dim]({count} images, "
                      f"{ref.variant})[/dim]")
    con.print(f"run record: {escape(str(outcome.path))}")
    for line in verdict_lines(record):
        con.print(escape(line))
    for line in course_timing_lines(record):
        con.print(escape(line))
    for line in user_notes(record):
        con.print(f"[yellow]note:[/yellow] {escape(line)}")
