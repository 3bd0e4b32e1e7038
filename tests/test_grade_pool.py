"""profconv grade's pool on the CPU: the model bundle, the zygote's children, the record, the build cache.

The non-dry jobs run with a stand-in CuPy (tests/data/grade/fakecuda: no device; a kernel file's
`fake:` line makes its child hang, crash or lose its "context") and a model bundle written here (no
GPU makes one): what is tested is the worker's machinery -- fork, time limit, process groups, the
verdict of a child that died, the next child unaffected -- not the kernels.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from profconv.grade import bundle, manifest
from profconv.grade.executors import LocalExecutor
from profconv.grade.gpus import Gpu
from profconv.grade.jobs import JobResult
from profconv.grade.pool import PoolWorker, poolable
from profconv.grade.submissions import discover

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FAKECUDA = Path(__file__).parent / "data" / "grade" / "fakecuda"


def _class(tmp_path: Path, directives: dict[str, str]) -> Path:
    """Device-contract submissions (examples/device-tiled) whose kernel file carries a `fake:` line."""
    klass = tmp_path / "class"
    for name, what in directives.items():
        shutil.copytree(EXAMPLES / "device-tiled", klass / name)
        src = klass / name / "conv_tiled.cu"
        src.write_text(src.read_text() + f"\n// fake: {what}\n")
    return klass


def _fake_bundle(worker: PoolWorker, spec, model_layers=("conv1",)) -> Path:
    """A GPU bundle as grade.bundle writes one (tiny arrays: the children never compute with them)."""
    key = worker.key(spec)
    where = bundle.directory(worker.cache, key)
    where.mkdir(parents=True)
    images = np.zeros((2, 1, 28, 28), np.float32)
    np.save(where / "images.npy", images)
    np.save(where / "labels.npy", np.zeros(2, np.int64))
    for layer in model_layers:
        np.save(where / f"ref-{layer}.npy", np.zeros((2, 50, 24, 24), np.float32))
    op = {"median_s": 0.002, "min_s": 0.002, "max_s": 0.002, "samples_s": [0.002]}
    meta = {"version": bundle.VERSION, "key": key.__dict__, "created": "2026-11-28T00:00:00+0000", "seconds": 1.0,
            "environment": {"gpu": "Fake H100", "driver_version": 13000, "profconv_version": "0.1.0"},
            "provenance": None,
            "reference": {"images": 2, "variant": "cudnn", "technique": "cuDNN", "precision": "fp32", "status": "ok",
                          "conv": [{"layer": "conv1", "shape": "", "op_time": op, "status": "ok"}]}}
    (where / bundle.META).write_text(json.dumps(meta))
    return where


def _worker(tmp_path: Path, directives: dict[str, str]) -> tuple[PoolWorker, list]:
    """A GPU slot's worker (stand-in CuPy) with its fake bundle, and the jobs of a class of `fake:` files."""
    specs = manifest.plan(discover([str(_class(tmp_path, directives))]),
                          manifest.JobSettings(models=("ece408-high",), images="2", report=False), tmp_path / "g")
    worker = PoolWorker(visible="0", dry_run=False, cache=tmp_path / "cache", logs=tmp_path / "logs")
    _fake_bundle(worker, specs[0])
    return worker, specs


