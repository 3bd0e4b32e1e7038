"""Every GPU variant against the float64 reference, on every model's conv shapes and odd sizes."""

import numpy as np
import pytest

from profconv.run import peers
from profconv.run.models import MODELS, ConvShape
from profconv.run.reference import conv2d
from profconv.run.runner import prepare
from profconv.run.variants import VARIANTS, cudnn_unavailable

pytestmark = pytest.mark.gpu

GPU_VARIANTS = [v for v in VARIANTS if v.device in ("gpu", "cudnn")]
MODEL_SHAPES = sorted(
    {(s.M, s.C, s.H, s.W, s.K, s.P) for m in MODELS.values() for _, s in m.conv_shapes(1)}
)
ODD_SHAPES = [
    (1, 3, 1, 17, 17, 3, 0),  # batch 1, width not a multiple of the tile
    (3, 5, 2, 19, 23, 5, 0),  # batch 3, non-square
    (3, 7, 3, 33, 31, 5, 2),  # padding, odd everything
    (2, 17, 4, 9, 40, 7, 0),  # M not a multiple of the tile, K = 7
    (1, 1, 1, 5, 5, 5, 0),  # a single output element
]


def _check(variant, shape: ConvShape, seed: int):
    import cupy as cp

    if variant.device == "cudnn" and (why := cudnn_unavailable()):
        pytest.skip(why)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((shape.B, shape.C, shape.H, shape.W)).astype(np.float32)
    w = rng.standard_normal((shape.M, shape.C, shape.K, shape.K)).astype(np.float32)
    b = rng.standard_normal(shape.M).astype(np.float32)
    ref = conv2d(np, x, w, b, shape.P)
    # out poisoned with NaN; the cuDNN peers get torch tensors in their dtype and layout
    args = prepare(cp, variant, cp.asarray(x), cp.asarray(w), cp.asarray(b), shape)
    result = variant.launch(cp, *args, shape)
    cp.cuda.Device().synchronize()
    y = cp.asnumpy(peers.to_cupy(cp, result))
    assert np.isfinite(y).all(), f"{variant.name}: {np.count_nonzero(~np.isfinite(y))} outputs never written"
    err = np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err < variant.tolerance, f"{variant.name}: relative error {err:.3g}"


@pytest.mark.parametrize("variant", GPU_VARIANTS, ids=lambda v: v.name)
@pytest.mark.parametrize("dims", MODEL_SHAPES, ids=lambda d: "M{}C{}H{}W{}K{}P{}".format(*d))
def test_model_shapes(variant, dims):
    M, C, H, W, K, P = dims
    _check(variant, ConvShape(4, M, C, H, W, K, P), seed=hash(dims) % 2**32)


@pytest.mark.parametrize("variant", GPU_VARIANTS, ids=lambda v: v.name)
@pytest.mark.parametrize("dims", ODD_SHAPES, ids=lambda d: "B{}M{}C{}H{}W{}K{}P{}".format(*d))
def test_odd_sizes(variant, dims):
    _check(variant, ConvShape(*dims), seed=sum(dims))


@pytest.mark.parametrize("variant", GPU_VARIANTS, ids=lambda v: v.name)
def test_layer_without_bias(variant):
    """bias=None (the course's layers): every launcher must still write y = x (*) k exactly."""
    import cupy as cp

    if variant.device == "cudnn" and (why := cudnn_unavailable()):
        pytest.skip(why)
    s = ConvShape(3, 7, 2, 13, 11, 5, 1)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((s.B, s.C, s.H, s.W)).astype(np.float32)
    w = rng.standard_normal((s.M, s.C, s.K, s.K)).astype(np.float32)
    args = prepare(cp, variant, cp.asarray(x), cp.asarray(w), None, s)
    result = variant.launch(cp, *args, s)
    cp.cuda.Device().synchronize()  # streams' device-to-host copies are asynchronous (a NaN read before they land)
    y = cp.asnumpy(peers.to_cupy(cp, result))
    ref = conv2d(np, x, w, None, s.P)
    assert np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref) < variant.tolerance


