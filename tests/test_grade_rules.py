"""The course's leaderboard rules in profconv grade: repeat runs combined (best or mean) with their spread,
the published ranking, each student's history and regressions, hidden inputs (the secret seed), caps
on GPU seconds, the queue view, `--json`, and the GradeSession as a library call.

Jobs run tests/data/grade/fake_run.py through --job-command (no GPU), as in test_grade.py.
"""

from __future__ import annotations

import json
import shlex
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli

from profconv.grade import leaderboard, manifest, ranking
from profconv.grade import queue as queue_mod
from profconv.grade.caps import StudentBudget
from profconv.grade.jobs import JobResult, JobSpec
from profconv.session.events import Callbacks
from profconv.session.grade import GradeRequest, GradeSession

DATA = Path(__file__).parent / "data" / "grade"
FAKE = f"{{python}} {shlex.quote(str(DATA / 'fake_run.py'))} {{kernel}} {{model}} {{out}}"


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    dst = tmp_path / "class"
    shutil.copytree(DATA / "class", dst)
    return dst


def _fake(path: Path, what: str) -> None:
    (path / "new-forward.cu").write_text(f"// fake: {what}\n")


# --- repeat runs ---------------------------------------------------------------------------------


def _per_run(rows: list[tuple[str, int, str, float | None, float | None]]) -> pd.DataFrame:
    df = pd.DataFrame([{"submission": s, "model": "m", "run": r, "gpu": "H100", "device": "0", "verdict": v,
                        "reason": None if v == "ok" else "wrong", "kernel": "k", "op_conv1": a, "op_conv2": b,
                        "total_s": (a + b) if a is not None and b is not None else None,
                        "cudnn_total_s": 0.004, "vs_cudnn_low": None, "vs_cudnn_high": None,
                        "correctness": 0.9 if v == "ok" else None, "wall_s": 1.0, "started": None, "ended": None,
                        "report": f"r{r}", "record": f"j{r}", "rule": None, "course": None, "optimisations": None,
                        "outside": None, "warnings": None} for s, r, v, a, b in rows])
    for c in ("op_conv1", "op_conv2", "total_s", "cudnn_total_s", "vs_cudnn_low", "vs_cudnn_high", "correctness"):
        df[c] = pd.to_numeric(df[c]).astype("float64")
    return df


def test_runs_combined_best_or_mean_with_the_spread() -> None:
    per_run = _per_run([("a", 1, "ok", 0.001, 0.003), ("a", 2, "ok", 0.002, 0.004), ("a", 3, "ok", 0.001, 0.002),
                        ("b", 1, "ok", 0.001, 0.001), ("b", 2, "FAILED", None, None)])
    best = leaderboard.combine_runs(per_run, "best").set_index("submission")
    assert best.loc["a", "total_s"] == pytest.approx(0.003) and best.loc["a", "op_conv2"] == pytest.approx(0.002)
    assert best.loc["a", "record"] == "j3"  # the best run's own record and report
    assert (best.loc["a", "runs"], best.loc["a", "runs_ok"]) == (3, 3)
    assert best.loc["a", "spread"] == pytest.approx((0.006 - 0.003) / 0.003)
    assert best.loc["b", "verdict"] == "FAILED" and best.loc["b", "runs_ok"] == 1 and pd.isna(best.loc["b", "spread"])
    mean = leaderboard.combine_runs(per_run, "mean").set_index("submission")
    assert mean.loc["a", "total_s"] == pytest.approx((0.004 + 0.006 + 0.003) / 3)
    assert mean.loc["a", "op_conv1"] == pytest.approx(0.004 / 3) and mean.loc["a", "record"] == "j1"
    ranked = leaderboard._ranked(leaderboard.combine_runs(per_run, "best"))
    assert ranked[["rank", "submission", "verdict"]].values.tolist() == [[1, "a", "ok"], [pd.NA, "b", "FAILED"]]
    with pytest.raises(ValueError, match="best or mean"):
        leaderboard.combine_runs(per_run, "median")