@pytest.fixture
def fake_cuda(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", f"{FAKECUDA}{os.pathsep}{ROOT}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_children_that_hang_crash_or_lose_their_context_fail_alone(fake_cuda, tmp_path: Path) -> None:
    klass = _class(tmp_path, {"a-crash": "crash", "b-ok": "ok", "c-hang": "hang", "d-cuda": "cuda", "e-ok": "ok"})
    subs = discover([str(klass)])
    settings = manifest.JobSettings(models=("ece408-high",), images="2", kernel_timeout_s=3.0, timeout_s=60, report=False)
    specs = manifest.plan(subs, settings, tmp_path / "g")
    assert all(poolable(s) for s in specs)
    ex = LocalExecutor(gpus=[Gpu("0", "Fake H100")], cache=tmp_path / "cache")
    _fake_bundle(ex._worker(ex.slots[0]), specs[0])
    got: list[JobResult] = []
    t0 = time.monotonic()
    try:
        ex.run(specs, got.append)
    finally:
        ex.close()
    assert time.monotonic() - t0 < 20  # the hang's 3 s, the zygote's start, four children of ~0.1 s
    by = {r.submission: r for r in got}
    assert {k: (r.status, r.runner) for k, r in by.items()} == {k: ("finished", "pool") for k in by}
    rows = {}
    for name, r in by.items():
        doc = json.loads(Path(r.record).read_text())
        assert [x["variant"] for x in doc["results"]] == ["cudnn", "tiled"]
        rows[name] = doc["results"][1]
        assert doc["environment"]["gpu"] == "Fake H100" and doc["settings"]["images"] == [2]
        assert r.cost["child_s"] > 0 and "bundle_s" in r.cost
    assert rows["a-crash"]["status"] == "failed" and rows["a-crash"]["error"].startswith("crashed (SIGSEGV)")
    assert rows["c-hang"]["error"].startswith("timed out after 3 s")
    assert rows["d-cuda"]["error"].startswith(
        "the child process failed (exit 1): cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress")
    for ok in ("b-ok", "e-ok"):  # after a crash, a hang and a lost context: the next child is as if alone
        assert rows[ok]["error"].startswith("GpuUnavailable: GPU variants need CUDA and CuPy: no CUDA device")
    for row in rows.values():  # judged by the course's rules, as `profconv run --kernel` judges them
        assert row["verdict"]["status"] == "failed" and row["error"].endswith("]")
    assert by["c-hang"].cost["child_s"] == pytest.approx(3.0, abs=1.5)
    assert by["b-ok"].cost["child_s"] < 2.5 and by["e-ok"].cost["child_s"] < 2.5
    steps = json.loads((Path(by["c-hang"].out_dir) / "child-tiled.timeline.json").read_text())
    assert steps[-1][1] == "(exit)" and steps[-1][0] == pytest.approx(3.0, abs=1.5)  # the hang's child, to its kill


def test_a_driver_that_refuses_forked_children_turns_the_worker_to_new_processes(fake_cuda, tmp_path: Path) -> None:
    worker, specs = _worker(tmp_path, {"a": "fork-broken", "b": "fork-broken"})
    try:
        rows = []
        for spec in specs:
            r = worker.complete(spec, worker.execute(spec))
            rows.append(json.loads(Path(r.record).read_text())["results"][1])
        # the first job ran again as a new process (where CUDA "starts"), the second went there directly
        assert all(row["error"].startswith("GpuUnavailable: GPU variants need CUDA and CuPy") for row in rows), rows
        assert worker.zygote is not None and worker.zygote.cuda_loaded
    finally:
        worker.close()


def test_ctrl_c_ends_the_running_child(fake_cuda, tmp_path: Path) -> None:
    """stop_all (Ctrl-C, SIGTERM in `profconv grade`) reaches a pool child as it reaches a job's process."""
    import threading

    from profconv.grade import jobs

    klass = _class(tmp_path, {"hang": "hang"})
    specs = manifest.plan(discover([str(klass)]), manifest.JobSettings(models=("ece408-high",), images="2",
                                                                        kernel_timeout_s=300.0), tmp_path / "g")
    worker = PoolWorker(visible="0", dry_run=False, cache=tmp_path / "cache", logs=tmp_path / "logs")
    _fake_bundle(worker, specs[0])
    box: list[JobResult] = []
    th = threading.Thread(target=lambda: box.append(worker.execute(specs[0])))
    th.start()
    try:
        deadline = time.monotonic() + 30
        while not jobs._running and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = next(iter(jobs._running)).pid
        assert jobs.stop_all() == 1
        th.join(30)
        assert not th.is_alive()
        assert box[0].status == "lost" and box[0].reason.startswith("interrupted")
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)  # the child's process group is gone
    finally:
        jobs._stopping.clear()
        worker.close()


