"""profconv run without a GPU: models, data loaders, the reference conv, the run record, the CLI."""

import gzip
import json
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

from profconv import records
from profconv.errors import DataFileError
from profconv.records import Environment, ModelInfo, RunRecord, RunSettings
from profconv.run import data, reference, weights
from profconv.run.models import MODELS, ConvShape, get_model, parse_spec
from profconv.run.record import write_atomic


def test_model_table_shapes():
    assert [s.text() for _, s in MODELS["ece408-high"].conv_shapes(1)] == ["M=50 C=1 28x28 K=5"]
    assert [s.text() for _, s in MODELS["ece408"].conv_shapes(1)] == ["M=6 C=1 64x64 K=5", "M=16 C=6 30x30 K=5"]
    assert [s.text() for _, s in MODELS["cifar10"].conv_shapes(1)] == [
        "M=16 C=3 32x32 K=5 pad 2", "M=20 C=16 16x16 K=5 pad 2", "M=20 C=20 8x8 K=5 pad 2"]
    assert MODELS["ece408-fa20"].feature_sizes() == {"fc1": 1024, "fc2": 32}
    assert [layer.kind for layer in parse_spec("conv 4 7; relu; pool 2; fc 10; softmax")] == [
        "conv", "relu", "pool", "fc", "softmax"]
    s = ConvShape(10000, 50, 1, 28, 28, 5)
    assert s.flops == 2 * 10000 * 50 * 24 * 24 * 25
    assert s.min_bytes == 4 * (10000 * 784 + 50 * 25 + 10000 * 50 * 576)


def test_reference_conv_matches_direct_loops():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    k = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for pad in (0, 1):
        xp_ = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        ho, wo = xp_.shape[2] - 2, xp_.shape[3] - 2
        direct = np.zeros((2, 4, ho, wo))
        for n in range(2):
            for m in range(4):
                for i in range(ho):
                    for j in range(wo):
                        direct[n, m, i, j] = b[m] + sum(
                            xp_[n, c, i + p, j + q] * k[m, c, p, q] for c in range(3) for p in range(3) for q in range(3))
        got = reference.conv2d(np, x, k, b, pad, chunk=1)
        assert got.shape == direct.shape
        np.testing.assert_allclose(got, direct, rtol=1e-6, atol=1e-6)


def test_synthetic_data_is_deterministic_and_prefix_stable():
    m = get_model("ece408")
    a, b = data.synthetic(m, 5), data.synthetic(m, 1200)
    assert a.images.shape == (5, 1, 64, 64) and a.images.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(a.images, b.images[:5])
    assert a.labels.tolist() == b.labels[:5].tolist()
    assert a.labels.tolist() == data.synthetic(m, 5).labels.tolist()


def test_bundled_weights_reach_their_accuracy():
    m = get_model("ece408-high")
    ds = data.synthetic(m, 500)
    acc = reference.accuracy(np, reference.forward(np, m.layers, ds.images, weights.load(m)), ds.labels)
    low = get_model("ece408-low")
    acc_low = reference.accuracy(np, reference.forward(np, low.layers, ds.images, weights.load(low)), ds.labels)
    assert acc == pytest.approx(0.842, abs=1e-9)
    assert acc_low == pytest.approx(0.604, abs=1e-9)


