"""Never a silently dropped line at the end of the input: every dialect's test logs cut at each of their
last line ends and in the middle of their last lines. Each line the whole log reads as data (a row's
line, unplaced, named in a note) is booked by the cut log too; a cut last line whose whole line the log
booked (a row, a header or marker, unplaced), right after a line the cut log booked, is booked
(engine.cut_last_line: unplaced where no reader took it); and a cut log read part by part (the CLI's
stream) is its whole parse. Lines the whole log does not book (program output, prose) may stay so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profconv.errors import ProfconvError
from profconv.parse import core
from profconv.parse.core import parse_text
from tests.stream_check import check_parts

DATA = Path("tests/data")
DIALECTS = ["acc-time", "cudaprof", "ncu-csv", "ncu-text", "nsys-csv", "nsys-text", "nvprof-cpu", "nvprof-csv",
            "nvprof-metrics", "nvprof-new", "nvprof-old", "nvprof-trace", "nvprof-um", "pasted", "rocprof"]
LAST = 4  # the last lines cut


def _logs() -> list[Path]:
    return sorted(p for d in DIALECTS for p in (DATA / d).iterdir() if p.is_file() and p.name != "SOURCES.md")


def booked(text: str, monkeypatch) -> tuple[set[int], set[int]] | None:
    """The lines a parse of `text` reads as data (its rows' lines, its unplaced lines, the lines its
    notes name) and all it books (those, and the lines its dialects claimed or read in bulk: headers,
    markers); None where it finds no profile (a one-line error, not a silent loss)."""
    results: list = []
    read = core._read

    def spy(*args, **kw):
        got = read(*args, **kw)
        results.append(got)
        return got

    with monkeypatch.context() as m:
        m.setattr(core, "_read", spy)
        try:
            ps = parse_text(text, "<cut>")
        except ProfconvError:
            return None
    data = {n for n, _ in ps.unplaced}
    for a, b in zip(ps.rows.col("line_start"), ps.rows.col("line_end")):
        if a is not None and a == a:
            data.update(range(int(a), int(b) + 1))
    for note in ps.notes:  # 'line 12', 'line(s) 3, 4', 'lines 7-9'
        for nums in re.findall(r"\blines?(?:\(s\))? ([\d, –-]+)", note):
            for a, b in re.findall(r"(\d+)(?:[–-](\d+))?", nums):
                data.update(range(int(a), int(b or a) + 1))
    every = set(data)
    for r in results[0].values():
        every |= r.claimed_lines()
        for a, b in (*r.bulk, *r.rows_read):
            every.update(range(a, b + 1))
    return data, every


def cuts(text: str) -> list[tuple[str, str]]:
    """(how, the text cut): at each of the last LAST line ends, and inside each of the last LAST lines
    (after its first character, in its middle, before its last)."""
    lines = text.rstrip("\n").split("\n")
    out = []
    for k in range(max(1, len(lines) - LAST), len(lines)):
        head = "\n".join(lines[:k])
        out.append((f"after line {k}", head + "\n"))
        line = lines[k]
        for at in sorted({1, len(line) // 2, len(line) - 1} - {0, len(line)}):
            out.append((f"line {k + 1} cut at {at}", head + "\n" + line[:at]))
    return out


def _check(text: str, whole: tuple[set[int], set[int]], monkeypatch) -> list[str]:
    """What a cut text loses: lines the whole text read as data (a row's, unplaced, named in a note)
    that the cut one does not book at all, and a cut last line the whole text booked, right after a
    line the cut text booked, that the cut one does not book (a multi-line entry the cut makes
    inconsistent is reported by its first line: its other lines stay claimed)."""
    got = booked(text, monkeypatch)
    if got is None:
        return []
    lines = text.split("\n")
    lost = [k for k, line in enumerate(lines[:-1], 1) if line.strip() and k in whole[0] and k not in got[1]]
    n = len(lines)
    if lines[-1].strip() and n in whole[1] and n - 1 in got[1] and n not in got[1]:
        lost.append(n)
    return [f"line {k}: {lines[k - 1][:60]!r}" for k in lost]


@pytest.mark.parametrize("path", _logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_a_cut_log_loses_no_line(path, monkeypatch):
    text = path.read_text(encoding="utf-8", errors="replace")
    whole = booked(text, monkeypatch)
    if whole is None:
        pytest.skip("no profile in the whole log")
    lost = {how: got for how, cut in cuts(text) if (got := _check(cut, whole, monkeypatch))}
    assert not lost


@pytest.mark.parametrize(("tail", "unplaced"), [
    ("83", True), ('"x', True), ("393.07ms  1.2", True), ("hello world", True),  # cut right after the rows
    ("83\n", False),  # a whole line: program output the log printed (not cut)
    ("\n\nTest passed", False),  # not after a profile's lines
])
def test_an_input_cut_after_a_trace_table(tail, unplaced):
    """The class: an nvprof trace (text) and an nsys CSV trace whose input ends mid-line right after
    their rows: the cut line is unplaced, whatever it holds; a whole last line or one after a blank
    is the log's own text."""
    nvprof = Path(DATA / "nvprof-trace/nanzifan-babelstream-cudastream-gputrace-truncated.log").read_text()
    nsys = ("Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n\n"
            "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
            "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
            + "".join(f"{1000 + 9000 * i},{500 + i},{i},157,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H200 (0),1,7,k{i}\n"
                      for i in range(6)))
    for text in (nvprof, nsys):
        ps = parse_text(text + tail, "<cut>")
        n = len((text + tail).rstrip("\n").split("\n"))
        assert (n in {k for k, _ in ps.unplaced}) is unplaced, (text[:20], tail)
        assert ps.rows.n == parse_text(text, "<whole>").rows.n


@pytest.fixture(scope="module")
def streamed_logs() -> list[Path]:
    """The test logs a part-by-part read takes (two or more profile starts of a streamed dialect)."""
    from profconv.parse import stream as stream_mod

    out = []
    for path in _logs():
        try:
            ok = stream_mod.which(str(path), None) is not None
        except (OSError, ProfconvError):
            ok = False
        if ok:
            out.append(path)
    return out


def test_a_cut_log_read_part_by_part_is_its_whole_parse(streamed_logs, small_windows, tmp_path):
    """Each streamable test log cut in and after its last lines: its parts, one after the other, are
    its whole parse (the cut line unplaced alike), with windows of a few hundred bytes."""
    parted = 0
    for path in streamed_logs:
        text = path.read_text(encoding="utf-8", errors="replace")
        for k, (_, cut) in enumerate(cuts(text)[-8:]):
            f = tmp_path / f"{path.stem[:40]}-{k}.log"
            f.write_text(cut, encoding="utf-8")
            parted += check_parts(f, small_windows) > 1
    assert parted >= 8, parted


@pytest.mark.parametrize("tail", ["83", "393.07ms  1.2", "hello"])
def test_a_long_log_cut_after_its_last_trace_table_read_part_by_part(tail, small_windows, tmp_path):
    """Three nvprof traces one after the other, the input cut right after the last one's rows: read
    part by part (the CLI's stream), the last part has the cut line unplaced, as the whole parse."""
    one = Path(DATA / "nvprof-trace/nanzifan-babelstream-cudastream-gputrace-truncated.log").read_text()
    text = "".join(one.replace("9587", str(pid)) for pid in (101, 102, 103)) + tail
    f = tmp_path / "three.log"
    f.write_text(text)
    assert check_parts(f, small_windows) >= 2
    from profconv.parse import parse

    ps = parse(str(f))
    assert ps.unplaced[-1] == (text.count("\n") + 1, tail)