def test_dry_run_pool_writes_the_record_profconv_run_writes(tmp_path: Path) -> None:
    """The same submissions through the pool and through `profconv run` processes (--no-pool): the same
    rows, kernels, verdicts and record header; the CPU reference made once for the class."""
    subs = [str(EXAMPLES / n) for n in ("device-tiled", "python-cupy", "course-minidnn")]
    common = ["--dry-run", "--images", "2", "--model", "ece408-high"]
    res = run_cli("grade", *subs, *common, "--out", str(tmp_path / "pool"), "--cache", str(tmp_path / "cache"))
    assert res.returncode == 0, res.stdout + res.stderr
    old = run_cli("grade", *subs, *common, "--out", str(tmp_path / "proc"), "--no-pool", "--no-report")
    assert old.returncode == 0, old.stdout
    pool = {j["submission"]: j for j in manifest.read(tmp_path / "pool")["jobs"]}
    proc = {j["submission"]: j for j in manifest.read(tmp_path / "proc")["jobs"]}
    assert {j["runner"] for j in pool.values()} == {"pool"} and {j["runner"] for j in proc.values()} == {"process"}
    assert all(j["report"] for j in pool.values())  # report.md by the long-lived report process
    for name in pool:
        a, b = (json.loads(Path(d[name]["record"]).read_text()) for d in (pool, proc))
        assert a["settings"] == b["settings"] and a["model"] == b["model"] and a["data"] == b["data"]
        strip = ("conv", "layer_times", "type_totals", "forward_s")  # the CPU reference's own times differ
        assert [{k: v for k, v in r.items() if k not in strip} for r in a["results"]] == \
               [{k: v for k, v in r.items() if k not in strip} for r in b["results"]]
        assert a["argv"][:2] == ["profconv", "run"]
        assert [c.replace("/pool/", "/proc/") for c in pool[name]["command"]] == proc[name]["command"]
    made = list((tmp_path / "cache" / "bundles").glob("*/bundle.json"))
    assert len(made) == 1 and json.loads(made[0].read_text())["key"]["variant"] == "cpu"


def test_a_kernel_not_recognised_is_failed_alike_by_both_runners(tmp_path: Path) -> None:
    """No form profconv knows: a FAILED row at once (no child), the same through the pool and `profconv run`."""
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "weird.cu").write_text("// not a kernel profconv can call\nint main() { return 0; }\n")
    common = [str(tmp_path / "odd"), "--dry-run", "--images", "2", "--no-report"]
    assert run_cli("grade", *common, "--out", str(tmp_path / "pool"), "--cache", str(tmp_path / "cache")).returncode == 0
    assert run_cli("grade", *common, "--out", str(tmp_path / "proc"), "--no-pool").returncode == 0
    rows = [pd_row(tmp_path / d) for d in ("pool", "proc")]
    assert rows[0]["verdict"] == rows[1]["verdict"] == "FAILED" and rows[0]["reason"] == rows[1]["reason"]
    assert rows[0]["rule"] == rows[1]["rule"] and rows[0]["rule"]


def pd_row(out: Path) -> dict:
    import pandas as pd

    return pd.read_csv(out / "leaderboard.csv").iloc[0].to_dict()


def test_bundle_is_made_once_and_reused_by_the_next_grade(tmp_path: Path) -> None:
    klass = tmp_path / "k"
    shutil.copytree(EXAMPLES / "device-tiled", klass / "one")
    args = [str(klass / "one"), "--dry-run", "--images", "2", "--no-report", "--cache", str(tmp_path / "cache")]
    assert run_cli("grade", *args, "--out", str(tmp_path / "g1")).returncode == 0
    first = manifest.read(tmp_path / "g1")["jobs"][0]
    assert run_cli("grade", *args, "--out", str(tmp_path / "g2")).returncode == 0
    second = manifest.read(tmp_path / "g2")["jobs"][0]
    assert first["cost"]["bundle_s"] > 0 and second["cost"]["bundle_s"] < first["cost"]["bundle_s"]
    assert len(list((tmp_path / "cache" / "bundles").glob("*/bundle.json"))) == 1


