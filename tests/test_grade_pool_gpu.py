"""The grade worker on a GPU: the same verdicts as `profconv run --kernel` processes, a crashing and a
wrong kernel between correct ones, the cost split of every job (skipped without CUDA)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from profconv.grade import manifest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
BAD = Path(__file__).parent / "data" / "kernels" / "bad"


def test_pool_and_process_give_the_same_verdicts(tmp_path: Path) -> None:
    subs = [EX / "device-tiled", BAD / "oob.cu", BAD / "segfault"]  # ok, an illegal address, a host segfault
    common = [*map(str, subs), "--model", "ece408-fa20", "--images", "200", "--kernel-timeout", "60", "--no-report"]
    pool = run_cli("grade", *common, "--out", str(tmp_path / "pool"), "--cache", str(tmp_path / "cache"))
    assert pool.returncode == 0, pool.stdout + pool.stderr
    proc = run_cli("grade", *common, "--out", str(tmp_path / "proc"), "--no-pool")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    a, b = (pd.read_csv(tmp_path / d / "leaderboard.csv").set_index("submission") for d in ("pool", "proc"))
    assert a["verdict"].to_dict() == b["verdict"].to_dict()
    assert a.loc["device-tiled", "verdict"] == "ok" and a.loc["oob", "verdict"] == "FAILED"
    assert (a["rule"].fillna("") == b["rule"].fillna("")).all()
    jobs = manifest.read(tmp_path / "pool")["jobs"]
    assert {j["runner"] for j in jobs} == {"pool"}
    for j in jobs:  # every job of the pool: its kernel's child and the verdict; the bundle once
        assert j["cost"]["child_s"] > 0 and "judge_s" in j["cost"], j
    assert sum(1 for j in jobs if j["cost"].get("bundle_s", 0) > 0) == 1
    import json

    (meta,) = (tmp_path / "cache" / "bundles").glob("*/bundle.json")
    assert "check_kernels_s" in json.loads(meta.read_text())["parts"]  # the checks' kernels compiled with the bundle
    (steps,) = (tmp_path / "pool" / "jobs" / "device-tiled").rglob("*.gpusteps.json")
    marks = json.loads(steps.read_text())
    assert marks[0][1] == "shared" and marks[-1][1] == "release" and len(marks) > 10  # a child's lock events
