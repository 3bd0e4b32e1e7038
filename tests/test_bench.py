"""profconv bench without a GPU: the record's derived numbers, the tables, the sweep spaces, the CLI."""

import json
from pathlib import Path

import pytest

from profconv import records
from profconv.records import BenchRecord, DeviceFacts, OpTime
from profconv.report.bench import to_markdown
from profconv.run import bench
from profconv.run.models import MODELS, ConvShape
from profconv.run.tuned import shared_candidates, tensorcore_candidates, tensorcore_sizes, tuned_candidates
from profconv.run.variants import VARIANTS

FIRST = "tests/data/bench/bench-h200-first.json"
F17 = ConvShape(10000, 50, 1, 28, 28, 5)


def record() -> BenchRecord:
    return records.read(Path(FIRST), BenchRecord)


def test_frame_has_every_layer_and_variant():
    df = bench.frame(record())
    assert len(df) == 6 * 12 and list(df.columns) == bench.COLUMNS
    tuned = df[(df.model == "ece408-high") & (df.variant == "tuned")].iloc[0]
    cudnn = df[(df.model == "ece408-high") & (df.variant == "cudnn")].iloc[0]
    assert tuned.median_s == pytest.approx(0.0005873599946498872)
    assert cudnn.median_s == pytest.approx(0.001398959994316101)
    assert tuned.ratio == pytest.approx(tuned.median_s / cudnn.median_s)
    assert tuned.bound == "memory" and tuned.floor_share == pytest.approx(tuned.floor_s / tuned.median_s)


def test_floor_uses_measured_bandwidth_and_the_variants_peak():
    bw = 4190506217254.9326
    t, bound = bench.floor(F17, 4, bw, 67e12)
    assert bound == "memory" and t == pytest.approx(F17.min_bytes / bw)
    t16, _ = bench.floor(F17, 2, bw, 989.4e12)
    assert t16 == pytest.approx(F17.min_bytes / 2 / bw)
    assert bench.floor(F17, 4, None, 67e12) == (None, None)  # no bandwidth: no floor, never a guess
    assert bench.floor(F17, 4, bw, None) == (None, None)


def test_derive_ratios_against_the_same_precision():
    def t(s: float) -> OpTime:
        return OpTime(median_s=s, min_s=s, max_s=s)

    results = [bench.BenchResult("tuned", "", "fp32", "fp32", "cudnn", 1e-5, op_time=t(1.0)),
               bench.BenchResult("cudnn", "", "fp32", "fp32", None, 1e-5, op_time=t(2.0)),
               bench.BenchResult("fp16", "", "fp16", "fp16", "cudnn-fp16", 1e-2, op_time=t(0.5)),
               bench.BenchResult("cudnn-fp16", "", "fp16", "tensor-fp16", None, 5e-3, status="failed")]
    bench._derive(results, F17, DeviceFacts(bandwidth_Bps=4e12, peaks={"fp32": 67e12, "fp16": 133.8e12}))
    assert results[0].ratio == 0.5 and results[1].ratio == 1.0  # the peer against the best peer: itself
    assert results[2].ratio is None  # its reference failed: no ratio rather than an invented one
    assert results[2].floor_s == pytest.approx(F17.min_bytes / 2 / 4e12)


