"""ncu console pages read from the input's bytes (profconv/parse/dialects/ncu_console.py) give what the
row reader gives: every console test log, and pages made long or edited where the bytes path must
leave them to the row reader (a comment mark on two lines, a --print-summary table, program output
among the rows, a context line, a carriage return) -- read both ways, the same frame, notes, unplaced
lines and CLI output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import profconv
from profconv.errors import InputError
from profconv.parse import bytescan
from profconv.parse.dialects import ncu_console, ncu_raw
from tests.conftest import assert_cli_alike

DATA = Path(__file__).parent / "data"
_PROCESS_LINE = re.compile(rb"(?m)^\[\d+\] \S")
CONSOLE_LOGS = sorted(p for p in DATA.rglob("*.log") if _PROCESS_LINE.search(p.read_bytes()))
ONE_PROCESS = DATA / "ncu-text" / "h200-ncu2025.3-scale-add-square-one-process-45-kernels.log"
METRICS = DATA / "ncu-text" / "eduardo4jesus-hw8-smem-transpose-metrics.log"


def _row_reader(m) -> None:
    m.setattr(ncu_console, "MIN_BYTES", 10**12)


def _from_bytes(m, window: int = ncu_console.WINDOW) -> None:
    """Every console region read from the bytes, however small (and any file: ncu_raw.find_file)."""
    m.setattr(ncu_console, "MIN_BYTES", 0)
    m.setattr(ncu_raw, "FILE_FROM", 0)
    m.setattr(ncu_console, "WINDOW", window)


def _parse(path: Path):
    try:
        ps = profconv.parse(str(path))
    except InputError as e:
        return str(e)
    return ps


def _alike(monkeypatch, path: Path, window: int = ncu_console.WINDOW) -> tuple[object, int]:
    """The file read with its console regions from the bytes and by the row reader: the same; the
    first result and how many regions were read from the bytes."""
    taken = []
    real = ncu_console.region_at
    with monkeypatch.context() as m:
        _from_bytes(m, window)
        m.setattr(ncu_console, "region_at", lambda *a: taken.append(real(*a)) or taken[-1])
        a = _parse(path)
    with monkeypatch.context() as m:
        _row_reader(m)
        b = _parse(path)
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        assert a.frame.equals(b.frame)
        assert (a.notes, a.unplaced) == (b.notes, b.unplaced)
        assert [(p.pid, p.command, p.line_start, p.line_end) for p in a.profiles] == [
            (p.pid, p.command, p.line_start, p.line_end) for p in b.profiles]
    return a, sum(t is not None for t in taken)


def test_every_console_log_is_among_them():
    assert len(CONSOLE_LOGS) == 19


@pytest.mark.parametrize("path", CONSOLE_LOGS, ids=lambda p: p.name[:60])
def test_console_logs_alike_from_bytes_and_rows(monkeypatch, path):
    _alike(monkeypatch, path)
    _alike(monkeypatch, path, window=512)  # windows of a few lines each


def test_most_console_logs_are_read_from_the_bytes(monkeypatch):
    """What the bytes path takes of the test logs (the others hold what it leaves to the row reader:
    a --print-summary table, Windows line ends, non-ASCII text)."""
    taken = {p.name for p in CONSOLE_LOGS if _alike(monkeypatch, p)[1]}
    assert len(taken) == 12
    assert {ONE_PROCESS.name, METRICS.name, "h200-ncu2025.3-scale-add-square-three-runs.log"} <= taken
    assert "alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log" not in taken


@pytest.mark.parametrize("path", [ONE_PROCESS, METRICS, DATA / "ncu-text" / "h200-ncu2025.3-scale-add-square-three-runs.log"],
                         ids=["ncu2025", "metrics", "three-runs"])
def test_cli_alike(monkeypatch, path):
    def bytes_path(m):
        _from_bytes(m)

    with monkeypatch.context() as m:
        _row_reader(m)
        assert_cli_alike(monkeypatch, path, bytes_path, outs=("--json", "--csv", "--all", "--width=80"))


def _long(path: Path, size: int) -> str:
    """The log's first process made long: its kernels' output after its '[N]' line repeated past `size` bytes."""
    lines = path.read_text().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if line.startswith("["))
    end = next((i for i in range(k + 1, len(lines)) if lines[i].startswith("==PROF==")), len(lines))
    body = "".join(lines[k + 1 : end])
    return "".join(lines[: k + 1]) + body * (1 + size // len(body))


def test_a_long_page_is_read_from_the_mapped_file(monkeypatch, tmp_path):
    """Past MIN_BYTES a one-process page of a big file is one PreRead table (no monkeypatch): its metrics are columns,
    the same rows as the row reader's."""
    path = tmp_path / "long.log"
    text = _long(METRICS, max(ncu_console.MIN_BYTES, ncu_raw.FILE_FROM))  # (a smaller file is read whole first)
    path.write_text(text)
    pre = ncu_raw.find_file(str(path))
    assert pre is not None and [type(t.batch) for t in pre.tables.values()] == [ncu_console.Region]
    (t,) = pre.tables.values()
    assert t.line == 10 and 0 < t.kept < t.rows and len(pre.data) < bytescan.KEEP + t.rows + 2048
    ps = profconv.parse(str(path))
    with monkeypatch.context() as m:
        _row_reader(m)
        rows = profconv.parse(str(path))
    assert ps.frame.equals(rows.frame)
    metric = ps.frame[ps.frame.section == "ncu-metric"]
    assert len(metric) == 13 * text.count(", Context 1, Stream 7") == 6929
    assert metric.value.iloc[3] == 16_012_462 and metric.value.iloc[12] == 11.76