def test_bundle_key_follows_what_determines_the_bundle(tmp_path: Path) -> None:
    base = bundle.BundleKey(model="ece408-high", images=10000, variant="cudnn", device="GPU-1")
    same = bundle.BundleKey(model="ece408-high", images=10000, variant="cudnn", device="GPU-1")
    assert base.digest() == same.digest()
    for change in ({"images": 100}, {"device": "GPU-2"}, {"weights_digest": "x"}, {"repeat": 9}, {"data_digest": "d"}):
        assert bundle.BundleKey(**{**base.__dict__, **change}).digest() != base.digest(), change
    (tmp_path / "w.npz").write_bytes(b"one")
    d1 = bundle.file_digest(str(tmp_path / "w.npz"))
    (tmp_path / "w.npz").write_bytes(b"two")
    assert bundle.file_digest(str(tmp_path / "w.npz")) != d1 and bundle.file_digest(None) is None


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (no GPU)")
def test_prebuilt_course_library_is_what_the_child_finds(tmp_path: Path, monkeypatch) -> None:
    """A build made ahead on the CPU is the one the kernel's child uses: same directory, same nvcc
    command, same stamp -- the child's UserKernel does not run nvcc again."""
    from profconv.grade import builds
    from profconv.run.user import build as build_mod
    from profconv.run.user import contracts
    from profconv.run.user.manifest import load

    decl = load(str(EXAMPLES / "course-minidnn"))
    cache = builds.BuildCache(tmp_path, "sm_90", 1)
    got = cache.get("digest", decl)
    assert got is not None and got.error is None and got.seconds > 0
    assert list(got.where.rglob("libcourse.so"))
    again = cache.get("digest", decl)
    assert again is got  # one build per key
    calls: list[list[str]] = []
    real_run = subprocess.run
    monkeypatch.setattr(build_mod.subprocess, "run", lambda argv, *a, **k: calls.append(argv) or real_run(argv, *a, **k))

    class FakeDevice:
        compute_capability = "90"

    class FakeCp:
        class cuda:
            Device = FakeDevice

    kernel = contracts.UserKernel(decl, got.where)
    monkeypatch.setattr(contracts.UserKernel, "_load", lambda self, path: type("L", (), {
        "profconv_course_forward": None, "profconv_course_prolog": None, "profconv_course_epilog": None})())
    kernel._build_course(FakeCp, kernel.default())
    assert calls == []  # found built: no nvcc
    cache.close()


def test_a_builds_sass_is_read_on_the_build_thread_and_kept_for_the_verdict(tmp_path: Path, monkeypatch) -> None:
    """cuobjdump -sass of a course library took 1-5 s of each job's verdict (after its GPU turn): the build
    threads read it ahead and keep it beside the library; the verdict's sass_of reads it back."""
    from profconv.grade import builds
    from profconv.judge.assemble import sass_of
    from profconv.profile import disassemble

    where = tmp_path / "build"
    (where / "default").mkdir(parents=True)
    (where / "default" / "libcourse.so").write_bytes(b"\x7fELF course")
    log = tmp_path / "ran.log"
    sass = Path(__file__).parent / "data" / "sass" / "half.sass"
    tool = tmp_path / "cuobjdump"
    tool.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\ncase "$1" in -ptx) exit 1 ;; *) cat "{sass}" ;; esac\n')
    tool.chmod(0o755)
    monkeypatch.setattr(disassemble, "find_cuobjdump", lambda environ=None: str(tool))
    builds.disassemble_ahead(where)
    assert log.read_text().split() == ["-res-usage", "-ptx"]
    got = sass_of(where)
    assert [k.short_name for k in got.kernels] == ["dot_half2", "dot_half"] and got.tool == str(tool)
    assert log.read_text().split() == ["-res-usage", "-ptx"]  # read back: the tool not run again
    monkeypatch.setattr(disassemble, "find_cuobjdump", lambda environ=None: None)
    builds.disassemble_ahead(where)  # no cuobjdump: nothing kept, nothing said (the verdict says it)


def test_the_pool_records_profconv_runs_defaults() -> None:
    from profconv.grade import runrecord
    from profconv.session.run import RunRequest

    r = RunRequest()
    assert (runrecord.RUN_REPEAT, runrecord.RUN_WARMUP, runrecord.RUN_CPU_REPEAT, runrecord.RUN_CI_TARGET,
            runrecord.RUN_TIME_BUDGET_S) == (r.repeat, r.warmup, r.cpu_repeat, r.ci_target, r.time_budget)


def test_the_next_child_starts_when_the_last_one_gives_its_gpu_back(fake_cuda, tmp_path: Path) -> None:
    """A child that gave its GPU back (its work over, only its CUPTI records left to flush and write: 2 s
    with the stand-in CUPTI) ends its job's GPU time; the next job's child runs meanwhile, and the first
    job's row is complete once its child ended."""
    worker, specs = _worker(tmp_path, {"a-tail": "tail", "b-ok": "ok"})
    try:
        a = worker.execute(specs[0])
        a_gpu_done = time.monotonic()
        b = worker.execute(specs[1])  # forked while a's child still flushes
        b_done = time.monotonic()
        a = worker.complete(specs[0], a)
        a_done = time.monotonic()
        b = worker.complete(specs[1], b)
    finally:
        worker.close()
    assert a.status == b.status == "finished"
    assert a_done - a_gpu_done >= 1.5 and b_done < a_done  # b's child ran inside a's tail
    marks = json.loads((Path(a.out_dir) / "child-tiled.timeline.json").read_text())
    assert [s for _, s in marks][-4:] == ["GPU released", "CUPTI records: flush", "CUPTI records: write", "(exit)"]
    at = {s: t for t, s in marks}
    # the job's GPU time ends where the child gave the GPU back, not after its 2 s flush (whatever the
    # machine's load makes of the child's own work before it)
    assert at["(exit)"] - at["GPU released"] >= 1.9
    assert a.cost["child_s"] <= at["GPU released"] + 0.5 < at["(exit)"]
    for r in (a, b):
        row = json.loads(Path(r.record).read_text())["results"][1]
        assert row["error"].startswith("GpuUnavailable: GPU variants need CUDA and CuPy: no CUDA device")
    assert "profconv-progress: CUPTI records: write" in (Path(a.out_dir) / "job.log").read_text()  # the whole log


