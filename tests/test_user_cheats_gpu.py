"""On the GPU: the cheat suite (tests/data/kernels/cheat/) each FAILED with its reason while an honest course
file beside them passes; the committed course files' facts (TF32 WMMA measured, not refused; the cold call of a
cuBLAS handle beside the warm median; a layer-specialised kernel right on the course's shapes, not general);
--secret-seed kept out of the record."""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[1]
CHEAT = ROOT / "tests" / "data" / "kernels" / "cheat"
COURSE = ROOT / "tests" / "data" / "kernels" / "course"
EX = ROOT / "examples"


def rows(out: Path) -> dict:
    return {r["variant"]: r for r in json.loads((out / "run.json").read_text())["results"]}


def test_each_cheat_fails_with_its_reason(tmp_path, cli):
    """profconv's strict verdict on the harness's facts (`facts.legacy_*`; the course's rules judge the same facts)."""
    cheats = sorted(p for p in CHEAT.iterdir() if p.is_dir())
    args = [a for k in cheats for a in ("--kernel", k)]
    r = cli("run", "--model", "ece408", "--images", "100", "--variant", "none", "--kernel", EX / "course-minidnn",
            *args, "--repeat", "3", "--warmup", "1", "--ci-target", "0", "--out", tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    got = rows(tmp_path)
    honest = got.pop("course-minidnn")
    assert honest["status"] == "ok" and honest["facts"]["legacy_status"] == "ok", honest["error"]
    assert len(got) == len(cheats) and all(v["facts"]["legacy_status"] == "failed" for v in got.values()), got
    err = {k: v["facts"]["legacy_error"] for k, v in got.items()}
    for name in ("cached_by_pointer", "replayed", "skips_calls"):
        assert err[name].startswith("conv1: the output of the timed calls is wrong"), err[name]
    for name in ("work_in_prolog", "half_in_prolog"):
        assert err[name].startswith("conv1: work done outside conv_forward_gpu"), err[name]
    half = got["half_in_prolog"]["facts"]["layers"][0]["ghost"]["matched"]
    assert 0.3 < half < 0.7 and got["work_in_prolog"]["facts"]["layers"][0]["ghost"]["matched"] > 0.99
    assert err["side_stream"].startswith("conv1: work left running on another stream after the call returned")
    assert got["side_stream"]["facts"]["layers"][0]["timing"]["left_running_s"] > 1e-4
    assert "the output of the timed calls is wrong" in err["constant-output"]
    assert got["constant-output"]["facts"]["layers"][0]["check"]["rel_error"] < 0.9  # passed the loose tolerance once
    h = honest["facts"]
    for lf in h["layers"]:
        assert lf.get("timed", {}).get("wrong", 0) == 0 and lf["timed"]["fresh_inputs"] and lf["determinism"]["identical"]
        assert lf["ghost"]["matched"] < 0.02 and lf["timing"]["left_running_s"] < 1e-4
        assert lf["timing"]["cold_s"] > 0 and lf["timing"]["end_to_end_median_s"] > lf["timing"]["op_median_s"]
    assert h["harness"]["host_memory"] == "pageable" and h["harness"]["phases"] == ["prolog", "conv_forward_gpu", "epilog"]


def test_course_files_of_every_oddity_get_their_facts(tmp_path, cli):
    r = cli("run", "--model", "ece408-fa20", "--images", "100", "--variant", "none",
            "--kernel", COURSE / "mxnet-generic", "--kernel", COURSE / "m3" / "req_1", "--kernel", COURSE / "m3" / "op_4",
            "--kernel", COURSE / "specialised", "--kernel", COURSE / "minidnn-single", "--kernel", COURSE / "registers-once",
            "--repeat", "3", "--warmup", "1", "--ci-target", "0", "--out", tmp_path)
    got = rows(tmp_path)
    assert set(got) == {"mxnet-generic", "req_1", "op_4", "specialised", "minidnn-single", "registers-once"}, \
        r.stdout + r.stderr
    gen = got["mxnet-generic"]
    assert gen["facts"]["legacy_status"] == "ok", gen["facts"]["legacy_error"]  # atomicAdd into the zeroed y
    assert gen["facts"]["form"]["form"] == "mxnet-generic" and gen["facts"]["harness"]["y_initial"] == "zero"
    tf32 = got["req_1"]["facts"]
    assert tf32["form"]["folder"] == "req_1" and tf32["compiled"]["ok"]
    assert all(1e-6 < lf["check"]["rel_error"] < 1e-2 for lf in tf32["layers"])  # TF32's error, measured
    assert len(tf32["edges"]) == 8 and tf32["correctness"] is not None  # measured although above fp32 tolerance
    assert got["req_1"]["facts"]["legacy_error"].startswith("conv1: relative error")  # profconv's fp32 tolerance
    op4 = got["op_4"]
    assert op4["facts"]["legacy_status"] == "ok", op4["facts"]["legacy_error"]  # cudaHostRegister of pageable memory
    f = op4["facts"]
    assert "/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h" in f["compiled"]["include_map"]
    first = f["layers"][0]["timing"]
    assert first["cold_s"] > 5 * first["op_median_s"], first  # the cuBLAS handle's first creation
    spec = got["specialised"]
    assert all(c["status"] == "ok" for c in spec["conv"])
    assert spec["facts"]["legacy_status"] == "failed" and spec["facts"]["legacy_error"].startswith("not general: ")
    bad = [e for e in spec["facts"]["edges"] if e["output"]["rel_error"] > 1e-5]
    assert bad and all(e["shape"].startswith("B=3") for e in bad)
    assert got["minidnn-single"]["facts"]["legacy_status"] == "ok", got["minidnn-single"]["facts"]["legacy_error"]
    once = got["registers-once"]  # registered in every call's prolog, never unregistered, exits on an error
    assert once["facts"]["legacy_status"] == "ok" and all(c["status"] == "ok" for c in once["conv"]), once["facts"]


def test_secret_seed_stays_out_of_the_record(tmp_path, cli):
    r = cli("run", "--model", "ece408", "--images", "50", "--variant", "none", "--kernel", EX / "course-minidnn",
            "--secret-seed", "final ranking 2025", "--repeat", "3", "--ci-target", "0", "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    h = rows(tmp_path)["course-minidnn"]["facts"]["harness"]
    assert h["secret_seed"] is True and "seed" not in h
    assert "final ranking 2025" not in (tmp_path / "run.json").read_text()
