"""The legacy CUDA command-line profiler (COMPUTE_PROFILE=1): CSV logs whose memory-copy rows hold
fewer fields than the header (no occupancy, no grid) are rows of the same log (issue 23: they were
dropped without a word, and each started a new profile)."""

from __future__ import annotations

import profconv
from tests.parse_invariants import check_all

CSV_SHORT_COPIES = """\
# CUDA_PROFILE_LOG_VERSION 2.0
# CUDA_DEVICE 0 Tesla C1060
# CUDA_PROFILE_CSV 1
# TIMESTAMPFACTOR fffff6faa0f4b8b0
method,gputime,cputime,occupancy
memcpyHtoD,3.200,12.000
stencil_3d,120.000,8.000,0.500
memcpyHtoD,3.100,11.000
stencil_3d,118.000,7.000,0.500
memcpyDtoH,6.400,19.000
"""


def test_copies_with_one_field_fewer_are_rows_of_the_same_log():
    ps = profconv.parse_text(CSV_SHORT_COPIES)
    check_all(ps, CSV_SHORT_COPIES)
    assert [(p.tool, p.device) for p in ps.profiles] == [("cudaprof", "Tesla C1060")]
    assert ps.unplaced == []
    trace = ps.frame[ps.frame["section"] == "gpu-trace"]
    assert [(r.name, float(r.total_ns), int(r.line_start)) for r in trace.itertuples()] == [
        ("memcpyHtoD", 3200.0, 6), ("stencil_3d", 120000.0, 7), ("memcpyHtoD", 3100.0, 8),
        ("stencil_3d", 118000.0, 9), ("memcpyDtoH", 6400.0, 10),
    ]
    gpu = ps.frame[ps.frame["section"] == "gpu"]
    assert [(r.name, float(r.total_ns), int(r.calls)) for r in gpu.itertuples()] == [
        ("memcpyHtoD", 6300.0, 2), ("stencil_3d", 238000.0, 2), ("memcpyDtoH", 6400.0, 1),
    ]


def test_a_row_with_more_fields_than_the_header_is_reported():
    text = CSV_SHORT_COPIES.replace("memcpyDtoH,6.400,19.000", "memcpyDtoH,6.400,19.000,0.5,1,2")
    ps = profconv.parse_text(text)
    assert int(ps.frame[ps.frame["section"] == "gpu"]["calls"].sum()) == 4
    assert [n for n, _ in ps.unplaced] == [10]
    assert len(ps.profiles) == 1
