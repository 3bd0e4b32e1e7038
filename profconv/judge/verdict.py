"""Evidence + a rule set -> the verdict: every rule that applies to the file's role is checked in the
set's order; the first broken rule of severity `fail` decides (FAILED, naming it); broken rules of
severity warn or partial, and partial results, become the verdict's warnings."""

from __future__ import annotations

from profconv.judge.checks import CHECKS, Result
from profconv.judge.credit import credit
from profconv.judge.evidence import Evidence
from profconv.judge.rules import Rule, RuleSet
from profconv.records.verdict import Finding, Verdict


def _outcome(r: Result, rule: Rule) -> str:
    return rule.severity if r.outcome == "broken" else r.outcome


def findings(ev: Evidence, rs: RuleSet) -> list[Finding]:
    out = []
    for rule in rs.rules:
        if not rule.applies(ev.role):
            continue
        for r in CHECKS[rule.check](ev, rule, rs):
            out.append(Finding(rule=rule.ref, outcome=_outcome(r, rule), reason=r.reason, layer=r.layer))  # type: ignore[arg-type]
    return out


def line(f: Finding) -> str:
    """'conv1: relative error 0.00031 above the fp32 tolerance 1e-05 [sp25.output-correct]'."""
    where = f"{f.layer}: " if f.layer else ""
    return f"{where}{f.reason} [{f.rule.id}]"


def judge(ev: Evidence, rs: RuleSet) -> Verdict:
    fs = findings(ev, rs)
    failed = [f for f in fs if f.outcome == "fail"]
    warnings = [line(f) for f in fs if f.outcome in ("warn", "partial")]
    first = failed[0] if failed else None
    return Verdict(course=rs.id, course_name=rs.name, status="failed" if failed else "ok",
                   reason=(f"{first.layer}: {first.reason}" if first and first.layer else first.reason if first else None),
                   rule=first.rule if first else None, warnings=warnings, findings=fs,
                   optimisations=list(ev.optimisations), placement=list(ev.placement), credit=credit(ev, rs),
                   role=ev.role, sass_read=ev.sass_read, precision=ev.precision,
                   sass_note=None if ev.sass_read else ev.sass_note)
