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
    cheats = sorted(p for p in CHEAT.iterdir() if p.is_dir())
    args = [a for k in cheats for a in ("--kernel", k)]
    r = cli("run", "--model", "ece408", "--images", "200", "--variant", "none", "--kernel", EX / "course-minidnn",
            *args, "--repeat", "4", "--warmup", "1", "--ci-target", "0", "--out", tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    got = rows(tmp_path)
    assert got["course-minidnn"]["status"] == "ok", got["course-minidnn"]["error"]
    err = {k: v["error"] or "" for k, v in got.items()}
    assert all(got[c.name.replace("constant_output", "constant-output")]["status"] == "failed" for c in cheats), err
    assert "conv1: the output of the timed calls is wrong" in err["cached_by_pointer"]
    assert "conv1: the output of the timed calls is wrong" in err["replayed"]
    assert "conv1: the output of the timed calls is wrong" in err["skips_calls"]
    assert "conv1: work done outside conv_forward_gpu" in err["work_in_prolog"]
    assert "conv1: work done outside conv_forward_gpu" in err["half_in_prolog"]
    half = got["half_in_prolog"]["facts"]["layers"][0]["ghost"]["matched"]
    assert 0.3 < half < 0.7, half
    assert "conv1: work left running on another stream after the call returned" in err["side_stream"]
    const = got["constant-output"]
    assert "the output of the timed calls is wrong" in err["constant-output"] or "relative error" in err["constant-output"]
    assert const["facts"]["layers"][0]["timed"]["worst_rel_error"] > 0.9
    honest = got["course-minidnn"]["facts"]
    for lf in honest["layers"]:
        assert lf["timed"]["wrong"] == 0 and lf["timed"]["fresh_inputs"] and lf["determinism"]["identical"]
        assert lf["ghost"]["matched"] < 0.01 and lf["timing"]["left_running_s"] < 1e-4
        assert lf["timing"]["cold_s"] > 0 and lf["timing"]["end_to_end_median_s"] > lf["timing"]["op_median_s"]
    assert honest["harness"]["host_memory"] == "pageable" and honest["harness"]["phases"] == [
        "prolog", "conv_forward_gpu", "epilog"]


def test_course_files_of_every_oddity_get_their_facts(tmp_path, cli):
    r = cli("run", "--model", "ece408-fa20", "--images", "200", "--variant", "none",
            "--kernel", COURSE / "mxnet-generic", "--kernel", COURSE / "m3" / "req_1", "--kernel", COURSE / "m3" / "op_4",
            "--kernel", COURSE / "specialised", "--kernel", COURSE / "minidnn-single",
            "--repeat", "4", "--warmup", "1", "--ci-target", "0", "--out", tmp_path)
    got = rows(tmp_path)
    assert set(got) == {"mxnet-generic", "req_1", "op_4", "specialised", "minidnn-single"}, r.stdout + r.stderr
    gen = got["mxnet-generic"]
    assert gen["status"] == "ok", gen["error"]  # atomicAdd partial sums into the zeroed y
    assert gen["facts"]["form"]["form"] == "mxnet-generic" and gen["facts"]["harness"]["y_initial"] == "zero"
    tf32 = got["req_1"]["facts"]
    assert tf32["form"]["folder"] == "req_1" and tf32["compiled"]["ok"]
    assert all(1e-6 < lf["check"]["rel_error"] < 1e-2 for lf in tf32["layers"])  # TF32's error, measured
    assert len(tf32["edges"]) == 8 and tf32["correctness"] is not None  # measured although above fp32 tolerance
    assert got["req_1"]["error"].startswith("conv1: relative error")
    op4 = got["op_4"]
    assert op4["status"] == "ok", op4["error"]  # cudaHostRegister of the (pageable) host output works
    f = op4["facts"]
    assert "/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h" in f["compiled"]["include_map"]
    first = f["layers"][0]["timing"]
    assert first["cold_s"] > 5 * first["op_median_s"], first  # the cuBLAS handle's first creation
    spec = got["specialised"]
    assert all(c["status"] == "ok" for c in spec["conv"])
    assert spec["status"] == "failed" and spec["error"].startswith("not general: ")
    bad = [e for e in spec["facts"]["edges"] if e["output"]["rel_error"] > 1e-5]
    assert bad and all(e["shape"].startswith("B=3") for e in bad)
    assert got["minidnn-single"]["status"] == "ok", got["minidnn-single"]["error"]


def test_secret_seed_stays_out_of_the_record(tmp_path, cli):
    r = cli("run", "--model", "ece408", "--images", "50", "--variant", "none", "--kernel", EX / "course-minidnn",
            "--secret-seed", "final ranking 2025", "--repeat", "3", "--ci-target", "0", "--out", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    h = rows(tmp_path)["course-minidnn"]["facts"]["harness"]
    assert h["secret_seed"] is True and "seed" not in h
    assert "final ranking 2025" not in (tmp_path / "run.json").read_text()
