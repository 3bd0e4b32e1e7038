"""A long log of nsys runs read part by part (profconv.parse.stream, nsys's STREAM options): the parts,
one after the other, are the whole parse; a window's summary tables are read from its bytes."""

from __future__ import annotations

import gc
import glob
import random
import weakref
from array import array
from pathlib import Path

import pytest

from profconv.nogc import paused
from profconv.parse import parse
from profconv.parse import stream as stream_mod
from profconv.parse.core import parse_whole
from profconv.parse.dialect import registry
from profconv.parse.dialects import nsys_csv_sweep
from profconv.parse.model import Document
from profconv.parse.table import Rows
from profconv.parse.text import decode, normalize
from tests.conftest import run_cli
from tests.stream_check import check_parts

DATA = Path(__file__).parent / "data"
HEADER = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
NAMES = ["void conv_forward_kernel<float, 16>(float const *, float*, int)", "[CUDA memcpy HtoD]",
         "sgemm_sm35_ldg_tn_128x8x256x16x32", "void im2col<float>(int, float const *)"]


def _nsys_logs() -> list[Path]:
    """The test logs nsys's detect takes that hold a run's 'Generating ' line."""
    nsys = registry()["nsys"]
    found = []
    for p in sorted(glob.glob(str(DATA / "**" / "*.log"), recursive=True)):
        data = Path(p).read_bytes()
        if b"Generating " not in data or b"\x00" in data[:4096]:
            continue
        if nsys.detect(Document(lines=[], label=p, text=normalize(decode(data)))):
            found.append(Path(p))
    return found


def _run(k: int, rng: random.Random, rows: int = 6) -> str:
    """One `nsys stats --format csv --report cuda_gpu_kern_sum` run, as a sweep's log holds it."""
    got = []
    for j in range(rows):
        calls, avg = rng.randint(1, 500), rng.randint(1000, 90000) / 10
        got.append((calls * avg, calls, avg, f"{NAMES[j % len(NAMES)]}_{j}"))
    total = sum(r[0] for r in got)
    body = "".join(f'{100 * t / total:.1f},{round(t)},{c},{a:.1f},{a:.1f},{round(a * 0.9)},{round(a * 1.1)},'
                   f'{a / 10:.1f},"{n}"\n' for t, c, a, n in sorted(got, reverse=True))
    return (f"Generating SQLite file run{k}.sqlite from run{k}.nsys-rep\n"
            f"Processing [run{k}.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]...\n\n{HEADER}\n{body}\n")


def _sweep(runs: int, seed: int = 5) -> str:
    rng = random.Random(seed)
    return "".join(_run(k, rng) for k in range(runs))


def test_parts_of_real_nsys_logs_repeated_and_mixed_are_the_whole_parse(tmp_path, small_windows):
    """Every nsys test log with a 'Generating ' line three times over, and next to another one:
    cut wherever a run's start allows it, the parts are what the whole file gives."""
    logs = _nsys_logs()
    assert len(logs) >= 12
    split = 0
    for k, f in enumerate(logs):
        other = logs[(5 * k + 3) % len(logs)].read_bytes()
        for name, data in (("r3", f.read_bytes() * 3), ("mix", f.read_bytes() + other + f.read_bytes())):
            path = tmp_path / f"{name}-{k}.log"
            path.write_bytes(data)
            split += check_parts(path, small_windows) > 1
    assert split >= 8


def test_a_sweep_is_read_in_parts_its_tables_from_the_bytes(tmp_path, small_windows):
    path = tmp_path / "sweep.log"
    path.write_text(_sweep(60))
    assert stream_mod.which(str(path), None) is registry()["nsys"]
    assert check_parts(path, 2000) > 10
    with paused():
        parts = list(stream_mod.Stream(str(path), window=2000))
    # the rows of every part read as columns from the window's bytes (nsys_batch), not row by row
    assert all(type(p.rows.cols["total_ns"]) is array for p in parts)
    ps = parse(str(path))
    assert (len(ps.profiles), ps.rows.n) == (60, 360)
    first = ps.profile(1).rows
    assert (first.col("name")[0], first.col("calls")[0], first.col("line_start")[0]) == (
        "sgemm_sm35_ldg_tn_128x8x256x16x32_2", 408, 5)
    assert ps.profiles[-1].line_start == 59 * 11 + 1


