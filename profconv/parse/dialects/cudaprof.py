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

from profconv.parse import engine, grouping, units
from profconv.parse.dialect import Dialect
from profconv.parse.engine import CLAIMED, UNPLACED, Cursor, Verdict
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


class Log(engine.Context):
    """One parse: the run of events being read (a trace), the device and CSV columns of its log."""

    def __init__(self, doc: Document) -> None:
        super().__init__(doc)
        self.devices: list[str | None] = []
        self.trace: list[Row] = []
        self.csv_cols: list[str] | None = None
        self.device: str | None = None
        self.started = False
        self.line = ""

    def prepare(self, cur: Cursor) -> None:
        self.line = cur.raw.rstrip("\r\n")

    def flush(self) -> None:
        """The events so far as a gpu-trace table and its per-method summary."""
        trace = self.trace
        if trace:
            first, last = trace[0].line_start, trace[-1].line_end
            self.add_block(Block(section="gpu-trace", rows=trace, line_start=first, line_end=last), first)
            self.add_block(Block(section="gpu", rows=_summary(trace), line_start=first, line_end=last), first)
            self.devices.append(self.device)
        self.trace = []

    def event(self, name: str, gpu: float, lineno: int) -> None:
        self.trace.append(Row(section="gpu-trace", name=name, line_start=lineno, line_end=lineno, total_ns=gpu,
                              calls=1))

    def stray(self, cur: Cursor) -> Verdict | None:
        if self.trace and self.line.strip():
            self.flush()  # prose or another tool's output ends a run of events
            self.started = False
        return None

    def finish(self) -> DialectResult:
        self.flush()
        self.result.profiles = grouping.group(self.events, TOOL)
        for prof, dev in zip(self.result.profiles, self.devices):
            prof.device = dev
        return self.result


class _Reader(engine.Reader):
    ctx: Log

    def __init__(self, ctx: Log) -> None:
        super().__init__(ctx)


class Header(_Reader):
    """A log's header lines: its version (a new log), device, CSV columns and comments."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, line = self.ctx, self.ctx.line
        if _VERSION.match(line):  # a new log
            ctx.flush()
            ctx.add_start(cur.lineno)
            ctx.result.resume[cur.lineno] = ()  # nothing carries past it: a long log may be cut here (stream)
            ctx.started, ctx.device, ctx.csv_cols = True, None, None
            return CLAIMED
        if m := _DEVICE.match(line):
            ctx.device = m.group(1)
            return CLAIMED
        if _CSV_HEADER.match(line):
            ctx.csv_cols = [c.strip() for c in line.split(",")]
            return CLAIMED
        if _COMMENT.match(line):
            return CLAIMED if ctx.started else engine.SKIPPED
        return None


_METHOD = re.compile(r"[A-Za-z_][\w$:.<>~]*")  # a method's name (a kernel's, memcpyHtoD)


def _number_or_empty(cell: str) -> bool:
    return not cell or units.is_number(cell)


class CsvEvent(_Reader):
    """A row under the CSV header (COMPUTE_PROFILE_CSV=1): a method's name, then numbers. A memory
    copy's row holds fewer fields than a kernel's (no occupancy, no grid): a row of its method and
    gputime at least is one."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, line = self.ctx, self.ctx.line
        if ctx.csv_cols is None or "," not in line or _EVENT.match(line):
            return None
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 2 or not _METHOD.fullmatch(cells[0]) or not all(map(_number_or_empty, cells[1:])):
            return None
        gpu = _us(cells[1])
        if len(cells) > len(ctx.csv_cols):  # more fields than the header names: not read, but said
            return UNPLACED if gpu == gpu else None
        if gpu != gpu:
            return UNPLACED
        ctx.event(cells[0], gpu, cur.lineno)
        return CLAIMED


class KeyValueEvent(_Reader):
    """'method=[ name ] gputime=[ 12.5 ] cputime=[ … ] …' (also pasted with a line number before it)."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        m = _EVENT.match(ctx.line)
        if m is None:
            return None
        gpu = _us(m.group("gpu"))
        if gpu != gpu:  # 'gputime=[ nan ]' or damaged: reported, never a row
            return UNPLACED
        if not ctx.started and not ctx.trace:  # pasted lines without the log's header
            ctx.add_start(cur.lineno)
        ctx.event(m.group("name"), gpu, cur.lineno)
        return CLAIMED


READERS = (Header, CsvEvent, KeyValueEvent)


def parse(doc: Document) -> DialectResult:
    ctx = Log(doc)
    return engine.run(ctx, [cls(ctx) for cls in READERS])


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
    part_start="CUDA_PROFILE_LOG_VERSION",  # each log's device is its own (no whole_if)
    sections=("gpu", "gpu-trace"),
    readers=READERS,
    detect=detect, parse=parse,
)
