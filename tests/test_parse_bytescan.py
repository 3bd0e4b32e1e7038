"""Big nsys CSV tables found and read on the input's bytes (profconv/parse/bytescan.py): the same
`--json`/`--csv` as the text path (the table read from the decoded lines) and as the pure-Python
readers, on generated logs that take the byte path and on variants that must not (or must go back
to the text path: `Reparse`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import profconv
from profconv.parse import bytescan, core
from tests.fastpath_compare import byte_path_used, cli_outputs, text_path

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the text path alone is used")

HEADER = ("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
          "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name")
NAMES = ['"conv_forward_kernel<float, 16>"', '"void k(float const *, int)"', "[CUDA memcpy HtoD]", "sgemm_128x8"]
SUM_HEADER = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"


def _rows(n: int, seed: int = 1, names: list[str] = NAMES) -> list[str]:
    rng = random.Random(seed)
    out, t = [], 1_000_000
    for i in range(n):
        d = rng.randint(1000, 900000)
        out.append(f"{t},{d},{i},157,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H200 (0),1,7,{names[i % len(names)]}")
        t += d + 2000
    return out


def _trace(rows: list[str], before: str = "Processing [r.sqlite] with [/x/cuda_gpu_trace.py]... \n\n",
           after: str = "") -> str:
    return before + HEADER + "\n" + "\n".join(rows) + "\n" + after


def _cut(text: str, at: str | int) -> str:
    """`text` cut in its last line: after the last `at` there, or `at` characters into it (from its end
    where negative)."""
    start = text.rstrip("\n").rfind("\n") + 1
    end = len(text.rstrip("\n"))
    k = (text.rfind(at, start) + len(at)) if isinstance(at, str) else (start + at if at >= 0 else end + at)
    assert start < k < end
    return text[:k]


# where a trace's last row (its name quoted) is cut
CUTS = {"in its name": '"void k(fl', "in its name after a comma": "const *,", "before its closing quote": -1,
        "after its last comma": "7,",
        "in a number": 13, "after its first cell": 11, "in its first cell": 3}


def _sum_table(n: int) -> str:
    return "Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]... \n\n" + SUM_HEADER + "\n" + "".join(
        f"0.0,{100 + k},1,{100 + k}.0,{100 + k}.0,{100 + k},{100 + k},0.0,\"k{k}(int)\"\n" for k in range(n))


# the ways compared (cli_outputs): the byte path, the text path (pyarrow still on), the pure-Python readers
WAYS = {"bytes": lambda m: None, "text": text_path, "pure": lambda m: m.setenv("PROFCONV_NO_ARROW", "1")}


CASES = {
    "plain": (_trace(_rows(3000)), "bytes"),
    "two tables": (_trace(_rows(2500)) + "\n" + _trace(_rows(2600, 2)), "bytes"),
    "summary after": (_trace(_rows(3000), after="\nProcessing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]... \n\n"
                             + SUM_HEADER + "\n60.0,600,2,300.0,300.0,200,400,10.0,k1\n40.0,400,1,400.0,400.0,"
                             "400,400,0.0,k2\n"), "bytes"),
    "small": (_trace(_rows(1500)), "none"),
    "a tab": (_trace(_rows(3000, names=["k\tx", "m"])), "none"),
    "a form feed": (_trace(_rows(3000, names=["k\fx", "m"])), "none"),
    "not ascii": (_trace(_rows(3000, names=["k\u00e9", "m"])), "none"),
    "not ascii elsewhere": ("r\u00e9sum\u00e9\n" + _trace(_rows(3000)), "bytes"),
    "carriage return": (_trace(_rows(3000)).replace("\n", "\r\n"), "none"),
    "no newline at the end": (_trace(_rows(3000))[:-1], "bytes"),  # its last row read alone (a row)
    "a stray line then rows": (_trace(_rows(2500) + ["program output here"] + _rows(600, 3)), "reparse"),
    "a stray line with a comma": (_trace(_rows(2500) + ["Warning, something"] + _rows(600, 3)), "reparse"),
    "the header again": (_trace(_rows(2500) + [HEADER] + _rows(600, 3)), "bytes"),
    "a bad number": (_trace(_rows(2500) + ["12x,5,1,157,1,1,256,1,1,32,0,0,,,,,D,1,7,k"] + _rows(600, 3)),
                     "reparse"),
    "a ragged row": (_trace(_rows(2500) + ["1,5,1,157,1,1,256,1,1,32,0,0,,,,,D,1,7,k,extra"] + _rows(600, 3)),
                     "reparse"),
    "a line break tag": (_trace(_rows(3000, names=["k <br>", "m"])), "reparse"),
    "a comment opened": (_trace(_rows(3000, names=["k/*", "m"]), after="\n * tail\n"), "reparse"),
    "a slash elsewhere": (_trace([r.replace("NVIDIA H200", "A/B") for r in _rows(3000)]), "reparse"),
    "an entity": (_trace(_rows(3000, names=["k&amp;", "m"])), "none"),
    "a latex percent": (_trace(_rows(3000, names=["k\\%", "m"])), "none"),
    "trailing blanks early": (_trace([r + "  " if i < 5 else r for i, r in enumerate(_rows(3000))]), "reparse"),
    "trailing blanks late": (_trace([r + "  " if i > 2900 else r for i, r in enumerate(_rows(3000))]), "reparse"),
    "indented line after": (_trace(_rows(3000), after="\n    indented\n"), "bytes"),
    "indented right after": (_trace(_rows(3000)) + "    indented\n", "none"),
    "nvprof first": ("==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n"
                     "Time(%),Time,Calls\n" + _trace(_rows(3000)), "reparse"),
    "prefixed lines around": ("# a\n# b\n" + _trace(_rows(3000)) + "# c\n# d\n", "bytes"),
    "far down": ("x\n" * 40000 + _trace(_rows(3000)), "reparse"),
    "far down after another dialect": ("==PROF== Connected to process 9\n" + "x\n" * 40000 + _trace(_rows(3000)),
                                       "reparse"),
    "big summary": ("Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]... \n\n" + SUM_HEADER + "\n" + "".join(
        f"0.0,{100 + k},1,{100 + k}.0,{100 + k}.0,{100 + k},{100 + k},0.0,k{k}\n" for k in range(2500)), "bytes"),
    # the input cut while its last row was written (a job's time limit): the rows before it from the bytes,
    # that line as the row reader reads it among them (a row, or a line reported unplaced)
    **{f"cut {where}": (_cut(_trace(_rows(2998)), at), "bytes") for where, at in CUTS.items()},
    "cut in an unquoted name": (_cut(_trace(_rows(3000)), "sgemm_12"), "bytes"),
    **{f"cut a summary {where}": (_cut(_sum_table(2500), at), "bytes") for where, at in (
        ("in its name", '"k24'), ("after its last comma", ","), ("in a number", "2599.0,2"))},
    "headers with blanks": (_trace(_rows(3000)).replace("Start (ns),Duration (ns)", "Start (ns), Duration (ns)"),
                            "reparse"),
}


@pytest.fixture(autouse=True)
def _pyarrow_loaded():
    import pyarrow  # noqa: F401  (loaded: every table pays for it, as in a library process)


@pytest.mark.parametrize("case", sorted(CASES))
def test_byte_path_same_output(tmp_path, monkeypatch, case):
    text, how = CASES[case]
    path = tmp_path / "log.txt"
    path.write_bytes(text.encode())
    assert byte_path_used(path) == how
    for mode in ("--json", "--csv"):
        got = cli_outputs(path, monkeypatch, WAYS, [[mode]])
        assert got["bytes"] == got["text"], mode
        assert got["bytes"] == got["pure"], mode


def test_library_and_frame_alike(tmp_path, monkeypatch):
    path = tmp_path / "log.txt"
    path.write_text(CASES["summary after"][0])
    a = profconv.parse(str(path))
    monkeypatch.setattr(bytescan, "find", lambda data, pays_from: None)
    b = profconv.parse(str(path))
    assert a.frame.equals(b.frame)
    assert [p.line_start for p in a.profiles] == [p.line_start for p in b.profiles]
    assert a.notes == b.notes and a.unplaced == b.unplaced


def test_rows_keep_their_line_numbers(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text(CASES["far down"][0])
    ps = profconv.parse(str(path))
    trace = [i for i, s in enumerate(ps.rows.col("section")) if s == "gpu-trace"]
    assert len(trace) == 3000
    assert ps.rows.col("line_start")[trace[0]] == 40000 + 4 and ps.rows.col("line_start")[trace[-1]] == 40000 + 3003


@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_pass_in_c_as_in_python(monkeypatch, case):
    from profconv.parse import native

    if native.load("_bytescan") is None:
        pytest.skip("the C accelerator is not built")
    data = CASES[case][0].encode() + b"9,1\n\xc3\xa9x\n12\n9\t1\n7\x0c\n"
    starts = [k + 1 for k in range(len(data)) if data[k : k + 1] == b"\n"][:50]
    got_c = [bytescan._rows_pass(data, b) for b in starts]
    monkeypatch.setattr(native, "load", lambda name: None)
    got_py = [bytescan._rows_pass(data, b) for b in starts]
    assert got_c == got_py
    assert bytescan.find(data, core.BYTES_PAY_FROM) is not None or CASES[case][1] == "none"


# ---- many small summary tables (a sweep's `nsys stats --format csv` logs concatenated): read as one
# (profconv/parse/dialects/nsys_batch.py), each table a block of column slices

API_HEADER = "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
SUM_NAMES = ["conv_forward_kernel<float; 16>", '"void k(float const *, int)"', "[CUDA memcpy HtoD]", "sgemm_128x8"]


def _sum_rows(n: int, seed: int, names: list[str] = SUM_NAMES) -> list[str]:
    rng = random.Random(seed)
    rows = []
    for k in range(n):
        calls, avg = rng.randint(1, 5000), rng.uniform(1000, 900000)
        rows.append((calls * avg, calls, avg, k))
    total = sum(r[0] for r in rows)
    out = []
    for t, c, a, k in sorted(rows, reverse=True):
        name = names[k % len(names)]
        name = f'"{name[1:-1]} {k}"' if name.startswith('"') else f"{name}_{k}"
        out.append(f"{100 * t / total:.1f},{round(t)},{c},{a:.1f},{a:.1f},{round(a * 0.9)},{round(a * 1.1)},"
                   f"{a / 10:.1f},{name}")
    return out


def _run(k: int, rows: list[str] | None = None, report: str = "cuda_gpu_kern_sum", header: str = SUM_HEADER,
         after: str = "\n") -> str:
    body = _sum_rows(40, k) if rows is None else rows
    return (f"Generating SQLite file run{k}.sqlite from run{k}.nsys-rep\n"
            f"Processing [run{k}.sqlite] with [/opt/nsys/reports/{report}.py]...\n\n"
            + header + "\n" + "".join(r + "\n" for r in body) + after)


def _sweep(n: int = 60, change: dict[int, str] | None = None) -> str:
    change = change or {}
    return "".join(change.get(k, _run(k)) for k in range(n))


def _taken(path: Path) -> int:
    """How many tables the byte path read from a batch (0 where it went back to the text)."""
    pre = bytescan.find(path.read_bytes(), core.BYTES_PAY_FROM)
    return 0 if pre is None else sum(t.batch is not None for t in pre.tables.values())


_BAD_ROW = "12x,5,1,5.0,5.0,5,5,0.0,bad"
SMALL_CASES = {  # text, how, tables taken from a batch (of the 60 runs; those in the first 256 KiB included)
    "many small": (_sweep(), "bytes", 60),
    "a stray line between two": (_sweep(change={7: _run(7, after="program output\n\n")}), "bytes", 59),
    "a stray line inside one": (_sweep(change={7: _run(7, rows=_sum_rows(20, 7) + ["program output"]
                                                     + _sum_rows(20, 8))}), "bytes", 59),
    "a table with a different header": (_sweep(change={9: _run(9, header=SUM_HEADER.replace("Med (ns),", ""),
                                                                rows=[",".join(r.split(",")[:4] + r.split(",")[5:])
                                                                      for r in _sum_rows(40, 9)])}), "bytes", 59),
    "api tables beside": (_sweep(change={k: _run(k) + _run(1000 + k, report="cuda_api_sum", header=API_HEADER,
                                                    rows=[r.replace("[CUDA memcpy HtoD]", "cudaMemcpy")
                                                          for r in _sum_rows(40, k)])
                                         for k in range(60)}), "bytes", 120),
    "a bad number": (_sweep(change={11: _run(11, rows=_sum_rows(20, 11) + [_BAD_ROW])}), "bytes", 59),
    "a profile with no rows": (_sweep(change={12: _run(12, rows=[])}), "bytes", 59),
    "a skipped report": (_sweep(change={12: "Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py]...\n\nSKIPPED: "
                                            "r.sqlite does not contain CUDA kernel data.\n\n"}), "bytes", 59),
    "no blank line after": (_sweep(change={13: _run(13, after="")}), "bytes", 59),
    "a damaged row": (_sweep(change={14: _run(14, rows=_sum_rows(10, 14) + ["1.0,5000,3,10.0,10.0,9,11,1.0,dmg"])}),
                      "bytes", 59),
    "undecided decimal mark": (_sweep(change={15: _run(15, rows=["10.500,600,2,300.000,300.000,200,400,100.000,k1",
                                                                 "89.500,400,1,400.000,400.000,400,400,100.000,k2"])}),
                               "bytes", 59),
    "decided by another cell": (_sweep(change={15: _run(15, rows=["60.0,600,2,300.000,300.000,200,400,100.000,k1",
                                                                  "40.0,400,1,400.000,400.000,400,400,100.000,k2"])}),
                                "bytes", 60),
    "a share above 100": (_sweep(change={16: _run(16, rows=["160.0,600,2,300.0,300.0,200,400,10.0,k1"])}), "bytes", 59),
    "a name with blanks around": (_sweep(change={17: _run(17, rows=["60.0,600,2,300.0,300.0,200,400,10.0, k1 "])}),
                                  "bytes", 59),
    "an exponent": (_sweep(change={18: _run(18, rows=["60.0,6e2,2,300.0,300.0,200,400,10.0,k1"])}), "bytes", 59),
    "run context in a name": (_sweep(change={19: _run(19, rows=["60.0,600,2,300.0,300.0,200,400,10.0,k Op Time: 5 ms",
                                                                "40.0,400,1,400.0,400.0,400,400,0.0,k Correctness: 0.9"])}),
                              "bytes", 60),
    "another dialect's marks in a name": (_sweep(change={20: _run(20, rows=[
        "60.0,600,2,300.0,300.0,200,400,10.0,==1== Profiling result:"])}), "bytes", 60),
    "a combined gpu report beside": (_sweep(change={21: _run(21) + _run(2100, report="cuda_gpu_sum", header=(
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Category,Operation"),
        rows=[r.rsplit(",", 1)[0] + ",CUDA_KERNEL," + r.rsplit(",", 1)[1] for r in _sum_rows(40, 21)[:5]]
        + ["1.0,10,1,10.0,10.0,10,10,0.0,MEMORY_OPER,[CUDA memset]"])}), "bytes", 60),
    "a memory-size report named": (_sweep(change={22: _run(22, report="cuda_gpu_mem_size_sum")}), "reparse", 60),
    "a report not read": (_sweep(change={23: _run(23, report="cuda_kern_exec_sum")}), "reparse", 60),
    "a line break tag in a name": (_sweep(change={24: _run(24, rows=["60.0,600,2,300.0,300.0,200,400,10.0,k<br>x"])}),
                                   "bytes", 59),
    "an entity in a name": (_sweep(change={25: _run(25, rows=["60.0,600,2,300.0,300.0,200,400,10.0,k&amp;x"])}),
                            "bytes", 59),
    "too few rows": (_sweep(40), "none", 0),
}


@pytest.mark.parametrize("case", sorted(SMALL_CASES))
def test_small_tables_read_together_same_output(tmp_path, monkeypatch, case):
    text, how, taken = SMALL_CASES[case]
    path = tmp_path / "log.txt"
    path.write_bytes(text.encode())
    assert byte_path_used(path) == how
    assert _taken(path) == taken
    for mode in ("--json", "--csv"):
        got = cli_outputs(path, monkeypatch, WAYS, [[mode]])
        assert got["bytes"] == got["text"], mode
        assert got["bytes"] == got["pure"], mode


def test_small_tables_values(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text(_sweep())
    ps = profconv.parse(str(path))
    assert len(ps.profiles) == 60 and ps.rows.n == 2400 and not ps.unplaced
    first = _sum_rows(40, 0)[0].split(",")
    row = ps.rows.records()[0]
    assert row["section"] == "gpu" and row["line_start"] == 5 and row["table"] == 5
    assert (row["time_pct"], row["total_ns"], row["calls"], row["avg_ns"]) == (
        float(first[0]), float(first[1]), int(first[2]), float(first[3]))


def test_cells_in_c_as_in_python():
    from profconv.parse import native
    from profconv.parse.dialects import nsys_batch

    scan = native.load("_bytescan")
    if scan is None:
        pytest.skip("the C accelerator is not built")
    rows = [b"1.5,2,abc", b"524.288,3,\"x,y\"", b"1,2.0,z", b"1,2,", b"1,,z", b"01.500,7,k", b"1.,2,k", b".5,2,k",
            b"1,1234567890123456789,k", b"1,123456789012345678,k", b'1,2,"a"b"', b'1,2,""', b'1,2,"a', b"1,2,a,b",
            b"999.999,1,k", b"1000.000,1,k", b"1,2", b"1e5,2,k", b"+1,2,k", b"1,2, k ", b'1,2,a"b']
    data = b"".join(r + b"\n" for r in rows)
    for whole in (0, 0b10, 0b11):
        assert list(scan.cells(data, 0, len(data), 2, whole)) == [nsys_batch.row_status(r, 2, whole) for r in rows]
    assert list(scan.cells(data, 0, len(data), 2, 0b10)) == [
        4, 2, 1, 1, 1, 4, 1, 1, 1, 0, 1, 1, 1, 1, 2, 4, 1, 1, 1, 0, 1]


def test_header_search_skips_ranges_as_a_filter_would():
    """bytescan._next with ranges to skip finds what the plain search finds outside them (headers
    just before, just after and between the ranges; ranges at the input's start and end)."""
    rng = random.Random(9)
    head = b"Start (ns),"
    for _ in range(300):
        lines = [rng.choice([head + b"1,2", b"1,2,3", b"  x  y", b"", b"Start (ns)"]) for _ in range(rng.randint(1, 30))]
        data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
        starts = [0] + [k + 1 for k in range(len(data)) if data[k : k + 1] == b"\n" and k + 1 < len(data)]
        skip, k = [], 0
        while k < len(starts):
            k += rng.randint(1, 4)
            if k >= len(starts):
                break
            e = rng.randint(k + 1, len(starts))
            skip.append((starts[k], starts[e] if e < len(starts) else len(data)))
            k = e + 1
        pos = rng.randrange(len(data))
        want = [a for a in starts if a >= pos + 1 and data.startswith(head, a)
                and not any(x <= a < y for x, y in skip)]
        assert bytescan._next(data, head, pos, skip) == (want[0] if want else -1)


@pytest.mark.parametrize("case", sorted(c for c in CASES if c.startswith("cut") or c == "no newline at the end"))
@pytest.mark.parametrize("way", ["bytes", "text", "pure"])
def test_a_table_cut_in_its_last_row_is_read_in_bulk_but_that_line(tmp_path, monkeypatch, case, way):
    """The rows before the cut line are read as columns each way (the row reader reads that line alone,
    never the table's thousands of rows), and the line is a row of the table or reported unplaced."""
    from profconv.parse.dialects import nsys

    path = tmp_path / "log.txt"
    path.write_bytes(CASES[case][0].encode())
    read: list[int] = []
    real = nsys._csv_rows_block
    monkeypatch.setattr(nsys, "_csv_rows_block", lambda lines, at, *a: read.append(len(at)) or real(lines, at, *a))
    WAYS[way](monkeypatch)
    ps = profconv.parse(str(path))
    assert read in ([], [1])  # (none: the bulk reader reads a row cut in an unquoted name as a row)
    last = CASES[case][0].count("\n") + 1
    table = ps.frame[ps.frame.section == ("gpu" if case.startswith("cut a summary") else "gpu-trace")]
    rows = table[table.line_start == last]
    assert len(rows) + len(ps.unplaced) == 1 and all(n == last for n, _ in ps.unplaced)
    if case in ("no newline at the end", "cut in an unquoted name", "cut in its name", "cut a summary in its name"):
        assert len(rows) == 1 and rows.name.iloc[0] == CASES[case][0].rsplit(",", 1)[1].strip('"')
