"""Numbers you can defend, on the GPU: profiles of the timed op, profilers against Op Time, ratios
that do not depend on the bench's company, cuDNN peers in every layout."""

import json
import types

import numpy as np
import pytest

from profconv.run.models import MODELS, ConvShape

pytestmark = pytest.mark.gpu


def _cli(*args):
    from typer.testing import CliRunner

    from profconv.cli import app

    return CliRunner().invoke(app, list(args))


def _cli_process(*args):
    """`python -m profconv ARGS` in a process of its own: NVTX binds to CUPTI at the first NVTX call of a process,
    and this test process made its first long before (the other GPU tests' runs), as a user's notebook would."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "profconv", *args], capture_output=True, text=True, timeout=600)
    return types.SimpleNamespace(exit_code=r.returncode, output=r.stdout + r.stderr)


def test_cupti_profile_holds_only_the_timed_op(tmp_path):
    from profconv.run.variants import cudnn_unavailable

    if cudnn_unavailable():
        pytest.skip("needs PyTorch with CUDA")
    pytest.importorskip("cupti")
    r = _cli_process("run", "--model", "ece408-high", "--images", "1000", "--variant", "tuned,cudnn", "--repeat", "3",
                     "--warmup", "1", "--profile", "cupti", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    rec = json.loads((tmp_path / "run.json").read_text())
    prof = rec["profile"]
    assert prof.get("profiles") == ["tuned", "cudnn"] and prof["scope"] == "timed", prof.get("records")
    rows = __import__("pandas").read_csv(tmp_path / "profile-rows.csv")
    ops = {o["op"]: o for o in prof["ops"]}
    for number, v in ((1, "tuned"), (2, "cudnn")):
        op = ops[f"ece408-high/{v}/conv1"]
        conv = next(c for res in rec["results"] if res["variant"] == v for c in res["conv"] if c["layer"] == "conv1")
        assert op["calls"] == 1 + len(conv["op_time"]["samples_s"])  # warm-up + timed repeats, nothing else
        gpu = rows[(rows.profile == number) & (rows.section == "gpu")]
        assert int(gpu["calls"].sum()) == op["calls"] * op["launches"]  # no sweep candidate, no check call
    assert rec["profile"]["agreement"]
    assert rec["provenance"]["gpu"]["start"].get("sm_clock_mhz") is not None


def test_all_shows_the_sweep_labelled(tmp_path):
    pytest.importorskip("cupti")
    r = _cli_process("run", "--model", "ece408-high", "--images", "500", "--variant", "tuned", "--repeat", "2",
                     "--profile", "cupti", "--all", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    prof = json.loads((tmp_path / "run.json").read_text())["profile"]
    assert prof["profiles"][0] == "tuned" and "tuned:tune" in prof["profiles"] and "tuned:check" in prof["profiles"]
    assert "profconv:reference" in prof["profiles"] and (tmp_path / "profile-tuned-tune.log").exists()


@pytest.mark.parametrize("name", ["cudnn-nhwc", "cudnn-tf32", "cudnn-fp16-nhwc", "cudnn-bf16-nhwc"])
def test_peers_convert_before_timing(name):
    import cupy as cp
    import torch

    from profconv.run import peers
    from profconv.run.reference import conv2d
    from profconv.run.runner import prepare
    from profconv.run.variants import VARIANTS, cudnn_unavailable

    if cudnn_unavailable():
        pytest.skip("needs PyTorch with CUDA")
    v = next(v for v in VARIANTS if v.name == name)
    s = ConvShape(8, 16, 6, 30, 30, 5, 0)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((s.B, s.C, s.H, s.W)).astype(np.float32)
    w = rng.standard_normal((s.M, s.C, s.K, s.K)).astype(np.float32)
    xt, wt, bt, out = prepare(cp, v, cp.asarray(x), cp.asarray(w), None, s)
    if name.endswith("nhwc"):
        assert xt.is_contiguous(memory_format=torch.channels_last) and wt.is_contiguous(memory_format=torch.channels_last)
    y = cp.asnumpy(peers.to_cupy(cp, v.launch(cp, xt, wt, bt, out, s))).astype(np.float64)
    ref = conv2d(np, x, w, None, 0)
    assert np.linalg.norm(y - ref) / np.linalg.norm(ref) < v.tolerance


def test_ratio_does_not_depend_on_the_company():
    """The issue's check: tuned/cuDNN on Spring 2018 conv2 (M16 C6 30x30 K5, 10,000 images) within 3%
    whether the bench runs every GPU variant or only the two (the headline: warm, the default)."""
    import cupy as cp

    from profconv.records import DeviceFacts
    from profconv.run import bench
    from profconv.run import weights as weights_mod
    from profconv.run.variants import VARIANTS, cudnn_unavailable

    if cudnn_unavailable():
        pytest.skip("needs PyTorch with CUDA")
    model = MODELS["ece408"]
    params = weights_mod.load(model, None)
    opts = bench.BenchOptions(images=10000, sets=3, repeat=10, warmup=2, budget_s=6.0)
    every = [v for v in VARIANTS if v.device != "cpu"]
    two = [v for v in every if v.name in ("tuned", "cudnn")]
    ratios = {}
    for label, chosen in (("all", every), ("two", two)):
        layers = bench.bench_model(cp, model, params, chosen, opts, DeviceFacts(), {}, lambda m: None, fuse=False)
        conv2 = next(layer for layer in layers if layer.layer == "conv2")
        tuned = next(r for r in conv2.results if r.variant == "tuned")
        assert tuned.reference == "cudnn" or tuned.reference == "cudnn-nhwc"
        ratios[label] = tuned.op_time.median_s / next(
            r for r in conv2.results if r.variant == "cudnn").op_time.median_s
    assert ratios["all"] == pytest.approx(ratios["two"], rel=0.03), ratios


def test_every_peer_is_checked_against_a_plain_loop():
    """Issue 25: each cuDNN peer carries the plain PyTorch loop of its own call (same tensors, same
    process) and the kernels it ran; on a layer with bias (the bias-add pass is in both) the loop is
    not meaningfully faster than the peer's warm figure."""
    import cupy as cp

    from profconv.records import DeviceFacts
    from profconv.run import bench
    from profconv.run import weights as weights_mod
    from profconv.run.variants import cudnn_unavailable, get_variants

    if cudnn_unavailable():
        pytest.skip("needs PyTorch with CUDA")
    model = MODELS["cifar10"]
    opts = bench.BenchOptions(images=2000, sets=2, repeat=5, warmup=2, budget_s=2.0, layers=("cifar10/conv3",))
    chosen = get_variants(["tensorcore-3xtf32", "cudnn", "cudnn-tf32-nhwc"])
    (layer,) = [la for la in bench.bench_model(cp, model, weights_mod.load(model, None), chosen, opts, DeviceFacts(),
                                                {}, lambda m: None, fuse=False) if la.results]
    checks = {r.variant: r.peer_check for r in layer.results}
    assert checks["tensorcore-3xtf32"] is None
    for name in ("cudnn", "cudnn-tf32-nhwc"):
        c = checks[name]
        assert c is not None and c.plain_loop_s > 0 and c.calls == bench.PLAIN_CALLS and c.kernels, (name, c)
        assert c.faster_by < 0.10, (name, c)