def test_a_sweep_with_damaged_rows_and_odd_tables_in_parts(tmp_path, small_windows):
    """A row whose total is not calls x average and a table of another report among the runs:
    read by the row reader where they are, the parts still the whole. A line of program output
    inside a table (its note names the line) makes the file be read whole."""
    text = _sweep(30)
    runs = text.split("Generating ")
    lines = runs[4].split("\n")
    cells = lines[4].split(",")
    lines[4] = ",".join([*cells[:2], str(int(cells[2]) + 9), *cells[3:]])  # total != calls x avg: unplaced, a note
    runs[4] = "\n".join(lines)
    runs[12] = runs[12].replace("cuda_gpu_kern_sum", "cuda_api_sum")
    path = tmp_path / "odd.log"
    path.write_text("Generating ".join(runs))
    assert check_parts(path, 1500) > 5
    ps = parse(str(path))
    assert len(ps.profiles) == 30 and ps.notes[0].startswith("line(s) 38: total is not calls x average")
    assert ps.profile(12).rows.col("section")[0] == "api"
    runs[9] = runs[9].replace('_1"\n', '_1"\nprogram output line\n', 1)
    path.write_text("Generating ".join(runs))
    assert check_parts(path, 1500) == 0
    assert "line(s) 94 inside the table are not rows of it" in " ".join(parse(str(path)).notes)


def test_a_table_after_its_header_printed_twice_is_of_its_own_rows_report(tmp_path, small_windows):
    """A header printed twice: the first (no rows) takes the report its status line named, so the
    table after the second is told by its columns and its own names (ioctl, poll: os-runtime), not by
    the next runs' names read with it from the bytes (cudaMalloc, cudaMemcpy ...: api, which made it
    a profile of its own in a stream's window and not in the whole file)."""
    api = "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"

    def run(k: int, twice: bool) -> str:
        report = f"Processing [run{k}.sqlite] with [/opt/nsys/reports/{{}}.py]...\n\n{api}\n"
        return (f"Generating SQLite file run{k}.sqlite from run{k}.nsys-rep\n" + report.format("cuda_api_sum")
                + "50.0,1000000,10,100000.0,100000.0,90000,110000,1000.0,cudaMalloc_0\n"
                  "30.0,600000,6,100000.0,100000.0,90000,110000,1000.0,cudaMemcpy_1\n"
                  "20.0,400000,4,100000.0,100000.0,90000,110000,1000.0,cudaLaunchKernel_2\n\n"
                + report.format("osrt_sum") + (api + "\n" if twice else "")
                + "68.1,1306892513,1523,858104.1,858104.1,772294,943914,85810.4,ioctl_0\n"
                  "31.9,613221352,696,881065.2,881065.2,792959,969172,88106.5,poll_1\n\n")

    path = tmp_path / "twice.log"
    path.write_text("".join(run(k, k == 2) for k in range(60)))
    assert check_parts(path, 12000) > 2  # windows holding the 50 names after that table
    ps = parse(str(path))
    assert len(ps.profiles) == 60
    third = ps.profile(3).rows
    assert list(zip(third.col("section"), third.col("name"), third.col("line_start")))[2:] == [
        ("api", "cudaLaunchKernel_2", 35), ("os-runtime", "ioctl_0", 41), ("os-runtime", "poll_1", 42)]


def test_a_sweep_holding_an_nvprof_header_is_read_whole(tmp_path, small_windows):
    """nvprof's '%' markers are left to its detect on each window: a bare nvprof summary header in
    the middle of the sweep makes the file be read whole, as its whole parse reads it."""
    runs = _sweep(30).split("Generating ")
    runs[15] += "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
    path = tmp_path / "mixed.log"
    path.write_text("Generating ".join(runs))
    with pytest.raises(stream_mod.NotStreamable), paused():
        list(stream_mod.Stream(str(path), window=1500))
    assert not stream_mod._streamable_file(str(path), None) or stream_mod.STREAM_FROM > path.stat().st_size


