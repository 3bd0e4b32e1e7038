"""The legacy CUDA command-line profiler (CUDA 2.x-4.x, before nvprof): `COMPUTE_PROFILE=1` (or
`CUDA_PROFILE=1`) writes `cuda_profile_N.log`, one line per GPU method:

    # CUDA_PROFILE_LOG_VERSION 2.0
    # CUDA_DEVICE 0 Tesla C2070
    method,gputime,cputime,occupancy
    method=[ memcpyHtoD ] gputime=[ 23987.137 ] cputime=[ 24118.000 ]
    method=[ sincos_15_gpu ] gputime=[ 3552.064 ] cputime=[ 12.000 ] occupancy=[ 0.667 ]

or, with `COMPUTE_PROFILE_CSV=1`, the same as comma-separated rows under the `method,gputime,...`
header. gputime is in microseconds (the profiler's documented unit); cputime is host overhead and
is not a GPU time. Every line is one event (a gpu-trace row, start unknown unless the log carries
`gpustarttimestamp`, which is not a time in ns and is not used); the `gpu` summary sums the events
per method name. Lines pasted into notes may carry a line number before `method=`.
"""

from __future__ import annotations

import re

from profconv.parse import grouping, units
from profconv.parse.dialect import Dialect
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row

TOOL = "cudaprof"

# the header's '# ' may be gone (profconv reads '#' as a comment prefix on pasted lines)
_VERSION = re.compile(r"^\s*(?:#\s*)?CUDA_PROFILE_LOG_VERSION\s+\S+")
_DEVICE = re.compile(r"^\s*(?:#\s*)?CUDA_DEVICE\s+\d+\s+(.+?)\s*$")
_EVENT = re.compile(r"^\s*(?:\d+\s+)?method=\[\s*(?P<name>[^\]]*?)\s*\]\s+gputime=\[\s*(?P<gpu>[^\]]*?)\s*\]")
_CSV_HEADER = re.compile(r"^\s*method,gputime(?:,\w+)*\s*$")
_COMMENT = re.compile(r"^\s*#|^\s*(?:CUDA_CONTEXT|CUDA_PROFILE_CSV|TIMESTAMPFACTOR)\s")


def detect(doc: Document) -> bool:
    t = doc.text
    return "gputime" in t and ("method=[" in t or "CUDA_PROFILE_LOG_VERSION" in t)


def _us(text: str) -> float:
    """A time in microseconds as the profiler prints it (printf '%.3f': never digit groups), so a
    comma in it is a decimal one ('1,312' from a de_DE run is 1.312 us, not 1312)."""
    t = text.strip()
    if "," in t and "." not in t and t.count(",") == 1:
        t = t.replace(",", ".")
    try:
        return units.scaled(units.number(t), 1e3)
    except ValueError:
        return float("nan")


def parse(doc: Document) -> DialectResult:
    result = DialectResult()
    events: list[grouping.Event] = []
    devices: list[str | None] = []
    trace: list[Row] = []
    csv_cols: list[str] | None = None
    device: str | None = None
    started = False

    def flush() -> None:
        nonlocal trace
        if trace:
            events.append(grouping.Event("block", trace[0].line_start, block=Block(
                section="gpu-trace", rows=trace, line_start=trace[0].line_start, line_end=trace[-1].line_end)))
            events.append(grouping.Event("block", trace[0].line_start, block=Block(
                section="gpu", rows=_summary(trace), line_start=trace[0].line_start, line_end=trace[-1].line_end)))
            devices.append(device)
        trace = []

    for lineno, raw in doc.numbered():
        line = raw.rstrip("\r\n")
        if _VERSION.match(line):  # a new log
            flush()
            events.append(grouping.Event("start", lineno))
            started, device, csv_cols = True, None, None
            result.claimed.add(lineno)
            continue
        if m := _DEVICE.match(line):
            device = m.group(1)
            result.claimed.add(lineno)
            continue
        if _CSV_HEADER.match(line):
            csv_cols = [c.strip() for c in line.split(",")]
            result.claimed.add(lineno)
            continue
        if _COMMENT.match(line):
            if started:
                result.claimed.add(lineno)
            continue
        m = _EVENT.match(line)
        if m is None and csv_cols is not None and "," in line:
            cells = [c.strip() for c in line.split(",")]
            if len(cells) == len(csv_cols) and cells[0] and not cells[0][0].isdigit():
                gpu = _us(cells[1])
                if gpu == gpu:
                    trace.append(Row(section="gpu-trace", name=cells[0], line_start=lineno, line_end=lineno,
                                     total_ns=gpu, calls=1))
                    result.claimed.add(lineno)
                    continue
                result.unplaced.append(lineno)
                continue
        if m is not None:
            gpu = _us(m.group("gpu"))
            if gpu != gpu:  # 'gputime=[ nan ]' or damaged: reported, never a row
                result.unplaced.append(lineno)
                continue
            if not started and not trace:  # pasted lines without the log's header
                events.append(grouping.Event("start", lineno))
            trace.append(Row(section="gpu-trace", name=m.group("name"), line_start=lineno, line_end=lineno,
                             total_ns=gpu, calls=1))
            result.claimed.add(lineno)
            continue
        if trace and line.strip():
            flush()  # prose or another tool's output ends a run of events
            started = False
    flush()
    result.profiles = grouping.group(events, TOOL)
    for prof, dev in zip(result.profiles, devices):
        prof.device = dev
    return result


def _summary(trace: list[Row]) -> list[Row]:
    """Per method name, in order of first appearance: calls, total, avg, min and max of gputime."""
    by: dict[str, list[Row]] = {}
    for r in trace:
        by.setdefault(r.name, []).append(r)
    out = []
    for name, rows in by.items():
        times = [r.total_ns for r in rows]
        out.append(Row(section="gpu", name=name, line_start=rows[0].line_start, line_end=rows[-1].line_end,
                       total_ns=sum(times), calls=len(times), avg_ns=sum(times) / len(times),
                       min_ns=min(times), max_ns=max(times)))
    return out


DIALECT = Dialect(
    name="cudaprof", title="the CUDA command-line profiler", product="CUDA profiler", tool=TOOL,
    markers=("gputime",),
    sections=("gpu", "gpu-trace"),
    detect=detect, parse=parse,
)