def test_ratios_against_the_best_peer_of_the_precision_with_its_layout():
    def r(name, prec, arith, ref, t):
        return bench.BenchResult(name, "", prec, arith, ref, 1e-5, op_time=OpTime(median_s=t, min_s=t, max_s=t))

    # Spring 2018 conv2 on an H200, ms (../shared/findings/gpu-2026-11-26.md), as seconds
    results = [r("tuned", "fp32", "fp32", "cudnn", 0.9e-3), r("fp16", "fp16", "fp16", "cudnn-fp16", 0.33e-3),
               r("cudnn", "fp32", "fp32", None, 1.054e-3), r("cudnn-nhwc", "fp32", "fp32", None, 1.2e-3),
               r("cudnn-tf32", "tf32", "tensor-fp16", None, 2.017e-3),
               r("cudnn-tf32-nhwc", "tf32", "tensor-fp16", None, 0.95e-3),
               r("cudnn-fp16", "fp16", "tensor-fp16", None, 1.579e-3),
               r("cudnn-fp16-nhwc", "fp16", "tensor-fp16", None, 0.857e-3),
               r("cudnn-bf16-nhwc", "bf16", "tensor-fp16", None, 1.743e-3)]
    bench._derive(results, F17, DeviceFacts())
    tuned, fp16 = results[0], results[1]
    assert tuned.reference == "cudnn" and tuned.ratio == pytest.approx(0.9 / 1.054)
    assert tuned.peer_ratios["tf32"].peer == "cudnn-tf32-nhwc"
    assert tuned.peer_ratios["tf32"].ratio == pytest.approx(0.9 / 0.95)
    assert fp16.reference == "cudnn-fp16-nhwc" and fp16.ratio == pytest.approx(0.33 / 0.857)
    assert fp16.peer_ratios["bf16"].peer == "cudnn-bf16-nhwc"
    assert results[6].reference == "cudnn-fp16-nhwc" and results[6].ratio == pytest.approx(1.579 / 0.857)
    dims = records.Dims(B=10, M=16, C=6, H=30, W=30, K=5)
    rec = BenchRecord(argv=[], created="", environment=records.Environment(),
                      layers=[records.BenchLayer("ece408", "conv2", "s", dims, 10, 1.0, results=results)])
    df = bench.frame(rec)
    peers_df = bench.best_peers(df)
    assert peers_df[["precision", "peer", "layout"]].values.tolist() == [
        ["fp32", "cudnn", "NCHW"], ["tf32", "cudnn-tf32-nhwc", "NHWC"], ["fp16", "cudnn-fp16-nhwc", "NHWC"],
        ["bf16", "cudnn-bf16-nhwc", "NHWC"]]
    assert peers_df.others.iloc[0] == "NHWC 1.200 ms"
    best = bench.best_per_layer(df)
    assert best[["precision", "variant", "reference"]].values.tolist() == [
        ["fp32", "tuned", "cudnn"], ["fp16", "fp16", "cudnn-fp16-nhwc"]]
    # the bench report shows the best cuDNN of each precision with its layout and the other layout's time
    rec.settings.l2 = "warm"
    md = to_markdown(rec)
    assert "| ece408 | conv2 | fp16 | cudnn-fp16-nhwc | NHWC | 857 µs | — | NCHW 1.579 ms |" in md
    assert "| ece408 | conv2 | s | fp16 | fp16 | 330 µs | 0.385× | cudnn-fp16-nhwc | — |" in md
    assert "(warm L2 figure)" in md


def test_best_per_layer_meets_the_issue_targets_on_the_first_h200_run():
    best = bench.best_per_layer(bench.frame(record()))
    fp32 = best[best.precision == "fp32"]
    assert len(best) == 12 and set(fp32.variant) == {"tuned"}
    assert (fp32.ratio < 1.0).all()
    assert fp32[fp32.model == "ece408-high"].ratio.iloc[0] == pytest.approx(0.41985474712379134)
    assert (best[best.precision == "fp16"].ratio < 1.0).all()


def test_markdown_tables():
    md = to_markdown(record())
    assert md.startswith("# profconv bench — NVIDIA H200")
    assert "| ece408-high | conv1 | M=50 C=1 28x28 K=5 | fp32 | tuned | 587.4 µs | 0.42× | cudnn | 48.1% |" in md
    assert "## Best cuDNN per layer and precision" in md
    assert "| ece408-high | conv1 | fp32 | cudnn | NCHW | 1.399 ms | — |  |" in md
    assert "| cudnn-fp16 | fp16 | 1.309 ms | 1.298 ms | — | — | 10.8% | memory | 2.9e-04 | ok |" in md
    assert "4.19 TB/s" in md and md.count("\n## ") == 9  # setting, best per layer, best cuDNN, six layers


def test_report_and_compare_read_bench_records(cli, tmp_path):
    r = cli("report", FIRST, "--markdown", str(tmp_path / "b.md"))
    assert r.returncode == 0, r.stderr
    assert "## profconv bench — NVIDIA H200" in (tmp_path / "b.md").read_text()
    slower = json.loads(Path(FIRST).read_text())
    for layer in slower["layers"]:
        for res in layer["results"]:
            if res["variant"] == "tuned" and res["op_time"]:
                res["op_time"]["median_s"] *= 1.5
                res["op_time"]["samples_s"] = [t * 1.5 for t in res["op_time"]["samples_s"]]
    (tmp_path / "slower.json").write_text(json.dumps(slower))
    r = cli("report", "--compare", FIRST, str(tmp_path / "slower.json"), "--fail-on-regression",
            "--markdown", str(tmp_path / "c.md"))
    assert r.returncode == 6 and "6 regression(s)" in r.stdout  # its own exit code
    assert "| cifar10 | conv1 | M=16 C=3 32x32 K=5 pad 2 | tuned | " in (tmp_path / "c.md").read_text()


