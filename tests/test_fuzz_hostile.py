"""A small slice of the bounded fuzz run (scripts/fuzz.py, `nox -s fuzz`): the hostile records, manifests,
grade listings and notebooks of tests/fuzz_hostile.py, a few seeds each, so the fuzzers themselves stay
working and the classes this suite owns stay clean. The parser's log and stray-line classes run in
`nox -s fuzz` (100,000 inputs) and, bounded, in tests/test_parse_fuzz.py."""

from __future__ import annotations

import pytest

from profconv.errors import ProfconvError
from tests import fuzz_hostile

SLICE = {"record": 12, "manifest": 40, "listing": 40, "notebook": 30}


@pytest.mark.parametrize("cls", list(SLICE))
def test_hostile_inputs_end_in_a_result_or_one_line(cls):
    outcomes = []
    for seed in range(SLICE[cls]):
        try:
            outcomes.append(fuzz_hostile.CLASSES[cls](seed))
        except ProfconvError:
            outcomes.append("refused")
    assert len(outcomes) == SLICE[cls]
    assert any(o != "refused" for o in outcomes), "every input refused: the fuzzer no longer reaches the code"


def test_findings_are_raised_for_what_they_guard(monkeypatch):
    """The checks bite: a listing reader that drops a student, raw HTML in markdown."""
    import profconv.grade.submissions as submissions

    real = submissions.discover
    monkeypatch.setattr(submissions, "discover", lambda inputs: real(inputs)[:-1] or real(inputs))
    with pytest.raises(fuzz_hostile.Finding, match="a student dropped without a word"):
        for seed in range(40):
            fuzz_hostile.check_listing(seed)


def test_fuzz_driver_replays_and_reports(tmp_path):
    """scripts/fuzz.py over a few inputs of every class: a report with counts per class and no findings."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "scripts/fuzz.py", "--inputs", "60", "--workers", "1", "--seed", "3",
                        "--report", str(tmp_path / "r.json")], cwd=root, capture_output=True, text=True, timeout=600)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["inputs"] >= 60 and sum(doc["by_class"].values()) == doc["inputs"]
    assert {k.split("/")[0] for k in doc["by_class"]} == set(fuzz_hostile.CLASSES)
    assert r.returncode in (0, 1) and "finding(s) in" in r.stdout
    replay = subprocess.run([sys.executable, "scripts/fuzz.py", "--replay", "listing:1"], cwd=root,
                            capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0 and replay.stdout.strip() in ("read", "refused")
