"""profconv grade through a real Slurm: the single-node cluster of scripts/slurm_single_node.sh.

Run by CI's nox session `slurm` (which brings the cluster up and sets PROFCONV_SLURM_TESTS=1); skipped
elsewhere: these tests take the node down and up again and would disturb another test run's jobs.
Dry-run jobs on the CPU: the class submitted as job arrays, the jobs' own time limit, Slurm's time
limit, Ctrl-C/SIGTERM cancelling the arrays, a task requeued after its node failed, resume.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

from profconv.grade import manifest
from profconv.grade.jobs import JobResult
from profconv.grade.submissions import discover

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "grade"
FAKE = f"{{python}} {shlex.quote(str(DATA / 'fake_run.py'))} {{kernel}} {{model}} {{out}}"

pytestmark = [
    pytest.mark.skipif(os.environ.get("PROFCONV_SLURM_TESTS") != "1",
                       reason="a real Slurm: `nox -s slurm` (scripts/slurm_single_node.sh up, PROFCONV_SLURM_TESTS=1)"),
    pytest.mark.skipif(shutil.which("sbatch") is None, reason="no Slurm here"),
]
NODE = socket.gethostname().split(".")[0]


def _squeue(name: str = "profconv-grade") -> list[str]:
    out = subprocess.run(["squeue", "-h", "-r", "-n", name, "-o", "%i %T"], capture_output=True, text=True, check=False)
    return [ln for ln in out.stdout.splitlines() if ln.strip()]


def _wait(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.5)
    raise AssertionError(f"not within {timeout} s: {what}")


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    dst = tmp_path / "class"
    shutil.copytree(DATA / "class", dst)
    return dst


@pytest.fixture(autouse=True)
def node_up():
    subprocess.run(["scontrol", "update", f"NodeName={NODE}", "State=RESUME"], capture_output=True, check=False)
    yield
    subprocess.run(["scontrol", "update", f"NodeName={NODE}", "State=RESUME"], capture_output=True, check=False)
    subprocess.run(["scancel", "-n", "profconv-grade"], capture_output=True, check=False)


def _grade_args(out: Path, *extra: str) -> list[str]:
    return ["--executor", "slurm", "--cpus-per-task", "1", "--dry-run", "--out", str(out), *extra]


def test_a_class_of_real_dry_run_jobs_as_one_array_then_resume(tmp_path: Path) -> None:
    subs = [str(ROOT / "examples" / n) for n in ("device-tiled", "python-cupy", "course-minidnn")]
    out = tmp_path / "g"
    res = run_cli("grade", *subs, "--images", "2", "--cache", str(tmp_path / "cache"), *_grade_args(out))
    assert res.returncode == 0, res.stdout + res.stderr
    doc = manifest.read(out)
    jobs = {j["submission"]: j for j in doc["jobs"]}
    assert {k: (j["status"], j["runner"]) for k, j in jobs.items()} == {k: ("finished", "pool") for k in jobs}
    ids = {j["engine_job_id"] for j in jobs.values()}
    assert len({i.split("_")[0] for i in ids}) == 1 and len(ids) == 3  # one array, a task per job
    assert doc["engine"]["name"] == "slurm" and doc["engine"]["options"]["cluster"] == "auto"
    assert "3 skipped of 3" in res.stdout
    again = run_cli("grade", *subs, "--images", "2", "--cache", str(tmp_path / "cache"), *_grade_args(out))
    assert "3 job(s) finished before on the same submission hash: kept" in again.stdout
    # the resume submitted nothing: what the queue may still show is the first run's tasks, COMPLETING
    # while Slurm cleans up after them (CI of 2026-12-02: '61_2 COMPLETING', the grade already done)
    left = [ln.split() for ln in _squeue()]
    assert all(job in ids and state == "COMPLETING" for job, state in left), left


def test_jobs_per_task_and_the_jobs_own_time_limit(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run_cli("grade", str(klass), *_grade_args(out, "--timeout", "3", "--jobs-per-task", "3",
                                                    "--job-command", FAKE))
    assert res.returncode == 0, res.stdout + res.stderr
    by = {j["submission"]: j for j in manifest.read(out)["jobs"]}
    assert {k: j["status"] for k, j in by.items()} == {"alice": "finished", "bob": "finished", "carol": "finished",
                                                       "dave": "crashed", "erin": "timeout", "frank": "error"}
    assert len({j["engine_job_id"] for j in by.values()}) == 2  # six jobs, three per task


def test_slurms_own_time_limit_leaves_the_job_lost(klass: Path, tmp_path: Path) -> None:
    from profconv.grade import manifest as m
    from profconv.grade.slurm import SlurmExecutor

    subs = [s for s in discover([str(klass)]) if s.name in ("alice", "erin")]
    specs = m.plan(subs, m.JobSettings(models=("ece408-high",), job_command=FAKE, dry_run=True, timeout_s=600),
                   tmp_path / "g")
    ex = SlurmExecutor(tmp_path / "g" / "slurm", cpus_per_task=1, dry_run=True, extra={"timeout_min": 1})
    got: list[JobResult] = []
    ex.run(specs, got.append)
    by = {r.submission: r for r in got}
    assert by["alice"].status == "finished"
    # Slurm's time-limit signal (submitit asks for it 90 s before the limit: at once here), then the kill;
    # on a loaded machine the kill can come before the job wrote anything: submitit then says Slurm's state
    # ('has not produced any output (state: TIMEOUT)', CI of 2026-12-01 with another suite running)
    reason = by["erin"].reason or ""
    assert by["erin"].status == "lost" and ("timed-out" in reason or "state: TIMEOUT" in reason), reason


def _start_grade(klass: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    argv = [sys.executable, "-m", "profconv", "grade", str(klass), *_grade_args(out, "--job-command", FAKE, *extra)]
    # Ctrl-C as a terminal sends it: a suite started as a background job of a non-interactive shell inherits
    # SIGINT ignored, and a Python started so never turns it into KeyboardInterrupt (session 15's CI launch)
    return subprocess.Popen(argv, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_cancels_the_arrays(klass: Path, tmp_path: Path, sig) -> None:
    out = tmp_path / "g"
    proc = _start_grade(klass, out, {"FAKE_SLEEP": "60"})
    try:
        _wait(lambda: any("RUNNING" in ln for ln in _squeue()), 60, "a task running")
        shown = run_cli("grade", str(out), "--queue")
        assert "Slurm: RUNNING" in shown.stdout and "running" in shown.stdout  # the queue view asks squeue
        proc.send_signal(sig)
        text, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, text
    assert "interrupted after" in text
    _wait(lambda: not [ln for ln in _squeue() if "PENDING" in ln or "RUNNING" in ln], 30, "the arrays cancelled")


def test_a_task_on_a_failed_node_is_requeued_and_finishes(klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    (klass / "erin").rename(tmp_path / "erin")  # no hang: every job can finish
    proc = _start_grade(klass, out, {"FAKE_SLEEP": "6"})
    try:
        _wait(lambda: any("RUNNING" in ln for ln in _squeue()), 60, "a task running")
        subprocess.run(["scontrol", "update", f"NodeName={NODE}", "State=DOWN", "Reason=profconv-test"], check=True)
        _wait(lambda: not any("RUNNING" in ln for ln in _squeue()), 60, "the running tasks ended with the node")
        time.sleep(1)  # then back (ReturnToService=2 may have returned it already: RESUME is then refused)
        subprocess.run(["scontrol", "update", f"NodeName={NODE}", "State=RESUME"], capture_output=True, check=False)
        text, _ = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, text
    by = {j["submission"]: j for j in manifest.read(out)["jobs"]}
    assert {k: j["status"] for k, j in by.items()} == {"alice": "finished", "bob": "finished", "carol": "finished",
                                                       "dave": "crashed", "frank": "error"}
    restarts = []
    for job in by.values():
        shown = subprocess.run(["scontrol", "show", "job", job["engine_job_id"]], capture_output=True, text=True,
                               check=False).stdout
        restarts += [int(w.split("=")[1]) for w in shown.split() if w.startswith("Restarts=")]
    assert max(restarts, default=0) >= 1  # a task ran again after its node came back
    assert json.loads(Path(by["alice"]["record"]).read_text())["results"]
