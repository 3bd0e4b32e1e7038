"""`profconv report --optimisations RUN [RUN ...]`: the course's per-optimisation write-up.

The versions, in order: every diagnosable kernel of each run (one run of the whole ladder gives a
step per rung; one run per version of your kernel gives a step per version). Per step: the change
(source diff in lines, defines, compile flags, techniques that appeared in the SASS), Op Time per
layer before and after with their intervals, the counters that moved, the diagnosis of the version
before and whether the numbers confirm it (analysis/steps.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from profconv.analysis import steps as steps_mod
from profconv.analysis.advice import TECHNIQUES
from profconv.analysis.diagnosis import BOUND_TEXT, M
from profconv.errors import InputError
from profconv.render.document import Bullets, Column, Document, Paragraph, Section, Table
from profconv.report.explain import explain_run
from profconv.report.inputs import Input, RunInput

COUNTERS = {M["dram"]: "DRAM % of peak", M["l2"]: "L2 % of peak", M["l1"]: "L1 % of peak", M["issue"]: "issue %",
            M["fma"]: "FMA pipe %", M["tensor"]: "Tensor pipe %", M["occ"]: "occupancy %", M["inst"]: "instructions",
            M["ldg"]: "global load instructions", M["lds"]: "shared load instructions", M["dram_rd"]: "DRAM bytes read",
            M["regs"]: "registers per thread"}


def _source(inp: RunInput, variant: str) -> str | None:
    """The kernel's text: ours from kernels/, a user's from its path when its hash still matches."""
    from profconv.run import gpu
    from profconv.run.variants import VARIANTS

    ours = next((v for v in VARIANTS if v.name == variant), None)
    if ours is not None and ours.source:
        try:
            return gpu.kernel_source(ours.source)
        except OSError:
            return None
    user = next((r.user for r in inp.record.results if r.variant == variant and r.user), None) or {}
    path = Path(str(user.get("path", "")))
    try:
        text = path.read_text() if path.is_file() else None
    except OSError:
        return None
    if text is None or hashlib.sha256(text.encode()).hexdigest() != user.get("source_sha256", ""):
        return None
    return text


def _settings(inp: RunInput, variant: str) -> tuple[dict[str, str], list[str]]:
    from profconv.profile.sass_capture import defines_of

    user = next((r.user for r in inp.record.results if r.variant == variant and r.user), None)
    if user:
        return ({str(k): str(v) for k, v in (user.get("defines") or {}).items()},
                list((user.get("compile") or {}).get("flags") or []))
    ev = inp.record.evidence
    listing = next((s for s in (ev.sass if ev else []) if s.variant == variant), None)
    defines = defines_of(listing.options) if listing else {}
    return {k: v for k, v in defines.items() if k not in ("M", "C", "H", "W", "K", "P")}, []


@dataclass(frozen=True)
class Manifest:
    """A versions file (`report --optimisations versions.toml`): the runs in order, each with a label
    and, optionally, what was done and why in the author's words.

        [[version]]
        run = "runs/v1-baseline"
        label = "baseline"
        [[version]]
        run = "runs/v2-tiled"
        label = "input tiled in shared memory"
        note = "the profile showed 90% of the time waiting on global loads"
    """

    runs: list[str]
    labels: list[str]
    notes: list[str]


def read_manifest(path: Path) -> Manifest:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a versions file ({exc})") from None
    rows = doc.get("version")
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("run"), str) for r in rows):
        raise InputError(f"{path}: a versions file lists [[version]] tables, each with run = \"RUN_DIR\"")
    base = path.parent
    return Manifest([str(base / r["run"]) for r in rows], [str(r.get("label") or r["run"]) for r in rows],
                    [str(r.get("note") or "") for r in rows])


def versions(inputs: list[Input], manifest: Manifest | None = None) -> list[steps_mod.Version]:
    runs = [i for i in inputs if isinstance(i, RunInput)]
    if len(runs) != len(inputs) or not runs:
        raise InputError("--optimisations takes run directories (one run of the ladder, or one run per version)")
    out = []
    for inp in runs:
        by_variant: dict[str, list] = {}
        for x in explain_run(inp):
            by_variant.setdefault(x.ev.variant, []).append(x)
        order = [v for v in inp.record.settings.variants if v in by_variant] + \
                [v for v in by_variant if v not in inp.record.settings.variants]
        for v in order:
            xs = by_variant[v]
            defines, flags = _settings(inp, v)
            label = v if len(runs) == 1 else f"{inp.path.parent.name}: {v}"
            if manifest is not None:
                i = runs.index(inp)
                label = manifest.labels[i] if len(by_variant) == 1 else f"{manifest.labels[i]}: {v}"
            out.append(steps_mod.Version(label, v, _source(inp, v), defines, flags, {x.ev.layer: x.ev for x in xs},
                                         {x.ev.layer: x.diagnosis for x in xs}, {x.ev.layer: x.advice for x in xs}))
    if len(out) < 2:
        raise InputError("--optimisations needs two versions at least: one run of several variants, or several runs")
    return out


LAYER_COLUMNS = [Column("layer", "layer"), Column("before_s", "before", "seconds"), Column("after_s", "after", "seconds"),
                 Column("speedup", "speedup", "ratio"), Column("ci", "95% intervals", drop=2),
                 Column("bound", "bound before → after", drop=1), Column("verdict", "diagnosis confirmed?")]


def _ci(lo_hi: tuple[float, float] | None) -> str:
    return "—" if lo_hi is None else f"{lo_hi[0] * 1e3:.3g}–{lo_hi[1] * 1e3:.3g} ms"


def step_section(n: int, st: steps_mod.Step, v_before: steps_mod.Version, note: str = "") -> Section:
    sec = Section(f"Step {n}: {st.before} → {st.after}")
    if note:
        sec.add(Paragraph(f"**What was done, in the author's words.** {note}"))
    change = [f"source: {st.diff}"]
    if st.defines:
        change.append("defines: " + ", ".join(st.defines))
    if st.flags:
        change.append("compile flags: " + ", ".join(st.flags))
    if st.sass_known:
        change.append("SASS: " + (", ".join(f"+{TECHNIQUES[t][0]}" for t in st.appeared) or "no technique appeared")
                      + ("; gone: " + ", ".join(TECHNIQUES[t][0] for t in st.went) if st.went else ""))
    else:
        change.append("SASS: not recorded for both versions (`profconv explain --collect` lists it)")
    sec.add(Paragraph("**What changed.**"), Bullets(change))
    why = []
    for lay, d in v_before.diagnoses.items():
        first = next((a for a in v_before.advice.get(lay, []) if a.scope == "op"), None)
        why.append(f"{lay}: {d.headline}" + (f"; advised first: {first.title}" if first else ""))
    if why:
        sec.add(Paragraph(f"**Why (the diagnosis of `{st.before}`).**"), Bullets(why))
    frame = pd.DataFrame([{
        "layer": ls.layer, "before_s": ls.before_s, "after_s": ls.after_s, "speedup": ls.speedup,
        "ci": f"{_ci(ls.before_ci)} / {_ci(ls.after_ci)}" + ("" if ls.separated is None else
                                                             " (apart)" if ls.separated else " (overlap)"),
        "bound": f"{BOUND_TEXT.get(ls.bound_before or '', '—').split(' (')[0]} → "
                 f"{BOUND_TEXT.get(ls.bound_after or '', '—').split(' (')[0]}",
        "verdict": ls.verdict} for ls in st.layers])
    sec.add(Paragraph("**Op Time per layer.**"), Table(f"step-{n}", "", frame, LAYER_COLUMNS))
    moved = [f"{ls.layer}: " + "; ".join(f"{label} {_num(x)} → {_num(y)}" for label, x, y in ls.moved)
             for ls in st.layers if ls.moved]
    if moved:
        sec.add(Paragraph("**Profile rows that moved** (the main kernel's counters)."), Bullets(moved))
    return sec


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def document(inputs: list[Input], title: str, manifest: Manifest | None = None) -> Document:
    vs = versions(inputs, manifest)
    st = steps_mod.steps(vs, COUNTERS)
    top = Section("Optimisations, step by step")
    confirmed = sum(ls.verdict.startswith("confirmed") for s in st for ls in s.layers)
    total = sum(len(s.layers) for s in st)
    top.add(Paragraph(f"{len(vs)} versions, {len(st)} steps; on {confirmed} of {total} layer steps the technique "
                      "applied was among the advice for the version before and the layer got faster. A step's "
                      "technique is read off the SASS (what appeared); its gain is the ratio of the medians, "
                      "'apart' when their 95% intervals do not overlap."))
    notes = {m: n for m, n in zip(manifest.labels, manifest.notes, strict=True)} if manifest else {}
    top.sections = [step_section(i, s, vs[i - 1], notes.get(s.after.split(": ")[0], "")) for i, s in enumerate(st, start=1)]
    return Document(title, [top])
