"""NVHPC/PGI OpenACC `NV_ACC_TIME=1` / `PGI_ACC_TIME=1` "Accelerator Kernel Timing data" blocks.

Kernel launches become `gpu` rows (device time when printed, else elapsed time); regions and
data transfers become `openacc` rows. All values are microseconds with comma separators.

Each kind of line is one small reader (profconv.parse.engine): the block's start, the source
file, the function, an event (a region, a kernel launch, a data transfer) and the times under it.
A damaged event line (its line number lost: 'null: kernel launched 1 times') is reported, and
the times under it with it: they are never put on the event above.
"""

from __future__ import annotations

import re

from profconv.parse import engine, grouping, units
from profconv.parse.dialect import Dialect
from profconv.parse.engine import CLAIMED, UNPLACED, Cursor, Verdict
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row

TOOL = "nvhpc-acc"

_START = re.compile(r"^\s*Accelerator Kernel Timing data\s*$")
# 2014+: '  main  NVIDIA  devicenum=0'; 2012-2013 (PGI 12/13): '  main' alone
_FUNCTION = re.compile(r"^  ([A-Za-z_$][\w$:.<>~]*)(?:\s+NVIDIA\s+devicenum=(\d+))?\s*$")
_NUM = r"(\d+(?:,\d{3})*)"
_EVENT = re.compile(
    rf"^\s+(\d+): (.+?)(?: (?:reached|entered) {_NUM} times?| launched {_NUM} times?|: {_NUM})\s*$"
)
# an event line that does not read ('null: kernel launched 1 times', a count lost)
_DAMAGED_EVENT = re.compile(r"^\s+\S+: .*\b(?:launched|reached|entered|kernel|region|construct|data|update)\b")
# 'device time(us): total=… max=… min=… avg=…'; PGI 12/13 print 'time(us): total=… init=… region=…'
_TIMES = re.compile(r"^\s+(?:(device|elapsed) )?time\(us\):((?:\s*\w+=[\d,]*)+)\s*$")
_KEYS = re.compile(r"(\w+)=([\d,]*)")  # a key PGI printed without a value ('init=') says nothing
_EMPTY_TIME = re.compile(r"^\s+time\(us\):(?:\s*\w+=)*\s*$")  # 'time(us): init=': PGI printed no value
_EXTRA = re.compile(rf"^\s+(?:w/o init: )?(?:\w+={_NUM}\s*)+$")  # PGI 12/13 continuation lines
_FUNC_TIME = re.compile(rf"^\s+time\(us\): {_NUM}\s*$")
# the source file's line, at column 0: absolute, drive-letter, home- or dot-relative, or a path
# without blanks ending in a source file's extension ('~/hiperc/gpu-openacc/diffusion.c', 'src/a.F90')
_SOURCE = re.compile(r"^[A-Za-z]:\\|^(?:~|\.{1,2})?[\w.\-/\\+@#%~]*\."
                     r"(?:c|cpp|cc|cxx|C|c\+\+|h|hpp|hh|cu|cuh|cuf|CUF|f|F|f77|F77|f90|F90|f95|F95|f03|F03|f08|F08|for|FOR)$")
_GRID = re.compile(r"^\s+grid: \[.*\]\s+block: \[.*\]\s*$")


# an event with its times under it: a block whose header lines went to another stream (stdout
# and stderr split: the function and kernel lines kept, 'Accelerator Kernel Timing data' not)
_HEADLESS = re.compile(r"^[ \t]+\d+: [^\n]*(?:reached|entered|launched) [\d,]+ times?[ \t]*\n(?:[^\n]*\n){0,3}?"
                       r"[ \t]+(?:device |elapsed )?time\(us\): ", re.M)
LOOKAHEAD = 4  # lines from an event to its time(us) line (a kernel's grid line between)


def detect(doc: Document) -> bool:
    t = doc.text
    return "Accelerator Kernel Timing data" in t or ("time(us)" in t and _HEADLESS.search(t) is not None)


class Acc(engine.Context):
    """One parse's state: the block's two tables (regions and data; kernels), where the events
    are (source file, function), and the event the times below belong to."""

    def __init__(self, doc: Document) -> None:
        super().__init__(doc)
        self.block: Block | None = None
        self.kernels: Block | None = None
        self.source: str | None = None
        self.function: str | None = None
        self.current: Row | None = None
        self.have_device = False
        self.line = ""
        # a source file's and a function's line seen outside a block: where a block without its
        # header starts (line number, text)
        self.loose: dict[str, tuple[int, str]] = {}

    def prepare(self, cur: Cursor) -> None:
        self.line = cur.raw.rstrip("\r\n")


    def stray(self, cur: Cursor) -> Verdict | None:
        return UNPLACED if self.block is not None and "time(us)" in self.line else None

    def begin(self, n: int) -> None:
        """A block (a profile with its two tables) starts at line n: nothing of the block before it
        carried on (its source file, function or last event)."""
        self.source = self.function = self.current = None
        self.have_device = False
        self.add_start(n)
        self.block = Block(section="openacc", line_start=n, line_end=n, kind="acc")
        self.kernels = Block(section="gpu", line_start=n, line_end=n, kind="acc-kernels")
        self.add_block(self.block, n)
        self.add_block(self.kernels, n)
        self.loose = {}

    def begin_headless(self, cur: Cursor) -> None:
        """A block whose header line is not in this text, at its first event (a source file's and a
        function's line just above it are its)."""
        near = {k: v for k, v in self.loose.items() if cur.lineno - v[0] <= 3}
        self.begin(min([cur.lineno, *(n for n, _ in near.values())]))
        for key, (n, text) in near.items():
            setattr(self, key, text)
            self.claim(n)

    def finish(self) -> DialectResult:
        for ev in self.events:
            if ev.block is not None and ev.block.rows:
                ev.block.line_end = max(r.line_end for r in ev.block.rows)
                ev.block.line_start = min(r.line_start for r in ev.block.rows)
        self.result.profiles = grouping.group(self.events, TOOL)
        return self.result


