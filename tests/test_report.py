"""profconv report on stored H200 run records and real logs: the markdown is checked concretely
(rendering to HTML and JSON, the appendix and the plots: test_report_render.py)."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from profconv.analysis import runs as analysis
from profconv.errors import InputError
from profconv.report.inputs import load, read_record

RUN = "tests/data/runs/ece408-h200.json"
RUN_HIGH = "tests/data/runs/ece408-high-h200.json"
SEED = "tests/data/seeds/002_b0bcac5cefbf4480.log"


def test_speedups_and_ladder_from_record():
    df = analysis.with_speedups(analysis.op_times(read_record(Path(RUN))))
    row = df[(df.variant == "fused") & (df.layer == "conv2")].iloc[0]
    assert row["median_s"] == pytest.approx(0.006441887855529785)
    assert row["vs_naive"] == pytest.approx(0.012043840408325195 / 0.006441887855529785)
    assert row["vs_cudnn"] == pytest.approx(0.0014310719966888427 / 0.006441887855529785)
    lad = analysis.ladder(df, ["cpu", "naive", "shared", "constant", "unroll-gemm", "fused", "cudnn"])
    assert lad["variant"].tolist() == ["naive", "shared", "constant", "unroll-gemm", "fused", "cudnn"]
    gains = dict(zip(lad.variant, lad.gain_vs_previous))
    naive = 0.005525536060333252 + 0.012043840408325195
    shared = 0.004630527973175049 + 0.01517407989501953
    assert gains["shared"] == pytest.approx(naive / shared)
    assert pd.isna(gains["naive"])  # the first rung: the CPU reference is not one
    assert dict(zip(lad.variant, lad.previous))["fused"] == "unroll-gemm"


def test_markdown_report_golden(cli, tmp_path):
    out = tmp_path / "rep.md"
    r = cli("report", RUN, SEED, "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    assert "- GPU: NVIDIA H200 (compute capability 9.0); driver 13000, runtime 13020" in md
    assert "| 10,000 | fused | fp32 | conv2 | 6.442 ms | 0.0% | 1.87× | 0.222× | 2.2e-07 | ok |" in md
    assert "| fused | kernel fusion (implicit GEMM) | fp32 | 14.63 ms | unroll-gemm | 2.14× | ok |" in md
    assert "| cudnn | conv2 | 1.431 ms | 22,674 | 453 | 484.3 µs | compute | 33.8% |" in md
    assert "Correctness (10,000 images): 0.7263 for every variant" in md
    # the log part: titles from the seed's headings, only the >=90% rows (seed shape)
    assert "### Milestone 3 › nvprof profiling the execution (10000 default data size)" in md
    assert "**GPU activities — 2 of 14 take 92.4% of the time**" in md
    assert "| 89.76 | 1.008 s | 2 | — | `mxnet::op::forward_kernel` |" in md
    assert "| 2.61 | 29.33 ms | 1 | — | `sgemm_sm35_ldg_tn_128x8x256x16x32` |" in md
    assert "[CUDA memcpy HtoD]` |" not in md.split("10000 default data size")[1].split("###")[0]  # 2.60%: not in the set
    assert "## Appendix" not in md and "add `--full`" in md
    for png in ("ece408-op-time.png", "ece408-roofline.png"):
        path = tmp_path / "rep-plots" / png
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
        assert f"](rep-plots/{png})" in md


def test_terminal_report_renders(cli):
    r = cli("report", RUN_HIGH)
    assert r.returncode == 0, r.stderr
    assert "Op Time per conv layer" in r.stdout and "NVIDIA H200" in r.stdout


def test_compare_runs_flags_regressions(cli, tmp_path):
    doc = json.loads(Path(RUN).read_text())
    for res in doc["results"]:
        if res["variant"] == "fused":
            for c in res["conv"]:
                c["op_time"]["median_s"] *= 1.5
                c["op_time"]["samples_s"] = [t * 1.5 for t in c["op_time"]["samples_s"]]
    slower = tmp_path / "slower.json"
    slower.write_text(json.dumps(doc))
    out = tmp_path / "cmp.md"
    r = cli("report", "--compare", RUN, str(slower), "--markdown", str(out), "--fail-on-regression")
    assert r.returncode == 6 and "2 regression(s) beyond 5%" in r.stdout  # its own exit code
    md = out.read_text()
    # 5 samples a side, fully separated: Mann-Whitney U two-sided p = 2/252; the ratio's bootstrap interval
    assert ("| 10,000 | fused | conv1 | M=6 C=1 64x64 K=5 | 8.187 ms | 12.28 ms | 5/5 | 1.500 | 1.497–1.503 | 0.0079 "
            "| **REGRESSION** |") in md
    assert "| 10,000 | naive | conv1 | M=6 C=1 64x64 K=5 | 5.526 ms | 5.526 ms | 5/5 | 1.000 | 0.999–1.001 | 1 |  |" in md
    # the CPU reference holds one sample a side: too few to test, said, never "same"
    assert "| 10,000 | cpu | conv1 | M=6 C=1 64x64 K=5 | 3.864 s | 3.864 s | 1/1 | 1.000 | — | — | too few samples |" in md
    assert "2 regression(s) found, 0 improvement(s), 10 same, 2 too few samples to tell." in md
    variants = [line.split(" | ")[1] for line in md.splitlines() if line.startswith("| 10,000 |")]
    assert list(dict.fromkeys(variants)) == ["cpu", "naive", "shared", "constant", "unroll-gemm", "fused", "cudnn"]
    r = cli("report", "--compare", RUN, RUN, "--fail-on-regression")
    assert r.returncode == 6 and "2 row(s) with too few samples to test: no regression can be ruled out" in r.stdout
    assert cli("report", "--compare", RUN, RUN, "--fail-on-regression", "--allow-untestable").returncode == 0


def test_compare_refuses_runs_of_different_models(cli):
    """hostile-input.md §22: ece408-high against ece408 paired conv1 layers of different shapes."""
    r = cli("report", "--compare", "tests/data/runs/ece408-high-h200.json", RUN, "--fail-on-regression")
    assert r.returncode == 2 and r.stdout == ""
    assert "A is a run of ece408-high, B of ece408: their conv layers have different shapes" in r.stderr
    assert r.stderr.startswith("error:") and r.stderr.replace("\n", " ").count("error:") == 1


def test_compare_logs(cli):
    a = "tests/data/nvprof-new/tyler-cs566-reductions.log"
    r = cli("report", "--compare", a, a, "--fail-on-regression")
    assert r.returncode == 0 and "0 regression(s) found" in r.stdout


@pytest.mark.parametrize("content, message", [
    ('{"schema": "profconv.run", "schema_version": 99}', "schema version 99 is newer"),
    ('{"hello": 1}', "not a profconv run record"),
    ('{"schema": "profconv.run", "schema_ver', "not a valid JSON record"),
    ('{"schema": "profconv.run", "schema_version": 1}', 'not a valid run record: Object missing required field `argv`'),
    ('{"schema": "profconv.run", "schema_version": 1, "argv": [], "created": "", "model": {"name": "m"}, '
     '"environment": {}, "data": {}, "settings": {}, '
     '"results": [{"images": 10, "variant": "naive", "status": "ok", "conv": [{"layer": "conv1"}]}]}',
     'not a valid run record: Object missing required field `shape` - at `$.results[0].conv[0]`'),
    ('{"schema": "profconv.bench", "schema_version": 9}', "bench record schema version 9 is newer"),
    ('{"schema": "profconv.bench", "schema_version": 1, "layers": "x"}',
     'not a valid bench record: Expected `array`, got `str` - at `$.layers`'),
    ('{"schema": "profconv.bench", "schema_version": 1, "argv": [], "created": "", "environment": {}, "layers": [{}]}',
     'not a valid bench record: Object missing required field `model` - at `$.layers[0]`'),
])
def test_bad_records_refused(cli, tmp_path, content, message):
    p = tmp_path / "run.json"
    p.write_text(content)
    with pytest.raises(InputError, match=re.escape(message)):
        load([str(p)])
    r = cli("report", str(tmp_path))
    assert r.returncode == 2 and message in r.stderr


def test_compare_needs_two_of_a_kind(cli):
    r = cli("report", "--compare", RUN, SEED)
    assert r.returncode == 2 and "two run records, two bench records or two profiler logs" in r.stderr
    r = cli("report", "--compare", RUN)
    assert r.returncode == 2 and "exactly two inputs" in r.stderr


def test_report_includes_cupti_profile_and_ncu_metrics(cli, tmp_path):
    """A run recorded with --profile cupti (H200) plus, for the ncu part, stored ncu launches."""
    import sys

    sys.path.insert(0, "tests")
    from test_profile_cupti import _records
    from test_profile_external import NCU_RAW

    from profconv.profile.activity import profiles
    from profconv.profile.external import ncu_launches

    doc = json.loads(Path("tests/data/runs/cupti/run.json").read_text())
    frame, labels = profiles(*_records())
    frame.to_csv(tmp_path / "profile-rows.csv", index=False)
    doc["profile"]["profiles"] = labels
    doc["profile"]["launches"] = [{"range": k.range, "kernel": k.kernel, "metrics": k.metrics, "units": k.units}
                                  for k in ncu_launches(NCU_RAW)]
    doc["profile"]["raw"] = "ncu-raw.csv"
    (tmp_path / "run.json").write_text(json.dumps(doc))
    out = tmp_path / "r.md"
    r = cli("report", str(tmp_path), "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    assert "### Profile (CUPTI)" in md and "**GPU activities taking ≥90% of the time, per variant**" in md
    assert "| naive | 100.00 | " in md and "`conv_forward` |" in md
    assert ("| ece408-high/tuned/conv1 | `conv_tuned` | 574.2 | 31.38 | 1.15 | 40 |") in md
    assert "| op | kernel | duration (usecond) | DRAM read (Mbyte) | DRAM write (Gbyte) | regs (register/thread) |" in md
    full = cli("report", str(tmp_path), "--markdown", str(tmp_path / "full.md"), "--full")
    assert full.returncode == 0
    assert "Profile (CUPTI): naive, every row" in (tmp_path / "full.md").read_text()  # the timed op's profile
    assert "the check, sweep and cuDNN's search set aside: 0 launch(es)" in md  # a record made before the exclude
    # ncu run with profconv's NVTX include + exclude: the report says what was not replayed
    from profconv.profile.external import NcuSettings, ncu_argv

    doc["profile"]["settings"] = {"tool": "ncu", "argv": ncu_argv("ncu", [], ["ece408-high/tuned/conv1"]),
                                  **NcuSettings().as_dict()}
    (tmp_path / "run.json").write_text(json.dumps(doc))
    assert cli("report", str(tmp_path), "--markdown", str(out)).returncode == 0
    md = out.read_text()
    assert ("`ncu` on the timed conv ops only (raw output: `ncu-raw.csv`): an NVTX include of each op's range and "
            "an exclude of its check, so the correctness call, the sweep and cuDNN's algorithm search were not "
            "replayed; mean over the timed launches; ncu ran with `--clock-control none --cache-control none`") in md


def test_fp16_rows_are_measured_against_cudnn_fp16_and_fp16_bytes():
    """The full ladder of the final H200 session: fp16 variants against cudnn-fp16, their floors
    from fp16 bytes and their own peaks; end-to-end variants are neither rungs nor efficiency rows."""
    from profconv.hardware import peak_for

    rec = read_record(Path("tests/data/runs/ece408-high-h200-full-ladder.json"))
    df = analysis.with_speedups(analysis.op_times(rec))
    t = df.set_index("variant")["median_s"]
    v = df.set_index("variant")["vs_cudnn"]
    assert v["tensorcore"] == pytest.approx(t["cudnn-fp16"] / t["tensorcore"])
    assert v["tuned"] == pytest.approx(t["cudnn"] / t["tuned"])
    lad = analysis.ladder(df, rec.settings.variants)
    assert "e2e" not in set(lad.variant) and "streams" not in set(lad.variant)
    gain = lad.set_index("variant")
    # rungs of the same precision only: tensorcore is compared with fp16, not with the fp32 cuDNN before it
    assert gain.loc["tensorcore", "previous"] == "fp16" and pd.isna(gain.loc["fp16", "previous"])
    assert gain.loc["tensorcore", "gain_vs_previous"] == pytest.approx(
        gain.loc["fp16", "conv_s"] / gain.loc["tensorcore", "conv_s"])
    eff = analysis.efficiency(df[df.variant != "cpu"], peak_for("NVIDIA H200")).set_index("variant")
    assert "e2e" not in eff.index
    assert eff.loc["tensorcore", "min_gb"] == pytest.approx(eff.loc["tuned", "min_gb"] / 2)
    assert eff.loc["tensorcore", "arithmetic"] == "tensor-fp16" and eff.loc["fp16", "arithmetic"] == "fp16"
    assert eff.loc["tuned", "of_floor"] == pytest.approx(eff.loc["tuned", "floor_s"] / t["tuned"])


def test_failed_variant_reported_and_the_rest_still_compared(cli, tmp_path):
    doc = json.loads(Path(RUN).read_text())
    for res in doc["results"]:
        if res["variant"] == "fused":
            res["status"], res["error"] = "failed", "conv1: relative error 0.5 above tolerance 1e-05"
            res["conv"][0].update(status="failed", error="relative error 0.5 above tolerance 1e-05", op_time=None)
    (tmp_path / "run.json").write_text(json.dumps(doc))
    r = cli("report", str(tmp_path / "run.json"), "--markdown", str(tmp_path / "r.md"))
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "r.md").read_text()
    assert "| 10,000 | fused | fp32 | conv1 | — | — | — | — | 8.3e-08 | failed |" in md
    assert "| fused | kernel fusion (implicit GEMM) | fp32 | — | unroll-gemm | — | failed |" in md
    # cuDNN's gain is over the last rung that ran correctly
    assert "| cudnn | vendor library reference | fp32 | 4.401 ms | unroll-gemm | 7.12× | ok |" in md
    assert "### Failed variants" in md
    assert "- `fused` conv1 (10,000 images): relative error 0.5 above tolerance 1e-05" in md


def test_compare_does_not_pair_layers_of_different_shapes(cli, tmp_path):
    doc = json.loads(Path(RUN).read_text())
    for res in doc["results"]:
        res["conv"][1]["shape"] = "M=16 C=6 28x28 K=5"  # conv2 of B ran on another shape
    (tmp_path / "b.json").write_text(json.dumps(doc))
    r = cli("report", "--compare", RUN, str(tmp_path / "b.json"), "--markdown", str(tmp_path / "c.md"),
            "--fail-on-regression", "--allow-untestable")
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "c.md").read_text()
    assert "conv2: M=16 C=6 30x30 K=5 in A but M=16 C=6 28x28 K=5 in B — not compared" in md
    assert "| 10,000 | fused | conv2 | M=16 C=6 30x30 K=5 | 6.442 ms | — | — |" in md
