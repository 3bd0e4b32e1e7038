"""A sweep of nvprof --csv profiles read in one go (profconv/parse/dialects/nvprof/sweep.py): the same
`--json`/`--csv`/table as the engine's loop over every start, result and header line (the sweep
switched off) and as the pure-Python readers, on generated sweeps with start and result lines the
engine reads otherwise, and how many profiles it makes."""

from __future__ import annotations

import random

import pytest

import profconv
from profconv.parse import grouping
from profconv.parse.dialects.nvprof import csv_batch, markers, sweep
from profconv.parse.model import count
from tests.fastpath_compare import cli_outputs
from tests.nvprof_csv_rows import summary_rows

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the row reader alone is used")

HEADER = csv_batch.HEADER
UNITS = ",%,ms,,ms,ms,ms,"


def _rows(rng: random.Random) -> str:
    return "".join(row + "\n" for row in summary_rows(rng))


def _log(n: int = 30, odd: dict[int, str] | None = None, seed: int = 2, rows: dict[int, str] | None = None) -> str:
    """n profiles; profile k's start and result lines replaced by odd[k] where given ('{k}' in it: k),
    its rows by rows[k]."""
    rng = random.Random(seed)
    parts = []
    for k in range(n):
        head = (odd or {}).get(k, "=={k}== NVPROF is profiling process {k}, command: ./a {k}\n=={k}== Profiling result:\n")
        body = _rows(rng)
        parts.append(head.replace("{k}", str(k + 1)) + f"{HEADER}\n{UNITS}\n" + (rows or {}).get(k, body))
    return "".join(parts)


MODES = (["--json"], ["--csv"], ["--width", "150"])


def _outputs(path, monkeypatch) -> tuple[dict[str, tuple], int]:
    """--json, --csv and the table of `path` by the sweep, the engine's loop and the pure-Python
    readers; how many profiles the sweep made."""
    made: list[int] = []
    real = sweep.sweep

    def counted(reader, cur):
        before = len(reader.ctx.events)
        real(reader, cur)
        made.extend(count(ev.profiles or []) for ev in reader.ctx.events[before:])

    def way(how: str):
        def switch(m):
            m.setattr(csv_batch, "MIN_ROWS", 1)
            m.setattr(markers, "sweep", counted if how == "sweep" else lambda reader, cur: None)
            if how == "pure":
                m.setenv("PROFCONV_NO_ARROW", "1")
        return switch

    got = cli_outputs(path, monkeypatch, {how: way(how) for how in ("sweep", "loop", "pure")}, MODES)
    return got, sum(made) // 3  # three parses