@pytest.mark.nogpu
def test_bench_cli_errors_are_one_line(cli):
    r = cli("bench")
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "needs a CUDA GPU" in r.stderr
    r = cli("bench", "--sets", "0")
    assert r.returncode == 2 and "at least 1" in r.stderr
    r = cli("bench", "--variant", "cpu")
    assert r.returncode == 2 and "GPU variants" in r.stderr
    r = cli("bench", "--model", "nope")
    assert r.returncode == 2 and "unknown model 'nope'" in r.stderr and "or course (ece408-high" in r.stderr
    r = cli("bench", "--model", "course", "--layer", "ece408-fa20/conv2")  # the set expands: its layers are known
    assert r.returncode == 3 and "needs a CUDA GPU" in r.stderr


def test_default_and_course_models():
    from profconv.session.bench import COURSE_MODELS, DEFAULT_MODELS, expand_models

    assert expand_models(["course"]) == COURSE_MODELS == ["ece408-high", "ece408", "ece408-fa18", "ece408-sp19",
                                                          "ece408-fa19", "ece408-fa20"]
    assert DEFAULT_MODELS == [*COURSE_MODELS, "cifar10"]
    assert expand_models(["ece408-fa20", "course", "cifar10"]) == ["ece408-fa20", "ece408-high", "ece408",
                                                                  "ece408-fa18", "ece408-sp19", "ece408-fa19", "cifar10"]


def test_variant_references():
    ref = {v.name: v.reference for v in VARIANTS}
    assert ref["tuned"] == ref["naive"] == "cudnn"
    assert ref["fp16"] == ref["tensorcore"] == "cudnn-fp16"
    assert ref["streams"] == "e2e" and ref["e2e"] is None and ref["cudnn"] is None
    assert ref["tensorcore-tf32"] == ref["tf32-wmma"] == "cudnn-tf32" and ref["tensorcore-3xtf32"] == "cudnn"
    arith = {v.name: v.arithmetic for v in VARIANTS}
    assert arith["tensorcore-tf32"] == arith["cudnn-tf32"] == "tensor-tf32" and arith["tensorcore-3xtf32"] == "tensor-3xtf32"


def test_tf32_floors_use_the_tf32_rate():
    """H200: TF32 494.7 TFLOP/s, 3xTF32 a third of it; fa19 conv2 (121.1 GFLOP) is TF32 memory-bound at
    4.2 TB/s (1.33 GB: 0.317 ms against 0.245 ms of TF32 compute) and 3xTF32 compute-bound (0.734 ms)."""
    from profconv.hardware import PEAKS

    s = MODELS["ece408-fa19"].conv_shapes(10000)[1][1]
    peak = PEAKS["H200"]
    assert peak.tflops("tensor-3xtf32") == pytest.approx(494.7 / 3)
    tf32, bound = bench.floor(s, 4, 4.2e12, peak.tflops("tensor-tf32") * 1e12)
    assert bound == "memory" and tf32 == pytest.approx(s.min_bytes / 4.2e12)
    three, bound = bench.floor(s, 4, 4.2e12, peak.tflops("tensor-3xtf32") * 1e12)
    assert bound == "compute" and three == pytest.approx(0.734e-3, rel=1e-3)
    assert PEAKS["V100"].tflops("tensor-tf32") is None  # no TF32 on Volta: no floor, never a guess


