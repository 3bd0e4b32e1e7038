"""Long OpenACC timing logs (a sweep's `NV_ACC_TIME=1` / `PGI_ACC_TIME=1` runs, each block opened by its
'Accelerator Kernel Timing data' line) read part by part (profconv/parse/stream.py) give what the
whole-file parse gives: profiles, every row cell, unplaced lines and notes; the CLI's --json, --csv and
table of a streamed sweep are the whole file's bytes."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

import profconv
from profconv.nogc import paused
from profconv.parse import stream as stream_mod
from profconv.parse.dialects import acc
from tests.stream_check import assert_cli_streamed_as_whole, split_repeated_and_mixed

DATA = Path(__file__).parent / "data"
ACC = sorted(p for p in glob.glob(str(DATA / "**" / "*.log"), recursive=True)
             if "Accelerator Kernel Timing data" in Path(p).read_text(errors="replace"))
CIFAR = DATA / "acc-time" / "oliatsm-cnn-cifar10-nvhpc-acc-time.log"  # program output with '%' in it


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_acc_logs(tmp_path, small_windows):
    """Every real OpenACC timing log three times over, and each next to another one: split at every
    block start that allows it, the parts are the whole parse."""
    split = split_repeated_and_mixed(ACC, tmp_path, small_windows)
    assert len(ACC) == 10 and split >= 7  # (7 of 20 when written: the others' heads hold fewer than two starts
    # in a window of 300 bytes, or another dialect)


def test_a_block_start_carries_nothing_on():
    """A block's source file, function and last event are its own: a block whose header line is not
    followed by a source line does not take the one before it (what lets a long log be cut there)."""
    text = CIFAR.read_text()
    _, _, rest = text.partition("Accelerator Kernel Timing data\n")
    bare = "".join(line for line in rest.splitlines(keepends=True) if not line.startswith("/"))
    ps = profconv.parse_text(text + "Accelerator Kernel Timing data\n" + bare)
    names = ps.frame.query("profile == 2")["name"].tolist()
    assert names and not any("@" in n for n in names)  # no source file: the function alone, never the first block's
    first = ps.frame.query("profile == 1")["name"].tolist()
    assert any("@" in n for n in first)


def test_a_sweep_is_read_in_parts_with_flat_memory(tmp_path, monkeypatch):
    """A 4 MB sweep of the CIFAR-10 runs (their output holds '%', which nvprof's detect is asked about
    on each window) is read in parts; the CLI's three outputs are those of the file read whole."""
    path = tmp_path / "sweep.log"
    text = CIFAR.read_text()
    path.write_text(text * (4_300_000 // len(text) + 1))
    with paused():
        parts = list(stream_mod.parts(str(path)))
    assert len(parts) > 10 and sum(len(p.profiles) for p in parts) == path.read_text().count("Accelerator Kernel Timing data")
    assert_cli_streamed_as_whole(path, monkeypatch)


@pytest.mark.parametrize("marker", ["==PROF== Connected to process 5", "NVPROF is profiling process 7"])
def test_a_sweep_with_another_profilers_output_is_read_whole(tmp_path, marker):
    """Another profiler's output in a long OpenACC log: the file is read whole (the same result)."""
    path = tmp_path / "mixed.log"
    text = CIFAR.read_text()
    path.write_text(text * 2 + marker + "\n" + text)
    with pytest.raises(stream_mod.NotStreamable):
        list(stream_mod.Stream(str(path), window=300))
    assert acc.DIALECT.part_start == "Accelerator Kernel Timing data"
