"""The CUPTI collector's activity kinds (a stand-in cupti module: no GPU here): API calls throughout, or only
inside the windows a user kernel's calls open (`api_windows`), the GPU activity and ranges always."""

from __future__ import annotations

import gc
import sys
import types

import pytest

NAMES = {"rt": {1: "cudaGetDevice_v3020", 2: "cudaLaunchKernel_v7000", 3: "cudaMemcpyAsync_v3020",
                4: "cudaMalloc_v3020", 5: "cudaMemsetAsync_v3020", 6: "cudaGetLastError_v3020"},
         "drv": {1: "cuCtxGetCurrent", 2: "cuLaunchKernel", 3: "cuMemcpyHtoDAsync_v2", 4: "cuGraphLaunch",
                 5: "cuKernelGetName", 6: "INVALID"}}


@pytest.fixture
def fake_cupti(monkeypatch):
    log: list[tuple[str, str]] = []
    kinds = types.SimpleNamespace(CONCURRENT_KERNEL="kernel", RUNTIME="runtime", DRIVER="driver", MEMCPY="memcpy",
                                  MEMSET="memset", MARKER="marker")
    cupti = types.SimpleNamespace(
        ActivityKind=kinds,
        activity_register_callbacks=lambda request, done: log.append(("buffer", str(request()[0]))),
        activity_enable=lambda k: log.append(("on", k)),
        activity_disable=lambda k: log.append(("off", k)),
        activity_flush_all=lambda forced: log.append(("flush", "") if gc.isenabled() else ("flush", "gc off")),
        CallbackDomain=types.SimpleNamespace(RUNTIME_API="rt", DRIVER_API="drv"),
        get_callback_name=lambda domain, cbid: NAMES[domain][cbid],
        activity_enable_runtime_api=lambda cbid, on: log.append(("rt-api", f"{NAMES['rt'][cbid]}={on}")),
        activity_enable_driver_api=lambda cbid, on: log.append(("drv-api", f"{NAMES['drv'][cbid]}={on}")),
    )
    monkeypatch.setitem(sys.modules, "cupti", types.SimpleNamespace(cupti=cupti))
    return log


def test_api_calls_only_inside_the_windows(fake_cupti):
    from profconv.profile.cupti_collector import CuptiCollector

    log = fake_cupti
    with CuptiCollector(api_windows=True) as c:
        assert {k for on, k in log if on == "on"} == {"kernel", "memcpy", "memset", "marker"}
        log.clear()
        c.api_window(True)
        assert log == [("on", "runtime"), ("on", "driver")]
        c.api_window(False)
        assert log[2:] == [("off", "runtime"), ("off", "driver")]
        log.clear()
    assert log[0] == ("flush", "gc off") and gc.isenabled()  # the flush's records made without collections
    assert {k for on, k in log[1:]} == {"kernel", "memcpy", "memset", "marker", "runtime", "driver"}


def test_api_calls_throughout_by_default(fake_cupti):
    from profconv.profile.cupti_collector import CuptiCollector

    with CuptiCollector():
        assert {k for on, k in fake_cupti if on == "on"} == {"kernel", "memcpy", "memset", "marker", "runtime", "driver"}


def test_work_apis_records_only_the_calls_that_launch_gpu_work(fake_cupti):
    """grade's children: API records throughout, each other call switched off once (no window per call)."""
    from profconv.profile.cupti_collector import CuptiCollector

    with CuptiCollector(work_apis=True):
        on = {k for on, k in fake_cupti if on == "on"}
        off = sorted(v for what, v in fake_cupti if what.endswith("-api"))
    assert on == {"kernel", "memcpy", "memset", "marker", "runtime", "driver"}
    assert off == ["cuCtxGetCurrent=0", "cuKernelGetName=0", "cudaGetDevice_v3020=0", "cudaGetLastError_v3020=0",
                   "cudaMalloc_v3020=0"]


def test_a_kernels_child_reads_its_records_at_the_flush_from_one_large_buffer(fake_cupti):
    from profconv.profile.cupti_collector import CuptiCollector

    with CuptiCollector():
        pass
    with CuptiCollector(work_apis=True, buffer_bytes=CuptiCollector.CHILD_BUFFER_BYTES):
        pass
    assert [int(b) for k, b in fake_cupti if k == "buffer"] == [8 << 20, 256 << 20]
