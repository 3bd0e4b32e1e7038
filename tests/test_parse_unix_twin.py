"""A log written on Windows or gzipped, read as its plain twin (profconv.parse.unix_twin): the CLI
and the library give what they give for the plain file, name the file given, and leave no twin
behind."""

from __future__ import annotations

import codecs
import gzip
import importlib
import json
import os
import random
import re
import tempfile
from dataclasses import astuple
from pathlib import Path

import pytest
from conftest import assert_cli_alike, run_cli

import profconv
from profconv.errors import InputError
from profconv.io import gunzip
from profconv.parse import native
from profconv.parse.text import decode

twin_mod = importlib.import_module("profconv.parse.unix_twin")
stream_mod = importlib.import_module("profconv.parse.stream")

DATA = Path("tests/data")
LOGS = sorted(p for p in DATA.rglob("*") if p.suffix in (".log", ".csv") and b"\r" not in p.read_bytes())


def _is_utf8(p: Path) -> bool:
    try:
        p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


UTF8_LOGS = [p for p in LOGS if _is_utf8(p)]
# UTF-16 without a mark is told by the byte order its text reads in (text.utf16_codec): the logs with
# Chinese, Korean or box-drawing characters too
ASCII_LOGS = [p for p in LOGS if p.read_bytes().isascii()]

FORMS = {
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    # PowerShell 5's `>`: UTF-16LE with its mark, '\r\n' line ends
    "powershell5": lambda data: codecs.BOM_UTF16_LE + data.decode("utf-8").replace("\n", "\r\n").encode("utf-16-le"),
    "utf16be": lambda data: data.decode("utf-8").encode("utf-16-be"),  # no mark: NUL-interleaved
    "utf16le-crlf": lambda data: data.decode("utf-8").replace("\n", "\r\n").encode("utf-16-le"),  # no mark
    # Notepad's 'UTF-8' and PowerShell 5's `Out-File -Encoding utf8`: a byte-order mark, '\r\n'
    "utf8-mark": lambda data: codecs.BOM_UTF8 + data.replace(b"\n", b"\r\n"),
    "utf8-mark-lf": lambda data: codecs.BOM_UTF8 + data,
    "gz": gzip.compress,
    "gz-crlf": lambda data: gzip.compress(data.replace(b"\n", b"\r\n")),
}


@pytest.fixture
def twins(monkeypatch, tmp_path):
    """Twins made of every size, in a folder of their own; the paths of those made (in order)."""
    made: list[str] = []
    real = twin_mod._made

    def counted(path: str) -> str | None:
        got = real(path)
        if got is not None:
            made.append(got)
        return got

    folder = tmp_path / "twins"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setattr(twin_mod, "TWIN_FROM", 0)
    monkeypatch.setattr(twin_mod, "_made", counted)
    return made


def _outputs(path: Path, outs: tuple[str, ...]) -> list[tuple[int, str, str]]:
    got = []
    for out in outs:
        r = run_cli("parse", str(path), out)
        got.append((r.returncode, r.stdout.replace(str(path), "@"), r.stderr.replace(str(path), "@")))
    return got


@pytest.mark.parametrize("form", FORMS)
def test_every_log_in_each_windows_or_gzip_form_gives_the_plain_files_outputs(form, twins, tmp_path):
    text_forms = ("powershell5", "utf16be", "utf16le-crlf", "utf8-mark", "utf8-mark-lf")  # (of UTF-8 logs)
    logs = UTF8_LOGS if form in text_forms else LOGS
    outs = ("--json", "--csv")
    for k, log in enumerate(logs):
        copy = tmp_path / f"{k}-{log.name}"
        copy.write_bytes(FORMS[form](log.read_bytes()))
        assert _outputs(copy, outs) == _outputs(log, outs), (form, log)
    assert len(twins) == len(logs) * len(outs)  # each read of a copy went through its twin
    assert os.listdir(tmp_path / "twins") == []  # and each twin is gone
    assert (len(LOGS), len(UTF8_LOGS), len(ASCII_LOGS)) == (153, 153, 120)