def test_which_dialect_streams_a_file(tmp_path):
    sweep = tmp_path / "sweep.log"
    sweep.write_text(_sweep(3))
    one = tmp_path / "one.log"
    one.write_text(_sweep(1))
    nvprof = tmp_path / "nvprof.log"
    nvprof.write_text("==1== NVPROF is profiling process 1, command: ./a\n" * 2)
    got = [stream_mod.which(str(p), f) for p, f in ((sweep, None), (one, None), (nvprof, None), (sweep, "nvprof"),
                                                    (sweep, "ncu"), (sweep, "nsys"))]
    assert [d.name if d else None for d in got] == ["nsys", None, "nvprof", None, None, "nsys"]
    assert stream_mod.starts_twice(str(tmp_path / "missing.log"), None)  # the stream says why


def test_other_markers_leave_nvprofs_percent_to_its_detect():
    assert "%" not in stream_mod.other_markers("nsys") and "(%)" not in stream_mod.other_markers("nsys")
    assert {"NVPROF", "Time(%),Time,Calls,", "==PROF=="} <= set(stream_mod.other_markers("nsys"))
    assert "%" in registry()["nvprof"].markers and "Total Time" in stream_mod.other_markers("nvprof")
    header = "Time(%)  Time  Calls  Avg  Min  Max  Name"
    assert stream_mod._other_dialect(f"x\n{header}\nx", "nsys")
    assert not stream_mod._other_dialect(f"{HEADER}\n1.0,2,3,4,5,6,7,8,k\n", "nsys")


def test_overlap_keeps_three_lines_where_a_detect_looks_at_them():
    assert stream_mod._overlap(b"a" * 100, False) == b"a" * 64
    assert stream_mod._overlap(b"l1\nl2\nl3\nl4\nl5", True) == b"l3\nl4\nl5"
    assert stream_mod._overlap(b"l1\nl2", True) == b"l1\nl2"
    assert stream_mod._overlap(b"x" * (stream_mod.WINDOW + 1), True) is None


@pytest.mark.parametrize("out", [["--json"], ["--csv"], []])
def test_cli_output_of_a_sweep_read_in_parts_is_the_whole_files(tmp_path, monkeypatch, out):
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    path = tmp_path / "sweep.log"
    path.write_text(_sweep(200))
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 8192)
    with monkeypatch.context() as m:  # the windows' parts (the fast path reads this sweep as one part)
        m.setattr(nsys_csv_sweep, "_scanner", lambda: None)
        assert len(list(stream_mod.Stream(str(path)))) > 3
    streamed = _cli_streamed_as_whole(path, out, monkeypatch)
    assert streamed[0].count("conv_forward_kernel") >= 200


def _cli_streamed_as_whole(path: Path, out: list[str], monkeypatch) -> tuple[str, str]:
    """`profconv parse path OUT` streamed (from 1000 bytes) and read whole: the same stdout and stderr (given
    back), exit 0."""
    got = {}
    for stream_from in (1000, 1 << 40):
        monkeypatch.setattr(stream_mod, "STREAM_FROM", stream_from)
        r = run_cli("parse", str(path), *out)
        assert r.returncode == 0, r.stderr
        got[stream_from] = (r.stdout, r.stderr)
    assert got[1000] == got[1 << 40]
    return got[1000]


def test_around_keeps_each_marked_line_with_the_two_after_it():
    text = "a\nTime (%) x\nb\nc\nd\ne\n50% f\ng\n"
    assert stream_mod._around(text, ("(%)", "%")) == "Time (%) x\nb\nc\n50% f\ng\n"
    assert stream_mod._around("x%\ny%\nz\nw\nv\n", ("%",)) == "x%\ny%\nz\nw\n"
    assert stream_mod._around("no marks\n", ("%",)) == ""
    assert stream_mod._around("T%\n\n\nx\nT%\n\n\ny\nT%\nx", ("(%)", "%")) == "T%\n\n\nT%\nx\n"  # each run once
    header = "Time(%)  Time  Calls  Avg  Min  Max  Name"
    rows = f"{HEADER}\n1.0,2,3,4,5,6,7,8,k\n" * 50
    assert stream_mod._other_dialect(f"{rows}x\n{header}\n{rows}", "nsys", head=False)
    assert not stream_mod._other_dialect(rows, "nsys", head=False)


