"""CUPTI activity records as plain typed records, attributed to NVTX ranges and turned into
the canonical rows of `profconv parse`. Pure: no CUPTI import here, so it is tested anywhere."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import pandas as pd

from profconv.parse.names import short_name
from profconv.parse.schema import conform


@dataclass(frozen=True)
class ApiCall:
    name: str  # cudaLaunchKernel, cuLaunchKernel, ...
    start: int  # ns, CUPTI timestamps
    end: int
    correlation_id: int
    thread_id: int
    layer: str  # runtime | driver


@dataclass(frozen=True)
class GpuActivity:
    name: str  # kernel name, or nvprof's "[CUDA memcpy HtoD]" / "[CUDA memset]"
    start: int
    end: int
    correlation_id: int
    stream_id: int
    kind: str  # kernel | memcpy | memset
    bytes: int = 0


@dataclass(frozen=True)
class Range:
    name: str  # e.g. ece408-high/fused/conv1
    domain: str
    start: int
    end: int
    thread_id: int


MEMCPY_NAMES = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
                9: "HtoH", 10: "PtoP"}


def memcpy_name(copy_kind: int) -> str:
    return f"[CUDA memcpy {MEMCPY_NAMES.get(copy_kind, 'Unknown')}]"


def variant_of(range_name: str) -> str | None:
    """'ece408-high/fused/conv1' -> 'fused' (the middle part of profconv's range names)."""
    parts = range_name.split("/")
    return parts[1] if len(parts) >= 3 else None


def nested_paths(ranges: list[Range]) -> list[Range]:
    """Push/pop ranges renamed to their stack path: 'conv1' inside 'fused' inside 'ece408-high'
    becomes 'ece408-high/fused/conv1' (profconv pushes one range per part of the path)."""
    out = []
    by_thread: dict[int, list[Range]] = {}
    for r in ranges:
        by_thread.setdefault(r.thread_id, []).append(r)
    for rs in by_thread.values():
        rs.sort(key=lambda r: (r.start, -r.end))
        stack: list[Range] = []
        for r in rs:
            while stack and not (stack[-1].start <= r.start and r.end <= stack[-1].end):
                stack.pop()
            path = "/".join([s.name for s in stack] + [r.name])
            stack.append(r)
            out.append(Range(path, r.domain, r.start, r.end, r.thread_id))
    return out


def attribute(ranges: list[Range], api: list[ApiCall], gpu: list[GpuActivity], domain: str = "profconv"
              ) -> tuple[dict[int, str], dict[int, str]]:
    """Range name per API call (innermost `domain` range on its thread containing its start) and per
    GPU activity (the range of the API call with the same correlation id)."""
    by_thread: dict[int, list[Range]] = {}
    for r in nested_paths([r for r in ranges if r.domain == domain]):
        by_thread.setdefault(r.thread_id, []).append(r)
    starts: dict[int, list[int]] = {}
    for t, rs in by_thread.items():
        rs.sort(key=lambda r: r.start)
        starts[t] = [r.start for r in rs]
    api_range: dict[int, str] = {}
    for i, call in enumerate(api):
        rs = by_thread.get(call.thread_id, [])
        if not rs:
            continue
        k = bisect.bisect_right(starts[call.thread_id], call.start) - 1
        best = None
        while k >= 0:  # innermost: the latest-starting range that still contains the call
            r = rs[k]
            if r.start <= call.start <= r.end:
                best = r
                break
            k -= 1
        if best is not None:
            api_range[i] = best.name
    by_corr = {api[i].correlation_id: name for i, name in api_range.items()}
    gpu_range = {i: by_corr[g.correlation_id] for i, g in enumerate(gpu) if g.correlation_id in by_corr}
    return api_range, gpu_range


def _summary(names: list[str], durations: list[int], section: str) -> pd.DataFrame:
    if not names:
        return pd.DataFrame()
    df = pd.DataFrame({"name": names, "d": durations})
    g = df.groupby("name", sort=False)["d"]
    out = pd.DataFrame({"total_ns": g.sum().astype(float), "calls": g.count(), "avg_ns": g.mean(),
                        "min_ns": g.min().astype(float), "max_ns": g.max().astype(float)}).reset_index()
    out = out.sort_values(["total_ns", "name"], ascending=[False, True], kind="stable")
    total = out["total_ns"].sum()
    # the share as nvprof prints it (two decimals), so the written log reads back to the same rows
    out["time_pct"] = (100.0 * out["total_ns"] / total).round(2) if total > 0 else 0.0
    out["avg_ns"] = out["avg_ns"].round(3)
    out["section"] = section
    return out


def profiles(api: list[ApiCall], gpu: list[GpuActivity], ranges: list[Range]) -> tuple[pd.DataFrame, list[str]]:
    """Canonical rows: profile 1 is the whole run, then one profile per variant (in first-seen order).

    Returns the frame and the profile labels (index 0 is profile 1).
    """
    api_range, gpu_range = attribute(ranges, api, gpu)
    labels = ["all"]
    for name in [api_range[i] for i in sorted(api_range)]:
        v = variant_of(name)
        if v and v not in labels:
            labels.append(v)
    parts = []
    for number, label in enumerate(labels, start=1):
        g_idx: list[int]
        a_idx: list[int]
        if label == "all":
            g_idx, a_idx = list(range(len(gpu))), list(range(len(api)))
        else:
            g_idx = [i for i, n in gpu_range.items() if variant_of(n) == label]
            a_idx = [i for i, n in api_range.items() if variant_of(n) == label]
        for section, names, durs in (
            ("gpu", [gpu[i].name for i in g_idx], [gpu[i].end - gpu[i].start for i in g_idx]),
            ("api", [api[i].name for i in a_idx], [api[i].end - api[i].start for i in a_idx]),
        ):
            s = _summary(names, durs, section)
            if not s.empty:
                parts.append(s.assign(profile=number, tool="cupti"))
    if not parts:
        return conform(pd.DataFrame()), labels
    frame = conform(pd.concat(parts, ignore_index=True))
    frame["short_name"] = frame["name"].map(lambda n: short_name(str(n))).astype("string")
    return frame, labels


def chrome_trace(api: list[ApiCall], gpu: list[GpuActivity], ranges: list[Range], pid: int) -> dict:
    """Chrome-trace / Perfetto JSON: API calls and NVTX ranges on their threads, GPU work on its streams."""
    events: list[dict] = []
    t0 = min([a.start for a in api] + [g.start for g in gpu] + [r.start for r in ranges] or [0])
    for r in ranges:
        events.append({"name": r.name, "cat": f"nvtx:{r.domain}", "ph": "X", "pid": pid, "tid": r.thread_id,
                       "ts": (r.start - t0) / 1e3, "dur": (r.end - r.start) / 1e3})
    for a in api:
        events.append({"name": a.name, "cat": f"cuda-{a.layer}", "ph": "X", "pid": pid, "tid": a.thread_id,
                       "ts": (a.start - t0) / 1e3, "dur": (a.end - a.start) / 1e3,
                       "args": {"correlation_id": a.correlation_id}})
    for g in gpu:
        events.append({"name": g.name, "cat": g.kind, "ph": "X", "pid": f"GPU {pid}", "tid": f"stream {g.stream_id}",
                       "ts": (g.start - t0) / 1e3, "dur": (g.end - g.start) / 1e3,
                       "args": {"correlation_id": g.correlation_id, "bytes": g.bytes}})
    return {"traceEvents": events, "displayTimeUnit": "ns"}
