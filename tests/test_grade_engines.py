"""profconv grade through the real engines on the CPU: submitit's debug and local executors, and a
local Ray instance with fake GPU resources (skipped cleanly when submitit or Ray is not installed).

Jobs run tests/data/grade/fake_run.py through --job-command, as in test_grade.py.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import run_cli

from profconv.errors import InputError
from profconv.grade import manifest
from profconv.grade.jobs import JobResult
from profconv.grade.submissions import Submission, discover

DATA = Path(__file__).parent / "data" / "grade"
FAKE = f"{{python}} {shlex.quote(str(DATA / 'fake_run.py'))} {{kernel}} {{model}} {{out}}"  # a checkout path with spaces


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    dst = tmp_path / "class"
    shutil.copytree(DATA / "class", dst)
    return dst


def _specs(klass: Path, out: Path, names: tuple[str, ...], gpus: dict[str, str] | None = None, **kw):
    subs = [s for s in discover([str(klass)]) if s.name in names]
    subs = [Submission(name=s.name, path=s.path, digest=s.digest, gpu=(gpus or {}).get(s.name)) for s in subs]
    settings = manifest.JobSettings(models=("ece408-high",), job_command=FAKE, **kw)
    return manifest.plan(subs, settings, out)


# --- Slurm through submitit ------------------------------------------------------------------------


def test_slurm_parameters_one_gpu_per_task_cap_and_time_limit(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("submitit")
    from profconv.grade.executors import SlurmExecutor

    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "srun" else real_which(name, *a, **k))
    with pytest.raises(InputError, match="no Slurm here"):
        SlurmExecutor(tmp_path)  # a machine without srun (submitit's test for Slurm)
    ex = SlurmExecutor(tmp_path, cluster="debug", parallelism=32, partition="gpu")
    spec = _specs(DATA / "class", tmp_path, ("alice",), timeout_s=600)[0]
    assert ex.parameters(spec) == {"name": "profconv-grade", "timeout_min": 20, "tasks_per_node": 1, "nodes": 1,
                                   "cpus_per_task": 4, "slurm_array_parallelism": 32, "gpus_per_node": 1,
                                   "slurm_partition": "gpu"}
    typed = _specs(DATA / "class", tmp_path, ("alice",), gpus={"alice": "A100"})[0]
    params = ex.parameters(typed)
    assert params["slurm_gres"] == "gpu:a100:1" and "gpus_per_node" not in params


def test_slurm_setup_lines_and_arrays_submitted_together(tmp_path: Path) -> None:
    pytest.importorskip("submitit")
    from profconv.grade.executors import SlurmExecutor

    calls: list[str] = []

    class Job:
        def __init__(self, chunk):
            self.spec, self.job_id = chunk[0], f"7_{chunk[0].submission}"

        def result(self):
            calls.append(f"result {self.spec.submission}")
            if self.spec.submission == "carol":
                raise RuntimeError("Job 7_carol (task: 0) with path x\nhas state TIMEOUT")
            return [JobResult(key=self.spec.key, submission=self.spec.submission, model=self.spec.model,
                              digest="d", fingerprint="f", status="finished")]

    class Auto:
        def __init__(self, folder, cluster=None):
            pass

        def update_parameters(self, **params):
            calls.append(f"params {params.get('slurm_gres', params.get('gpus_per_node'))} {params['slurm_setup']}")

        def map_array(self, fn, chunks, *per_task):  # a chunk of jobs per task, then the tasks' other arguments
            assert all(len(a) == len(chunks) for a in per_task)
            calls.append("array " + ",".join(c[0].submission for c in chunks))
            return [Job(c) for c in chunks]

    class Fake:
        __version__ = "fake"
        AutoExecutor = Auto

        class helpers:
            @staticmethod
            def as_completed(jobs, poll_frequency=10):
                return iter(jobs)

    ex = SlurmExecutor(tmp_path, cluster="debug", setup=["module load cuda/12.4"])
    ex.submitit = Fake
    specs = _specs(DATA / "class", tmp_path, ("alice", "bob", "carol"), gpus={"bob": "A100"})
    got: list[JobResult] = []
    ex.run(specs, got.append)
    assert calls[:4] == ["params 1 ['module load cuda/12.4']", "array alice,carol",
                         "params gpu:a100:1 ['module load cuda/12.4']", "array bob"]  # both arrays before any wait
    by = {r.submission: r for r in got}
    assert by["carol"].status == "lost" and by["carol"].reason == "Slurm job 7_carol: has state TIMEOUT"
    assert ex.jobs == []  # every array done: nothing left to cancel
    assert by["alice"].status == by["bob"].status == "finished"


def test_slurm_local_cluster_refuses_two_tasks_on_gpu0(tmp_path: Path) -> None:
    pytest.importorskip("submitit")
    from profconv.grade.executors import SlurmExecutor

    with pytest.raises(InputError, match="--parallelism 1"):
        SlurmExecutor(tmp_path, cluster="local", parallelism=2)


def test_submitit_debug_executor(klass: Path, tmp_path: Path) -> None:
    pytest.importorskip("submitit")
    from profconv.grade.executors import SlurmExecutor

    specs = _specs(klass, tmp_path / "g", ("alice", "carol", "dave"), dry_run=True)
    got: list[JobResult] = []
    SlurmExecutor(tmp_path / "g" / "slurm", cluster="debug", dry_run=True).run(specs, got.append)
    by = {r.submission: r for r in got}
    assert {k: v.status for k, v in by.items()} == {"alice": "finished", "carol": "finished", "dave": "crashed"}
    assert all(r.engine == "slurm" for r in got)


def test_submitit_local_executor_through_the_cli(klass: Path, tmp_path: Path) -> None:
    pytest.importorskip("submitit")
    out = tmp_path / "g"
    res = run_cli("grade", *[str(klass / "alice"), str(klass / "erin"), str(klass / "frank.py"),
                              "--executor", "slurm", "--slurm-cluster", "local", "--parallelism", "3", "--dry-run",
                              "--timeout", "2", "--out", str(out), "--job-command", FAKE])
    assert res.returncode == 0, res.stdout
    doc = manifest.read(out)
    assert doc["engine"]["name"] == "slurm" and doc["engine"]["options"]["cluster"] == "local"
    by = {j["submission"]: j for j in doc["jobs"]}
    assert {k: v["status"] for k, v in by.items()} == {"alice": "finished", "erin": "timeout", "frank": "error"}
    assert by["alice"]["engine_job_id"]  # submitit's job id, for finding its logs under OUT/slurm
    assert (out / "slurm").is_dir()


# --- Ray ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, num_gpus=2, resources={"accelerator_type:H100": 2}, include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_tasks_get_one_fake_gpu_each(ray_local, klass: Path, tmp_path: Path) -> None:
    from profconv.grade.executors import RayExecutor

    specs = _specs(klass, tmp_path / "g", ("alice", "bob", "carol", "dave"), gpus={"bob": "H100", "carol": "A100"})
    got: list[JobResult] = []
    RayExecutor(retries=1).run(specs, got.append)
    by = {r.submission: r for r in got}
    assert {k: v.status for k, v in by.items()} == {"alice": "finished", "bob": "finished", "carol": "unplaced",
                                                    "dave": "crashed"}
    assert by["carol"].reason == "no A100 GPU in the Ray cluster (accelerator types: H100)"
    for name in ("alice", "bob"):
        env = json.loads(Path(by[name].record).read_text())["environment"]
        assert env["visible"] in ("0", "1") and by[name].engine == "ray" and by[name].engine_job_id
        assert env["visible"] == by[name].visible_devices  # the GPU Ray gave the task, recorded
        # the GPU task ended before the CPU task wrote job.json (the report's place)
        assert by[name].started < by[name].ended <= by[name].finished
        assert json.loads((Path(by[name].out_dir) / "job.json").read_text())["ended"] == by[name].ended
    assert ray_local.is_initialized()  # an instance the caller started is left running


def test_ray_through_the_cli_with_a_hang(ray_local, klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run_cli("grade", *[str(klass / "alice"), str(klass / "erin"), "--executor", "ray", "--timeout",
                              "2", "--out", str(out), "--job-command", FAKE])
    assert res.returncode == 0, res.stdout
    by = {j["submission"]: j for j in manifest.read(out)["jobs"]}
    assert by["alice"]["status"] == "finished" and by["erin"]["status"] == "timeout"
    engine = manifest.read(out)["engine"]
    assert engine["name"] == "ray" and engine["options"]["cluster"]["GPU"] == 2
    assert engine["options"]["cluster"]["accelerator_types"] == ["H100"]


def test_ray_dry_run_needs_no_gpu(ray_local, klass: Path, tmp_path: Path) -> None:
    from profconv.grade.executors import RayExecutor

    specs = _specs(klass, tmp_path / "g", ("alice",), gpus={"alice": "A100"}, dry_run=True)
    got: list[JobResult] = []
    RayExecutor(dry_run=True).run(specs, got.append)
    assert [(r.submission, r.status, r.visible_devices) for r in got] == [("alice", "finished", "")]


def test_ray_warmup_then_jobs_on_one_instance(ray_local, klass: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run_cli("grade", str(klass / "alice"), "--executor", "ray", "--warmup", "--out", str(out),
                  "--job-command", FAKE)
    assert res.returncode == 0, res.stdout
    doc = manifest.read(out)
    # no GPU here: the warm-up's `profconv run --variant naive` exits 3; said, and the job still runs
    assert [w["status"] for w in doc["warmup"]] == ["error"] and "1 failed (exit 3" in res.stdout
    assert [j["status"] for j in doc["jobs"]] == ["finished"] and doc["jobs"][0]["engine"] == "ray"
    assert ray_local.is_initialized()  # the caller's instance is left running


def test_ray_grades_real_dry_run_jobs_in_its_workers_grade_workers(ray_local, tmp_path: Path) -> None:
    examples = Path(__file__).parent.parent / "examples"
    out = tmp_path / "g"
    res = run_cli("grade", str(examples / "device-tiled"), str(examples / "python-cupy"), "--executor", "ray",
                  "--dry-run", "--images", "2", "--out", str(out), "--cache", str(tmp_path / "cache"))
    assert res.returncode == 0, res.stdout + res.stderr
    doc = manifest.read(out)
    assert doc["engine"]["name"] == "ray" and doc["engine"]["options"]["pool"] is True
    jobs = {j["submission"]: j for j in doc["jobs"]}
    assert {k: (j["status"], j["runner"], j["engine"]) for k, j in jobs.items()} == {
        k: ("finished", "pool", "ray") for k in ("device-tiled", "python-cupy")}
    assert all(j["report"] and Path(j["report"]).is_file() for j in jobs.values())  # by the CPU task, in-process
    assert "2 skipped of 2" in res.stdout


def test_slurm_reasons_and_squeue_states() -> None:
    pytest.importorskip("submitit")
    import submitit

    from profconv.grade.slurm import _watcher_class, slurm_reason

    assert slurm_reason("Job 12_1 (task: 0) with path /x\n  - /x/12_1_0_log.out\nJob not requeued because: "
                        "timed-out and not checkpointable.") == "Job not requeued because: timed-out and not checkpointable."
    assert slurm_reason("has not produced any output (state: NODE_FAIL)\n  - /x/log.err") == \
        "has not produced any output (state: NODE_FAIL)"
    assert slurm_reason("RuntimeError: boom\n  - /x/log.out") == "RuntimeError: boom"
    watcher = _watcher_class(submitit)(delay_s=10)
    for job_id in ("7_0", "7_1", "7_2"):
        watcher.register_job(job_id)
    info = watcher.read_info(b"7_0|RUNNING|vm\n7_1|PENDING|\n")
    assert info["7_0"]["State"] == "RUNNING" and info["7_1"]["State"] == "PENDING"
    assert info["7_2"]["State"] == "GONE"  # no longer listed: ended, its record purged
    assert watcher._make_command()[:4] == ["squeue", "-h", "-r", "--states=all"]


def test_a_slurm_task_told_to_end_notes_it_and_keeps_submitits_handler() -> None:
    """Slurm's SIGTERM to a task (node failure, preemption, scancel): submitit's own handler still runs (it
    ignores the signal) and the task knows, so a job that died with it is not recorded as `crashed`."""
    import os
    import signal

    from profconv.grade.slurm import _Ending

    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))  # as submitit's bypass
    try:
        with _Ending() as ending:
            assert not ending.told
            os.kill(os.getpid(), signal.SIGTERM)
            assert ending.told and seen == [signal.SIGTERM]
        os.kill(os.getpid(), signal.SIGTERM)  # the previous handler is back
        assert seen == [signal.SIGTERM, signal.SIGTERM]
        with _Ending() as ending:  # submitit's time-limit warning too
            os.kill(os.getpid(), signal.SIGUSR2)
            assert ending.told
    finally:
        signal.signal(signal.SIGTERM, before)
