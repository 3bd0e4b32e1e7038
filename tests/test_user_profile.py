"""User kernels profiled and timed like ours, without a GPU: a child process's CUPTI records merged with
the run's, ncu parts of each kernel's own ncu run folded into the run's profile, the child's environment,
the stop-when-stable rule on the course contract's timing (fake events), the nvcc build shared by a
kernel's children, bench's sweep line."""

import json
import sys
from pathlib import Path

import pytest
from test_profile_external import NCU_CSV

from profconv.profile import cupti_child, session
from profconv.profile.activity import ApiCall, GpuActivity, Range, Records, merge, profiles, timed_ops
from profconv.run.models import ConvShape
from profconv.run.user import build, contracts, isolate

S = ConvShape(10, 4, 1, 28, 28, 5)


def _parent() -> Records:
    ranges = [Range("m", "profconv", 1000, 5000, 7), Range("naive", "profconv", 1000, 5000, 7),
              Range("conv1", "profconv", 1000, 5000, 7)]
    api = [ApiCall("cuLaunchKernel", 1100, 1300, 1, 7, "driver")]
    gpu_ = [GpuActivity("conv_forward", 1400, 3400, 1, 7, "kernel")]
    return Records(api, gpu_, ranges)


def _child() -> Records:
    """The user kernel's process: the same thread id and correlation id as the parent's, by chance."""
    ranges = [Range(p, "profconv", 10000, 20000, 7) for p in ("m", "tiled", "conv1")]
    ranges += [Range("check", "profconv", 10000, 12000, 7)]
    api = [ApiCall("cuLaunchKernel", 10100, 10200, 1, 7, "driver"),  # the check call
           ApiCall("cuLaunchKernel", 13000, 13100, 2, 7, "driver")]  # the timed call
    gpu_ = [GpuActivity("conv_tiled", 10300, 11300, 1, 7, "kernel"),
            GpuActivity("conv_tiled", 13200, 14000, 2, 7, "kernel")]
    return Records(api, gpu_, ranges)


def test_records_round_trip_through_json():
    r = _child()
    assert Records.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    with pytest.raises(ValueError, match="not a CUPTI records file"):
        Records.from_dict({"api": [], "gpu": []})


def test_a_childs_records_are_profiled_with_the_runs():
    merged = merge(_parent(), [_child()])
    # the child's correlation and thread ids moved past the parent's: no launch is paired with the other's
    assert [a.correlation_id for a in merged.api] == [1, 3, 4]
    assert {a.thread_id for a in merged.api} == {7, 8} and {r.thread_id for r in merged.ranges} == {7, 8}
    frame, labels = profiles(merged.api, merged.gpu, merged.ranges)
    assert labels == ["naive", "tiled"]
    tiled = frame[(frame.profile == 2) & (frame.section == "gpu")]
    assert tiled[["name", "calls", "total_ns"]].values.tolist() == [["conv_tiled", 1, 800.0]]  # the timed call only
    ops = {o.op: o for o in timed_ops(merged.api, merged.gpu, merged.ranges)}
    assert ops["m/tiled/conv1"].busy_ns == 800.0 and ops["m/naive/conv1"].busy_ns == 2000.0


def test_cupti_child_command_line_and_records(tmp_path):
    argv = [sys.executable, "-m", "profconv.run.user.worker", "/tmp/job.json"]
    assert cupti_child.wrap(tmp_path / "r.json", argv) == [
        sys.executable, "-m", "profconv.profile.cupti_child", str(tmp_path / "r.json"), "profconv.run.user.worker",
        "/tmp/job.json"]
    assert cupti_child.wrap(tmp_path / "r.json", argv, work_apis=True)[3:5] == ["--work-apis", str(tmp_path / "r.json")]
    with pytest.raises(ValueError):
        cupti_child.wrap(tmp_path / "r.json", ["./a.out"])
    assert cupti_child.read(tmp_path / "none.json") == (
        None, "the child process ended before writing its activity records")
    (tmp_path / "bad.json").write_text("{")
    assert cupti_child.read(tmp_path / "bad.json")[1] == "the child's activity records cannot be read (JSONDecodeError)"
    (tmp_path / "err.json").write_text(json.dumps({"error": "CUPTI could not start in the child process: x"}))
    assert cupti_child.read(tmp_path / "err.json") == (None, "CUPTI could not start in the child process: x")
    (tmp_path / "ok.json").write_text(json.dumps(_child().to_dict()))
    assert Records.from_dict(cupti_child.read(tmp_path / "ok.json")[0]) == _child()


