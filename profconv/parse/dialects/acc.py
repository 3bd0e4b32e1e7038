"""NVHPC/PGI OpenACC `NV_ACC_TIME=1` / `PGI_ACC_TIME=1` "Accelerator Kernel Timing data" blocks.

Kernel launches become `gpu` rows (device time when printed, else elapsed time); regions and
data transfers become `openacc` rows. All values are microseconds with comma separators.
"""

from __future__ import annotations

import re

from profconv.parse import grouping, units
from profconv.parse.dialect import Dialect
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


def detect(doc: Document) -> bool:
    return "Accelerator Kernel Timing data" in doc.text


def parse(doc: Document) -> DialectResult:
    result = DialectResult()
    events: list[grouping.Event] = []
    block: Block | None = None
    source = function = None
    current: Row | None = None
    have_device = False
    for lineno, raw in doc.numbered():
        line = raw.rstrip("\r\n")
        if _START.match(line):
            events.append(grouping.Event("start", lineno))
            block = Block(section="openacc", line_start=lineno, line_end=lineno, kind="acc")
            kernels = Block(section="gpu", line_start=lineno, line_end=lineno, kind="acc-kernels")
            events.append(grouping.Event("block", lineno, block=block))
            events.append(grouping.Event("block", lineno, block=kernels))
            result.claimed.add(lineno)
            continue
        if block is None:
            continue
        stripped = line.strip()
        if stripped.startswith("/") or (line[:1] not in (" ", "\t") and _SOURCE.match(stripped)):
            source = stripped
            result.claimed.add(lineno)
            continue
        if m := _FUNCTION.match(line):
            function = m.group(1)
            result.claimed.add(lineno)
            continue
        if _FUNC_TIME.match(line) or _GRID.match(line):
            result.claimed.add(lineno)
            continue
        if m := _EVENT.match(line):
            what = m.group(2)
            count = m.group(3) or m.group(4) or m.group(5)
            file = re.split(r"[/\\]", source)[-1] if source else None
            where = f"{function or ''}@{file}" if file else (function or "")
            name = f"{where}:{m.group(1)} {what}"
            is_kernel = m.group(4) is not None and "kernel" in what
            try:
                calls = units.count(count)
            except ValueError:
                result.unplaced.append(lineno)
                continue
            current = Row(section="gpu" if is_kernel else "openacc", name=name, line_start=lineno,
                          line_end=lineno, calls=calls)
            (kernels if is_kernel else block).rows.append(current)
            have_device = False
            result.claimed.add(lineno)
            continue
        if (m := _TIMES.match(line)) and current is not None:
            kind = m.group(1) or "elapsed"
            try:
                keys = {k: units.count(v) * 1e3 for k, v in _KEYS.findall(m.group(2)) if v}
            except ValueError:
                result.unplaced.append(lineno)
                continue
            if "total" not in keys:  # 'time(us): init=0': nothing to rank by
                result.claimed.add(lineno)
                continue
            if kind == "device" or not have_device:
                current.total_ns = keys["total"]
                current.max_ns = keys.get("max", float("nan"))
                current.min_ns = keys.get("min", float("nan"))
                current.avg_ns = keys.get("avg", float("nan"))
                have_device = have_device or kind == "device"
            current.line_end = lineno
            result.claimed.add(lineno)
            continue
        if (_EXTRA.match(line) and current is not None) or _EMPTY_TIME.match(line):
            result.claimed.add(lineno)
            continue
        if "time(us)" in line:
            result.unplaced.append(lineno)
    for ev in events:
        if ev.block is not None and ev.block.rows:
            ev.block.line_end = max(r.line_end for r in ev.block.rows)
            ev.block.line_start = min(r.line_start for r in ev.block.rows)
    result.profiles = grouping.group(events, TOOL)
    return result


DIALECT = Dialect(
    name="acc", title="OpenACC timing", tool=TOOL,
    markers=("Accelerator Kernel Timing data",),
    sections=("gpu", "openacc"),
    detect=detect, parse=parse,
)
