"""CUPTI records -> canonical rows, nvprof-style log round trip, attribution to NVTX ranges, timeline."""

import json

import pandas as pd
import pytest

import profconv
from profconv.profile.activity import ApiCall, GpuActivity, Range, attribute, chrome_trace, memcpy_name, profiles
from profconv.profile.nvprof_writer import write


def _records():
    ranges = [Range("ece408-high/naive/conv1", "profconv", 1000, 5000, 7),
              Range("ece408-high/fused/conv1", "profconv", 6000, 9000, 7),
              Range("outer-not-ours", "other", 0, 20000, 7)]
    api = [ApiCall("cudaMemcpyAsync", 100, 400, 1, 7, "runtime"),
           ApiCall("cuLaunchKernel", 1100, 1300, 2, 7, "driver"),
           ApiCall("cuLaunchKernel", 2100, 2250, 3, 7, "driver"),
           ApiCall("cuLaunchKernel", 6100, 6200, 4, 7, "driver"),
           ApiCall("cudaDeviceSynchronize", 6300, 8800, 5, 7, "runtime")]
    gpu = [GpuActivity(memcpy_name(1), 500, 900, 1, 7, "memcpy", 4096),
           GpuActivity("conv_forward", 1400, 3400, 2, 7, "kernel"),
           GpuActivity("conv_forward", 3500, 5500, 3, 7, "kernel"),
           GpuActivity("void conv<16>(float const*)", 6400, 7400, 4, 7, "kernel")]
    return api, gpu, ranges


def test_nested_ranges_become_paths():
    from profconv.profile.activity import nested_paths

    rs = [Range("ece408", "profconv", 0, 100, 1), Range("fused", "profconv", 10, 90, 1),
          Range("conv1", "profconv", 20, 40, 1), Range("conv2", "profconv", 50, 80, 1),
          Range("check", "profconv", 55, 60, 1), Range("ece408", "profconv", 200, 300, 2)]
    assert [r.name for r in nested_paths(rs)] == ["ece408", "ece408/fused", "ece408/fused/conv1",
                                                  "ece408/fused/conv2", "ece408/fused/conv2/check", "ece408"]


def test_attribution_by_range_and_correlation():
    api, gpu, ranges = _records()
    api_range, gpu_range = attribute(ranges, api, gpu)
    assert api_range == {1: "ece408-high/naive/conv1", 2: "ece408-high/naive/conv1",
                         3: "ece408-high/fused/conv1", 4: "ece408-high/fused/conv1"}
    # the second naive kernel ran after its range closed: attributed through its launch's correlation id
    assert gpu_range == {1: "ece408-high/naive/conv1", 2: "ece408-high/naive/conv1", 3: "ece408-high/fused/conv1"}


def test_profiles_per_variant():
    frame, labels = profiles(*_records())
    assert labels == ["naive", "fused"]  # the memcpy outside every profconv range is nobody's timed op
    naive = frame[(frame.profile == 1) & (frame.section == "gpu")].iloc[0]
    assert naive["name"] == "conv_forward" and naive["calls"] == 2 and naive["total_ns"] == 4000.0
    assert naive["min_ns"] == 2000.0 and naive["time_pct"] == 100.0
    api = frame[(frame.profile == 2) & (frame.section == "api")]
    assert api["name"].tolist() == ["cudaDeviceSynchronize", "cuLaunchKernel"]
    frame, labels = profiles(*_records(), everything=True)
    assert labels == ["naive", "fused", "profconv:untagged"]
    untagged = frame[(frame.profile == 3) & (frame.section == "gpu")]
    assert untagged["name"].tolist() == ["[CUDA memcpy HtoD]"]


