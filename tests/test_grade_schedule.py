"""Where and when grade's jobs ran (profconv/grade/schedule.py), the GPU given back before the report,
the cores split between concurrent jobs, --sanitize passed through, and the ratio to cuDNN with its
range (CPU only: fake jobs and fake GPUs)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_grade import FAKE, _grade, klass  # noqa: F401  (klass is a fixture)

from profconv.grade import executors, leaderboard, manifest
from profconv.grade.executors import LocalExecutor
from profconv.grade.gpus import Gpu
from profconv.grade.jobs import JobResult, JobSpec, build_command
from profconv.grade.schedule import schedule
from profconv.grade.submissions import discover
from profconv.render import leaderboard as render


def _job(name: str, dev: str | None, a: float, b: float, host: str = "n1", status: str = "finished") -> JobResult:
    def iso(t: float) -> str:
        return f"2026-11-26T10:00:{t:06.3f}+00:00"

    return JobResult(key=f"{name}/m", submission=name, model="m", digest="d", fingerprint="f", status=status,
                     host=host, visible_devices=dev, gpu="NVIDIA H100 80GB HBM3", started=iso(a), ended=iso(b))


def test_schedule_two_gpus_at_once_one_job_each() -> None:
    jobs = [_job("a", "0", 0, 10), _job("b", "1", 1, 9), _job("c", "0", 10, 15), _job("d", "1", 9, 20),
            _job("e", None, 0, 0, status="unplaced")]
    s = schedule(jobs)
    assert [(g.device, g.jobs, g.busy_s, g.max_at_once) for g in s.gpus] == [("0", 2, 15.0, 1), ("1", 2, 19.0, 1)]
    assert (s.span_s, s.parallel_s, s.max_gpus, s.max_per_gpu, s.untimed) == (20.0, 14.0, 2, 1, 1)
    assert s.lines() == [
        "GPU 0 (NVIDIA H100 80GB HBM3): 2 job(s), 15.0 s busy; GPU 1 (NVIDIA H100 80GB HBM3): 2 job(s), 19.0 s busy",
        "2 GPUs busy at once at most; two or more busy for 14.0 s of the 20.0 s the jobs took",
        "never two jobs on one GPU"]


def test_schedule_finds_two_jobs_on_one_gpu_and_names_hosts() -> None:
    s = schedule([_job("a", "0", 0, 10), _job("b", "0", 5, 12), _job("c", "0", 0, 4, host="n2")])
    assert s.max_per_gpu == 2 and s.lines()[-1] == "RULE BROKEN: 2 jobs at once on one GPU"
    assert [(g.host, g.device, g.busy_s) for g in s.gpus] == [("n1", "0", 12.0), ("n2", "0", 4.0)]
    assert s.lines()[0].startswith("GPU n1:0 (")
    assert schedule([]).lines() == [] and schedule([_job("x", "", 0, 1)]).untimed == 1


def test_local_executor_gives_the_gpu_back_before_the_report(klass: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("FAKE_SLEEP", "0.3")
    real_finish = executors.finish

    def slow_finish(spec, result, python=None, reporter=None):  # a report that takes a while (needs no GPU)
        time.sleep(1.0)
        return real_finish(spec, result, python, reporter)

    monkeypatch.setattr(executors, "finish", slow_finish)
    subs = [s for s in discover([str(klass)]) if s.name in ("alice", "bob")]
    specs = manifest.plan(subs, manifest.JobSettings(models=("ece408-high", "ece408"), job_command=FAKE),
                          tmp_path / "g")
    got: list[JobResult] = []
    ex = LocalExecutor(gpus=[Gpu("0", "Fake H100")])
    ex.run(specs, got.append)
    assert len(got) == 4 and {r.visible_devices for r in got} == {"0"}
    runs = sorted(got, key=lambda r: r.started or "")
    # each next job started on the one GPU while the previous one was still writing its report
    assert all(b.started < a.finished for a, b in zip(runs, runs[1:]))
    assert all(a.ended <= b.started for a, b in zip(runs, runs[1:]))  # but never two on the GPU at once
    assert schedule(got).max_per_gpu == 1


def test_local_executor_splits_the_cores_between_concurrent_jobs(klass: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(executors.os, "cpu_count", lambda: 16)
    subs = [s for s in discover([str(klass)]) if s.name == "alice"]
    specs = manifest.plan(subs, manifest.JobSettings(models=("ece408-high",), job_command=FAKE), tmp_path / "g")
    got: list[JobResult] = []
    LocalExecutor(gpus=[Gpu("0", "Fake"), Gpu("1", "Fake")]).run(specs, got.append)
    env = json.loads(Path(got[0].record).read_text())["environment"]
    assert env["threads"] == "8" and got[0].cpu_threads == 8
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the user's own setting wins
    got = []
    LocalExecutor(gpus=[Gpu("0", "Fake"), Gpu("1", "Fake")]).run(
        manifest.plan(subs, manifest.JobSettings(models=("ece408-high",), job_command=FAKE, report=False),
                      tmp_path / "h"), got.append)
    assert json.loads(Path(got[0].record).read_text())["environment"]["threads"] == "3"


def test_sanitize_is_passed_to_profconv_run(tmp_path: Path) -> None:
    spec = JobSpec("alice", "/k/alice", "d" * 64, "ece408-high", str(tmp_path), sanitize=True)
    argv = build_command(spec, "python")
    assert argv[-1] == "--sanitize" and "--sanitize" not in build_command(
        JobSpec("alice", "/k/alice", "d" * 64, "ece408-high", str(tmp_path)), "python")
    assert spec.fingerprint() != JobSpec("alice", "/k/alice", "d" * 64, "ece408-high", str(tmp_path)).fingerprint()


def test_grade_cli_sanitize_plan(klass: Path, tmp_path: Path) -> None:  # noqa: F811
    res = _grade([str(klass / "alice"), "--sanitize", "--plan", "--out", str(tmp_path / "g")])
    assert res.returncode == 0 and "--variant cudnn --out" in res.stdout and res.stdout.count("--sanitize") == 1
    # the plan names the untimed warm-up run first
    assert res.stdout.startswith("warm-up, untimed (ece408-high)\n") and "--images 2 --variant naive" in res.stdout
    res = _grade([str(klass / "alice"), "--plan", "--no-warmup", "--out", str(tmp_path / "g")])
    assert "warm-up" not in res.stdout


def test_grade_writes_the_schedule_and_where_the_jobs_ran(klass: Path, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr("profconv.grade.gpus.query", lambda ids=None, timeout=15.0: [])
    out = tmp_path / "g"
    res = _grade([str(klass / "alice"), str(klass / "bob"), str(klass / "dave"), "--gpus", "0,1", "--out", str(out),
                  "--job-command", FAKE])
    assert res.returncode == 0, res.stdout + res.stderr
    doc = manifest.read(out)
    sched = doc["schedule"]
    assert sched["max_per_gpu"] == 1 and sched["untimed"] == 0 and {g["device"] for g in sched["gpus"]} == {"0", "1"}
    assert sum(g["jobs"] for g in sched["gpus"]) == 3
    assert "never two jobs on one GPU" in res.stdout
    md = (out / "leaderboard.md").read_text()
    assert "## About this run" in md and "- This run: GPU 0 (Fake GPU): " in md
    page = (out / "leaderboard.html").read_text()
    assert "About this run" in page and "never two jobs on one GPU" in page
    assert page.count("never two jobs on one GPU") == 1
    board = leaderboard.board(leaderboard.layers(manifest.results(doc, out)))
    assert set(board["device"]) <= {"0", "1"} and board["started"].notna().all() and board["ended"].notna().all()


def _rec(user_ci: tuple[float, float] | None, ref_ci: tuple[float, float] | None) -> dict:
    def conv(t: float, ci: tuple[float, float] | None) -> dict:
        op = {"median_s": t, "min_s": t, "max_s": t, "samples_s": [t]}
        if ci:
            op.update(ci_low_s=ci[0], ci_high_s=ci[1])
        return {"layer": "conv1", "status": "ok", "op_time": op}

    return {"results": [
        {"images": 100, "variant": "cudnn", "status": "ok", "conv": [conv(0.002, ref_ci)]},
        {"images": 100, "variant": "mine", "status": "ok", "user": {"user": True}, "correctness": 0.9,
         "conv": [conv(0.003, user_ci)]}]}


def test_ratio_to_cudnn_with_its_range() -> None:
    res = JobResult(key="a/m", submission="a", model="m", digest="d", fingerprint="f", status="finished",
                    visible_devices="1", gpu="H100")
    rows = leaderboard.job_rows(res, _rec((0.0029, 0.0031), (0.0019, 0.0021)), builtin={"cudnn"})
    lay = leaderboard.pd.DataFrame(rows)
    assert rows[0]["op_low_s"] == 0.0029 and rows[0]["cudnn_high_s"] == 0.0021 and rows[0]["device"] == "1"
    board = leaderboard.board(_layers(lay))
    row = board.iloc[0]
    assert row["vs_cudnn"] == pytest.approx(1.5)
    assert row["vs_cudnn_low"] == pytest.approx(0.0029 / 0.0021) and row["vs_cudnn_high"] == pytest.approx(0.0031 / 0.0019)
    assert render._x_within(row) == "1.50x±9%"
    assert render._x_range(row) == "1.50x (1.38–1.63x)"
    # no interval for the kernel (fewer than 6 samples): the ratio alone, never an invented range
    rows = leaderboard.job_rows(res, _rec(None, (0.0019, 0.0021)), builtin={"cudnn"})
    row = leaderboard.board(_layers(leaderboard.pd.DataFrame(rows))).iloc[0]
    assert render._x_within(row) == "1.50x" and render._x_range(row) == "1.50x"
    assert leaderboard.pd.isna(row["vs_cudnn_low"])


def _layers(df):
    """leaderboard.layers' numeric part over rows already made (no run records on disk)."""
    import pandas as pd

    for c in leaderboard._NUMERIC:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    df["vs_cudnn"] = df["op_time_s"] / df["cudnn_s"]
    df["vs_median"] = 1.0
    return df[leaderboard.LAYER_COLUMNS]


