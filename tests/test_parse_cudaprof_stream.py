"""Long logs of the legacy CUDA command-line profiler (`cuda_profile_*.log` of many runs, one after the
other: each opened by its `CUDA_PROFILE_LOG_VERSION` line, with its own `CUDA_DEVICE`) read part by
part (profconv/parse/stream.py) give what the whole-file parse gives: profiles and their devices, every
row cell, unplaced lines and notes; the CLI's --json, --csv and table of a streamed sweep are the
whole file's bytes. A log's device is its own, unlike nvprof's file-wide Device line, which still
makes a log be read whole (Dialect.whole_if)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profconv.nogc import paused
from profconv.parse import stream as stream_mod
from profconv.parse.dialects import cudaprof
from tests.stream_check import assert_cli_streamed_as_whole, check_parts, split_repeated_and_mixed
from tests.test_parse_cudaprof import CSV_SHORT_COPIES

DATA = Path(__file__).parent / "data"
KEY_VALUE = DATA / "cudaprof" / "dmikushin-kernelgen-sincos-tesla-c2070-cuda-profile-log.log"
# program output between events, an event whose gputime is damaged (unplaced), a second device
STRAY = """\
# CUDA_PROFILE_LOG_VERSION 2.0
# CUDA_DEVICE 0 GeForce GTX 480
# CUDA_CONTEXT 1
method,gputime,cputime,occupancy
method=[ memcpyHtoD ] gputime=[ 12.5 ] cputime=[ 20.000 ]
iteration 1 done
method=[ step_kernel ] gputime=[ 301.250 ] cputime=[ 9.000 ] occupancy=[ 1.000 ]
method=[ step_kernel ] gputime=[ nan ] cputime=[ 9.000 ] occupancy=[ 1.000 ]
method=[ memcpyDtoH ] gputime=[ 25.0 ] cputime=[ 30.000 ]
"""


@pytest.fixture
def logs(tmp_path) -> list[str]:
    (tmp_path / "csv.log").write_text(CSV_SHORT_COPIES)
    (tmp_path / "stray.log").write_text(STRAY)
    return [str(KEY_VALUE), str(tmp_path / "csv.log"), str(tmp_path / "stray.log")]


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_logs(logs, tmp_path, small_windows):
    """Each log three times over and each next to another: split at every log start that allows it,
    the parts are the whole parse (devices included)."""
    # 5 of 6 (when written): the short CSV log three times over is 570 bytes, read in the window that
    # grows past its second start
    assert split_repeated_and_mixed(logs, tmp_path, small_windows) == 5


def test_a_sweep_of_logs_on_two_devices_is_read_in_parts_each_with_its_device(logs, tmp_path, monkeypatch):
    """A 4 MB sweep of the three logs in turn is read in parts; each profile keeps its own log's
    device; the CLI's three outputs are those of the file read whole."""
    path = tmp_path / "sweep.log"
    text = "".join(Path(f).read_text() for f in logs)
    n = 4_300_000 // len(text) + 1
    path.write_text(text * n)
    with paused():
        parts = list(stream_mod.parts(str(path)))
    devices = [p.device for part in parts for p in part.profiles]
    assert len(parts) > 10
    # the stray log's program output ends its first run of events: a profile more (as read whole)
    assert devices == ["Tesla C2070", "Tesla C1060", "GeForce GTX 480", "GeForce GTX 480"] * n
    assert sum(len(p.unplaced) for p in parts) == n  # each stray log's damaged gputime, said
    assert check_parts(path, 1 << 16) > 10
    assert_cli_streamed_as_whole(path, monkeypatch)


def test_nvprofs_device_line_still_makes_a_log_be_read_whole(tmp_path):
    """nvprof gives every profile the file's last Device line: a window that holds one is not cut."""
    head = "==7== NVPROF is profiling process 7, command: ./a\n==7== Profiling result:\n"
    table = ("            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
             " GPU activities:  100.00%  3.0000ms         3  1.0000ms  0.5000ms  1.5000ms  k(float*)\n")
    path = tmp_path / "nvprof.log"
    path.write_text((head + table) * 40 + '==7== Metric result:\nInvocations  Metric Name  Metric Description  Min  Max  Avg\n'
                    'Device "Tesla K80 (0)"\n' + (head + table) * 40)
    with pytest.raises(stream_mod.NotStreamable):
        list(stream_mod.Stream(str(path), window=400))
    assert cudaprof.DIALECT.part_start == "CUDA_PROFILE_LOG_VERSION" and not cudaprof.DIALECT.whole_if
