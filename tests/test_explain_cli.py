"""`profconv explain` and `report --optimisations` in-process on recorded runs (no GPU needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "explain"


@pytest.fixture
def old_ncu_run(tmp_path):
    """The 2026-11-26 H200 run of ece408-high under `run --profile ncu` (the 11 summary metrics, no SASS)."""
    d = tmp_path / "ncu"
    d.mkdir()
    shutil.copy(DATA / "ece408-high-ncu.json", d / "run.json")
    return d


def test_summary_counters_only(cli, old_ncu_run):
    r = cli("explain", str(old_ncu_run), "--collect", "no", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "profconv.explain" and len(doc["ops"]) == 6  # naive .. tuned: not cuDNN, not the CPU
    ug = next(o for o in doc["ops"] if o["variant"] == "unroll-gemm")
    assert ug["bound"] == "memory" and ug["counters"] == "run"
    assert ug["utilisation"] == {"compute": pytest.approx(68.0, abs=1), "memory": pytest.approx(86.0, abs=1)}
    assert [a["technique"] for a in ug["advice"]] == ["implicit-gemm", "fuse-epilogue"]
    assert ug["advice"][0]["rung"] == "fused" and ug["advice"][0]["rung_source"] == "kernels/fused.cu"
    naive = next(o for o in doc["ops"] if o["variant"] == "naive")
    # no SASS: whether it already tiles or keeps weights in constant memory is unknown: not advised
    assert [a["technique"] for a in naive["advice"]] == ["fuse-epilogue"]


def test_terminal_pipe_at_80_columns(cli, old_ncu_run):
    r = cli("explain", str(old_ncu_run), "--collect", "no", "--variant", "unroll-gemm", "--width", "80")
    assert r.returncode == 0, r.stderr
    assert "### unroll-gemm · conv1 (M=50 C=1 28x28 K=5, 10,000 images)" in r.stdout
    assert "| 1 | fuse the unroll into the matmul (implicit GEMM) |" in r.stdout
    assert "No SASS" not in r.stdout  # the implicit-GEMM advice reads the kernels' names, not the SASS


def test_unknown_variant_is_one_line(cli, old_ncu_run):
    r = cli("explain", str(old_ncu_run), "--collect", "no", "--variant", "nope")
    assert r.returncode == 2 and "no such diagnosable op" in r.stderr


def test_optimisations_of_the_ladder(cli, old_ncu_run, tmp_path):
    out = tmp_path / "steps.md"
    r = cli("report", "--optimisations", str(old_ncu_run), "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "6 versions, 5 steps" in text
    assert "### Step 4: unroll-gemm → fused" in text
    assert "| conv1 | 5.339 ms | 5.396 ms | 0.989× |" in text
    assert "SASS: not recorded for both versions" in text


FA20 = DATA / "h200-ece408-fa20"
HIGH = DATA / "h200-ece408-high"


@pytest.fixture(scope="module")
def fa20_ops():
    """Every op of the H200 Fall 2020 ladder run, diagnosed from the stored counters and SASS (no GPU)."""
    from profconv.report.explain import explain_run
    from profconv.report.inputs import RunInput, read_record

    return {x.ev.key: x for x in explain_run(RunInput(FA20 / "run.json", read_record(FA20 / "run.json")))}


def test_h200_naive_is_issue_bound_with_no_reuse(fa20_ops):
    x = fa20_ops["naive/conv2"]
    d = x.diagnosis
    assert d.bound == "issue" and d.kernel == "conv_forward"
    assert d.headline == "bound by instruction issue (88% of peak), and only 6% of the instructions are FMAs"
    assert round(d.derived["loads_per_fma"], 2) == 2.01 and round(d.of_floor, 3) == 0.049
    first = x.advice[0]
    assert (first.technique, first.rung, round(first.rung_time_s * 1e6, 1)) == ("register-blocking", "tuned", 724.3)
    assert [a.technique for a in x.advice if a.scope == "op"] == ["register-blocking", "shared-tiling",
                                                                   "constant-weights", "gemm"]


def test_h200_never_advises_what_the_sass_shows(fa20_ops):
    from profconv.analysis.steps import techniques_shown

    for key, x in fa20_ops.items():
        advised = {a.technique for a in x.advice}
        assert not (advised & techniques_shown(x.ev)), key
    assert "shared-tiling" not in {a.technique for a in fa20_ops["shared/conv1"].advice}
    assert "tensor-cores" not in {a.technique for a in fa20_ops["tensorcore/conv2"].advice}
    assert "half2" not in {a.technique for a in fa20_ops["fp16/conv2"].advice}


def test_h200_unroll_gemm_names_its_unroll_kernel(fa20_ops):
    x = fa20_ops["unroll-gemm/conv2"]
    assert x.diagnosis.kernel == "unroll"
    assert x.diagnosis.headline.endswith("and none of its instructions are FMAs: it moves data")
    assert [a.technique for a in x.advice][:1] == ["implicit-gemm"] and x.advice[0].rung == "fused"


def test_h200_tensorcore_conv1_latency_bound_by_shared_memory_occupancy(fa20_ops):
    d = fa20_ops["tensorcore/conv1"].diagnosis
    assert d.bound == "latency" and d.stalls[0][0] == "long_scoreboard"
    occ = next(f for f in d.findings if f.label.startswith("occupancy"))
    assert occ.value == "12% achieved of 12% possible, limited by shared memory; 1.00 waves"


def test_h200_explain_cli_at_80_columns(cli):
    r = cli("explain", str(FA20), "--collect", "no", "--variant", "tuned/conv2", "--width", "80")
    assert r.returncode == 0, r.stderr
    assert "(53 metrics, 15 replay passes per kernel, 4,000 images)" in r.stdout
    assert "**Bound by instruction issue (82% of peak), 86% of the instructions FMAs.**" in r.stdout
    assert "| 1 | Tensor Cores (TF32 or FP16 WMMA / mma.sync) | 641.3 µs | 88.5% |" in r.stdout


def test_h200_optimisation_steps(cli, tmp_path):
    out = tmp_path / "steps.md"
    r = cli("report", "--optimisations", str(FA20), "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "8 versions, 7 steps; on 9 of 14 layer steps" in text
    assert ("| conv2 | 5.78 ms | 724.3 µs | 7.98× | 5.77–5.81 ms / 0.72–0.751 ms (apart) | instruction issue → "
            "instruction issue | confirmed: advised #1 and 7.98× faster |") in text
    assert "| conv1 | 250.7 µs | 793.4 µs | 0.316× |" in text and "advised #1, but not faster (0.32×)" in text


def test_ladder_validation_counts():
    import importlib.util

    spec = importlib.util.spec_from_file_location("advice_validation", Path(__file__).parent.parent / "scripts" /
                                                  "advice_validation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.rows_of(FA20) + mod.rows_of(HIGH)
    assert len(rows) == 21
    assert sum(r["rank"] == 1 for r in rows) == 8 and sum(r["rank"] is not None for r in rows) == 21
    assert not any(r["already"] or r["own_technique_advised"] for r in rows)


def test_h200_tensorcore_next_steps_are_about_feeding_the_mma(fa20_ops):
    got = {a.technique: a for a in fa20_ops["tensorcore/conv2"].advice}
    assert list(got) == ["ldmatrix", "vector-loads", "fuse-epilogue"]
    assert got["ldmatrix"].reason.startswith("250 scalar shared loads feed 100 mma.sync in the SASS (2.5 per MMA)")
    assert "its global loads are all 16-bit" in got["vector-loads"].reason


def _one_version(src: Path, dst: Path, variant: str) -> Path:
    """A copy of a run directory keeping one variant's results (as a user's run of one version would be)."""
    shutil.copytree(src, dst)
    doc = json.loads((dst / "run.json").read_text())
    doc["results"] = [r for r in doc["results"] if r["variant"] == variant]
    doc["settings"]["variants"] = [variant]
    (dst / "run.json").write_text(json.dumps(doc))
    return dst


def test_optimisations_one_run_per_version(cli, tmp_path):
    a = _one_version(FA20, tmp_path / "v1", "fused")
    b = _one_version(FA20, tmp_path / "v2", "tuned")
    r = cli("report", "--optimisations", str(a), str(b), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    step = next(t for t in doc["tables"] if t["id"] == "step-1")
    assert step["section"][-1] == "Step 1: v1: fused → v2: tuned"
    assert [(row["layer"], round(row["speedup"], 2), row["verdict"]) for row in step["rows"]] == [
        ("conv1", 32.6, "confirmed: advised #1 and 32.60× faster"), ("conv2", 7.98, "confirmed: advised #1 and 7.98× faster")]
    one = cli("report", "--optimisations", str(a))
    assert one.returncode == 2 and "needs two versions at least" in one.stderr


def test_auto_collect_leaves_a_record_it_cannot_add_to_unchanged(cli, old_ncu_run):
    before = (old_ncu_run / "run.json").read_bytes()
    r = cli("explain", str(old_ncu_run), "--json")  # --collect auto: no provenance, so no module to list
    assert r.returncode == 0, r.stderr
    assert (old_ncu_run / "run.json").read_bytes() == before
    assert json.loads(r.stdout)["schema"] == "profconv.explain"  # the notes went to stderr
    assert "ncu counters: not collected here" in r.stderr


def test_optimisations_from_a_versions_file(cli, tmp_path):
    _one_version(FA20, tmp_path / "v1", "fused")
    _one_version(FA20, tmp_path / "v2", "tuned")
    (tmp_path / "versions.toml").write_text(
        '[[version]]\nrun = "v1"\nlabel = "implicit GEMM"\n\n[[version]]\nrun = "v2"\nlabel = "register tiles"\n'
        'note = "four outputs per thread, filters in constant memory"\n')
    out = tmp_path / "steps.md"
    r = cli("report", "--optimisations", str(tmp_path / "versions.toml"), "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "### Step 1: implicit GEMM → register tiles" in text
    assert "**What was done, in the author's words.** four outputs per thread, filters in constant memory" in text
    (tmp_path / "bad.toml").write_text("[version]\nrun = 1\n")
    bad = cli("report", "--optimisations", str(tmp_path / "bad.toml"))
    assert bad.returncode == 2 and "[[version]] tables" in bad.stderr


def test_explain_session_from_python(tmp_path):
    """The library call a notebook makes: the same diagnoses, notes through the callbacks."""
    from profconv.session import Callbacks, ExplainRequest, ExplainSession

    seen = []
    out = ExplainSession(ExplainRequest(str(FA20), only=["tuned/conv2"], collect="no"), Callbacks(note=seen.append)).run()
    assert [x.ev.key for x in out.explanations] == ["tuned/conv2"] and not out.stored and seen == []
    assert out.explanations[0].advice[0].technique == "tensor-cores"


def test_h200_square_tile_over_four_channels(fa20_ops):
    """Fall 2020 conv1 has M = 4: our fused 16×16 matmul tile leaves 12 of 16 rows idle (it is 1.7× slower on
    conv1 than on conv2, which has 2.9× the FLOPs); conv2 (M = 16) fills the tile."""
    one = {a.technique: a for a in fa20_ops["fused/conv1"].advice}
    assert one["gemm-tile"].reason.startswith("a 256-thread (16×16) output tile over M = 4 output channels leaves 12")
    assert round(one["gemm-tile"].gain_share, 3) == 0.365
    assert "gemm-tile" not in {a.technique for a in fa20_ops["fused/conv2"].advice}
