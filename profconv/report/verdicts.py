"""The report's "Your kernels: the course's verdict" section: per user kernel and image count, the verdict
under the rule set it was judged by, the rule that decided it, the optimisations seen in its SASS and
launches, the work outside the timed call and the credit the term's threshold implies; then each
kernel's warnings and the rules' sources."""

from __future__ import annotations

import pandas as pd

from profconv.judge import text
from profconv.records import RunRecord
from profconv.render.document import Bullets, Column, Paragraph, Section, Table

COLUMNS = [Column("kernel", "kernel", "code"), Column("images", "images", "int"), Column("rules", "rules"),
           Column("verdict", "verdict"), Column("rule", "rule", "code"), Column("optimisations", "optimisations"),
           Column("outside", "work outside the timed call"), Column("credit", "performance credit", drop=1)]


def verdict_rows(rec: RunRecord) -> pd.DataFrame:
    rows = []
    for r in rec.results:
        v = r.verdict
        if v is None:
            continue
        credit = (f"{v.credit.fraction:.0%}" + (f" ({v.credit.points:.3g} pts)" if v.credit.points is not None else "")
                  if v.credit is not None else "—")
        rows.append({"kernel": r.variant, "images": r.images, "rules": v.course + (f" {v.role}" if v.role != "final" else ""),
                     "verdict": text.status(v) if v.status == "ok" else f"FAILED: {v.reason}",
                     "rule": v.rule.id if v.rule else "—", "optimisations": text.optimisations(v),
                     "outside": text.outside(v) or "not recorded", "credit": credit})
    return pd.DataFrame(rows, columns=[c.key for c in COLUMNS])


def verdict_section(rec: RunRecord) -> Section | None:
    """None when the run judged no user kernel."""
    df = verdict_rows(rec)
    if df.empty:
        return None
    sec = Section("Your kernels: the verdict")
    sec.add(Paragraph("Each kernel judged by the rules of its course term (`run --course`, else the term the model "
                      "implies); the optimisations are read from the kernel's SASS (cuobjdump) and its launches, the "
                      "work outside the timed call from the GPU's own records (CUPTI)."),
            Table("verdicts", "", df, COLUMNS))
    notes = []
    for r in rec.results:
        v = r.verdict
        if v is None:
            continue
        if v.rule is not None:
            notes.append(f"`{r.variant}` ({r.images:,} images): `{v.rule.id}`: {v.rule.text} — {v.rule.source}")
        notes += [f"`{r.variant}` ({r.images:,} images): warning: {w}" for w in v.warnings]
    if notes:
        sec.add(Bullets(notes))
    return sec
