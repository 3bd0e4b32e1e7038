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
from tests.conftest import run_cli

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


def _outputs(path: Path, monkeypatch, mode: str) -> dict[str, tuple]:
    """--json and --csv of `path`: the byte path, the text path (pyarrow still on), the pure-Python readers."""
    got = {}
    for how in ("bytes", "text", "pure"):
        with monkeypatch.context() as m:
            if how == "text":
                m.setattr(bytescan, "find", lambda data, pays_from: None)
            if how == "pure":
                m.setenv("PROFCONV_NO_ARROW", "1")
            r = run_cli("parse", str(path), mode)
            got[how] = (r.returncode, r.stdout, r.stderr)
    return got


def _used(path: Path) -> str:
    """'bytes' where the byte path gave the result, 'reparse' where it went back to the text, 'none'
    where no table was found on the bytes."""
    pre = bytescan.find(path.read_bytes(), core.BYTES_PAY_FROM)
    if pre is None:
        return "none"
    try:
        core._parse([core.decode(pre.data)], str(path), None, False, pre)
    except bytescan.Reparse:
        return "reparse"
    return "bytes"


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
    "no newline at the end": (_trace(_rows(3000))[:-1], "none"),
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
    assert _used(path) == how
    for mode in ("--json", "--csv"):
        got = _outputs(path, monkeypatch, mode)
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
