"""nvprof summary tables of the input classes issue 23 found wrong on real logs kept back. SYNTHETIC
rows in the tools' layouts (names and numbers made up); each test says the class and what was wrong."""

from __future__ import annotations

import pytest

import profconv
from tests.parse_invariants import check_all


def _rows(ps):
    return [(r.name, int(r.calls), float(r.total_ns), float(r.avg_ns), float(r.min_ns), float(r.max_ns))
            for r in ps.frame.itertuples()]


SECONDS_CSV = """\
==1== NVPROF is profiling process 1, command: ./a
==1== Profiling result:
"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"
,%,s,,s,s,s,
"GPU activities",99.99,1.285081,13672,0.000093,0.000086,0.000103,"hysteresis_kernel"
"GPU activities",0.01,0.000005,2,0.000002,0.000002,0.000003,"[CUDA memcpy DtoD]"
"GPU activities",0.00,0.000002,1,0.000001,0.000001,0.000001,"MemsetD2D_BL"
"""


def test_csv_in_seconds_keeps_rows_that_agree_within_the_printed_step():
    """Time in seconds with six decimals steps by a microsecond: 2 x 0.000002 s is 0.000005 s within
    that step. Before: such rows were refused as 'total is not calls x average'."""
    ps = profconv.parse_text(SECONDS_CSV)
    check_all(ps, SECONDS_CSV)
    assert ps.unplaced == [] and ps.notes == []
    assert _rows(ps) == [
        ("hysteresis_kernel", 13672, 1285081000.0, 93000.0, 86000.0, 103000.0),
        ("[CUDA memcpy DtoD]", 2, 5000.0, 2000.0, 2000.0, 3000.0),
        ("MemsetD2D_BL", 1, 2000.0, 1000.0, 1000.0, 1000.0),
    ]


def test_a_total_beyond_the_printed_step_is_still_refused():
    text = SECONDS_CSV.replace("0.000005,2,0.000002", "0.000009,2,0.000002")
    ps = profconv.parse_text(text)
    assert [n for n, _ in ps.unplaced] == [6]


PDF_SPLIT = """\
Table 3: profile of the optimized version

Time(%) Time
Calls Avg Min Max Name
80.19% 23.304ms
2 11.652ms 8.6804ms 14.623ms [CUDA memcpy DtoH]
18.05% 5.2457ms
1 5.2457ms 5.2457ms 5.2457ms [CUDA memcpy HtoD]
1.76% 511.95us
2 255.98us 255.85us 256.10us warmup(innerStruct*, innerStruct*, int)
"""


def test_a_pdf_that_split_header_and_rows_after_time():
    """A course report's PDF text: 'Time(%) Time' on one line, 'Calls Avg Min Max Name' on the next,
    each row likewise. Before: 'no profiler output found' (the whole profile lost)."""
    ps = profconv.parse_text(PDF_SPLIT)
    check_all(ps, PDF_SPLIT)
    assert ps.unplaced == []
    assert _rows(ps) == [
        ("[CUDA memcpy DtoH]", 2, 23304000.0, 11652000.0, 8680400.0, 14623000.0),
        ("[CUDA memcpy HtoD]", 1, 5245700.0, 5245700.0, 5245700.0, 5245700.0),
        ("warmup(innerStruct*, innerStruct*, int)", 2, 511950.0, 255980.0, 255850.0, 256100.0),
    ]
    assert [(r.line_start, r.line_end) for r in ps.frame.itertuples()] == [(5, 6), (7, 8), (9, 10)]


ONE_CALL = """\
==7== NVPROF is profiling process 7, command: ./a
==7== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   80.00%  4.0000ms         2  2.0000ms  1.0000ms  3.0000ms  k1
                   20.00%  1.0000ms         1  1.0000ms  1.0000ms  k2
"""


def test_one_call_that_lost_one_of_its_avg_min_max():
    """With one call Avg, Min and Max are its Time: the lost one is implied exactly (and said).
    Before: the row was reported unplaced."""
    ps = profconv.parse_text(ONE_CALL)
    check_all(ps, ONE_CALL)
    assert ps.unplaced == []
    assert _rows(ps) == [("k1", 2, 4e6, 2e6, 1e6, 3e6), ("k2", 1, 1e6, 1e6, 1e6, 1e6)]
    assert ps.table_notes[(1, "gpu")] == [
        "lines 4-5: line 5: one call, and one of its Avg, Min and Max was missing: taken equal to the others "
        "(with one call all three are its Time)"]


def test_more_than_one_call_or_unequal_values_are_not_implied():
    for bad in ("20.00%  1.0000ms         2  1.0000ms  1.0000ms  k2", "20.00%  1.0000ms         1  1.0000ms  0.5000ms  k2"):
        ps = profconv.parse_text(ONE_CALL.replace("20.00%  1.0000ms         1  1.0000ms  1.0000ms  k2", bad))
        assert [n for n, _ in ps.unplaced] == [5]
        assert list(ps.frame["name"]) == ["k1"]


def test_a_csv_units_row_of_another_width_leaves_the_table_unplaced():
    """Fuzz (window 5's 100k run, log:260006690): a units row one field short raised IndexError. No cell's unit
    is known then: the table's lines are listed as unplaced, no number is made up."""


    text = ("==1== Profiling result:\n"
            '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n'
            ',%,ms,,us,us\n'
            '"GPU activities",100.0,1.5,3,500.0,400.0,600.0,"conv"\n')
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound, match=r"no row could be read: line\(s\) 2, 3, 4 "):
        profconv.parse_text(text)


def test_headerless_rows_looked_for_only_where_a_share_is_followed_by_a_blank():
    """nvprof's detect looks for two summary rows without a header only in a text with '%' then a blank
    or tab (every such row has one): the same answer as the rows' pattern alone, on every test log's
    head and on rows that differ from one only there."""
    from pathlib import Path

    from profconv.parse.dialects.nvprof import common

    row = " 45.20%  7.2980ms  8002  912ns  834ns  12.646us  acc_kernel\n"
    texts = [row * 2, row.replace("%  ", "%\t") * 2, row.replace("%  ", "%,") * 2, row, "",
             "GPU activities: " + row.lstrip() + row, row + row.replace("45.20%", "45.20 %")]
    texts += [p.read_text(errors="replace")[: common.HEADERLESS_SCAN]
              for p in sorted(Path(__file__).parent.joinpath("data").rglob("*.log"))]
    got = [common._headerless_rows(t) for t in texts]
    assert got == [common._TWO_ROWS.search(t) is not None for t in texts]
    assert got[:7] == [True, True, False, False, False, True, False]
    assert sum(got[7:]) >= 27  # the test logs with such rows in their head (27 of 155 when written)
