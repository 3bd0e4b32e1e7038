"""Course rule sets as data: `profconv/judge/courses/<set>.toml` loaded into typed records.

A set names its term, the models that imply it, the relative-error tolerance of each precision, the
performance threshold and its rules, in order. A rule is a check from the registry (`checks.CHECKS`)
with its parameters, the course's words (`text`) and where the course says so (`source`); `applies_to`
limits it to some of the course's submissions (final, req_1, op_5; default every one), `severity` is
what a broken rule costs (fail | warn | partial | info). `extends` takes another set's rules first;
a rule whose `replaces` (or id) names an inherited one takes its place, `drop` removes inherited ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import tomllib

from profconv.errors import InputError
from profconv.records.verdict import RuleRef

SEVERITIES = ("fail", "warn", "partial", "info")
DEFAULT = "profconv"


@dataclass(frozen=True)
class Rule:
    id: str
    check: str
    text: str
    source: str
    severity: str = "fail"
    applies_to: tuple[str, ...] = ()  # roles (final, req_1, op_5 ...); empty: every role
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> RuleRef:
        return RuleRef(id=self.id, text=self.text, source=self.source)

    def applies(self, role: str) -> bool:
        return not self.applies_to or role in self.applies_to or ("req_*" in self.applies_to and role.startswith("req"))\
            or ("op_*" in self.applies_to and role.startswith("op_"))


@dataclass(frozen=True)
class Performance:
    """Full credit at or below full_s of summed Op Time at `images` images, none past zero_s, linear between."""

    full_s: float
    zero_s: float
    images: int = 10_000
    points: float | None = None
    text: str = ""
    source: str = ""


@dataclass(frozen=True)
class RuleSet:
    id: str
    name: str
    rules: tuple[Rule, ...]
    tolerance: dict[str, float]  # precision -> relative error accepted
    models: tuple[str, ...] = ()  # models that imply this set
    performance: Performance | None = None
    optimisations: dict[str, tuple[str, ...]] = field(default_factory=dict)  # folder -> features that show it
    summary: str = ""

    def rule(self, rule_id: str) -> Rule:
        return next(r for r in self.rules if r.id == rule_id)


def _courses() -> Any:
    return resources.files("profconv.judge").joinpath("courses")


def available() -> list[str]:
    """The rule sets' ids (file names under courses/)."""
    return sorted(p.name.removesuffix(".toml") for p in _courses().iterdir() if p.name.endswith(".toml"))


def _rule(d: dict[str, Any], where: str) -> Rule:
    try:
        rule = Rule(id=d["id"], check=d["check"], text=d["text"], source=d["source"],
                    severity=d.get("severity", "fail"), applies_to=tuple(d.get("applies_to", ())),
                    params=dict(d.get("params", {})))
    except KeyError as exc:
        raise ValueError(f"{where}: a rule without {exc.args[0]!r}") from None
    if rule.severity not in SEVERITIES:
        raise ValueError(f"{where}: rule {rule.id}: severity {rule.severity!r} is not one of {', '.join(SEVERITIES)}")
    return rule


def parse(doc: dict[str, Any], where: str, base: RuleSet | None = None) -> RuleSet:
    """A rule set from its TOML document (`base`: the set it extends). Malformed data: ValueError."""
    from profconv.judge.checks import CHECKS

    rules = [r for r in (base.rules if base else ()) if r.id not in set(doc.get("drop", ()))]
    for d in doc.get("rule", []):
        r = _rule(d, where)
        if r.check not in CHECKS:
            raise ValueError(f"{where}: rule {r.id}: no check {r.check!r} (known: {', '.join(sorted(CHECKS))})")
        old_id = d.get("replaces", r.id)
        rules = [r if o.id == old_id else o for o in rules] if any(o.id == old_id for o in rules) else [*rules, r]
    perf = doc.get("performance")
    performance = Performance(**perf) if perf else (base.performance if base else None)
    tolerance = {**(base.tolerance if base else {}), **doc.get("tolerance", {})}
    opts = {**(base.optimisations if base else {}), **{k: tuple(v) for k, v in doc.get("optimisations", {}).items()}}
    try:
        return RuleSet(id=doc["id"], name=doc["name"], rules=tuple(rules), tolerance=tolerance,
                       models=tuple(doc.get("models", ())), performance=performance, optimisations=opts,
                       summary=doc.get("summary", ""))
    except KeyError as exc:
        raise ValueError(f"{where}: no {exc.args[0]!r}") from None


@cache
def load(set_id: str) -> RuleSet:
    """The rule set `set_id` (a term such as sp25, or profconv's own default). Unknown: InputError."""
    if set_id not in available():
        raise InputError(f"--course {set_id!r}: no such rule set (known: {', '.join(available())})")
    where = f"profconv/judge/courses/{set_id}.toml"
    doc = tomllib.loads(_courses().joinpath(f"{set_id}.toml").read_text())
    base = load(doc["extends"]) if doc.get("extends") else None
    return parse(doc, where, base)


def for_model(model: str | None) -> RuleSet:
    """The set a model implies (ece408-fa18 -> the Fall 2018 rules), else profconv's own strict set."""
    for set_id in available():
        if model and model in load(set_id).models:
            return load(set_id)
    return load(DEFAULT)


FORM_ERA = {"mxnet": "mxnet", "mxnet-generic": "mxnet", "minidnn": "minidnn", "minidnn-stride": "minidnn",
            "minidnn-single": "minidnn"}
"""The era a course form belongs to: a file's own form says its term's rules better than the model it ran
with (a mini-dnn file run on an MXNet-era model still has a prolog and an epilog to judge)."""


def choose(course: str | None, model: str | None, form: str | None = None) -> RuleSet:
    """--course TERM when given; else the era of the kernel's course form (when the model's own set is of
    another era); else what the model implies."""
    if course:
        return load(course)
    by_model = for_model(model)
    era = FORM_ERA.get(form or "")
    if era is not None and by_model.id != era and not (by_model.id != "profconv" and _extends(by_model, era)):
        return load(era)
    return by_model


def _extends(rs: RuleSet, era: str) -> bool:
    """A term's set that builds on the era's (sp25 on minidnn)."""
    doc = tomllib.loads(_courses().joinpath(f"{rs.id}.toml").read_text())
    return doc.get("extends") == era or (bool(doc.get("extends")) and _extends(load(doc["extends"]), era))
