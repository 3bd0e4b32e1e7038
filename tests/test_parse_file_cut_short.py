"""A mapped input cut short while it is read (another program truncating it: a profiler run again into
the same file): profconv.parse._mapguard catches the read past its new end (SIGBUS, which would end
the process), the reader says InputChanged (one `error:` line, exit 2); a fault elsewhere still ends
the process as it would have."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest

import profconv
from profconv.errors import ExitStatus, InputChanged
from profconv.parse import file_windows, native
from profconv.parse.dialects import ncu_raw
from tests.fastpath_compare import write_lines
from tests.test_parse_nsys_csv_sweep import _sweep

GUARD = file_windows._guard_module()
pytestmark = pytest.mark.skipif(GUARD is None or not GUARD.SIGNALS,
                                reason="the guard is not built, or this platform has no SIGBUS")
PAGE = 4096


def _file(tmp_path, pages=3):
    path = tmp_path / "f"
    path.write_bytes(b"a" * (pages * PAGE) + b"b" * 100)
    return path


def test_a_read_past_the_new_end_reads_zeros_and_the_windows_say_the_file_changed(tmp_path):
    path = _file(tmp_path)
    with open(path, "rb") as f, pytest.raises(InputChanged) as got:
        with file_windows.windows(f, PAGE, whole=True) as src:
            os.truncate(path, PAGE)
            assert src.ascii(10**6)  # (numpy's max over the mapping: it faults past the cut and goes on)
            data, last = src.window(4 * PAGE)
            assert bytes(data[PAGE - 2 : PAGE + 2]) == b"aa\x00\x00" and bytes(data[-3:]) == b"\x00" * 3 and last
            data.release()
    assert str(got.value) == (f"{path}: cut short while it was read (12,388 bytes when opened, 4,096 now): "
                              "another program truncated or rewrote it; read it again once it is written")


def test_a_mapping_read_whole_before_the_cut_or_not_cut_is_not_an_error(tmp_path):
    path = _file(tmp_path)
    with open(path, "rb") as f, file_windows.windows(f, PAGE, whole=True) as src:
        assert src.ascii(10**6)  # (every page read: none faults later)
    with open(path, "rb") as f, file_windows.windows(f, PAGE, whole=True) as src:
        assert src.ascii(10**6)
        os.truncate(path, PAGE)  # cut after every page was read: what was read is the file as it was
    mod = GUARD
    assert mod.unguard(-1) == 0
    with pytest.raises(ValueError, match="not a token"):
        mod.unguard(5)


def test_several_mappings_guarded_at_once_each_counts_its_own(tmp_path):
    a, b = _file(tmp_path), tmp_path / "g"
    b.write_bytes(b"c" * 5 * PAGE)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        ma, mb = file_windows.Mapped(fa, PAGE), file_windows.Mapped(fb, PAGE)
        os.truncate(b, 0)
        assert bytes(ma.view[-1:]) == b"b" and bytes(mb.view[2 * PAGE : 2 * PAGE + 1]) == b"\x00"
        assert (ma.close(), mb.close()) == (0, 1)


def _cut_when_mapped(monkeypatch, path, keep):
    """Each mapping of `path` cut to `keep` bytes right after it is mapped."""
    made = file_windows.Mapped.__init__

    def init(self, f, step):
        made(self, f, step)
        os.truncate(path, keep)

    monkeypatch.setattr(file_windows.Mapped, "__init__", init)


@pytest.fixture
def sweep(tmp_path):
    """An nsys CSV sweep of 400 runs (~100 KB: the columnar sweep's mapped windows)."""
    path = write_lines(tmp_path, _sweep(random.Random(3), 400))
    assert profconv.parse(str(path)).profiles  # (read whole, not cut)
    return path


@pytest.mark.skipif(native.pure_python(), reason="PROFCONV_PURE_PYTHON: the sweep is read by the readers, not mapped")
def test_the_library_and_the_cli_say_the_file_changed_not_rows_of_zeros(sweep, monkeypatch, cli):
    size = sweep.stat().st_size
    text = sweep.read_text()
    _cut_when_mapped(monkeypatch, sweep, size // 3)
    with pytest.raises(InputChanged, match="cut short while it was read"):
        profconv.parse(str(sweep))
    for out in ("--csv", "--json", ()):
        sweep.write_text(text)
        r = cli("parse", str(sweep), *([out] if out else []))
        assert r.returncode == ExitStatus.BAD_INPUT, (out, r.stderr)
        assert r.stderr.startswith(f"error: {sweep}: cut short while it was read ({size:,} bytes when opened, ")
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_an_ncu_raw_pages_mapped_read_says_the_file_changed(tmp_path, monkeypatch):
    path = tmp_path / "raw.csv"
    header = '"ID","Process ID","Kernel Name","gpu__time_duration.sum"\n"","","","nsecond"\n'
    path.write_text(header + "".join(f'"{k}","1","k{k}","{k + 1}"\n' for k in range(60_000)))
    monkeypatch.setattr(ncu_raw, "FILE_FROM", 1)
    assert ncu_raw.find_file(str(path)) is not None
    real = ncu_raw.find

    def find(mm, keep):
        os.truncate(path, 4 * PAGE)
        return real(mm, keep=keep)

    monkeypatch.setattr(ncu_raw, "find", find)
    with pytest.raises(InputChanged, match="cut short while it was read"):
        ncu_raw.find_file(str(path))


def test_a_fault_in_a_mapping_not_guarded_still_ends_the_process(tmp_path):
    """(A child: SIGBUS there is the default's, or faulthandler's where it is on, with one guard held.)"""
    a, b = _file(tmp_path), tmp_path / "g"
    code = textwrap.dedent(f"""
        import mmap, os
        from profconv.parse import file_windows, native
        fa = open({str(a)!r}, "rb")
        held = file_windows.Mapped(fa, 4096)
        fb = open({str(b)!r}, "rb")
        mm = mmap.mmap(fb.fileno(), 0, access=mmap.ACCESS_READ)
        os.truncate({str(b)!r}, 0)
        print("read", mm[3 * 4096], flush=True)
    """)
    for flags in ([], ["-X", "faulthandler"]):
        b.write_bytes(b"c" * 5 * PAGE)
        r = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=60)
        assert r.returncode == -signal.SIGBUS, (flags, r.stdout, r.stderr)
        assert "read" not in r.stdout
        assert ("Bus error" in r.stderr) == bool(flags)