KERNEL = "  k(int) (1, 1, 1)x(32, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n"
RULE = "    ---------------------- ----------- ------------\n"
HEAD = "==PROF== Connected to process 7 (/app)\n==PROF== Disconnected from process 7\n[7] app@host\n"


def _kernel(rows: list[tuple[str, str, str]], kernel: str = KERNEL) -> str:
    body = "".join(f"    {n:<22} {u:>11} {v:>12}\n" for n, u, v in rows)
    header = "    Metric Name            Metric Unit Metric Value\n"
    return kernel + "    Section: GPU Speed Of Light Throughput\n" + RULE + header + RULE + body + RULE + "\n"


# a --print-summary kernel and table (ncu 2021-2022), as printed
SUMMARY = "".join((DATA / "ncu-text" / "alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log")
                  .read_text().splitlines(keepends=True)[5:14])
_PROFILING = '==PROF== Profiling "k" - 0: 0%....50%....100% - 10 passes\n'
PLAIN = [("DRAM Frequency", "Ghz", "3.17"), ("Elapsed Cycles", "cycle", "7,624"), ("Duration", "us", "5.12")]


def _page(kernels: int = 6, rows=PLAIN, extra: str = "", at: int = 3) -> str:
    out = [_kernel(rows) for _ in range(kernels)]
    out[min(at, kernels - 1)] += extra
    return HEAD + "".join(out)


@pytest.mark.parametrize("edit, read", [
    ("", True),
    ("    # SMs                   SM          132\n    # TPCs                               66\n", False),  # a '#' pair
    ("    # SMs                   SM          132\n", True),  # one '#' line: no comment prefix
    ("some program output\n", False),  # not indented: a markdown code block may open after it
    ("\nsome program output\n\n    indented\n", False),  # one does (normalize dedents it)
    # ... and a section after it: dedented, it is no section the row reader reads (the bytes path would)
    ("some program output\n\n" + _kernel(PLAIN)[len(KERNEL):], False),
    ("Op Time: 1.25 ms\n", False),  # the run-context scan's
    ("    OPT   see https://docs.nvidia.com -- the guide\n\n", True),  # advice: '//' and '--' inside a line
    ("/* a comment\n", False),
    ("    Kernel: foo\n", False),  # nvprof's marker
])
@pytest.mark.parametrize("blank", [False, True])
def test_edits(monkeypatch, tmp_path, edit, read, blank):
    """`blank`: the page after 100 KB of '==PROF== Profiling' lines (one process's thousands of kernels)
    and bytescan.KEEP small, so that its lines are blank in the text (else they stay, PreRead.check
    compares them with what normalize made of them, and a difference is read again whole)."""
    path = tmp_path / "page.log"
    text = _page(extra=edit)
    if blank:
        monkeypatch.setattr(bytescan, "KEEP", 1 << 12)
        text = _PROFILING * 1500 + text
    path.write_text(text)
    assert _alike(monkeypatch, path)[1] == read


