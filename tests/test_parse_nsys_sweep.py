"""A sweep's nsys runs made into profiles at once (profconv.parse.dialects.nsys_sweep): what grouping
makes of their start and block events, their tables held as the batch's columns."""

from __future__ import annotations

import pytest

from profconv.nogc import paused
from profconv.parse import bytescan, core, grouping
from profconv.parse.dialects import nsys, nsys_batch, nsys_sweep
from profconv.parse.model import Block, SweptRun, expanded
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
    assert [type(p) for p in r.profiles] == [SweptRun] and r.profiles[0].count == 4  # one entry: 4 profiles
    ps = expanded(r.profiles)
    assert [p.sweep is not None for p in ps] == [True] * 4
    assert [(p.line_start, p.line_end) for p in ps] == [(1, 10), (12, 21), (23, 32), (34, 43)]
    assert ps[0].sweep is ps[3].sweep
    assert _made(ps[1]) == [("gpu", "cuda_gpu_kern_sum", 16, 21, 6, 6)]
    assert ps[1].sweep is None  # made once asked, then a profile as any other
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
    profiles = expanded(r.profiles)
    swept = [p.sweep is not None for p in profiles]
    # runs 0-3 made at once (grouping asks the next start about the last one's sweep, not its tables),
    # run 4 holds two tables (its events as they are), run 5 made at once
    assert swept == [True, True, True, True, False, True]
    plain = []
    for ev in profiles:
        plain.append((ev.line_start, ev.line_end, ev.pid, ev.command, ev.device, _made(ev)))
    assert plain[2][5] == [("api", "cuda_api_sum", 27, 32, 12, 6)]
    assert [len(p[5]) for p in plain] == [1, 1, 1, 1, 2, 1]
    assert plain[4][:2] == (45, 59)


def _fed(items: list) -> list[grouping.Event]:
    """The events nsys's reader notes of these (a table: nsys_sweep.add's fields; else an event)."""
    evs: list[grouping.Event] = []
    for it in items:
        if isinstance(it, tuple):
            nsys_sweep.add(evs, *it)
        else:
            evs.append(it)
    return evs


def _one_by_one(evs: list[grouping.Event]) -> list[grouping.Event]:
    """The events as they were before runs were noted as columns: a start and a block event a run."""
    out: list[grouping.Event] = []
    for e in evs:
        if isinstance(e, nsys_sweep.Runs):
            for t, line in enumerate(e.starts):
                out += [grouping.Event("start", line),
                        grouping.Event("block", e.heads[t], block=nsys_sweep.block_of(e.table(t)))]
        elif isinstance(e, nsys_sweep.Batched):
            out.append(grouping.Event("block", e.line, block=nsys_sweep.block_of(e)))
        else:
            out.append(e)
    return out


def test_events_keeps_what_is_not_a_run_start_then_its_one_table():
    pre = bytescan.find(_sweep(3).encode(), core.BYTES_PAY_FROM, keep=0, batch_rows=1)
    assert pre is not None
    batch = next(iter(pre.tables.values())).batch
    other = nsys_batch.read(*_spans_of(_sweep(2)))[0]

    def table(line: int, b=batch) -> tuple:
        return line, b, 0, 3, "gpu", "cuda_gpu_kern_sum"

    start = grouping.Event
    evs = _fed([start("start", 1), table(4), start("start", 9), table(12), table(20), start("start", 30, pid=7),
                table(33), table(40), start("break", 50), start("start", 51), table(54), start("start", 60), table(63),
                start("start", 70), table(73, other), start("start", 80), table(83, other)])
    assert [e.kind for e in evs] == ["runs", "batched", "start", "batched", "batched", "break", "runs", "runs"]
    assert (evs[0].starts, evs[6].starts, evs[6].heads, evs[7].starts) == ([1, 9], [51, 60], [54, 63], [70, 80])
    got = nsys_sweep.events(evs)
    assert [e.kind for e in got] == ["profiles", "start", "block", "block", "start", "block", "block", "break",
                                     "profiles", "profiles"]
    assert [(p.line_start, p.line_end) for p in expanded(got[0].profiles)] == [(1, 7)]
    assert got[2].block.line_start == 13 and isinstance(got[3].block, Block)
    assert (got[3].block.line_start, got[3].block.line_end, got[3].block.span.n) == (21, 23, 3)
    assert [(p.line_start, p.line_end) for p in expanded(got[8].profiles)] == [(51, 57), (60, 66)]
    assert [p.sweep.rows for p in expanded(got[9].profiles)] == [other.table, other.table]
    assert nsys_sweep.reports(evs) == ({"cuda_gpu_kern_sum"}, {"gpu"})


