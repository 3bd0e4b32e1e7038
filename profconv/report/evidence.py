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
from profconv.records.evidence import Evidence, EvidenceLaunch, SassListing, TargetedNcu

Say = Callable[[str], None]


def diagnosable(record: RunRecord) -> list[tuple[str, str]]:
    """(variant, layer) of every ok GPU kernel op at the run's largest image count: our ladder (the
    end-to-end variants with their copies too) and user kernels; the CPU reference and cuDNN are not."""
    from profconv.run.variants import VARIANTS

    skip = {v.name for v in VARIANTS if v.device in ("cpu", "cudnn")}
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


def user_library(user: dict, arch: str, workdir: Path) -> sass_capture.Listing | None:
    """A user's host or course kernel built again as the run built it (run/user/build.py), listed."""
    from profconv.run.user import build

    source = Path(str(user.get("path", "")))
    if user.get("contract") not in ("host", "course") or not source.is_file():
        return None
    defines = {str(k): v for k, v in (user.get("defines") or {}).items()}
    if user["contract"] == "course":
        lib = build.build_course(source, str(user.get("flavour") or "minidnn"), workdir, arch, defines, ())
    else:
        lib = build.build_host(source, workdir, arch, defines, ())
    return sass_capture.dump_library(lib.path)


def collect_sass(record: RunRecord, run_dir: Path, say: Say) -> tuple[list[SassListing], list[str]]:
    """The SASS of each diagnosable op, compiled again from the sources and defines the run recorded."""
    arch = sass_capture.arch_of(record.environment.compute_capability) or "sm_90"
    compiled = to_builtins(record.provenance.kernels.compiled) if record.provenance else []
    listings, notes = [], []
    cache: dict[tuple, sass_capture.Listing] = {}
    written: dict[str, str] = {}  # listing digest -> its file
    with tempfile.TemporaryDirectory(prefix="profconv-sass-") as tmp:
        for variant, layer in diagnosable(record):
            found = variant_sources(record, variant)
            res = next(r for r in record.results if r.variant == variant and r.images == max(
                x.images for x in record.results))
            conv = next(c for c in res.conv if c.layer == layer)
            dims = to_builtins(conv.dims) if conv.dims else {}
            mods = sass_capture.pick_modules(compiled, found[0], dims, dict(conv.params)) if found else []
            if not mods and res.user:
                ukey: tuple = ("user", variant)
                try:
                    if ukey not in cache:
                        say(f"SASS of your kernel {variant}")
                        got_user = user_library(res.user, arch, Path(tmp) / f"user-{len(cache)}")
                        if got_user is None:
                            notes.append(f"{variant}: its source is gone or its contract has no SASS here")
                            continue
                        cache[ukey] = got_user
                except (ProfconvError, OSError) as exc:
                    notes.append(f"{variant}/{layer}: {exc}")
                    continue
                listings.append(_store(run_dir, variant, layer, cache[ukey], str(res.user.get("path")), [], arch,
                                       written))
                continue
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
            listings.append(_store(run_dir, variant, layer, cache[key], mod["file"], list(mod.get("options", [])),
                                   arch, written))
    return listings, notes


def _store(run_dir: Path, variant: str, layer: str, got: sass_capture.Listing, source: str, options: list[str],
           arch: str, written: dict[str, str]) -> SassListing:
    """One listing file per distinct listing: a module shared by several layers (one not specialised
    per shape) is written once, under the first layer's name."""
    import hashlib

    digest = hashlib.sha256(got.sass.encode()).hexdigest()[:12]
    rel = written.setdefault(digest, f"sass/{variant}-{layer}.sass")
    if not (run_dir / rel).is_file() or (run_dir / rel).read_text() != got.sass:
        write_atomic(run_dir / rel, got.sass)
    return SassListing(variant=variant, layer=layer, file=rel, source=source, options=options, arch=arch, how=got.how,
                       kernels=got.kernels, registers=got.registers, spill_bytes=got.spill_bytes, half_ops=got.half_ops)


def sweep_plan(record: RunRecord, images: int) -> dict:
    """The sweep choices the run recorded, as a plan (run/sweep.py PLAN_ENV) for a child of `images`."""
    plan: dict[str, dict] = {}
    n = max((r.images for r in record.results), default=0)
    for r in record.results:
        if r.images != n or r.user:
            continue
        for c in r.conv:  # our swept variants plan under their own name (run/tuned.py: name=variant)
            if c.params and c.dims and "swept" in c.params:
                key = ",".join(map(str, (images, c.dims.M, c.dims.C, c.dims.H, c.dims.W, c.dims.K, c.dims.P)))
                plan.setdefault(r.variant, {})[key] = dict(c.params)
    return plan


