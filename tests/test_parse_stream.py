"""Long nvprof logs read part by part (profconv/parse/stream.py) give what the whole-file parse
gives: the same profiles, rows (every column, to the bit), unplaced lines and notes; the CLI's
--json and --csv of a streamed input are byte-identical to those of the same input read whole,
and an input found midway to need the whole-file reader falls back to it with the same bytes."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from profconv.nogc import paused
from profconv.parse import parse
from profconv.parse import stream as stream_mod
from profconv.parse.dialects import DIALECTS
from profconv.parse.model import Document
from profconv.parse.text import decode, normalize
from tests.conftest import run_cli
from tests.stream_check import check_parts, split_repeated_and_mixed

DATA = Path(__file__).parent / "data"
NVPROF = sorted(p for p in glob.glob(str(DATA / "**" / "*"), recursive=True)
                if Path(p).is_file() and "NVPROF is profiling" in Path(p).read_text(errors="replace"))
ECE408 = DATA / "seeds" / "002_b0bcac5cefbf4480.log"  # five nvprof runs with Op Time and Correctness lines
SUMMARY = DATA / "nvprof-new" / "tyler-cs566-reductions.log"


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_real_logs(tmp_path, small_windows):
    """Every real nvprof log of the corpus three times over, and each next to another one: split
    at every profile start that allows it, the parts are the whole parse."""
    split = split_repeated_and_mixed(NVPROF, tmp_path, small_windows)
    assert split >= 30  # most of them were really read in parts (38 when written)


def test_parts_keep_run_context_between_profiles(tmp_path, small_windows):
    """Op Time, Correctness and command lines before a profile start belong to the run that
    follows: a part boundary at that start hands them on."""
    path = tmp_path / "runs.log"
    path.write_text(ECE408.read_text() * 4)
    assert check_parts(path, small_windows) > 4
    with paused():
        ps = parse(str(path))
    assert sum(len(i.op_times_s) for i in ps.profiles) >= 8
    assert any(i.correctness is not None for i in ps.profiles)


def test_damaged_rows_and_unplaced_lines_across_parts(tmp_path, small_windows):
    """A row whose total is not calls x average (reported unplaced, with one note for the whole
    file) and program output that looks like data, in several parts."""
    text = SUMMARY.read_text()
    bad = text.replace("2.2027ms       400  5.5060us", "2.2027ms       400  9.5060us")  # total != calls x avg
    noisy = text.replace("Average running time for Warp", "12.5%  3.2ms 4.1ms Warp")
    path = tmp_path / "damaged.log"
    path.write_text(text + bad + noisy + text + bad + text)
    assert check_parts(path, small_windows) > 2
    with paused():
        ps = parse(str(path))
    assert ps.notes[0].startswith("line(s) ") and "calls x average" in ps.notes[0]
    assert len(ps.unplaced) >= 3


@pytest.mark.parametrize("path", NVPROF[:0] or [SUMMARY])
def test_a_log_with_one_profile_start_is_read_whole(path, small_windows):
    with pytest.raises(stream_mod.NotStreamable):
        list(stream_mod.Stream(str(path), window=small_windows))


@pytest.mark.parametrize("streamed", [d.name for d in DIALECTS.values() if d.streams])
def test_other_dialects_are_seen_in_some_part(streamed):
    """What another dialect's detect finds in a whole test file, the stream's check finds in one
    of its lines (a part is made of whole lines; rows read in bulk are blank in what detection
    sees, as in the whole-file reader): otherwise a file read in parts could lose a dialect that
    reading it whole would have run. Each dialect's declared markers (Dialect.markers) are what
    makes this hold: a dialect whose markers miss what its detect finds fails here."""
    for f, text, doc in _test_texts():
        for d in DIALECTS.values():
            if d.name != streamed and d.detect(doc):
                assert _seen(text, streamed, d.name), (f, d.name)
                # and by the dialect's own markers alone (what a dialect added later must declare)
                assert any(m in text for m in d.markers), (f, d.name)


def _test_texts():
    """Every text file under tests/data (a binary one passed over): its path, its normalized text and a
    Document of that text."""
    for f in glob.glob(str(DATA / "**" / "*"), recursive=True):
        if not Path(f).is_file():
            continue
        data = Path(f).read_bytes()
        if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        text = normalize(decode(data))
        yield f, text, Document(lines=[], label=f, text=text)


def _seen(text: str, streamed: str, other: str) -> bool:
    """Whether the stream's check finds dialect `other` in one of the text's lines, or, where the
    streamed dialect leaves some of its markers to its detect (`local_markers`: nsys, nvprof's '%'),
    in the text's head or in a line with the two after it (what every window holds whole)."""
    lines = text.split("\n")
    if any(stream_mod._other_dialect(f"-\n{line}\n-", streamed) for line in lines):
        return True
    if other not in stream_mod.options(streamed).get("local_markers", {}):
        return False
    return stream_mod._other_dialect(text[: stream_mod.HEAD], streamed) or any(
        stream_mod._other_dialect("\n".join(lines[k : k + 3]), streamed) for k in range(len(lines)))


def test_every_dialect_declares_the_markers_of_what_it_detects():
    """A dialect's markers cover its detect on every test file, streamed or not (a dialect missing
    from the stream's check would make a log of it read in parts lose its tables)."""
    from profconv.parse.stream import other_markers

    for d in DIALECTS.values():
        assert d.markers, d.name
        assert set(d.markers) <= set(other_markers("nvprof")) or d.name == "nvprof"
    for f, text, doc in _test_texts():
        for d in DIALECTS.values():
            if d.detect(doc):
                assert any(m in text for m in d.markers), (f, d.name)


def test_public_parts_api(tmp_path, monkeypatch):
    """`parts` checks the whole file first, then hands parts out as they come; a file that must be
    read whole comes as one ProfileSet."""
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    monkeypatch.setattr(stream_mod, "WINDOW", 4096)
    monkeypatch.setattr(stream_mod, "HEAD", 1024)
    path = tmp_path / "many.log"
    path.write_text(SUMMARY.read_text() * 30)
    got = list(stream_mod.parts(str(path)))
    assert len(got) > 2
    assert [i.profile for p in got for i in p.profiles] == list(range(1, 31))
    assert sum(p.rows.n for p in got) == 30 * 20
    ncu = tmp_path / "with-ncu.log"
    ncu.write_text(SUMMARY.read_text() * 30 + "==PROF== Disconnected from process 1\n")
    assert len(list(stream_mod.parts(str(ncu)))) == 1


def _cli_bytes(monkeypatch, stream_from: int, *args: str) -> str:
    monkeypatch.setattr(stream_mod, "STREAM_FROM", stream_from)
    r = run_cli("parse", *args)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("out", ["--json", "--csv"])
def test_cli_output_streamed_is_the_whole_files(tmp_path, monkeypatch, out):
    """Several inputs, one of them long (more than one slice of 10,000 rows), one short, one that
    needs the whole-file reader only once it is half read (an ncu marker near its end); with and
    without --threshold: the same bytes whether the long ones are streamed or not."""
    monkeypatch.setattr(stream_mod, "WINDOW", 8192)
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    long = tmp_path / "long.log"
    long.write_text(ECE408.read_text() * 3 + SUMMARY.read_text() * 560)
    mixed = tmp_path / "mixed.log"
    mixed.write_text(SUMMARY.read_text() * 40 + "==PROF== Connected to process 5\n" + SUMMARY.read_text())
    short = SUMMARY
    files = [str(long), str(short), str(mixed)]
    assert len(list(stream_mod.Stream(str(long)))) > 10  # really streamed
    with pytest.raises(stream_mod.NotStreamable):  # only once parts were made
        for k, _ in enumerate(stream_mod.Stream(str(mixed))):
            assert k < 10
    for extra in ([], ["--threshold", "0.5"]):
        streamed = _cli_bytes(monkeypatch, 1000, *files, out, *extra)
        whole = _cli_bytes(monkeypatch, 1 << 40, *files, out, *extra)
        assert streamed == whole
    assert streamed.count("cudaEventCreate") >= 600


def test_cli_tables_streamed_are_the_whole_files(tmp_path, monkeypatch):
    """The terminal tables of a long log printed a part at a time: the same text as the whole
    parse's, next to a short input and one that must be read whole; a damaged row's note and the
    unplaced lines come once, at the end."""
    monkeypatch.setattr(stream_mod, "WINDOW", 8192)
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    text = SUMMARY.read_text()
    bad = text.replace("2.2027ms       400  5.5060us", "2.2027ms       400  9.5060us")
    long = tmp_path / "long.log"
    long.write_text(ECE408.read_text() + text * 12 + bad + text.replace("Average running", "12.5%  3.2ms 4.1ms") * 3)
    mixed = tmp_path / "mixed.log"
    mixed.write_text(text * 5 + "==PROF== Connected to process 5\n" + text)
    files = [str(long), str(SUMMARY), str(mixed)]
    assert len(list(stream_mod.parts(str(long)))) == 1  # STREAM_FROM: read whole
    for extra in ([], ["--threshold", "0.5", "--all"]):
        streamed = _cli_bytes(monkeypatch, 1000, *files, *extra)
        assert len(list(stream_mod.parts(str(long)))) > 3
        whole = _cli_bytes(monkeypatch, 1 << 40, *files, *extra)
        assert streamed == whole
    assert "calls x average" in streamed and "could not be placed" in streamed


def test_cli_a_full_temporary_directory_is_one_line(tmp_path, monkeypatch):
    """--json of a long log writes its rows to a temporary file first: a disk without room for
    it is said in one line (exit 5), no traceback, nothing half written."""
    import errno
    import tempfile

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    long = tmp_path / "long.log"
    long.write_text(SUMMARY.read_text() * 10)
    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    r = run_cli("parse", str(long), "--json")
    assert r.returncode == 5
    assert "temporary file" in r.stderr and "No space left" in r.stderr and "TMPDIR" in r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("kind", ["crlf", "latin1-late", "utf8-then-latin1", "comment-prefixed", "bom"])
def test_parts_of_files_the_text_layer_changes(tmp_path, small_windows, kind):
    """Line ends, encodings and comment prefixes are undone per window as the whole-file reader
    undoes them for the whole: CRLF; a byte that is no UTF-8 late in a file (the whole file is then
    Latin-1; the windows before were ASCII); UTF-8 before such a byte (the stream gives up); a log
    pasted with '# ' before every line (normalize strips a prefix that the line before or after holds
    too: cut where the line after holds it); a UTF-8 BOM."""
    text = ECE408.read_text(encoding="utf-8", errors="replace").replace("\ufffd", "?")
    text = "".join(ch if ord(ch) < 128 else "?" for ch in text) * 3 + SUMMARY.read_text() * 3
    if kind == "crlf":
        data = text.replace("\n", "\r\n").encode()
    elif kind == "latin1-late":
        data = text.encode() + b"Op Time: 0.5 s \xe9t\xe9\n" + SUMMARY.read_bytes()
    elif kind == "utf8-then-latin1":
        data = "Caf\u00e9\n".encode() + text.encode() + b"\xe9\n" + SUMMARY.read_bytes()
    elif kind == "comment-prefixed":
        data = "".join("# " + ln for ln in text.splitlines(keepends=True)).encode()
    else:
        data = b"\xef\xbb\xbf" + text.encode()
    path = tmp_path / f"{kind}.log"
    path.write_bytes(data)
    n = check_parts(path, small_windows)
    if kind == "utf8-then-latin1":
        assert n == 0
    elif kind == "comment-prefixed":
        assert n > 3  # cut at a profile start whose next line carries the same prefix (stream._prefix_kept_on)
    else:
        assert n > 3


def test_cli_tables_streamed_into_a_closed_pipe(tmp_path, monkeypatch):
    """`profconv parse long.log | head`: the reader of the output went away while the tables of a
    long log were printed a part at a time; that is no error about the input (it was read fine)."""
    import errno

    from profconv.render import profile_tables

    def closed(*a, **k):
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    monkeypatch.setattr(stream_mod, "HEAD", 1024)
    long = tmp_path / "long.log"
    long.write_text(SUMMARY.read_text() * 10)
    monkeypatch.setattr(profile_tables, "render_profiles", closed)
    r = run_cli("parse", str(long))
    assert r.returncode == 0, r.stderr
    assert "cannot be read" not in r.stderr


def test_a_builtin_dialects_detect_is_not_run_where_none_of_its_markers_is(monkeypatch):
    """The stream's check of each window runs no built-in dialect's detect where none of its markers
    is in the text (each detect takes no text without one: nsys's trace header without a comma,
    'Start(ns)  Duration(ns)', is one of its markers); a plugin's detect is run."""
    import dataclasses

    from profconv.parse import dialect as dialect_mod

    window = "==1== Profiling result:\n" + "x,1\n" * 50
    assert not stream_mod._other_dialect(window, "nvprof", head=False)
    assert stream_mod._other_dialect("-\nStart(ns)  Duration(ns)  CorrId  Name\n-", "nvprof")
    assert stream_mod._other_dialect("-\n Start (sec)  Duration (nsec)\n-", "nvprof", head=False)
    reg = dict(dialect_mod.registry())
    ran: list[str] = []

    def counted(d):
        def detect(doc):
            ran.append(d.name)
            return d.detect(doc)
        return dataclasses.replace(d, detect=detect)

    reg["mine"] = dataclasses.replace(reg["rocprof"], name="mine", markers=("MINE",))
    reg = {name: counted(d) for name, d in reg.items()}
    monkeypatch.setattr(dialect_mod, "_REGISTRY", reg)
    assert not stream_mod._other_dialect(window, "nvprof", head=False)
    assert ran == ["mine"]
    ran.clear()
    assert not stream_mod._other_dialect("Generating run1.sqlite\n" + "x,1\n" * 50, "nsys", head=False)
    assert ran == ["nvprof", "mine"]  # nvprof's '%' markers: left to its detect by the nsys stream


@pytest.mark.parametrize(("line", "after", "cut"), [
    (b"# CUDA_PROFILE_LOG_VERSION 2.0", b"# CUDA_DEVICE 0 Tesla C2070", True),
    (b"  > ==7== NVPROF is profiling process 7", b"> ==7== Profiling application", True),
    (b"# ==7== NVPROF is profiling process 7", b"==7== Profiling application", False),  # stripped by the line before only
    (b"# a", b"## b", False),  # another prefix
    (b" * a", b" * b", False),  # inside /* */: a block's prefix
    (b"#include <x>", b"#include <y>", False),  # no prefix (a word after '#')
])
def test_a_prefixed_line_is_a_place_to_cut_where_the_line_after_holds_its_prefix(line, after, cut):
    assert stream_mod._prefix_kept_on(line, after) is cut