def test_runs_whose_last_table_has_another_after_it():
    """The last run of runs followed by another table of its profile: the runs before it profiles made
    at once, that run's start and table events as they are (grouping puts both tables in its profile)."""
    pre = bytescan.find(_sweep(3).encode(), core.BYTES_PAY_FROM, keep=0, batch_rows=1)
    batch = next(iter(pre.tables.values())).batch
    start = grouping.Event
    for n in (1, 3):
        items: list = []
        for k in range(n):
            items += [start("start", 10 * k + 1), (10 * k + 4, batch, 3 * k, 3, "gpu", "cuda_gpu_kern_sum")]
        items.append((10 * n, batch, 0, 2, "api", "cuda_api_sum"))
        got = nsys_sweep.events(_fed(items))
        assert [e.kind for e in got] == ["profiles"] * (n > 1) + ["start", "block", "block"]
        assert got[-3].line == 10 * (n - 1) + 1 and got[-2].block.span.first == 3 * (n - 1)
        assert [p.line_start for p in expanded(grouping.group(got, "nsys"))] == [10 * k + 1 for k in range(n)]
        assert [b.kind for b in expanded(grouping.group(got, "nsys"))[-1].blocks] == ["cuda_gpu_kern_sum",
                                                                                     "cuda_api_sum"]


def _spans_of(text: str) -> tuple[bytes, list]:
    data = text.encode()
    small: list = []
    bytescan._sweep(data, small)
    return data, small


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
        monkeypatch.setattr(nsys_sweep, "events", _one_by_one)
        plain = core.parse_whole(str(path))
    assert len(swept.profiles) == 400
    assert [vars(i) for i in swept.profiles] == [vars(i) for i in plain.profiles]
    assert {k: list(swept.rows.col(k)) for k in swept.rows.cols} == {k: list(plain.rows.col(k)) for k in plain.rows.cols}
    assert (swept.notes, swept.table_notes, swept.unplaced) == (plain.notes, plain.table_notes, plain.unplaced)


class _NoTables:
    """A _bytescan module built before `tables`: bytescan walks the summary tables one by one."""

    def __init__(self, mod) -> None:
        self.rows, self.find = mod.rows, mod.find


def _walks(data: bytes):
    from profconv.parse import native

    scan = native.load("_bytescan")
    got = []
    for mod in (scan, _NoTables(scan)):
        small: list = []
        got.append((bytescan._summaries(data, small, mod, scan.find), small))
    return got