@pytest.mark.parametrize("text, read", [
    (_page().replace("\n", "\r\n"), False),  # line ends normalize rewrites
    (_page().replace("Metric Value\n", "Metric Value   \n"), True),  # blanks ending lines (normalize strips them)
    (_page() + "==PROF== Connected to process 8 (/app)\nprogram output\n==PROF== Disconnected from process 8\n"
     "[8] app@host\n" + _page(2)[len(HEAD):], True),  # a second process: its page read from the bytes too
    (_page() + "==PROF== Connected to process 7 (/app)\n" + _kernel(PLAIN), True),  # the same run goes on after the region
    (_page(rows=[("Elapsed Cycles", "cycle", "7,624"), ("Grid Size", "", "4,096")]), True),  # no kernel decides the mark
    (_page(rows=[("Elapsed Cycles", "cycle", "7.624"), ("Rate", "%", "11,76")]), True),  # decimal comma
    (HEAD + _kernel([("Elapsed Cycles", "cycle", "7,624")]) + _page(3)[len(HEAD):], True),  # the run decides one kernel
    (HEAD + "  k(int), Invocations 2\n    Section: Command line profiler metrics\n"
     "    ---------- ----------- ---------- ---------- ----------\n"
     "    Duration        usecond       1.00       3.00       2.00\n", False),  # --print-summary
    (_page() + "    indented between tables\n", True),  # (the row reader passes it by)
    (_page() + "==PROF== Connected to process 8 (/app)\n    indented\n", True),
    # after the region a paragraph, a blank line, an indented line: a markdown code block once the region is blank
    (_page() + "==PROF== Connected to process 8 (/app)\n\n    indented\n", False),
    (_page() + "==PROF== Connected to process 8 (/app)\n\nnot indented\n", True),
    # the region's last line a rule: after it the paragraph is among indented lines, once blank it is not
    (_page().rstrip("\n") + "\n==PROF== Connected to process 8 (/app)\n\n" + _kernel(PLAIN)[len(KERNEL):], False),
    (_page() + "==PROF== Connected to process 8 (/app)\n" + SUMMARY, True),  # a --print-summary in the same run: read again whole
    (_page().replace("    Duration  ", "    Duration\n    Shifted      cycle     1,234\n    Duration  ", 1), False),  # unplaced
    (_page().replace("[7] app@host\n", "[7] app@host\n\n"), False),  # a region opens with its kernel's line
])
@pytest.mark.parametrize("blank", [False, True])
def test_pages(monkeypatch, tmp_path, text, read, blank):
    path = tmp_path / "page.log"
    if blank:  # (test_edits)
        monkeypatch.setattr(bytescan, "KEEP", 1 << 12)
        text = _PROFILING * 1500 + text
    path.write_bytes(text.encode())
    got, taken = _alike(monkeypatch, path)
    assert bool(taken) == read


def test_ambiguous_kernels_named_as_the_row_reader_names_them(monkeypatch, tmp_path):
    path = tmp_path / "page.log"
    path.write_text(_page(rows=[("Elapsed Cycles", "cycle", "7,624"), ("Grid Size", "", "4,096")]))
    ps, taken = _alike(monkeypatch, path)
    assert taken == 1
    assert any("k(int)" in n and "decimal" in n for n in ps.notes)


def test_streamed_parts_read_their_pages_from_the_bytes_and_equal_the_whole(monkeypatch, tmp_path, small_windows):
    """A long log's windows read their console pages from the bytes too (ncu's `pre_read`): every
    console test log three times over and next to another, split at each run, the parts are the
    whole parse."""
    from tests.stream_check import split_repeated_and_mixed

    taken = []
    real = ncu_console.region_at
    monkeypatch.setattr(ncu_console, "MIN_BYTES", 0)
    monkeypatch.setattr(ncu_console, "region_at", lambda *a: taken.append(real(*a)) or taken[-1])
    assert split_repeated_and_mixed([str(p) for p in CONSOLE_LOGS], tmp_path, small_windows) == 27
    assert sum(t is not None for t in taken) == 183  # (a region in each window of a part, read again as parts are cut)


# where the page is cut, and whether the row reader reports its cut line unplaced (a metric row's start, a
# rule after the last row are; a section's, a kernel's or a header's start, a line's indentation are not)
_CUTS = {"    Duration   ": True, "    Elapsed Cyc": True, "    Section: GPU Sp": False, "    ------": True,
         "  k(int) (1, 1": False, "    ": False, "    Metric Name            Metric Unit Metric Val": False}


@pytest.mark.parametrize("cut", _CUTS)
@pytest.mark.parametrize("keep, lead, read", [
    (None, "", True),  # the whole page stays in the text (PreRead.check compares it)
    (1 << 10, "", True),  # its first KiB stays, the rest is blank: the last line left is indented
    # all of it blank: the '[7]' line before the blank ones, then the indented cut line, opens a
    # markdown code block (dedented), which it is not in the file: the row reader's
    (1 << 12, _PROFILING * 1500, False),
])
def test_a_page_cut_mid_line_is_read_from_the_bytes(monkeypatch, tmp_path, cut, keep, lead, read):
    """A profiler killed while it wrote (a job's time limit): the page's last line cut short, no line
    end after it. The page up to it is read from the bytes, the cut line by the row reader with the
    page's state (reported unplaced where the row reader reports it: engine.cut_last_line)."""
    text = _page(kernels=40)
    text = lead + text[: text.rindex(cut) + len(cut)]
    if keep is not None:
        monkeypatch.setattr(bytescan, "KEEP", keep)
    path = tmp_path / "cut.log"
    path.write_bytes(text.encode())
    ps, taken = _alike(monkeypatch, path)
    assert bool(taken) == (read or not cut.startswith("    "))  # (two blanks before a kernel open no code block)
    last = text.count("\n") + 1
    assert [n for n, _ in ps.unplaced] == ([last] if _CUTS[cut] else [])


def test_a_page_cut_mid_line_through_the_cli(monkeypatch, tmp_path):
    path = tmp_path / "cut.log"
    text = _page(kernels=40)
    path.write_bytes(text[: text.rindex("    Duration   ") + 15].encode())

    def bytes_path(m):
        _from_bytes(m)

    with monkeypatch.context() as m:
        _row_reader(m)
        assert_cli_alike(monkeypatch, path, bytes_path, outs=("--json", "--csv", "--all", "--width=80"))
