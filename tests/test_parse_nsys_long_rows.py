"""nsys console rows of tens of thousands of tokens are read in linear time (issue 26, hostile-2.md H1:
a row with '1ms ' x 80,000 appended, 351 kB, took 29 s: each row glued to it split the whole rest of
the line again). Built from the reproducer's corpus log."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import profconv

LOG = (Path(__file__).parent / "data" / "nsys-text" / "f64081169-jetson-trt-yolo-4digit-grouping.log").read_text()


def _long(tokens: int, token: str = " 1ms") -> str:
    lines = LOG.split("\n")
    lines[195] += token * tokens
    return "\n".join(lines)


@pytest.mark.parametrize("token", [" 1ms", " 1", " 1 2,5"])
def test_a_row_of_80000_tokens_in_linear_time(token):
    base = profconv.parse_text(_long(0))
    t0 = time.process_time()
    ps = profconv.parse_text(_long(80_000, token))
    took = time.process_time() - t0
    assert took < 5.0, took  # 29 s before; ~0.3 s now
    assert len(ps.frame) >= len(base.frame) - 1  # the long row is reported or read, the others stay
    long_row = 196
    assert long_row in {n for n, _ in ps.unplaced} or long_row in set(ps.frame["line_start"])
