"""The library sessions (profconv.session): request in, typed record out, callbacks, one Recording.

CPU paths only (the CPU reference on a small model); the GPU paths of the same sessions are covered by
the GPU tests of `profconv run` and `profconv bench`, which now go through these sessions."""

from __future__ import annotations

import json
import os
import threading

import pytest

from profconv.errors import GpuUnavailable, InputError, Interrupted
from profconv.records import RunRecord
from profconv.records import load as load_record
from profconv.session import Callbacks, Note, RunRequest, RunSession
from profconv.session.recording import RecordExists, Recording


def _request(tmp_path, **kw) -> RunRequest:
    base = dict(model="ece408", images=[4], variants=["cpu"], cpu_repeat=1, out=tmp_path / "r", argv=["test"])
    return RunRequest(**{**base, **kw})


def test_run_session_returns_the_record_it_wrote_and_reports_through_callbacks(tmp_path):
    seen: dict[str, list] = {"progress": [], "result": [], "note": []}
    cb = Callbacks(progress=lambda m, d, t: seen["progress"].append((m, d, t)), result=seen["result"].append,
                   note=seen["note"].append)
    outcome = RunSession(_request(tmp_path, images=[4, 6]), cb).run()
    assert isinstance(outcome.record, RunRecord) and outcome.path == tmp_path / "r" / "run.json"
    assert load_record(outcome.path) == outcome.record  # what is returned is what is on disk
    assert outcome.record.argv == ["test"] and outcome.record.settings.images == [4, 6]
    assert [(r.variant, r.images, r.status) for r in outcome.record.results] == [("cpu", 4, "ok"), ("cpu", 6, "ok")]
    assert seen["result"] == outcome.record.results
    assert any(total == 6 for _, _, total in seen["progress"])  # a sized step: images done of 6
    assert all(isinstance(n, Note) for n in seen["note"]) and any("synthetic" in n.text for n in seen["note"])
    assert outcome.failed == [] and outcome.profiles == [] and outcome.summary == {}


def test_stop_callback_interrupts_with_the_partial_record_kept(tmp_path):
    stop = threading.Event()
    cb = Callbacks(result=lambda r: stop.set(), stop=stop.is_set)
    with pytest.raises(Interrupted) as info:
        RunSession(_request(tmp_path, images=[4, 6]), cb).run()
    exc = info.value
    assert exc.exit_status == 130 and exc.path == tmp_path / "r" / "run.json"
    assert exc.record.interrupted and [r.images for r in exc.record.results] == [4]
    assert load_record(exc.path).interrupted is True


def test_request_is_checked_before_any_directory_is_made(tmp_path):
    for kw, message in [({"images": [4, 4]}, "lists 4 twice"), ({"repeat": 0}, "at least 1"),
                        ({"data": str(tmp_path / "none")}, "not a directory"),
                        ({"profile": ["gprof"]}, "--profile takes one of"),
                        ({"weights": str(tmp_path / "w.npz")}, "no such weights file")]:
        with pytest.raises(InputError, match=message):
            RunSession(_request(tmp_path, **kw)).run()
    assert not (tmp_path / "r").exists()


def test_default_directory_is_removed_when_the_run_fails_before_any_result(tmp_path, monkeypatch):
    """m2: a run refused after its runs/MODEL-TIMESTAMP directory was made leaves no empty directory."""
    from profconv.run import runner

    monkeypatch.chdir(tmp_path)

    def boom(*a, **k):
        raise InputError("refused late")

    monkeypatch.setattr(runner, "execute", boom)
    with pytest.raises(InputError, match="refused late"):
        RunSession(_request(tmp_path, out=None)).run()
    assert list((tmp_path / "runs").iterdir()) == []


def test_recording_never_replaces_a_record_it_did_not_write(tmp_path):
    rec = RunRecord(argv=["a"], created="now", environment={}, model={"name": "ece408"})  # type: ignore[arg-type]
    out = tmp_path / "o"
    first = Recording(out, "run.json", "s")
    first.open()
    second = Recording(out, "run.json", "s")
    second.open()  # both started before either wrote (two runs with the same --out at once)
    first.save(rec)
    with pytest.raises(RecordExists, match="another run wrote a record there"):
        second.save(rec)
    first.save(rec)  # the claimant rewrites its own record
    with pytest.raises(RecordExists, match="exists .another run's record.: give another --out, or --force"):
        Recording(out, "run.json", "s").open()
    forced = Recording(out, "run.json", "s", replace=True)
    forced.open()
    forced.save(rec)
    assert [p.name for p in out.iterdir()] == ["run.json"]  # no temporary file left


def test_recording_claim_without_hard_links(tmp_path, monkeypatch):
    import errno

    def no_link(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    rec = RunRecord(argv=["a"], created="now", environment={}, model={"name": "ece408"})  # type: ignore[arg-type]
    r = Recording(tmp_path, "run.json", "s")
    r.save(rec)
    assert json.loads((tmp_path / "run.json").read_text())["argv"] == ["a"]
    with pytest.raises(RecordExists):
        Recording(tmp_path, "run.json", "s").save(rec)


def test_cli_run_out_refuses_an_existing_record_and_force_replaces_it(cli, tmp_path):
    """D6: a second `run --out DIR` no longer replaces the first run's record without a word."""
    args = ["run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "--out", tmp_path]
    assert cli(*args).returncode == 0
    before = (tmp_path / "run.json").read_text()
    r = cli(*args[:-2], "-n", "5", "--out", tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (f"error: --out {tmp_path}: {tmp_path / 'run.json'} exists (another run's record): "
                        "give another --out, or --force to replace it\n")
    assert (tmp_path / "run.json").read_text() == before
    assert cli(*args[:-2], "-n", "5", "--out", tmp_path, "--force").returncode == 0
    assert json.loads((tmp_path / "run.json").read_text())["settings"]["images"] == [5]


def test_cli_run_json_prints_the_record_alone(cli, tmp_path):
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "--out", tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == json.loads((tmp_path / "run.json").read_text()) and doc["schema"] == "profconv.run"
    assert "synthetic data" in r.stderr  # notes go to stderr


def test_cli_models_json(cli):
    r = cli("models", "--json")
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert doc["schema"] == "profconv.models"
    high = next(m for m in doc["models"] if m["name"] == "ece408-high")
    assert high["conv_layers"] == [{"layer": "conv1", "shape": "M=50 C=1 28x28 K=5",
                                    "dims": {"M": 50, "C": 1, "H": 28, "W": 28, "K": 5, "P": 0}}]


@pytest.mark.nogpu
def test_kernel_alone_on_a_cpu_machine_names_the_kernel(cli, tmp_path):
    """m1: `--variant none --kernel K` without CUDA names the kernel and says its manifest was checked."""
    from pathlib import Path

    kernel = Path(__file__).resolve().parent.parent / "examples" / "device-tiled" / "conv_tiled.cu"
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "none", "--kernel", kernel, "--out", tmp_path / "r")
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("error: your kernel tiled needs CUDA and CuPy — ")
    assert "your kernel tiled: its manifest and contract (device) were checked: OK" in r.stderr
    assert not (tmp_path / "r").exists()
    with pytest.raises(GpuUnavailable):
        RunSession(_request(tmp_path, variants=[], kernels=[str(kernel)])).run()
