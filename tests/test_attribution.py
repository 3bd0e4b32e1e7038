"""CUPTI attribution of a user kernel's process: every kernel and copy placed in prolog / timed call /
epilog / elsewhere, streams counted, library kernels named; then the optimisations and the verdict.
Synthetic records here; tests/data/attribution/*.json.gz are real ones (H100, scripts/capture_activity.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profconv.judge.optimisations import from_launches, placements
from profconv.profile.activity import ApiCall, GpuActivity, Range, Records
from profconv.profile.attribution import attribute_calls, library_of, phase_of

DATA = Path(__file__).parent / "data" / "attribution"


class Trace:
    """Records of one process written the way CUPTI reports them: NVTX ranges pushed one part per
    level (as gpu.nvtx_range does), a launch API call on thread 1 and its GPU work by correlation id."""

    def __init__(self) -> None:
        self.api: list[ApiCall] = []
        self.gpu: list[GpuActivity] = []
        self.ranges: list[Range] = []
        self.t = 1_000
        self.corr = 0

    def range(self, path: str, body) -> None:
        start = self.t
        self.t += 10
        body()
        self.t += 10
        for depth, part in enumerate(path.split("/")):
            self.ranges.append(Range(part, "profconv", start - 4 + depth, self.t + 4 - depth, 1))  # outer: wider
        self.t += 10

    def launch(self, name: str, kind: str = "kernel", stream: int = 7, dur: int = 100, runs_past: int = 0) -> None:
        self.corr += 1
        self.api.append(ApiCall("cudaLaunchKernel" if kind == "kernel" else "cudaMemcpy", self.t, self.t + 5, self.corr,
                                1, "runtime"))
        self.gpu.append(GpuActivity(name, self.t + 2, self.t + 2 + dur + runs_past, self.corr, stream, kind))
        self.t += 5 + (0 if runs_past else dur)

    def records(self) -> Records:
        return Records(self.api, self.gpu, self.ranges)


def course_call(tr: Trace, op: str, prolog=(), timed=(), epilog=(), check: bool = False) -> None:
    base = f"{op}/check" if check else op
    tr.range(f"{base}/prolog", lambda: [tr.launch(*a) for a in prolog])
    tr.range(base if not check else f"{base}/conv_forward_gpu", lambda: [tr.launch(*a) for a in timed])
    tr.range(f"{base}/epilog", lambda: [tr.launch(*a) for a in epilog])


COPY_IN = (("[CUDA memcpy HtoD]", "memcpy"), ("[CUDA memcpy HtoD]", "memcpy"))
COPY_OUT = (("[CUDA memcpy DtoH]", "memcpy"),)
KERNEL = ("_Z19conv_forward_kernelPfPKfS1_iiiiii",)


def test_phase_of_range_paths():
    assert phase_of("m/k/conv1") == ("timed", "m/k/conv1", False)
    assert phase_of("m/k/conv1/prolog") == ("prolog", "m/k/conv1", False)
    assert phase_of("m/k/conv1/check/conv_forward_gpu") == ("timed", "m/k/conv1", True)
    assert phase_of("m/k/conv1/check/epilog") == ("epilog", "m/k/conv1", True)
    assert phase_of("m/reference") == ("elsewhere", None, False)
    assert phase_of("m/k/forward/conv1") == ("elsewhere", None, False)
    assert phase_of("m/k/conv1/check") == ("elsewhere", None, False)


@pytest.mark.parametrize("name,lib", [
    ("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x16_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "cuBLAS"),
    ("ampere_sgemm_128x64_nn", "cuBLAS"), ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>",
                                           "cuBLAS"),
    ("void cudnn::cnn::conv2d_grouped_direct_kernel<float>", "cuDNN"), ("sm90_xmma_fprop_implicit_gemm_f32f32", "cuDNN"),
    ("conv_forward_kernel", None), ("matrixMultiplyShared", None), ("gemm_wmma_tf32", None),
])
def test_library_kernels_by_name(name, lib):
    assert library_of(name) == lib


def test_an_honest_call_has_its_kernel_in_the_timed_call():
    tr = Trace()
    tr.range("m/reference", lambda: tr.launch("reference_conv"))
    course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=(KERNEL,), epilog=COPY_OUT, check=True)
    for _ in range(3):
        course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=(KERNEL,), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    timed, prolog, epilog = att.phase("timed"), att.phase("prolog"), att.phase("epilog")
    assert (timed.calls, timed.kernel_launches, timed.streams, timed.copies) == (3, 1, 1, 0)
    assert timed.kernels == {"conv_forward_kernel": 3}
    assert (prolog.kernel_launches, prolog.copies, epilog.copies) == (0, 2, 1)
    assert att.phase("check-timed").kernels == {"conv_forward_kernel": 1}
    assert att.phase("elsewhere").kernels == {"reference_conv": 1}
    assert timed.left_running_ns == 0.0
    ps = placements(att)
    assert [(p.phase, p.kernel_launches, p.copies) for p in ps] == [("prolog", 0, 2), ("timed", 1, 0), ("epilog", 0, 1)]
    assert from_launches(att, []) == []  # one kernel, not a tiled GEMM (no SASS): a direct convolution


def test_work_in_the_prolog_is_the_prologs_even_while_the_timed_call_runs():
    tr = Trace()
    for _ in range(2):
        course_call(tr, "m/k/conv1", prolog=(*COPY_IN, (KERNEL[0], "kernel", 7, 100, 5_000)), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    assert att.phase("prolog").kernel_launches == 1 and att.phase("prolog").kernels == {"conv_forward_kernel": 2}
    assert att.phase("timed").kernel_launches == 0 and att.phase("timed").calls == 2
    assert att.phase("prolog").left_running_ns > 0


def test_a_side_stream_left_running_and_four_streams():
    tr = Trace()
    course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=((KERNEL[0], "kernel", 13, 100, 2_000),), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    assert att.phase("timed").left_running_ns == 2_085  # 2,100 ns from its start, the range ending 15 ns after it
    tr4 = Trace()
    course_call(tr4, "m/k/conv1", timed=tuple((KERNEL[0], "kernel", s) for s in (13, 14, 15, 16)))
    att4 = attribute_calls(tr4.records())
    assert (att4.phase("timed").streams, att4.phase("timed").kernel_launches) == (4, 4)
    assert [o.name for o in from_launches(att4, [])] == ["streams"]
    assert from_launches(att4, [])[0].evidence == "4 streams in the timed call (conv_forward_gpu)"


def test_unroll_then_cublas_is_unroll_matmul_and_names_the_library():
    gemm = "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x16_cublas"
    tr = Trace()
    course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=(("_Z13unroll_kernelPfPKfiiiii",), (gemm,)), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    assert att.phase("timed").library == {gemm: "cuBLAS"}
    names = [(o.name, o.evidence) for o in from_launches(att, [])]
    assert names == [("library-cublas", gemm), ("unroll+matmul", f"2 kernels per conv: unroll_kernel, {gemm}")]
    assert placements(att)[1].library == [f"cuBLAS: {gemm}"]


# -- real activity: tests/data/attribution/src/*.cu called as the course's program calls them (prolog,
# conv_forward_gpu, device sync, epilog; 4 calls per layer of ece408-fa20 at 100 images) under profconv's
# CUPTI collector on an H200 (scripts/capture_activity.py, window 2 of 2026-11-28)

def captured(name: str) -> Records:
    import gzip
    import json

    return Records.from_dict(json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes())))


def phases(name: str) -> dict[str, tuple[int, int, int, dict[str, int]]]:
    """phase -> (kernel launches per call, copies per call, streams, kernels)."""
    att = attribute_calls(captured(name))
    return {p: (w.kernel_launches, w.copies, w.streams, w.kernels) for p, w in att.phases.items()}


def test_real_honest_and_cheating_calls_are_placed_in_their_phases():
    k = {"conv_forward_kernel": 8}
    assert phases("honest") == {"prolog": (0, 2, 1, {}), "timed": (1, 0, 1, k), "epilog": (0, 1, 1, {})}
    assert phases("prolog_work") == {"prolog": (1, 2, 1, k), "timed": (0, 0, 0, {}), "epilog": (0, 1, 1, {})}
    assert phases("half_prolog") == {"prolog": (1, 2, 1, k), "timed": (1, 0, 1, k), "epilog": (0, 1, 1, {})}
    assert phases("epilog_work") == {"prolog": (0, 2, 1, {}), "timed": (0, 0, 0, {}), "epilog": (1, 1, 1, k)}
    assert phases("streams4")["timed"] == (4, 0, 4, {"conv_forward_kernel": 32})
    assert phases("side_stream")["timed"] == (1, 0, 1, k)  # one stream, not the default one: still one
    assert attribute_calls(captured("honest")).phase("timed").calls == 8  # 2 layers x 4 calls


def test_real_cublas_and_cudnn_kernels_are_named():
    att = attribute_calls(captured("cublas_gemm"))
    assert att.phase("timed").library == {"gemmSN_NN_kernel": "cuBLAS"}
    assert [(o.name, o.evidence) for o in from_launches(att, [])] == [
        ("library-cublas", "gemmSN_NN_kernel"), ("unroll+matmul", "2 kernels per conv: unroll_kernel, gemmSN_NN_kernel")]
    lib = attribute_calls(captured("library"))  # PyTorch's conv2d (cuDNN) and a matmul (cuBLAS)
    names = lib.phase("timed").library
    assert sorted(set(names.values())) == ["cuBLAS", "cuDNN"]
    assert names["cudnn::engines_precompiled::nchwToNhwcKernel"] == "cuDNN"
    assert all(lib_name == ("cuDNN" if "cudnn" in k else "cuBLAS") for k, lib_name in names.items())
    assert "distribution_elementwise_grid_stride_kernel" in next(iter(lib.phase("elsewhere").kernels))


def test_real_activity_judged_by_spring_2025():
    from profconv import judge
    from profconv.judge.assemble import apply
    from tests.test_judge_apply import result

    def verdict(name: str):
        res = apply(result(), judge.load("sp25"), records=captured(name))
        assert res.verdict is not None
        return res.verdict.status, res.verdict.rule.id if res.verdict.rule else None, res.verdict.reason

    assert verdict("honest") == ("ok", None, None)
    assert verdict("prolog_work") == ("failed", "sp25.work-in-timed-call",
                                      "1 kernel launch(es) in the prolog: conv_forward_kernel")
    assert verdict("half_prolog") == ("failed", "sp25.work-in-timed-call",
                                      "1 kernel launch(es) in the prolog: conv_forward_kernel")
    assert verdict("epilog_work") == ("failed", "sp25.work-in-timed-call",
                                      "1 kernel launch(es) in the epilog: conv_forward_kernel")
    assert verdict("streams4") == ("failed", "sp25.single-stream", "4 streams in conv_forward_gpu")
    assert verdict("cublas_gemm") == ("ok", None, None)  # cuBLAS counts in the final file (not for req_1)


def test_real_side_streams_against_the_default_stream_of_the_copies():
    from profconv.judge.optimisations import default_streams

    def side(name: str) -> int | None:
        return next(p.side_streams for p in placements(attribute_calls(captured(name))) if p.phase == "timed")

    assert default_streams(attribute_calls(captured("honest"))) == frozenset({7})
    assert (side("honest"), side("side_stream"), side("streams4"), side("prolog_work")) == (0, 1, 4, 0)


def test_a_kernel_only_in_the_first_calls_prolog_is_prolog_work():
    """A file that launches in the prolog once (a static flag: the course pass, the first call) and never again."""
    tr = Trace()
    course_call(tr, "m/k/conv1", prolog=(*COPY_IN, KERNEL), timed=(KERNEL,), epilog=COPY_OUT, check=True)
    for _ in range(3):
        course_call(tr, "m/k/conv1", prolog=COPY_IN, timed=(KERNEL,), epilog=COPY_OUT)
    att = attribute_calls(tr.records())
    assert att.phase("prolog").kernel_launches == 0 and att.phase("check-prolog").kernel_launches == 1
    prolog = placements(att)[0]
    assert (prolog.phase, prolog.kernel_launches, prolog.kernels) == ("prolog", 1, ["conv_forward_kernel"])


def test_nvtx_first_call_without_a_tool_is_remembered(monkeypatch):
    """NVTX binds to a tool at the first NVTX call of a process: a later CUPTI session there sees no ranges,
    and `run --profile cupti` says so instead of writing empty profiles."""
    pytest.importorskip("nvtx")
    from profconv.run import gpu

    monkeypatch.setattr(gpu, "_NVTX_FIRST_CALL", {})
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)
    assert not gpu.nvtx_started_without_tool()
    with gpu.nvtx_range("m/v/conv1"):
        pass
    assert gpu.nvtx_started_without_tool()
    monkeypatch.setenv("NVTX_INJECTION64_PATH", "/usr/lib/libcupti.so")  # too late: the first call decided
    assert gpu.nvtx_started_without_tool()
    monkeypatch.setattr(gpu, "_NVTX_FIRST_CALL", {})
    with gpu.nvtx_range("m/v/conv1"):
        pass
    assert not gpu.nvtx_started_without_tool()
