"""`report --compare` can say "I can't tell" (first-contact-2 M1, M2, m6, m17): n per side, the ratio with
its interval, too few samples said (never "same" and never "0 regressions" in silence), --fail-on-regression
failing on an untestable comparison unless --allow-untestable, the verdict column kept at 80 columns."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent / "data" / "runs" / "ece408-h200.json"
LOGS = Path(__file__).resolve().parent / "data" / "nvprof-new"


def _scaled(tmp_path: Path, name: str, factor: float, keep: int | None = None) -> Path:
    """The H200 run with `keep` samples per op, every sample times `factor`."""
    doc = json.loads(RUN.read_text())
    for res in doc["results"]:
        for c in res["conv"]:
            t = c.get("op_time")
            if t:
                s = [x * factor for x in t["samples_s"][:keep]]
                t.update(samples_s=s, median_s=statistics.median(s), min_s=min(s), max_s=max(s))
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_a_2x_slowdown_with_3_samples_a_side_is_flagged_untested_not_0_regressions(cli, tmp_path):
    """M2: 3 vs 3 cannot reach p < 0.05; the 2x slowdown is a REGRESSION (untested) and fails the gate."""
    a, b = _scaled(tmp_path, "a.json", 1.0, 3), _scaled(tmp_path, "b.json", 2.0, 3)
    r = cli("report", "--compare", a, b, "--markdown", tmp_path / "c.md", "--fail-on-regression")
    assert r.returncode == 6 and "14 regression(s) beyond 5%" in r.stdout
    md = (tmp_path / "c.md").read_text()
    assert "14 regression(s) found, 0 improvement(s), 0 same." in md
    assert "Too few samples to test any row (1 vs 1, 3 vs 3 samples; p < 0.05 needs 4 a side)" in md
    assert re.search(r"\| 10,000 \| naive \| conv1 \| M=6 C=1 64x64 K=5 \| 5\.526 ms \| 11\.05 ms \| 3/3 \| 2\.000 \| "
                     r"1\.99\d–2\.00\d \| — \| \*\*REGRESSION \(untested\)\*\* \|", md), md


def test_identical_runs_with_too_few_samples_fail_the_gate_unless_allowed(cli, tmp_path):
    a = _scaled(tmp_path, "a.json", 1.0, 3)
    r = cli("report", "--compare", a, a, "--fail-on-regression")
    assert r.returncode == 6
    assert "14 row(s) with too few samples to test: no regression can be ruled out" in r.stdout
    assert "0 regression(s) found, 0 improvement(s), 0 same, 14 too few samples to tell." in r.stdout
    assert "| too few samples |" in r.stdout and "| same" not in r.stdout
    assert cli("report", "--compare", a, a, "--fail-on-regression", "--allow-untestable").returncode == 0
    five = _scaled(tmp_path, "five.json", 1.0, 5)
    r = cli("report", "--compare", five, five, "--fail-on-regression")  # 5 a side: testable except the CPU's 1
    assert "2 row(s) with too few samples" in r.stdout and "12 same" in r.stdout


def test_verdict_is_the_last_column_to_go_at_80_columns(tmp_path):
    """M1: at 80 columns the shape, p, interval and n go first; the verdict has a header and stays."""
    from conftest import terminal_console

    from profconv.render import terminal
    from profconv.render.document import RenderOptions
    from profconv.report.compare import compare, document
    from profconv.report.inputs import load

    df = compare(*load([str(RUN), str(_scaled(tmp_path, "b.json", 1.5, 5))]), 0.05)
    con = terminal_console(80)
    terminal.render(document(df, "a", "b", 0.05), con, RenderOptions())
    out = con.file.getvalue()
    header = next(line for line in out.splitlines() if line.startswith("images"))
    assert header.split()[:3] == ["images", "variant", "layer"] and header.rstrip().endswith("B / A   verdict")
    assert re.search(r"fused\s+conv1\s+.*1\.500\s+REGRESSION\s*$", out, re.M)
    assert re.search(r"cpu\s+conv1\s+.*1\.500\s+REGRESSION \(untested\)\s*$", out, re.M)  # 1 sample a side
    assert "bold: regressions" in out and "≥90%" not in out
    assert "shape, p, 95% CI of B / A" in " ".join(out.split()) and "not shown at 80 columns" in out


def test_html_compare_has_n_interval_verdict_and_a_plot(cli, tmp_path):
    """m17: the HTML compare shows n per side, the interval, a named verdict column and a B/A plot."""
    r = cli("report", "--compare", RUN, _scaled(tmp_path, "b.json", 1.5, 5), "--html", tmp_path / "c.html")
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "c.html").read_text()
    for header in (">n A/B<", ">95% CI of B / A<", ">verdict<"):
        assert header in html
    assert "data:image/png;base64," in html and "B / A per row with its 95% interval" in html


def test_unrelated_logs_are_warned_about_and_api_rows_never_flagged(cli):
    """m6: two logs of different programs: a warning, and only GPU rows can be flagged (no 6 µs API call)."""
    r = cli("report", "--compare", LOGS / "nikikanaparthi-tiled-matmul.log", LOGS / "samhachem99-vector-add-streams.log")
    assert r.returncode == 0
    assert "A and B have no kernel in common: they look like different programs" in r.stdout
    flagged = [line for line in r.stdout.splitlines() if "REGRESSION" in line and line.startswith("|")]
    assert flagged and all(line.startswith("| gpu |") for line in flagged)
    assert "API rows are shown, never flagged" in r.stdout


@pytest.mark.nogpu
def test_cpu_default_repeats_give_a_testable_comparison(cli, tmp_path):
    """M2: the CPU reference's default repeats (5) let two runs be tested at p < 0.05."""
    for name in ("a", "b"):
        assert cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--out", tmp_path / name).returncode == 0
    doc = json.loads((tmp_path / "a" / "run.json").read_text())
    assert doc["settings"]["cpu_repeat"] == 5 and len(doc["results"][0]["conv"][0]["op_time"]["samples_s"]) == 5
    r = cli("report", "--compare", tmp_path / "a", tmp_path / "b", "--json")
    rows = json.loads(r.stdout)["tables"][0]["rows"]
    assert {row["n_a"] for row in rows} == {5} and all(row["verdict"] != "untestable" for row in rows)