class _Reader(engine.Reader):
    ctx: Acc

    def __init__(self, ctx: Acc) -> None:
        super().__init__(ctx)


class Start(_Reader):
    """'Accelerator Kernel Timing data': a profile with its two tables."""

    def opens(self, cur: Cursor) -> Verdict | None:
        if not _START.match(self.ctx.line):
            return None
        self.ctx.begin(cur.lineno)
        self.ctx.result.resume[cur.lineno] = ()  # a long log may be cut here (profconv.parse.stream)
        return CLAIMED


class Where(_Reader):
    """The source file (at column 0) and the function (two blanks in) the events below are in;
    a function's own time and a kernel's grid line (claimed, not read)."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, line = self.ctx, self.ctx.line
        stripped = line.strip()
        source = stripped.startswith("/") or (line[:1] not in (" ", "\t") and _SOURCE.match(stripped))
        if ctx.block is None:  # remembered: a block without its header line may follow
            if source:
                ctx.loose["source"] = (cur.lineno, stripped)
            elif m := _FUNCTION.match(line):
                ctx.loose["function"] = (cur.lineno, m.group(1))
            return None
        if source:
            ctx.source = stripped
            return CLAIMED
        if m := _FUNCTION.match(line):
            ctx.function = m.group(1)
            return CLAIMED
        if _FUNC_TIME.match(line) or _GRID.match(line):
            return CLAIMED
        return None


class Event(_Reader):
    """'12: region entered 1 time', '15: kernel launched 3 times', '14: data copyin transfers: 2'."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, line = self.ctx, self.ctx.line
        m = _EVENT.match(line)
        if ctx.block is None and m is not None and self._timed(cur):
            ctx.begin_headless(cur)
        if ctx.block is None or ctx.kernels is None:
            return None
        if m is None:
            if _DAMAGED_EVENT.match(line) and not _TIMES.match(line) and not _EXTRA.match(line):
                ctx.current = None  # its times are reported with it, not put on the event above
                return UNPLACED
            return None
        what = m.group(2)
        count = m.group(3) or m.group(4) or m.group(5)
        file = re.split(r"[/\\]", ctx.source)[-1] if ctx.source else None
        where = f"{ctx.function or ''}@{file}" if file else (ctx.function or "")
        is_kernel = m.group(4) is not None and "kernel" in what
        try:
            calls = units.count(count)
        except ValueError:
            ctx.current = None
            return UNPLACED
        ctx.current = Row(section="gpu" if is_kernel else "openacc", name=f"{where}:{m.group(1)} {what}",
                          line_start=cur.lineno, line_end=cur.lineno, calls=calls)
        (ctx.kernels if is_kernel else ctx.block).rows.append(ctx.current)
        ctx.have_device = False
        return CLAIMED

    def _timed(self, cur: Cursor) -> bool:
        """A time(us) line follows the event line (within LOOKAHEAD lines)."""
        return any(_TIMES.match(ln) for ln in self.ctx.lines[cur.next : cur.next + LOOKAHEAD])


class Times(_Reader):
    """'device time(us): total=… max=… min=… avg=…' (or elapsed time) of the event above, and
    PGI 12/13's continuation lines."""

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx, line = self.ctx, self.ctx.line
        if ctx.block is None:
            return None
        if (m := _TIMES.match(line)) and ctx.current is not None:
            return self._times(m, cur.lineno)
        if (_EXTRA.match(line) and ctx.current is not None) or _EMPTY_TIME.match(line):
            return CLAIMED
        return None

    def _times(self, m: re.Match, lineno: int) -> Verdict:
        ctx, current = self.ctx, self.ctx.current
        assert current is not None
        kind = m.group(1) or "elapsed"
        try:
            keys = {k: units.count(v) * 1e3 for k, v in _KEYS.findall(m.group(2)) if v}
        except ValueError:
            return UNPLACED
        if "total" not in keys:  # 'time(us): init=0': nothing to rank by
            return CLAIMED
        if kind == "device" or not ctx.have_device:
            current.total_ns = keys["total"]
            current.max_ns = keys.get("max", float("nan"))
            current.min_ns = keys.get("min", float("nan"))
            current.avg_ns = keys.get("avg", float("nan"))
            ctx.have_device = ctx.have_device or kind == "device"
        current.line_end = lineno
        return CLAIMED


READERS = (Start, Where, Event, Times)


def parse(doc: Document) -> DialectResult:
    ctx = Acc(doc)
    return engine.run(ctx, [cls(ctx) for cls in READERS])


DIALECT = Dialect(
    name="acc", title="OpenACC timing", tool=TOOL,
    markers=("Accelerator Kernel Timing data", "time(us)"),
    part_start="Accelerator Kernel Timing data",
    sections=("gpu", "openacc"),
    # a long log of runs is read part by part, cut at a block's header line (Start: nothing carried past
    # it); nvprof's '%' markers, in many programs' output, are left to nvprof's detect on each window
    extra={"stream": {"local_markers": {"nvprof": ("(%)", "%")}}},
    readers=READERS,
    detect=detect, parse=parse,
)
