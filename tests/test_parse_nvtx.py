"""nvprof's '==PID== NVTX result:' block (issue 23): each range's 'Range:' row is an `nvtx` row of
the profile the block is in (it had become a second profile without a pid); the GPU activities and
API calls listed inside a range are part of the profile's own tables, so they are not counted a
second time (a note says so). SYNTHETIC: the layout of nvprof 10.x's output, names made up."""

from __future__ import annotations

import profconv
from tests.parse_invariants import check_all

LOG = """\
==1678== NVPROF is profiling process 1678, command: ./a.out
==1678== Profiling application: ./a.out
==1678== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   72.71%  58.911us        34  1.7320us  1.3760us  8.3520us  [CUDA memcpy HtoD]
                   27.29%  22.112us        13  1.7009us  1.3760us  3.0080us  inc_field_kernel
      API calls:  100.00%  1.2000ms        47  25.531us  2.0000us  300.00us  cudaMemcpy
==1678== NVTX result:
==1678==   Thread "<unnamed>" (id = 66653056)
==1678==     Domain "<unnamed>"
==1678==       Range "inc_field"
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
          Range:  100.00%  758.78us        10  75.878us  43.322us  348.23us  inc_field
 GPU activities:   72.71%  58.911us        34  1.7320us  1.3760us  8.3520us  [CUDA memcpy HtoD]
                   27.29%  22.112us        13  1.7009us  1.3760us  3.0080us  inc_field_kernel
      API calls:  100.00%  1.2000ms        47  25.531us  2.0000us  300.00us  cudaMemcpy

==1678==       Range "setup"
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
          Range:  100.00%  1.5000ms         1  1.5000ms  1.5000ms  1.5000ms  setup
 GPU activities:  100.00%  58.911us        34  1.7320us  1.3760us  8.3520us  [CUDA memcpy HtoD]
"""


def test_ranges_are_nvtx_rows_of_the_same_profile():
    ps = profconv.parse_text(LOG)
    check_all(ps, LOG)
    assert [(p.pid, p.line_start) for p in ps.profiles] == [(1678, 1)]
    assert ps.unplaced == []
    f = ps.frame
    assert [(r.section, r.name, float(r.total_ns), int(r.calls)) for r in f.itertuples()] == [
        ("gpu", "[CUDA memcpy HtoD]", 58911.0, 34),
        ("gpu", "inc_field_kernel", 22112.0, 13),
        ("api", "cudaMemcpy", 1200000.0, 47),
        ("nvtx", "inc_field", 758780.0, 10),
        ("nvtx", "setup", 1500000.0, 1),
    ]
    notes = ps.table_notes[(1, "nvtx")]
    assert notes[0] == ("lines 13-13: the GPU activities and API calls listed inside each NVTX range (lines 14-15, "
                        "16, 21) are not kept as rows: they are part of the profile's own GPU activities and API calls")


def test_a_range_row_outside_an_nvtx_block_is_no_row():
    text = LOG.replace("==1678== NVTX result:\n", "")
    ps = profconv.parse_text(text)
    assert "nvtx" not in set(ps.frame["section"])
