"""Summary-only nvprof text read whole as columns by one C pass over its bytes
(profconv/parse/dialects/nvprof/text_columns.py, _rowscan.text_sweep): the same ProfileSet (library),
parts (the stream's) and `--json`/`--csv`/table (CLI) as the stream's windows read by the existing
readers (the pass switched off: the reference), on generated sweeps with random rows and random
mutations (seeds); the pass taken where a sweep is plain, left where it is not."""

from __future__ import annotations

import random

import pytest

from profconv.parse import native
from profconv.parse.dialects.nvprof import text_columns
from tests.fastpath_compare import FastPath, mutate_lines, write_lines, write_mutated

ROWSCAN = native.load("_rowscan")
pytestmark = pytest.mark.skipif(text_columns._modules() is None,
                                reason="the C accelerators are not built (or older than the text pass)")

GPU_NAMES = ["fill(void)", "[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "sgemm_sm35_ldg_tn_128x8x256x16x32 [1234]",
             "kernel_a", "conv_forward_kernel(float, int)", "reduce(int)"]
API_NAMES = ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "cudaFree", "cuInit", "cuDeviceGetAttribute"]
# a Windows command as nvprof prints it (a path, a drive, blanks)
WINDOWS = ["C:\\Users\\me\\app.exe", "C:\\Program Files\\bench\\b.exe --n 4"]
# Windows commands the pass leaves to the readers, or reads as they do: a LaTeX percent ('\\%'), a line
# that starts with a backslash, a drive's colon not before a separator, a share's path, an odd drive
WINDOWS_ODD = ["D:\\b\\1\\%d", "a\\%", "\\hline", "C:x.exe", "\\\\srv\\share\\a.exe", "C:/x/y.exe", "a\\", "C:\\a  b"]
COMMANDS = ["./main", "./bench --n 4", "python3 run.py", "/usr/bin/app-1.2_x", *WINDOWS]
OUTPUT = ["Average running time for Warp Reduction 0.00591232 ms", "done", "result = 42", "n=1024 blocks=8",
          "Checking results... OK"]
HEADER = "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"
STRAY = ["==1== Warning: 1 records have invalid timestamps", "", "some output of the app", "  12.5 ms elapsed",
         "==1== Profiling application: ./a", "Running the kernel", "Accuracy: 0.91", "$ ./main", "Op Time: 1.2 ms",
         "==PROF== Connected to process 1", "Generating '/tmp/x.qdstrm'", "a -- b", "x // y", "trailing ",
         "Time (%),x", "==1== NVPROF is profiling process 1, command: ./a", "    4.5%  of it", "Device \"GPU\"",
         "======== Error: unified memory profiling failed.", "       10.00%  1.0000ms  1  1.0000ms  1.0000ms  "
         "1.0000ms  k"]
FAST = FastPath(text_columns, "_modules")  # the C pass, switched off: the readers


def _time(ns: float) -> str:
    """A time as nvprof prints it: five significant digits and a unit."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            v = ns / scale
            return f"{v:.{max(0, 4 - len(str(int(v))) + 1)}f}{unit}"
    return f"{round(ns)}ns"


def _table(rng: random.Random, section: str) -> list[str]:
    """One section's rows: Time(%) adding up to 100, each total calls x average (as printed)."""
    names = GPU_NAMES if section == "gpu" else API_NAMES
    picked = rng.sample(names, rng.randint(1, min(5, len(names))))
    rows = []
    for name in picked:
        calls = rng.randint(1, 2000)
        avg = rng.choice([rng.uniform(100, 999), rng.uniform(1e3, 1e6), rng.uniform(1e6, 5e7)])
        rows.append((calls, avg, name))
    total = sum(c * a for c, a, _ in rows)
    rows.sort(key=lambda r: -r[0] * r[1])
    out = []
    label = " GPU activities:" if section == "gpu" else "      API calls:"
    for i, (calls, avg, name) in enumerate(rows):
        head = label if i == 0 else " " * len(label)
        out.append(f"{head} {100 * calls * avg / total:8.2f}% {_time(calls * avg):>9s} {calls:9d} {_time(avg):>9s} "
                   f"{_time(avg * 0.9):>9s} {_time(avg * 1.2):>9s}  {name}")
    return out


