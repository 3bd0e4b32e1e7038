"""The course's judge: a user kernel's evidence (the harness's facts, CUPTI attribution, SASS) judged by
a course term's rules, kept as data (courses/*.toml), into a verdict that names the rule it follows.

    from profconv import judge
    rs = judge.choose("sp25", model="ece408-fa20")   # --course, else what the model implies
    verdict = judge.judge(evidence, rs)               # records.verdict.Verdict

evidence.py: what the rules read; rules.py: the TOML rule sets; checks.py: the registry of checks;
credit.py: the performance credit a threshold implies; verdict.py: findings -> verdict.
"""

from profconv.judge.evidence import EdgeEvidence, Evidence, LayerEvidence
from profconv.judge.rules import RuleSet, available, choose, for_model, load
from profconv.judge.verdict import judge

__all__ = ["EdgeEvidence", "Evidence", "LayerEvidence", "RuleSet", "available", "choose", "for_model", "judge", "load"]