START = "=={k}== NVPROF is profiling process {k}, command: ./a {k}\n"
RESULT = "=={k}== Profiling result:\n"
CASES = {
    # profiles the sweep makes: 29 where it reads the odd lines as the engine does (cleaned of markup, a
    # prefix of '=' or none); one fewer where the odd profile is left to the engine's loop; 27 where the
    # line after the table before it is no place for a table to end (that table is the row reader's)
    "plain": ({}, 29),
    "no result line": ({5: START}, 28),
    "a prefixed start line": ({5: "# " + START + RESULT}, 29),
    "markup in the start line": ({5: START.replace("./a", "**./a**") + RESULT}, 29),
    "an entity in the command": ({5: START.replace("./a", "./a &amp;&amp; x") + RESULT}, 29),
    "a CPU profiling key in the command": ({5: START.replace("./a", "./CPU profiling result") + RESULT}, 28),
    "a quote and comma in the command": ({5: START.replace("./a", './a "x",y') + RESULT}, 28),
    "a CSV header in the command": ({5: START.replace("./a", "Time(%),Time,Calls,") + RESULT}, 28),
    "a start line without a PID prefix": ({5: "NVPROF is profiling process 5, command: ./a\n" + RESULT}, 29),
    "a result line without a PID prefix": ({5: START + "Profiling result:\n"}, 29),
    "equals signs as the prefix": ({5: "======== NVPROF is profiling process 5, command: ./a\n======== Profiling result:\n"}, 29),
    "a PID of many digits": ({5: START.replace("=={k}==", "==" + "9" * 25 + "==") + RESULT}, 29),
    "a result line with blanks": ({5: START + "=={k}==   Profiling result   \n"}, 29),
    "a result line without its colon": ({5: START + "=={k}== Profiling result\n"}, 29),
    "a stray line before the start": ({5: "Done.\n" + START + RESULT}, 27),
    "an application line": ({5: "=={k}== Profiling application: ./a\n" + RESULT}, 28),
    "a CRLF start line": ({5: START.replace("\n", "\r\n") + RESULT}, 29),
    "two starts": ({5: START + START + RESULT}, 28),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_sweep_gives_what_the_loop_gives(case, tmp_path, monkeypatch):
    odd, want = CASES[case]
    path = tmp_path / "sweep.csv.log"
    path.write_text(_log(odd=odd))
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert got["sweep"][0][0] == 0
    assert made == want


@pytest.mark.parametrize("case", ["plain", "no result line", "a PID of many digits", "two starts"])
def test_the_sweep_claims_and_keeps_states_as_the_loop(case, monkeypatch):
    """The lines the sweep claims as runs and the states it keeps as runs (DialectResult.claimed_runs,
    resume_runs) are the lines and states the engine's loop claims and keeps one by one."""
    from profconv.parse.dialects import nvprof
    from profconv.parse.model import Document

    text = _log(n=40, odd=CASES[case][0])
    got = {}
    for how in ("sweep", "loop"):
        with monkeypatch.context() as m:
            m.setattr(csv_batch, "MIN_ROWS", 1)
            if how == "loop":
                m.setattr(markers, "sweep", lambda reader, cur: None)
            got[how] = nvprof.parse(Document(lines=text.split("\n"), label="x", text=text))
    sw, loop = got["sweep"], got["loop"]
    assert sw.claimed_runs and not loop.claimed_runs and sw.resume_runs and not loop.resume_runs
    assert sw.claimed_lines() == loop.claimed
    n = len(text.split("\n"))
    assert [k for k in range(n + 2) if sw.resumes(k)] == sorted(loop.resume)
    assert all(sw.resume_at(k) == loop.resume[k] for k in loop.resume)
    assert sw.resume_at(n + 5) is None and not sw.claims(n + 5)


def test_a_table_the_batch_does_not_give_and_its_start(tmp_path, monkeypatch):
    """A table the row reader reads (a share above 100: no row kept): its start line has no table,
    the next profile's start joins it (grouping: a start opens a profile only after a table)."""
    share = '"GPU activities",100.500000,1.000000,2,0.500000,0.400000,0.600000,"k(int)"\n'
    text = _log(n=12, rows={5: share})
    path = tmp_path / "sweep.log"
    path.write_text(text)
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert made == 10
    ps = profconv.parse(str(path))
    assert len(ps.profiles) == 11


def test_profiles_made_at_once_group_as_their_events():
    """grouping.group: a `profiles` event gives the profiles it holds; its first one joins an open
    profile that has no table yet (as its start event would)."""
    from profconv.parse.model import Block, RawProfile

    def blk(line, section="gpu"):
        return Block(section=section, line_start=line, line_end=line + 1, rows=[object()])  # type: ignore[list-item]

    made = [RawProfile(tool="nvprof", line_start=10, line_end=14, pid=7, command="./b", blocks=[blk(13)]),
            RawProfile(tool="nvprof", line_start=15, line_end=19, pid=8, command="./c", blocks=[blk(18)])]
    events = [grouping.Event("start", 1, pid=3, command="./a"), grouping.Event("block", 3, block=blk(3)),
              grouping.Event("start", 5, pid=None, command="./x"),
              grouping.Event("profiles", 10, pid=8, command="./c", profiles=made),
              grouping.Event("block", 20, block=blk(20, "api"))]
    got = grouping.group(events, "nvprof")
    assert [(p.line_start, p.line_end, p.pid, p.command) for p in got] == [(1, 4, 3, "./a"), (5, 14, 7, "./x"),
                                                                          (15, 21, 8, "./c")]
    assert [len(p.blocks) for p in got] == [1, 1, 2]


def test_a_long_sweep_read_part_by_part(tmp_path, monkeypatch):
    """In windows (profconv.parse.stream): each window's sweep from its first table on; the state a
    window's cut resumes from is the one the loop keeps at each profile start."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 16)
    monkeypatch.setattr(stream, "WINDOW", 1 << 14)
    path = tmp_path / "long.log"
    path.write_text(_log(n=600, odd={100: START + "Done.\n" + RESULT, 301: "# " + START + RESULT}))
    assert sum(1 for _ in stream.parts(str(path))) > 5
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert made > 500


def test_blocks_of_every_table_found_at_once_are_those_found_one_by_one():
    """csv_batch._Group.blocks (every table's runs of one section by NumPy) against the table-by-table
    loop: sections, ranges, lines, printed steps; None where a section comes back."""
    rng = random.Random(9)
    labels = ["GPU activities", "API calls", "OpenACC (excl)", "OpenACC (incl)", "Something"]
    tables, text, at = [], [], 0
    for _ in range(300):
        n = rng.randint(1, 6)
        for _ in range(n):
            t = rng.choice(["0.5", "0.50", "1", "0.000125"])
            text.append(f'"{rng.choice(labels)}",10.0,{t},1,{t},{t},{t},"k"')
        tables.append((at, at + 2 + n))
        at += 2 + n + rng.randint(0, 3)
    group = csv_batch.read("\n".join(text), tables, csv_batch.units_of(",%,s,,us,us,us,"))
    assert group is not None and group.section_codes is not None

    def seen(blocks):
        return None if blocks is None else [(b.section, b.span.first, b.span.n, b.line_start, b.line_end, b.resolution)
                                            for b in blocks]

    got = [seen(group.blocks(k)) for k in range(len(tables))]
    assert got == [seen(group._blocks(k)) for k in range(len(tables))]
    assert None in got and any(g and len(g) > 1 for g in got)


PLAIN_PAIRS = [  # (start line, result line, read by the plain path)
    ("==12== NVPROF is profiling process 12, command: ./a 1", "==12== Profiling result:", True),
    ("==7== NVPROF is profiling process 8, command:  ./run --n=3 ", "==9== Profiling result:", True),
    ("==1== NVPROF is profiling process 1, command: ./a <in.txt", "==1== Profiling result:", False),
    ("==1== NVPROF is profiling process 1, command: ./a & b", "==1== Profiling result:", False),
    ("==1== NVPROF is profiling process 1, command: x \u2013 y", "==1== Profiling result:", False),
    ("==1== NVPROF is profiling process 1, command: ./a\r", "==1== Profiling result:", False),
    ("==1==  NVPROF is profiling process 1, command: ./a", "==1== Profiling result:", False),
    ("  ==1== NVPROF is profiling process 1, command: ./a", "==1== Profiling result:", False),
    ("======== NVPROF is profiling process 1, command: ./a", "======== Profiling result:", False),
    ("NVPROF is profiling process 1, command: ./a", "Profiling result:", False),
    ("==1234567890123456789== NVPROF is profiling process 1, command: ./a", "==1== Profiling result:", False),
    ("==1== NVPROF is profiling process 1234567890123456789, command: ./a", "==1== Profiling result:", False),
    ("==\u0661== NVPROF is profiling process 1, command: ./a", "==1== Profiling result:", False),
    ("==1== NVPROF is profiling process 1, command: ./a \",x", "==1== Profiling result:", None),
    ("==1== NVPROF is profiling process 1, command: CPU profiling result", "==1== Profiling result:", None),
    ("==1== NVPROF is profiling process 1, command: Time(%),Time,Calls,", "==1== Profiling result:", None),
    ("==1== NVPROF is profiling process 1, command: ./a", "==1== Profiling result", False),
    ("==1== NVPROF is profiling process 1, command: ./a", "==1== Profiling result: ", False),
    ("==1== NVPROF is profiling process 1, command: ./a", "==1== Profiling results:", None),
]


@pytest.mark.parametrize("k", range(len(PLAIN_PAIRS)))
def test_plain_start_and_result_lines_read_as_the_engine_reads_them(k):
    """sweep._plain (no cleaning, two fullmatches) gives what sweep._lines (the engine's own reading)
    gives, where it reads a pair at all; None where the engine leaves the pair to its loop."""
    start, result, plain = PLAIN_PAIRS[k]
    got, want = sweep._plain(start, result), sweep._lines(start, result)
    if plain is None:  # the engine's loop reads these lines: neither path takes them
        assert got is None and want is None
    elif plain:
        assert got == want and got is not None
    else:
        assert got is None
    assert sweep._plain(*PLAIN_PAIRS[0][:2]) == ("12", 12, "./a 1", "12")
    assert sweep._plain(*PLAIN_PAIRS[1][:2]) == ("7", 8, "./run --n=3", "9")


def test_plain_pairs_read_in_one_go_as_one_by_one():
    """sweep._plain_many: `_plain` of each pair up to the first that is not plain, as columns (and
    the last result line's PID), by one search where all are (and pair by pair where one is not);
    None where fewer than two are."""
    plain = [(s, r) for s, r, p in PLAIN_PAIRS if p]
    assert sweep._plain_many(*map(list, zip(*plain))) == (["12", "7"], [12, 8], ["./a 1", "./run --n=3"], "9")
    for k, (s, r, _) in enumerate(PLAIN_PAIRS):
        pairs = plain + [(s, r)] + plain
        want = []
        for a, b in pairs:
            got = sweep._plain(a, b)
            if got is None:
                break
            want.append(got)
        columns = ([w[0] for w in want], [w[1] for w in want], [w[2] for w in want], want[-1][3])
        assert sweep._plain_many([a for a, _ in pairs], [b for _, b in pairs]) == columns, k
    assert sweep._plain_many([], []) is None
    assert sweep._plain_many(*map(list, zip(*plain[:1]))) is None
    assert sweep._plain_many([plain[0][0], "x", plain[1][0]], [plain[0][1], "y", plain[1][1]]) is None


def test_plain_pairs_read_in_c_as_in_python():
    """_summarycells.nvprof_starts (the lines before each header read in C) gives what _plain_many
    gives (its PID digits as ints), None where a line is not ASCII; pairs mutated at random too."""
    from profconv.parse import native

    C = native.load("_summarycells")
    if C is None or not hasattr(C, "nvprof_starts"):
        pytest.skip("the C module is not built")
    rng = random.Random(4)
    pairs = [(s, r) for s, r, _ in PLAIN_PAIRS]
    for _ in range(4000):
        picked = [rng.choice(pairs[:2]) if rng.random() < 0.7 else rng.choice(pairs) for _ in range(rng.randint(0, 6))]
        lines, heads = ["x"], []
        for a, b in picked:
            if rng.random() < 0.3:  # a character changed, added or taken out
                i = rng.randrange(len(a) + 1)
                a = a[:i] + rng.choice(['', ' ', '=', '9', '"', '\t', ',', 'x', '\x1f']) + a[i + rng.randint(0, 1):]
            lines += [a, b, "H"]
            heads.append(len(lines) - 1)
        got = C.nvprof_starts(lines, heads)
        want = sweep._plain_many([lines[h - 2] for h in heads], [lines[h - 1] for h in heads])
        if not all(lines[h - 2].isascii() for h in heads):
            continue  # (None, or the pairs before the first line that is not ASCII)
        if want is None:
            assert got is None or len(got[1]) < 2
        else:
            assert got == ([int(x) for x in want[0]], want[1], want[2], int(want[3]))
    assert C.nvprof_starts(["\u0661", "==1== Profiling result:", "H"], [2]) is None


@pytest.mark.parametrize("chunk", [2, 3, 512])
def test_profiles_made_in_one_go_chunk_by_chunk(chunk, tmp_path, monkeypatch):
    """sweep._following takes at most CHUNK profiles at a time; odd lines among them end a chunk
    (that profile is read one by one) and a table the batch does not give ends its chain."""
    monkeypatch.setattr(sweep, "CHUNK", chunk)
    share = '"GPU activities",100.500000,1.000000,2,0.500000,0.400000,0.600000,"k(int)"\n'
    odd = {4: "# " + START + RESULT, 5: START.replace("./a", "**./a**") + RESULT, 11: START + "Done.\n" + RESULT}
    path = tmp_path / "sweep.log"
    path.write_text(_log(n=40, odd=odd, rows={20: share}))
    got, made = _outputs(path, monkeypatch)
    assert got["sweep"] == got["loop"] == got["pure"]
    assert made == 37  # 40, less the first, 11 (its stray line) and 20 (the row reader's): the engine's


def test_tables_that_follow_one_another():
    """csv_batch._Group.following: the end of the chain of tables two lines apart, each taken whole."""
    row = '"GPU activities",10.0,0.5,1,0.5,0.5,0.5,"k"'
    api = row.replace("GPU activities", "API calls")
    # tables at 0, 5 (4 lines on: a chain), 10, 17 (a line more: a break), 22 with a section that comes back, 29
    bodies = {0: [row], 5: [row], 10: [row, row], 17: [row], 22: [row, api, row], 29: [row]}
    heads = sorted(bodies)
    tables = [(h, h + 2 + len(bodies[h])) for h in heads]
    group = csv_batch.read("\n".join(r for h in heads for r in bodies[h]), tables, csv_batch.units_of(UNITS))
    assert group is not None
    assert [group.following(k) for k in range(len(heads))] == [3, 3, 3, 4, 4, 6]
    sweep = group.sweep()
    # table 4's blocks: gpu, api, gpu (a section that comes back: `following` leaves it to the row reader)
    assert (sweep.lo, sweep.first, sweep.size) == ([0, 1, 2, 3, 4, 7, 8], [0, 1, 2, 4, 5, 6, 7, 8],
                                                   [1, 1, 2, 1, 1, 1, 1, 1])
    assert sweep.section == ["gpu", "gpu", "gpu", "gpu", "gpu", "api", "gpu", "gpu"]
    assert sweep.line == [3, 8, 13, 20, 25, 26, 27, 32]
    got = [sweep.made(t) for t in range(3)]
    assert [[(b.section, b.line_start, b.line_end, b.span.first, b.span.n) for b in blocks] for blocks in got] == [
        [("gpu", 3, 3, 0, 1)], [("gpu", 8, 8, 1, 1)], [("gpu", 13, 14, 2, 2)]]
    sweep.shift = 100  # a stream window's lines -> the file's
    assert [(b.line_start, b.line_end) for b in sweep.made(2)] == [(113, 114)]


def test_profiles_of_a_sweep_made_when_asked_for():
    """model.SweptProfile: a sweep's profile holds its blocks as the sweep's columns until something
    asks for them (then as a reader's: `sweep` None); runs_of: the consecutive ones not made."""
    from profconv.parse.model import RawProfile, runs_of, swept

    group, sweep = _small_sweep()
    made = swept(sweep, "nvprof", 1, [7, 12, 19], [11, 17, 22], [4, 5, None], ["./a", None, "./c"])
    assert [(p.tool, p.line_start, p.line_end, p.pid, p.command, p.device, p.sweep, p.index) for p in made] == [
        ("nvprof", 7, 11, 4, "./a", None, sweep, 1), ("nvprof", 12, 17, 5, None, None, sweep, 2),
        ("nvprof", 19, 22, None, "./c", None, sweep, 3)]
    plain = RawProfile(tool="nvprof", line_start=1, line_end=5)
    raw = [plain, *made, plain]
    assert [runs_of(raw, k) for k in range(5)] == [0, 4, 4, 4, 4]
    assert [p.empty() for p in raw] == [True, False, False, False, True]
    assert [(b.section, b.line_start, b.line_end) for b in made[1].blocks] == [("gpu", 16, 17), ("api", 18, 18)]
    assert made[1].sweep is None and made[1].blocks is made[1].blocks  # made once, kept
    assert [runs_of(raw, k) for k in range(5)] == [0, 2, 2, 4, 4]  # the profile made breaks the run
    assert runs_of([made[0], made[2]], 0) == 1  # not consecutive in the sweep
    made[2].blocks = []
    assert made[2].sweep is None and made[2].empty()


def test_a_sweeps_batch_is_let_go_with_its_parse(monkeypatch):
    """A parse's batch of rows (the group its sweep's profiles hold) holds no reference cycle: it is
    freed with the parse, the cyclic collector off (as a parse runs: nogc.paused), not at its end."""
    import gc
    import weakref

    groups: list[weakref.ref] = []
    real = csv_batch._read_group

    def read_group(*args):
        got = real(*args)
        if got is not None:
            groups.append(weakref.ref(got))
        return got

    monkeypatch.setattr(csv_batch, "_read_group", read_group)
    monkeypatch.setattr(csv_batch, "MIN_ROWS", 1)
    was = gc.isenabled()
    gc.disable()
    try:
        ps = profconv.parse_text(_log(n=30))
        assert len(ps.profiles) == 30 and len(ps.rows) == 90
        assert len(groups) == 1
        assert groups[0]() is None
    finally:
        if was:
            gc.enable()


def _small_sweep():
    """A Sweep of four profiles (tables at indices 2, 8, 13, 20: gpu+api, gpu, gpu+api, api)."""
    row = '"GPU activities",10.0,0.5,1,0.5,0.5,0.5,"k"'
    api = row.replace("GPU activities", "API calls")
    bodies = {2: [row, api], 8: [row], 13: [row, row, api], 20: [api]}
    heads = sorted(bodies)
    tables = [(h, h + 2 + len(bodies[h])) for h in heads]
    group = csv_batch.read("\n".join(r for h in heads for r in bodies[h]), tables, csv_batch.units_of(UNITS))
    assert group is not None
    return group, group.sweep()


def test_a_run_of_a_sweep_is_one_entry_that_stands_for_its_profiles():
    """model.SweptRun: profiles t0 .. of a Sweep as one entry, its lines, pids and commands as
    columns; `profiles()` makes them one by one (what model.swept makes); parts, joins, counts."""
    from profconv.parse.model import RawProfile, SweptRun, count, expanded, swept, walk

    _, sw = _small_sweep()
    run = SweptRun(sw, "nvprof", 1, [7, 12, 19], [11, 17, 22], [4, 5, None], ["./a", None, "./c"])
    assert (run.count, run.line_start, run.line_end, run.pid, run.command, run.empty()) == (3, 7, 22, None, "./c", False)
    one_by_one = swept(sw, "nvprof", 1, [7, 12, 19], [11, 17, 22], [4, 5, None], ["./a", None, "./c"])
    fields = "tool line_start line_end pid command device index".split()
    assert [[getattr(p, f) for f in fields] for p in run.profiles()] == [[getattr(p, f) for f in fields]
                                                                          for p in one_by_one]
    with pytest.raises(TypeError):
        run.blocks  # noqa: B018  (a run holds several profiles' blocks: not one profile's)
    head, tail = run.part(0, 1), run.part(1, 3)
    assert (head.t0, head.starts, tail.t0, tail.starts, tail.pids) == (1, [7], 2, [12, 19], [5, None])
    assert tail.follows(head) and not head.follows(tail)
    head.extend(tail)
    assert (head.starts, head.ends, head.commands) == (run.starts, run.ends, run.commands)
    plain = RawProfile(tool="nvprof", line_start=1, line_end=5)
    raw = [plain, run, plain]
    assert count(raw) == 5 and len(expanded(raw)) == 5 and expanded([plain]) == [plain]
    assert [(n, p is run, span) for n, p, span in walk(raw, 10)] == [(10, False, None), (11, True, (sw, 1, 4)),
                                                                    (14, False, None)]
    assert [(n, span[1:] if span else None) for n, _, span in walk([plain, *one_by_one], 1)] == [(1, None), (2, (1, 4))]


def test_a_run_groups_as_its_profiles_do():
    """grouping.group with a `profiles` event holding a SweptRun: its first profile joins an open
    profile without a table (made alone), a table after the run goes with its last profile (made
    alone): the same profiles as from its profiles one by one."""
    from profconv.parse.model import Block, SweptRun, expanded

    _, sw = _small_sweep()

    def run():
        return SweptRun(sw, "nvprof", 0, [1, 7, 12, 19], [6, 11, 17, 22], [3, 4, 5, 6], ["./a", "./b", None, "./c"])

    def events(made):
        return [grouping.Event("start", 0, pid=9, command="./o"),
                grouping.Event("profiles", 1, pid=6, command="./c", profiles=made),
                grouping.Event("block", 30, block=Block(section="gpu", line_start=30, line_end=31, rows=[object()]))]  # type: ignore[list-item]

    def seen(profiles):
        return [(p.line_start, p.line_end, p.pid, p.command, [(b.section, b.line_start) for b in p.blocks])
                for p in profiles]

    got = grouping.group(events([run()]), "nvprof")
    assert [type(p).__name__ for p in got] == ["RawProfile", "SweptRun", "SweptProfile"]
    assert seen(expanded(got)) == seen(grouping.group(events(run().profiles()), "nvprof"))
    assert seen(expanded(got))[0] == (0, 6, 3, "./o", [("gpu", 5), ("api", 6)])  # (its blocks: the sweep's lines)
    alone = grouping.group([grouping.Event("profiles", 1, pid=6, command="./c", profiles=[run()])], "nvprof")
    assert len(alone) == 1 and alone[0].count == 4


def test_a_window_cut_inside_a_run_keeps_its_profiles_before_the_cut():
    """stream._before and _cut with a SweptRun: the profiles that start before the cut (the run
    split there), the cut at the last profile start the reader can resume from."""
    from profconv.parse import stream
    from profconv.parse.model import DialectResult, RawProfile, SweptRun

    _, sw = _small_sweep()
    plain = RawProfile(tool="nvprof", line_start=1, line_end=3)
    run = SweptRun(sw, "nvprof", 0, [4, 9, 14, 19], [8, 13, 18, 23], [1, 2, 3, 4], ["a", "b", "c", "d"])
    kept = stream._before([plain, run], 14)
    assert kept[0] is plain and kept[1].starts == [4, 9] and kept[1].t0 == 0
    assert stream._before([plain, run], 100)[1] is run and stream._before([plain, run], 2) == [plain]
    assert list(stream._starts_backwards([plain, run])) == [19, 14, 9, 4, 1]
    r = DialectResult(profiles=[plain, run], resume={9: (), 14: (), 1: ()})
    data = b"".join(b"line %d\n" % k for k in range(1, 200))
    assert stream._cut(r, data, 199, 199)[0] == 14
    assert stream._cut(DialectResult(profiles=[run], resume={4: ()}), data, 199, 199) == (0, 0)  # not its first


def test_the_core_numbers_a_runs_profiles_in_place():
    """A whole parse and a stream's parts of a sweep (runs among odd profiles that the engine's loop
    reads one by one): every profile numbered in order, their context records in columns."""
    ps = profconv.parse_text(_log(n=40, odd={10: START + "Done.\n" + RESULT, 25: "# " + START + RESULT}))
    assert [p.profile for p in ps.profiles] == list(range(1, 41))
    assert [p.line_start for p in ps.profiles][:3] == [1, 8, 15]
    assert sorted(set(ps.rows.col("profile"))) == list(range(1, 41))


def test_runs_are_made_profiles_where_two_dialects_read_profiles():
    """core._in_line_order: one dialect's profiles as they are (a run one entry); two dialects'
    sorted by start line, each run as its profiles (another dialect's may start between them)."""
    from profconv.parse.core import _in_line_order
    from profconv.parse.model import RawProfile, SweptRun

    _, sw = _small_sweep()
    run = SweptRun(sw, "nvprof", 0, [4, 9, 14, 19], [8, 13, 18, 23], [1, 2, 3, 4], ["a", "b", "c", "d"])
    other = RawProfile(tool="nsys", line_start=10, line_end=12)
    assert _in_line_order([[run], []]) == [run]
    both = _in_line_order([[run], [other]])
    assert [(p.tool, p.line_start) for p in both] == [("nvprof", 4), ("nvprof", 9), ("nsys", 10), ("nvprof", 14),
                                                      ("nvprof", 19)]


@pytest.mark.parametrize("name", ["Running_kernel(float*)", "Statistics::op", "Op Time (float*)", "a$ b"])
def test_a_windows_rows_hold_a_keyword_or_marker_as_a_name(name, tmp_path, monkeypatch):
    """A stream window's check for other dialects and run context: the text as read first (rows not
    blank: nothing to look for in most windows), the rows blank where it holds a marker or keyword,
    as the whole file's check sees them: a kernel named so is neither context nor another dialect."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 14)
    monkeypatch.setattr(stream, "WINDOW", 1 << 12)
    row = f'"GPU activities",100.000000,1.000000,1,1.000000,1.000000,1.000000,"{name}"\n'
    path = tmp_path / "named.log"
    named = range(250, 400, 7)  # (after the file's head: the head is looked at as it is)
    path.write_text(_log(n=400, rows={k: row for k in named}))
    if name.startswith("Statistics"):  # nsys's marker in a table of one row: read whole (as before: main d4a42ea)
        with pytest.raises(stream.NotStreamable, match="another dialect"):
            list(stream.Stream(str(path)))
        return
    parts = list(stream.Stream(str(path)))  # (parts() reads a file with a marker anywhere whole)
    assert len(parts) > 5
    whole = profconv.parse(str(path), strict=True)  # (strict: read whole)
    assert [p.op_times_s for part in parts for p in part.profiles] == [p.op_times_s for p in whole.profiles]
    assert [p.command for part in parts for p in part.profiles] == [p.command for p in whole.profiles]
    assert sum(part.rows.n for part in parts) == whole.rows.n == 400 * 3 - 2 * len(named)
    assert {r for part in parts for r in part.rows.col("name")} >= {name}


def test_a_window_without_a_profile_reads_on(tmp_path, monkeypatch):
    """A window that holds no profile (a run that printed pages of output and no table) has no place
    to cut: the stream reads on, as before the sweep's runs were one entry."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 14)
    monkeypatch.setattr(stream, "WINDOW", 1 << 12)
    def chatter(lines):
        return "==99== NVPROF is profiling process 99, command: ./crash\n" + "step 1 of many: fine\n" * lines

    path = tmp_path / "chatter.log"
    # the first window (16 KiB at least: two starts in it) holds no table, nor does one later
    path.write_text(chatter(300) + chatter(600) + _log(n=100) + chatter(2000) + _log(n=100, seed=3))
    parts = list(stream.Stream(str(path)))
    whole = profconv.parse(str(path), strict=True)  # (strict: read whole)
    assert len(parts) > 5
    assert [(p.line_start, p.command) for part in parts for p in part.profiles] == [
        (p.line_start, p.command) for p in whole.profiles]
    assert sum(part.rows.n for part in parts) == whole.rows.n == 600
    assert stream._cut(stream.DialectResult(), b"a\n", 1, 1) == (0, 0)