def test_summary_tables_walked_in_c_as_one_by_one():
    """_bytescan.tables (one C walk over a window's summary tables) gives _sweep's spans and small
    tables as the walk one table at a time does, on a sweep cut and damaged at random places."""
    import random

    from profconv.parse import native

    if native.load("_bytescan") is None or not hasattr(native.load("_bytescan"), "tables"):
        pytest.skip("the C accelerator is not built")
    data = _sweep(60).encode()
    rng = random.Random(3)
    odd = [b"\n", b"&", b"\\", "é".encode(), b"\r", b"/", b"<", b" ", b"\t", b"x\n", b"\x01",
           bytescan.SUMMARY + b"x\n", b"\n" + bytescan.SUMMARY + b"Name\n1,2\n"]
    cases = [data, b"", bytescan.SUMMARY, bytescan.SUMMARY + b"\n", bytescan.SUMMARY + b"Name\n1,x\n2,y"]
    for _ in range(300):
        k = rng.randrange(len(data))
        cut = data[:k] + rng.choice(odd) + data[k + rng.randrange(3) :]
        cases.append(cut[: rng.randrange(len(cut) + 1)] if rng.random() < 0.3 else cut)
    header = bytescan.SUMMARY + b"Instances,Name\n"
    big = header + b"".join(b"1.0,%d,3,k</a>_%d\n" % (k, k) for k in range(bytescan.MIN_ROWS + 5))
    cases += [big, b"x\n" + big + b" y\n", big + b"\t", big + b"\n\n" + big, big[:-1]]
    taken = 0
    for data in cases:
        c, py = _walks(data)
        assert c == py
        taken += len(c[1])
    assert taken > 3000
    spans, small = _walks(big + b"\n\n" + big)[0]
    assert [s[:4] for s in spans] == [(0, len(header), len(big), bytescan.MIN_ROWS + 5),
                                      (len(big) + 2, len(big) + 2 + len(header), 2 * len(big) + 2, bytescan.MIN_ROWS + 5)]
    assert spans[0][4] == {ord("<"): bytescan.MIN_ROWS + 5, ord("/"): bytescan.MIN_ROWS + 5} and small == []


def test_tables_refuses_bad_marks():
    from profconv.parse import native

    scan = native.load("_bytescan")
    if scan is None or not hasattr(scan, "tables"):
        pytest.skip("the C accelerator is not built")
    with pytest.raises(ValueError):
        scan.tables(b"x", b"x", b"\n")
    with pytest.raises(ValueError):
        scan.tables(b"x", b"", b"&")
    assert scan.tables(b"", b"x", b"") == b""


def test_a_batched_tables_event_holds_its_fields():
    """nsys._batched (the CSV reader's way to a batched table's block): its fields where Batched keeps them."""
    doc = _doc(_sweep(2))
    i, t = sorted(doc.pre.tables.items())[1]
    _, cols, fields = nsys._csv_header(doc.lines[i])
    ev = nsys._batched(doc.lines, i, "cuda_gpu_kern_sum", t, cols, fields)
    assert (ev.kind, ev.line, ev.pid, ev.command, ev.device, ev.block) == ("batched", i + 1, None, None, None, None)
    assert (ev.batch, ev.first, ev.n, ev.section, ev.report) == (t.batch, t.first, t.rows, "gpu", "cuda_gpu_kern_sum")
    blk = nsys._batched_block(doc.lines, i, "cuda_gpu_kern_sum", t, cols, fields)
    assert (blk.line_start, blk.line_end, blk.kind, blk.span.first, blk.span.n) == (i + 2, i + 1 + t.rows,
                                                                                    "cuda_gpu_kern_sum", t.first, t.rows)


def test_status_and_dash_lines_found_by_substrings_as_by_their_patterns():
    """nsys._generating and _dash_line (substring searches: a sweep's every run has a 'Generating'
    line) against _GENERATING and _DASHES on lines made of their pieces."""
    import random

    pieces = ["Generating ", "Generating '", "Generating SQLite file", "Saving report to file", "Running ", "nsys",
              ".qdstrm'", ".qdstrm", "'", "-", "--", "---", " ", "\t", "x", "\n", "\r", "run0.nsys-rep", "Running"]
    rng = random.Random(7)
    lines = ["", "Generating '/tmp/a.qdstrm'", "Running [/opt/nsys]", "Generating SQLite file run0.sqlite from run0.nsys-rep",
             "----  ---", " --- ", "--", "- - -", "---x"]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 7))) for _ in range(5000)]
    for line in lines:
        assert nsys._generating(line) == (nsys._GENERATING.search(line) is not None), line
        assert nsys._dash_line(line) == (nsys._DASHES.search(line) is not None and not line.replace("-", "").strip())


