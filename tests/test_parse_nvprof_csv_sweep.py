"""A machine-written nvprof --csv sweep read by one C pass over its bytes
(profconv/parse/dialects/nvprof/csv_sweep.py): the same ProfileSet (library), parts (the stream's) and
`--json`/`--csv`/table (CLI) as the stream's windows read by the existing readers (the pass switched
off: the reference), on generated sweeps with random rows and random mutations (seeds); the pass
taken where a sweep is plain, left where it is not; its C helpers against the code they stand for."""

from __future__ import annotations

import io
import math
import random
from array import array

import pytest

from profconv.parse import native
from profconv.parse.dialects.nvprof import csv_batch, csv_sweep
from profconv.parse.shares import TIMED_SECTIONS
from tests.fastpath_compare import FastPath, mutate_lines, set_cell, write_lines, write_mutated

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the columnar reader is off")
SCAN = native.load("_summarycells")
KAHAN = native.load("_kahan")
pytestmark = pytest.mark.skipif(SCAN is None or not hasattr(SCAN, "nvprof_sweep") or not hasattr(KAHAN, "rank_blocks"),
                                reason="the C accelerators are not built (or older than the sweep's pass)")

HEADER = csv_batch.HEADER
UNITS = {"ms": ",%,ms,,ms,ms,ms,", "us": ",%,us,,us,us,us,", "s": ",%,s,,s,s,s,", "mixed": ",%,ms,,us,us,us,"}
SCALE = {"ms": (1.0, 1.0), "us": (1.0, 1.0), "s": (1.0, 1.0), "mixed": (1.0, 1000.0)}
GPU_NAMES = ["k1(float*)", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "void gemm<float, 128>(float const *, int)",
             "sgemm_sm35_ldg_tn_128x8x256x16x32 [1234]", "kernel_a", "conv_forward_kernel(float*, float const *, int)"]
API_NAMES = ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "cudaFree", "cuInit"]
# a Windows command as nvprof prints it (a path, a drive, blanks)
WINDOWS = ["C:\\Users\\me\\app.exe", "C:\\Program Files\\bench\\b.exe --n 4"]
# Windows commands the pass leaves to the readers, or reads as they do: a LaTeX percent ('\\%'), a line
# that starts with a backslash, a drive's colon not before a separator, a share's path, an odd drive
WINDOWS_ODD = ["D:\\b\\1\\%d", "a\\%", "\\hline", "C:x.exe", "\\\\srv\\share\\a.exe", "C:/x/y.exe", "a\\", "C:\\a  b"]
COMMANDS = ["./a", "./bench --n 4", "python3 run.py", "/usr/bin/app-1.2_x", *WINDOWS]
STRAY = ["==1== Warning: 1 records have invalid timestamps", "", "some output of the app",
         "==1== Profiling application: ./a", '"GPU activities",1,2,3,4,5,6,"x"',
         "======== Error: unified memory profiling failed.", "==PROF== Connected to process 1"]
FAST = FastPath(csv_sweep, "_scanner")  # the C pass, switched off: the readers


def _table(rng: random.Random, section: str, names: list[str], scale: tuple[float, float]) -> list[str]:
    """One section's rows: Time(%) adding up to 100, each total calls x average (as printed)."""
    picked = rng.sample(names, rng.randint(1, min(4, len(names))))
    rows = []
    for name in picked:
        calls = rng.randint(1, 500)
        avg = rng.randint(1, 999999) / 1e6 * scale[1]
        rows.append([calls, avg, avg * calls / scale[1] * scale[0], name])
    total = sum(r[2] for r in rows)
    out = []
    for calls, avg, tot, name in rows:
        label = "GPU activities" if section == "gpu" else "API calls"
        out.append(f'"{label}",{100 * tot / total:.6f},{tot:.6f},{calls},{avg:.6f},{avg * 0.5:.6f},{avg * 1.5:.6f},'
                   f'"{name}"')
    return out