def _graded(ex: LocalExecutor, specs: list) -> list[JobResult]:
    """The class through `ex` (its first GPU's worker given a fake bundle), the executor closed after."""
    _fake_bundle(ex._worker(ex.slots[0]), specs[0])
    got: list[JobResult] = []
    try:
        ex.run(specs, got.append)
    finally:
        ex.close()
    return got


def _overlaps(results: list[JobResult], name: str) -> list[str]:
    """The jobs whose GPU part (started -> ended) overlapped job `name`'s."""
    from datetime import datetime

    span = {r.submission: (datetime.fromisoformat(r.started), datetime.fromisoformat(r.ended)) for r in results}
    a0, a1 = span[name]
    return sorted(k for k, (b0, b1) in span.items() if k != name and b0 < a1 and a0 < b1)


@pytest.mark.parametrize(("memory_mib", "cores", "asked", "jobs"), [
    (143771, 16, 0, 10),  # an H200 on a 16-core host: ten (the most by default; its memory and cores allow ten)
    (143771, 8, 0, 5),  # the same GPU with 8 cores for it: five (1.5 cores a job)
    (81559, 128 // 8, 0, 6),  # an H100 80GB of an 8-GPU, 128-core host: 6 of 13 GiB
    (143771, 64, 0, 10),  # more cores do not make more than ten
    (40960, 32, 0, 3), (24576, 32, 0, 1), (143771, 2, 0, 1), (None, 64, 0, 1),  # unknown memory: one
    (24576, 2, 5, 5),  # --jobs-per-gpu as asked
])
def test_jobs_a_gpu_by_default_follow_its_memory_and_the_hosts_cores(memory_mib, cores, asked, jobs) -> None:
    from profconv.grade import gpus

    assert gpus.jobs_per_gpu(Gpu("0", "GPU", memory_mib=memory_mib), asked, cores) == jobs


def test_two_jobs_a_gpu_run_side_by_side_with_the_same_verdicts(fake_cuda, tmp_path: Path) -> None:
    klass = _class(tmp_path, {"a-hang": "hang", "b-ok": "ok", "c-crash": "crash", "d-ok": "ok"})
    settings = manifest.JobSettings(models=("ece408-high",), images="2", kernel_timeout_s=3.0, timeout_s=60, report=False)
    specs = manifest.plan(discover([str(klass)]), settings, tmp_path / "g")
    ex = LocalExecutor(gpus=[Gpu("0", "Fake H200", memory_mib=143771)], cache=tmp_path / "cache", jobs_per_gpu=2)
    assert ex.describe()["options"]["jobs_per_gpu"] == {"0": 2}
    worker = ex._worker(ex.slots[0])
    assert worker.gpu_lock is not None and worker.gpu_lock.name == "gpu0.lock"  # no UUID without nvidia-smi
    got = _graded(ex, specs)
    by = {r.submission: r for r in got}
    names = ("a-hang", "b-ok", "c-crash", "d-ok")
    assert {k: (r.status, r.runner) for k, r in by.items()} == {k: ("finished", "pool") for k in names}
    rows = {k: json.loads(Path(r.record).read_text())["results"][1] for k, r in by.items()}
    assert rows["a-hang"]["error"].startswith("timed out after 3 s")  # its own limit, as when alone
    assert rows["c-crash"]["error"].startswith("crashed (SIGSEGV)")
    for ok in ("b-ok", "d-ok"):
        assert rows[ok]["error"].startswith("GpuUnavailable: GPU variants need CUDA and CuPy: no CUDA device")
    # the others went by while the hang held its slot: two of them at least (which two depends on the host's
    # load: under load b-ok's child can outlast the hang's 3 s, and c-crash then takes the hang's slot)
    assert len(set(_overlaps(got, "a-hang")) & {"b-ok", "c-crash", "d-ok"}) >= 2


def test_a_slurm_task_runs_its_jobs_two_at_a_time_on_its_gpu(fake_cuda, tmp_path: Path, monkeypatch) -> None:
    from profconv.grade import slurm

    worker, specs = _worker(tmp_path, {"a-hang": "hang", "b-ok": "ok", "c-ok": "ok"})
    specs = [dataclasses.replace(s, kernel_timeout_s=3.0) for s in specs]
    worker.gpu_lock = tmp_path / "locks" / "gpu0.lock"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr(slurm, "_task_worker", lambda specs, cache: worker)
    monkeypatch.setattr(slurm.gpus_mod, "query", lambda ids=None, timeout=15.0: [Gpu("0", "Fake H100", None, 81559)])
    monkeypatch.setattr(slurm.os, "sched_getaffinity", lambda pid: set(range(4)))  # the task's 4 CPUs: two jobs
    assert slurm._task_share(specs, worker, 0) == 2 and slurm._task_share(specs, worker, 1) == 1
    assert slurm._task_share(specs[:1], worker, 3) == 1  # never more at once than the task has jobs
    got = slurm._task_jobs(specs, str(tmp_path / "cache"), None, slurm._Ending(), 0)
    assert [r.submission for r in got] == ["a-hang", "b-ok", "c-ok"]  # in the task's order, whatever ended first
    assert [r.status for r in got] == ["finished"] * 3
    assert set(_overlaps(got, "a-hang")) == {"b-ok", "c-ok"}
    assert json.loads(Path(got[0].record).read_text())["results"][1]["error"].startswith("timed out after 3 s")


def test_a_kernel_out_of_memory_beside_another_job_runs_again_alone(fake_cuda, tmp_path: Path) -> None:
    klass = _class(tmp_path, {"a-oom": "oom-shared", "b-ok": "ok"})
    settings = manifest.JobSettings(models=("ece408-high",), images="2", kernel_timeout_s=10.0, timeout_s=60, report=False)
    specs = manifest.plan(discover([str(klass)]), settings, tmp_path / "g")
    ex = LocalExecutor(gpus=[Gpu("0", "Fake H200", memory_mib=143771)], cache=tmp_path / "cache", jobs_per_gpu=2)
    by = {r.submission: r for r in _graded(ex, specs)}
    row = json.loads(Path(by["a-oom"].record).read_text())["results"][1]
    # its verdict is the one it gets alone (here: the stand-in's "no CUDA device"), not the neighbour's memory
    assert row["error"].startswith("GpuUnavailable: GPU variants need CUDA and CuPy: no CUDA device"), row["error"]
    assert row["user"]["notes"][0] == ("run again with its GPU to itself: out of memory beside another job's child "
                                       "(that run's log: child-tiled.shared.log)")
    shared = Path(by["a-oom"].out_dir) / "child-tiled.shared.log"
    assert "OutOfMemoryError: Out of memory allocating" in shared.read_text()
    other = json.loads(Path(by["b-ok"].record).read_text())["results"][1]["user"].get("notes", [])
    assert not any(n.startswith("run again") for n in other)  # its neighbour ran once


def test_an_unwritable_lock_folder_is_one_clear_error_before_any_job(fake_cuda, tmp_path: Path, monkeypatch) -> None:
    from profconv.errors import InputError

    (tmp_path / "file").write_text("")
    monkeypatch.setenv("PROFCONV_GPU_LOCKS", str(tmp_path / "file" / "locks"))  # below a file: never a folder
    klass = _class(tmp_path, {"a": "ok"})
    specs = manifest.plan(discover([str(klass)]), manifest.JobSettings(models=("ece408-high",), images="2",
                                                                       report=False), tmp_path / "g")
    ex = LocalExecutor(gpus=[Gpu("0", "Fake H200", memory_mib=143771)], cache=tmp_path / "cache", jobs_per_gpu=2)
    got: list[JobResult] = []
    with pytest.raises(InputError, match=r"cannot write the GPU lock files in .*/file/locks \(Not a directory\): "
                                         r"set \$PROFCONV_GPU_LOCKS"):
        ex.run(specs, got.append)
    ex.close()
    assert got == []