def test_status_reports_found_by_substrings_as_by_their_pattern():
    """nsys._status_report (a sweep's every run has a 'Processing [' line) against _EXECUTING's search
    on lines made of its pieces: where it names a report, the pattern's; where it does not, the line
    is not one it answers for or the pattern finds none."""
    import random

    pieces = ["Processing [", "] with [", "/opt/nsys/reports/", "/", "cuda_gpu_kern_sum", "osrt_sum", ".py]", ".py",
              "]", "[", "...", " ", "x", "Executing '", "' stats report", "\r", "é", "run0.sqlite", "a.b"]
    rng = random.Random(11)
    lines = ["Processing [run5.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]...",
             "Processing [a] with [/r/x.py] with [/r/y.py]", "Processing [a] with [/r/x.py] with [b]",
             "Processing [] with [/x.py]", "Processing [a] with [/.py]", "Processing [a] with [/a/b/c.py]/d.py]"]
    lines += ["Processing [" + "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9))) for _ in range(3000)]
    lines += ["Processing [" + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 3))) + "] with ["
              + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 3))) + "/" + rng.choice(pieces[4:6])
              + ".py]" + "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 4))) for _ in range(3000)]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9))) for _ in range(2000)]
    named = 0
    for line in lines:
        got, m = nsys._status_report(line), nsys._EXECUTING.search(line)
        if got is not None:
            named += 1
            assert m is not None and (m.group(1) or m.group(2) or m.group(3)) == got, line
        elif line.startswith("Processing [") and "Executing '" not in line and "\r" not in line:
            assert m is None, line
    assert named > 500


def _any_made(prof) -> list[tuple]:
    return [(b.section, b.kind, b.line_start, b.line_end, b.notes, (b.span.first, b.span.n) if b.span is not None
             else len(b.table) if b.table is not None else [repr(r) for r in b.rows]) for b in prof.blocks]


def _sweep_lines(seed: int) -> str:
    """A sweep whose runs are now and then not of the shape nsys._runs_at reads at once (another report,
    a status line it leaves to _report_line, a line of program output, a table the batch does not take)."""
    import random

    from tests.test_parse_nsys_stream import _run

    rng = random.Random(seed)
    odd = [lambda t: t.replace("cuda_gpu_kern_sum", "cuda_gpu_trace"), lambda t: t.replace("cuda_gpu_kern_sum", "osrt_sum"),
           lambda t: t.replace("cuda_gpu_kern_sum", "um_sum"), lambda t: t.replace("Processing [", "Executing 'x' Processing ["),
           lambda t: t.replace(".py]...\n\n", ".py]...\nprogram output\n\n"), lambda t: t.replace("\n\nTime", "\nTime"),
           lambda t: t.replace("Generating SQLite", "SKIPPED: Generating SQLite"), lambda t: "x,y\n" + t,
           lambda t: t.replace("Generating SQLite file", "Generating SQLite file Processing [a] with [/r/x.py]"),
           lambda t: t.replace("Processing [", "  Processing ["), lambda t: t + "\n",
           lambda t: t.replace(",3", ",\"3").replace(",4", ",4\"", 1), lambda t: t.replace("_sum.py", "_sum.py\r"),
           lambda t: t.replace("Generating SQLite file", "Generating '/tmp/a.qdstrm'")]
    return "".join(rng.choice(odd)(_run(k, rng)) if rng.random() < 0.3 else _run(k, rng) for k in range(80))


@pytest.mark.parametrize("seed", range(12))
def test_runs_read_at_once_are_what_the_readers_note_line_by_line(seed, monkeypatch):
    """nsys._runs_at's runs read at once: the same result as the readers' line-by-line way, on sweeps
    whose runs are now and then of another shape."""
    text = _sweep_lines(seed)

    def result(at_once: bool):
        if not at_once:
            monkeypatch.setattr(nsys, "_runs_at", lambda *a: None)
        try:
            doc = _doc(text)
        except AssertionError:
            return None
        try:
            with paused():
                r = nsys.parse(doc)
        except bytescan.Reparse:
            return "reparse"
        finally:
            monkeypatch.undo()
        ps = expanded(r.profiles)
        return (sorted(r.claimed), r.unplaced, r.notes, r.bulk, r.rows_read, r.resume,
                [(p.line_start, p.line_end, p.tool, p.pid, p.command, _any_made(p)) for p in ps],
                all(t.used for t in doc.pre.tables.values()))

    assert result(True) == result(False)
