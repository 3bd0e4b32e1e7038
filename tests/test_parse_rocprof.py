"""rocprof's statistics (AMD): the dialect added as one module and its registration (issue 23's
proof of the registry). Exact values from a real rocprofv3 --stats excerpt (tests/data/SOURCES.md)
and the rocprof 1.x five-column layout."""

from __future__ import annotations

from pathlib import Path

import profconv
from tests.parse_invariants import check_all

DATA = Path(__file__).parent / "data"
V3 = DATA / "rocprof" / "amd-hpctraining-rocprofv3-jacobi-domain-hip-api-kernel-stats.csv.log"

V1 = '''"Name","Calls","TotalDurationNs","AverageNs","Percentage"
"copy_kernel(float*, float*, int, int) [clone .kd]",3,497760,165920,74.5
"__amd_rocclr_copyBuffer",4,170400,42600,25.5
'''


def _rows(ps, section):
    f = ps.frame[ps.frame["section"] == section]
    return [(r.name, int(r.calls), float(r.total_ns), float(r.avg_ns), float(r.time_pct)) for r in f.itertuples()]


def test_rocprofv3_kernel_and_hip_api_stats():
    text = V3.read_text()
    ps = profconv.parse(str(V3))
    check_all(ps, text)
    assert [(p.tool, p.line_start, p.line_end) for p in ps.profiles] == [("rocprof", 3, 33)]
    assert ps.unplaced == []
    gpu = _rows(ps, "gpu")
    assert gpu[0] == ("JacobiIterationKernel(int, double, double, double const*, double const*, double*, double*)",
                      1000, 545275480.0, 545275.48, 43.03)
    assert gpu[-1] == ("__amd_rocclr_fillBufferAligned", 1, 5920.0, 5920.0, 4.671e-04)
    assert len(gpu) == 7
    api = _rows(ps, "api")
    assert len(api) == 22
    assert api[0] == ("hipMemcpy", 1005, 1248355080.0, 1242144.358209, 75.2)
    assert api[17] == ("__hipRegisterFatBinary", 3, 26819.0, 8939.666667, 1.616e-03)
    row = ps.frame[ps.frame["name"] == "hipMemcpy"].iloc[0]
    assert (float(row.min_ns), float(row.max_ns), float(row.std_ns)) == (427157.0, 16960295.0, 594564.020099)
    # the domain summary is the other tables' sum: noted, not read
    assert "HIP_API" not in set(ps.frame["name"])
    assert any("domain summary" in n for n in ps.notes)
    shares = ps.frame[ps.frame["section"] == "gpu"]["share"]
    assert float(shares.iloc[0]) == 545275480 / sum(t for _, _, t, _, _ in gpu)  # ranked by time


def test_rocprof_1_stats(tmp_path):
    ps = profconv.parse_text(V1)
    check_all(ps, V1)
    assert _rows(ps, "gpu") == [("copy_kernel(float*, float*, int, int) [clone .kd]", 3, 497760.0, 165920.0, 74.5),
                                ("__amd_rocclr_copyBuffer", 4, 170400.0, 42600.0, 25.5)]


def test_a_row_that_does_not_read_is_reported():
    text = V1.replace("170400,42600", "170400,abc")
    ps = profconv.parse_text(text)
    assert [n for n, _ in ps.unplaced] == [3]
    assert len(ps.frame) == 1


def test_rocprof_is_a_format_and_in_the_messages(cli, tmp_path):
    log = tmp_path / "results.stats.csv"
    log.write_text(V1)
    r = cli("parse", str(log), "--format", "rocprof", "--csv")
    assert r.returncode == 0 and r.stdout.count("\n") == 3
    empty = tmp_path / "x.log"
    empty.write_text("nothing\n")
    r = cli("parse", str(empty))
    assert "OpenACC timing, the CUDA command-line profiler or rocprof)" in r.stderr