def _procs_with(text: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text in (d / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(d.name))
            except OSError:
                pass
    return found


def test_sigterm_ends_the_running_jobs_like_ctrl_c(klass: Path, tmp_path: Path) -> None:  # noqa: F811
    """`timeout`, Slurm's time limit or `kill` sends SIGTERM: the jobs' process groups go with grade."""
    import os
    import signal
    import subprocess
    import sys

    from profconv.errors import ExitStatus

    out = tmp_path / "g"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                                     os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, "-m", "profconv", "grade", str(klass / "erin"), "--dry-run",
                             "--timeout", "60", "--out", str(out), "--job-command", FAKE],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 20
    while not _procs_with(str(out / "jobs" / "erin")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _procs_with(str(out / "jobs" / "erin")), "the hanging job never started"
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == int(ExitStatus.INTERRUPTED), stdout
    assert "interrupted after 0 of 1 job(s)" in stdout
    time.sleep(0.5)
    assert not _procs_with(str(out / "jobs" / "erin"))  # the job's process group ended with it


def test_a_host_bound_reference_is_said() -> None:
    board = leaderboard.pd.DataFrame({"cudnn_total_s": [45e-6, 50e-6, 100e-6, None]})
    note = leaderboard.host_bound_note(board)
    assert note is not None and note.startswith("cuDNN's Op Time here is 50 us (median of the jobs, 45-100 us)")
    assert leaderboard.host_bound_note(leaderboard.pd.DataFrame({"cudnn_total_s": [1.1e-3, 1.2e-3]})) is None
    assert leaderboard.host_bound_note(leaderboard.pd.DataFrame({"cudnn_total_s": [None]})) is None


def test_warmup_specs_one_per_model_and_gpu_type(tmp_path: Path) -> None:
    def spec(name: str, model: str, gpu: str | None) -> JobSpec:
        return JobSpec(name, f"/k/{name}", "d", model, str(tmp_path / name), gpu=gpu, timeout_s=900)

    warm = manifest.warmup_specs([spec("a", "ece408", None), spec("b", "ece408", None), spec("c", "cifar10", "H100"),
                                  spec("d", "ece408", "H100")], tmp_path)
    assert [(w.model, w.gpu, Path(w.out_dir).name, w.timeout_s, w.report) for w in warm] == [
        ("ece408", None, "ece408", 600.0, False), ("cifar10", "H100", "cifar10-H100", 600.0, False),
        ("ece408", "H100", "ece408-H100", 600.0, False)]
    assert build_command(warm[0], "py") == ["py", "-m", "profconv", "run", "--model", "ece408", "--images", "2",
                                            "--variant", "naive", "--out", str(tmp_path / "warmup" / "ece408")]


@pytest.mark.nogpu
def test_grade_warms_up_before_the_jobs_and_goes_on_when_it_fails(klass: Path, tmp_path: Path,  # noqa: F811
                                                                  monkeypatch) -> None:
    monkeypatch.setattr("profconv.grade.gpus.query", lambda ids=None, timeout=15.0: [])
    out = tmp_path / "g"
    # no GPU here: the warm-up's `profconv run --variant naive` ends with exit 3; the grade goes on
    res = _grade([str(klass / "alice"), "--gpus", "0", "--out", str(out), "--job-command", FAKE, "--warmup"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "warm-up: 1 untimed run(s) filled CuPy's kernel cache in" in res.stdout and "1 failed (exit 3" in res.stdout
    doc = manifest.read(out)
    assert [(w["submission"], w["model"], w["status"]) for w in doc["warmup"]] == [("(warm-up)", "ece408-high", "error")]
    assert doc["warmup"][0]["command"][2:6] == ["profconv", "run", "--model", "ece408-high"]
    assert [j["status"] for j in doc["jobs"]] == ["finished"]
    assert doc["warmup"][0]["ended"] <= doc["jobs"][0]["started"]  # before the timed job
    res = _grade([str(klass / "bob"), "--gpus", "0", "--out", str(tmp_path / "h"), "--job-command", FAKE])
    assert "warm-up" not in res.stdout and "warmup" not in manifest.read(tmp_path / "h")  # off with --job-command


def test_a_stage_after_the_layers_is_no_layer_column() -> None:
    """A kernel killed in its forward pass: the record has conv1 (ok, timed) and a failed 'forward'
    entry (as profconv run writes it, seen on 2x H100); the board has conv1 only, the verdict FAILED."""
    rec = _rec((0.0029, 0.0031), (0.0019, 0.0021))
    rec["model"] = {"name": "m", "conv_layers": [{"layer": "conv1", "shape": "M=50 C=1 28x28 K=5"}]}
    user = rec["results"][1]
    user["status"], user["error"] = "failed", "timed out after 12 s during m/mine/forward"
    user["conv"].append({"layer": "forward", "status": "failed", "op_time": None})
    res = JobResult(key="a/m", submission="a", model="m", digest="d", fingerprint="f", status="finished")
    rows = leaderboard.job_rows(res, rec, builtin={"cudnn"})
    assert [(r["layer"], r["verdict"], r["op_time_s"]) for r in rows] == [("conv1", "FAILED", None)]
    assert rows[0]["reason"] == "timed out after 12 s during m/mine/forward"
    board = leaderboard.board(_layers(leaderboard.pd.DataFrame(rows)))
    assert [c for c in board.columns if c.startswith("op_")] == ["op_conv1"]


def test_the_longest_known_jobs_go_first_and_the_never_graded_before_them(tmp_path: Path) -> None:
    def spec(name: str, model: str = "m") -> JobSpec:
        return JobSpec(submission=name, path="", digest="d", model=model, out_dir=str(tmp_path / name))

    todo = [spec("a"), spec("b"), spec("c"), spec("new"), spec("d"), spec("b", "m2")]
    nights = [{"jobs": [{"submission": "a", "model": "m", "wall_s": 50.0}, {"submission": "c", "model": "m", "wall_s": 9.0}]},
              {"jobs": [{"submission": "a", "model": "m", "wall_s": 12.0}, {"submission": "b", "model": "m", "wall_s": 30.0},
                        {"submission": "d", "model": "m", "wall_s": 12.0}, {"submission": "x", "model": "m", "wall_s": None}]}]
    got = manifest.longest_first(todo, nights)  # the latest night's time of each: a 12 s, b 30 s, c 9 s, d 12 s
    assert [(s.submission, s.model) for s in got] == [("new", "m"), ("b", "m2"), ("b", "m"), ("a", "m"), ("d", "m"),
                                                      ("c", "m")]
    assert manifest.longest_first(todo, []) == todo and manifest.longest_first(todo, [{"jobs": []}]) == todo


def test_a_jobs_length_holds_its_tail_after_the_gpu_work(tmp_path: Path) -> None:
    """s11b: a file launching a kernel per image ended its GPU work 15.3 s after its start (`wall_s`) and its
    record 49.4 s after it (27.7 s of CUPTI flush): started last, it was the class's last 26 s alone."""
    def spec(name: str) -> JobSpec:
        return JobSpec(submission=name, path="", digest="d", model="m", out_dir=str(tmp_path / name))

    night = {"jobs": [
        {"submission": "heavy", "model": "m", "wall_s": 15.327, "started": "2026-11-29T15:05:43.000+00:00",
         "finished": "2026-11-29T15:06:32.400+00:00", "cost": {"tail_s": 27.705}},
        {"submission": "typical", "model": "m", "wall_s": 19.2, "started": "2026-11-29T15:00:47.000+00:00",
         "finished": "2026-11-29T15:01:08.200+00:00", "cost": {"tail_s": 1.1}},
        {"submission": "older", "model": "m", "wall_s": 20.0, "cost": {"tail_s": 25.0}},  # no times: wall + tail
        {"submission": "bare", "model": "m", "wall_s": 30.0}]}
    got = manifest.longest_first([spec("typical"), spec("bare"), spec("heavy"), spec("older")], [night])
    assert [s.submission for s in got] == ["heavy", "older", "bare", "typical"]  # 49.4, 45.0, 30.0, 21.2 s
