"""Golden files: the whole markdown and HTML report of stored H200 records and a seed log.

A change to the report's content shows up here as a diff against tests/data/golden/. After a
deliberate change, regenerate them (and read the diff before committing):

    PROFCONV_UPDATE_GOLDEN=1 python -m pytest tests/test_report_golden.py

Embedded PNG plots are replaced by a placeholder before comparing: their bytes depend on the
matplotlib release (CI tests both the newest and the locked one); the plots themselves are
checked by the report's own tests.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

GOLDEN = Path("tests/data/golden")
CASES = {
    "run-ece408": ["tests/data/runs/ece408-h200.json"],
    "run-cupti": ["tests/data/runs/cupti/run.json"],
    "bench": ["tests/data/bench/bench-h200-first.json"],
    "seed-002": ["tests/data/seeds/002_b0bcac5cefbf4480.log"],
}
PNG = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def _normalise(text: str, out: Path) -> str:
    return PNG.sub("data:image/png;base64,<plot>", text).replace(str(out), "<out>")


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", ["md", "html"])
def test_report_matches_its_golden_file(cli, tmp_path, case, kind):
    out = tmp_path / f"{case}.{kind}"
    option = "--markdown" if kind == "md" else "--html"
    r = cli("report", *CASES[case], option, str(out))
    assert r.returncode == 0, r.stderr
    got = _normalise(out.read_text(), tmp_path)
    golden = GOLDEN / f"{case}.{kind}"
    if os.environ.get("PROFCONV_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert golden.exists(), f"{golden} missing: run with PROFCONV_UPDATE_GOLDEN=1 once"
    expected = golden.read_text()
    if got != expected:  # the first differing line, not a 100 kB assertion dump
        for i, (a, b) in enumerate(zip(got.splitlines(), expected.splitlines()), 1):
            if a != b:
                pytest.fail(f"{golden}:{i} differs:\n  got:      {a[:300]}\n  expected: {b[:300]}")
        pytest.fail(f"{golden}: {len(got.splitlines())} lines, expected {len(expected.splitlines())}")