def test_the_library_reads_the_twin_and_names_the_file_given(twins, tmp_path):
    log = DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log"
    copy = tmp_path / "windows.log"
    copy.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    got, want = profconv.parse(str(copy)), profconv.parse(str(log))
    assert got.source == str(copy) and got.frame.equals(want.frame)
    assert got.notes == want.notes and len(twins) == 1
    parts = list(stream_mod.parts(str(copy)))
    assert [p.source for p in parts] == [str(copy)] and len(twins) == 2
    assert os.listdir(tmp_path / "twins") == []


def test_a_parts_generator_closed_early_removes_its_twin(monkeypatch, twins, tmp_path):
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 0)
    log = DATA / "nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log"
    copy = tmp_path / "two.log.gz"
    copy.write_bytes(gzip.compress(log.read_bytes() * 3))
    it = stream_mod.parts(str(copy))
    first = next(it)
    assert first.source == str(copy) and len(twins) == 1
    assert len(os.listdir(tmp_path / "twins")) == 1
    it.close()
    assert os.listdir(tmp_path / "twins") == []


def test_several_inputs_each_named_and_progress_advanced_by_the_file_given(twins, tmp_path):
    log = DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log"
    a, b = tmp_path / "a.log", tmp_path / "b.log.gz"
    a.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    b.write_bytes(gzip.compress(log.read_bytes()))
    from profconv.parse.emit import emit

    advanced: list[str] = []

    class Sink:
        rollback_ok = True

        def __init__(self):
            self.labels = []

        def whole(self, ps):
            self.labels.append(ps.source)

        def close(self):
            pass

    sink = Sink()
    emit([str(a), str(b), str(log)], sink, advance=advanced.append)
    assert sink.labels == advanced == [str(a), str(b), str(log)]
    assert len(twins) == 2 and os.listdir(tmp_path / "twins") == []
    r = run_cli("parse", str(a), str(b), "--csv")
    rows = r.stdout.splitlines()
    assert r.returncode == 0 and len(rows) == 1 + 2 * (len(run_cli("parse", str(log), "--csv").stdout.splitlines()) - 1)
    assert {row.split(",")[0] for row in rows[1:]} == {str(a), str(b)}


@pytest.mark.parametrize("data, made", [
    (b"==1== NVPROF is profiling process 1\n" * 50, False),  # Linux line ends: read as it is
    (b"x\n" * 40000 + b"y\r\n", False),  # '\r\n' only past the first HEAD bytes
    (b"\xff\xfe" + "a\x00b\r\n".encode("utf-16-le") * 10, False),  # a NUL character
    (b"\xff\xfe" + "\ufeffab\r\n".encode("utf-16-le") * 10, False),  # a second byte-order mark
    (b"\xff\xfe" + "ab\r\n".encode("utf-16-le") * 10, True),
    (b"ab\r\n" * 10, True),
    (codecs.BOM_UTF8 + b"ab\n" * 10, True),
    (codecs.BOM_UTF8 + b"ab\r\n" * 10 + b"\xe9\r\n", False),  # not all UTF-8: read as Latin-1, the mark too
    (codecs.BOM_UTF8 * 2 + b"ab\r\n" * 10, False),  # a second mark
    (b"ab\r\n" * 30000 + b"\x00", False),  # a NUL where a twin half as long holds it in its first 64 KiB
    (b"ab\r\n" * 50000 + b"\x00", True),  # past that: the file and its twin read alike
])
def test_which_files_get_a_twin(data, made, twins, tmp_path):
    p = tmp_path / "in.log"
    p.write_bytes(data)
    with twin_mod.unix_twin(str(p)) as plain:
        assert (plain != str(p)) is made
        if made:
            assert decode(Path(plain).read_bytes()) == decode(data).replace("\r\n", "\n")
    assert os.listdir(tmp_path / "twins") == []


