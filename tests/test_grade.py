"""profconv grade on the CPU: submissions, the job command, the local executor, resuming, the leaderboard.

The jobs run tests/data/grade/fake_run.py (through --job-command) instead of `profconv run`: it
writes a run record, fails a check, crashes, hangs or exits with an error as each tiny submission
under tests/data/grade/class says, with no GPU and no compiler.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from profconv.errors import InputError
from profconv.grade import leaderboard, manifest
from profconv.grade.executors import LocalExecutor
from profconv.grade.gpus import Gpu, matches, parse_query
from profconv.grade.jobs import JobResult, JobSpec, build_command, run_job, validate_template
from profconv.grade.submissions import content_hash, discover

DATA = Path(__file__).parent / "data" / "grade"
FAKE = f"{{python}} {shlex.quote(str(DATA / 'fake_run.py'))} {{kernel}} {{model}} {{out}}"  # a checkout path with spaces


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    dst = tmp_path / "class"
    shutil.copytree(DATA / "class", dst)
    return dst


def _grade(args: list[str]):
    return run_cli("grade", *args)


# --- submissions ---------------------------------------------------------------------------------


def test_class_directory_is_one_submission_per_entry(klass: Path) -> None:
    subs = discover([str(klass)])
    assert [s.name for s in subs] == ["alice", "bob", "carol", "dave", "erin", "frank"]
    assert subs[0].path == (klass / "alice").resolve() and subs[5].path == (klass / "frank.py").resolve()
    assert all(len(s.digest) == 64 and not s.models and s.gpu is None for s in subs)


def test_submission_directory_given_directly(klass: Path) -> None:
    (subs,) = discover([str(klass / "bob")])
    assert subs.name == "bob" and subs.path == (klass / "bob").resolve()


def test_csv_listing_names_models_and_gpu(klass: Path) -> None:
    listing = klass / "m1.csv"
    listing.write_text("# milestone 1\nsubmission,name,model,gpu\nalice,alice-m1,ece408-high;ece408-low,H100\n"
                       "frank.py,,,\n")
    a, f = discover([str(listing)])
    assert (a.name, a.models, a.gpu, a.path) == ("alice-m1", ("ece408-high", "ece408-low"), "H100",
                                                  (klass / "alice").resolve())
    assert (f.name, f.models, f.gpu) == ("frank", (), None)


def test_toml_listing_and_a_kernel_manifest_toml(klass: Path) -> None:
    listing = klass / "list.toml"
    listing.write_text('[[submission]]\npath = "bob"\nmodels = ["ece408-high"]\ngpu = "A100"\n'
                       '[[submission]]\npath = "carol"\nname = "c"\n')
    b, c = discover([str(listing)])
    assert (b.name, b.models, b.gpu) == ("bob", ("ece408-high",), "A100")
    assert (c.name, c.models) == ("c", ())
    manifest_toml = klass / "mine.toml"
    manifest_toml.write_text('name = "mine"\nsource = "x.cu"\n')
    (only,) = discover([str(manifest_toml)])
    assert only.name == "mine" and only.path == manifest_toml.resolve()


@pytest.mark.parametrize("text, message", [
    ("name,model\nx,y\n", "needs a 'submission' column"),
    ("submission\nnobody\n", "no such file or directory"),
    ("submission\n\n,\n", "more cells than the header"),
    ("submission,name\n,x\n", "empty 'submission' cell"),
])
def test_bad_csv_listings_name_the_problem(klass: Path, text: str, message: str) -> None:
    listing = klass / "bad.csv"
    listing.write_text(text)
    with pytest.raises(InputError, match=message):
        discover([str(listing)])


def test_duplicate_names_are_refused(klass: Path, tmp_path: Path) -> None:
    other = tmp_path / "other" / "alice"
    other.mkdir(parents=True)
    (other / "k.cu").write_text("// fake: ok 1 1\n")
    with pytest.raises(InputError, match="two submissions are named 'alice'"):
        discover([str(klass / "alice"), str(other)])


def test_content_hash_follows_the_bytes_not_caches(klass: Path) -> None:
    before = content_hash(klass / "alice")
    (klass / "alice" / "__pycache__").mkdir()
    (klass / "alice" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (klass / "alice" / ".hidden").write_text("x")
    assert content_hash(klass / "alice") == before
    (klass / "alice" / "new-forward.cu").write_text("// fake: ok 0.001 0.0031\n")
    assert content_hash(klass / "alice") != before


# --- the job command -----------------------------------------------------------------------------


def _spec(tmp_path: Path, **kw) -> JobSpec:
    base = dict(submission="alice", path="/subs/alice", digest="d" * 64, model="ece408-high",
                out_dir=str(tmp_path / "jobs" / "alice" / "ece408-high"))
    return JobSpec(**{**base, **kw})


def test_build_command_is_profconv_run_with_the_kernel(tmp_path: Path) -> None:
    spec = _spec(tmp_path, images="100", repeat=3)
    assert build_command(spec, "/py") == ["/py", "-m", "profconv", "run", "--model", "ece408-high", "--kernel",
                                          "/subs/alice", "--variant", "cudnn", "--out", spec.out_dir,
                                          "--images", "100", "--repeat", "3", "--ci-target", "0",
                                          "--time-budget", "1"]
    custom = _spec(tmp_path, repeat=5, ci_target=0.01, time_budget_s=2.5)
    assert build_command(custom, "/py")[-6:] == ["--repeat", "5", "--ci-target", "0.01", "--time-budget", "2.5"]
    assert custom.fingerprint() != _spec(tmp_path, repeat=5).fingerprint()
    assert _spec(tmp_path).timed_repeat == 3 and _spec(tmp_path).fingerprint() == _spec(tmp_path, repeat=None).fingerprint()


def test_dry_run_command_runs_no_gpu_variant(tmp_path: Path) -> None:
    argv = build_command(_spec(tmp_path, dry_run=True), "py")
    assert argv[argv.index("--variant") + 1] == "cpu"


def test_build_command_passes_data_weights_and_kernel_timeout(tmp_path: Path) -> None:
    spec = _spec(tmp_path, data="/d/fmnist", weights="/d/w.npz", kernel_timeout_s=90.0, profile="ncu")
    assert build_command(spec, "py")[-8:] == ["--kernel-timeout", "90", "--data", "/d/fmnist", "--weights", "/d/w.npz",
                                              "--profile", "ncu"]
    assert spec.fingerprint() != _spec(tmp_path, data="/d/other", weights="/d/w.npz", kernel_timeout_s=90.0).fingerprint()


def test_build_command_from_a_template(tmp_path: Path) -> None:
    spec = _spec(tmp_path, job_command="apptainer exec c.sif {python} -m profconv run -m {model} --kernel '{kernel}' --out {out}")
    assert build_command(spec, "python3") == ["apptainer", "exec", "c.sif", "python3", "-m", "profconv", "run", "-m",
                                              "ece408-high", "--kernel", "/subs/alice", "--out", spec.out_dir]
    with pytest.raises(InputError, match="unknown placeholder"):
        validate_template("{python} {kernal}")


def test_fingerprint_changes_with_the_files_and_settings(tmp_path: Path) -> None:
    a = _spec(tmp_path)
    assert a.fingerprint() == _spec(tmp_path).fingerprint()
    assert a.fingerprint() != _spec(tmp_path, digest="e" * 64).fingerprint()
    assert a.fingerprint() != _spec(tmp_path, images="1000").fingerprint()


def test_run_job_timeout_kills_the_process_group(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    marker = tmp_path / "child-alive"
    child = f"import time; time.sleep(3); open({str(marker)!r}, 'w')"
    script.write_text(f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {child!r}])\n"
                      "time.sleep(60)\n")
    spec = _spec(tmp_path, job_command=f"{{python}} {shlex.quote(str(script))}", timeout_s=1.0)
    result = run_job(spec, engine="local")
    assert result.status == "timeout" and result.reason == "killed after the 1 s time limit"
    assert 1.0 <= result.wall_s < 30.0  # a loaded 2-core machine
    import time

    time.sleep(3.5)
    assert not marker.exists()  # the kernel's own child died with the job
    saved = json.loads((Path(spec.out_dir) / "job.json").read_text())
    assert saved["status"] == "timeout" and saved["submission"] == "alice"


def test_run_job_that_cannot_start(tmp_path: Path) -> None:
    spec = _spec(tmp_path, job_command="/nonexistent/python {kernel}")
    result = run_job(spec)
    assert result.status == "error" and result.reason.startswith("cannot start /nonexistent/python")


def test_gpu_query_parsing_and_type_matching() -> None:
    gpus = parse_query("0, NVIDIA H100 80GB HBM3, 580.65.06\n1, NVIDIA H100 80GB HBM3, 580.65.06\n")
    assert gpus == [Gpu("0", "NVIDIA H100 80GB HBM3", "580.65.06"), Gpu("1", "NVIDIA H100 80GB HBM3", "580.65.06")]
    assert matches("h100", gpus[0].name) and matches(None, None) and not matches("A100", gpus[0].name)


# --- the command, the local executor, resuming ----------------------------------------------------


def _board(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "leaderboard.csv", keep_default_na=True)


def test_grade_dry_run_every_submission_gets_its_row(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "grade"
    res = _grade([str(klass), "--dry-run", "--workers", "2", "--timeout", "2", "--out", str(out),
                  "--job-command", FAKE])
    assert res.returncode == 0, res.stdout
    assert "2 ok, 1 FAILED, 1 error, 1 timeout, 1 crashed of 6" in res.stdout
    assert "6 job(s) in " in res.stdout and "; per job: median " in res.stdout
    board = _board(out).set_index("submission")
    assert board["verdict"].to_dict() == {"alice": "ok", "bob": "ok", "carol": "FAILED", "frank": "error",
                                          "erin": "timeout", "dave": "crashed"}
    assert board.loc["alice", "rank"] == 1 and board.loc["bob", "rank"] == 2 and pd.isna(board.loc["carol", "rank"])
    assert board.loc["alice", "op_conv1"] == pytest.approx(0.001) and board.loc["alice", "total_s"] == pytest.approx(0.004)
    assert board.loc["alice", "vs_cudnn"] == pytest.approx(0.004 / 0.006)
    assert board.loc["bob", "vs_median"] == pytest.approx(0.008 / 0.006)
    assert board.loc["carol", "reason"] == "wrong output on conv1: rel. error 0.31 > 1e-05"
    assert board.loc["dave", "reason"] == "killed by SIGSEGV"
    assert board.loc["frank", "reason"] == "exit 2, no run record: error: frank.py: cannot build the kernel"
    doc = manifest.read(out)
    assert doc["engine"]["name"] == "local" and len(doc["jobs"]) == 6
    alice = next(j for j in doc["jobs"] if j["submission"] == "alice")
    assert (alice["gpu"], alice["driver"], alice["profconv_version"], alice["visible_devices"]) == (
        "Fake GPU", "13000", "0.1.0", "")
    assert alice["host"] and alice["started"] and alice["command"][0] == sys.executable
    md = (out / "leaderboard.md").read_text()
    assert "| 1 | alice | ece408-high | Fake GPU | ok | 1.000 | 3.000 | 4.000 | 0.67x | 0.67x | 0.8600 | — | " \
           "[run.json](jobs/alice/ece408-high/run.json) |" in md
    assert "- erin (ece408-high): timeout: killed after the 2 s time limit" in md
    page = (out / "leaderboard.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="leaderboard"' in page
    assert '<td class="num" data-v="0.6666666666666666">0.667×</td>' in page
    assert ">jobs/alice/ece408-high/run.json</td>" in page and "killed by SIGSEGV" in page


def test_grade_resumes_by_submission_hash(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "grade"
    args = [str(klass / "alice"), str(klass / "bob"), str(klass / "dave"), "--dry-run", "--out", str(out),
            "--job-command", FAKE]
    assert _grade(args).returncode == 0
    first = {j["submission"]: j["started"] for j in manifest.read(out)["jobs"]}
    (klass / "bob" / "new-forward.cu").write_text("// fake: ok 0.002 0.002\n")  # bob resubmits
    res = _grade(args)
    assert "2 job(s) finished before on the same submission hash: kept" in res.stdout
    assert "[1/1] bob/ece408-high finished" in res.stdout
    board = _board(out).set_index("submission")
    assert board.loc["bob", "total_s"] == pytest.approx(0.004)
    res = _grade([*args, "--retry-failed"])
    assert "[1/1] dave/ece408-high crashed" in res.stdout
    again = {j["submission"]: j["started"] for j in manifest.read(out)["jobs"]}
    assert again["alice"] == first["alice"]


def test_grade_plan_prints_commands_and_runs_nothing(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "grade"
    res = _grade([str(klass / "alice"), "--model", "ece408-high,ece408-low", "--plan", "--out", str(out),
                  "--images", "100"])
    assert res.returncode == 0
    assert "alice/ece408-high (to run)" in res.stdout and "alice/ece408-low (to run)" in res.stdout
    assert "-m profconv run --model ece408-low --kernel" in res.stdout and "--images 100" in res.stdout
    assert "2 job(s): 2 to run, 0 finished before" in res.stdout
    assert not out.exists()


def test_grade_markdown_and_csv_output(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "grade"
    res = _grade([str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE, "--format", "csv"])
    assert res.returncode == 0
    assert "rank,submission,model,gpu,device,verdict,reason,kernel,op_conv1,op_conv2,total_s" in res.stdout
    res = _grade([str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE, "-f", "markdown"])
    assert "| 1 | alice | ece408-high | Fake GPU | ok |" in res.stdout


@pytest.mark.parametrize("args, message", [
    (["--model", "nope"], "nope"),
    (["--executor", "kubernetes"], "--executor takes one of local, slurm, ray"),
    (["--format", "html"], "--format takes one of terminal, markdown, csv"),
    (["--timeout", "0"], "must be positive"),
    (["--job-command", "{python} {kernal}"], "unknown placeholder"),
    (["--gpus", "a,b"], "--gpus takes GPU indices"),
    (["--data", "/nonexistent/fmnist"], "--data: no such file or directory"),
    (["--kernel-timeout", "1000"], "--kernel-timeout must be positive and below --timeout (900 s)"),
])
def test_grade_usage_errors_are_one_line(klass: Path, tmp_path: Path, args: list[str], message: str) -> None:
    res = run_cli("grade", *[str(klass / "alice"), "--out", str(tmp_path / "g"), *args])
    assert res.returncode != 0
    assert message in res.stderr


def test_local_executor_never_puts_two_jobs_on_one_gpu(klass: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SLEEP", "0.5")
    subs = [s for s in discover([str(klass)]) if s.name in ("alice", "bob", "carol")]
    subs += [s.__class__(name=f"{s.name}2", path=s.path, digest=s.digest) for s in subs]
    specs = manifest.plan(subs, manifest.JobSettings(models=("ece408-high",), job_command=FAKE), tmp_path / "g")
    fake = [Gpu("0", "Fake H100"), Gpu("1", "Fake H100")]
    got: list[JobResult] = []
    LocalExecutor(gpus=fake).run(specs, got.append)
    assert len(got) == 6 and {r.visible_devices for r in got} == {"0", "1"}
    spans: dict[str, list[tuple[float, float]]] = {"0": [], "1": []}
    for r in got:
        env = json.loads(Path(r.record).read_text())["environment"]
        assert env["visible"] == r.visible_devices
        spans[env["visible"]].append((env["start"], env["end"]))
    for gpu_spans in spans.values():
        gpu_spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(gpu_spans, gpu_spans[1:]))  # one at a time per GPU
    assert sum(len(v) for v in spans.values()) == 6


def test_local_executor_places_by_gpu_type(klass: Path, tmp_path: Path) -> None:
    subs = discover([str(klass / "alice"), str(klass / "bob")])
    subs = [subs[0].__class__(name=s.name, path=s.path, digest=s.digest, gpu=g) for s, g in zip(subs, ["A100", "H100"])]
    specs = manifest.plan(subs, manifest.JobSettings(models=("ece408-high",), job_command=FAKE), tmp_path / "g")
    got: list[JobResult] = []
    LocalExecutor(gpus=[Gpu("0", "NVIDIA A100-SXM4-40GB"), Gpu("1", "NVIDIA H200")]).run(specs, got.append)
    by = {r.submission: r for r in got}
    assert by["alice"].status == "finished" and by["alice"].visible_devices == "0"
    assert by["bob"].status == "unplaced"
    assert by["bob"].reason == "no H100 GPU here (this host has NVIDIA A100-SXM4-40GB, NVIDIA H200)"
    todo, kept = manifest.resume(specs)  # on another host, the unplaced job runs; the finished one is kept
    assert [s.submission for s in todo] == ["bob"] and list(kept) == ["alice/ece408-high"]


def test_local_executor_without_gpu_says_what_to_do(monkeypatch) -> None:
    monkeypatch.setattr("profconv.grade.gpus.query", lambda ids=None, timeout=15.0: [])
    with pytest.raises(InputError, match="found no GPU .* --dry-run"):
        LocalExecutor()


# --- the leaderboard (pure) ----------------------------------------------------------------------


def _result(name: str, status: str = "finished", **kw) -> JobResult:
    return JobResult(key=f"{name}/m", submission=name, model="m", digest="d", fingerprint="f", status=status,
                     gpu=kw.pop("gpu", "H100"), **kw)


def _record(times: list[float | None], status: str = "ok", user_flag: bool | None = True) -> dict:
    def conv(i, t):
        return {"layer": f"conv{i + 1}", "shape": "", "status": "ok" if t is not None else "failed",
                "op_time": {"median_s": t, "min_s": t, "max_s": t, "samples_s": [t]} if t is not None else None,
                "error": None if t else "wrong"}

    user = {"images": 10, "variant": "mine", "status": status, "error": None if status == "ok" else "wrong output",
            "correctness": 0.9, "conv": [conv(i, t) for i, t in enumerate(times)]}
    if user_flag is not None:
        user["user"] = {"user": True, "contract": "course"} if user_flag else None  # as `profconv run --kernel` writes it
    cudnn = {"images": 10, "variant": "cudnn", "status": "ok", "conv": [conv(0, 0.002), conv(1, 0.004)]}
    small = {"images": 1, "variant": "mine", "status": "ok", "user": {"user": True}, "conv": [conv(0, 9.0), conv(1, 9.0)]}
    return {"schema": "profconv.run", "schema_version": 2, "argv": [], "created": "2026-11-26T00:00:00+00:00",
            "environment": {"gpu": "H100"}, "model": {"name": "m"}, "results": [small, cudnn, user]}


def test_job_rows_take_the_largest_image_count_and_the_user_row() -> None:
    rows = leaderboard.job_rows(_result("a"), _record([0.001, 0.003]), builtin={"cudnn"})
    assert [(r["layer"], r["op_time_s"], r["cudnn_s"], r["verdict"]) for r in rows] == [
        ("conv1", 0.001, 0.002, "ok"), ("conv2", 0.003, 0.004, "ok")]
    rows = leaderboard.job_rows(_result("a"), _record([None, None], "failed"), builtin={"cudnn"})
    assert {(r["verdict"], r["reason"], r["op_time_s"]) for r in rows} == {("FAILED", "wrong output", None)}
    rows = leaderboard.job_rows(_result("a", "timeout", reason="killed"), None)
    assert rows[0]["verdict"] == "timeout" and rows[0]["layer"] is None
    rows = leaderboard.job_rows(_result("a"), {"results": [{"images": 1, "variant": "cudnn", "status": "ok"}]},
                                builtin={"cudnn"})
    assert rows[0]["verdict"] == "error" and "no result row" in rows[0]["reason"]


def test_user_rows_by_flag_or_by_name() -> None:
    assert leaderboard.is_user_row({"variant": "tiled", "user": True}, {"tiled"})
    assert not leaderboard.is_user_row({"variant": "mine", "user": False}, set())
    assert leaderboard.is_user_row({"variant": "mine"}, {"cudnn"})
    assert not leaderboard.is_user_row({"variant": "cudnn"}, {"cudnn"})


def test_board_ranks_and_class_median(monkeypatch, tmp_path: Path) -> None:
    records = {"a": _record([0.001, 0.001]), "b": _record([0.002, 0.004]), "c": _record([0.004, 0.006]),
               "d": _record([None, None], "failed")}
    results = []
    for name, rec in records.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(rec))
        results.append(_result(name, record=str(path)))
    results.append(_result("e", "crashed", reason="killed by SIGSEGV", gpu=None))
    (tmp_path / "f.json").write_text('{"schema": "profconv.run", "schema_version": 2, "results": 3}')
    results.append(_result("f", record=str(tmp_path / "f.json")))
    lay = leaderboard.layers(results)
    assert list(lay.columns) == leaderboard.LAYER_COLUMNS
    b2 = lay[(lay["submission"] == "b") & (lay["layer"] == "conv2")].iloc[0]
    assert b2["vs_cudnn"] == pytest.approx(1.0) and b2["vs_median"] == pytest.approx(0.004 / 0.004)
    board = leaderboard.board(lay)
    assert list(board["submission"]) == ["a", "b", "c", "d", "f", "e"]
    assert list(board["rank"].astype("object").where(board["rank"].notna(), None)) == [1, 2, 3, None, None, None]
    assert board["total_s"].iloc[:3].tolist() == pytest.approx([0.002, 0.006, 0.010])
    assert board["vs_median"].iloc[:3].tolist() == pytest.approx([0.002 / 0.006, 1.0, 0.010 / 0.006])
    assert board.loc[5, "verdict"] == "crashed" and board.loc[5, "reason"] == "killed by SIGSEGV"
    assert board.loc[4, "verdict"] == "error"
    assert board.loc[4, "reason"].startswith(f"{tmp_path / 'f.json'}: not a valid run record")


def test_previous_milestone_ratio_and_report_compare(tmp_path: Path) -> None:
    sub = tmp_path / "m" / "alice"
    sub.mkdir(parents=True)
    (sub / "k.cu").write_text("// fake: ok 0.001 0.003\n")
    m1, m2 = tmp_path / "m1", tmp_path / "m2"
    assert _grade([str(tmp_path / "m"), "--dry-run", "--out", str(m1), "--job-command", FAKE]).returncode == 0
    (sub / "k.cu").write_text("// fake: ok 0.002 0.0015\n")
    res = _grade([str(tmp_path / "m"), "--dry-run", "--out", str(m2), "--job-command", FAKE, "--previous", str(m1),
                  "-f", "markdown"])
    assert res.returncode == 0
    assert "| 1 | alice | ece408-high | Fake GPU | ok | 2.000 | 1.500 | 3.500 | 0.58x | 1.00x | 0.88x | 0.8600 |" \
        in res.stdout
    board = _board(m2)
    assert board.loc[0, "previous_total_s"] == pytest.approx(0.004) and board.loc[0, "vs_previous"] == pytest.approx(0.875)
    res = run_cli("report", "--compare", str(m1 / "jobs/alice/ece408-high"), str(m2 / "jobs/alice/ece408-high"))
    assert res.returncode == 0
    line = next(ln for ln in res.stdout.splitlines() if "| alice | conv1 |" in ln)
    assert "2.000" in line and "REGRESSION" in line  # the student's conv1 got 2x slower
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text('{"schema": "profconv.run"}')
    res = _grade([str(tmp_path / "m"), "--dry-run", "--out", str(m2), "--job-command", FAKE, "--previous", str(bad)])
    assert res.returncode == 2 and "not a profconv grade manifest" in res.stderr


def test_terminal_leaderboard_fits_80_columns(klass: Path, tmp_path: Path) -> None:
    res = run_cli("--width", "80", "grade", str(klass / "alice"), str(klass / "carol"), "--model",
                  "ece408-high,cifar10", "--dry-run", "--out", str(tmp_path / "g"), "--job-command", FAKE)
    assert res.returncode == 0
    table = res.stdout[res.stdout.index("Leaderboard"):res.stdout.index("- carol")]
    assert max(len(line.rstrip()) for line in table.splitlines()) <= 80
    assert "1   alice        cifar10       ok        3.000   4.000     0.67x      1.00x" in table
    assert "conv1 not shown at 80 columns (--width N shows them)" in table
    assert "carol (cifar10): FAILED: wrong output on conv1" in res.stdout


def test_dry_run_with_the_real_profconv_run_kernel_command(tmp_path: Path) -> None:
    """No --job-command: each job is `python -m profconv run --kernel …` itself (here on the CPU)."""
    examples = Path(__file__).parent.parent / "examples"
    out = tmp_path / "g"
    res = _grade([str(examples / "device-tiled"), str(examples / "python-cupy"), "--dry-run", "--workers", "2",
                  "--images", "2", "--out", str(out), "--no-report"])
    assert res.returncode == 0, res.stdout + res.stderr
    jobs = {j["submission"]: j for j in manifest.read(out)["jobs"]}
    assert {k: v["status"] for k, v in jobs.items()} == {"device-tiled": "finished", "python-cupy": "finished"}
    assert jobs["device-tiled"]["command"][1:] == [
        "-m", "profconv", "run", "--model", "ece408-high", "--kernel", str((examples / "device-tiled").resolve()),
        "--variant", "cpu", "--out", str((out / "jobs" / "device-tiled" / "ece408-high").resolve()), "--images", "2",
            "--repeat", "3", "--ci-target", "0", "--time-budget", "1"]
    board = _board(out).set_index("submission")
    assert board["verdict"].to_dict() == {"device-tiled": "skipped", "python-cupy": "skipped"}
    assert board.loc["device-tiled", "kernel"] == "tiled" and board.loc["python-cupy", "kernel"] == "cupy-rawkernel"
    assert board.loc["device-tiled", "reason"] == "needs CUDA and CuPy"