def _tuned_run():
    """What `profconv run --variant tuned,cudnn --repeat 2` records, in miniature: profconv's reference
    pass, a check call whose first launch sweeps 3 candidates ('…/check/tune'), two timed calls, the
    forward pass; cuDNN's algorithm search inside its check; an untagged norm of the error."""
    R = Range
    ranges = [R("m", "profconv", 0, 100, 1), R("reference", "profconv", 1, 99, 1),
              R("m", "profconv", 200, 405, 1), R("tuned", "profconv", 201, 404, 1), R("conv1", "profconv", 202, 403, 1),
              R("check", "profconv", 203, 402, 1), R("tune", "profconv", 204, 350, 1),
              R("m", "profconv", 510, 600, 1), R("tuned", "profconv", 511, 599, 1), R("conv1", "profconv", 512, 598, 1),
              R("m", "profconv", 610, 700, 1), R("tuned", "profconv", 611, 699, 1), R("conv1", "profconv", 612, 698, 1),
              R("m", "profconv", 710, 800, 1), R("tuned", "profconv", 711, 799, 1), R("forward", "profconv", 712, 798, 1),
              R("conv1", "profconv", 713, 797, 1),
              R("m", "profconv", 1100, 1305, 1), R("cudnn", "profconv", 1101, 1304, 1), R("conv1", "profconv", 1102, 1303, 1),
              R("check", "profconv", 1103, 1300, 1), R("tune", "profconv", 1104, 1290, 1),
              R("m", "profconv", 1310, 1400, 1), R("cudnn", "profconv", 1311, 1399, 1), R("conv1", "profconv", 1312, 1398, 1)]
    api, gpu = [], []

    def launch(t, name, dur, corr):
        api.append(ApiCall("cuLaunchKernel", t, t + 2, corr, 1, "driver"))
        gpu.append(GpuActivity(name, t + 3, t + 3 + dur, corr, 7, "kernel"))

    launch(10, "reference_conv", 50, 1)
    for k, t in enumerate((210, 240, 270)):  # the sweep's candidates
        launch(t, "conv_tuned", 20 + 10 * k, 10 + k)
    launch(360, "conv_tuned", 20, 20)  # the check's own call of the chosen kernel
    launch(520, "conv_tuned", 20, 21)  # timed call 1
    launch(620, "conv_tuned", 22, 22)  # timed call 2
    launch(720, "conv_tuned", 21, 23)  # forward pass
    launch(720 + 30, "tanh", 5, 24)
    api.append(ApiCall("cudaMemcpy", 450, 460, 25, 1, "runtime"))  # the error norm's copy, outside the ranges
    gpu.append(GpuActivity("[CUDA memcpy DtoH]", 452, 458, 25, 7, "memcpy", 4))
    launch(1110, "fft2d_r2c", 40, 30)  # cuDNN's algorithm search
    launch(1160, "implicit_convolve_sgemm", 60, 31)
    launch(1320, "implicit_convolve_sgemm", 30, 32)  # the timed cuDNN call
    return api, gpu, ranges


def test_roles_of_profconv_ranges():
    from profconv.profile.activity import label_of, op_of, role_of

    assert [role_of(n) for n in ("m/tuned/conv1", "m/tuned/conv1/check", "m/tuned/conv1/check/tune",
                                 "m/tuned/forward/conv1", "m/reference", "bench/m/conv1/tuned", None)] == [
        "timed", "check", "tune", "forward", "reference", "bench", "untagged"]
    assert op_of("m/tuned/conv1/check/tune") == "m/tuned/conv1" and op_of("m/tuned/forward/conv1") is None
    assert label_of("m/tuned/conv1/check/tune") == "tuned:tune" and label_of("m/reference") == "profconv:reference"


def test_per_variant_tables_hold_only_the_timed_op():
    frame, labels = profiles(*_tuned_run())
    assert labels == ["tuned", "cudnn"]
    tuned = frame[(frame.profile == 1) & (frame.section == "gpu")]
    # two timed calls: not the 3 sweep candidates, the check call, the forward pass or the reference
    assert tuned[["name", "calls", "total_ns", "max_ns"]].values.tolist() == [["conv_tuned", 2, 42.0, 22.0]]
    cudnn = frame[(frame.profile == 2) & (frame.section == "gpu")]
    assert cudnn["name"].tolist() == ["implicit_convolve_sgemm"] and cudnn["calls"].tolist() == [1]
    api = frame[(frame.profile == 1) & (frame.section == "api")]
    assert api["calls"].tolist() == [2]