@pytest.mark.parametrize("out", [["--json"], [], ["--all", "--threshold", "0.5"]])
def test_cli_output_of_a_sweep_that_needs_the_whole_reader_midway(tmp_path, monkeypatch, out):
    """Program output inside a late run's table (its note names a line) and a report profconv does
    not read: found once parts were printed. The table printed so far is the whole parse's first
    profiles; the rest of the whole parse follows, then its warnings: the same bytes as read whole."""
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    runs = _sweep(200).split("Generating ")
    runs[150] = runs[150].replace('_1"\n', '_1"\nprogram output\n', 1)
    runs[170] = runs[170].replace("cuda_gpu_kern_sum", "cuda_kern_exec_sum")
    path = tmp_path / "late.log"
    path.write_text("Generating ".join(runs))
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 8192)
    got = {}
    for stream_from in (1000, 1 << 40):
        monkeypatch.setattr(stream_mod, "STREAM_FROM", stream_from)
        assert stream_mod._streamable_file(str(path), None) == (stream_from == 1000)
        r = run_cli("parse", str(path), *out)
        assert r.returncode == 0, r.stderr
        got[stream_from] = r.stdout
    assert got[1000] == got[1 << 40]
    assert "line(s) 1646 inside the table are not rows of it" in got[1000]
    assert "cuda_kern_exec_sum" in got[1000]


def test_rest_is_the_whole_parse_after_the_parts_given(tmp_path):
    path = tmp_path / "s.log"
    path.write_text(_sweep(5))
    ps = parse(str(path))
    given = [(stream_mod.seen(ps.profiles[:2]), [(7, "x")], ["note a"]), (stream_mod.seen(ps.profiles[2:3]), [], [])]
    ps.unplaced, ps.notes = [(7, "x"), (40, "y")], ["note a", "note b", "note a"]
    got = stream_mod.rest(ps, given)
    assert [i.profile for i in got.profiles] == [4, 5] and got.rows.n == 12
    assert set(got.rows.col("profile")) == {4, 5}
    assert (got.unplaced, got.notes) == ([(40, "y")], ["note b", "note a"])
    assert stream_mod.rest(ps, []) is ps
    with pytest.raises(stream_mod.NotStreamable):
        stream_mod.rest(ps, [(stream_mod.seen(ps.profiles[1:2]), [], [])])
    with pytest.raises(stream_mod.NotStreamable):  # the same profiles, cut into parts otherwise
        stream_mod.rest(ps, [(stream_mod.seen(ps.profiles[:1]), [], []), (stream_mod.seen(ps.profiles[2:3]), [], [])])
    ps.profiles[1].op_times_s = [0.5]  # a field of a profile given that the whole parse does not hold
    with pytest.raises(stream_mod.NotStreamable):
        stream_mod.rest(ps, given)


def test_parts_of_a_sweep_that_needs_the_whole_reader_midway(tmp_path, monkeypatch):
    """The public parts: those given, then the rest of the whole parse (no error midway)."""
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 8192)
    runs = _sweep(200).split("Generating ")
    runs[150] = runs[150].replace('_1"\n', '_1"\nprogram output\n', 1)
    path = tmp_path / "late.log"
    path.write_text("Generating ".join(runs))
    with paused():
        got = list(stream_mod.parts(str(path)))
        whole = parse_whole(str(path))
    assert len(got) > 3
    assert [vars(i) for p in got for i in p.profiles] == [vars(i) for i in whole.profiles]
    assert Rows.concat([p.rows for p in got]).col("total_ns") == whole.rows.col("total_ns")
    assert sorted(n for p in got for n in p.notes) == sorted(whole.notes)
    assert [u for p in got for u in p.unplaced] == whole.unplaced == []
    assert any("line(s) 1646 inside the table" in n for n in got[-1].notes)


