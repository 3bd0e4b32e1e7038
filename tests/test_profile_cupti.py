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
    assert labels == ["all", "naive", "fused"]
    naive = frame[(frame.profile == 2) & (frame.section == "gpu")].iloc[0]
    assert naive["name"] == "conv_forward" and naive["calls"] == 2 and naive["total_ns"] == 4000.0
    assert naive["min_ns"] == 2000.0 and naive["time_pct"] == 100.0
    allgpu = frame[(frame.profile == 1) & (frame.section == "gpu")]
    assert allgpu["name"].tolist() == ["conv_forward", "void conv<16>(float const*)", "[CUDA memcpy HtoD]"]
    assert allgpu["time_pct"].tolist() == [74.07, 18.52, 7.41]
    api = frame[(frame.profile == 3) & (frame.section == "api")]
    assert api["name"].tolist() == ["cudaDeviceSynchronize", "cuLaunchKernel"]


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