def _sweep(rng: random.Random, n: int, unit: str) -> list[str]:
    """n profiles of the plain shape (each a start, result, header, units line and rows), as lines."""
    lines = []
    for _ in range(n):
        pid = rng.randint(1, 99999)
        lines += [f"=={pid}== NVPROF is profiling process {pid}, command: {rng.choice(COMMANDS)}",
                  f"=={pid}== Profiling result:", HEADER, UNITS[unit]]
        sections = rng.choice([["gpu", "api"], ["gpu"], ["api"], ["api", "gpu"]])
        for s in sections:
            lines += _table(rng, s, GPU_NAMES if s == "gpu" else API_NAMES, SCALE[unit])
    return lines


def _rows_at(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln.startswith('"') and ln != HEADER]


def _set_cell(rng: random.Random, lines: list[str], j: int, value: str) -> None:
    set_cell(rng, lines, _rows_at(lines), j, value)


def _mutate(rng: random.Random, lines: list[str]) -> None:
    """One random change the C pass must leave to the readers (or read as they read it)."""
    k = rng.randrange(len(lines))
    what = rng.randrange(16)
    if mutate_lines(rng, lines, k, what, '",.0123456789 \t*<&|=\r#\u00e9%\\', STRAY):  # what 0 to 4
        return
    if what == 5:  # Time(%) that does not add up
        _set_cell(rng, lines, 1, rng.choice(["1.000000", "99.000000", "150.000000", "0", "100.000000"]))
    elif what == 6:  # a total that is not calls x average
        _set_cell(rng, lines, 2, rng.choice(["0.000001", "9999.5", "1e3", "-1.0", "1,234"]))
    elif what == 7:  # a section that comes back
        rows = _rows_at(lines)
        i = rng.choice(rows)
        lines.insert(i + 1, lines[i].replace("GPU activities", "API calls") if "GPU" in lines[i]
                     else lines[i].replace("API calls", "GPU activities"))
    elif what == 8:  # another label
        rows = _rows_at(lines)
        i = rng.choice(rows)
        lines[i] = '"' + rng.choice(["OpenACC (excl)", "Range", "GPU activity", "API calls "]) + lines[i][lines[i].index('",'):]
    elif what == 9:  # a command of another shape
        starts = [i for i, ln in enumerate(lines) if "command: " in ln]
        i = rng.choice(starts)
        lines[i] = lines[i].split("command: ")[0] + "command: " + rng.choice(
            ["", " ./a", "./a ", "./a  b", "a&b", "x*y", "é", "./a \"q\"", "nsys profile", "a,b",
             *WINDOWS_ODD])
    elif what == 10:  # another units row
        units = [i for i, ln in enumerate(lines) if ln.startswith(",%")]
        lines[rng.choice(units)] = rng.choice(list(UNITS.values()) + [",%,ms,,ms,ms,ms", ",%,ms,,ms,ms,ms,x"])
    elif what == 11:  # a PID of another form
        starts = [i for i, ln in enumerate(lines) if "command: " in ln]
        i = rng.choice(starts)
        lines[i] = rng.choice(["==01== NVPROF is profiling process 1, command: ./a",
                               "==2== NVPROF is profiling process 3, command: ./a",
                               "==7== NVPROF is profiling process 7, command: ./a"])
    elif what == 12:  # a GPU activity named as a CUDA API call
        rows = [i for i in _rows_at(lines) if "GPU" in lines[i]]
        if rows:
            i = rng.choice(rows)
            lines[i] = lines[i][: lines[i].rindex(',"')] + ',"cudaMemcpy"'
    elif what == 13:  # a number of another form
        _set_cell(rng, lines, rng.choice([3, 4, 5, 6]), rng.choice(["1.5", "", "1e5", " 2", "0.0", "12345678901234567890",
                                                                  "1." + "0" * 300]))
    elif what == 14:  # a name of another form
        rows = _rows_at(lines)
        i = rng.choice(rows)
        lines[i] = lines[i][: lines[i].rindex(',"')] + ',"' + rng.choice(
            ["", " k", "k ", "a**b", "<b>k</b>", "a|b", "k\u00e9", "a&amp;b", "x" * 300, "a\\b", "a<i", "a*b<c"]) + '"'
    else:  # Time(%) whose times contradict it
        _set_cell(rng, lines, 1, "0.000100")


small = FAST.small(CHUNK=3000, PART=5000)  # the fixture: a sweep read in several windows, chunks, parts