def test_parts_hold_no_profile_of_the_parts_given(tmp_path, monkeypatch):
    """What parts() checks a midway rest against is a count and a hash a part (stream.seen), not
    the ProfileInfo objects given: those (~370 bytes each) took the terminal table's peak of a 20 MB
    nvprof --csv sweep (51,814 profiles) from 40 to 58 MiB."""
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 4096)
    monkeypatch.setattr(nsys_csv_sweep, "_scanner", lambda: None)  # the windows' parts (not the fast path's one)
    path = tmp_path / "s.log"
    path.write_text(_sweep(120))
    refs: list[weakref.ref] = []
    live, sizes = [], []
    for part in stream_mod.parts(str(path)):
        refs.extend(weakref.ref(i) for i in part.profiles)
        sizes.append(len(part.profiles))
        del part
        gc.collect()
        live.append(sum(r() is not None for r in refs))  # the part last given, held until the next
    assert len(sizes) > 10 and sum(sizes) == 120
    assert live == sizes
    assert stream_mod.seen([]) == (0, 0)
    ps = parse(str(path))
    assert stream_mod.seen(ps.profiles[:3])[0] == 3
    assert stream_mod.seen(ps.profiles[:3]) == stream_mod.seen(parse_whole(str(path)).profiles[:3])
    assert stream_mod.seen(ps.profiles[:3]) != stream_mod.seen(ps.profiles[1:4])


def test_concat_keeps_arrays_of_one_type_as_one():
    a = Rows({"calls": array("q", [1, 2]), "line_start": array("q", [3, 4]), "name": ["x", "y"]}, 2)
    b = Rows({"calls": array("q", [5]), "line_start": [6], "name": ["z"]}, 1)
    got = Rows.concat([a, b])
    assert type(got.cols["calls"]) is array and got.cols["calls"].tolist() == [1, 2, 5]
    assert got.cols["line_start"] == [3, 4, 6] and got.cols["name"] == ["x", "y", "z"]
    c = Rows({"calls": array("l", [7])}, 1)
    assert list(Rows.concat([a, c]).col("calls")) == [1, 2, 7]


def test_lines_around_marks_found_at_once_as_line_by_line():
    """stream._around_at_once (NumPy over a long ASCII window's bytes) against _around's walk (a short
    text's) on texts made of marks, newlines and words."""
    rng = random.Random(3)
    pieces = ["%", "(%)", "\n", "\n\n", "x", "abc", " ", "Time (%),", "\n\n\n\n"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60)))
        for marks in (("(%)", "%"), ("%",), ("(%)",), ("ab", "c\n")):
            short = tuple(m for m in marks if not any(o != m and o in m for o in marks))
            assert stream_mod._around_at_once(text, short) == stream_mod._around(text, marks), (text, marks)


@pytest.mark.parametrize("seed", range(6))
def test_one_header_run_around_marks_as_the_walk_finds_it(seed):
    """stream._one_run (a sweep window's one header line with its two blank rows, by counts) against
    _around's walk on window-like texts: runs of a header and 0-4 blank rows, odd lines now and then
    (another '%' line, the header glued or longer, a header right after a run), cut anywhere."""
    rng = random.Random(seed)
    head = "Time (%),Total Time (ns),Name"
    odd = ["x%\n", "%", head, "Time (%)\n", head + "\n", "\n", "Generating\n", head + "x\n", "(%)\n"]
    hits = 0
    for _ in range(4000):
        parts = []
        for _ in range(rng.randrange(0, 12)):
            parts.append(rng.choice(["Generating x\nProcessing [x]\n\n", "", "\n"]) + head + "\n"
                         + "\n" * rng.choice([0, 1, 2, 2, 2, 3, 4]))
            if rng.random() < 0.1:
                parts.append(rng.choice(odd))
        text = "".join(parts)
        if rng.random() < 0.2 and text:
            text = text[: rng.randrange(len(text))]
        walk = stream_mod._around_walk(text, ("%",))
        got = stream_mod._one_run(text, "%")
        hits += got is not None
        assert got is None or got == walk, text
        assert stream_mod._around(text, ("(%)", "%")) == walk, text
    assert hits > 200


