"""A mapped input cut short while it is read (another program truncating it: a profiler run again into
the same file): profconv.parse._mapguard catches the read past its new end (SIGBUS, which would end
the process), the reader says InputChanged (one `error:` line, exit 2); a fault elsewhere still ends
the process as it would have."""

from __future__ import annotations

import mmap
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

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


def test_a_file_not_cut_or_grown_is_not_an_error_one_cut_after_its_pages_were_read_is(tmp_path):
    path = _file(tmp_path)
    with open(path, "rb") as f, file_windows.windows(f, PAGE, whole=True) as src:
        assert src.ascii(10**6)
        with open(path, "ab") as more:
            more.write(b"c" * PAGE)  # (appended while mapped: read as it was when mapped)
        assert bytes(src.view[-1:]) == b"b" and len(src.view) == 3 * PAGE + 100
    with open(path, "rb") as f, pytest.raises(InputChanged, match=r"\(16,484 bytes when opened, 4,096 now\)"):
        with file_windows.windows(f, PAGE, whole=True) as src:
            assert src.ascii(10**6)  # every page read, none faults later: the file is shorter when let go
            os.truncate(path, PAGE)
    assert GUARD.unguard(-1) == 0
    with pytest.raises(ValueError, match="not a token"):
        GUARD.unguard(5)


def test_a_cut_inside_a_page_reads_zeros_to_its_end_with_no_fault_and_is_still_said(tmp_path):
    """(The kernel fills the new last page past the end with zeros: a reader may stop at the first NUL.)"""
    path = _file(tmp_path)
    with open(path, "rb") as f, pytest.raises(InputChanged, match="12,388 bytes when opened, 5,000 now"):
        with file_windows.windows(f, PAGE, whole=True) as src:
            os.truncate(path, 5000)
            assert bytes(src.view[4998:5002]) == b"aa\x00\x00"


def test_several_mappings_guarded_at_once_each_counts_its_own(tmp_path):
    a, b = _file(tmp_path), tmp_path / "g"
    b.write_bytes(b"c" * 5 * PAGE)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        ma, mb = (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) for f in (fa, fb))
        ta, tb = GUARD.guard(ma), GUARD.guard(mb)
        assert ta >= 0 and tb >= 0 and ta != tb
        os.truncate(b, PAGE)
        assert ma[-1:] == b"b" and mb[2 * PAGE : 2 * PAGE + 2] == b"\x00\x00" and mb[4 * PAGE] == 0  # (one fault)
        assert (GUARD.unguard(ta), GUARD.unguard(tb)) == (0, 1)
        ma.close()
        mb.close()
    with pytest.raises(ValueError, match="not a token"):
        GUARD.unguard(ta)  # (let go: its slot free again)


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
    whole = profconv.parse(str(path))  # (read whole, not cut)
    assert (len(whole.profiles), whole.rows.n) == (400, 1184)
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
    found = ncu_raw.find_file(str(path))
    assert found.dialect == "ncu" and len(found.tables) == 1
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


NVPROF_CSV = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
              '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
              '"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\n'
              '"GPU activities",40.000000,0.800000,1,0.800000,0.800000,0.800000,"[CUDA memcpy HtoD]"\n'
              '"API calls",100.000000,3.000000,3,1.000000,0.500000,2.000000,"cudaMalloc"\n')
SUMMARY_TEXT = Path(__file__).parent / "data/nvprof-new/tyler-cs566-reductions.log"


@pytest.mark.skipif(native.pure_python(), reason="PROFCONV_PURE_PYTHON: the sweeps are read by the readers, not mapped")
@pytest.mark.parametrize("kind, profiles, rows", [("nvprof-csv", 400, 1200), ("summary-text", 400, 8000)])
def test_the_nvprof_sweeps_say_the_file_changed_too(kind, profiles, rows, tmp_path, monkeypatch):
    path = tmp_path / f"{kind}.log"
    path.write_text(NVPROF_CSV * 400 if kind == "nvprof-csv" else SUMMARY_TEXT.read_text() * 400)
    whole = profconv.parse(str(path))
    assert (len(whole.profiles), whole.rows.n) == (profiles, rows)
    _cut_when_mapped(monkeypatch, path, path.stat().st_size // 3)
    with pytest.raises(InputChanged, match="cut short while it was read"):
        profconv.parse(str(path))
