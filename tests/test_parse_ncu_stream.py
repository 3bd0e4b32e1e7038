"""Long sweeps of `ncu --csv` runs (a page each, after its run's '==PROF== Connected to process' line)
read part by part (profconv/parse/stream.py) give what the whole-file parse gives: profiles with their
run's pid and command, every row cell, unplaced lines and notes; the CLI's --json, --csv and table of a
streamed sweep are the whole file's bytes. A cut is only at a page's header where no console page is
open; a '%' unit and 'Launch Statistics' are left to nvprof's and nsys's detects on each window."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

import profconv
from profconv.nogc import paused
from profconv.parse import stream as stream_mod
from profconv.parse.dialects import ncu
from profconv.parse.model import Document
from tests.stream_check import assert_cli_streamed_as_whole, check_parts, split_repeated_and_mixed

DATA = Path(__file__).parent / "data"
PAGES = sorted(glob.glob(str(DATA / "ncu-csv" / "*.log")))
# every test log with an ncu run in it (console pages, --csv pages, ncu next to other output)
RUNS = sorted(p for p in glob.glob(str(DATA / "**" / "*.log"), recursive=True)
              if "==PROF== Connected to process" in Path(p).read_text(errors="replace"))
RULES = DATA / "ncu-csv" / "h200-ncu2025.3-scale-add-rule-columns-two-launches.csv.log"  # details page, 2024+
NVTX = DATA / "ncu-csv" / "yktian-paddle-demo-nvtx-metrics.csv.log"  # raw page with NVTX columns


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_pages(tmp_path, small_windows):
    """Every real ncu --csv log three times over, and each next to another: split at every page that
    allows it, the parts are the whole parse."""
    assert len(PAGES) == 8
    assert split_repeated_and_mixed(PAGES, tmp_path, small_windows) == 16


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_console_logs(tmp_path, small_windows):
    """Every real log with an ncu run in it three times over, and each next to another: split
    at every run's '[N] app@host' line or page that allows it, the parts are the whole parse."""
    assert len(RUNS) == 33
    # 42 of 66 when written: the others hold fewer than two runs in a window of 300 bytes, no profile,
    # or another profiler's output (read whole)
    assert split_repeated_and_mixed(RUNS, tmp_path, small_windows) == 42


def test_a_sweep_is_read_in_parts_each_profile_with_its_runs_pid(tmp_path, monkeypatch):
    """A 4 MB sweep of runs (a details page and a raw page in turn, each run its own pid): read in
    parts, each profile with the pid and command of the '==PROF==' line before its page (in the part
    before it); the CLI's three outputs are those of the file read whole."""
    rules, nvtx = RULES.read_text(), NVTX.read_text()
    runs = []
    n = 4_300_000 // (len(rules) + len(nvtx)) + 1
    for k in range(n):
        runs.append(rules.replace("process 712 (", f"process {1000 + k} (").replace('"712"', f'"{1000 + k}"'))
        runs.append(nvtx)
    path = tmp_path / "sweep.log"
    path.write_text("".join(runs))
    with paused():
        parts = list(stream_mod.parts(str(path)))
    pids = [p.pid for part in parts for p in part.profiles]
    assert len(parts) > 10
    assert pids == [x for k in range(n) for x in (1000 + k, 93785)]
    assert {p.command for part in parts for p in part.profiles} == {
        "/tmp/app/a", "/home/yujixuan/anaconda3/envs/CGCNN_paddle/bin/python3.8"}
    assert check_parts(path, 1 << 16) > 10
    assert_cli_streamed_as_whole(path, monkeypatch)


def test_a_profile_starts_state_is_the_console_pages_too():
    """The state kept at a profile start (a --csv page's header after a console kernel's sections:
    one process's output in both forms) is what a fresh parse from there needs: the run's pid and
    command and the console page's kernel and table columns."""
    console = ("==PROF== Connected to process 9 (/a)\n"
               "  k(float *) (4, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n"
               "    Section: GPU Speed Of Light Throughput\n"
               "    ----------------------- ----------- ------------\n"
               "    Metric Name             Metric Unit Metric Value\n"
               "    ----------------------- ----------- ------------\n"
               "    Duration                         ns        5,184\n")
    page = RULES.read_text()

    def resume(text: str) -> dict:
        return ncu.parse(Document(lines=text.splitlines(), label="x", text=text)).resume

    fresh = (712, "/tmp/app/a", None, None, 0, None, 0)
    assert resume(page * 2) == {4: fresh, 4 + page.count("\n"): fresh}
    spans = ((4, 27), (28, 39), (40, 52))
    assert resume(console + page) == {11: (712, "/tmp/app/a", "k(float *)", spans, 1, None, 0)}


@pytest.mark.parametrize("marker", ["NVPROF is profiling process 7", "CUDA API Statistics:\n"])
def test_a_sweep_with_another_profilers_output_is_read_whole(tmp_path, marker):
    path = tmp_path / "mixed.log"
    text = RULES.read_text()
    path.write_text(text * 3 + marker + "\n" + text * 3)
    with pytest.raises(stream_mod.NotStreamable):
        list(stream_mod.Stream(str(path), window=2000))
    assert ncu.DIALECT.part_start == "==PROF== Connected to process"


REAL_RUNS = {  # made on the H200 (tests/data/SOURCES.md, session 23): runs one after the other in one file
    "ncu-csv/h200-ncu2025.3-scale-add-square-three-runs.csv.log": ([(709, 4), (773, 170), (867, 506)], 909),
    "ncu-csv/h200-ncu2025.3-scale-add-square-raw-two-runs.csv.log": ([(1282, 4), (1429, 21)], 9726),
    "ncu-text/h200-ncu2025.3-scale-add-square-three-runs.log": ([(995, 7), (1059, 330), (1158, 982)], 909),
}


@pytest.mark.parametrize("name", sorted(REAL_RUNS))
def test_real_runs_one_after_the_other_are_read_in_parts(name, small_windows):
    """Real ncu runs appended to one file (`ncu --csv ./app N >> log`, `ncu ./app N >> log`): a profile
    a run with its own pid, read in parts the whole parse's; the one-process log of 45 kernels is one
    profile, read whole."""
    profiles, rows = REAL_RUNS[name]
    ps = profconv.parse(str(DATA / name))
    assert [(p.pid, p.line_start) for p in ps.profiles] == profiles and ps.rows.n == rows
    assert ps.unplaced == [] and ps.notes == []
    assert check_parts(DATA / name, small_windows) == 2
    one = DATA / "ncu-text" / "h200-ncu2025.3-scale-add-square-one-process-45-kernels.log"
    assert check_parts(one, small_windows) == 0 and len(profconv.parse(str(one)).profiles) == 1
