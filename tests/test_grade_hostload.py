"""grade.hostload: this host's CPU and GPU busy shares while a grade's jobs ran (the manifest's "load"),
and benchmarks/grade_throughput.py's line for it."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

from profconv.grade import hostload, manifest

DATA = Path(__file__).parent / "data" / "grade"
FAKE = f"{{python}} {shlex.quote(str(DATA / 'fake_run.py'))} {{kernel}} {{model}} {{out}}"
STAT = """cpu  100 0 50 800 50 0 0 0 0 0
cpu0 50 0 25 400 25 0 0 0 0 0
intr 12345
"""


def _throughput():
    spec = importlib.util.spec_from_file_location("grade_throughput", Path(__file__).parents[1] / "benchmarks"
                                                  / "grade_throughput.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cpu_times_and_busy_share_from_proc_stat() -> None:
    assert hostload.cpu_times(STAT) == (150, 1000)  # idle 800 + iowait 50 of 1000 jiffies
    assert hostload.cpu_times("intr 1\n") is None
    assert hostload.busy_share((150, 1000), (250, 1200)) == 0.5
    assert hostload.busy_share((150, 1000), (150, 1000)) is None  # no time passed
    assert hostload.busy_share((150, 1000), (400, 1100)) == 1.0  # clamped


def test_gpu_samples_from_nvidia_smi_lines() -> None:
    text = "0, 45\n1, 100\n0, 55\nNo devices were found\n1, [N/A]\n"
    assert hostload.gpu_samples(text) == {"0": [0.45, 0.55], "1": [1.0]}


def test_the_sampler_reads_this_hosts_cpus_while_work_runs(tmp_path: Path) -> None:
    if hostload.cpu_times(hostload.PROC_STAT.read_text() if hostload.PROC_STAT.exists() else "") is None:
        pytest.skip("no /proc/stat here")
    with hostload.Sampler(gpus=False, interval_s=0.05) as s:
        end = time.monotonic() + 0.4
        while time.monotonic() < end:
            sum(range(10_000))
    doc = s.load.to_dict()
    assert doc["samples"] >= 4 and doc["cpu_cores"] == os.cpu_count()
    assert 0.0 < doc["cpu_busy_mean"] <= doc["cpu_busy_max"] <= 1.0 and doc["cpu_busy_p90"] <= doc["cpu_busy_max"]
    assert "gpu_busy_mean" not in doc and "note" not in doc


def test_no_proc_stat_and_no_nvidia_smi_are_said(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with hostload.Sampler(gpus=True, interval_s=0.05, stat=tmp_path / "missing") as s:
        time.sleep(0.1)
    assert s.load.to_dict() == {"interval_s": 0.05, "samples": 0, "cpu_cores": os.cpu_count(),
                                "note": f"CPU not sampled: no {tmp_path / 'missing'}; GPUs not sampled: no nvidia-smi"}


def test_the_gpus_are_sampled_through_nvidia_smi(tmp_path: Path, monkeypatch) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!{sys.executable}\nimport sys, time\n"
                   "assert '--loop-ms=50' in sys.argv, sys.argv\n"
                   "for i in range(1000):\n    print('0, 40' if i % 2 else '0, 60', flush=True); time.sleep(0.01)\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    with hostload.Sampler(gpus=True, interval_s=0.05) as s:
        time.sleep(0.3)
    assert s.load.to_dict()["gpu_busy_mean"] == {"0": pytest.approx(0.5, abs=0.05)}


def test_a_local_grade_records_the_hosts_load_and_the_benchmark_says_it(tmp_path: Path, capsys) -> None:
    klass = tmp_path / "class"
    shutil.copytree(DATA / "class", klass)
    out = tmp_path / "g"
    res = run_cli("grade", str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE)
    assert res.returncode == 0, res.stdout + res.stderr
    load = manifest.read(out)["load"]
    assert load["interval_s"] == hostload.INTERVAL_S and load["cpu_cores"] == os.cpu_count()
    assert "gpu_busy_mean" not in load  # a dry run: no GPU sampled
    bench = _throughput()
    line = bench.load_line({"samples": 3, "cpu_busy_mean": 0.52, "cpu_busy_p90": 0.9, "cpu_cores": 16,
                            "gpu_busy_mean": {"0": 0.45}})
    assert line == "  this host while the jobs ran: CPUs busy 52% (p90 90%) of 16 cores; GPU busy 0: 45%"
    assert bench.load_line({"samples": 0}) is None
    steps = {"GPU wait": {"median": 0.1, "sum": 16.0, "n": 50}, "start": {"median": 0.8, "sum": 1.8, "n": 2},
             "conv1: timing": {"median": 0.1, "sum": 15.2, "n": 40}, "flush": {"median": 0.7, "sum": 1.5, "n": 2}}
    assert bench.waits_line(steps, 2) == "  a child, a job: works 8.50 s holding the GPU, waits for a turn 8.00 s (25.0 waits)"
    assert bench.waits_line({}, 0) is None
    bench.print_summary(bench.summary(out))
    printed = capsys.readouterr().out
    assert "jobs (local" in printed and ("this host while the jobs ran" in printed) == bool(load["samples"])


def test_an_interrupted_grade_keeps_the_load_of_what_ran(tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C or a batch system's time limit mid-class: the manifest keeps the finished jobs and, with them,
    the host's load while they ran (a cut measurement is still a measurement)."""
    from profconv.grade import executors

    klass = tmp_path / "class"
    shutil.copytree(DATA / "class", klass)
    out = tmp_path / "g"

    def cut(self, specs, on_result) -> None:
        time.sleep(0.2)
        raise KeyboardInterrupt

    monkeypatch.setattr(executors.LocalExecutor, "run", cut)
    res = run_cli("grade", str(klass / "alice"), "--dry-run", "--out", str(out), "--job-command", FAKE)
    assert res.returncode == 130 and "interrupted after 0 of 1 job(s)" in res.stdout + res.stderr
    load = manifest.read(out)["load"]
    assert load["interval_s"] == hostload.INTERVAL_S and load["cpu_cores"] == os.cpu_count()


def test_the_steps_a_turn_waits_for_are_summed_by_the_code_that_starts_and_ends_them(tmp_path: Path) -> None:
    import json

    bench = _throughput()
    job = tmp_path / "jobs" / "alice" / "ece408-fa20"
    job.mkdir(parents=True)
    marks = [[0.0, "shared", "worker.run_job:84"], [0.5, "step", "worker.run_job:96"],
             [0.6, "step", "compare.compare:72"], [0.6, "release", "calls._call:146"], [0.65, "wait", "calls._call:146"],
             [0.9, "alone", "calls._call:146"], [0.95, "release", "calls._call:146"], [0.95, "shared", "calls._call:146"],
             [1.95, "release", "zygote.give_back_gpu:140"]]
    (job / "child-001-alice.gpusteps.json").write_text(json.dumps(marks))
    g = bench.gpu_steps(tmp_path)
    assert (g["children"], g["steps"], g["alone_per_job"], g["alone_s_per_job"]) == (1, 4, 1.0, 0.05)
    assert [p["pair"] for p in g["pairs"]] == ["calls._call -> zygote.give_back_gpu", "worker.run_job -> worker.run_job",
                                               "worker.run_job -> compare.compare", "compare.compare -> calls._call"]
    assert g["pairs"][0]["sum"] == 1.0 and g["pairs"][1]["max"] == 0.5
    assert bench.gpu_steps(tmp_path / "none") is None
