"""On the GPU, end to end: `profconv run --kernel` judges each kernel by a course's rules, from the harness's
facts, the child's CUPTI records and the built library's SASS; every verdict names its rule. The cheat suite
(tests/data/kernels/cheat/, mini-dnn files) under the mini-dnn project's rules (implied by their form), our
attribution files (tests/data/attribution/src/) under Spring 2025's."""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[1]
CHEAT = ROOT / "tests" / "data" / "kernels" / "cheat"
ATTRIBUTION = ROOT / "tests" / "data" / "attribution" / "src"


def verdicts(out: Path) -> dict[str, dict]:
    return {r["variant"]: r.get("verdict") or {} for r in json.loads((out / "run.json").read_text())["results"]}


def rule(v: dict) -> str | None:
    return (v.get("rule") or {}).get("id")


def test_the_cheat_suite_fails_by_the_course_rule_it_breaks(tmp_path, cli):
    cheats = sorted(p for p in CHEAT.iterdir() if p.is_dir())
    args = [a for k in cheats for a in ("--kernel", k)]
    r = cli("run", "--model", "ece408", "--images", "100", "--variant", "none", "--kernel", ATTRIBUTION / "honest.cu",
            *args, "--repeat", "3", "--warmup", "1", "--ci-target", "0", "--out", tmp_path)
    got = verdicts(tmp_path)
    print(json.dumps({k: [v.get("course"), v.get("status"), rule(v), v.get("reason")] for k, v in got.items()}, indent=1))
    assert r.returncode == 1, r.stdout + r.stderr
    honest = got.pop("honest")
    assert (honest["status"], honest["course"]) == ("ok", "minidnn"), honest
    assert honest["sass_read"] and [p["phase"] for p in honest["placement"]] == ["prolog", "timed", "epilog"]
    assert all(v["status"] == "failed" and v["course"] == "minidnn" for v in got.values()), got
    for name in ("cached_by_pointer", "replayed", "skips_calls"):  # caught on fresh inputs, whatever else broke first
        failed = {f["rule"]["id"] for f in got[name]["findings"] if f["outcome"] == "fail"}
        assert "profconv.timed-outputs" in failed, got[name]
    for name in ("work_in_prolog", "half_in_prolog"):
        assert rule(got[name]) == "minidnn.work-in-timed-call", got[name]
    assert rule(got["side_stream"]) == "profconv.nothing-left-running", got["side_stream"]
    assert rule(got["constant-output"]) in ("profconv.output-correct", "profconv.timed-outputs"), got["constant-output"]


def test_spring_2025_single_stream_and_the_prolog_from_the_gpus_records(tmp_path, cli):
    files = [ATTRIBUTION / f"{n}.cu" for n in ("honest", "prolog_work", "streams4", "cublas_gemm")]
    cli("run", "--model", "ece408-fa20", "--images", "100", "--variant", "none", "--course", "sp25",
        *[a for f in files for a in ("--kernel", f)], "--repeat", "3", "--warmup", "1", "--ci-target", "0",
        "--out", tmp_path)
    got = verdicts(tmp_path)
    print(json.dumps({k: [v.get("status"), rule(v), v.get("reason"), [o["name"] for o in v.get("optimisations", [])]]
                      for k, v in got.items()}, indent=1))
    assert got["honest"]["status"] == "ok"
    assert rule(got["prolog_work"]) == "sp25.work-in-timed-call"
    assert got["prolog_work"]["reason"].startswith("1 kernel launch(es) in the prolog: conv_forward_kernel") or \
        "without conv_forward_gpu" in got["prolog_work"]["reason"]
    assert (rule(got["streams4"]), got["streams4"]["reason"]) == ("sp25.single-stream", "4 streams in conv_forward_gpu")
    names = [o["name"] for o in got["cublas_gemm"]["optimisations"]]
    assert "library-cublas" in names and "unroll+matmul" in names