def collect_ncu(record: RunRecord, run_dir: Path, images: int | None, timeout: float, say: Say
                ) -> TargetedNcu | None:
    """The run's diagnosable built-in variants re-run under ncu with the targeted metric set (None: none ran)."""
    from profconv.run.variants import VARIANTS

    ours = {v.name for v in VARIANTS}
    variants = list(dict.fromkeys(v for v, _ in diagnosable(record) if v in ours))
    if not variants:
        return None
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


def collect_user_ncu(record: RunRecord, run_dir: Path, images: int | None, timeout: float, say: Say,
                     wanted: list[str]) -> tuple[list[dict], dict[str, list[int]], list[str]]:
    """Each user kernel of the run re-run in its own child under ncu (its timed ops only), with the
    metrics the built-in pass kept: (launches, passes per kernel, notes)."""
    from dataclasses import replace

    from profconv.run.user import isolate, manifest
    from profconv.run.user.contracts import UserKernel

    tool = external.find_tool("ncu")
    settings = external.NcuSettings()
    n = images or max(r.images for r in record.results)
    layers = [c.layer for c in record.model.conv_layers]
    launches: list[dict] = []
    passes: dict[str, list[int]] = {}
    notes: list[str] = []
    users = [r for r in record.results if r.user and r.status == "ok" and r.images == max(
        x.images for x in record.results)]
    for r in users:
        where = (r.user or {}).get("manifest") or (r.user or {}).get("path")
        try:
            d = replace(manifest.load(str(where), (r.user or {}).get("contract")), name=r.variant)
        except (ProfconvError, OSError) as exc:
            notes.append(f"{r.variant}: not profiled ({exc})")
            continue
        ranges = [f"{record.model.name}/{r.variant}/{lay}" for lay in layers]
        job = isolate.KernelJob(kernel=str(manifest.reload_path(d)), contract=d.contract, model=record.model.name,
                                images=n, repeat=1, warmup=0, timeout=timeout, layers_only=True,
                                data=None if record.data.synthetic else record.data.source,
                                weights=None if record.data.weights == "bundled" else record.data.weights)
        say(f"re-running your kernel {r.variant} under ncu")

        def wrap(argv: list[str], ranges: list[str] = ranges) -> list[str]:
            return external.ncu_argv(tool, argv, ranges, metrics=wanted, settings=settings)

        under, output = isolate.run_under(d, UserKernel(d).provenance(), job, say, tag="ncu", wrap=wrap)
        write_atomic(run_dir / f"ncu-diagnosis-{r.variant}.log", output)
        part = targeted_ncu.part_from_output(output, wanted, n, {})
        if not part["launches"]:
            notes.append(f"{r.variant}: its run under ncu failed ({under.error or 'no kernel in its ranges'}; "
                         f"log: ncu-diagnosis-{r.variant}.log)")
            continue
        if under.status != "ok":  # the child's own strict checks (fp32 tolerance): the kernel ran, its counters hold
            notes.append(f"{r.variant}: under ncu its strict checks said: {under.error} (the verdict is the run's; "
                         "the counters are kept)")
        write_atomic(run_dir / f"ncu-diagnosis-{r.variant}.csv", part["csv"])
        launches += part["launches"]
        for k, v in part["passes"].items():
            passes.setdefault(k, []).extend(v)
    return launches, passes, notes


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
        if any(r.user and r.status == "ok" for r in record.results):
            wanted = ev.ncu.metrics if ev.ncu else list(targeted_ncu.DIAGNOSIS_METRICS)
            launches, passes, user_notes = collect_user_ncu(record, run_dir, images, timeout, say, wanted)
            notes += user_notes
            if ev.ncu is None and launches:
                ev.ncu = TargetedNcu(raw="", images=images or max(r.images for r in record.results), metrics=wanted)
            if ev.ncu is not None:
                ev.ncu.launches += [struct_from(EvidenceLaunch, x) for x in launches]
                ev.ncu.passes = {**ev.ncu.passes, **passes}
    ev.notes = list(dict.fromkeys(notes))
    ev.collected = datetime.now(timezone.utc).isoformat()
    return ev
