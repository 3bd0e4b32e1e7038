"""Tracebacks and hangs of ../shared/findings/hostile-2.md that are not a parser table's (T2-T5, T7-T9,
H3, the exit-status nits): each input gives output or one line with a documented exit status. (The
table classes T1, T6, D1-D4, D7, H1, H2 belong to the parser engineers and are tested with the parsers.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ("==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n"
           " GPU activities: 100.00% 1ms 1 1ms 1ms 1ms {name}\n")


def _profconv(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "profconv", *args], capture_output=True, cwd=ROOT, timeout=60,
                          env={**os.environ, **(env or {})}, **kw)


@pytest.mark.parametrize("value, seconds", [("0.00001 ms", 1e-8), ("20000000000000000 ms", 2e13), ("3.5 us", 3.5e-6)])
def test_op_time_whose_value_prints_with_an_exponent(value, seconds):
    """T2: `Op Time: 0.00001 ms` built '1e-05e-3' and raised ValueError."""
    from profconv import parse_text

    ps = parse_text(f"Op Time: {value}\n" + SUMMARY.format(name="k"))
    assert ps.profiles[0].op_times_s == [pytest.approx(seconds, rel=1e-12)]


def _notebook(outputs) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": [], "outputs": outputs}], "nbformat": 4,
                       "nbformat_minor": 5, "metadata": {}})


def test_notebook_with_a_lone_surrogate_gives_strict_json(cli, tmp_path):
    """T5: a notebook's `\\ud800` escape wrote half the JSON, then UnicodeEncodeError (exit 1)."""
    text = _notebook([{"output_type": "stream", "name": "stdout", "text": [SUMMARY.format(name="k\ud800x")]}])
    assert "\\ud800" in text  # the JSON escape of a lone surrogate, as the reproducer holds it
    nb = tmp_path / "nb.ipynb"
    nb.write_text(text)
    for args in (["--json"], ["--csv"], []):
        r = cli("parse", nb, *args)
        assert r.returncode == 0, r.stderr
    doc = json.loads(cli("parse", nb, "--json").stdout)
    assert [row["name"] for row in doc["rows"]] == ["k\ufffdx"]
    from profconv import parse_text

    assert parse_text(SUMMARY.format(name="a\udc80b")).frame["name"].tolist() == ["a\ufffdb"]  # the API too


@pytest.mark.parametrize("text", [
    '{"cells": ' + "[" * 100_000 + "]" * 100_000 + ', "nbformat": 4}',  # T3: RecursionError
    _notebook(5),  # T4: "outputs": 5, TypeError
    json.dumps({"cells": [{"cell_type": "code", "outputs": {"a": 1}}], "nbformat": 4}),
])
def test_malformed_notebooks_are_one_line(cli, tmp_path, text):
    nb = tmp_path / "nb.ipynb"
    nb.write_text(text)
    r = cli("parse", nb, "--json")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "no profiler output" in r.stderr


@pytest.mark.parametrize("encoding, args", [("latin-1", ["--csv"]), ("cp1252", []), ("ascii", ["--json"])])
def test_output_encodings_that_cannot_hold_a_name(tmp_path, encoding, args):
    """T7: PYTHONIOENCODING=cp1252 (a Windows redirect) crashed on a CJK or emoji name half-way through."""
    log = tmp_path / "u.log"
    log.write_text(SUMMARY.format(name="卷积_核😀"), encoding="utf-8")
    r = _profconv("parse", str(log), *args, env={"PYTHONIOENCODING": encoding})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"Traceback" not in r.stderr and b"1 ms" in r.stdout or b"1000000" in r.stdout


def test_closed_stdout_is_a_warning_not_a_traceback(tmp_path):
    """T8: `profconv parse LOG >&-` raised AttributeError ('NoneType' has no attribute 'write')."""
    log = tmp_path / "k.log"
    log.write_text(SUMMARY.format(name="k"))
    r = subprocess.run([sys.executable, "-m", "profconv", "parse", str(log)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, cwd=ROOT, timeout=60, preexec_fn=lambda: os.close(1))
    assert r.returncode == 0 and r.stderr == b"warning: standard output is closed: nothing is printed there\n"


def test_error_line_to_a_full_stderr_keeps_its_exit_status():
    """Exit-status nit: `profconv parse missing.log 2>/dev/full` exited 1, not 2."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "profconv", "parse", "missing.log"], stdout=subprocess.PIPE,
                           stderr=full, cwd=ROOT, timeout=60)
    assert r.returncode == 2


def test_out_of_memory_is_one_line_exit_5(cli, tmp_path, monkeypatch):
    """T9: a MemoryError (a 1.5 GB input under `ulimit -v`) was an 'internal error' (exit 1)."""
    from profconv.parse import emit

    def no_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(emit, "read_whole", no_memory)
    log = tmp_path / "k.log"
    log.write_text(SUMMARY.format(name="k"))
    r = cli("parse", log, "--width", "80")
    assert r.returncode == 5 and r.stderr.startswith("error: out of memory: the input is too large")


def test_a_fifo_record_is_refused_and_a_fifo_log_waits_saying_why(cli, tmp_path):
    """H3: `mkfifo r.json; profconv report r.json` hung with no message."""
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    r = cli("report", fifo)
    assert r.returncode == 2 and "not a regular file (a FIFO, device or socket)" in r.stderr
    log = tmp_path / "p.log"
    os.mkfifo(log)

    def writer():
        time.sleep(3)
        with open(log, "w") as fh:
            fh.write(SUMMARY.format(name="from_the_pipe"))

    t = threading.Thread(target=writer)
    t.start()
    r = cli("report", log, "--json")
    t.join()
    assert r.returncode == 0 and "from_the_pipe" in r.stdout
    assert "a FIFO with nothing written to it yet: waiting for its writer" in r.stderr


def test_record_reader_refuses_what_is_not_a_regular_file(tmp_path):
    from profconv.errors import InputError
    from profconv.io import read_bytes

    os.mkfifo(tmp_path / "f")
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes(tmp_path / "f")  # returns at once: never opened


def test_out_on_a_read_only_file_system_says_so(tmp_path, monkeypatch):
    """Exit-status nit: `run --out` on a read-only file system said 'Permission denied'."""
    import errno

    from profconv.session import recording

    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    monkeypatch.setattr(recording, "_read_only", lambda p: True)
    with pytest.raises(OSError) as info:
        recording.check_out(tmp_path / "o", "run.json")
    assert info.value.errno == errno.EROFS and "Read-only file system" in str(info.value)


def test_a_finished_command_is_not_killed_by_a_late_sigterm(monkeypatch, capsys):
    """Exit-status nit: a SIGTERM in the last ~50 ms of `report` (after its handler was put back) ended the
    process with -15 although the files were complete: the console script ignores SIGTERM once it exits."""
    import signal

    from profconv import cli

    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as done:
            cli.main(["models"])
        assert done.value.code == 0 and signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)