@pytest.mark.parametrize("seed", range(40))
def test_the_pass_gives_what_the_readers_give(seed, tmp_path, monkeypatch, small):
    rng = random.Random(seed)
    lines = _sweep(rng, rng.randint(40, 120), rng.choice(list(UNITS)))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 8)
    got = csv_sweep.read(str(path), str(path))
    if not mutations:
        assert got is not None, "a plain sweep is read by the pass"
        assert got.rows.cols["table"].listed is None, "the table's line numbers stay an array (colviews.Runs)"
    FAST.assert_library_same(path, monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_the_cli_writes_what_it_writes_from_the_readers(seed, tmp_path, monkeypatch, small):
    rng = random.Random(100 + seed)
    lines = _sweep(rng, 60, rng.choice(list(UNITS)))
    if seed >= 3:  # a change in a later part: the parts given taken back (--json/--csv) or the rest read whole
        at = len(lines) * 3 // 4
        lines.insert(at + rng.randrange(20), "some output of the app")
    FAST.assert_cli_same(write_lines(tmp_path, lines), monkeypatch)


def test_the_read_buffer_is_kept_and_a_shorter_file_read_through_it_to_its_own_end(tmp_path, monkeypatch, small):
    rng = random.Random(11)
    (tmp_path / "long").mkdir()
    (tmp_path / "short").mkdir()
    long = write_lines(tmp_path / "long", _sweep(rng, 90, "ms"))
    FAST.assert_buffer_kept(long, write_lines(tmp_path / "short", _sweep(rng, 7, "us")), monkeypatch)


def test_parts_end_where_a_start_line_follows(tmp_path):
    rng = random.Random(7)
    lines = _sweep(rng, 50, "ms")
    data = ("\n".join(lines) + "\n").encode()
    header, units_row = HEADER.encode(), UNITS["ms"].encode()
    for cut in range(len(data) - 400, len(data)):
        got = SCAN.nvprof_sweep(data[:cut], header, units_row, (6, 6, 6, 6), False)
        assert got is not None
        end = got[0]
        assert data[end:].startswith(b"==") and data[:cut][end:].count(b"\n") >= 1 or end == 0
        whole = SCAN.nvprof_sweep(data[:end], header, units_row, (6, 6, 6, 6), True)
        assert whole is not None and whole[1][0] == got[1][0]
    assert SCAN.nvprof_sweep(data[:-1], header, units_row, (6, 6, 6, 6), True) is None  # no newline at the end


def test_the_clis_spool_reads_a_sweep_in_parts_of_spool_part(tmp_path, monkeypatch, small):
    """--json/--csv's parts hold stream.SPOOL_PART bytes of the sweep (a table's the module's PART), the same
    rows either way."""
    from profconv.parse import emit, stream
    from profconv.render import parse_output

    path = write_lines(tmp_path, _sweep(random.Random(3), 120, "ms"))

    def given(spool_part: int) -> tuple[list[int], str]:
        monkeypatch.setattr(stream, "SPOOL_PART", spool_part)
        sizes: list[int] = []
        sink = parse_output.SpoolSink(False, out=io.StringIO())
        part = sink.part
        monkeypatch.setattr(sink, "part", lambda ps: (sizes.append(len(ps.profiles)), part(ps)))
        emit.emit([str(path)], sink)
        return sizes, sink.out.getvalue()

    own, own_csv = given(0)
    big, big_csv = given(20000)
    assert sum(own) == sum(big) == 120 and own_csv == big_csv and own_csv.startswith("source,profile,")
    assert len(own) > len(big) >= 2 and max(own) < max(big)


@pytest.mark.parametrize("at", range(40))
def test_odd_bytes_anywhere_in_a_row(at):
    """nv_odd's 16 bytes a step find what its byte loop finds, wherever it is (across a step)."""
    for odd, bad in (("**", True), ("*", False), ("<b>", True), ("</tt>", True), ("<", False), ("<x>", False),
                     ("\t", True), ("|", True), ("&", True), ("\\", True), ("\x7f", True), ("*<", False)):
        name = "k" * at + odd + "x"
        row = f'"GPU activities",50.000000,1.000000,1,1.000000,1.000000,1.000000,"{name}"\n'
        got = SCAN.nvprof(row.encode(), (6, 6, 6, 6))
        assert got[-1] == bytes([bad]), (odd, at)


def _rank_input(rng: random.Random, n_groups: int) -> tuple:
    starts, pct, tot = [], [], []
    for _ in range(n_groups):
        starts.append(len(pct))
        size = rng.randint(1, 6)
        kind = rng.randrange(4)
        for _ in range(size):
            t = rng.choice([0.0, 1.0, 2.5, float(rng.randint(1, 10**6)), rng.random() * 1e9])
            tot.append(t)
            pct.append(rng.choice([rng.random() * 100, 50.0, 0.0]) if kind == 0 else t)
    s = sum(tot) or 1.0
    pct = [100 * t / s if i % 3 else p for i, (t, p) in enumerate(zip(tot, pct))]
    return starts, pct, tot


@pytest.mark.parametrize("seed", range(30))
def test_rank_blocks_is_rank_where_each_group_is_one_block(seed):
    rng = random.Random(seed)
    starts, pct, tot = _rank_input(rng, rng.randint(1, 40))
    n = len(pct)
    bounds = [*starts, n]
    profile, section, table = [], [], []
    for g in range(len(starts)):
        size = bounds[g + 1] - bounds[g]
        profile += [g // 2 + 1] * size
        section += [("gpu", "api")[g % 2]] * size
        table += [bounds[g] + 10] * size
    nan = array("d", [math.nan])
    share, cum = nan * n, nan * n
    want = KAHAN.rank(section, profile, table, array("d", pct), array("d", tot), TIMED_SECTIONS, 0.9, share, cum)
    share2, cum2 = nan * n, nan * n
    top = KAHAN.rank_blocks(array("q", starts).tobytes(), array("d", pct), array("d", tot), 0.9, share2, cum2)
    if want[4]:  # a group rank notes: rank_blocks leaves it to the readers
        assert top is None
        return
    assert top == want[2]
    assert share2.tobytes() == share.tobytes() and cum2.tobytes() == cum.tobytes()
    assert set(want[3]) == {"total_ns"}


@pytest.mark.parametrize("seed", range(30))
def test_rank_blocks_of_merged_groups_is_rank_of_their_tables(seed):
    """Groups of one to three source tables (a merged one marked so): rank_blocks gives rank()'s
    shares to the bit, the merged ones ranked by their times whatever their tables' Time(%)."""
    rng = random.Random(seed)
    starts, pct, tot = _rank_input(rng, rng.randint(2, 10))
    n = len(pct)
    bounds = [*starts, n]
    profile, section, table, groups, merged = [], [], [], [], []
    g = 0
    while g < len(starts):
        k = min(rng.choice([1, 1, 2, 3]), len(starts) - g)  # tables g .. g + k - 1: one group
        groups.append(bounds[g])
        merged.append(k > 1)
        for t in range(g, g + k):
            size = bounds[t + 1] - bounds[t]
            profile += [len(groups)] * size
            section += ["gpu"] * size
            table += [bounds[t] + 10] * size
        g += k
    nan = array("d", [math.nan])
    share, cum = nan * n, nan * n
    want = KAHAN.rank(section, profile, table, array("d", pct), array("d", tot), TIMED_SECTIONS, 0.9, share, cum)
    noted = {int(number) for number, _, _ in want[4] if not merged[int(number) - 1]}  # single tables noted
    share2, cum2 = nan * n, nan * n
    top = KAHAN.rank_blocks(array("q", groups).tobytes(), array("d", pct), array("d", tot), 0.9, share2, cum2,
                            bytes(merged))
    if noted or any(not any(t == t for t in tot[a:b]) for a, b in zip(groups, [*groups[1:], n])):
        assert top is None
        return
    assert top == want[2]
    assert share2.tobytes() == share.tobytes() and cum2.tobytes() == cum.tobytes()
    assert set(want[3]) == {"total_ns"}


@pytest.mark.parametrize("seed", range(30))
def test_rank_blocks_of_the_merged_groups_only_into_the_blocks_top(seed):
    """What the nsys sweep does (sweep_rows.ranked_names): every block ranked, then only the merged
    groups again into the first call's in_top list (the single ones RANK_SKIP, kept as ranked): the
    same shares, cumulative shares and in_top to the bit as one call over every group, the list given
    the one given back."""
    rng = random.Random(100 + seed)
    starts, pct, tot = _rank_input(rng, rng.randint(2, 10))
    n = len(pct)
    bounds = [*starts, n]
    groups, merged, g = [], [], 0
    while g < len(starts):
        k = min(rng.choice([1, 1, 2, 3]), len(starts) - g)
        groups.append(bounds[g])
        merged.append(k > 1)
        g += k
    nan = array("d", [math.nan])
    pcts, tots = array("d", pct), array("d", tot)
    share, cum = nan * n, nan * n
    first = KAHAN.rank_blocks(array("q", starts).tobytes(), pcts, tots, 0.9, share, cum)
    share1, cum1 = nan * n, nan * n
    once = KAHAN.rank_blocks(array("q", groups).tobytes(), pcts, tots, 0.9, share1, cum1, bytes(merged))
    if first is None:
        return  # (a block alone noted: the sweep leaves the file to the readers)
    again = bytes(1 if m else KAHAN.RANK_SKIP for m in merged)
    top = KAHAN.rank_blocks(array("q", groups).tobytes(), pcts, tots, 0.9, share, cum, again, first)
    if once is None:  # a merged group with no time at all: noted by both
        assert top is None
        return
    assert top is first and top == once
    assert share.tobytes() == share1.tobytes() and cum.tobytes() == cum1.tobytes()


@pytest.mark.parametrize("seed", range(30))
def test_rank_blocks_only_checks_a_merged_groups_blocks_then_ranks_the_groups(seed):
    """The nsys sweep's first call marks each block of a merged group RANK_CHECK: checked alone (None where
    one alone would be noted, as where every block is ranked) but not ranked, the second call ranking the
    groups: the same shares, cumulative shares and in_top to the bit as ranking every block first."""
    rng = random.Random(300 + seed)
    starts, pct, tot = _rank_input(rng, rng.randint(2, 10))
    n = len(pct)
    bounds = [*starts, n]
    groups, merged, inside, g = [], [], [], 0
    while g < len(starts):
        k = min(rng.choice([1, 1, 2, 3]), len(starts) - g)
        groups.append(bounds[g])
        merged.append(k > 1)
        inside += [k > 1] * k
        g += k
    nan = array("d", [math.nan])
    pcts, tots = array("d", pct), array("d", tot)
    again = bytes(1 if m else KAHAN.RANK_SKIP for m in merged)
    tops = []
    for first_bytes in (bytes(len(starts)), bytes(KAHAN.RANK_CHECK if i else 0 for i in inside)):
        share, cum = nan * n, nan * n
        first = KAHAN.rank_blocks(array("q", starts).tobytes(), pcts, tots, 0.9, share, cum, first_bytes)
        top = None if first is None else KAHAN.rank_blocks(array("q", groups).tobytes(), pcts, tots, 0.9, share, cum,
                                                           again, first)
        tops.append((first is None, top, share.tobytes(), cum.tobytes()))
    assert tops[1][0] == tops[0][0] and tops[1][1] == tops[0][1]
    if tops[0][1] is not None:
        assert tops[1][2:] == tops[0][2:]


@pytest.mark.parametrize("seed", range(20))
def test_rank_blocks_writes_in_top_as_a_byte_a_row_into_a_buffer_given(seed):
    """in_top into a bytearray (the sweeps' colviews.Coded of False, True, None): 0 or 1 where the list
    holds False or True, the byte it held (2: None) where a block is not ranked; the same shares and
    cumulative shares to the bit, the same None where a block would be noted; the buffer given back."""
    rng = random.Random(500 + seed)
    starts, pct, tot = _rank_input(rng, rng.randint(2, 10))
    n = len(pct)
    skip = bytes(KAHAN.RANK_SKIP if rng.random() < 0.2 else 0 for _ in starts)
    nan = array("d", [math.nan])
    pcts, tots = array("d", pct), array("d", tot)
    share, cum, share2, cum2 = nan * n, nan * n, nan * n, nan * n
    listed = KAHAN.rank_blocks(array("q", starts).tobytes(), pcts, tots, 0.9, share, cum, skip)
    codes = bytearray(b"\x02") * n
    got = KAHAN.rank_blocks(array("q", starts).tobytes(), pcts, tots, 0.9, share2, cum2, skip, codes)
    assert (got is None) == (listed is None)
    if listed is None:
        return
    assert got is codes and [[False, True, None][c] for c in codes] == listed
    assert share.tobytes() == share2.tobytes() and cum.tobytes() == cum2.tobytes()


def test_rank_blocks_takes_a_list_or_a_writable_buffer_as_top():
    pct, tot = array("d", [75.0, 25.0]), array("d", [300.0, 100.0])
    args = (array("q", [0]).tobytes(), pct, tot, 0.9, array("d", pct), array("d", tot), b"\x00")
    assert KAHAN.rank_blocks(*args, bytearray(2)) == bytearray(b"\x01\x01")  # (75% and 25%: both before 90%)
    with pytest.raises(TypeError, match="writable buffer"):
        KAHAN.rank_blocks(*args, b"\x02\x02")
    with pytest.raises(ValueError, match="top"):
        KAHAN.rank_blocks(*args, bytearray(3))


def test_rank_blocks_checks_the_top_it_is_given():
    pct, tot = array("d", [75.0, 25.0]), array("d", [300.0, 100.0])
    with pytest.raises(ValueError, match="top"):
        KAHAN.rank_blocks(array("q", [0]).tobytes(), pct, tot, 0.9, array("d", pct), array("d", tot), b"\x00", [None])


def test_rank_blocks_leaves_a_skipped_group_unranked():
    """A group whose `merged` byte is RANK_SKIP (nsys's memory sizes: no times) keeps its share and
    cumulative as given (NaN) and in_top None; the others are ranked as alone."""
    pct, tot = array("d", [75.0, 25.0, math.nan, math.nan, 100.0]), array("d", [300.0, 100.0, math.nan, math.nan, 5.0])
    nan = array("d", [math.nan])
    share, cum = nan * 5, nan * 5
    top = KAHAN.rank_blocks(array("q", [0, 2, 4]).tobytes(), pct, tot, 0.9, share, cum, bytes([0, KAHAN.RANK_SKIP, 0]))
    assert top == [True, True, None, None, True]
    assert list(share)[:2] == [0.75, 0.25] and list(share)[4] == 1.0 and all(x != x for x in list(share)[2:4])
    assert list(cum)[:2] == [0.75, 1.0] and all(x != x for x in list(cum)[2:4])


def test_take_and_runs():
    codes = array("q", [2, 0, 0, 1])
    pool = ["a", "b", "c"]
    got = SCAN.nvprof_take(pool, codes)
    assert got == ["c", "a", "a", "b"] and got[1] is pool[0]
    assert SCAN.nvprof_runs([1, 2, 3], array("q", [2, 0, 3])) == [1, 1, 3, 3, 3]
    with pytest.raises(IndexError):
        SCAN.nvprof_take(pool, array("q", [3]))
    with pytest.raises(ValueError):
        SCAN.nvprof_runs([1], array("q", [1, 2]))


@pytest.mark.parametrize("command", WINDOWS + WINDOWS_ODD)
def test_windows_commands(command, tmp_path, monkeypatch, small):
    """A sweep run on Windows: its commands paths with '\\' and a drive's ':' (read by the pass as the
    readers read them), or what the pass leaves to the readers (a '\\%', a line's first '\\', ...)."""
    lines = [ln.split("command: ")[0] + "command: " + command if "command: " in ln else
             ln.split("application: ")[0] + "application: " + command if "application: " in ln else ln
             for ln in _sweep(random.Random(3), 30, "ms")]
    path = write_lines(tmp_path, lines)
    taken = csv_sweep.read(str(path), str(path)) is not None
    # (the pass's commands: words of [A-Za-z0-9._/-], a '\\' not before a '%', a drive's ':', between single blanks)
    assert taken == (command not in {"D:\\b\\1\\%d", "a\\%", "C:x.exe", "C:\\a  b"}), command
    FAST.assert_library_same(path, monkeypatch)
