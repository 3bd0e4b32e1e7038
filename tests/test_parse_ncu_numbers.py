"""ncu numbers that are no numbers profconv can hold (issue 26, hostile-2.md T1/T6): a process id or a
--print-summary launch count of 20, 400 or 5,000 digits is one reported line, never a traceback and
never a count past the Int64 calls column; built from the reproducers in hostile-2/ (the corpus logs
with one number lengthened)."""

from __future__ import annotations

from pathlib import Path

import pytest

import profconv
from profconv.parse import units
from profconv.parse.dialects.ncu import whole
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data"
SUMMARY = (DATA / "ncu-text" / "alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log").read_text()
T4 = (DATA / "ncu-text" / "md-info-fused-rmsnorm-t4-colab.log").read_text()


def _third_kernel(count: str) -> str:
    lines = SUMMARY.split("\n")
    assert lines[52].endswith(" 1 invocations ")
    lines[52] = lines[52].replace(" 1 invocations", f" {count} invocations")
    return "\n".join(lines)


@pytest.mark.parametrize("digits", [20, 400, 5000])
def test_summary_launch_count_past_int64_is_reported(digits):
    ps = profconv.parse_text(_third_kernel("9" * digits))
    assert [n for n, _ in ps.unplaced] == [53]  # the kernel line, reported
    gpu = ps.frame[ps.frame.section == "gpu"]  # the kernel's averages stay, its launch count is empty
    assert gpu["calls"].isna().tolist() == [True] and gpu["avg_ns"].tolist() == pytest.approx([1.186562e10], rel=1e-6)
    assert len(ps.frame) == len(profconv.parse_text(SUMMARY).frame)


def test_summary_launch_count_at_int64_max_is_read():
    ps = profconv.parse_text(_third_kernel(str(units.MAX_COUNT)))
    assert ps.unplaced == []
    assert ps.frame[ps.frame.section == "gpu"]["calls"].tolist() == [units.MAX_COUNT]


@pytest.mark.parametrize("digits", [20, 5000])
def test_connected_pid_of_many_digits(cli, tmp_path, digits):
    path = tmp_path / "pid.log"
    path.write_text(T4.replace("Connected to process 1803", "Connected to process " + "9" * digits))
    r = cli("parse", str(path), "--json")
    assert r.returncode == 0, r.stderr
    assert len(profconv.parse(str(path)).frame) == len(profconv.parse_text(T4).frame)
    assert [p.pid for p in profconv.parse(str(path)).profiles] == [1803]  # from its ==1803== lines


def test_report_on_a_huge_launch_count(tmp_path):
    path = tmp_path / "inv.log"
    path.write_text(_third_kernel("9" * 20))
    r = run_cli("report", str(path), "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(("digits", "value"), [("0", 0), ("12", 12), ("9223372036854775807", units.MAX_COUNT),
                                                ("9223372036854775808", None), ("9" * 19, None), ("9" * 5000, None)])
def test_whole(digits, value):
    assert whole(digits) == value