def test_cupti_child_runs_the_module_and_keeps_its_exit_status(tmp_path, monkeypatch):
    """Without cupti-python (this machine) the module still runs; the records file says why it is empty."""
    (tmp_path / "userprog.py").write_text("import sys\nprint('ran', sys.argv[1:])\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    out = tmp_path / "records.json"
    rc = cupti_child.main([str(out), "userprog", "a", "b"])
    assert rc == 3
    assert cupti_child.main(["--work-apis", str(tmp_path / "verdict.json"), "userprog"]) == 3  # a verdict's records
    raw, why = cupti_child.read(out)
    try:
        import cupti  # noqa: F401
    except ImportError:
        assert raw is None and why.startswith("CUPTI could not start in the child process")
    else:
        assert raw is not None and why is None


NCU_USER = NCU_CSV.replace("tuned", "mine").replace("cudnn", "mine2")


def test_a_user_kernels_ncu_part_joins_the_runs_ncu_summary(tmp_path):
    out = "profconv-progress: m/mine/conv1: check\n" + NCU_USER + "ran: kernel printf\n"
    csv = session.ncu_csv(out)
    assert csv.startswith('"ID"') and "profconv-progress" not in csv and "==PROF==" not in csv
    ps, part = session.ncu_part(csv, tmp_path / "ncu-mine.csv", tmp_path / "ncu-mine.log", 1, {"tool": "ncu"})
    assert (tmp_path / "ncu-mine.csv").read_text() == csv
    assert part["set_aside"] == 3 and [k["role"] for k in part["launches"]][:3] == ["tune", "check", "timed"]
    assert set(ps.frame["name"]) == {"conv_mine", "sgemm"}
    # no profile yet (only user kernels, --profile ncu): the part is the run's ncu summary
    alone = session.with_user_ncu({}, part, "mine")
    assert alone["tool"] == "ncu" and alone["kernels_raw"] == {"mine": "ncu-mine.csv"} and alone["raw"] is None
    # ncu of the built-in variants: launches appended, rows set aside summed
    builtin = {"tool": "ncu", "tools": ["ncu"], "raw": "ncu-raw.csv", "set_aside": 2, "calls_per_op": 1,
               "launches": [{"range": "m/naive/conv1", "role": "timed", "kernel": "k", "metrics": {}, "units": {}}]}
    both = session.with_user_ncu(builtin, part, "mine")
    assert both["raw"] == "ncu-raw.csv" and both["set_aside"] == 5 and len(both["launches"]) == 6
    # CUPTI and ncu: the ncu part under "ncu"; CUPTI only: "ncu" added to the tools
    cupti = {"tool": "cupti", "tools": ["cupti"], "ops": []}
    with_ncu = session.with_user_ncu({**cupti, "tools": ["cupti", "ncu"], "ncu": builtin}, part, "mine")
    assert with_ncu["tools"] == ["cupti", "ncu"] and len(with_ncu["ncu"]["launches"]) == 6
    added = session.with_user_ncu(cupti, part, "mine")
    assert added["tools"] == ["cupti", "ncu"] and added["ncu"]["kernels_raw"] == {"mine": "ncu-mine.csv"}
    # and the run record takes it
    from profconv.records import ProfileInfo, struct_from

    assert struct_from(ProfileInfo, added).ncu.kernels_raw == {"mine": "ncu-mine.csv"}


def test_the_child_does_not_inherit_the_parents_cupti_injection():
    env = isolate.child_env({"PATH": "/bin", "NVTX_INJECTION64_PATH": "/x/libcupti.so.13"})
    assert env == {"PATH": "/bin", "PYTHONUNBUFFERED": "1"}
    ncu = {"NVTX_INJECTION64_PATH": "/opt/nsight-compute/libInterceptorInjectionTarget.so"}
    assert isolate.child_env(ncu)["NVTX_INJECTION64_PATH"] == ncu["NVTX_INJECTION64_PATH"]  # a tool around us


def test_a_kernels_children_share_one_nvcc_build(tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text("extern \"C\" void f() {}\n")
    (tmp_path / "k.cuh").write_text("// header\n")
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        Path(argv[argv.index("-o") + 1]).write_bytes(b"lib")
        return type("P", (), {"returncode": 0, "stdout": "", "stderr": ""})()

    monkeypatch.setattr(build, "find_nvcc", lambda: "/usr/bin/nvcc")
    monkeypatch.setattr(build.subprocess, "run", fake_run)
    out = tmp_path / "b" / "lib.so"
    out.parent.mkdir()
    for _ in range(3):
        build.compile_library([src], out, "sm_90", [tmp_path], {"T": 8}, (), {})
    assert len(calls) == 1
    (tmp_path / "k.cuh").write_text("// header, edited\n")  # a header beside the source changed: rebuilt
    build.compile_library([src], out, "sm_90", [tmp_path], {"T": 8}, (), {})
    build.compile_library([src], out, "sm_90", [tmp_path], {"T": 16}, (), {})  # other defines: rebuilt
    assert len(calls) == 3


def test_bench_says_which_candidate_of_the_sweep_won():
    report = {"TILE=8": 0.00123, "TILE=16": 0.000987, "TILE=32": "wrong: relative error 0.3 above tolerance 1e-05"}
    assert contracts.sweep_text(report, {"TILE": 16}) == (
        "TILE=16 chosen of 3: TILE=8 1.230 ms, TILE=16 0.987 ms, TILE=32 wrong: relative error 0.3 above tolerance "
        "1e-05")


def test_notes_are_listed_one_line_each():
    from profconv.commands.run import user_notes
    from profconv.records import VariantResult

    res = VariantResult(100, "mine", user={"user": True})
    isolate.note(res, "ncu: not profiled (the kernel FAILED its checks)")
    isolate.note(res, "compute-sanitizer racecheck: 1 warning(s)")
    rec = type("R", (), {"results": [res, VariantResult(100, "naive")]})()
    assert user_notes(rec) == ["mine (user) (100): ncu: not profiled (the kernel FAILED its checks)",
                               "mine (user) (100): compute-sanitizer racecheck: 1 warning(s)"]


def test_report_lists_the_notes_on_user_kernels(tmp_path, cli):
    src = json.loads((Path(__file__).parent / "data" / "runs" / "user-kernels-h200.json").read_text())
    tiled = next(r for r in src["results"] if r["variant"] == "tiled")
    tiled["user"]["notes"] = ["ncu: its run under ncu failed: timed out after 90 s (log: ncu-tiled.log)"]
    (tmp_path / "run.json").write_text(json.dumps(src))
    r = cli("report", tmp_path / "run.json", "--markdown", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert "## Notes on your kernels" in text or "### Notes on your kernels" in text
    assert "- `tiled` (1,000 images): ncu: its run under ncu failed: timed out after 90 s (log: ncu-tiled.log)" in text


def test_racecheck_report_recorded_on_an_h100_is_one_finding_with_both_lines():
    """compute-sanitizer 2025.3.1 racecheck on tests/data/kernels/bad/racy.cu (H100, the GPU run of this
    issue): 4 reports of one race from several instructions, in NVRTC's cache file name; one finding."""
    text = (Path(__file__).parent / "data" / "sanitizer" / "racecheck-racy-h100.txt").read_text()
    r = isolate.parse_sanitizer(text, "/me/racy.cu")
    assert (r["errors"], r["warnings"], r["complete"]) == (4, 0, True)
    assert len(r["findings"]) == 1
    assert r["findings"][0].startswith(
        "Error: Race reported between Write access at /me/racy.cu:30 (conv) and Read access at /me/racy.cu:35 (conv) [")
    failure, notes = isolate.sanitizer_verdict({"racecheck": r})
    assert failure.startswith("compute-sanitizer racecheck: 4 hazard(s): Error: Race reported") and notes == []


def test_report_of_the_h100_run_shows_user_kernels_in_ncu_and_the_agreement(tmp_path, cli):
    """The record of `run --profile cupti,ncu` with three user kernels on an H100 (reports/runs/byok/
    h100-profiled): their timed ops in CUPTI's ops, ncu's metrics and the agreement table, like naive's."""
    src = Path(__file__).parent / "data" / "runs" / "user-kernels-profiled-h100.json"
    rec = json.loads(src.read_text())
    prof = rec["profile"]
    assert prof["profiles"] == ["naive", "tiled", "course-minidnn", "cupy-rawkernel"]
    ops = {o["op"]: o for o in prof["ops"]}
    assert ops["ece408/tiled/conv1"]["launches"] == 1 and ops["ece408/tiled/conv1"]["calls"] == 8
    assert prof["ncu"]["kernels_raw"] == {"tiled": "ncu-tiled.csv", "course-minidnn": "ncu-course-minidnn.csv",
                                          "cupy-rawkernel": "ncu-cupy-rawkernel.csv"}
    r = cli("report", src, "--markdown", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert ("raw output: `ncu-raw.csv`, `ncu-tiled.csv`, `ncu-course-minidnn.csv`, `ncu-cupy-rawkernel.csv`; each of "
            "your kernels profiled in a run of its own") in text
    assert "| ece408/tiled/conv1 | `conv_tiled` | 4,007,392 |" in text
    assert "| tiled/conv1 | 4.12 ms | 4.073 ms | 4.073 ms | 4.007 ms | -1.1% | -2.7% |" in text
    assert "| course-minidnn/conv2 | 9.942 ms | 9.762 ms |" in text


def test_bench_runs_a_declared_sweep_before_its_check():
    from profconv.records.bench import BenchResult
    from profconv.run import bench
    from profconv.run.variant import Variant

    seen = {}

    def tune(cp, x, w, bias, s, check, make_out):
        seen["shape"] = s
        return {"TILE=8": 0.002, "TILE=16": 0.001}

    v = Variant("mine", "", "user kernel (device)", "fp32", 1e-5, "gpu", tune=tune)
    res = BenchResult("mine", "t", "fp32", "fp32", "cudnn", 1e-5)
    assert bench._tune(None, "ece408/conv1/mine", v, ("x", "w", None, "out"), "ref", S, res) == {
        "TILE=8": 0.002, "TILE=16": 0.001}
    assert seen["shape"] == S and res.status == "ok"

    def no_candidate(*a):
        raise contracts.KernelError("no candidate of the sweep was correct: TILE=8: wrong: relative error 0.5")

    bad = BenchResult("mine", "t", "fp32", "fp32", "cudnn", 1e-5)
    v2 = Variant("mine", "", "user kernel (device)", "fp32", 1e-5, "gpu", tune=no_candidate)
    assert bench._tune(None, "ece408/conv1/mine", v2, ("x", "w", None, "out"), "ref", S, bad) == {}
    assert bad.status == "failed" and bad.error == (
        "KernelError: no candidate of the sweep was correct: TILE=8: wrong: relative error 0.5")


def test_a_kernel_whose_strict_checks_fail_under_ncu_keeps_its_counters(tmp_path, monkeypatch):
    """An fp16 student file is ok by its course's rules but fails profconv's fp32 tolerance inside its ncu child
    (window 5: its counters were thrown away, "no counters recorded"): the kernel ran, the counters are kept."""
    from profconv.profile.external import NcuSettings
    from profconv.records import VariantResult
    from profconv.run.user import manifest
    from profconv.session import run as run_session

    d = manifest.load(str(Path(__file__).resolve().parent.parent / "examples" / "device-tiled"))
    under = VariantResult(10, "mine", "user kernel", "fp16", status="failed",
                          error="conv1: relative error 0.00125 above tolerance 1e-05")
    out = "profconv-progress: m/mine/conv1: check\n" + NCU_USER
    monkeypatch.setattr(isolate, "run_under", lambda *a, **k: (under, out))
    res = VariantResult(10, "mine", "user kernel", "fp16", status="ok")
    job = isolate.KernelJob(kernel="x", contract=d.contract, model="m", images=10, repeat=1, warmup=0, timeout=60)
    ps, part = run_session._user_ncu(d, job, res, "ncu", ["m/mine/conv1"], NcuSettings(), tmp_path, False, print)
    assert ps is not None and part is not None and part["launches"]
    assert any("strict checks said: conv1: relative error 0.00125" in n and "counters are kept" in n
               for n in res.user["notes"])