def _idx_images(n, rows, cols, big_endian=True):
    if big_endian:
        head = struct.pack(">iiii", 2051, n, rows, cols)
    else:
        head = struct.pack("<iiii", 0, n, rows, cols)
    return head + bytes(range(256)) * (n * rows * cols // 256) + bytes(n * rows * cols % 256)


def test_idx_reader_big_and_little_endian(tmp_path):
    p = tmp_path / "t10k-images-idx3-ubyte.gz"
    p.write_bytes(gzip.compress(_idx_images(3, 28, 28)))
    imgs = data.read_idx(p, "images")
    assert imgs.shape == (3, 1, 28, 28) and imgs[0, 0, 0, 5] == 5
    q = tmp_path / "t10k-64-images-idx3-ubyte"
    q.write_bytes(_idx_images(2, 64, 64, big_endian=False))
    assert data.read_idx(q, "images").shape == (2, 1, 64, 64)
    lab = tmp_path / "t10k-labels-idx1-ubyte"
    lab.write_bytes(struct.pack(">ii", 2049, 3) + bytes([1, 2, 9]))
    assert data.read_idx(lab, "labels").tolist() == [1, 2, 9]
    ds = data.load_fashion(tmp_path, get_model("ece408-high"))
    assert ds.images.shape == (3, 1, 28, 28) and ds.labels.tolist() == [1, 2, 9]


@pytest.mark.parametrize("content, message", [
    (struct.pack(">iiii", 1234, 3, 28, 28), "not an IDX images file (magic 1234"),
    (struct.pack(">iiii", 2051, 10, 28, 28) + bytes(100), "truncated: header says 10 images, data holds 0"),
    (b"\x00\x00", "too short for an IDX images header"),
    (b"\x1f\x8b\x08\x00garbage", "corrupt gzip data"),
])
def test_idx_reader_errors_name_the_file(tmp_path, content, message):
    p = tmp_path / "bad-images"
    p.write_bytes(content)
    with pytest.raises(DataFileError, match=re.escape(message)) as exc:
        data.read_idx(p, "images")
    assert str(p) in str(exc.value)


def test_cifar_reader(tmp_path):
    rec = bytes([7]) + bytes(range(256)) * 12
    p = tmp_path / "test_batch.bin"
    p.write_bytes(rec[:3073] * 2)
    imgs, labels = data.read_cifar(p)
    assert imgs.shape == (2, 3, 32, 32) and labels.tolist() == [7, 7] and imgs[0, 0, 0, 3] == 3
    p.write_bytes(rec[:3000])
    with pytest.raises(DataFileError, match="not a whole number of 3,073-byte"):
        data.read_cifar(p)
    p.write_bytes(bytes([12]) + rec[1:3073])
    with pytest.raises(DataFileError, match="label 12 out of range"):
        data.read_cifar(p)


def test_run_record_schema_and_atomic_write(tmp_path):
    rec = RunRecord(argv=["profconv", "run"], created="2026-11-26T00:00:00+00:00", environment=Environment(),
                    model=ModelInfo(name="ece408"), settings=RunSettings(repeat=5))
    path = tmp_path / "r" / "run.json"
    write_atomic(path, rec.to_json())
    doc = json.loads(path.read_text())
    assert doc["schema"] == "profconv.run" and doc["schema_version"] == 2
    assert list(doc) == ["schema", "schema_version", "argv", "created", "environment", "model", "data",
                         "settings", "results", "interrupted", "profile", "provenance", "evidence"]
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temporary left behind
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()  # not mkstemp's 0600
    assert records.read(path, RunRecord) == rec  # one model: what is written is what is read


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.nogpu
def test_cli_without_gpu_runs_cpu_reference(cli, tmp_path):
    r = cli("run", "--model", "ece408", "--images", "10,20", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "GPU variants skipped: they need CUDA and CuPy" in r.stdout
    assert "synthetic data" in r.stdout
    assert "Correctness: 0.8 Model: ece408  (10 images, cpu)" in r.stdout
    doc = json.loads((tmp_path / "run.json").read_text())
    cpu = [res for res in doc["results"] if res["variant"] == "cpu"]
    assert [res["images"] for res in cpu] == [10, 20]
    assert [c["layer"] for c in cpu[0]["conv"]] == ["conv1", "conv2"]
    assert cpu[0]["conv"][0]["rel_error"] == 0.0 and cpu[0]["status"] == "ok"
    assert {res["status"] for res in doc["results"] if res["variant"] != "cpu"} == {"skipped"}


@pytest.mark.parametrize("args, message", [
    (["--model", "nope"], "unknown model 'nope'"),
    (["--images", "ten"], "--images takes a number"),
    (["--variant", "warp"], "unknown variant(s) warp"),
    (["--data", "/nonexistent"], "/nonexistent: not a directory"),
    (["--weights", "/nonexistent.npz"], "/nonexistent.npz: no such weights file"),
])
def test_cli_run_bad_input(cli, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default runs/ directory: not in the checkout, which may be read-only
    r = cli("run", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_ctrl_c_stops_cleanly(tmp_path):
    """SIGINT mid-run: exit 130, no traceback, and the record on disk is whole JSON."""
    import signal
    import time

    # SIGINT as a terminal's Ctrl-C delivers it: a suite started in the background by a shell without
    # job control (`.ci/run &`) ignores SIGINT, and a child inherits that (Python then installs no handler)
    proc = subprocess.Popen([sys.executable, "-m", "profconv", "run", "--model", "ece408", "--images", "10,20,10000",
                             "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while not (tmp_path / "run.json").exists() and time.time() < deadline:  # the 10-image run has finished
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    doc = json.loads((tmp_path / "run.json").read_text())
    assert doc["interrupted"] is True and doc["results"][0]["images"] == 10


def test_kernel_headers_are_expanded_into_the_source():
    """NVRTC compiles (and CuPy caches by) the expanded text: the shared staging code is in both kernels."""
    from profconv.run.gpu import kernel_source

    for name in ("tuned_smem.cu", "fp16.cu"):
        src = kernel_source(name)
        assert '#include "staging.cuh"' not in src
        assert src.count("struct NextImages") == 1 and "next.store(xs);" in src
    assert "#include <cuda_fp16.h>" in kernel_source("fp16.cu")  # system headers stay for NVRTC


@pytest.mark.nogpu
def test_gpu_variants_without_gpu_are_one_line_exit_3_and_no_record(cli, tmp_path):
    r = cli("run", "--model", "ece408", "--variant", "naive,tuned", "--images", "10", "--out", str(tmp_path / "r"))
    assert r.returncode == 3
    assert r.stderr.startswith("error: naive, tuned need CUDA and CuPy — ")
    assert len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "r").exists()  # no empty record for `report` to misdescribe


@pytest.mark.parametrize("args, message", [
    (["--images", "10,10"], "--images lists 10 twice"),
    (["--images", "99999999999999999999999"], "at most 1,000,000 images"),
])
def test_run_refuses_doubled_and_huge_image_counts(cli, args, message):
    r = cli("run", *args)
    assert r.returncode == 2 and message in r.stderr


def test_variant_named_twice_runs_once():
    from profconv.commands import comma_list

    assert comma_list(["cpu,cpu", "cpu"]) == ["cpu"]


def test_cpu_run_is_chunked_with_sized_progress_and_several_samples(tmp_path, monkeypatch):
    """The CPU path streams chunks (memory bounded), reports done/total for a progress bar, times the conv
    layer `cpu_repeat` times, and its forward-pass conv time matches the Op Time (same chunked code)."""
    from profconv.run import runner as runner_mod
    from profconv.run.models import get_model
    from profconv.run.variants import get_variants

    monkeypatch.setattr(runner_mod, "HOST_CHUNK", 40)
    m = get_model("ece408")
    results, steps = [], []
    runner_mod.execute(m, weights.load(m), get_variants(["cpu"]), [100], runner_mod.RunOptions(100, cpu_repeat=3),
                       None, lambda msg, done=None, total=None: steps.append((msg, done, total)), results.append, {})
    (res,) = results
    assert res.status == "ok" and [c.layer for c in res.conv] == ["conv1", "conv2"]
    for c in res.conv:
        assert len(c.op_time.samples_s) == 3 and c.rel_error == 0.0
    assert ("ece408: reference pass", 100, 100) in steps  # conv2's input needs conv1, tanh, pool
    assert ("ece408/cpu/conv1: timing pass 3 of 3", 300, 300) in steps
    assert not any(msg.endswith(": check") for msg, _, _ in steps)  # checked during the first timed pass
    assert ("ece408/cpu/forward", 40, 100) in steps
    # the forward table's conv time is the same chunked conv code over the same images as the Op Time samples
    assert res.type_totals["conv"] == pytest.approx(res.layer_times["conv1"] + res.layer_times["conv2"])
    assert all(t > 0 for c in res.conv for t in c.op_time.samples_s)
    # the reference itself: same as the whole-batch reference forward pass
    ds = data.load(m, 100, None)
    probs = reference.forward(np, m.layers, ds.images, weights.load(m))
    assert res.correctness == pytest.approx(reference.accuracy(np, probs, ds.labels))


def test_pool_max_matches_a_reduction():
    a = np.random.default_rng(1).standard_normal((3, 4, 9, 11)).astype(np.float32)
    want = a[:, :, :8, :10].reshape(3, 4, 4, 2, 5, 2).max(axis=(3, 5))
    assert np.array_equal(reference.pool_max(np, a, 2), want)
    want3 = a[:, :, :9, :9].reshape(3, 4, 3, 3, 3, 3).max(axis=(3, 5))
    assert np.array_equal(reference.pool_max(np, a, 3), want3)


def test_records_get_the_users_umask(tmp_path):
    import os

    from profconv.run.record import write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "r.json", "{}")
        assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        write_atomic(tmp_path / "s.json", "{}")
        assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_text("root:x:0:0:root:/root:/bin/bash\n"), "not a NumPy .npz weights file"),
    (lambda p: np.save(p, np.zeros(3)), "a single .npy array, not a .npz"),
    (lambda p: np.savez(p, **{"conv1.w": np.array([object()] * 1250, dtype=object).reshape(50, 1, 5, 5)}),
     "pickled objects are never loaded"),
    (lambda p: np.savez(p, **{"conv1.w": np.full((50, 1, 5, 5), "a")}), "holds <U1 values"),
    (lambda p: np.savez(p, **{"conv1.w": np.full((50, 1, 5, 5), np.nan, dtype=np.float32)}), "conv1.w holds NaN or infinite"),
])
def test_weights_errors_never_suggest_allow_pickle(cli, tmp_path, make, message):
    path = tmp_path / "w.npz"
    make(path)
    if not path.exists():  # np.save appends .npy
        path = next(tmp_path.iterdir())
    r = cli("run", "--model", "ece408-high", "--images", "5", "--weights", str(path), "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and message in r.stderr
    assert "allow_pickle" not in r.stderr and len(r.stderr.splitlines()) == 1