def test_a_small_file_gets_no_twin_a_small_gz_does(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    p, z = tmp_path / "small.log", tmp_path / "small.log.gz"
    p.write_bytes(b"a\r\n" * 100)
    z.write_bytes(gzip.compress(b"a\n" * 100))
    assert twin_mod._made(str(p)) is None
    got = twin_mod._made(str(z))
    assert got is not None and Path(got).read_bytes() == b"a\n" * 100
    for path in ("-", str(tmp_path), str(tmp_path / "missing.log")):
        assert twin_mod._made(path) is None


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 20])
def test_blocks_cut_anywhere_give_the_same_twin(monkeypatch, block):
    text = "a\r\nb\r\r\n\r\nc\u00e9\U0001f600\r\n\rd\r"  # '\r' runs, a lone '\r', a pair of surrogates, a last '\r'
    monkeypatch.setattr(twin_mod, "BLOCK", block)

    def blocks(data: bytes):
        return iter([data[i : i + block] for i in range(0, len(data), block)])

    raw = text.encode("utf-8")
    assert b"".join(twin_mod._unix_ends(blocks(raw))) == raw.replace(b"\r\n", b"\n")
    for codec, data in (("utf-16", codecs.BOM_UTF16_LE + text.encode("utf-16-le")),
                        ("utf-16-be", text.encode("utf-16-be")),
                        ("utf-16-le", text.encode("utf-16-le") + b"\x00")):  # an odd last byte: U+FFFD
        want = data.decode(codec, errors="replace").replace("\r\n", "\n")  # (text.decode's reading)
        assert b"".join(twin_mod._from_utf16(blocks(data), codec)).decode("utf-8") == want


def test_the_c_pass_makes_the_line_ends_bytes_replace_makes(monkeypatch):
    scan = native.load("_bytescan")
    if getattr(scan, "unix_ends", None) is None:
        pytest.skip("the C accelerators are not built")
    rng = random.Random(7)
    for _ in range(3000):
        data = bytes(rng.choice(b"\r\r\n\na\x00\xff") for _ in range(rng.randrange(0, 90)))
        for buf in (data, bytearray(data), memoryview(data)):
            assert scan.unix_ends(buf) == data.replace(b"\r\n", b"\n"), data
    assert scan.unix_ends(b"") == b"" and scan.unix_ends(b"\r") == b"\r" and scan.unix_ends(b"\r\n") == b"\n"
    with pytest.raises(TypeError):
        scan.unix_ends("a\r\n")
    # the twin's blocks by the C pass and by the fallback (no accelerator): the same bytes
    line = b'"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\r\n'
    raw = line * 5000 + b"\r\r\n\rlast\r"
    blocks = [raw[i : i + 4099] for i in range(0, len(raw), 4099)]  # '\r's at the blocks' ends among them
    got = b"".join(twin_mod._unix_ends(iter(blocks)))
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", "1")
    assert got == b"".join(twin_mod._unix_ends(iter(blocks))) == raw.replace(b"\r\n", b"\n")