def test_a_windows_text_kept_where_its_rows_read_are_blank_in_it_already(tmp_path, monkeypatch, small_windows):
    """stream._blank_already: where it says so, the window's text is what core.blanked makes of its
    lines; the parts are the whole parse (sweeps with odd runs, nsys logs repeated)."""
    from profconv.parse.core import blanked
    from tests.test_parse_nsys_sweep import _sweep_lines

    seen = [0, 0]
    orig = stream_mod._blank_already

    def spy(doc, r):
        got = orig(doc, r)
        seen[got] += 1
        if got:
            assert blanked(doc, "\n" if doc.text.endswith("\n") else "") == doc.text
        return got

    monkeypatch.setattr(stream_mod, "_blank_already", spy)
    texts = [_sweep_lines(seed) for seed in range(4)] + [f.read_text(errors="replace") * 3 for f in _nsys_logs()[:6]]
    for k, text in enumerate(texts):
        path = tmp_path / f"s{k}.log"
        path.write_text(text)
        check_parts(path, 4000)
    assert seen[1] > 10 and seen[0] > 0


MEM_HEADER = HEADER.replace("Instances", "Count").replace("Name", "Operation")
UM_TABLES = (
    ("um_sum", "Virtual Address,HtoD Migration size (MB),DtoH Migration size (MB),CPU Page Faults,GPU Page Faults,"
     "Migration Throughput (MBps)", "0x7f49c7b59b,4.062,2.099,33,5,811.592450\n0x7fff5a52f1,4.670,5.832,89,43,1451.3\n"),
    ("um_total_sum", "Total HtoD Migration Size (MB),Total DtoH Migration Size (MB),Total CPU Page Faults,"
     "Total GPU PageFaults,Minimum Virtual Address,Maximum Virtual Address", "32.030,83.103,725,234,0x7f00,0x7fff\n"),
    ("um_cpu_page_faults_sum", "CPU Page Faults,CPU Instruction Address", "36,0x3cc75f3e\n43,0xef40af2e\n"),
)


def _um_sweep(runs: int, seed: int = 7) -> str:
    """`nsys stats --format csv` runs of an app on unified memory: each its kernels, its memory operations
    (one table with the kernels' after merging: a note each) and the three unified-memory reports profconv
    does not read (a note each, two fields in the last)."""
    rng = random.Random(seed)
    out = []
    for k in range(runs):
        run = _run(k, rng)
        ops = sorted((rng.randint(1000, 9000) * 10, rng.randint(1, 9)) for _ in range(2))[::-1]
        total = sum(t for t, _ in ops)
        mem = "".join(f"{100 * t / total:.1f},{t},{c},{t / c:.1f},{t / c:.1f},{t // c},{t // c},0.0,[CUDA memcpy {d}]\n"
                      for (t, c), d in zip(ops, ("HtoD", "DtoH")))
        run += f"Processing [run{k}.sqlite] with [/opt/nsys/reports/cuda_gpu_mem_time_sum.py]...\n\n{MEM_HEADER}\n{mem}\n"
        for report, header, rows in UM_TABLES:
            run += f"Processing [run{k}.sqlite] with [/opt/nsys/reports/{report}.py]...\n\n{header}\n{rows}\n"
        out.append(run)
    return "".join(out)


def test_a_unified_memory_sweep_is_read_in_parts_its_unread_reports_noted_as_read_whole(tmp_path, small_windows):
    """The reports profconv does not read (each a note naming its lines) no longer send a long log to the
    whole-file reader (it held the whole log: 10 bytes a byte of a 60 MB sweep, linear): a window says each
    such note of its lines, as the whole read says it, and the whole file's notes keep the whole read's
    order -- every one of those notes, then the merged tables' notes."""
    path = tmp_path / "um.log"
    path.write_text(_um_sweep(12))
    assert check_parts(path, small_windows) == 12
    whole = parse_whole(str(path))
    assert whole.lead == 36
    assert [n.split(" (")[0] for n in whole.notes[:3]] == [
        "lines 20-22: nsys report um_sum", "lines 26-27: nsys report um_total_sum",
        "lines 31-33: nsys report um_cpu_page_faults_sum"]
    assert all(n.startswith(f"profile {k + 1}, gpu table, lines ") for k, n in enumerate(whole.notes[36:]))
    assert len(whole.notes) == 48


