"""nvprof's marker lines (a profile's start, its application, 'Profiling result:', a device's
summary, 'API calls:'), its --cpu-profiling tree and its --csv tables: readers of one line, or of
one table at once."""

from __future__ import annotations

import re

from profconv.parse import units
from profconv.parse.dialects.nvprof import text_sweep
from profconv.parse.dialects.nvprof.common import (
    _API_MARKER,
    _APPLICATION,
    _CSV_HEADER,
    _DEVICE,
    _RESULT,
    _START,
    _summary_follows,
)
from profconv.parse.dialects.nvprof.csv import read_table
from profconv.parse.dialects.nvprof.csv_batch import Prepared
from profconv.parse.dialects.nvprof.metrics import Metrics
from profconv.parse.dialects.nvprof.state import Nvprof, NvprofReader
from profconv.parse.dialects.nvprof.summary import Summary
from profconv.parse.dialects.nvprof.sweep import sweep
from profconv.parse.dialects.nvprof.unified_memory import UnifiedMemory
from profconv.parse.engine import CLAIMED, SKIPPED, Cursor, Verdict

_CPU_ROW = re.compile(r"^\s*\d[\d.]*%\s+\S+\s+\S")
_NVTX_RESULT = re.compile(r"^\s*NVTX result:?\s*$")
_NVTX_SCOPE = re.compile(r'^\s*(?:Thread "[^"]*" \(id = \d+\)|Domain "[^"]*"|Range "[^"]*")\s*$')


class CpuTree(NvprofReader):
    """--cpu-profiling: a call tree of host samples, not GPU activities (claimed, not read)."""

    keys = ("CPU profiling result",)

    def opens(self, cur: Cursor) -> Verdict | None:
        if "CPU profiling result" not in self.ctx.body:
            return None
        self.ctx.end_table()
        self.ctx.opened(self)
        return CLAIMED

    def take(self, cur: Cursor) -> Verdict | None:
        body = self.ctx.body
        if body.strip() and (_CPU_ROW.match(body) or body.split()[:1] == ["Time(%)"]):
            return CLAIMED
        self.ctx.close_open()
        return None


class Csv(NvprofReader):
    """An nvprof --csv table (every layout: profconv.parse.dialects.nvprof.csv), read at once."""

    keys = ('",', "Time(%),Time,Calls,")

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)
        self.prepared = Prepared(ctx.lines)  # summary tables read together as columns (csv_batch)

    def opens(self, cur: Cursor) -> Verdict | None:
        v = self.table(cur)
        if v is not None and cur.next + 2 in self.prepared.tables:
            sweep(self, cur)  # the profiles of a sweep that follow, read in one go
        return v

    def table(self, cur: Cursor) -> Verdict | None:
        body = self.ctx.body
        if not (('",' in body or "Time(%),Time,Calls," in body) and _CSV_HEADER.match(body.strip())):
            return None
        ctx = self.ctx
        got = self.prepared.take(cur.i)
        if got is not None:
            blocks, j = got
            ctx.result.claimed.update(range(cur.lineno, j + 1))  # the header, units row and rows
        else:
            blocks, held, bad, j = read_table(ctx.lines, cur.i)
            ctx.result.claimed.update(held)
            ctx.result.unplaced.extend(bad)
        for b in blocks:
            ctx.add_block(b, b.line_start or cur.lineno)
        cur.next = j
        if blocks and blocks[0].section == "unified-memory":
            ctx.find(UnifiedMemory).after_csv()
        else:
            ctx.end_table()
        return SKIPPED


class ProfileStart(NvprofReader):
    """'==PID== NVPROF is profiling process PID, command: …': a profile starts (and a long log may
    be cut here: the parse's state is kept for a fresh parse from this line)."""

    keys = ("NVPROF is profiling process ",)

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        if "NVPROF is profiling process " not in body or not (m := _START.search(body)):
            return None
        ctx.end_table()
        ctx.nvtx = False
        if text_sweep.sweep(ctx, cur):  # the summary-only profiles from here, read in one go
            return SKIPPED
        ctx.result.resume[cur.lineno] = ctx.resume_state()
        ctx.add_start(cur.lineno, pid=units.pid(m.group(1)), command=m.group(2).strip())
        return CLAIMED


class Application(NvprofReader):
    """'==PID== Profiling application: …' (a profile start where nvprof printed no NVPROF line)."""

    keys = ("Profiling application: ",)

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        if "Profiling application: " not in body or not (m := _APPLICATION.search(body)):
            return None
        ctx.end_table()
        ctx.nvtx = False
        ctx.add_start(cur.lineno, pid=ctx.last_pid, command=m.group(1).strip())
        return CLAIMED


class Result(NvprofReader):
    """'==PID== Profiling result:': the GPU activities' table follows."""

    keys = ("Profiling result",)

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        if "Profiling result" not in ctx.body or not _RESULT.match(ctx.body):
            return None
        ctx.end_table()
        ctx.pending_section = "gpu"
        return CLAIMED


class Device(NvprofReader):
    """--print-summary-per-gpu: 'Device "Tesla V100 (0)"' above a summary table: one summary per
    device, each its own profile of the same run."""

    keys = ('Device "',)

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        if 'Device "' not in body or not (dm := _DEVICE.match(body)):
            return None
        if isinstance(ctx.open, (UnifiedMemory, Metrics)) or not _summary_follows(ctx.lines, cur.next):
            return None
        ctx.end_table()
        run = next((e for e in reversed(ctx.events) if e.kind in ("start", "profiles")), None)
        ctx.add_start(cur.lineno, pid=run.pid if run else ctx.last_pid, command=run.command if run else None,
                      device=dm.group(1))
        ctx.pending_section = "gpu"
        return CLAIMED


class ApiMarker(NvprofReader):
    """'API calls:' on a line of its own: the API calls' table follows (inside a table with a Type
    column it is that table's label, read with its rows)."""

    keys = ("API calls",)

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        if "API calls" not in body or not _API_MARKER.match(body):
            return None
        t = ctx.table
        if isinstance(ctx.open, Summary) and t is not None and "type" in t.fields and not t.pending:
            return None
        ctx.end_table()
        ctx.pending_section = "api"
        return CLAIMED


class NvtxResult(NvprofReader):
    """'==PID== NVTX result:' and its Thread / Domain / Range lines: the tables that follow are one
    per NVTX range (profconv.parse.dialects.nvprof.nvtx)."""

    keys = ("NVTX result", '"')

    def opens(self, cur: Cursor) -> Verdict | None:
        ctx = self.ctx
        body = ctx.body
        if "NVTX result" in body and _NVTX_RESULT.match(body):
            ctx.end_table()
            ctx.nvtx = ctx.nvtx_seen = True
            return CLAIMED
        if ctx.nvtx and '"' in body and _NVTX_SCOPE.match(body):
            ctx.end_table()
            return CLAIMED
        return None
