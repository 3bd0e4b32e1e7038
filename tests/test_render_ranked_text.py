"""The ranked tables of many profiles laid out together in a file or a pipe (render/ranked_text): the
same bytes as rich draws one profile at a time, for sweeps of profiles of every shape (row counts,
names wide and narrow, empty times, rows below the threshold, columns dropped at a narrow width),
runs of profiles cut anywhere, and the pieces it is built from (durations, sums in rank order)."""

from __future__ import annotations

import io
import math
import random

import numpy as np
import pytest

from profconv import ui
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.render import plain, profile_tables, ranked_text
from profconv.render.format import duration
from profconv.render.profile_tables import TableOptions, render


def test_durations_are_format_duration():
    values = [0.0, -0.0, 1.0, 5.5, 999.94, 999.95, 999.99, 1000.0, 1e3 - 1e-9, 5506.0, 999_950.0, 1e6, 2.2027e6,
              999_999_999.0, 1e9, 1.25e9, 3.7e12, -812.0, -5e6, math.nan, math.inf, -math.inf, 1e-300, 123456789.123]
    rng = random.Random(5)
    values += [rng.uniform(-1e10, 1e10) for _ in range(300)] + [10 ** rng.uniform(-2, 13) for _ in range(300)]
    assert ranked_text.durations(np.array(values)) == [duration(v) for v in values]


def test_top_shares_add_in_rank_order():
    """Each group's top shares summed one after the other (rank_rows' loop), not pairwise: the same
    doubles to the bit, groups of 1 to 300 rows."""
    rng = random.Random(11)
    sizes = np.array([rng.choice([1, 2, 3, 9, 40, 129, 300]) for _ in range(60)])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    share = np.array([rng.random() / 7 for _ in range(int(sizes.sum()))])
    top = np.array([rng.random() < 0.7 for _ in range(len(share))])
    want = []
    for a, n in zip(starts.tolist(), sizes.tolist()):
        total = 0.0
        for s, t in zip(share[a:a + n].tolist(), top[a:a + n].tolist()):
            if t:
                total += s
        want.append(total)
    assert ranked_text._top_shares(share, top, starts, sizes) == want


NAMES = ["k1(float*)", "[CUDA memcpy HtoD]", "conv_forward_kernel(float*, float const*, int, int)",
         "void gemm<float, 128, 64>(float const*, float*, int)", "卷积核_前向(float*)", "x" * 130, "kern[red]el",
         "a:smile:b", "cafe\u0301", "short"]
API = ["cudaMalloc", "cudaMemcpy", "cudaLaunchKernel", "cudaDeviceSynchronize", "cudaFree"]


def _sweep(rng: random.Random, profiles: int) -> str:
    """An nvprof --csv summary sweep whose profiles differ in rows, names, times, missing columns."""
    out = []
    for p in range(1, profiles + 1):
        out.append(f"=={p}== NVPROF is profiling process {p}, command: ./run{p % 4}\n=={p}== Profiling result:\n")
        out.append('"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n')
        for kind, names in (("GPU activities", NAMES), ("API calls", API)):
            k = rng.choice([1, 1, 2, 3, 5, 30]) if kind == "GPU activities" else rng.choice([0, 1, 4])
            times = sorted((rng.choice([0.0, 10 ** rng.uniform(-4, 3)]) for _ in range(k)), reverse=True)
            total = sum(times) or 1.0
            for t in times:
                calls = rng.randint(1, 100_000)
                avg = t / calls
                out.append(f'"{kind}",{100 * t / total:.6f},{t:.6f},{calls},{avg:.6f},{avg * 0.5:.6f},'
                           f'{avg * 1.5:.6f},"{rng.choice(names)}"\n')
    return "".join(out)


