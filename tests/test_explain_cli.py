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