def test_all_shows_everything_labelled():
    frame, labels = profiles(*_tuned_run(), everything=True)
    assert labels == ["tuned", "cudnn", "tuned:tune", "tuned:check", "tuned:forward", "cudnn:tune",
                      "profconv:reference", "profconv:untagged"]
    def gpu_rows(label):
        n = labels.index(label) + 1
        return frame[(frame.profile == n) & (frame.section == "gpu")][["name", "calls"]].values.tolist()
    assert gpu_rows("tuned:tune") == [["conv_tuned", 3]]
    assert gpu_rows("tuned:check") == [["conv_tuned", 1]]
    assert sorted(gpu_rows("tuned:forward")) == [["conv_tuned", 1], ["tanh", 1]]
    assert sorted(gpu_rows("cudnn:tune")) == [["fft2d_r2c", 1], ["implicit_convolve_sgemm", 1]]
    assert gpu_rows("profconv:reference") == [["reference_conv", 1]]
    assert gpu_rows("profconv:untagged") == [["[CUDA memcpy DtoH]", 1]]
    # nothing is dropped: every GPU activity is in exactly one profile
    assert int(frame[frame.section == "gpu"]["calls"].sum()) == len(_tuned_run()[1])


def test_timed_ops_per_call():
    from profconv.profile.activity import timed_ops

    ops = {o.op: o for o in timed_ops(*_tuned_run())}
    assert set(ops) == {"m/tuned/conv1", "m/cudnn/conv1"}
    t = ops["m/tuned/conv1"]
    assert (t.calls, t.launches, t.busy_ns, t.span_ns) == (2, 1, 21.0, 21.0)
    assert (t.kernels, t.kernel_busy_ns) == (1, 21.0)


def test_timed_ops_count_kernels_apart_from_copies():
    """An op that copies as well as computes (e2e, streams): ncu times its kernels only, so CUPTI's
    kernel-only figure per call is kept next to the whole busy time."""
    from profconv.profile.activity import ApiCall, GpuActivity, Range, timed_ops

    ranges, api, gpu = [], [], []
    for call, t0 in enumerate((0, 1000)):
        ranges += [Range("m", "profconv", t0, t0 + 900, 1), Range("streams", "profconv", t0 + 1, t0 + 899, 1),
                   Range("conv1", "profconv", t0 + 2, t0 + 898, 1)]
        for k, (kind, name, d) in enumerate((("memcpy", "[CUDA memcpy HtoD]", 100), ("kernel", "conv_tuned", 40),
                                             ("kernel", "conv_tuned", 42), ("memcpy", "[CUDA memcpy DtoH]", 300))):
            cid = 10 * call + k
            api.append(ApiCall("cuLaunchKernel" if kind == "kernel" else "cudaMemcpyAsync", t0 + 10 + k, t0 + 11 + k,
                               cid, 1, "driver"))
            gpu.append(GpuActivity(name, t0 + 20 + 200 * k, t0 + 20 + 200 * k + d, cid, 7, kind))
    (op,) = timed_ops(api, gpu, ranges)
    assert (op.op, op.calls, op.launches, op.busy_ns, op.kernels, op.kernel_busy_ns) == (
        "m/streams/conv1", 2, 4, 482.0, 2, 82.0)


def test_nvprof_log_round_trip():
    frame, labels = profiles(*_records())
    for number in range(1, len(labels) + 1):
        rows = frame[frame.profile == number].reset_index(drop=True)
        text = write(rows, 4242, f"profconv run --model ece408-high ({labels[number - 1]})")
        back = profconv.parse_text(text)
        assert len(back.profiles) == 1 and back.profiles[0].pid == 4242
        cols = ["section", "name", "time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns"]
        pd.testing.assert_frame_equal(back.frame[cols].reset_index(drop=True), rows[cols], check_dtype=False)


def test_chrome_trace():
    trace = chrome_trace(*_records(), pid=4242)
    ev = trace["traceEvents"]
    assert len(ev) == 3 + 5 + 4
    k = next(e for e in ev if e["name"] == "void conv<16>(float const*)")
    assert k["ts"] == pytest.approx(6.4) and k["dur"] == pytest.approx(1.0) and k["tid"] == "stream 7"
    json.dumps(trace)
