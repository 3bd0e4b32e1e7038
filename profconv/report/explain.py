"""`profconv explain` and the report's "Why it takes its time, what to try next" section: per timed
conv op the diagnosis (analysis/diagnosis.py) and the ranked advice (analysis/advice.py), as
Document sections (terminal, markdown, HTML) and as JSON (schema "profconv.explain")."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from profconv.analysis import advice as advice_mod
from profconv.analysis import diagnosis as dx_mod
from profconv.analysis.op_evidence import OpEvidence, gather
from profconv.hardware import peak_for
from profconv.render.document import Bullets, Column, Paragraph, Section, Table
from profconv.report.inputs import RunInput

SCHEMA = "profconv.explain"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Explanation:
    ev: OpEvidence
    diagnosis: dx_mod.Diagnosis
    advice: list[advice_mod.Advice]


def sass_texts(inp: RunInput) -> dict[str, str]:
    """The SASS listings the record names, read from the run directory (a missing one is left out)."""
    ev = inp.record.evidence
    out = {}
    for listing in ev.sass if ev else []:
        path = inp.path.parent / listing.file
        try:
            out[listing.file] = path.read_text(errors="replace")
        except OSError:
            continue
    return out


def rung_sources() -> dict[str, str]:
    """Our ladder's rungs -> their kernel file (kernels/<file>)."""
    from profconv.run.variants import VARIANTS

    return {v.name: f"kernels/{v.source}" for v in VARIANTS if v.source}


def explain_run(inp: RunInput, only: set[str] | None = None) -> list[Explanation]:
    """Diagnosis and advice for every diagnosable op of the run (`only`: variant or variant/layer names)."""
    peak = peak_for(inp.record.environment.gpu)
    sources = rung_sources()
    out = []
    for ev in gather(inp.record, sass_texts(inp)):
        if only and ev.variant not in only and ev.key not in only:
            continue
        d = dx_mod.diagnose(ev, peak)
        out.append(Explanation(ev, d, advice_mod.advise(ev, d, peak, sources)))
    return out


FINDING_COLUMNS = [Column("label", "evidence"), Column("value", "measured"), Column("good", "good looks like", drop=1)]
ADVICE_COLUMNS = [Column("rank", "#", "int"), Column("title", "try"), Column("gain_s", "can buy", "seconds"),
                  Column("share", "of Op Time", "fraction", drop=2), Column("ours", "our ladder", drop=1)]


def _ours(a: advice_mod.Advice) -> str:
    if a.rung is None:
        return "—"
    where = f" ({a.rung_source})" if a.rung_source else ""
    return f"`{a.rung}`{where}: " + (f"{a.rung_time_s * 1e3:.3g} ms here" if a.rung_time_s else "not in this run")


def _ours_sentence(a: advice_mod.Advice) -> str:
    if a.rung is None:
        return ""
    where = f" ({a.rung_source})" if a.rung_source else ""
    return (f" Our `{a.rung}`{where} does this" + (f": {a.rung_time_s * 1e3:.3g} ms on this layer in this run."
                                                    if a.rung_time_s else "."))


def op_section(x: Explanation) -> Section:
    d, ev = x.diagnosis, x.ev
    sec = Section(f"{ev.variant} · {ev.layer} ({ev.shape.text()}, {ev.shape.B:,} images)")
    kernel = f" Kernel `{d.kernel}`." if d.kernel else ""
    sec.add(Paragraph(f"**{d.headline[0].upper() + d.headline[1:]}.**{kernel}"))
    if d.findings:
        sec.add(Table(f"explain-{ev.variant}-{ev.layer}-evidence", "", pd.DataFrame([asdict(f) for f in d.findings]),
                      FINDING_COLUMNS))
    op_advice = [a for a in x.advice if a.scope == "op"]
    if op_advice:
        frame = pd.DataFrame([{"rank": i, "title": a.title, "gain_s": a.gain_s, "share": a.gain_share,
                               "ours": _ours(a)} for i, a in enumerate(op_advice, start=1)])
        sec.add(Table(f"explain-{ev.variant}-{ev.layer}-advice", "What to try next, by what it can buy", frame,
                      ADVICE_COLUMNS))
        sec.add(Bullets([f"**{i}. {a.title}**: {a.reason}." + _ours_sentence(a)
                         for i, a in enumerate(op_advice, start=1)]))
    elif ev.sass:
        sec.add(Paragraph("None of the techniques profconv knows applies: its SASS already shows each one its "
                          "numbers call for.", "note"))
    else:
        sec.add(Paragraph("No SASS for this op: the techniques it may already use are unknown, so none is advised "
                          "(`profconv explain --collect` lists it with nvcc and cuobjdump).", "note"))
    around = [a for a in x.advice if a.scope != "op"]
    if around:
        sec.add(Bullets([f"Beyond the conv op: **{a.title}**: {a.reason}." for a in around]))
    for note in d.notes:
        sec.add(Paragraph(note, "note"))
    return sec


def explain_sections(inp: RunInput, ops: list[Explanation]) -> list[Section]:
    """One section per op, under a heading that says where the numbers come from."""
    ev = inp.record.evidence
    how = []
    if ev is not None and ev.ncu is not None:
        passes = sorted({p for ps in ev.ncu.passes.values() for p in ps})
        span = (f"{passes[0]}–{passes[-1]}" if len(passes) > 1 else str(passes[0])) + " replay passes per kernel, " \
            if passes else ""
        how.append(f"counters: the targeted Nsight Compute pass ({len(ev.ncu.metrics)} metrics, {span}"
                   f"{ev.ncu.images or 0:,} images)")
    elif any(x.ev.ncu_source == "run" for x in ops):
        how.append("counters: `run --profile ncu`'s summary metrics only (`profconv explain --collect` on the GPU "
                   "machine adds the targeted pass)")
    if ev is not None and ev.sass:
        tools = "nvcc -cubin with the run's defines, cuobjdump -sass" if ev.sass[0].how.startswith("nvcc") \
            else ev.sass[0].how
        how.append(f"SASS: {len(ev.sass)} listing(s) for {ev.sass[0].arch or 'this GPU'} ({tools})")
    top = Section("Why it takes its time, and what to try next")
    top.add(Paragraph("Per timed conv op: what bounds it (the busiest unit against its peak, else the stall reasons), "
                      "how far it is from the layer's floor, the numbers that show it, and the techniques that "
                      "could buy the most, each with the reason from this kernel's numbers. A technique its SASS "
                      "shows it already uses is never advised. " + "; ".join(how) + ("." if how else "")))
    for note in (ev.notes if ev else []):
        top.add(Paragraph(note, "note"))
    if not ops:
        top.add(Paragraph("No GPU conv op of ours or yours ran correctly in this run: nothing to diagnose."))
    top.sections = [op_section(x) for x in ops]
    return [top]


def explain_json(path: Path, ops: list[Explanation]) -> dict:
    """The diagnoses and advice as plain JSON (seconds, fractions, % of peak as printed by ncu)."""
    def one(x: Explanation) -> dict:
        d = asdict(x.diagnosis)
        d["findings"] = [asdict(f) for f in x.diagnosis.findings]
        d["stalls"] = [{"reason": r, "cycles_per_issue": v} for r, v in x.diagnosis.stalls]
        return {**d, "shape": x.ev.shape.text(), "images": x.ev.shape.B, "technique": x.ev.technique,
                "precision": x.ev.precision, "counters": x.ev.ncu_source, "sass": x.ev.sass_file,
                "advice": [asdict(a) for a in x.advice]}

    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "run": str(path), "ops": [one(x) for x in ops]}
