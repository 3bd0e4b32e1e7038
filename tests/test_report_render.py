"""The report rendered: default length and the appendix (--full), HTML (self-contained, and in a real
headless Chromium: loads without console errors, tables hold the expected rows, sorting works, the
>=90% rows and regressions highlighted), --json, demangled names, plots."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser, find_chromium  # noqa: E402

from profconv.analysis.names import demangle, readable  # noqa: E402
from tests.conftest import terminal_console  # noqa: E402

RUN = "tests/data/runs/ece408-h200.json"
SEED = "tests/data/seeds/002_b0bcac5cefbf4480.log"
CUPTI = "reports/runs/cupti"  # the stored H200 run recorded with --profile cupti (rows + logs)

needs_browser = pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                                   reason="no Chromium here (CI installs it: .ci/run)")


def test_default_markdown_is_a_third_of_the_full_one(cli, tmp_path):
    """A profiled run: the seeds' shape by default (at most ~1/3 of the 593 lines the report had),
    everything else reachable with --full."""
    short, full = tmp_path / "short.md", tmp_path / "full.md"
    assert cli("report", CUPTI, "--markdown", str(short)).returncode == 0
    assert cli("report", CUPTI, "--markdown", str(full), "--full").returncode == 0
    s, f = short.read_text(), full.read_text()
    assert len(s.splitlines()) <= 593 // 3
    assert "## Appendix: full tables" in f and "## Appendix" not in s
    # the whole run (53 kernels, 70 API calls; profconv's float64 checks among them) only in the appendix
    whole = f.split("whole run (includes profconv's reference checks), every row")[1]
    assert "GPU activities — 15 of 53 take 91.3% of the time" in whole and "of 70 take" in whole
    assert "cupy_subtract__float64" not in s and "cupy_subtract__float64" in f
    # per variant the >=90% rows, demangled names, ms/µs units
    assert "| tuned | 45.57 | 12.94 ms | 125 | 103.5 µs | `conv_tuned` |" in s
    assert "`cutlass::Kernel2<…>`" in s and "_ZN7cutlass" not in s
    full_names = tmp_path / "names.md"
    assert cli("report", CUPTI, "--markdown", str(full_names), "--full-names").returncode == 0
    assert "`void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(" in full_names.read_text()


def test_demangle_and_readable_names():
    name = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE"
    assert demangle(name) == ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
                              "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")
    assert readable(name) == "cutlass::Kernel2<…>"
    assert readable("[CUDA memcpy HtoD]") == "[CUDA memcpy HtoD]" and demangle("_Zbad") == "_Zbad"


def test_log_profiles_titled_from_the_source_headings(cli):
    r = cli("report", SEED)
    assert r.returncode == 0
    for title in ("Milestone 1 › A List of all Kernels that Collectively Consume More than 90% of the Program Time",
                  "Milestone 3 › nvprof profiling the execution (100 data size)",
                  "Milestone 3 › Shared / Unrolled Multiplication w/ Multiple Streams(10000 Size)"):
        assert f"### {title}" in r.stdout
    assert "Profile 1" not in r.stdout


def test_json_holds_what_the_tables_show(cli):
    r = cli("report", RUN, SEED, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "profconv.report"
    tables = {t["id"]: t for t in doc["tables"]}
    op = tables["op-time"]
    row = next(x for x in op["rows"] if x["variant"] == "fused" and x["layer"] == "conv2")
    assert row["median_s"] == pytest.approx(0.006441887855529785) and row["images"] == 10000
    lad = {x["variant"]: x for x in tables["ladder"]["rows"]}
    assert lad["fused"]["previous"] == "unroll-gemm" and lad["naive"]["gain_vs_previous"] is None
    top = tables["log-2-gpu"]
    assert [x["name"] for x in top["rows"]] == ["mxnet::op::forward_kernel", "sgemm_sm35_ldg_tn_128x8x256x16x32"]
    assert all(x["in_top"] for x in top["rows"])
    assert "log-2-full-gpu" in tables and len(tables["log-2-full-gpu"]["rows"]) == 14


@pytest.fixture(scope="module")
def html_pages(tmp_path_factory):
    from conftest import run_cli

    d = tmp_path_factory.mktemp("html")
    report, comparison = d / "report.html", d / "compare.html"
    assert run_cli("report", RUN, SEED, "--html", str(report)).returncode == 0
    slower = json.loads(Path(RUN).read_text())
    for res in slower["results"]:
        if res["variant"] == "fused":
            for c in res["conv"]:
                c["op_time"]["median_s"] *= 1.5
                c["op_time"]["samples_s"] = [t * 1.5 for t in c["op_time"]["samples_s"]]  # decided on samples
    (d / "slower.json").write_text(json.dumps(slower))
    assert run_cli("report", "--compare", RUN, str(d / "slower.json"), "--html", str(comparison)).returncode == 0
    return report, comparison


def test_html_is_self_contained(html_pages):
    report, _ = html_pages
    text = report.read_text()
    assert text.startswith("<!DOCTYPE html>") and "</html>" in text
    assert "http://" not in text and "https://" not in text and "<link" not in text  # nothing to fetch
    assert text.count('src="data:image/png;base64,') == 2  # the Op Time bars and the roofline
    assert '<table class="data" id="op-time" data-rows="14">' in text
    assert "<details" in text  # the appendix, folded


@needs_browser
def test_html_in_headless_chromium(html_pages, tmp_path):
    report, comparison = html_pages
    with Browser.launch() as browser:
        page = browser.open(report.as_uri())
        assert page.errors == []
        assert page.eval("document.title") == "profconv report"
        rows = page.eval("Object.fromEntries(Array.from(document.querySelectorAll('table.data'))"
                         ".map(t => [t.id, t.tBodies[0].rows.length]))")
        assert rows["op-time"] == 14 and rows["ladder"] == 6 and rows["log-2-gpu"] == 2
        assert rows["log-2-full-gpu"] == 14
        # the >=90% rows of a full table are highlighted: 2 of 14 in profile 2 (Milestone 3, 10000 images)
        assert page.eval("document.querySelectorAll('#log-2-full-gpu tr.top').length") == 2
        # sorting: Op Time descending puts the CPU reference first, ascending cuDNN conv2 (1.431 ms)
        col = "Array.from(document.querySelectorAll('#op-time thead th')).findIndex(th => th.textContent.startsWith('Op Time'))"
        first = ("(() => { const t = document.querySelector('#op-time'); const r = t.tBodies[0].rows[0];"
                 " return [r.cells[1].textContent, r.cells[3].textContent, r.cells[{c}].textContent]; })()")
        i = page.eval(col)
        page.eval(f"document.querySelectorAll('#op-time thead th')[{i}].querySelector('button').click()")
        assert page.eval(first.replace("{c}", str(i))) == ["cudnn", "conv2", "1.431 ms"]
        assert page.eval(f"document.querySelectorAll('#op-time thead th')[{i}].getAttribute('aria-sort')") == "ascending"
        page.eval(f"document.querySelectorAll('#op-time thead th')[{i}].querySelector('button').click()")
        assert page.eval(first.replace("{c}", str(i))) == ["cpu", "conv2", "4.008 s"]
        # text columns sort too: variant A..Z
        page.eval("document.querySelectorAll('#op-time thead th')[1].querySelector('button').click()")
        assert page.eval("document.querySelector('#op-time').tBodies[0].rows[0].cells[1].textContent") == "constant"
        assert page.eval("document.querySelectorAll('img[src^=\"data:image/png\"]').length") == 2
        assert page.eval("Array.from(document.images).every(i => i.complete && i.naturalWidth > 500)")
        page.screenshot(tmp_path / "report.png")
        assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"
        assert page.errors == []

        cmp = browser.open(comparison.as_uri())
        assert cmp.errors == []
        assert cmp.eval("document.querySelector('#compare').tBodies[0].rows.length") == 14
        assert cmp.eval("Array.from(document.querySelectorAll('#compare tr.regression'))"
                        ".map(r => r.cells[1].textContent + ' ' + r.cells[2].textContent)") == ["fused conv1",
                                                                                             "fused conv2"]


def test_terminal_report_fits_80_columns():

    from profconv.render import terminal
    from profconv.render.document import RenderOptions
    from profconv.report.build import ReportOptions, build
    from profconv.report.inputs import load

    con = terminal_console(80)
    with con.capture() as cap:
        terminal.render(build(load([CUPTI, SEED]), ReportOptions()), con, RenderOptions(full_hint="add --full"))
    out = cap.get()
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "10,000   tuned         conv1   654.2 µs" in out  # numbers keep their unit, never wrap
    assert "rel. error, precision not shown at 80 columns (--width N shows them)" in out
    assert "Milestone 3 › nvprof profiling the execution (100 data size)" in out


def test_names_are_never_markup(tmp_path, cli):
    """hostile-input.md §7: a kernel named `k[/x]` is text on the terminal, in markdown and in HTML."""

    from profconv.render import terminal
    from profconv.render.document import RenderOptions
    from profconv.report.build import ReportOptions, build
    from profconv.report.inputs import load

    log = tmp_path / "m[bold]x.log"
    log.write_text("==1== NVPROF is profiling process 1, command: ./a [bold]\n==1== Profiling result:\n"
                   " Type Time(%) Time Calls Avg Min Max Name\n"
                   " GPU activities: 100.00% 1ms 1 1ms 1ms 1ms k[/x]<script>\n")
    con = terminal_console(80)
    with con.capture() as cap:
        terminal.render(build(load([str(log)]), ReportOptions()), con, RenderOptions())
    assert "k[/x]<…>" in cap.get() and "./a [bold]" in cap.get()  # the template-like tail folded
    r = cli("report", str(log), "--html", str(tmp_path / "m.html"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "m.html").read_text()
    assert 'title="k[/x]&lt;script&gt;"' in html and html.count("<script>") == 1  # only the sorting code
