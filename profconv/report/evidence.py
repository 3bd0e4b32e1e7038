"""Collecting what `profconv explain` diagnoses from, beside a recorded run: the targeted ncu pass
over the run's GPU variants (profile/targeted_ncu.py) and the SASS of each timed kernel
(profile/sass_capture.py). Everything lands in the run directory and the record's `evidence`."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from profconv.errors import ProfconvError
from profconv.io import write_atomic
from profconv.profile import external, sass_capture, targeted_ncu
from profconv.records import RunRecord, struct_from, to_builtins
from profconv.records.evidence import Evidence, SassListing, TargetedNcu

Say = Callable[[str], None]
SWEPT = {"tuned": "tuned", "fp16": "fp16", "tensorcore": "tensorcore"}  # variant -> its sweep's plan name


def diagnosable(record: RunRecord) -> list[tuple[str, str]]:
    """(variant, layer) of every ok GPU kernel op at the run's largest image count: our ladder and
    user kernels; the CPU reference, cuDNN and the end-to-end variants (copies) are not diagnosed."""
    from profconv.run.variants import VARIANTS

    skip = {v.name for v in VARIANTS if v.device in ("cpu", "cudnn") or v.host_io}
    if not record.results:
        return []
    n = max(r.images for r in record.results)
    return [(r.variant, c.layer) for r in record.results if r.images == n and r.status == "ok"
            and r.variant not in skip for c in r.conv if c.status == "ok"]


def variant_sources(record: RunRecord, variant: str) -> tuple[list[str], Callable[[str], str]] | None:
    """The file names a variant compiles and how to read one (headers expanded), or None."""
    from profconv.run import gpu
    from profconv.run.variants import VARIANTS

    found = next((v for v in VARIANTS if v.name == variant), None)
    if found is not None:
        return list(found.provenance.get("sources", [])), gpu.kernel_source
    user = next((r.user for r in record.results if r.variant == variant and r.user), None)
    if user and user.get("path") and user.get("contract") == "device":
        path = Path(user["path"])
        return [path.name], lambda _name: path.read_text()
    return None


def collect_sass(record: RunRecord, run_dir: Path, say: Say) -> tuple[list[SassListing], list[str]]:
    """The SASS of each diagnosable op, compiled again from the sources and defines the run recorded."""
    arch = sass_capture.arch_of(record.environment.compute_capability) or "sm_90"
    compiled = to_builtins(record.provenance.kernels.compiled) if record.provenance else []
    listings, notes = [], []
    cache: dict[tuple, sass_capture.Listing] = {}
    with tempfile.TemporaryDirectory(prefix="profconv-sass-") as tmp:
        for variant, layer in diagnosable(record):
            found = variant_sources(record, variant)
            res = next(r for r in record.results if r.variant == variant and r.images == max(
                x.images for x in record.results))
            conv = next(c for c in res.conv if c.layer == layer)
            dims = to_builtins(conv.dims) if conv.dims else {}
            mods = sass_capture.pick_modules(compiled, found[0], dims, dict(conv.params)) if found else []
            if not mods:
                notes.append(f"{variant}/{layer}: no compiled module recorded for it (no SASS)")
                continue
            mod = mods[0]
            key = (mod["file"], tuple(mod.get("options", [])))
            try:
                if key not in cache:
                    say(f"SASS of {variant} {layer} ({Path(mod['file']).name})")
                    text = found[1](Path(mod["file"]).name)  # type: ignore[index]
                    cache[key] = sass_capture.dump(text, Path(mod["file"]).name, mod.get("options", []), arch,
                                                   Path(tmp) / str(len(cache)))
            except (ProfconvError, OSError) as exc:
                notes.append(f"{variant}/{layer}: {exc}")
                continue
            got = cache[key]
            rel = f"sass/{variant}-{layer}.sass"
            write_atomic(run_dir / rel, got.sass)
            listings.append(SassListing(variant=variant, layer=layer, file=rel, source=mod["file"],
                                        options=list(mod.get("options", [])), arch=arch, how=got.how,
                                        kernels=got.kernels, registers=got.registers, spill_bytes=got.spill_bytes))
    return listings, notes


def sweep_plan(record: RunRecord, images: int) -> dict:
    """The sweep choices the run recorded, as a plan (run/sweep.py PLAN_ENV) for a child of `images`."""
    plan: dict[str, dict] = {}
    n = max((r.images for r in record.results), default=0)
    for r in record.results:
        if r.images != n or r.variant not in SWEPT:
            continue
        for c in r.conv:
            if c.params and c.dims:
                key = ",".join(map(str, (images, c.dims.M, c.dims.C, c.dims.H, c.dims.W, c.dims.K, c.dims.P)))
                plan.setdefault(SWEPT[r.variant], {})[key] = dict(c.params)
    return plan


def collect_ncu(record: RunRecord, run_dir: Path, images: int | None, timeout: float, say: Say) -> TargetedNcu:
    """The run's diagnosable built-in variants re-run under ncu with the targeted metric set."""
    from profconv.run.variants import VARIANTS

    ours = {v.name for v in VARIANTS}
    variants = list(dict.fromkeys(v for v, _ in diagnosable(record) if v in ours))
    layers = tuple(c.layer for c in record.model.conv_layers)
    n = images or max(r.images for r in record.results)
    child = external.ChildRun(record.model.name, n, variants, run_dir / "explain-child", layers=layers)
    tool = external.find_tool("ncu")
    plan = sweep_plan(record, n)
    old = os.environ.get("PROFCONV_SWEEP_PLAN")
    if plan:
        write_atomic(run_dir / "explain-sweep-plan.json", json.dumps(plan, indent=1, sort_keys=True))
        os.environ["PROFCONV_SWEEP_PLAN"] = str((run_dir / "explain-sweep-plan.json").resolve())
    say(f"re-running {', '.join(variants)} under ncu ({len(targeted_ncu.DIAGNOSIS_METRICS)} metrics, {n:,} images)")
    try:
        part = targeted_ncu.collect(tool, child, run_dir, timeout)
    finally:
        if plan:
            if old is None:
                os.environ.pop("PROFCONV_SWEEP_PLAN", None)
            else:
                os.environ["PROFCONV_SWEEP_PLAN"] = old
    return struct_from(TargetedNcu, part)


def collect(record: RunRecord, run_dir: Path, *, ncu: bool, sass: bool, images: int | None = None,
            timeout: float = 1800.0, say: Say = lambda _m: None) -> Evidence:
    """Fill in what is missing (or everything asked for) and return the record's new `evidence`."""
    ev = record.evidence or Evidence()
    notes = [n for n in ev.notes]
    if sass:
        ev.sass, sass_notes = collect_sass(record, run_dir, say)
        notes = [n for n in notes if "SASS" not in n] + sass_notes
    if ncu:
        ev.ncu = collect_ncu(record, run_dir, images, timeout, say)
    ev.notes = list(dict.fromkeys(notes))
    ev.collected = datetime.now(timezone.utc).isoformat()
    return ev
