"""A sweep's nsys runs made into profiles at once (profconv.parse.dialects.nsys_sweep): what grouping
makes of their start and block events, their tables held as the batch's columns."""

from __future__ import annotations

import pytest

from profconv.nogc import paused
from profconv.parse import bytescan, core, grouping
from profconv.parse.dialects import nsys, nsys_sweep
from profconv.parse.model import Block
from tests.test_parse_nsys_stream import _sweep


def _doc(text: str):
    data = text.encode()
    pre = bytescan.find(data, core.BYTES_PAY_FROM, keep=0, batch_rows=1)
    assert pre is not None
    doc, _ = core.document(pre.data.decode("ascii"), "x")
    doc.pre = bytescan.checked(pre, doc.lines)
    return doc


def _made(prof) -> list[tuple]:
    return [(b.section, b.kind, b.line_start, b.line_end, b.span.first, b.span.n) for b in prof.blocks]


def test_a_sweeps_runs_are_profiles_of_one_sweep_their_blocks_not_made():
    with paused():
        r = nsys.parse(_doc(_sweep(4)))
    assert [p.sweep is not None for p in r.profiles] == [True] * 4
    assert [(p.line_start, p.line_end) for p in r.profiles] == [(1, 10), (12, 21), (23, 32), (34, 43)]
    assert r.profiles[0].sweep is r.profiles[3].sweep
    assert _made(r.profiles[1]) == [("gpu", "cuda_gpu_kern_sum", 16, 21, 6, 6)]
    assert r.profiles[1].sweep is None  # made once asked, then a profile as any other
    assert r.rows_read == [(5, 10), (16, 21), (27, 32), (38, 43)] and {2, 4, 13, 15} <= r.claimed
    assert sorted(r.resume) == [1, 12, 23, 34]


def test_the_same_profiles_as_their_start_and_block_events_make():
    """Each run's profile, made at once, is what grouping makes of its events (every field and block)."""
    text = _sweep(6)
    runs = text.split("Generating ")
    runs[3] = runs[3].replace("cuda_gpu_kern_sum", "cuda_api_sum")
    runs[5] += ("Processing [run4.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]...\n\n"
                "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                "100.0,10,1,10.0,10.0,10,10,0.0,cudaMalloc\n\n")  # a second table in run 4's profile: not swept
    with paused():
        r = nsys.parse(_doc("Generating ".join(runs)))
    swept = [p.sweep is not None for p in r.profiles]
    # runs 0-3 made at once (the last one's table made where grouping asked the next start about it),
    # run 4 holds two tables (its events as they are), run 5 made at once
    assert swept == [True, True, True, False, False, True]
    plain = []
    for ev in r.profiles:
        plain.append((ev.line_start, ev.line_end, ev.pid, ev.command, ev.device, _made(ev)))
    assert plain[2][5] == [("api", "cuda_api_sum", 27, 32, 12, 6)]
    assert [len(p[5]) for p in plain] == [1, 1, 1, 1, 2, 1]
    assert plain[4][:2] == (45, 59)


def test_events_keeps_what_is_not_a_run_start_then_its_one_table():
    pre = bytescan.find(_sweep(3).encode(), core.BYTES_PAY_FROM, keep=0, batch_rows=1)
    assert pre is not None
    batch = next(iter(pre.tables.values())).batch

    def table(line: int) -> nsys_sweep.Batched:
        return nsys_sweep.Batched("batched", line, batch=batch, first=0, n=3, section="gpu", report="cuda_gpu_kern_sum")

    start = grouping.Event
    evs = [start("start", 1), table(4), start("start", 9), table(12), table(20), start("start", 30, pid=7), table(33),
           table(40), start("break", 50), start("start", 51), table(54)]
    got = nsys_sweep.events(evs)
    assert [e.kind for e in got] == ["profiles", "start", "block", "block", "start", "block", "block", "break",
                                     "profiles"]
    assert [(p.line_start, p.line_end) for p in got[0].profiles] == [(1, 7)]
    assert got[2].block.line_start == 13 and isinstance(got[3].block, Block)
    assert (got[3].block.line_start, got[3].block.line_end, got[3].block.span.n) == (21, 23, 3)


@pytest.mark.parametrize("odd", [False, True])
def test_whole_parse_of_a_sweep_equals_the_events_made_one_by_one(tmp_path, monkeypatch, odd):
    """The whole parse (400 runs: their tables batched) with runs made at once, and with every batched
    table its own block event: the same profiles, rows, notes."""
    runs = _sweep(400).split("Generating ")
    if odd:
        runs[3] = runs[3].replace("cuda_gpu_kern_sum", "cuda_api_sum")
        runs[50] = "SQLite file x.sqlite from x.nsys-rep\n" + runs[50]  # two starts, one profile
        runs[90] = runs[90].replace("Processing", "Executing 'nvtx_sum' stats report\nProcessing")
    path = tmp_path / "sweep.log"
    path.write_text("Generating ".join(runs))
    with paused():
        swept = core.parse_whole(str(path))
        monkeypatch.setattr(nsys_sweep, "events", lambda evs: [
            grouping.Event("block", e.line, block=nsys_sweep.block_of(e)) if isinstance(e, nsys_sweep.Batched) else e
            for e in evs])
        plain = core.parse_whole(str(path))
    assert len(swept.profiles) == 400
    assert [vars(i) for i in swept.profiles] == [vars(i) for i in plain.profiles]
    assert {k: list(swept.rows.col(k)) for k in swept.rows.cols} == {k: list(plain.rows.col(k)) for k in plain.rows.cols}
    assert (swept.notes, swept.table_notes, swept.unplaced) == (plain.notes, plain.table_notes, plain.unplaced)
