"""nvprof text output: summaries (every layout), --csv, GPU/API traces, --metrics/--events and
Unified Memory tables, the --cpu-profiling tree.

Written to survive reports: markdown tables, HTML bold, tab-split columns, names wrapped over
lines, tables cut by code fences, `—PID—` prefixes. Pure: lines in, profiles out. Each table
shape is one reader (profconv.parse.engine), run in the order of `READERS`; what they share is
the parse's context (state.py)."""

from __future__ import annotations

import re
from itertools import repeat

from profconv.parse import engine
from profconv.parse.dialect import Dialect
from profconv.parse.dialects.nvprof.common import (
    _FAST_ROW,
    _PCT_HEADER,
    HEADERLESS_SCAN,
    TOOL,
    _headerless_rows,
    parse_header,
)
from profconv.parse.dialects.nvprof.markers import (
    ApiMarker,
    Application,
    CpuTree,
    Csv,
    Device,
    NvtxResult,
    ProfileStart,
    Result,
)
from profconv.parse.dialects.nvprof.metrics import _METRIC_FRAGMENT, Metrics
from profconv.parse.dialects.nvprof.state import Nvprof
from profconv.parse.dialects.nvprof.summary import Summary, _scan_regex
from profconv.parse.dialects.nvprof.trace import Trace
from profconv.parse.dialects.nvprof.unified_memory import UnifiedMemory
from profconv.parse.model import DialectResult, Document
from profconv.parse.text import clean

__all__ = ["DIALECT", "READERS", "TOOL", "_FAST_ROW", "_scan_regex", "detect", "parse"]

# the order a line is offered to them (profconv.parse.engine)
READERS = (CpuTree, Csv, ProfileStart, Application, Result, Device, ApiMarker, NvtxResult, Metrics, UnifiedMemory,
           Trace, Summary)


def detect(doc: Document) -> bool:
    text = doc.text
    if any(marker in text for marker in ("NVPROF", "Profiling result", "GPU activities:")):
        return True
    pct = "(%)" in text  # one scan for what the two Time(%) tests below need
    if pct and "Time(%),Time,Calls," in text:  # nvprof --csv summary saved without its prefix lines
        return True
    if "Kernel: " in text and _METRIC_FRAGMENT.search(text):  # a --metrics summary fragment
        return True
    if "%" in text and _headerless_rows(text[:HEADERLESS_SCAN]):
        return True
    return pct and any(map(_bare_header, _PCT_HEADER.finditer(text), repeat(text)))


def _bare_header(m: re.Match, text: str) -> bool:
    """A summary header pasted without its prefix lines, at this Time(%): on its line, or broken over
    it and the next one or two (a PDF's text: 'Time(%) Time' / 'Calls Avg Min Max Name')."""
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = text[start : end if end >= 0 else None]
    if "Total Time" in line or "," in line:
        return False
    if "Name" in line:
        return True
    for _ in range(2):
        if end < 0:
            return False
        nxt = text.find("\n", end + 1)
        line += " " + text[end + 1 : nxt if nxt >= 0 else None]
        end = nxt
        if "Name" in line:
            return parse_header(clean(line)) is not None
    return False


def parse(doc: Document) -> DialectResult:
    ctx = Nvprof(doc)
    return engine.run(ctx, [cls(ctx) for cls in READERS])


DIALECT = Dialect(
    name="nvprof", title="nvprof", tool=TOOL,
    # what detect looks for (a bare summary header or two headerless rows: their '%')
    markers=("NVPROF", "Profiling result", "GPU activities:", "Time(%),Time,Calls,", "Kernel: ", "(%)", "%"),
    part_start="NVPROF is profiling process",
    whole_if=('Device "',),  # nvprof gives every profile the file's last device
    sections=("gpu", "api", "openacc", "unified-memory", "nvtx", "metric", "gpu-trace", "api-trace"),
    readers=READERS,
    detect=detect, parse=parse,
)