def test_tf32_and_row_run_layouts_match_the_kernels():
    """tensorcore_tf32.cu: C = 1 K = 5 runs of 5 floats padded to 8 per filter row (5 steps of 8);
    C = 4 K = 7 tap-major, 4 channels a tap, pixel stride 4 (49 taps x 4 = 196 -> 200: 25 steps);
    C = 16 pixel stride 20 (16 is 0 mod 8: bank conflicts). tensorcore.cu RUNS: C = 4 K = 7 runs of 28
    halves padded to 32 per filter row: 7 x 32 / 16 = 14 steps instead of 25."""
    from profconv.run.tuned import tf32_candidates, tf32_sizes

    s18c1, fa20c2 = MODELS["ece408"].conv_shapes(10000)[0][1], MODELS["ece408-fa20"].conv_shapes(10000)[1][1]
    c2 = MODELS["cifar10"].conv_shapes(10000)[1][1]
    assert tf32_sizes(s18c1, 0, 2, 4, 1)["KSTEPS"] == 5 and tf32_sizes(s18c1, 0, 2, 4, 1)["CS"] == 1
    one = tf32_sizes(fa20c2, 1, 2, 4, 1)
    assert one["KSTEPS"] == 25 and one["CS"] == 4
    assert one["smem"] == 4 * (25 * 2 * 64 + 40 * (40 * 4 + 8) + 8)
    assert tf32_sizes(fa20c2, 1, 2, 4, 1, async_=1, split=3)["smem"] == 4 * (25 * 2 * 128 + 2 * 40 * (40 * 4 + 8) + 8)
    assert tf32_sizes(c2, 1, 2, 4, 1)["CS"] == 20
    assert {c["RED"] for c in tf32_candidates(fa20c2)} == {1} and {c["RED"] for c in tf32_candidates(s18c1)} == {0}
    assert tensorcore_sizes(fa20c2, 2, 4, 1, runs=1)["KSTEPS"] == 14 and tensorcore_sizes(fa20c2, 2, 4, 1)["KSTEPS"] == 25
    for model in MODELS.values():
        for _, s in model.conv_shapes(10000):
            for c in tf32_candidates(s) + tf32_candidates(s, split=3):
                assert c["smem"] <= 200 * 1024 and c["WARPS"] in (4, 8) and c["RT"] in (1, 2, 4)


@pytest.mark.parametrize("model", ["ece408-high", "ece408", "cifar10", "ece408-fa20"])
def test_sweep_spaces_fit_the_hardware(model):
    """Every candidate fits a block (<= 1,024 threads, whole warps) and 200 KB of shared memory,
    and the sweeps stay small enough to compile in seconds."""
    for _, s in MODELS[model].conv_shapes(10000):
        tuned = tuned_candidates(s)
        assert 1 <= len(tuned) <= 36  # Fall 2017: 28 constant-filter (4 persistent) + shared-filter
        designs = {c["design"] for c in tuned}
        assert ("constant-filters" in designs) == (s.C == 1) and designs <= {"constant-filters", "shared-filters"}
        for c in tuned + shared_candidates(s, (2, 4, 8), elem=2):
            assert c["THREADS"] <= 1024 and c["THREADS"] % 32 == 0 and c["smem"] <= 200 * 1024
        for c in tensorcore_candidates(s):
            assert c["CP"] % 8 == 0 and c["CP"] >= s.C and c["smem"] <= 200 * 1024


def test_tensorcore_shared_memory_matches_the_kernel_layout():
    # Spring 2018 conv2: C=6 -> 8 channels, 25 taps x 4 pairs / 8 = 13 steps, 2 column tiles,
    # 30x30x8 halves of image, 4 warps x 16 channels x (32 + 8) halves of staging
    s = ConvShape(10000, 16, 6, 30, 30, 5)
    sizes = tensorcore_sizes(s, rt=2, warps=4, imgs=1)
    assert sizes == {"CP": 8, "KSTEPS": 13, "tiles_per_image": 22,
                     "smem": 13 * 2 * 32 * 8 + 30 * 30 * 8 * 2 + 4 * 16 * 40 * 2}
    # unfolded: 6 channels x 5 column shifts = 30 -> 32 staged channels, 5 row taps x 32 / 16 = 10 steps
    unfolded = tensorcore_sizes(s, rt=2, warps=4, imgs=1, unfold=1)
    assert unfolded["CP"] == 32 and unfolded["KSTEPS"] == 10
    assert tensorcore_sizes(F17, 1, 4, 1, unfold=1)["KSTEPS"] == 3  # C = 1: 13 steps -> 3


def test_fused_ops_follow_the_model_specs():
    assert [layer.name for layer in bench.fused_ops(MODELS["ece408-high"], "conv1")] == ["tanh1", "pool1"]
    assert [layer.name for layer in bench.fused_ops(MODELS["cifar10"], "conv3")] == ["relu3", "pool3"]
    assert bench.fused_ops(MODELS["ece408"], "conv2") is None  # conv2 feeds the fully connected layer


