"""Big nvprof --print-gpu-trace / --print-api-trace tables found and read on the input's bytes.

A GPU trace of a long run is most of its log: one fixed-width row per kernel launch or copy,
'Start  Duration  …  Name', the two times with their units glued on, the name left-aligned under
its header word. The text path decodes, normalizes and splits the whole input into lines, then reads
the rows with one regex a line (profconv.parse.dialects.nvprof.trace._bulk_trace). Here (called by
profconv.parse.bytescan before the input is decoded) the table is found on the bytes and its rows
are read by one C pass (profconv.parse._bytescan.trace): the name's column located once from the
header, each row checked and its two times converted where they are, the names sliced out and their
base names (the [correlation id] left out) numbered as traces.base_codes numbers them. The rows
become blank lines in the text (bytescan), and nvprof's trace reader takes the columns where it
meets the header (`Trace.opens`, which checks the text says the same).

A table is taken only where the text path's bulk reader reads every row of it, so giving these
values: the header plain ASCII with no PID prefix ('Start', 'Duration', …, 'Name'); every row plain
ASCII (no control character, nothing normalize rewrites: '&', '\\', '<br', '<pre', a '/' before a
'*') matching the bulk reader's pattern (two times with units, the name starting right under 'Name'
after a blank); the rows ended by a blank line, a line starting with '==' (nvprof's marker) or the
input's end, with at least 64 rows in each of the bulk reader's slices of BULK_LINES (so that none is
read line by line there); the line after a blank one that ends them not indented (a markdown code
block could start there). Times: float(digits + the unit's exponent), as the text path computes them
(Python's own conversion, from C); names: the text from the Name column, blanks at the end removed.
Anything else (or no C accelerator built): the text path, with the same output (tests compare both).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from profconv.parse import native

MIN_ROWS = 64  # rows from which a trace is read on the bytes (FIRST_ROWS: fewer, the text path reads them line by line;
# a 1,070-row trace 7.4 -> 2.3 ms)
BULK_LINES = 20_000  # trace.BULK_LINES: the text path's bulk slices (each must start with 64 rows)
FIRST_ROWS = 64  # trace._bulk_trace: rows a bulk slice needs to start with


@dataclass
class TraceColumns:
    """A trace read on the bytes: its section, where its names start, its rows' columns."""

    section: str
    name_col: int
    names: list[str]
    start_ns: Any  # array('d')
    total_ns: Any
    bases: tuple[array, list[str]] | None  # each name's base-name code (int64), the base names (traces.base_codes)
    dialect: str = "nvprof"  # whose tables these are (bytescan.Table.dialect)


MARK = b"Duration"  # every trace header holds it: profconv.parse.bytescan looks for the lines that do


def available() -> bool:
    """Whether the C pass is built (else no trace is read on the bytes)."""
    scan = native.load("_bytescan")
    return scan is not None and hasattr(scan, "trace")


def table(data: bytes, a: int, b: int) -> tuple[Any, ...] | None:
    """bytescan.find's span of the trace whose header is the line data[a:b] (its newline included),
    where it is taken: (header start, rows start, rows end, rows, {}, TraceColumns, 0); else None."""
    head = _header(data[a : b - 1])
    scan = native.load("_bytescan")
    if head is None or scan is None or not hasattr(scan, "trace"):
        return None
    section, name_col = head
    e, rows, starts, durations, names, coded = scan.trace(data, b, name_col)
    if rows < max(MIN_ROWS, FIRST_ROWS) or 0 < rows % BULK_LINES < FIRST_ROWS or not _ends_there(data, e):
        return None
    bases = None
    if coded is not None:
        codes = array("q")
        codes.frombytes(coded[0])
        bases = (codes, coded[1])
    return a, b, e, rows, {}, TraceColumns(section, name_col, names, _doubles(starts), _doubles(durations), bases), 0


def _header(line: bytes) -> tuple[str, int] | None:
    """(section, where names start) of a trace header line printed plainly; None otherwise."""
    toks = line.split()
    if (len(toks) < 3 or toks[0] != b"Start" or toks[1] != b"Duration" or toks[-1] != b"Name"
            or not line.isascii() or b"=" in line or any(c < 0x20 for c in line)):
        return None
    name_col = line.rfind(b" Name") + 1
    if name_col < 2 or name_col > 1000:
        return None
    return ("gpu-trace" if len(toks) > 3 else "api-trace"), name_col


def _ends_there(data: bytes, e: int) -> bool:
    """Whether the line at offset e ends a trace as the text path ends it: the input's end, a blank
    line (the line after it not indented: normalize's code-block rule looks there), a line
    starting with '==', or the input's last line where it has no line end (a log cut while a row
    was written: not a row the C pass reads, so one cut short; engine.cut_last_line)."""
    if e == len(data) or data[e : e + 2] == b"==" or data.find(b"\n", e) < 0:
        return True  # (the last: the input's last line cut short, which the text path reports unplaced)
    return data[e : e + 1] == b"\n" and data[e + 1 : e + 2] not in (b" ", b"\t")


def _doubles(raw: bytes) -> array:
    out = array("d")
    out.frombytes(raw)
    return out