@pytest.mark.parametrize("case", ["corrupt", "bomb", "empty", "binary", "not-profiler", "missing", "dir"])
def test_bad_input_says_what_the_plain_read_says(case, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = (DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log").read_bytes()
    p = tmp_path / "in.log.gz"
    good = gzip.compress(log.replace(b"\n", b"\r\n"))
    data = {"corrupt": good[:20] + b"\x00" * 40 + good[60:], "bomb": good,
            "empty": gzip.compress(b"  \r\n"), "binary": gzip.compress(b"\x00\x01" * 5000),
            "not-profiler": gzip.compress(b"hello\r\n" * 10)}.get(case)
    if data is not None:
        p.write_bytes(data)
    elif case == "dir":
        p.mkdir()
    if case == "bomb":
        monkeypatch.setattr(twin_mod, "MAX_GUNZIP_BYTES", 1000)
        monkeypatch.setattr("profconv.io.MAX_GUNZIP_BYTES", 1000)
        monkeypatch.setattr(gunzip, "__defaults__", (1000, InputError))  # (its limit's default, bound at import)
    monkeypatch.setattr(twin_mod, "TWIN_FROM", 0)
    assert_cli_alike(monkeypatch, p, lambda m: m.setattr(twin_mod, "_made", lambda path: None), ("--json", "--csv", "--width=80"))
    r = run_cli("parse", str(p), "--json")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and str(p) in r.stderr
    assert [f for f in os.listdir(tmp_path) if f.startswith("profconv-twin-")] == []


def test_a_windows_sweep_is_read_by_the_columnar_sweep_reader(monkeypatch, twins, tmp_path):
    """What the twin is for: a long `nsys stats --format csv` sweep with '\r\n' line ends goes to the
    one C pass over its bytes (nsys_csv_sweep.read), as the same sweep with '\n' does; without the
    twin it is read line by line, to the same ProfileSet."""
    import random

    from test_parse_nsys_csv_sweep import _sweep

    sweep_mod = importlib.import_module("profconv.parse.dialects.nsys_csv_sweep")
    copy = tmp_path / "sweep.log"
    copy.write_bytes(("\r\n".join(_sweep(random.Random(7), 400)) + "\r\n").encode())
    read = sweep_mod.read
    swept: list[bool] = []

    def spy(path, label):
        got = read(path, label)
        swept.append(got is not None)
        return got

    monkeypatch.setattr(sweep_mod, "read", spy)
    on = profconv.parse(str(copy))
    assert (swept, len(twins), on.source, len(on.profiles)) == ([True], 1, str(copy), 400)
    monkeypatch.setattr(twin_mod, "_made", lambda path: None)
    off = profconv.parse(str(copy))
    assert swept == [True, False] and off.frame.equals(on.frame) and off.notes == on.notes


def _stdin_outputs(data: bytes, outs: tuple[str, ...] = ("--json", "--csv")) -> list[tuple[int, str, str]]:
    return [(r.returncode, r.stdout, r.stderr) for r in (run_cli("parse", "-", out, input=data) for out in outs)]


@pytest.mark.parametrize("form", ["plain", "crlf"])
def test_every_log_piped_in_gives_the_files_outputs(form, twins, tmp_path, monkeypatch):
    """`nsys stats … | profconv parse -`: standard input is written to a file a block at a time and read
    as that file is (part by part where it is long; its twin where it has one), rows named '<stdin>'."""
    spooled: list[list[str]] = []
    real = twin_mod._stdin_files
    monkeypatch.setattr(twin_mod, "_stdin_files", lambda: spooled.append(real()) or spooled[-1])
    for log in LOGS:
        data = log.read_bytes()
        want = [(r.returncode, r.stdout.replace(str(log), "<stdin>"), r.stderr.replace(str(log), "<stdin>"))
                for r in (run_cli("parse", str(log), out) for out in ("--json", "--csv"))]
        assert _stdin_outputs(data if form == "plain" else FORMS["crlf"](data)) == want, log
    # each input spooled (2 outputs a log), its CRLF form twinned again from that file
    assert len(spooled) == len(LOGS) * 2 and {len(f) for f in spooled} == {1 if form == "plain" else 2}
    assert len(twins) == (0 if form == "plain" else len(LOGS) * 2)
    assert os.listdir(tmp_path / "twins") == []


@pytest.mark.parametrize("data", [b"", b"  \n", b"\x00\x01" * 100, codecs.BOM_UTF16_LE + "a\r\n".encode("utf-16-le") * 10])
def test_bad_standard_input_says_what_it_said(data, monkeypatch, tmp_path):
    """Empty, binary, UTF-16 of no profile: one line, exit 2, as when standard input was read whole;
    the spooled file gone."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    got = _stdin_outputs(data, ("--json", "--csv", "--width=80"))
    with monkeypatch.context() as m:
        m.setattr(twin_mod, "_stdin_files", lambda: [])
        assert got == _stdin_outputs(data, ("--json", "--csv", "--width=80"))
    assert {c for c, _, _ in got} == {2} and all(err.count("\n") == 1 and "<stdin>" in err for _, _, err in got)
    assert os.listdir(tmp_path) == []


def test_standard_input_twice_is_read_once(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = (DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log").read_bytes()
    r = run_cli("parse", "-", "-", "--csv", input=data)
    with monkeypatch.context() as m:
        m.setattr(twin_mod, "_stdin_files", lambda: [])
        assert (r.returncode, r.stdout, r.stderr) == astuple(run_cli("parse", "-", "-", "--csv", input=data))
    assert r.returncode == 2 and "<stdin>: empty input" in r.stderr and os.listdir(tmp_path) == []


def test_a_gz_piped_in_is_read_as_the_gz_file(tmp_path, monkeypatch):
    """`cat log.gz | profconv parse -`: decompressed as a .gz file is (standard input read whole was
    not: 'binary data')."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    log = DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log"
    r = run_cli("parse", "-", "--csv", input=gzip.compress(log.read_bytes()))
    want = run_cli("parse", str(log), "--csv")
    assert (r.returncode, r.stdout, r.stderr) == (0, want.stdout.replace(str(log), "<stdin>"),
                                                  want.stderr.replace(str(log), "<stdin>"))
    assert r.stdout.count("\n") == 41 and os.listdir(tmp_path) == []


_SCRIPT_PATH = re.compile(r"with \[[^\]\n]*/reports/(\w+)\.py\]")
_SQLITE_PATH = re.compile(r"(Processing \[|Generating SQLite file |from )[^\]\s]*?([\w.-]+\.(?:sqlite|nsys-rep|qdrep))")
NSYS_LOGS = sorted(p for p in DATA.rglob("*.log") if _SCRIPT_PATH.search(p.read_text(errors="replace")))


def _on_windows(text: str) -> str:
    r"""An `nsys stats` log as Windows prints it: 'Processing [C:\Users\me\r.sqlite] with [C:\Program
    Files\NVIDIA Corporation\Nsight Systems 2024.6.2\target-windows-x64\reports\cuda_api_sum.py]...'."""
    text = _SCRIPT_PATH.sub(lambda m: "with [C:\\Program Files\\NVIDIA Corporation\\Nsight Systems 2024.6.2\\"
                            f"target-windows-x64\\reports\\{m.group(1)}.py]", text)
    return _SQLITE_PATH.sub(lambda m: f"{m.group(1)}C:\\Users\\me\\{m.group(2)}", text)


@pytest.mark.parametrize("log", NSYS_LOGS, ids=lambda p: p.name[:50])
def test_nsys_logs_with_windows_paths_read_as_with_linux_ones(log, tmp_path):
    """The report a table belongs to is named by its script's path, '/' or '\\' its separator: a Windows
    run's DX12 or OS runtime report is not read as CUDA API calls."""
    copy = tmp_path / log.name
    copy.write_text(_on_windows(log.read_text()))
    assert "\\reports\\" in copy.read_text()
    assert _outputs(copy, ("--json", "--csv")) == _outputs(log, ("--json", "--csv"))


def test_the_nsys_logs_with_script_paths():
    assert len(NSYS_LOGS) == 4


def test_a_windows_dx12_report_is_noted_not_read(tmp_path):
    head = " Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name\n"
    rule = " --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----\n"
    text = ("Generating SQLite file C:\\Users\\me\\r.sqlite from C:\\Users\\me\\r.nsys-rep\n"
            "Processing [C:\\Users\\me\\r.sqlite] with [C:\\Program Files\\NVIDIA Corporation\\Nsight Systems 2024.6.2"
            "\\target-windows-x64\\reports\\dx12_api_sum.py]... \n\n" + head + rule +
            "     60.0        600000000         10  60000000  60000000      1000  90000000        100.0  "
            "ID3D12CommandQueue::ExecuteCommandLists\n\n"
            "Processing [C:\\Users\\me\\r.sqlite] with [C:\\Program Files\\NVIDIA Corporation\\Nsight Systems 2024.6.2"
            "\\target-windows-x64\\reports\\cuda_api_sum.py]... \n\n" + head + rule +
            "    100.0        100000000         10  10000000  10000000      1000  20000000        100.0  cudaMalloc\n")
    path = tmp_path / "dx12.log"
    path.write_text(text)
    ps = profconv.parse(str(path))
    assert list(zip(ps.frame.section, ps.frame.name)) == [("api", "cudaMalloc")]
    assert ps.notes[0].startswith("lines 4-6: nsys report dx12_api_sum (a report that is not a per-name time summary) "
                                  "is not read")


def test_standard_input_that_cannot_be_written_out_is_one_line(monkeypatch, tmp_path):
    """No room in $TMPDIR once standard input is being read: one line, exit 2 (what was read cannot be
    read again, so it is not read another way); no room for a file at all: read whole, as before."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = (DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log").read_bytes()
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, b):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(twin_mod.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    r = run_cli("parse", "-", "--csv", input=data)
    assert r.returncode == 2 and r.stdout == "" and r.stderr == (
        f"error: -: standard input could not be read into {tmp_path} (No space left on device): set TMPDIR to a "
        "folder with room for it, or name a file\n")
    assert os.listdir(tmp_path) == []
    monkeypatch.setattr(twin_mod.tempfile, "mkstemp", lambda **k: (_ for _ in ()).throw(OSError(30, "Read-only")))
    r = run_cli("parse", "-", "--csv", input=data)
    assert r.returncode == 0 and r.stdout.count("\n") == 41


def _through_fifo(tmp_path: Path, data: bytes, *args: str) -> tuple[int, str, str]:
    """`profconv parse FIFO ARGS` while a thread writes `data` into the named pipe (`<(cmd)`)."""
    import threading

    fifo = tmp_path / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    th = threading.Thread(target=write)
    th.start()
    try:
        r = run_cli("parse", str(fifo), *args)
    finally:
        th.join(timeout=10)
    return r.returncode, r.stdout.replace(str(fifo), "@"), r.stderr.replace(str(fifo), "@")


@pytest.mark.parametrize("form", ["plain", "crlf", "gz"])
def test_a_named_pipe_is_spooled_and_read_as_the_file(form, twins, tmp_path, monkeypatch):
    """`profconv parse <(cmd)`: the pipe's bytes are written to a file a block at a time and read as that
    file is (its twin where it has one), rows named by the pipe's path; read whole, a 20 MB sweep took
    163 MiB where the file takes 45."""
    spooled: list[list[str]] = []
    real = twin_mod._fifo_files
    monkeypatch.setattr(twin_mod, "_fifo_files", lambda path: spooled.append(real(path)) or spooled[-1])
    logs = [p for p in LOGS if "nsys-csv" in str(p) or "nvprof-trace" in str(p) or "ncu-csv" in str(p)]
    for log in logs:
        data = log.read_bytes()
        assert [_through_fifo(tmp_path, FORMS[form](data) if form != "plain" else data, out)
                for out in ("--json", "--csv")] == _outputs(log, ("--json", "--csv")), log
    assert len(spooled) == len(logs) * 2 and {len(f) for f in spooled} == {1 if form == "plain" else 2}
    assert os.listdir(tmp_path / "twins") == []


def test_a_named_pipe_without_a_writer_says_so_at_its_turn(tmp_path, monkeypatch):
    """The pipes are spooled before the first input is read; a pipe no program writes to is said where its
    turn comes (the inputs' errors in order), once, in one line."""
    monkeypatch.setenv("PROFCONV_FIFO_WAIT", "0.2")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    log = DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log"
    r = run_cli("parse", str(tmp_path / "missing.log"), str(fifo), "--json")
    assert r.returncode == 2 and r.stderr == f"error: {tmp_path / 'missing.log'}: no such file\n"
    assert twin_mod.FIFO_FAILED == {}  # (not said, not kept)
    r = run_cli("parse", str(log), str(fifo), "--csv")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "a named pipe that no program wrote to in 0.2 s" in r.stderr
    assert os.listdir(tmp_path) == ["p"] and twin_mod.FIFO_FAILED == {}


GZ_NOTE = "the gzip data ends before its end (the file cut while it was written?): read up to where it stops, {:,} bytes of text"


def _gz_cut(data: bytes, at: float) -> tuple[bytes, bytes]:
    """`data` gzipped and cut at `at` of its compressed bytes (a job killed while `… | gzip > log.gz` ran),
    and the text those bytes hold (zlib's reading of them)."""
    import zlib

    gz = gzip.compress(data)
    cut = gz[: int(len(gz) * at)]
    return cut, zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)


@pytest.mark.parametrize("log", ["nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log",
                                 "nsys-text/ayush-os-a100-vectoradd-stats.log", "seeds/001_f908eb42489cd140.log"])
@pytest.mark.parametrize("times", [1, 400])  # a small log (read whole) and a sweep of it (read part by part)
def test_a_gz_cut_short_is_read_up_to_where_it_stops(log, times, tmp_path, monkeypatch):
    """What the cut stream holds is read as the same text in a plain file is (its last line cut short:
    a row, or reported unplaced), said first among the warnings; it was 'corrupt gzip data' and nothing."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cut, text = _gz_cut((DATA / log).read_bytes() * times, 0.7)
    gz, plain = tmp_path / "run.log.gz", tmp_path / "run.log"
    gz.write_bytes(cut)
    plain.write_bytes(text)
    for out in ("--json", "--csv", "--width=80"):
        a, b = run_cli("parse", str(gz), out), run_cli("parse", str(plain), out)
        assert a.returncode == b.returncode == 0
        if out == "--json":
            got, want = json.loads(a.stdout), json.loads(b.stdout.replace(str(plain), str(gz)))
            assert got["inputs"][0]["warnings"] == [GZ_NOTE.format(len(text))] + want["inputs"][0]["warnings"]
            got["inputs"][0]["warnings"] = want["inputs"][0]["warnings"]
            assert got == want
        elif out == "--csv":
            assert a.stdout == b.stdout.replace(str(plain), str(gz))
            assert f"warning: {gz}: {GZ_NOTE.format(len(text))}\n" in a.stderr
        else:
            assert "the gzip data ends before its end" in a.stdout
    ps = profconv.parse(str(gz))
    assert ps.notes[0] == GZ_NOTE.format(len(text)) and ps.frame.equals(profconv.parse(str(plain)).frame)
    assert [f for f in os.listdir(tmp_path) if f.startswith("profconv-twin-")] == [] and twin_mod.NOTES == {}


def test_the_parts_of_a_gz_cut_short_say_it_first(tmp_path, monkeypatch):
    from profconv.parse import parts

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    cut, text = _gz_cut((DATA / "seeds/001_f908eb42489cd140.log").read_bytes() * 400, 0.5)
    gz = tmp_path / "sweep.log.gz"
    gz.write_bytes(cut)
    got = list(parts(str(gz)))
    assert len(got) > 1 and got[0].notes[0] == GZ_NOTE.format(len(text))
    assert sum(p.notes.count(GZ_NOTE.format(len(text))) for p in got) == 1


def test_a_gz_cut_in_its_header_is_still_corrupt(tmp_path):
    gz = tmp_path / "run.log.gz"
    gz.write_bytes(gzip.compress((DATA / "nsys-text/ayush-os-a100-vectoradd-stats.log").read_bytes())[:12])
    r = run_cli("parse", str(gz), "--json")
    assert r.returncode == 2 and "corrupt gzip data" in r.stderr and r.stderr.count("\n") == 1