def test_fused_layer_rows_in_frame_and_markdown():
    doc = json.loads(Path(FIRST).read_text())
    layer = doc["layers"][0]
    layer["fused_ops"] = "conv1 + tanh1 + pool1 2x2"
    sep = {"variant": "separate", "technique": "", "arithmetic": "fp32", "tolerance": 1e-5, "precision": "fp32",
           "reference": None, "status": "ok", "rel_error": 1e-7, "op_time": {"median_s": 0.002, "min_s": 0.002,
           "max_s": 0.002}, "floor_s": 0.0004, "bound": "memory", "floor_share": 0.2}
    fused = dict(sep, variant="fused-layer", reference="separate", ratio=0.25, floor_share=0.8,
                 op_time={"median_s": 0.0005, "min_s": 0.0005, "max_s": 0.0005})
    layer["fused"] = [sep, fused]
    rec = records.convert(doc, BenchRecord, "test")
    df = bench.frame(rec)
    rows = df[df.op == "conv1 + tanh1 + pool1 2x2"]
    assert list(rows.variant) == ["separate", "fused-layer"] and rows.ratio.iloc[1] == 0.25
    assert len(df[df.op == "conv"]) == 72 and len(bench.best_per_layer(df)) == 12  # fused rows are not conv rows
    md = to_markdown(rec)
    assert "Fused layer — conv1 + tanh1 + pool1 2x2" in md
    assert "| fused-layer | fp32 | 500 µs | 500 µs | 0.25× | separate | 80.0% | memory | 1.0e-07 | ok |" in md


def test_markdown_shows_the_interval_and_both_l2_states_when_recorded():
    doc = json.loads(Path(FIRST).read_text())
    res = doc["layers"][0]["results"][0]  # naive on ece408-high conv1
    t = res["op_time"]
    res["op_time"] = dict(t, ci_rel=0.004)
    res["op_time_cold"] = dict(t)
    res["op_time_warm"] = dict(t, median_s=t["median_s"] * 0.5)
    md = to_markdown(records.convert(doc, BenchRecord, "test"))
    section = md.split("## ece408-high conv1")[1].split("\n## ")[0]
    assert "| variant | precision | Op Time | min | ± (95%) | cold L2 | warm L2 | ratio |" in section
    assert "| naive | fp32 | 7.273 ms | " in section and " | 0.4% | 7.273 ms | 3.637 ms | " in section
    assert "## ece408 conv1" in md and "± (95%)" not in md.split("## ece408 conv1")[1]  # only where recorded


@pytest.mark.nogpu
def test_bench_layer_option_names_a_conv_layer(cli):
    r = cli("bench", "--model", "ece408", "--layer", "ece408/conv9")
    assert r.returncode == 2
    assert "--layer ece408/conv9: not a conv layer of ece408 (one of ece408/conv1, ece408/conv2)" in r.stderr
    r = cli("bench", "--model", "ece408-high,ece408", "--layer", "ece408/conv2")
    assert r.returncode == 3 and "needs a CUDA GPU" in r.stderr  # accepted; this machine has no GPU


def test_peer_check_shows_beside_the_best_cudnn_and_warns_when_a_loop_beats_the_peer():
    """A cuDNN peer's plain-loop check (issue 25): its loop time, verdict and kernels in the peers table;
    a peer that a plain loop of its own call beats by more than its interval is named as flattering."""
    doc = json.loads(Path(FIRST).read_text())
    peer = next(r for r in doc["layers"][0]["results"] if r["variant"] == "cudnn")
    peer["peer_check"] = {"plain_loop_s": peer["op_time"]["median_s"] * 0.9, "calls": 20, "rounds": 7,
                          "faster_by": 0.1, "allowed": 0.01, "ok": False, "kernels": ["implicit_convolve_sgemm<…>"]}
    fp16 = next(r for r in doc["layers"][0]["results"] if r["variant"] == "cudnn-fp16")
    fp16["peer_check"] = {"plain_loop_s": fp16["op_time"]["median_s"], "calls": 20, "rounds": 7, "faster_by": 0.0,
                          "allowed": 0.01, "ok": True, "kernels": []}
    rec = records.convert(doc, BenchRecord, "test")
    table = bench.best_peers(bench.frame(rec), bench.peer_checks(rec))
    first = table[(table.model == "ece408-high") & (table.precision == "fp32")].iloc[0]
    assert first["check"] == "loop 10.0% faster" and first["kernels"] == "implicit_convolve_sgemm<…>"
    assert first["plain_loop_s"] == pytest.approx(peer["op_time"]["median_s"] * 0.9)
    assert table[(table.model == "ece408-high") & (table.precision == "fp16")].iloc[0]["check"] == "ok"
    md = to_markdown(rec)
    assert "| plain loop | loop check |" in md and "1 peer(s) slower than a plain loop of the same call" in md
