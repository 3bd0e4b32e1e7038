"""`ncu --csv --page raw` pages read as columns (profconv/parse/dialects/ncu_raw.py) give what the row
reader gives, to the value: pages of every kind of cell (grouped thousands, '(!)', text, exponents,
comma decimals, whole nanoseconds, empty cells), big enough for the columnar path, with pyarrow and
with PROFCONV_NO_ARROW=1."""

from __future__ import annotations

import random

import pytest

import profconv
from profconv.parse.dialects import ncu
from tests.conftest import run_cli

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the row reader alone is used")

IDS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Device", "CC"]
METRICS = [("dram__bytes_read.sum", "Mbyte"), ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("launch__registers_per_thread", "register/thread"), ("gpu__time_duration.sum", "nsecond"),
           ("launch__func_cache_config", "")]


def page(n: int, cell=None, units: bool = True, seed: int = 1) -> str:
    rng = random.Random(seed)
    head = ",".join(f'"{h}"' for h in IDS + [m for m, _ in METRICS])
    rows = [head]
    if units:
        rows.append(",".join(['""'] * len(IDS) + [f'"{u}"' for _, u in METRICS]))
    for k in range(n):
        vals = [f"{rng.uniform(0, 5000):,.2f}", f"{rng.uniform(0, 100):.2f}", str(rng.choice([32, 40, 64])),
                f"{rng.randint(1000, 9_000_000):,}", "CachePreferNone"]
        if cell is not None and k % 7 == 3:
            vals[k % 4] = cell
        name = ["conv_tuned", "gemm(float*, int)", 'k"q"'][k % 3].replace('"', '""')
        rows.append(",".join(f'"{c}"' for c in [str(k), "9", "app", "h", name, "1", "7", "0", "9.0", *vals]))
    return "==PROF== Connected to process 9 (/home/dev/app)\n" + "\n".join(rows) + "\n"


def _both(monkeypatch, text: str):
    fast = profconv.parse_text(text)
    with monkeypatch.context() as m:
        m.setenv("PROFCONV_NO_ARROW", "1")
        slow = profconv.parse_text(text)
    assert fast.frame.equals(slow.frame)
    assert (fast.notes, fast.unplaced) == (slow.notes, slow.unplaced)
    return fast


N = ncu.RAW_COLUMNS_FROM + 50


@pytest.mark.parametrize("cell", [None, "1.5(!)", " 7 ", "n/a", "1.5e+03", "1e400", "12,5", "1'234.5", "", "0,125",
                                  "524.288", "1,024", "1.234.567", "+5", "٣", "-3"])
def test_raw_page_as_columns_equals_rows(monkeypatch, cell):
    _both(monkeypatch, page(N, cell))


def test_raw_page_without_units_row(monkeypatch):
    _both(monkeypatch, page(N, units=False))


def test_raw_page_values(monkeypatch):
    ps = _both(monkeypatch, page(N))
    m = ps.frame[ps.frame.section == "ncu-metric"]
    assert len(m) == N * len(METRICS)
    first = m.iloc[: len(METRICS)]
    assert first["metric"].tolist() == [x for x, _ in METRICS]
    assert first["unit"].tolist()[:4] == ["Mbyte", "%", "register/thread", "nsecond"] and first["unit"].isna().tolist()[4]
    assert first["value_text"].tolist()[4] == "CachePreferNone" and first["line_start"].tolist() == [4] * 5
    gpu = ps.frame[ps.frame.section == "gpu"]
    assert sorted(gpu["calls"].tolist()) == [83, 83, 84]


def test_ragged_row_reported(monkeypatch):
    text = page(N).replace('"app","h","conv_tuned","1","7"', '"app","h","conv_tuned","1"', 1)
    ps = _both(monkeypatch, text)
    assert [n for n, _ in ps.unplaced] == [4]


def test_cli_alike(monkeypatch, tmp_path):
    path = tmp_path / "raw.log"
    path.write_text(page(N, "1.5(!)"))
    for out in ("--json", "--csv"):
        a = run_cli("parse", str(path), out)
        with monkeypatch.context() as m:
            m.setenv("PROFCONV_NO_ARROW", "1")
            b = run_cli("parse", str(path), out)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
