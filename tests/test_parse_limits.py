"""Inputs at the limits: numbers of thousands of digits, counts past the Int64 column, rows that
made a pattern backtrack, a named pipe nobody writes to (issue 26; hostile-2 T1, T6, H2, H3). One
line or concrete values, never a traceback, a hang or a number the schema cannot hold."""

from __future__ import annotations

import os
import time

import pytest

import profconv
from profconv.errors import InputError
from profconv.parse import units
from tests.parse_invariants import check_all

START = "=={pid}== NVPROF is profiling process {pid}, command: ./a\n==1== Profiling result:\n"
ROWS = ("            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " GPU activities:  100.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  k\n")


def test_a_pid_of_thousands_of_digits_is_no_pid():
    text = START.format(pid="7" * 5000) + ROWS
    ps = profconv.parse_text(text)
    check_all(ps, text)
    assert [p.pid for p in ps.profiles] == [None]
    assert ps.rows.n == 1


def test_a_prefix_of_thousands_of_digits():
    text = "==1== NVPROF is profiling process 1, command: ./a\n" + f"=={'3' * 5000}== Profiling result:\n" + ROWS
    ps = profconv.parse_text(text)
    assert ps.rows.n == 1


@pytest.mark.parametrize("count", ["99999999999999999999", "9223372036854775808", "9" * 5000])
def test_unified_memory_counts_past_int64_are_reported(count):
    text = ("==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n" + ROWS
            + "==1== Unified Memory profiling result:\nDevice \"Tesla V100 (0)\"\n"
            + "   Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name\n"
            + f"   {count}  4.0000KB  4.0000KB  4.0000KB  8.000000KB  1.2000us  Host To Device\n"
            + f"Total CPU Page faults: {count}\n")
    ps = profconv.parse_text(text)
    check_all(ps, text)
    assert [n for n, _ in ps.unplaced] == [8, 9]
    assert all(c is None or c <= units.MAX_COUNT for c in ps.rows.col("calls"))


def test_csv_counts_past_int64_are_reported():
    text = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
            '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
            '"GPU activities",100.0,1.0,99999999999999999999,0.5,0.5,0.5,"k"\n'
            '"GPU activities",0.0,1.0,2,0.5,0.5,0.5,"j"\n')
    ps = profconv.parse_text(text)
    assert list(ps.rows.col("name")) == ["j"]
    assert [n for n, _ in ps.unplaced] == [5]


def test_a_trace_row_with_a_12000_digit_cell_reads_in_linear_time():
    """hostile-2 H2: '(?P<mid>.*?)\\s*(?P<ctx>\\d+)\\s+' backtracked: 14 kB took 23 s."""
    head = ("==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
            "   Start  Duration  Grid Size  Block Size  Regs*  SSMem*  DSMem*  Size  Throughput  Device  Context  Stream  Name\n")
    row = "1.0ms  2.0us  -  -  -  -  -  {size}B  1.0GB/s  Tesla V100 (0)  1  7  [Unified Memory Memcpy HtoD]\n"
    text = head + row.format(size="1" * 12000) + row.format(size="4")
    t = time.process_time()
    ps = profconv.parse_text(text)
    assert time.process_time() - t < 2.0
    assert ps.rows.n >= 2


def test_a_named_pipe_nobody_writes_to_is_one_line(tmp_path, monkeypatch):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    monkeypatch.setenv("PROFCONV_FIFO_WAIT", "0.3")
    t = time.monotonic()
    with pytest.raises(InputError, match="a named pipe that no program wrote to in 0.3 s"):
        profconv.parse(str(fifo))
    assert time.monotonic() - t < 5


def test_a_named_pipe_with_a_writer_is_read(tmp_path):
    import threading

    fifo = tmp_path / "p"
    os.mkfifo(fifo)

    def write():
        time.sleep(0.3)
        with open(fifo, "w") as f:
            f.write(START.format(pid=1) + ROWS)

    th = threading.Thread(target=write)
    th.start()
    ps = profconv.parse(str(fifo))
    th.join()
    assert ps.rows.n == 1


def test_the_cli_says_it_in_one_line(tmp_path, monkeypatch, cli):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    monkeypatch.setenv("PROFCONV_FIFO_WAIT", "0.2")
    r = cli("parse", str(fifo), "--json")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no program wrote to" in r.stderr
