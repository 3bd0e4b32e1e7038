"""The invariants (tests/parse_invariants.py) on every profiler log in tests/data."""

import glob

import pytest

import profconv
from profconv.errors import NoProfileFound
from profconv.parse.core import read_text
from tests.parse_invariants import check_all

FILES = sorted(
    p for p in glob.glob("tests/data/**/*", recursive=True)
    if p.endswith((".log", ".txt", ".csv")) and "/runs/" not in p and "/grade/" not in p and "/bench/" not in p
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p[len("tests/data/"):])
def test_invariants_hold(path):
    text, _ = read_text(path)
    try:
        ps = profconv.parse(path)
    except NoProfileFound:
        return  # a log without a profiler result (a crash, a refused run): nothing emitted, nothing to check
    check_all(ps, text)
