"""benchmarks/parse_throughput.py's "(rows only)" input: an nsys sweep less the reports profconv does not read
(the um_* tables of an app on unified memory), the same rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from profconv import parse

pytest.importorskip("pandas")
spec = importlib.util.spec_from_file_location("parse_throughput",
                                              Path(__file__).parents[1] / "benchmarks" / "parse_throughput.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

_LINES = ["line_start", "line_end", "table"]  # (the line numbers differ)


def test_a_unified_memory_sweep_less_its_um_reports_gives_the_same_rows(tmp_path):
    path, plain = tmp_path / "um.log", tmp_path / "um.csv"
    bench.nsys_um_summaries(path, plain, 60_000)
    stripped = bench.without_unread(path)
    assert stripped is not None and (path.stat().st_size, stripped.stat().st_size) == (61_668, 49_649)
    text = stripped.read_text()
    assert "/um_" not in text and text.count("Generating SQLite") == path.read_text().count("Generating SQLite") == 15
    whole, less = parse(str(path)), parse(str(stripped))
    assert sum("um_" in n for n in whole.notes) == 45 and not [n for n in less.notes if "um_" in n]  # 3 a run
    a, b = whole.frame.drop(columns=_LINES), less.frame.drop(columns=_LINES)
    assert len(a) == len(b) == 360 and a.equals(b)


def test_a_sweep_without_such_reports_is_left_as_it_is(tmp_path):
    path, plain = tmp_path / "reports.log", tmp_path / "reports.csv"
    bench.nsys_report_summaries(path, plain, 30_000)
    assert bench.without_unread(path) is None


def test_verdicts_judge_each_target_the_library_against_read_csv_and_the_cli_against_its_same_output_peers():
    cli = {f"{c} {k}": v for c in ("CLI --json", "CLI --csv")
           for k, v in (("MB/s", 70.0), ("vs read_csv", 0.3), ("vs same output", 1.6))}
    figures = {
        "nvprof-csv": {"library": 0.96, "library MB/s": 230.0, **cli, "peak --json": 2.55, "peak --table": 3.2},
        "ncu-raw": {"library": 1.14, "library MB/s": 250.0, **cli},
        "nvprof-text": {"library": 0.35, "library MB/s": 107.0, **cli, "CLI --csv MB/s": 49.0},
        "nsys-trace": {"linear": [(1_000_000_000, 60.0, 60 << 20), (20_000_000, 1.0, 50 << 20)]},
    }
    got = [" ".join(line.split()) for line in bench.verdicts(figures)]
    assert got == [
        "nvprof-csv library vs read_csv 0.96x >= 1x NOT MET",
        "nvprof-csv CLI --json vs same output 1.60x >= 1x met (vs read_csv alone 0.30x)",
        "nvprof-csv CLI --csv vs same output 1.60x >= 1x met (vs read_csv alone 0.30x)",
        "nvprof-csv peak --json 2.55 B/B <= 3 B/B met",
        "nvprof-csv peak --table 3.20 B/B <= 3 B/B NOT MET",
        "ncu-raw library vs read_csv 1.14x >= 0.5x met",
        "ncu-raw CLI --json vs same output 1.60x >= 0.5x met (vs read_csv alone 0.30x)",
        "ncu-raw CLI --csv vs same output 1.60x >= 0.5x met (vs read_csv alone 0.30x)",
        "nvprof-text library 107.00 MB/s >= 50 MB/s met",
        "nvprof-text CLI --json 70.00 MB/s >= 50 MB/s met",
        "nvprof-text CLI --csv 49.00 MB/s >= 50 MB/s NOT MET",
        "nsys-trace linear: s/MB 1000 MB / 20 MB 1.20x <= 1.25x met",
        "nsys-trace flat: peak 1000 MB / 20 MB 1.20x <= 1.25x met",
    ]