@pytest.mark.parametrize("variant", GPU_VARIANTS, ids=lambda v: v.name)
def test_full_batch_fall2017(variant):
    """10,000 images of the Fall 2017 layer: grid limits and chunking at the real size."""
    _check(variant, ConvShape(10000, 50, 1, 28, 28, 5, 0), seed=7)


def test_run_command_on_gpu(tmp_path):
    """The command a user types, on the GPU: every variant ok, record written."""
    import json

    from typer.testing import CliRunner

    from profconv.cli import app

    result = CliRunner().invoke(app, ["run", "--model", "ece408", "--images", "100", "--repeat", "2",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rec = json.loads((tmp_path / "run.json").read_text())
    statuses = {r["variant"]: r["status"] for r in rec["results"]}
    assert statuses["naive"] == statuses["fused"] == statuses["unroll-gemm"] == "ok"
    assert rec["environment"]["gpu"]


def test_compile_error_names_the_file(monkeypatch):
    from profconv.run import gpu

    monkeypatch.setattr(gpu, "kernel_source", lambda name: "extern \"C\" __global__ void k() { undefined_thing; }")
    with pytest.raises(gpu.KernelCompileError, match=r"kernels/broken_for_test\.cu: .*error"):
        gpu.module("broken_for_test.cu")


def test_failing_variant_is_recorded_and_others_run(tmp_path):
    """A variant that raises is FAILED with its error; the next variant still runs and passes."""
    import cupy as cp

    from profconv.run import weights
    from profconv.run.data import synthetic
    from profconv.run.models import get_model
    from profconv.run.runner import Runner, RunOptions
    from profconv.run.variants import Variant

    def broken(cp, x, w, bias, out, s):
        raise RuntimeError("simulated launch failure")

    model = get_model("ece408")
    runner = Runner(model, weights.load(model), cp)
    ds = synthetic(model, 20)
    x = cp.asarray(ds.images)
    io = runner.reference_pass(x)
    opts = RunOptions(images=20, repeat=2, warmup=1)
    bad = runner.run_variant(Variant("broken", "", "", "fp32", 1e-5, "gpu", None, broken), x, ds.labels, io, opts,
                             lambda m: None)
    good = runner.run_variant(next(v for v in VARIANTS if v.name == "naive"), x, ds.labels, io, opts, lambda m: None)
    assert bad.status == "failed" and "RuntimeError: simulated launch failure" in bad.error
    assert good.status == "ok" and good.correctness == pytest.approx(0.85)  # the CPU reference gets 17 of 20


@pytest.mark.parametrize("activation", ["tanh", "relu", "none"])
@pytest.mark.parametrize("dims", [(4, 50, 1, 28, 28, 5, 0), (3, 16, 3, 32, 32, 5, 2), (2, 7, 3, 13, 11, 3, 1),
                                  (2, 20, 20, 8, 8, 5, 2)], ids=lambda d: "B{}M{}C{}H{}W{}K{}P{}".format(*d))
def test_fused_layer(dims, activation):
    """conv + bias + activation + 2x2 max-pool in one kernel equals the three layers one after the
    other, odd maps (13x11 -> 6x5, floor) included."""
    import cupy as cp

    from profconv.run.models import Layer
    from profconv.run.reference import apply
    from profconv.run.tuned import fused_layer

    s = ConvShape(*dims)
    rng = np.random.default_rng(sum(dims))
    x = rng.standard_normal((s.B, s.C, s.H, s.W)).astype(np.float32)
    w = rng.standard_normal((s.M, s.C, s.K, s.K)).astype(np.float32)
    b = rng.standard_normal(s.M).astype(np.float32)
    ref = conv2d(np, x, w, b, s.P)
    if activation != "none":
        ref = apply(np, Layer(activation, activation + "1"), ref, {})
    ref = apply(np, Layer("pool", "pool1", k=2), ref, {})
    out = cp.full((s.B, s.M, s.Ho // 2, s.Wo // 2), np.nan, dtype=cp.float32)
    y = cp.asnumpy(fused_layer(2, activation).launch(cp, cp.asarray(x), cp.asarray(w), cp.asarray(b), out, s))
    assert np.isfinite(y).all()
    assert np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref) < 1e-5
