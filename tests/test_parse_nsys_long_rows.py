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


NSYS_STATS = (Path(__file__).parent / "data" / "nsys-text" / "ayush-os-a100-vectoradd-stats.log").read_text()


@pytest.mark.parametrize("digits", [100, 400])
def test_a_number_past_its_column_is_not_cut_into_two_rows(digits):
    """hostile fuzz log:260061020: '0.0999…' (hundreds of digits) in a Total (MB) cell ran past the
    header's width; the row was taken for two rows glued together and its tail '999…9  2 …' read as
    a row of 1e+72 bytes. A cut between two digits is no row's end: the row reads as the text says."""
    lines = NSYS_STATS.split("\n")
    at = next(k for k, ln in enumerate(lines) if ln.endswith("[CUDA memcpy HtoD]") and "(MB)" in lines[k - 2])
    lines[at] = lines[at].replace("0.000", "0.0" + "9" * digits, 1)
    ps = profconv.parse_text("\n".join(lines))
    size = ps.frame[ps.frame["section"] == "gpu-memory-size"].set_index("name")
    assert size["bytes"].tolist() == [100000.0, 0.0]  # 0.0999… MB, as near as a double holds it
    assert size.loc["[CUDA memcpy HtoD]", "calls"] == 2
    assert len(ps.frame) == 40
    assert ps.unplaced == []


def test_a_long_row_is_not_cut_inside_its_name():
    """The same rule for the reproducer's row: its name runs past the header's width, and the cut
    at that width fell inside it ('…stages_6' + a 'row' '4x3_medium… 1ms 1ms …'): the row read with
    its name cut and the line reported. It reads whole now: its numbers, its full name first."""
    ps = profconv.parse_text(_long(40_000))
    row = ps.frame[ps.frame["line_start"] == 196]
    assert len(row) == 1
    assert row["calls"].iloc[0] == 12976
    assert row["total_ns"].iloc[0] == 148040330.0
    assert row["name"].iloc[0].startswith("trt_ampere_h16816cudnn_128x64_ldg8_relu_exp_stages_64x3_medium_nhwc_linkable_tn_v1 ")
