"""profconv.parse.file_windows: a file's bytes a window at a time, mapped or read through a buffer."""

from __future__ import annotations

import os
from array import array

import pytest

from profconv.parse import file_windows, native, read_buffer

DATA = b"".join(b"line %05d of the file\n" % k for k in range(3000))  # 69,000 bytes, 23 a line


def _walk(src, cuts):
    """The windows' bytes and ends as a reader meets them: each window `want` bytes, `cuts[k]` of it taken."""
    seen = []
    for want, cut in cuts:
        data, last = src.window(want)
        seen.append((bytes(data), last, src.base))
        data.release()
        if last:
            break
        src.advance(cut)
    return seen


CUTS = [(10_000, 9_999), (10_000, 1), (40_000, 40_000), (5_000, 0), (100_000, 0)]
EXPECTED = [(DATA[0:10_000], False, 0), (DATA[9_999:19_999], False, 9_999), (DATA[10_000:50_000], False, 10_000),
            (DATA[50_000:55_000], False, 50_000), (DATA[50_000:], True, 50_000)]


def test_a_regular_file_is_mapped_and_its_windows_are_its_bytes(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(DATA)
    with open(path, "rb") as f, file_windows.windows(f, 4096) as src:
        assert isinstance(src, file_windows.Mapped) and src.step == 4096
        assert src.head(10) == DATA[:10]
        assert _walk(src, CUTS) == EXPECTED
        assert src.rfind(b"line 02999", len(DATA) - src.base) == len(DATA) - 23 - src.base
        assert src.rfind(b"nowhere", 100) == -1


def test_a_whole_file_read_maps_windows_of_WHOLE_bytes(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(DATA)
    with open(path, "rb") as f, file_windows.windows(f, 4096, whole=True) as src:
        assert src.step == file_windows.WHOLE
        data, last = src.window(src.step)
        assert bytes(data) == DATA and last
        data.release()


def test_a_file_that_cannot_be_mapped_is_read_through_the_buffer_with_the_same_windows(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(DATA)
    monkeypatch.setattr(read_buffer, "_KEPT", [])
    monkeypatch.setattr(file_windows, "mappable", lambda f: False)
    with open(path, "rb") as f, file_windows.windows(f, 4096, whole=True) as src:
        assert isinstance(src, file_windows.Buffered) and src.step == 4096
        assert src.head(10) == DATA[:10]  # (read, the file put back at its start)
        assert _walk(src, CUTS) == EXPECTED
    assert read_buffer._KEPT == []  # (grown past its 8,192 bytes for a window of 40,000: not kept)


def test_a_pipe_and_an_empty_file_are_not_mapped(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    r, w = os.pipe()
    os.write(w, DATA[:1000])
    os.close(w)
    with open(tmp_path / "empty", "rb") as f:
        assert not file_windows.mappable(f)
        with file_windows.windows(f, 4096) as src:
            data, last = src.window(4096)
            assert bytes(data) == b"" and last
            data.release()
    with open(r, "rb") as f, file_windows.windows(f, 256) as src:
        assert isinstance(src, file_windows.Buffered)
        assert src.head(300) == DATA[:300]  # (a pipe's head stays in the buffer: read again from there)
        assert _walk(src, [(600, 500), (600, 0)]) == [(DATA[:600], False, 0), (DATA[500:1000], True, 500)]


@pytest.mark.parametrize("mapped", [True, False])
def test_ascii_looks_at_the_first_n_bytes_only_mapped_or_buffered(tmp_path, monkeypatch, mapped):
    path = tmp_path / "f"
    path.write_bytes(DATA[:5000] + "é".encode() + DATA[:100])  # (the first byte not ASCII: 5,000)
    if not mapped:
        monkeypatch.setattr(file_windows, "mappable", lambda f: False)
    with open(path, "rb") as f, file_windows.windows(f, 4096) as src:
        assert isinstance(src, file_windows.Mapped) is mapped
        assert src.ascii(5000) and src.ascii(1) and src.ascii(0)
        assert not src.ascii(5001) and not src.ascii(1 << 30)  # (past the end: the whole file)
        assert src.head(12) == DATA[:12]  # (a buffered head read again from the file's start)
    (tmp_path / "g").write_bytes(DATA)
    with open(tmp_path / "g", "rb") as f, file_windows.windows(f, 4096) as src:
        assert src.ascii(1 << 30)


def test_a_view_still_held_does_not_stop_the_close(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(DATA)
    with open(path, "rb") as f, file_windows.windows(f, 4096) as src:
        held, _ = src.window(100)
    assert bytes(held) == DATA[:100]  # (unmapped when it goes)


@pytest.mark.skipif(native.load("_summarycells") is None, reason="the C module is not built")
def test_nvprof_sweep_writes_into_the_arrays_alloc_gives():
    scan = native.load("_summarycells")
    head = b'==7== NVPROF is profiling process 7, command: ./a\n==7== Profiling result:\n'
    header = b'"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"'
    units = b',%,ms,,ms,ms,ms,'
    rows = b'"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\n'
    data = head + header + b"\n" + units + b"\n" + rows
    given = []

    def alloc(n):
        given.append([array("q" if j == 2 else "d", bytes(8)) * n for j in range(6)])
        return given[-1]

    plain = scan.nvprof_sweep(data, header, units, (6, 6, 6, 6), True)
    into = scan.nvprof_sweep(data, header, units, (6, 6, 6, 6), True, alloc)
    cells = into[3][0]
    assert [c is g for c, g in zip(cells, given[0])] == [True] * 6
    assert [c.tolist() for c in cells] == [[60.0], [1_200_000.0], [2], [600_000.0], [500_000.0], [700_000.0]]
    assert [bytes(c) for c in cells] == list(plain[3][0])
    with pytest.raises(ValueError):
        scan.nvprof_sweep(data, header, units, (6, 6, 6, 6), True, lambda n: [array("d")] * 6)


def test_the_pages_behind_are_let_go_and_read_again_where_asked_for(tmp_path):
    data = DATA * 5  # 345,000 bytes: past 16 pages behind more than once
    path = tmp_path / "f"
    path.write_bytes(data)
    with open(path, "rb") as f, file_windows.windows(f, 50_000) as src:
        got = []
        while True:
            window, last = src.window(src.step)
            got.append(bytes(window[:7_000]))
            window.release()
            if last:
                break
            src.advance(7_000)
        assert src._dropped % file_windows.PAGE == 0 and 0 <= src.base - src._dropped < 17 * file_windows.PAGE
        assert src._dropped >= 278_528  # (let go 16 pages or more at a time)
        assert b"".join(got) == data[: len(got) * 7_000]
        assert src.head(23) == data[:23]  # (the first pages let go: read again from the page cache)


def test_a_sweeps_profile_and_section_are_runs_not_page_views_so_the_table_lays_its_profiles_out_together(tmp_path):
    """A Rows whose profile or section is a View other than Runs is an ncu page's to the terminal table,
    which then draws each profile's tables one by one (4x the time of a 2 MB nvprof --csv sweep): the sweeps
    read through the mapped windows keep both as Runs (a value a run of rows, not a list entry a row),
    whole (`read`) and a part at a time (`parts`), which the table takes as lists."""
    from profconv.parse.colviews import Runs, holds_page_views
    from profconv.parse.dialects.nvprof import csv_sweep

    profile = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
               '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
               '"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\n'
               '"GPU activities",40.000000,0.800000,1,0.800000,0.800000,0.800000,"[CUDA memcpy HtoD]"\n'
               '"API calls",100.000000,3.000000,3,1.000000,0.500000,2.000000,"cudaMalloc"\n')
    path = tmp_path / "sweep.log"
    path.write_text(profile * 40)
    whole = csv_sweep.read(str(path), "sweep.log")
    parts = [p for p, _, _ in csv_sweep.parts(str(path), "sweep.log", 4096)]
    assert whole is not None and whole.rows.n == 120 and len(parts) > 1 and None not in parts
    for rows in [whole.rows] + [p.rows for p in parts]:
        assert list(rows.col("section")[:3]) == ["gpu", "gpu", "api"]
        assert isinstance(rows.col("profile"), Runs) and isinstance(rows.col("section"), Runs)
        assert not holds_page_views((rows.col("profile"), rows.col("section")))