@pytest.mark.parametrize("out", [["--json"], ["--csv"], []])
def test_cli_output_of_a_unified_memory_sweep_read_in_parts_is_the_whole_files(tmp_path, monkeypatch, out):
    """The windows' parts (the fast path, which steps over such tables itself, off): their notes in the
    whole read's order through the CLI's reading loops (the spool's and the terminal table's)."""
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    monkeypatch.setattr(nsys_csv_sweep, "_scanner", lambda: None)
    path = tmp_path / "um.log"
    path.write_text(_um_sweep(120))
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 8192)
    assert len(list(stream_mod.Stream(str(path)))) > 3
    said = "".join(_cli_streamed_as_whole(path, out, monkeypatch))
    # (--csv says the first five warnings on stderr, one of them this one: parse_output.say_held_back)
    assert said.count("um_cpu_page_faults_sum (unified memory CPU page faults) is not read") == (1 if out == ["--csv"] else 120)


def test_a_streamed_tables_notes_go_to_a_file_and_come_back_in_order(tmp_path, monkeypatch):
    """The terminal table of a streamed sweep holds its notes of no one table in a NoteList (in a file
    past a batch: a sweep's may be 100,000s) and its first unplaced lines only: its footer is the whole
    read's, every note in order."""
    from profconv.parse import note_list
    from profconv.render import profile_tables

    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    monkeypatch.setattr(nsys_csv_sweep, "_scanner", lambda: None)
    monkeypatch.setattr(note_list, "BATCH", 7)
    monkeypatch.setattr(profile_tables, "NOTES_HELD", 5)
    path = tmp_path / "um.log"
    path.write_text(_um_sweep(120))
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 8192)
    said = _cli_streamed_as_whole(path, [], monkeypatch)[0]
    assert said.count("um_cpu_page_faults_sum (unified memory CPU page faults) is not read") == 120


def test_a_note_of_lines_across_a_windows_cut_sends_the_file_to_the_whole_reader():
    from profconv.parse.model import DialectResult

    r = DialectResult(notes=["lines 3-5: x", "a note of no lines", "lines 9-12: y"], lined_notes={0: (3, 5), 2: (9, 12)})
    assert stream_mod._lined_before(r, 9, 100) == ["lines 103-105: x"]
    assert stream_mod._lined_before(r, 20, 0) == ["lines 3-5: x", "lines 9-12: y"]
    with pytest.raises(stream_mod.NotStreamable):
        stream_mod._lined_before(r, 10, 0)
    parts = [(["a", "t1"], 1), (["b", "c", "t2"], 2)]
    assert stream_mod.whole_notes(parts, ["damaged"]) == ["a", "b", "c", "damaged", "t1", "t2"]


def test_a_damaged_row_among_unread_reports_keeps_the_whole_reads_note_order(tmp_path, small_windows, monkeypatch):
    """A late run's row whose total is not calls x average (reported unplaced, a note of the whole file) in a
    sweep of reports not read: the whole read says every not-read note, then the damaged row's, then the
    merged tables'; the windows' parts (Stream) and parts() give the same order through whole_notes."""
    runs = _um_sweep(12).split("Generating ")
    rows = runs[10].split("\n")
    k = next(i for i, ln in enumerate(rows) if ln[:1].isdigit())
    cells = rows[k].split(",")
    cells[1] = str(int(cells[1]) * 3)
    rows[k] = ",".join(cells)
    runs[10] = "\n".join(rows)
    path = tmp_path / "um.log"
    path.write_text("Generating ".join(runs))
    whole = parse_whole(str(path))
    assert whole.lead == 37 and whole.notes[36].startswith("line(s) ") and len(whole.unplaced) == 1
    assert " is not read: " in whole.notes[35] and whole.notes[37].startswith("profile 1, gpu table")
    assert check_parts(path, small_windows) > 1
    monkeypatch.setattr(nsys_csv_sweep, "_scanner", lambda: None)  # (the windows' parts, not the C pass's)
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    monkeypatch.setitem(stream_mod.options("nsys"), "window", 2048)
    got = list(stream_mod.parts(str(path)))
    assert len(got) > 1
    assert stream_mod.whole_notes([(p.notes, p.lead) for p in got], []) == whole.notes