def _sweep(rng: random.Random, n: int) -> list[str]:
    """n summary-only profiles (start line, program output, application, result, header, rows), as lines."""
    lines = []
    for _ in range(n):
        pid = rng.randint(1, 99999)
        command = rng.choice(COMMANDS)
        lines.append(f"=={pid}== NVPROF is profiling process {pid}, command: {command}")
        lines += rng.sample(OUTPUT, rng.randint(0, 3))
        lines += [f"=={pid}== Profiling application: {command}", f"=={pid}== Profiling result:", HEADER]
        for s in rng.choice([["gpu", "api"], ["gpu"], ["api"]]):
            lines += _table(rng, s)
    return lines


def _rows_at(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if "%" in ln and "Time(%)" not in ln]


def _mutate(rng: random.Random, lines: list[str]) -> None:  # noqa: C901  (one branch a kind of change)
    """One random change the C pass must leave to the readers (or read as they read it)."""
    k = rng.randrange(len(lines))
    what = rng.randrange(14)
    if mutate_lines(rng, lines, k, what, '",.0123456789 \t*<&|=\r#\u00e9%\\-/>:$', STRAY):  # what 0 to 4
        return
    if what == 5:  # Time(%) that does not add up, a total that is not calls x average
        i = rng.choice(_rows_at(lines))
        old = lines[i].split()[-6 if "%" in lines[i].split()[-6] else 2]
        new = rng.choice(["1.00%", "99.00%", "150.00%", "0.00%", "100.00%", "9.9999ms", "1ns"])
        lines[i] = lines[i].replace(old, new, 1)
    elif what == 6:  # a section that comes back, another label
        i = rng.choice(_rows_at(lines))
        lines.insert(i + 1, rng.choice([" GPU activities:", "      API calls:", " OpenACC (excl):", "     GPU activity:",
                                        "       API calls :"]) + lines[i][16:])
    elif what == 7:  # a command of another shape
        i = rng.choice([i for i, ln in enumerate(lines) if "command: " in ln or "application: " in ln])
        sep = "command: " if "command: " in lines[i] else "application: "
        lines[i] = lines[i].split(sep)[0] + sep + rng.choice(["", " ./a", "./a  b", "a&b", "x*y", "nsys profile", "a,b",
                                                              "Running x", "a % b", *WINDOWS_ODD])
    elif what == 8:  # a PID of another form
        i = rng.choice([i for i, ln in enumerate(lines) if ln.startswith("==")])
        lines[i] = rng.choice(["==01== ", "==2== ", "", "======== ", "==99999999999999999999== "]) + lines[i].split("== ", 1)[-1]
    elif what == 9:  # a GPU activity named as a CUDA API call
        rows = [i for i in _rows_at(lines) if "GPU" in lines[i]]
        if rows:
            i = rng.choice(rows)
            lines[i] = lines[i].rsplit("  ", 1)[0] + "  cudaMemcpy"
    elif what == 10:  # a name of another form
        i = rng.choice(_rows_at(lines))
        lines[i] = lines[i].rsplit("  ", 1)[0] + "  " + rng.choice(
            ["", " k", "k<int>", "a*b", "void", "f(", "x,", "a::", "k\u00e9", "x" * 300, "a%b", "Running", "two  spaces"])
    elif what == 11:  # the header of another form
        i = rng.choice([i for i, ln in enumerate(lines) if "Type" in ln])
        lines[i] = rng.choice(["==1== " + HEADER.strip(), HEADER.replace("Calls", "Count"), HEADER + "  x",
                               HEADER.replace("  Name", "")])
    elif what == 12:  # the header with the PID prefix (nvprof prints none: the same PID is read as the others)
        i = rng.choice([i for i, ln in enumerate(lines) if "Type" in ln])
        pid = lines[i - 1].split("==")[1] if lines[i - 1].startswith("==") else "5"
        lines[i] = f"=={pid}== " + HEADER.strip()
    else:  # the text's end
        del lines[rng.randrange(len(lines) // 2, len(lines)):]


small = FAST.small(CHUNK=3000, HEAD=700)  # the fixture: a sweep read in several windows, chunks, parts


@pytest.mark.parametrize("seed", range(60))
def test_the_pass_gives_what_the_readers_give(seed, tmp_path, monkeypatch, small):
    rng = random.Random(seed)
    lines = _sweep(rng, rng.randint(30, 90))
    path, mutations = write_mutated(tmp_path, rng, lines, _mutate, plain=seed < 8)
    taken = text_columns.read(str(path), str(path)) is not None
    if not mutations:
        assert taken, "a plain sweep is read by the pass"
    whole, ref_whole = FAST.assert_library_same(path, monkeypatch)
    if taken:
        assert [type(v) for v in whole.rows.cols.values()] == [type(v) for v in ref_whole.rows.cols.values()]
        assert list(whole.rows.cols) == list(ref_whole.rows.cols)


@pytest.mark.parametrize("seed", range(9))
def test_the_cli_writes_what_it_writes_from_the_readers(seed, tmp_path, monkeypatch, small):
    rng = random.Random(100 + seed)
    lines = _sweep(rng, 50)
    if 3 <= seed < 6:  # a change in a later part: the windows go on from the last part given
        at = len(lines) * 3 // 4
        lines.insert(at + rng.randrange(20), "  12.5 ms elapsed")
    elif seed >= 6:  # a later profile's one row damaged (the row left out, the profile with it): where the
        # windows cut shows in the table (a part's rows numbered without it, its profiles with it)
        starts = [i for i, ln in enumerate(lines) if "NVPROF" in ln]
        k = starts[len(starts) * 2 // 3 + rng.randrange(5)]
        h = next(i for i in range(k, len(lines)) if "Type" in lines[i])
        end = next((i for i in range(h, len(lines)) if "NVPROF" in lines[i]), len(lines))
        lines[h + 1 : end] = [" GPU activities:  100.00%  1.0000ms  2  100.00us  90.00us  120.00us  k(int)"]
    FAST.assert_cli_same(write_lines(tmp_path, lines), monkeypatch)


def _needles() -> tuple[bytes, ...]:
    return tuple(k.encode() for k in text_columns._needles())


@pytest.mark.parametrize("margin", [0, 5, 64])
def test_chunks_end_at_a_start_line_margin_lines_before_their_end(margin):
    """A chunk that is not the last ends at a start line that has `margin` lines after it (and one at
    least: the line after a start decides the profile before it); the chunk up to there read as the
    last gives the same profiles."""
    rng = random.Random(7)
    data = ("\n".join(_sweep(rng, 40)) + "\n").encode()
    whole = ROWSCAN.text_sweep(data, _needles(), True, 1, margin)
    assert whole is not None and whole[0] == len(data)
    for cut in range(len(data) - 3000, len(data), 7):
        got = ROWSCAN.text_sweep(data[:cut], _needles(), False, 1, margin)
        assert got is not None
        end = got[0]
        assert data[end:].startswith(b"==") and data[:cut][end:].count(b"\n") >= max(2, margin + 1)
        if end + 80 * (margin + 2) < cut:  # (the start line before it was too close to the end)
            assert data[:cut][end:].count(b"\n") < margin + 40
        again = ROWSCAN.text_sweep(data[:end], _needles(), True, 1, margin)
        assert again is not None and again[2] == got[2] and again[5] == got[5]
    assert ROWSCAN.text_sweep(data[:-1], _needles(), True, 1, margin) is None  # no newline at the end


@pytest.mark.parametrize("at", range(40))
def test_odd_bytes_anywhere_in_a_line(at):
    """split_plain's 16 bytes a step find what its byte loop finds, wherever it is (across a step)."""
    rng = random.Random(3)
    lines = _sweep(rng, 3)
    row = next(i for i, ln in enumerate(lines) if "%" in ln and "Time(%)" not in ln)
    for odd, plain in (("-", True), ("--", at > 0), ("/", True), ("//", at > 0), ("*", at > 0), ("<", False),
                       ("\t", False), ("\x7f", False), ("\u00e9", False), ("#", False), ("$", True), ("|", False)):
        out = list(lines)
        if odd == "*":  # (program output holds none: in a row's name)
            out[row] = out[row].rsplit("  ", 1)[0] + "  k(float*)" if at else " " * 5 + "*" + out[row]
        else:
            out.insert(1, "o" * at + odd + "x")
        data = ("\n".join(out) + "\n").encode()
        got = ROWSCAN.text_sweep(data, (), True, 1, 0)
        assert (got is not None) == plain, (odd, at)


def test_the_needles_hold_no_newline():
    """The sweeps look for another dialect's markers and the context's keywords in their names and
    commands joined by newlines (one pass of the C search: text_columns._chunk, csv_sweep._marked): no
    needle may hold one, or a match could span two names."""
    from profconv.parse import context, stream

    for dialect in ("nvprof", "nsys"):
        assert not [k for k in stream.other_markers(dialect) + context.KEYWORDS if "\n" in k]


@pytest.mark.parametrize("command", WINDOWS + WINDOWS_ODD)
def test_windows_commands(command, tmp_path, monkeypatch, small):
    """A sweep run on Windows: its commands paths with '\\' and a drive's ':' (read by the pass as the
    readers read them), or what the pass leaves to the readers (a '\\%', a line's first '\\', ...)."""
    lines = [ln.split("command: ")[0] + "command: " + command if "command: " in ln else
             ln.split("application: ")[0] + "application: " + command if "application: " in ln else ln
             for ln in _sweep(random.Random(3), 30)]
    path = write_lines(tmp_path, lines)
    taken = text_columns.read(str(path), str(path)) is not None
    assert taken == (command not in {"D:\\b\\1\\%d", "a\\%"}), command
    FAST.assert_library_same(path, monkeypatch)


@pytest.mark.parametrize("output, read", [("saved to C:\\out\\r.txt", True), ("  C:\\x", True), ("\\hline", False),
                                          ("  \\x", False), ("took 1\\% of it", False)])
def test_program_output_with_backslashes(output, read, tmp_path, monkeypatch, small):
    """Program output a Windows run prints (a path): read by the pass where neither clean nor normalize
    rewrites it; a line that starts with a '\\' (clean's LaTeX rule) or holds a '\\%' is the readers'."""
    lines = _sweep(random.Random(5), 30)
    at = [i for i, ln in enumerate(lines) if "command: " in ln]
    for i in reversed(at):
        lines.insert(i + 1, output)
    path = write_lines(tmp_path, lines)
    assert (text_columns.read(str(path), str(path)) is not None) == read
    FAST.assert_library_same(path, monkeypatch)


# numbers of many digits (past the one-multiplication path: Python's own conversion), a row that ends
# the long-number way, keywords and stars where the pass's per-line checks look (a line's last bytes)
LONG_ROWS = [" GPU activities:  100.00%  123456789012345.123456789012ms  3  41152263004115.041152263004ms  "
             "1.000000000001ns  99999999999999.999999999999s  k(int)",
             " GPU activities:  100.00%  12345678901234.5678ns  2  6172839450617.2839ns  1ns  999999999999999ns  k(int)"]
LONG_TOTALS = [float("123456789012345.123456789012e6"), float("12345678901234.5678")]
ODD_OUTPUT = [("took 3 * 4 iterations", False), ("the result: Time", False), ("phase Start", False),
              ("ends in OpenACC", False), ("a**b", False), ("done at t", True), ("x=\"", False)]


@pytest.mark.parametrize("row, total", list(zip(LONG_ROWS, LONG_TOTALS)))
def test_numbers_of_many_digits(row, total, tmp_path, monkeypatch, small):
    """A time of more than 15 digits: float() of its text, as the readers read it."""
    lines = _sweep(random.Random(9), 30)
    at = [i for i, ln in enumerate(lines) if ln.startswith(" GPU activities:")][3]
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith(" " * 16))
    lines[at:end] = [row]  # (the section's one row)
    path = write_lines(tmp_path, lines)
    assert text_columns.read(str(path), str(path)) is not None
    whole, _ = FAST.assert_library_same(path, monkeypatch)
    assert total in list(whole.rows.col("total_ns"))


@pytest.mark.parametrize("output, read", ODD_OUTPUT)
def test_program_output_the_pass_looks_at_to_its_end(output, read, tmp_path, monkeypatch, small):
    """Program output with a star (the readers clean such text), a context keyword last in the line
    (looked for by its first two bytes), or none: read by the pass only where the readers read it so."""
    lines = _sweep(random.Random(5), 30)
    for i in reversed([i for i, ln in enumerate(lines) if "command: " in ln]):
        lines.insert(i + 1, output)
    path = write_lines(tmp_path, lines)
    assert (text_columns.read(str(path), str(path)) is not None) == read
    FAST.assert_library_same(path, monkeypatch)
