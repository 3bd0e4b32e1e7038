"""nvprof's Unified Memory profiling result: per-device rows and the CPU page-fault trailers."""

from __future__ import annotations

import re

from profconv.parse import units
from profconv.parse.dialects.nvprof.common import _DEVICE
from profconv.parse.dialects.nvprof.state import Nvprof, NvprofReader
from profconv.parse.engine import CLAIMED, UNPLACED, Cursor, Verdict
from profconv.parse.model import Block
from profconv.parse.schema import Row

_UM_TRAILER = re.compile(
    r"^\s*(Total CPU Page faults|Total CPU thrashes|Total CPU throttles)\s*:\s*(\d{1,3}(?:,\d{3})+|\d+)\s*$"
)
_UM_TRAILER_NAME = re.compile(r"^\s*(Total CPU Page faults|Total CPU thrashes|Total CPU throttles)\s*:")

_TOO_MANY = Row(section="unified-memory", name="", line_start=0, line_end=0)  # a count over the Int64 column


def _um_row(body: str, lineno: int) -> Row | None:
    toks = body.split()
    if len(toks) < 7 or not re.fullmatch(r"[\d,]+", toks[0]):
        return None
    name = " ".join(toks[6:])
    try:
        calls = units.count(toks[0].replace(",", ""))
    except ValueError:
        return _TOO_MANY
    try:
        total = units.size_bytes(toks[4]) if toks[4] != "-" else float("nan")
        t = units.time_ns(toks[5]) if toks[5] != "-" else float("nan")
    except ValueError:
        return None
    return Row(
        section="unified-memory",
        name=name,
        line_start=lineno,
        line_end=lineno,
        calls=calls,
        bytes=total,
        total_ns=t,
    )




class UnifiedMemory(NvprofReader):
    """'Unified Memory profiling result': per device, its rows and the CPU page-fault trailers; a
    --csv Unified Memory table (read by the Csv reader) leaves this reader open for its trailers."""

    keys = ("Unified Memory profiling result",)

    def __init__(self, ctx: Nvprof) -> None:
        super().__init__(ctx)
        self.csv = False  # after a --csv table: only its trailers (and Device lines) follow

    def opens(self, cur: Cursor) -> Verdict | None:
        if "Unified Memory profiling result" not in self.ctx.body:
            return None
        ctx = self.ctx
        ctx.end_table()
        ctx.opened(self)
        self.csv = False
        ctx.um_block = Block(section="unified-memory", line_start=cur.lineno, line_end=cur.lineno)
        ctx.add_block(ctx.um_block, cur.lineno)
        return CLAIMED

    def after_csv(self) -> None:
        """A --csv Unified Memory table was read: its trailers follow."""
        self.csv = True
        self.ctx.opened(self)

    def take(self, cur: Cursor) -> Verdict | None:
        ctx, body, lineno = self.ctx, self.ctx.body, cur.lineno
        if m := _DEVICE.match(body):
            ctx.device = m.group(1)
            return CLAIMED
        if m := _UM_TRAILER.match(body):
            if ctx.um_block is None:
                ctx.um_block = Block(section="unified-memory", line_start=lineno, line_end=lineno)
                ctx.add_block(ctx.um_block, lineno)
            try:
                calls = units.count(m.group(2).replace(",", ""))
            except ValueError:  # more than the Int64 calls column holds: said, not kept
                return UNPLACED
            ctx.um_block.rows.append(Row(section="unified-memory", name=m.group(1), line_start=lineno,
                                         line_end=lineno, calls=calls))
            ctx.um_block.line_end = lineno
            return CLAIMED
        if _UM_TRAILER_NAME.match(body):  # a trailer whose value is not a count: said, not guessed
            return UNPLACED
        if self.csv:
            return None
        if body.split()[:1] == ["Count"]:
            return CLAIMED
        if ctx.um_block is not None and (row := _um_row(body, lineno)):
            if row is _TOO_MANY:
                return UNPLACED
            ctx.um_block.rows.append(row)
            ctx.um_block.line_end = lineno
            return CLAIMED
        return None