def test_grade_runs_each_submission_n_times(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run_cli("grade", str(klass / "alice"), str(klass / "carol"), "--runs", "3", "--combine", "mean",
                  "--dry-run", "--out", str(out), "--job-command", FAKE)
    assert res.returncode == 0, res.stdout + res.stderr
    keys = sorted(j["key"] for j in manifest.read(out)["jobs"])
    assert keys == ["alice/ece408-high", "alice/ece408-high/run2", "alice/ece408-high/run3",
                    "carol/ece408-high", "carol/ece408-high/run2", "carol/ece408-high/run3"]
    assert (out / "jobs" / "alice" / "ece408-high" / "run3" / "run.json").is_file()
    board = pd.read_csv(out / "leaderboard.csv").set_index("submission")
    assert board.loc["alice", "runs"] == 3 and board.loc["alice", "total_s"] == pytest.approx(0.004)
    assert board.loc["alice", "spread"] == 0 and board.loc["carol", "verdict"] == "FAILED"
    assert "3 runs each (mean)" in res.stdout


# --- the published ranking, history, regressions ------------------------------------------------


def _board(totals: dict[str, float | None]) -> pd.DataFrame:
    rows = [(s, 1, "ok" if t is not None else "FAILED", t / 2 if t else None, t / 2 if t else None)
            for s, t in totals.items()]
    return leaderboard._ranked(leaderboard.combine_runs(_per_run(rows), "best"))


def test_history_marks_regressions_against_the_last_ok_grade() -> None:
    night1 = ranking.Grade("n1", "2026-11-01", _board({"a": 0.010, "b": 0.010, "c": 0.010, "d": None}))
    night2 = ranking.Grade("n2", "2026-11-02", _board({"a": 0.008, "b": 0.010, "c": 0.020, "d": None}))
    now = ranking.with_history(_board({"a": 0.0082, "b": 0.012, "c": None, "d": 0.005, "e": 0.001}), [night1, night2])
    got = now.set_index("submission")
    assert got.loc["a", "previous_total_s"] == pytest.approx(0.008) and got.loc["a", "best_before_s"] == pytest.approx(0.008)
    assert bool(got.loc["a", "regression"]) is False  # 2.5% slower: within the 5% threshold
    assert bool(got.loc["b", "regression"]) is True and got.loc["b", "vs_previous"] == pytest.approx(1.2)
    assert bool(got.loc["c", "regression"]) is True  # ok before, FAILED now
    assert pd.isna(got.loc["d", "regression"]) and pd.isna(got.loc["e", "regression"])  # never ok before
    hist = ranking.history(ranking.Grade("n3", "2026-11-03", now), [night1, night2])
    b = hist[hist["submission"] == "b"]
    assert b["grade"].tolist() == ["n1", "n2", "n3"] and b["change"].tolist()[1:] == pytest.approx([1.0, 1.2])
    pub = ranking.ranking(now)
    assert list(pub.columns)[:6] == ["rank", "submission", "model", "verdict", "rule", "total_ms"]
    assert {"conv1_ms", "conv2_ms", "runs", "spread_pct", "optimisations", "vs_previous", "regression"} <= set(pub.columns)
    assert pub.set_index("submission").loc["e", "total_ms"] == pytest.approx(1.0)


def test_grade_previous_nights_history_and_ranking_csv(klass: Path, tmp_path: Path) -> None:
    args = [str(klass / "alice"), str(klass / "bob"), "--dry-run", "--job-command", FAKE]
    assert run_cli("grade", *args, "--out", str(tmp_path / "night1")).returncode == 0
    _fake(klass / "bob", "ok 0.006 0.006")  # bob's kernel got slower: 0.012 s from 0.008 s
    res = run_cli("grade", *args, "--out", str(tmp_path / "night2"), "--previous", str(tmp_path / "night1"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "- regression: bob (ece408-high): ok, total x1.50 of the previous grade's" in res.stdout
    pub = pd.read_csv(tmp_path / "night2" / "ranking.csv").set_index("submission")
    assert pub.loc["alice", "rank"] == 1 and pub.loc["bob", "total_ms"] == pytest.approx(12.0)
    assert bool(pub.loc["bob", "regression"]) and not bool(pub.loc["alice", "regression"])
    hist = pd.read_csv(tmp_path / "night2" / "history.csv")
    assert hist[hist["submission"] == "bob"]["grade"].tolist() == ["night1", "night2"]
    assert not any("/" in str(c) for c in pub.columns)


# --- secret seed, caps, queue, json, the session ---------------------------------------------------


def test_secret_seed_reaches_the_jobs_and_never_the_grade_directory(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run_cli("grade", str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE,
                  "--secret-seed", "hunter2-final")
    assert res.returncode == 0, res.stdout + res.stderr
    doc = manifest.read(out)
    assert json.loads(Path(doc["jobs"][0]["record"]).read_text())["environment"]["secret_seed_given"] is True
    assert not [p for p in out.rglob("*") if p.is_file() and "hunter2" in p.read_text(errors="replace")]
    again = run_cli("grade", str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE,
                    "--secret-seed", "another")
    assert "kept" not in again.stdout  # another seed: the job runs again
    argv = ["profconv", "grade", "c", "--secret-seed", "s3cret", "--secret-seed=other", "-n", "2"]
    assert GradeSession(GradeRequest(["c"], argv=argv))._argv() == [
        "profconv", "grade", "c", "--secret-seed", "(secret)", "--secret-seed=(secret)", "-n", "2"]


def test_student_budget_admits_reserves_and_charges() -> None:
    def spec(name: str, student: str | None = "s1") -> JobSpec:
        return JobSpec(submission=name, path="", digest="", model="m", out_dir="", student=student)

    def result(s: JobSpec, child_s: float) -> JobResult:
        return JobResult(key=s.key, submission=s.submission, model="m", digest="", fingerprint="", status="finished",
                         cost={"child_s": child_s}, student=s.student)

    b = StudentBudget(10.0, kept=[result(spec("old"), 2.0)])
    a = b.admit(spec("a"))
    assert a is not None and a.cap_s == pytest.approx(8.0)
    assert b.admit(spec("b")) is None  # the 8 s left are reserved by a, running
    b.charge(a, result(a, 3.0))
    c = b.admit(spec("c"))
    assert c is not None and c.cap_s == pytest.approx(5.0)
    assert b.admit(spec("x", None)) is not None  # another student (the submission itself)
    b.charge(c, result(c, 4.5))
    assert b.admit(spec("d")) is None
    assert b.reason(spec("d")) == "s1: the 10 GPU seconds per student are used up (9.5 s by 3 job(s))"
    shares = StudentBudget(9.0).split([spec("p"), spec("q"), spec("r"), spec("z", "s2")])
    assert [s.cap_s for s in shares] == pytest.approx([3.0, 3.0, 3.0, 9.0])


def test_grade_caps_a_students_gpu_seconds(klass: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SLEEP", "1.2")
    listing = klass / "class.csv"
    listing.write_text("submission,student\nalice,s1\nbob,s1\ncarol,s2\n")
    out = tmp_path / "g"
    res = run_cli("grade", str(listing), "--dry-run", "--out", str(out), "--job-command", FAKE,
                  "--student-gpu-seconds", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    by = {j["submission"]: j for j in manifest.read(out)["jobs"]}
    assert by["alice"]["status"] == "finished" and by["carol"]["status"] == "finished"
    assert by["bob"]["status"] == "capped" and by["bob"]["reason"].startswith("s1: the 2 GPU seconds per student")
    assert "capped" in pd.read_csv(out / "leaderboard.csv")["verdict"].tolist()


def test_queue_view_while_and_after(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    specs = [JobSpec(submission=n, path="", digest="", model="m", out_dir="") for n in ("a", "b", "c")]
    q = queue_mod.Queue(out, specs, {})
    q.start(specs[0], "0")
    q.done(JobResult(key="b/m", submission="b", model="m", digest="", fingerprint="", status="crashed",
                     reason="killed by SIGSEGV", wall_s=2.5))
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    s = queue_mod.summary(queue_mod.read(out), now=later)
    assert s["counts"] == {"running": 1, "waiting": 1, "failed": 1}
    assert [(j["key"], j["state"]) for j in s["jobs"]] == [("a/m", "running"), ("c/m", "waiting"), ("b/m", "failed")]
    assert s["jobs"][0]["seconds"] == pytest.approx(30, abs=2) and s["jobs"][2]["seconds"] == 2.5
    slurm_jobs = [queue_mod.QueuedJob("x/m", "x", "m", engine_job_id="9_0"), queue_mod.QueuedJob("y/m", "y", "m",
                                                                                           engine_job_id="9_1")]
    told = queue_mod.summary(slurm_jobs, slurm={"9_0": "RUNNING", "9_1": "PENDING"})
    assert told["counts"] == {"running": 1, "waiting": 1}
    assert [j["reason"] for j in told["jobs"]] == ["Slurm: RUNNING", "Slurm: PENDING"]
    res = run_cli("grade", str(out), "--queue")
    assert res.returncode == 0 and "1 running, 1 waiting, 1 failed" in res.stdout
    assert "killed by SIGSEGV" in res.stdout
    graded = tmp_path / "g2"
    assert run_cli("grade", str(klass / "alice"), str(klass / "dave"), "--dry-run", "--out", str(graded),
                   "--job-command", FAKE).returncode == 0
    doc = json.loads(run_cli("grade", "--queue", str(graded), "--json").stdout)
    assert doc["counts"] == {"failed": 1, "finished": 1}
    assert run_cli("grade", "--queue", str(tmp_path / "none")).returncode == 2


def test_grade_json(klass: Path, tmp_path: Path) -> None:
    res = run_cli("grade", str(klass / "alice"), str(klass / "carol"), "--dry-run", "--out", str(tmp_path / "g"),
                  "--job-command", FAKE, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "profconv.grade-outcome" and doc["jobs"] == 2 and doc["ran"] == 2
    assert doc["verdicts"] == {"ok": 1, "FAILED": 1}
    assert [r["submission"] for r in doc["board"]] == ["alice", "carol"] and doc["board"][0]["rank"] == 1
    assert doc["files"]["ranking.csv"].endswith("ranking.csv") and doc["per_job_wall_s"]["median"] > 0


def test_grade_session_as_a_library_call(klass: Path, tmp_path: Path) -> None:
    seen: list[str] = []
    progress: list[tuple[int | None, int | None]] = []
    cb = Callbacks(result=lambda r: seen.append(r.submission), progress=lambda m, d, t: progress.append((d, t)))
    req = GradeRequest([str(klass / "alice"), str(klass / "bob")], out=tmp_path / "g", dry_run=True,
                       job_command=FAKE, argv=["profconv", "grade", "(notebook)"])
    outcome = GradeSession(req, cb).run()
    assert sorted(seen) == ["alice", "bob"] and sorted(progress) == [(1, 2), (2, 2)]
    assert outcome.board["rank"].tolist() == [1, 2] and outcome.ranking["submission"].tolist() == ["alice", "bob"]
    assert manifest.read(tmp_path / "g")["argv"] == ["profconv", "grade", "(notebook)"]

    stop = GradeSession(GradeRequest([str(klass / "alice"), str(klass / "bob")], out=tmp_path / "g2", dry_run=True,
                                     job_command=FAKE), Callbacks(stop=lambda: True))
    from profconv.errors import Interrupted

    with pytest.raises(Interrupted, match="interrupted after 1 of 2"):
        stop.run()
    again = GradeSession(GradeRequest([str(klass / "alice")], out=tmp_path / "g3", dry_run=True, job_command=FAKE)).run()
    assert [r.status for r in again.results] == ["finished"]  # the stop before does not reach the next grade