def _output(ps: ProfileSet, opts: TableOptions, width: int, set_width: int | None, trimmed: bool,
            enabled: bool, monkeypatch) -> str:
    buf = io.StringIO()
    file = ui.TrimmedLines(buf) if trimmed else buf
    con = ui._console_class()(file=file, highlight=False, soft_wrap=False, width=width)
    ui.set_width(set_width)
    try:
        with monkeypatch.context() as m:
            if not enabled:
                m.setattr(plain, "enabled", lambda con: False)
            render(ps, con, opts)
    finally:
        ui.set_width(None)
    return buf.getvalue()


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> ProfileSet:
    path = tmp_path_factory.mktemp("sweep") / "sweep.log"
    path.write_text(_sweep(random.Random(23), 60), encoding="utf-8")
    ps = parse(str(path))
    assert len(ps.profiles) == 60
    return ps


@pytest.mark.parametrize("opts", [TableOptions(), TableOptions(threshold=0.5, max_rows=None),
                                  TableOptions(threshold=0.99, max_rows=2, full_names=True),
                                  TableOptions(max_rows=0)], ids=["default", "all", "top2-full", "top0"])
@pytest.mark.parametrize(("width", "set_width"), [(ui.PLAIN_WIDTH, None), (80, 80), (60, 60)])
@pytest.mark.parametrize("trimmed", [True, False], ids=["pipe", "file"])
def test_sweep_same_bytes_as_rich(sweep, monkeypatch, opts, width, set_width, trimmed):
    """60 profiles of every shape in runs of about 40 rows (cut mid-profile list): laid out together,
    the bytes rich draws one table at a time; most tables laid out together, the rest refused to
    rich (wide or zero-width names, names that must fold at a narrow width)."""
    monkeypatch.setattr(profile_tables, "RUN_ROWS", 40)
    laid = []
    blocks = ranked_text.blocks

    def counted(*args, **kw):
        got = blocks(*args, **kw)
        laid.extend(b.text is not None for bs in got.values() for b in bs)
        return got

    monkeypatch.setattr(ranked_text, "blocks", counted)
    ps = sweep
    if opts.threshold != 0.90:
        ps = parse(str(sweep.source))
        ps.rethreshold(opts.threshold)
    fast = _output(ps, opts, width, set_width, trimmed, True, monkeypatch)
    slow = _output(ps, opts, width, set_width, trimmed, False, monkeypatch)
    assert fast == slow
    assert fast.count("Profile ") >= 60
    assert len(laid) > 75 and sum(laid) >= {ui.PLAIN_WIDTH: len(laid) / 3, 80: 3, 60: 0}[width], (len(laid), sum(laid))


def test_the_benchmark_sweep_lays_out_every_table_together(tmp_path, monkeypatch):
    """The repeated profile of benchmarks/parse_throughput.py's nvprof --csv sweep: every table laid
    out together (none refused), lines trimmed as the pipe's console would."""
    profile = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
               '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
               '"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\n'
               '"GPU activities",40.000000,0.800000,1,0.800000,0.800000,0.800000,"[CUDA memcpy HtoD]"\n'
               '"API calls",100.000000,3.000000,3,1.000000,0.500000,2.000000,"cudaMalloc"\n')
    path = tmp_path / "b.log"
    path.write_text(profile * 300)
    ps = parse(str(path))
    got = ranked_text.blocks(ps.rows, range(ps.rows.n), 0.9, 25, False, ui.PLAIN_WIDTH, trim=True)
    assert len(got) == 300 and all(b.text is not None and b.summary is None for bs in got.values() for b in bs)
    assert got[1][0].text == (
        "GPU activities\n"
        "    Time(%)    Share     Cum.    Total   Calls      Avg      Min      Max   Name\n"
        + "─" * 94 + "\n"
        "●     60.00   60.00%    60.0%   1.2 ms       2   600 µs   500 µs   700 µs   k1\n"
        "●     40.00   40.00%   100.0%   800 µs       1   800 µs   800 µs   800 µs   [CUDA memcpy HtoD]\n"
        "  ● 2 of 2 GPU activities take 100.0% of GPU time\n")
    assert _output(ps, TableOptions(), ui.PLAIN_WIDTH, None, True, True, monkeypatch) == _output(
        ps, TableOptions(), ui.PLAIN_WIDTH, None, True, False, monkeypatch)
