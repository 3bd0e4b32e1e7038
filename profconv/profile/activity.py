"""CUPTI activity records as plain typed records, attributed to NVTX ranges and turned into
the canonical rows of `profconv parse`. Pure: no CUPTI import here, so it is tested anywhere."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from profconv.parse.names import short_name
from profconv.parse.schema import conform


class ApiCall(NamedTuple):
    name: str  # cudaLaunchKernel, cuLaunchKernel, ...
    start: int  # ns, CUPTI timestamps
    end: int
    correlation_id: int
    thread_id: int
    layer: str  # runtime | driver


class GpuActivity(NamedTuple):
    name: str  # kernel name, or nvprof's "[CUDA memcpy HtoD]" / "[CUDA memset]"
    start: int
    end: int
    correlation_id: int
    stream_id: int
    kind: str  # kernel | memcpy | memset
    bytes: int = 0


class Range(NamedTuple):
    name: str  # e.g. ece408-high/fused/conv1
    domain: str
    start: int
    end: int
    thread_id: int


MEMCPY_NAMES = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
                9: "HtoH", 10: "PtoP"}


def memcpy_name(copy_kind: int) -> str:
    return f"[CUDA memcpy {MEMCPY_NAMES.get(copy_kind, 'Unknown')}]"


ROLES = ("timed", "tune", "check", "forward", "reference", "bench", "untagged")
"""What a profconv NVTX range holds (`role_of`):
- timed: the op whose Op Time is reported ('model/variant/layer');
- tune: a swept kernel's candidate search or cuDNN's algorithm search ('…/tune' anywhere in the path);
- check: the correctness call against the float64 reference ('model/variant/layer/check');
- forward: the whole net with the variant's conv, for Correctness ('model/variant/forward/layer');
- reference: profconv's own float64 reference pass ('model/reference');
- bench: `profconv bench`'s timed calls ('bench/…');
- untagged: outside any profconv range (set-up, the error norms of the check)."""


def role_of(range_name: str | None) -> str:
    if not range_name:
        return "untagged"
    parts = range_name.split("/")
    if parts[0] == "bench":
        return "bench"
    if "tune" in parts:
        return "tune"
    if "check" in parts:
        return "check"
    if len(parts) >= 2 and parts[1] == "reference":
        return "reference"
    if len(parts) >= 3 and parts[2] == "forward":
        return "forward"
    return "timed" if len(parts) == 3 else "untagged"


def variant_of(range_name: str) -> str | None:
    """'ece408-high/fused/conv1' -> 'fused' (the middle part of profconv's range names)."""
    parts = range_name.split("/")
    if len(parts) >= 2 and parts[1] == "reference":
        return None
    return parts[1] if len(parts) >= 3 else None


def op_of(range_name: str) -> str | None:
    """The timed op a range belongs to: 'ece408-high/tuned/conv1/check/tune' -> 'ece408-high/tuned/conv1'."""
    parts = range_name.split("/")
    if len(parts) < 3 or role_of(range_name) in ("bench", "reference", "forward", "untagged"):
        return None
    return "/".join(parts[:3])


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
    api_r, gpu_r = attribute_instances(ranges, api, gpu, domain)
    return {i: r.name for i, r in api_r.items()}, {i: r.name for i, r in gpu_r.items()}


def attribute_instances(ranges: list[Range], api: list[ApiCall], gpu: list[GpuActivity], domain: str = "profconv"
                        ) -> tuple[dict[int, Range], dict[int, Range]]:
    """As `attribute`, but the range instance (path name, start, end) rather than its name."""
    by_thread: dict[int, list[Range]] = {}
    for r in nested_paths([r for r in ranges if r.domain == domain]):
        by_thread.setdefault(r.thread_id, []).append(r)
    starts: dict[int, list[int]] = {}
    for t, rs in by_thread.items():
        rs.sort(key=lambda r: r.start)
        starts[t] = [r.start for r in rs]
    api_range: dict[int, Range] = {}
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
            api_range[i] = best
    by_corr = {api[i].correlation_id: r for i, r in api_range.items()}
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


def label_of(range_name: str | None) -> str:
    """The profile an activity belongs to under --all: the variant for its timed op ('tuned'), the
    variant and role for the rest ('tuned:tune', 'tuned:check', 'tuned:forward'), 'profconv:reference'
    for the reference pass, 'profconv:bench' and 'profconv:untagged'."""
    role = role_of(range_name)
    v = variant_of(range_name) if range_name else None
    if role == "timed" and v:
        return v
    if v and role in ("tune", "check", "forward"):
        return f"{v}:{role}"
    return f"profconv:{role}"


def profiles(api: list[ApiCall], gpu: list[GpuActivity], ranges: list[Range], everything: bool = False
             ) -> tuple[pd.DataFrame, list[str]]:
    """Canonical rows, one profile per variant holding only its timed op's kernels and API calls (the
    sweep, the check, the forward pass and profconv's reference are left out).

    With `everything`, each variant's other ranges follow as their own labelled profiles
    ('tuned:tune', 'tuned:check', 'tuned:forward'), then 'profconv:reference', 'profconv:bench' and
    'profconv:untagged' (activity outside profconv's ranges). Returns the frame and the profile labels
    (index 0 is profile 1).
    """
    api_range, gpu_range = attribute(ranges, api, gpu)
    api_label = {i: label_of(api_range.get(i)) for i in range(len(api))}
    gpu_label = {i: label_of(gpu_range.get(i)) for i in range(len(gpu))}
    seen: list[str] = []
    for i in sorted(api_label):
        if api_label[i] not in seen:
            seen.append(api_label[i])
    for i in sorted(gpu_label):
        if gpu_label[i] not in seen:
            seen.append(gpu_label[i])
    variants = [x for x in seen if ":" not in x]
    labels = list(variants)
    if everything:
        for v in variants:
            labels += [f"{v}:{role}" for role in ("tune", "check", "forward") if f"{v}:{role}" in seen]
        labels += [x for x in seen if ":" in x and x.split(":")[0] not in variants and x not in labels]
        labels += sorted([x for x in seen if x.startswith("profconv:") and x not in labels],
                         key=lambda x: ROLES.index(x.split(":")[1]))
        labels = list(dict.fromkeys(labels))
    parts = []
    for number, label in enumerate(labels, start=1):
        g_idx = [i for i, lab in gpu_label.items() if lab == label]
        a_idx = [i for i, lab in api_label.items() if lab == label]
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


@dataclass(frozen=True)
class OpCalls:
    """The GPU work of one timed op (model/variant/layer) over its calls, from CUPTI records."""

    op: str
    calls: int  # range instances (warm-up and timed repeats)
    launches: int  # GPU activities (kernels, copies, memsets) per call, median
    busy_ns: float  # sum of the GPU activities' durations per call, median over calls
    span_ns: float  # first start to last end on the GPU per call, median over calls
    kernels: int = 0  # kernel launches per call (copies and memsets not counted), median
    kernel_busy_ns: float = 0.0  # sum of the kernels' durations alone per call, median (what ncu times)


def timed_ops(api: list[ApiCall], gpu: list[GpuActivity], ranges: list[Range]) -> list[OpCalls]:
    """Per timed op: its calls' GPU busy time and span (CUPTI's view of what Op Time measured)."""
    import statistics

    _, gpu_r = attribute_instances(ranges, api, gpu)
    per_instance: dict[tuple[str, int, int], list[GpuActivity]] = {}
    for i, r in gpu_r.items():
        if role_of(r.name) == "timed":
            per_instance.setdefault((r.name, r.start, r.thread_id), []).append(gpu[i])
    calls: dict[str, list[list[GpuActivity]]] = {}
    for (name, _, _), acts in sorted(per_instance.items(), key=lambda kv: kv[0][1]):
        calls.setdefault(name, []).append(acts)
    out = []
    for name, insts in calls.items():
        out.append(OpCalls(
            op=name, calls=len(insts),
            launches=int(statistics.median(len(a) for a in insts)),
            busy_ns=float(statistics.median(sum(g.end - g.start for g in a) for a in insts)),
            span_ns=float(statistics.median(max(g.end for g in a) - min(g.start for g in a) for a in insts)),
            kernels=int(statistics.median(sum(g.kind == "kernel" for g in a) for a in insts)),
            kernel_busy_ns=float(statistics.median(sum(g.end - g.start for g in a if g.kind == "kernel")
                                                   for a in insts)),
        ))
    return out


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


@dataclass(frozen=True)
class Records:
    """One process's CUPTI activity: API calls, GPU work and NVTX ranges (a user kernel's child process
    collects its own and hands them to `profconv run`, which profiles them with its own)."""

    api: list[ApiCall]
    gpu: list[GpuActivity]
    ranges: list[Range]

    def to_dict(self) -> dict:
        """Each record as the list of its fields (a NamedTuple is written as one by `json`): 800,000 records
        in 0.2 s where `dataclasses.astuple` took 11.6 s on the 2-core VM -- a grade child's whole tail."""
        return {"api": self.api, "gpu": self.gpu, "ranges": self.ranges}

    @classmethod
    def from_dict(cls, d: dict) -> Records:
        """The dict `to_dict` wrote (a malformed one raises ValueError)."""
        try:
            return cls(list(map(ApiCall._make, d["api"])), list(map(GpuActivity._make, d["gpu"])),
                       list(map(Range._make, d["ranges"])))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a CUPTI records file: {exc}") from None


def merge(base: Records, others: list[Records]) -> Records:
    """Records of several processes as one. Correlation ids are per process: each other process's are
    moved past those already taken. Thread ids (CUPTI's) may repeat across processes: each other
    process's threads get fresh ids, so ranges are only matched with API calls of their own process.
    CUPTI timestamps are one clock on one machine and stay as they are."""
    api, gpu, ranges = list(base.api), list(base.gpu), list(base.ranges)
    for o in others:
        offset = max([a.correlation_id for a in api] + [g.correlation_id for g in gpu] + [0]) + 1
        taken = max([a.thread_id for a in api] + [r.thread_id for r in ranges] + [0]) + 1
        tids = {t: taken + k for k, t in enumerate(sorted({a.thread_id for a in o.api} | {r.thread_id for r in o.ranges}))}
        api += [ApiCall(a.name, a.start, a.end, a.correlation_id + offset, tids[a.thread_id], a.layer) for a in o.api]
        gpu += [GpuActivity(g.name, g.start, g.end, g.correlation_id + offset, g.stream_id, g.kind, g.bytes)
                for g in o.gpu]
        ranges += [Range(r.name, r.domain, r.start, r.end, tids[r.thread_id]) for r in o.ranges]
    return Records(api, gpu, ranges)
