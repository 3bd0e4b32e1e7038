"""Nsight Systems `nsys stats` output: console tables (current and legacy report names) and CSV."""

from __future__ import annotations

import functools
import math
import re
from array import array
from collections.abc import Sequence
from itertools import repeat
from operator import add, indexOf
from typing import Any, cast

from profconv.parse import bytescan, columnar, grouping, units
from profconv.parse.colviews import Const
from profconv.parse.context import contains_any
from profconv.parse.dialect import Dialect
from profconv.parse.dialects import nsys_sweep
from profconv.parse.engine import STRAY_RUN
from profconv.parse.model import Block, DialectResult, Document, RawProfile
from profconv.parse.schema import ROW_FIELDS, Row
from profconv.parse.table import Rows
from profconv.parse.text import ELISION, FENCE, clean, csv_row, csv_rows
from profconv.parse.traces import summarize_trace, text_bases

TOOL = "nsys"

# ('Processing [a.sqlite] with' / '[/opt/…/osrt_sum.py]...': a line a PDF or a terminal wrapped)
# (a script's path as nsys prints it on Linux, '/opt/…/reports/R.py', or on Windows, 'C:\…\reports\R.py')
_EXECUTING = re.compile(r"Executing '(\w+)' stats report|Processing \[.*\] with \[.*?[/\\](\w+)\.py\]"
                        r"|^\s*\[[^\]\s]*[/\\]reports[/\\](\w+)\.py\]\.\.\.")
_CSV_TITLE = re.compile(r"\*\*\s.*\((\w+)\):?\s*$")
_DASHES = re.compile(r"-{3,}")
_STATUS = ("Generating ", "Executing ", "Processing ", "Saving ", "Exporting ", "Exported ")
_GLUED_HEADER = re.compile(r"^(\s*Time ?\(%\).*\bName\s+)(-{3,}(?: +-{3,})+)\s*$")
_GENERATING = re.compile(r"Generating '.*\.qdstrm'|Generating SQLite file|Saving report to file|Running .*nsys")

REPORTS = {
    "cuda_api_sum": "api", "cudaapisum": "api",
    "cuda_gpu_kern_sum": "gpu", "gpukernsum": "gpu",
    "cuda_gpu_mem_time_sum": "gpu", "gpumemtimesum": "gpu",
    "cuda_gpu_mem_size_sum": "gpu-memory-size", "gpumemsizesum": "gpu-memory-size",
    "osrt_sum": "os-runtime", "osrtsum": "os-runtime",
    "nvtx_sum": "nvtx", "nvtxsum": "nvtx", "nvtx_pushpop_sum": "nvtx", "nvtxppsum": "nvtx",
    "openacc_sum": "openacc",
    "cuda_gpu_trace": "gpu-trace", "gputrace": "gpu-trace",
    "cuda_api_trace": "api-trace",
}
# named nsys reports that are not one per-name time summary: read as rows they would count the
# kernels' time twice (it is cuda_gpu_kern_sum's) or be ranked as what they are not
NOT_READ = {
    "cuda_kern_exec_sum": "launch, queue and execution times per kernel and API call",
    "cuda_kern_exec_trace": "launch, queue and execution times of each kernel",
    "nvtx_gpu_proj_sum": "NVTX ranges projected onto the GPU", "nvtx_gpu_proj_trace": "NVTX ranges projected onto the GPU",
    "nvtx_kern_sum": "kernels per NVTX range", "nvtx_pushpop_trace": "NVTX ranges one by one",
    "cuda_api_gpu_sum": "API calls with the GPU work they launched",
    "um_sum": "unified memory page faults", "um_total_sum": "unified memory totals",
    "um_cpu_page_faults_sum": "unified memory CPU page faults",
    **{rule: "an `nsys analyze` rule listing single calls or time ranges" for rule in (
        "cuda_memcpy_async", "cuda_memcpy_sync", "cuda_memset_sync", "cuda_api_sync", "gpu_gaps", "gpu_time_util",
        "dx12_mem_ops")},
}
READ_AS_GPU = ("cuda_gpu_sum", "cuda_gpu_kern_gb_sum", "gpusum")  # kernels and memory operations


def _not_read(report: str | None) -> str | None:
    """What a named report holds when profconv does not read it as rows (None: it does)."""
    if report is None or report in REPORTS or report in READ_AS_GPU:
        return None
    return NOT_READ.get(report, "a report that is not a per-name time summary")


TITLES = [
    ("CUDA API Statistics", "cuda_api_sum"),
    ("CUDA Kernel Statistics", "cuda_gpu_kern_sum"),
    ("Memory Operation Statistics (by size", "cuda_gpu_mem_size_sum"),
    ("Memory Operation Statistics (KiB)", "cuda_gpu_mem_size_sum"),
    ("Memory Operation Statistics (MB)", "cuda_gpu_mem_size_sum"),
    ("Memory Operation Statistics", "cuda_gpu_mem_time_sum"),
    ("Operating System Runtime API Statistics", "osrt_sum"),
    ("NVTX", "nvtx_sum"),
    ("OpenACC", "openacc_sum"),
]
FIELDS = {
    "time (%)": "pct", "time(%)": "pct",
    "total time": "time", "total time (ns)": "time",
    "instances": "calls", "num calls": "calls", "calls": "calls", "count": "calls",
    "operations": "calls", "num ops": "calls",
    "avg (ns)": "avg", "average": "avg", "med (ns)": "med", "median": "med",
    "min (ns)": "min", "minimum": "min", "max (ns)": "max", "maximum": "max",
    "stddev (ns)": "std", "stddev": "std",
    "name": "name", "operation": "name", "range": "name", "kernel name": "name",
    "total (mb)": "mbytes", "total (kib)": "kib", "total": "total",
    "start (ns)": "start", "start": "start", "duration (ns)": "dur", "duration": "dur",
    # cuda_gpu_kern_sum of newer nsys splits a kernel's rows by launch configuration
    "gridxyz": "grid", "blockxyz": "block",
}


_MARKERS = ("stats report", "Total Time (ns)", "Statistics (nanoseconds)", "Runtime API Statistics", "\tTotal Time\t",
            "\nStart (ns),", "\nTime (%),", "Statistics:\n", "Operation Statistics (by ")
# what detect looks for past the markers: each pattern searched alone where its word is in the text (one
# pattern of the three alternatives was tried at every character: 0.3 ms of a 64 KiB head; each alone is
# found from its literal start)
_DETECT = (("Total Time", re.compile(r"Time\(%\) +Total Time")),
           ("Processing [", re.compile(r"Processing \[[^\]\n]*\] with \[[^\]\n]*_(?:sum|trace)\.py\]")),
           ("Duration", re.compile(r"Start ?\((?:ns|sec)\) +Duration ?\((?:ns|nsec)\)")))


def detect(doc: Document) -> bool:
    text = doc.text
    if contains_any(text, _MARKERS) or text.startswith(("Start (ns),", "Time (%),")):  # one pass for all of them
        return True
    return any(word in text and pattern.search(text) is not None for word, pattern in _DETECT)


def _report_from_header(cols: Sequence[str], names: list[str]) -> str:
    """A table printed without its report name: tell it by its columns (and names)."""
    lc = [c.lower() for c in cols]
    if any(c.startswith("total (") or c == "total" for c in lc):
        return "cuda_gpu_mem_size_sum"
    if "range" in lc:
        return "nvtx_sum"
    if "start (ns)" in lc or "start" in lc or any(c.startswith("start(") for c in lc):
        return "cuda_gpu_trace"
    if "operation" in lc:
        return "cuda_gpu_mem_time_sum"
    if "instances" in lc or any(c.startswith("kernel") for c in lc):
        return "cuda_gpu_kern_sum"
    if names and all(str(n).startswith("[CUDA ") for n in names):
        return "cuda_gpu_mem_time_sum"  # '[CUDA memcpy DtoH]', '[CUDA memset]': memory operations
    api = sum(1 for n in names if re.match(r"^(cu[A-Z]|cuda[A-Z]|cublas|cudnn|nvtx|vk[A-Z])", str(n)))
    if api * 2 >= max(1, len(names)):
        return "cuda_api_sum"
    # a hand-made table with a Calls column: kernels are signatures ('conv2D(float*, int)'), OS calls bare words
    kernels = sum(1 for n in names if "(" in str(n) or str(n).startswith("void "))
    return "cuda_gpu_kern_sum" if names and kernels * 2 >= len(names) else "osrt_sum"


def _size_factor(field: str) -> float:
    return {"mbytes": 1e6, "kib": 1024.0, "total": 1024.0}.get(field, 1.0)


def _rows_to_block(report: str, fields: list[str | None], cells: list[list[str]], lines: list[int],
                   scales: dict[str, float] | None = None) -> tuple[Block, list[int]]:
    """A table's rows (cells as printed, one list per line in `lines`) read in the decimal mark all
    its cells say: its block and the lines that made no row (cut, ragged, a bad number, no name)."""
    section = REPORTS.get(report, "gpu")
    plain = _plain_rows(section, fields, cells, lines, scales)
    if plain is not None:
        return Block(section=section, rows=plain, line_start=lines[0] if lines else 0,
                     line_end=lines[-1] if lines else 0, kind=report), []
    bad: list[int] = []
    rows: list[Row] = []
    loc = _table_locale(fields, cells)
    need = sum(1 for f in fields if f is not None)
    for cell, line in zip(cells, lines):
        got = _cell_values(fields, cell, loc, scales or {}) if len(cell) >= need else None
        if got is None:
            bad.append(line)  # a cut or ragged row: reported, never read with its columns shifted
            continue
        vals, name = got
        rows.append(_row_of(section, name, line, vals))
    blk = Block(section=section, rows=rows, line_start=lines[0] if lines else 0,
                line_end=lines[-1] if lines else 0, kind=report)
    if loc.ambiguous:
        blk.notes.append(units.AMBIGUOUS_NOTE)
    return blk, bad


_PLAIN_CELLS = re.compile(r"(?:[0-9]+(?:\.[0-9]+)?\n)*")  # what nsys writes in CSV: digits, one '.'
_WHOLE_CELLS = re.compile(r"(?:[0-9]{1,18}\n)*")
_UNDECIDED_CELL = re.compile(r"(?m)^[1-9][0-9]{0,2}\.[0-9]{3}$")  # '524.288': a decimal or a grouped number
_DOT_CELL = re.compile(r"(?m)^(?![1-9][0-9]{0,2}\.[0-9]{3}$)[0-9]+\.[0-9]+$")  # '.' is the decimal mark


def _plain_rows(section: str, fields: list[str | None], cells: list[list[str]], lines: list[int],
                scales: dict[str, float] | None) -> list[Row] | None:
    """The rows of a summary table whose every cell is a plain number in the C locale (what nsys
    writes), each column read by one regex and float() mapped over it: what the cell-by-cell
    reading below gives, in a fraction of the time. None for any other table (a unit, a grouping
    or decimal mark, a share above 100, an empty name, a cut row...): the cell-by-cell reading."""
    if (section == "gpu-memory-size" or section.endswith("-trace") or scales or not cells
            or "grid" in fields or "block" in fields or "name" not in fields):
        return None
    if any(len(c) != len(fields) for c in cells):
        return None
    cols = {f: [c[k] for c in cells] for k, f in enumerate(fields) if f is not None}
    if len(cols) != sum(1 for f in fields if f is not None):
        return None  # a field twice: the first name, the last number would count
    numbers = "".join(v + "\n" for f, col in cols.items() if f not in ("name", "calls") for v in col)
    if not _PLAIN_CELLS.fullmatch(numbers) or ("calls" in cols and not _WHOLE_CELLS.fullmatch(
            "".join(v + "\n" for v in cols["calls"]))):
        return None
    if _UNDECIDED_CELL.search(numbers) and not _DOT_CELL.search(numbers):
        return None  # the decimal mark undecided: the cell-by-cell reading leaves those cells empty
    vals = {f: list(map(float, col)) for f, col in cols.items() if f not in ("name", "calls")}
    names = [n.strip() for n in cols["name"]]
    if "" in names or any(map(math.isinf, (v for col in vals.values() for v in col))) or max(vals.get("pct", [0.0])) > 100.0:
        return None
    if "calls" in cols:
        vals["calls"] = list(map(int, cols["calls"]))  # type: ignore[arg-type]
    keys = list(vals)
    return [_row_of(section, name, line, dict(zip(keys, row)))
            for name, line, row in zip(names, lines, zip(*vals.values()))]


def _table_locale(fields: list[str | None], cells: list[list[str]]) -> units.Locale:
    numeric = [c for cell in cells for f, c in zip(fields, cell) if f not in (None, "name", "calls")]
    counts = [c for cell in cells for f, c in zip(fields, cell) if f == "calls"]
    loc = units.decide_locale(numeric, counts)
    if loc.ambiguous:  # the columns not kept tell the decimal mark too (a size table's '0.000' Min
        # beside Totals such as '8.389' that read either way)
        loc = units.decide_locale(numeric + [c for cell in cells for f, c in zip(fields, cell) if f is None], counts)
    return loc


def _cell_values(fields: list[str | None], cell: list[str], loc: units.Locale,
                 scales: dict[str, float]) -> tuple[dict[str, float], str] | None:
    """One row's numbers by field, and its name (with its launch configuration); None when a cell
    does not read or the name is empty."""
    vals: dict[str, float] = {}
    launch: dict[str, str] = {}
    name = ""
    try:
        for f, c in zip(fields, cell):
            if f == "name":
                name = c.strip() if not name else name
            elif f is not None:
                _cell_value(f, c, loc, scales, vals, launch)
    except ValueError:
        return None
    if not name:
        return None
    if launch:  # one row per launch configuration: the name says which ('k(int) [grid 90x1x1, block 16x16x1]')
        name = f"{name} [{', '.join(f'{k} {v}' for k, v in launch.items())}]"
    return vals, name


def _cell_value(f: str, c: str, loc: units.Locale, scales: dict[str, float], vals: dict[str, float],
                launch: dict[str, str]) -> None:
    """Cell `c` of field `f` into `vals` (or `launch`); ValueError when it does not read."""
    if f == "pct":
        vals[f] = units.percent(c, loc)
    elif f == "calls":
        vals[f] = units.count(c, loc)
    elif f in ("mbytes", "kib", "total"):
        vals["bytes"] = loc.convert(c.strip()) * _size_factor(f)
    elif f in ("grid", "block"):
        dims = c.replace(",", " ").split()
        if not dims or not all(d.isdigit() for d in dims):
            raise ValueError(c)
        launch[f] = "x".join(dims)
    else:
        if f in ("start", "dur") and not c.strip():
            raise ValueError(c)  # a trace row without its time
        vals[f] = loc.convert(c.strip()) * scales.get(f, 1.0)


def _row_of(section: str, name: str, line: int, vals: dict[str, float]) -> Row:
    nan = float("nan")
    calls = int(vals["calls"]) if "calls" in vals else None
    if section == "gpu-memory-size":
        return Row(section=section, name=name, line_start=line, line_end=line, bytes=vals.get("bytes", nan), calls=calls)
    if section.endswith("-trace"):
        return Row(section=section, name=name, line_start=line, line_end=line, start_ns=vals.get("start", nan),
                   total_ns=vals.get("dur", nan), calls=1)
    return Row(section=section, name=name, line_start=line, line_end=line, time_pct=vals.get("pct", nan),
               total_ns=vals.get("time", nan), calls=calls, avg_ns=vals.get("avg", nan), med_ns=vals.get("med", nan),
               min_ns=vals.get("min", nan), max_ns=vals.get("max", nan), std_ns=vals.get("std", nan))


_TIME_COL = re.compile(r"^(start|duration)\s*\((ns|nsec|us|usec|ms|msec|s|sec)\)$")
_COL_SCALE = {"ns": 1.0, "nsec": 1.0, "us": 1e3, "usec": 1e3, "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9}


def _col_scale(col: str) -> float:
    """A trace time column's unit as a factor to ns: 'Start(sec)' (nsys 2020) -> 1e9."""
    m = _TIME_COL.match(col.strip().lower())
    return _COL_SCALE[m.group(2)] if m else 1.0


def _field_of(col: str) -> str | None:
    c = col.strip().lower()
    if c in FIELDS:
        return FIELDS[c]
    if m := _TIME_COL.match(c):
        return "start" if m.group(1) == "start" else "dur"
    base = re.sub(r"\s*\(.*\)$", "", c)
    if base in ("avg", "med", "min", "max", "stddev") and "(" in c:
        return None  # sizes in a memory-size table: only the total is kept
    return FIELDS.get(base)


BULK, ROWS_READ, ROWS = "bulk", "rows read", "rows"  # how a CSV table's rows were read (_csv_block)


def _csv_block(lines: list[str], start: int, report: str | None,
               pre: bytescan.Table | None = None) -> tuple[Block | None, int, list[int], str]:
    """One CSV table from line index `start`; returns its block, the index after it, bad line
    numbers and how its rows were read: BULK (as columns; their lines are the table's alone),
    ROWS_READ (every line a row of it: claimed like BULK, their text kept) or ROWS. `pre`: the
    table as found on the input's bytes (its rows are blank lines here)."""
    head = _csv_header(lines[start])
    header, cols, fields = list(head[0]), list(head[1]), list(head[2])
    if pre is not None:
        if pre.batch is not None:
            return _batched_block(lines, start, report, pre, cols, fields), start + 1 + pre.rows, [], ROWS_READ
        return _pre_read_block(lines, start, report, pre, cols, fields)
    j, stray = _csv_extent(lines, start, len(cols))
    if j - start > TEXT_BULK_ROWS and header == cols and not stray:
        arrow = columnar.worth(sum(map(len, lines[start:j])), COLUMNS_PAY_FROM)
        read = _csv_columns if arrow else _csv_split
        fast = read(lines, start, j, cols, fields, report)
        if fast is not None:
            lines[start + 1 : j] = [""] * (j - start - 1)  # read: these rows are the table's alone
            return fast, j, [], BULK
        if j == len(lines) and _cut_short(lines[j - 1], len(cols)) and (got := _with_cut_row(
                read(lines, start, j - 1, cols, fields, report), lines, j - 1, cols, fields)) is not None:
            lines[start + 1 : j - 1] = [""] * (j - start - 2)
            return got
    at = [k for k in range(start + 1, j) if k not in stray] if stray else range(start + 1, j)
    blk, bad = _csv_rows_block(lines, at, cols, fields, report)
    if stray and blk is not None:
        blk.notes.append(stray_note([k + 1 for k in stray]))
    every = blk is not None and not bad and not stray and len(blk.rows) == j - start - 1
    return blk, j, bad, ROWS_READ if every else ROWS


def _with_cut_row(head: Block | None, lines: list[str], k: int, cols: list[str],
                  fields: list[str | None]) -> tuple[Block, int, list[int], str] | None:
    """A big table read as columns but for its last line, line index k, the input's last (a log cut
    while a row was written: a job's time limit), and that line read by the row reader as it
    reads it among the table's rows: a row of the table (cut in its name), or a line reported
    unplaced (a cut number, a row short of cells). _csv_block's return (BULK: the rows before it
    are the table's alone; a line unplaced is claimed after them); None where the row reader
    alone could tell the table's decimal mark otherwise (that line's cells ambiguous alone)."""
    if head is None or head.table is None:
        return None
    tail, bad = _csv_rows_block(lines, [k], cols, fields, head.kind)
    if tail is not None and tail.notes:
        return None  # its numbers read either way alone: the whole table's rows tell (the row reader)
    row = _only_row(tail)
    if tail is not None:  # a line of the table's width (cells cut off, or a row), the table's last
        head.line_end = k + 1
    if row is None:
        return head, k + 1, bad, BULK
    head.table, head.names = head.table.with_row(row), None
    lines[k] = ""
    return head, k + 1, [], BULK


def _cut_short(line: str, ncols: int) -> bool:
    """Whether a table's last line looks cut short: a quote left open, fewer cells than the
    header's, or no name after its last comma (a row the bulk readers refuse for itself)."""
    cells = csv_row(line)
    return line.count('"') % 2 == 1 or len(cells) != ncols or not cells[-1].strip()


def _only_row(blk: Block | None) -> dict[str, Any] | None:
    """The one row of a block read from one line, by column (None: it made no row)."""
    if blk is None:
        return None
    if blk.table is not None:
        return blk.table.records(list(blk.table.cols))[0] if len(blk.table) else None
    return {f: getattr(blk.rows[0], f) for f in ROW_FIELDS} if blk.rows else None


@functools.lru_cache(maxsize=256)
def _csv_header(line: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str | None, ...]]:
    """A CSV header line's cells, stripped cells and their fields (once per distinct header: a
    sweep's log repeats one thousands of times)."""
    header = csv_row(line)
    cols = [c.strip() for c in header]
    return tuple(header), tuple(cols), tuple(_field_of(c) for c in cols)


def _pre_read_block(lines: list[str], start: int, report: str | None, pre: bytescan.Table, cols: list[str],
                    fields: list[str | None]) -> tuple[Block, int, list[int], str]:
    """_csv_block of a table found on the input's bytes, where this reader would read it as columns
    from its lines too (the same extent, no stray line, a plain header; the input's last line
    after it, not a row found there: _with_cut_row); else bytescan.Reparse."""
    j = start + 1 + pre.rows
    after = lines[j] if j < len(lines) else ""
    cut = j == len(lines) - 1 and "," in after and after != lines[start]
    if (pre.rows + 1 <= BULK_ROWS or cols != csv_row(lines[start]) or ("," in after and after != lines[start] and not cut)
            or ("," not in after and j + 1 < len(lines) and _stray_line(after) and '"' not in after
                and _continues(lines[j + 1], lines[start], len(cols)))):
        raise bytescan.Reparse  # the table's end, or its reader, is not the one found on the bytes
    blk = _pre_read_rows(lines, start, report, pre, cols, fields)
    if not cut:
        return blk, j, [], BULK
    got = _with_cut_row(blk, lines, j, cols, fields)
    if got is None:
        raise bytescan.Reparse
    return got


def _pre_read_rows(lines: list[str], start: int, report: str | None, pre: bytescan.Table, cols: list[str],
                   fields: list[str | None]) -> Block:
    """The block of the rows of a table found on the input's bytes, read as columns; else
    bytescan.Reparse."""
    j = start + 1 + pre.rows
    if not columnar.worth(pre.chars, COLUMNS_PAY_FROM):  # the text path's split reader, on the bytes
        blk = _csv_split(_RowLines(pre, start), start, j, cols, fields, report)
        if blk is None or blk.table is None or not pre.plain_name_list(list(blk.table.col("name"))):
            raise bytescan.Reparse
    else:
        blk = _csv_columns(lines, start, j, cols, fields, report, pre)
        if blk is None:
            raise bytescan.Reparse  # a cell that does not read plainly: the row reader's, on the text
    pre.trim()  # read: its bytes (the input's, where it was detached) can go
    return blk


def _batched_block(lines: list[str], start: int, report: str | None, pre: bytescan.Table, cols: Sequence[str],
                   fields: Sequence[str | None]) -> Block:
    """The block of a small summary table read with the others of its header (nsys_batch), where
    the row reader would read it as plain rows from its lines (the same extent: a blank line after
    it; a report whose rows _plain_rows reads); else bytescan.Reparse."""
    return nsys_sweep.block_of(_batched(lines, start, report, pre, cols, fields))


def _batched(lines: list[str], start: int, report: str | None, pre: bytescan.Table, cols: Sequence[str],
             fields: Sequence[str | None]) -> nsys_sweep.Batched:
    """_batched_block's table as a batched event (its block not made yet); bytescan.Reparse where
    the row reader could read it otherwise."""
    line, batch, first, n, section, rep = _batched_fields(lines, start, report, pre, cols, fields)
    return nsys_sweep.Batched("batched", line, batch=batch, first=first, n=n, section=section, report=rep)


def _batched_fields(lines: list[str], start: int, report: str | None, pre: bytescan.Table, cols: Sequence[str],
                    fields: Sequence[str | None]) -> tuple[int, Any, int, int, str, str]:
    """_batched's event's fields (line, batch, first, n, section, report)."""
    j = start + 1 + pre.rows
    if pre.rows + 1 > BULK_ROWS or (j < len(lines) and lines[j] != "") or tuple(cols) != _csv_header(pre.header)[0]:
        raise bytescan.Reparse
    rep = report if report and report not in _TRACES else \
        _rows_report(report, cols, fields, pre.batch.names[pre.first : pre.first + min(pre.rows, 50)])
    section = REPORTS.get(rep, "gpu")
    if section == "gpu-memory-size" or section.endswith("-trace"):
        raise bytescan.Reparse  # not plain rows there: the row reader's, on the text
    return start + 1, pre.batch, pre.first, pre.rows, section, rep


def stray_note(numbers: list[int]) -> str:
    """What a table interrupted by lines that are not its rows says (the rows after them are read)."""
    shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if len(numbers) > 10 else "")
    return (f"line(s) {shown} inside the table are not rows of it (program output?): left out, "
            "the table's rows after them are read")


def _csv_extent(lines: list[str], start: int, ncols: int) -> tuple[int, list[int]]:
    """Where the CSV table whose header is line index `start` ends (the first line that holds no
    comma, or its header once more: the next table), and the stray lines inside it: a line of
    program output with a row of the same width right after it does not end the table."""
    j = _table_end(lines, start)
    stray: list[int] = []
    while (j + 1 < len(lines) and _stray_line(lines[j]) and '"' not in lines[j]  # not a wrapped row's rest
           and _continues(lines[j + 1], lines[start], ncols)):
        stray.append(j)
        j = _table_end(lines, j + 1)
    try:  # its header once more: the next table begins there (two outputs one after the other)
        j = lines.index(lines[start], start + 1, j)
    except ValueError:
        pass
    return j, [k for k in stray if k < j]


def _stray_line(line: str) -> bool:
    """A line that could be program output printed into a table: not blank, not a status line,
    report title or heading of nsys's own."""
    t = line.strip()
    return bool(t) and not (t.startswith(("SKIPPED", "#", "*", "[", *_STATUS)) or _EXECUTING.search(t)
                            or _GENERATING.search(t) or _CSV_TITLE.search(t) or _DASHES.search(t))


def _glued_ends(row: str, w: int, spans: list[tuple[int, int]]) -> int:
    """How many rows of width `w` are glued before the last row on this line (line breaks lost):
    each piece is cut off while what follows it reads as a row. The test looks at a window after
    the cut, not the whole rest of the line (a line of 80,000 tokens: linear time). A cut inside
    a token is none: a row begins with its margin's blank, so that is one cell running past the
    header's width (a number of 400 digits, a long name) that no cut may read as two."""
    if w <= spans[-1][0]:
        return 0
    end = len(row.rstrip())
    k = 0
    while (end - k * w > w and (row[(k + 1) * w - 1] == " " or row[(k + 1) * w] == " ")
           and _is_console_row(row[(k + 1) * w : (k + 2) * w + 4 * w + 256], spans)):
        k += 1
    return k


def _row_like(line: str) -> bool:
    """A console line that may be a row (rows that do not read are reported): digits in it, not a
    status line of nsys's own."""
    return any(ch.isdigit() for ch in line) and _stray_line(line)


def _continues(line: str, header: str, ncols: int) -> bool:
    """A row of a CSV table `ncols` wide (not its header again)."""
    return "," in line and line != header and len(csv_row(line)) == ncols


def _csv_rows_block(lines: list[str], at: Sequence[int], cols: list[str], fields: list[str | None],
                    report: str | None) -> tuple[Block | None, list[int]]:
    """The CSV table's rows at line indices `at` read row by row: the pure-Python reader, which
    reports each line that does not read (ragged, a bad number) and decides the decimal mark."""
    bad: list[int] = []
    cells, line_nos = [], []
    for k, row in zip(at, csv_rows([lines[k] for k in at])):
        if len(row) != len(cols):
            bad.append(k + 1)  # ragged: never read with its columns shifted
            continue
        cells.append(row)
        line_nos.append(k + 1)
    name_at = fields.index("name") if "name" in fields else len(cols) - 1
    rep = _rows_report(report, cols, fields, [c[name_at] for c in cells[:50]])
    if not cells:
        return None, bad
    blk, more = _rows_to_block(rep, fields, cells, line_nos)
    if blk.section is not None and blk.section.endswith("-trace"):
        blk = _trace_from_rows(blk, rep)
    return blk, sorted(bad + more)


_TRACES = ("cuda_gpu_trace", "cuda_api_trace", "gputrace")


def _rows_report(report: str | None, cols: Sequence[str], fields: Sequence[str | None], names: list[str]) -> str:
    """The report a CSV table read row by row is of: the one named before it, else (or where that
    promised a trace the columns are not) the one its header and first names tell."""
    rep = report or _report_from_header(cols, names)
    if rep in _TRACES and not ("start" in fields and "dur" in fields):
        rep = _report_from_header(cols, names)  # the title promised a trace
    return rep


def _table_end(lines: list[str], start: int, end: int | None = None) -> int:
    """The index of the first line from `start` (up to `end`) that holds no comma (a C loop over
    slices of growing size: islice(lines, start) would step over the `start` lines before it each
    time, quadratic in a log of thousands of small tables)."""
    stop = len(lines) if end is None else min(end, len(lines))
    lo, size = start, 64
    while lo < stop:
        hi = min(lo + size, stop)
        try:
            return lo + indexOf(map(str.__contains__, lines[lo:hi], repeat(",")), False)
        except ValueError:
            lo, size = hi, size * 4
    return stop


def _holds_comma(lines: list[str], start: int, end: int) -> bool:
    """Every line in [start, end) holds a comma."""
    return _table_end(lines, start, end) == min(end, len(lines))


def _trace_from_rows(blk: Block, rep: str) -> Block:
    recs = [(r.name, r.start_ns, r.total_ns, r.line_start, r.line_end) for r in blk.rows]
    table = Rows.from_tuples(recs, ["name", "start_ns", "total_ns", "line_start", "line_end"],
                             {"calls": 1, "section": blk.section})
    return Block(section=blk.section, table=table, line_start=blk.line_start, line_end=blk.line_end, kind=rep)


BULK_ROWS = 2000  # from here on a table found on the input's bytes is read in bulk (bytescan.MIN_ROWS)
TEXT_BULK_ROWS = 64  # from here on a table of the text is read in bulk first (profconv.parse.columnar, else _csv_split;
# either gives None where a row is not plainly valid: the row reader; a 1,900-row trace 0.039 -> 0.014 s)
# a table this big pays for loading pyarrow in a process that has not (the CLI: ~0.3 s of CPU): the
# columnar reader saves ~0.2 s a 20 MB trace over _csv_split (0.25 against 0.44 s in one process)
COLUMNS_PAY_FROM = 32 << 20
SPLIT_ROWS = 4096  # rows split at a time by the pure-Python bulk reader (the pieces of one slice stay in cache)


def _csv_columns(lines: list[str], start: int, end: int, cols: list[str], fields: list[str | None],
                 report: str | None, pre: bytescan.Table | None = None) -> Block | None:
    """A big machine-written table as columns (pyarrow's reader on its own bytes: the input's, `pre`,
    where they were found there, else its lines encoded); None whenever any cell is not plainly
    valid (the caller then reads it row by row and reports the bad lines)."""
    if "grid" in fields or "block" in fields or len(set(cols)) != len(cols):
        return None
    name_col = cols[fields.index("name")] if "name" in fields else cols[-1]
    trace = "start" in fields and "dur" in fields
    want = {c: f for c, f in zip(cols, fields) if f in _OUT and c != name_col}
    data = pre.data if pre is not None else "\n".join(lines[start:end]).encode()
    got = columnar.read_csv(data, floats=[c for c, f in want.items() if f != "calls"],
                            counts=[c for c, f in want.items() if f == "calls"], texts=[name_col])
    del data
    if got is None or got.n != end - start - 1:
        return None
    names = got.texts[name_col]
    if any(not k or k != k.strip() or '"' in k for k in names.distinct):
        return None  # an empty name, spaces around one, a quote inside: the row-by-row reader's to judge
    if pre is not None and (name_col != cols[-1] or not pre.plain_names(names)):
        return None  # what the text path would rewrite in a name (or at a row's end)
    rep = report or _report_from_header(cols, names.values[:50])
    section = REPORTS.get(rep, "gpu")
    if section == "gpu-memory-size" or (section.endswith("-trace") and not trace):
        return None
    n = got.n
    # a trace's section and calls hold one value all along: views, no lists (as nvprof's traces)
    out: dict = {"section": Const(section, n) if section.endswith("-trace") else [section] * n, "name": names.values}
    for c, f in want.items():
        if not section.endswith("-trace") or f in ("start", "dur"):
            out[_OUT[f]] = got.numbers[c]
    if section.endswith("-trace"):
        out["calls"] = Const(1, n)
    line_nos = range(start + 2, start + 2 + n)
    out["line_start"] = line_nos
    out["line_end"] = line_nos
    return Block(section=section, table=Rows(out, n), line_start=start + 2, line_end=start + 1 + n, kind=rep,
                 names=names if section.endswith("-trace") else None)


class _RowLines:
    """The rows of a table found on the input's bytes, as _csv_split slices its lines (line index
    start + 1 is its first row; slices asked for in order): each slice decoded from the bytes when
    asked, so that the table is never held as text whole."""

    def __init__(self, pre: bytescan.Table, start: int) -> None:
        span = pre.data
        self.data, self.pos = span.data, span.data.find(b"\n", span.start) + 1  # after the header
        self.next = start + 1

    def __getitem__(self, rows: slice) -> list[str]:
        if rows.start != self.next:
            raise IndexError("rows are read in order")
        data, a = self.data, self.pos
        e = a
        for _ in range(rows.stop - rows.start):
            e = data.find(b"\n", e) + 1
        self.pos, self.next = e, rows.stop
        return data[a : e - 1].decode("ascii").split("\n")


def _csv_split(lines: list[str] | _RowLines, start: int, end: int, cols: list[str], fields: list[str | None],
               report: str | None) -> Block | None:
    """A big table whose name is its last column, read with str methods mapped over its lines (C
    loops; where pyarrow is not installed): only the cells kept are cut out, a name with commas
    comes quoted; None whenever a row is not plainly valid (then the row-by-row reader)."""
    ncols = len(cols)
    if ("name" in fields and fields.index("name") != ncols - 1) or len(set(cols)) != ncols:
        return None
    names: list[str] = []
    uniq: dict[str, str] = {}  # one object per distinct name
    plan: _SplitPlan | None = None
    for lo in range(start + 1, end, SPLIT_ROWS):
        body = lines[lo : min(lo + SPLIT_ROWS, end)]
        tail = _split_names(body, ncols)
        if tail is None:
            return None
        names.extend(map(uniq.setdefault, tail, tail))
        plan = plan or _SplitPlan.of(cols, fields, report, names[:50])
        if plan is None or not plan.read(body):
            return None
    if plan is None or any(k != k.strip() for k in uniq):
        return None  # a name with spaces around it: the row-by-row reader strips it (or reports it)
    n = end - start - 1
    out: dict = {"section": [plan.section] * n, "name": names}
    for f, arr in plan.values.items():
        out[_OUT[f]] = [int(v) for v in arr] if f == "calls" else arr
    if plan.section.endswith("-trace"):
        out["calls"] = [1] * n
    line_nos = range(start + 2, start + 2 + n)
    out["line_start"] = line_nos
    out["line_end"] = line_nos
    return Block(section=plan.section, table=Rows(out, n), line_start=start + 2, line_end=start + 1 + n,
                 kind=plan.report)


_QUOTED = re.compile(r',"([^"]*(?:""[^"]*)*)"\Z')  # a quoted last field (quotes inside doubled) after its comma


def _split_names(body: list[str], ncols: int) -> list[str] | None:
    """The last field (the name) of each row, or None when a row has more or fewer fields than
    the header, a carriage return, quotes around anything but its last field, or no name."""
    # where the first quote is: -1 for a plain row; else only a quoted last field may hold quotes
    qpos = list(map(str.find, body, repeat('"')))
    # the commas before the first quote; a plain row's before its last character (which a valid
    # row never ends with: its name would be empty, and that is refused below)
    counts = list(map(str.count, body, repeat(","), repeat(0), qpos))
    if counts.count(ncols - 1) != len(body) or "\r" in "".join(body):
        return None
    tail = [t for _, _, t in map(str.rpartition, body, repeat(","))]
    if qpos.count(-1) != len(qpos):
        for k in [k for k, q in enumerate(qpos) if q >= 0]:
            m = _QUOTED.match(body[k], qpos[k] - 1)  # the quoted field, from the comma before its quote
            if m is None:
                return None
            tail[k] = m.group(1).replace('""', '"')
    return None if "" in tail else tail


class _SplitPlan:
    """Which leading fields of a table's rows _csv_split keeps, and their values so far."""

    def __init__(self, report: str, section: str, want: list[tuple[int, str]]) -> None:
        self.report, self.section, self.want = report, section, want
        self.values = {f: array("d") for _, f in want}
        last = max(k for k, _ in want)
        wanted = {k for k, _ in want}
        # the wanted leading fields cut by one anchored match a row (every row has ncols - 1 commas)
        self.lead = re.compile("".join("([^,]*)," if k in wanted else "[^,]*," for k in range(last + 1)))

    @classmethod
    def of(cls, cols: list[str], fields: list[str | None], report: str | None, names: list[str]) -> _SplitPlan | None:
        rep = report or _report_from_header(cols, names)
        section = REPORTS.get(rep, "gpu")
        trace = section.endswith("-trace")
        if section == "gpu-memory-size" or (trace and not ("start" in fields and "dur" in fields)):
            return None
        want = [(k, f) for k, f in enumerate(fields) if f in _OUT and (not trace or f in ("start", "dur"))]
        return cls(rep, section, want) if want else None

    def read(self, body: list[str]) -> bool:
        """The kept cells of these rows added to `values`; False where one is not plainly valid."""
        found = list(map(self.lead.match, body))
        if None in found:
            return False
        columns = list(zip(*(m.groups() for m in cast("list[re.Match[str]]", found))))
        for (_, f), col in zip(self.want, columns):
            if "_" in "".join(col):
                return False
            try:
                arr = array("d", map(float, col))
            except ValueError:
                return False
            # a NaN or an infinity anywhere makes the sum one (an overflowing sum only sends the
            # table to the slower readers)
            if not math.isfinite(sum(arr)) or (len(arr) and min(arr) < 0) or (
                    f == "calls" and not all(map(float.is_integer, arr))):
                return False
            self.values[f].extend(arr)
        return True


_OUT = {"pct": "time_pct", "time": "total_ns", "calls": "calls", "avg": "avg_ns", "med": "med_ns",
        "min": "min_ns", "max": "max_ns", "std": "std_ns", "start": "start_ns", "dur": "total_ns"}


class _Scan:
    """One pass of the nsys readers over a document's lines: what they found so far, and the
    report whose table comes next (named by a status line, a title or a heading)."""

    def __init__(self, lines: list[str], pre: bytescan.PreRead | None = None) -> None:
        self.lines = lines
        self.pre = pre  # tables found on the input's bytes (their rows are blank lines)
        self.n = len(lines)
        self.result = DialectResult()
        self.events: list[grouping.Event] = []
        self.report: str | None = None

    def took(self, blk: Block | None, i: int, j: int, bad: list[int]) -> int:
        """A table read from line i + 1 through line j: its block (if any rows made one), its lines
        claimed, the lines that made no row reported; the next table is no named report's."""
        if blk is not None:
            self.events.append(grouping.Event("block", i + 1, block=blk))
        self.result.claimed.update(range(i + 1, j + 1))
        self.result.unplaced.extend(bad)
        self.report = None
        return j

    def not_read(self, report: str, what: str, i: int, j: int) -> int:
        """Lines i + 1 through j: a table of a report profconv does not read (claimed, with a note)."""
        self.result.claimed.update(range(i + 1, j + 1))
        self.result.lined_notes[len(self.result.notes)] = (i + 1, j)
        self.result.notes.append(_not_read_note(report, what, i + 1, j))
        self.report = None
        return j


def _report_line(scan: _Scan, i: int, line: str) -> int | None:
    """A status line, title or heading that names the next table's report (or says none follows)."""
    # (each pattern is searched for only where the words it needs are in the line: a substring test is cheaper)
    if ("Executing '" in line or "Processing [" in line or "/reports/" in line or "\\reports\\" in line) \
            and (m := _EXECUTING.search(line)):
        scan.report = m.group(1) or m.group(2) or m.group(3)
        scan.result.claimed.add(i + 1)
    elif line[:8] == "SKIPPED:":
        scan.report = None  # that report printed no table: the next table is not its
    elif _generating(line):
        if scan.report is None:  # nothing carried past it: a fresh parse may begin here (profconv.parse.stream)
            scan.result.resume[i + 1] = ()
        scan.events.append(grouping.Event("start", i + 1))
    elif "**" in line and (m := _CSV_TITLE.search(line)):
        scan.report = m.group(1)
    elif ("Statistics" in line or "Summary" in line) and (title := _legacy_title(line)):
        scan.report = title
    elif line.lstrip()[:1] == "#" and (m := _REPORT_NAME.search(line)):
        scan.report = m.group(1)  # a heading that names the report ('#### Table 2: CUDA 'cuda_gpu_kern_sum'')
    else:
        return None
    return i + 1


def _generating(line: str) -> bool:
    """Whether _GENERATING is found in the line, by substring searches (a sweep's every run has such a
    line): its '.*' crosses no line end, and the first "Generating '" or "Running " leaves the most
    after it."""
    if "\n" in line:
        return _GENERATING.search(line) is not None
    if "Generating SQLite file" in line or "Saving report to file" in line:
        return True
    k = line.find("Generating '")
    if k >= 0 and line.find(".qdstrm'", k + 12) >= 0:
        return True
    k = line.find("Running ")
    return k >= 0 and line.find("nsys", k + 8) >= 0


def _legacy_title(line: str) -> str | None:
    """A legacy report title names its statistics ('NVTX Push-Pop Range Statistics:'): prose that
    mentions NVTX or OpenACC ('we wrapped the loop in NVTX ranges') names no table."""
    title = next((rep for t, rep in TITLES if t in line and "Executing" not in line
                  and ("Statistics" in line or "Summary" in line)), None)
    return title if title and not line.strip().startswith(("Time", "-")) else None


def _markdown_reader(scan: _Scan, i: int, line: str) -> int | None:
    if line.lstrip()[:1] != "|" or (md := _markdown_table(scan.lines, i, scan.report)) is None:
        return None
    return scan.took(md[0], i, md[1], md[2])


def _gui_reader(scan: _Scan, i: int, line: str) -> int | None:
    if "\t" not in line or (gui := _gui_table(scan.lines, i)) is None:
        return None
    report = scan.report
    j = scan.took(gui[0], i, gui[1], gui[2])
    scan.report = report  # a copied GUI table names no report of its own
    return j


def _csv_not_read_reader(scan: _Scan, i: int, line: str) -> int | None:
    """A CSV table of a named report profconv does not read (two fields or more: um_cpu_page_faults_sum's
    table has two, 'CPU Page Faults,CPU Instruction Address')."""
    stripped = line.strip()
    if ("," not in stripped or ", " in stripped or "  " in stripped or stripped.startswith(("SKIPPED", *_STATUS))
            or (what := _not_read(scan.report)) is None):
        return None
    return scan.not_read(cast(str, scan.report), what, i, _table_end(scan.lines, i))


_CSV_HEADER = re.compile(r'^"?(Time ?\(%\)|Start \(ns\)|Total \()')


def _csv_reader(scan: _Scan, i: int, line: str) -> int | None:
    if not _csv_header_line(line):
        return None
    blk, j, bad, how = _csv_block(scan.lines, i, scan.report, scan.pre.take(i) if scan.pre else None)
    if how == ROWS:
        return scan.took(blk, i, j, bad)
    # the rows are claimed by their range (no set of a number per row); rows read in bulk are blank
    # lines from now on, the text of rows read as plain rows stays in the lines (for a row found
    # damaged later), blank in what other dialects and the run context are looked for in
    (scan.result.bulk if how == BULK else scan.result.rows_read).append((i + 2, j - len(bad)))
    scan.took(blk, i, i + 1, bad)
    scan.result.claimed.update(bad)  # the table's last line, cut short (_with_cut_row)
    return j


@functools.lru_cache(maxsize=256)
def _csv_header_line(line: str) -> bool:
    """A line the CSV reader reads a table from (once per distinct header: a sweep repeats one)."""
    stripped = line.strip()
    return bool(_CSV_HEADER.match(stripped) and "," in stripped
                and not stripped.startswith(("Time(%),Time,", '"Time(%)","Time",')))  # that one is nvprof's


def _batch_reader(scan: _Scan, i: int, line: str, pre: bytescan.Table) -> int | None:
    """_csv_reader of a header whose table was read with the others of its header (nsys_batch):
    the same claims and rows read (_csv_block's way), its block an event not made yet (nsys_sweep:
    a sweep's thousands of runs become profiles at once)."""
    if not _csv_header_line(line):
        return None
    pre.used = True
    _, cols, fields = _csv_header(scan.lines[i])
    nsys_sweep.add(scan.events, *_batched_fields(scan.lines, i, scan.report, pre, cols, fields))
    j = i + 1 + pre.rows
    scan.result.rows_read.append((i + 2, j))
    scan.result.claimed.add(i + 1)
    scan.report = None
    return j


def _runs_at(scan: _Scan, i: int, pre: dict[int, bytescan.Table]) -> int | None:
    """From a `Generating …` line at index i (no report named before it): the runs of a sweep's
    shape that follow one another -- that start line, a status line naming the report, a blank line,
    a table read with the others of its header (nsys_batch), a blank line -- read at once, with what
    the readers note of each line one at a time (_report_line's start and report, _batch_reader's
    table); the index of the blank line after the last, or None where the first run is not of that
    shape (any line another reader could take, or that _batched_fields would refuse)."""
    lines, n = scan.lines, scan.n
    ks: list[int] = []
    ts: list[bytescan.Table] = []
    k = i
    while (t := pre.get(k + 3)) is not None and t.batch is not None and 0 < t.rows < BULK_ROWS and (
            not ts or t.batch is ts[0].batch):
        j = k + 4 + t.rows
        if k in pre or k + 1 in pre or lines[k + 2] or (j < n and lines[j]):
            break
        ks.append(k)
        ts.append(t)
        k = j + 1
    got = _shaped(lines, ks, ts)
    if not got:
        return None
    m = len(got)
    ks, ts = ks[:m], ts[:m]
    for t in ts:
        t.used = True
    heads = [k + 4 for k in ks]  # line numbers (1-based) of the headers
    sizes = [t.rows for t in ts]
    nsys_sweep.extend(scan.events, ts[0].batch, {
        "starts": [k + 1 for k in ks], "heads": heads, "firsts": [t.first for t in ts], "sizes": sizes,
        "sections": [s for s, _ in got], "reports": [r for _, r in got]})
    scan.result.resume.update(dict.fromkeys([k + 1 for k in ks], ()))
    scan.result.claimed.update([k + 2 for k in ks], heads)
    scan.result.rows_read.extend(zip([h + 1 for h in heads], map(add, heads, sizes)))
    return ks[-1] + 4 + ts[-1].rows


def _shaped(lines: list[str], ks: list[int], ts: list[bytescan.Table]) -> list[tuple[str, str]]:
    """The (section, report) of the runs at start lines `ks` (their tables `ts`) that are of
    _runs_at's shape, up to the first that is not."""
    starts = [_plain_start(lines[k]) for k in ks]
    reports = [_status_report(lines[k + 1]) if ok else None for k, ok in zip(ks, starts)]
    out: list[tuple[str, str]] = []
    for k, t, rep in zip(ks, ts, reports):
        fields = _header_fields(lines[k + 3], t.header) if rep is not None else None
        got = fields[rep] if fields is not None else None
        if got is None:
            break
        out.append(got)
    return out


def _plain_start(line: str) -> bool:
    """A line _report_line takes as a profile's start, and nothing before that in it (no '\\r')."""
    return ("\r" not in line and "Executing '" not in line and "Processing [" not in line and "/reports/" not in line
            and "\\reports\\" not in line
            and line[:8] != "SKIPPED:" and _generating(line))


_SCRIPT = re.compile(r"[/\\](\w+)\.py\]")  # _EXECUTING's second pattern after its '] with ['


def _status_report(line: str) -> str | None:
    """The report a status line that starts with 'Processing [' names where _report_line takes it
    as one (_EXECUTING's second pattern: its greedy '.*' the last '] with [' that the script's name
    follows, its lazy '.*?' the first such name after it); None: not such a line, or one with
    'Executing '' or a '\\r' in it (left to _report_line)."""
    if not line.startswith("Processing [") or "Executing '" in line or "\r" in line:
        return None
    q = line.rfind("] with [")
    while q >= 12:
        got = _script(line[q + 8 :])
        if got is not None:
            return got
        q = line.rfind("] with [", 12, q + 7)
    return None


@functools.lru_cache(maxsize=256)
def _script(after: str) -> str | None:
    """The script's name _SCRIPT finds first in what follows a '] with [' (a sweep's runs: one text)."""
    m = _SCRIPT.search(after)
    return m.group(1) if m is not None else None


@functools.lru_cache(maxsize=64)
def _header_fields(line: str, header: str) -> dict[str, tuple[str, str]] | None:
    """For a header line and the header its batched table was found with: per report named before
    it, the (section, report) its table is read with where the CSV reader reads it as a batched
    table (parse's test, _batch_reader and _batched_fields), None for a report whose table is not.
    None: no such header."""
    cols = _csv_header(line)[1]
    if ("\r" in line or not _csv_first(line) or not _csv_header_line(line) or _dash_line(line)
            or cols != _csv_header(header)[0]):
        return None
    return _ReportFields()


class _ReportFields(dict):
    """(section, report) of a batched table by the report named before it: None where parse would not
    give it to _batch_reader or _batched_fields would refuse it."""

    def __missing__(self, report: str) -> tuple[str, str] | None:
        section = REPORTS.get(report, "gpu")
        ok = _not_read(report) is None and report not in _TRACES and not (
            section == "gpu-memory-size" or section.endswith("-trace"))
        self[report] = got = (section, report) if ok else None
        return got


def _console_reader(scan: _Scan, i: int, line: str) -> int | None:
    """A console table: a header, the dashes under it, one row a line."""
    head = _console_header(scan, i, line)
    if head is None:
        return None
    header, d, width, spans = head
    cols = _header_cells(header, spans)
    fields = [_field_of(c) for c in cols]
    if "name" not in fields and not any(f in ("mbytes", "kib", "total") for f in fields) and not _not_read(scan.report):
        return None
    got = _ConsoleRows(scan.lines, spans, fields, width or len(header))
    got.stray.extend(k + 1 for k in range(i + 1, d) if scan.lines[k].strip())  # between header and dashes
    j = got.read(d + 1)
    rep = scan.report or _report_from_header(cols, [c[-1] for c in got.cells if c])
    if (what := _not_read(rep)) is not None:
        return scan.not_read(rep, what, i, j)
    commented = _drop_comments(got.cells, fields, spans[-1][1] - spans[-1][0], REPORTS.get(rep) == "nvtx")
    scales = {f: _col_scale(c) for f, c in zip(fields, cols) if f in ("start", "dur")}
    blk, bad = _rows_to_block(rep, fields, got.cells, got.line_nos, scales)
    if commented:
        blk.notes.append(f"{commented} row(s) end with a comment after ' # ' (added to the pasted "
                         "table): read as a comment, not as part of the name")
    if got.stray:
        blk.notes.append(stray_note(got.stray))
    if blk.section is not None and blk.section.endswith("-trace"):
        blk = _trace_from_rows(blk, rep)
    return scan.took(blk, i, j, bad)


def _console_header(scan: _Scan, i: int, line: str) -> tuple[str, int, int, list[tuple[int, int]]] | None:
    """A console table's header at line i: (its text, the index of its dash line, the width of a
    row where a paste glued the dashes onto the header (else 0), the dash runs); None if none.
    nsys 2019/2020 (rai) may print a blank line between header and dashes, and a paste that lost
    its line breaks glues them onto the header ('…  Name     -------  ----')."""
    lines, n = scan.lines, scan.n
    if glued := _GLUED_HEADER.match(line):
        width = glued.start(2)
        return line[:width], i, width, [(m.start(), m.end()) for m in re.finditer("-+", line[width:])]
    d = i + 2 if i + 2 < n and not lines[i + 1].strip() and line.strip() else i + 1
    if d < n and _dash_line(lines[d]):
        # headers may overhang their dash run: the text between runs is taken (_header_cells)
        return line, d, 0, [(m.start(), m.end()) for m in re.finditer("-+", lines[d])]
    past = _dashes_after_stray(lines, i) if line.strip() else None
    if past is not None:
        # program output between the header and its dashes: the header is the line that names
        # the columns (the stray lines are reported by the reader)
        spans = [(m.start(), m.end()) for m in re.finditer("-+", lines[past])]
        if _named_columns(line, spans) >= 2 and all(_named_columns(lines[k], spans) < 2 for k in range(i + 1, past)):
            return line, past, 0, spans
    return None


def _dashes_after_stray(lines: list[str], i: int) -> int | None:
    """The index of a dash line at most STRAY_RUN lines after index i with program output (and
    blank lines: rai's) between; None where there is none or a line between is nsys's own."""
    for d in range(i + 1, min(len(lines), i + 2 + STRAY_RUN)):
        if _dash_line(lines[d]):
            return d if any(lines[k].strip() for k in range(i + 1, d)) else None
        if lines[d].strip() and not _stray_line(lines[d]):
            return None
    return None


def _dash_line(line: str) -> bool:
    return "---" in line and not line.replace("-", "").strip()  # ("---": what _DASHES finds)


def _named_columns(line: str, spans: list[tuple[int, int]]) -> int:
    """How many of a header line's cells (cut at the dash runs under it) name a column read."""
    return sum(1 for c in _header_cells(line, spans) if _field_of(c) is not None)


class _ConsoleRows:
    """The rows of one console table, cut at its header's dash runs (`spans`), padded to `width`."""

    def __init__(self, lines: list[str], spans: list[tuple[int, int]], fields: list[str | None], width: int) -> None:
        self.lines, self.spans, self.fields, self.width = lines, spans, fields, width
        self.cells: list[list[str]] = []
        self.line_nos: list[int] = []
        self.stray: list[int] = []

    def read(self, j: int) -> int:
        """Read rows from line index j; the index after the table."""
        lines, n = self.lines, len(self.lines)
        while j < n and not FENCE.match(lines[j]):  # a closing ``` or ~~~ ends it
            step = self._skip(j)
            if step is None:
                break
            if step:
                j += step
                continue
            self._row(j, lines[j].rstrip("\r"))
            j += 1
        return j

    def _skip(self, j: int) -> int | None:
        """Lines to step over before line j is a row (0: it is one), None where the table ends."""
        row = self.lines[j]
        if not row.strip():
            # rai output puts a blank line between rows: the table goes on if a row follows (or
            # program output, then a row)
            return 1 if self._row_after(j + 1, blank=False) else None
        if ELISION.match(row):  # '...' / '< snip >': rows were left out here, not a row
            return 1
        if not any(ch.isdigit() for ch in row) or _EXECUTING.search(row) or _GENERATING.search(row) \
                or row.lstrip().startswith("Generating "):
            if _stray_line(row) and self._row_after(j + 1, blank=True):
                self.stray.append(j + 1)  # program output inside the table: its rows go on after it
                return 1
            return None  # a status line glued under the table ('Generating CUDA Kernel Statistics...')
        return 0

    def _row_after(self, k: int, blank: bool) -> bool:
        """A row of the table at index k, or after one line there: a blank line (`blank`: rai's,
        after program output) or a line of program output (after a blank line)."""
        lines = self.lines
        if k >= len(lines):
            return False
        if _is_console_row(lines[k], self.spans) or (blank and _row_like(lines[k])):
            return True
        between = not lines[k].strip() if blank else _stray_line(lines[k])
        return between and k + 1 < len(lines) and _is_console_row(lines[k + 1], self.spans)

    def _row(self, j: int, row: str) -> None:
        if "\r" in row:  # a carriage return inside a row: damage ('5\r0.1' is not 50.1), reported
            self.cells.append([])
            self.line_nos.append(j + 1)
            return
        # rows glued together (line breaks lost): each was padded to the header's width
        w = self.width
        glued = _glued_ends(row, w, self.spans)
        for g in range(glued):
            self.cells.append(_console_cells(row[g * w : (g + 1) * w], self.spans))
            self.line_nos.append(j + 1)
        row = row[glued * w :]
        if len(row.rstrip()) > w and row[w:].strip().startswith(_STATUS):
            row = row[:w]  # a status line glued after the last row
        self.cells.append(_console_cells(row, self.spans, self.fields))
        self.line_nos.append(j + 1)


def _header_resets(scan: _Scan, i: int, line: str) -> int | None:
    """A report's header whose table did not read (its dash line lost): the report named before it
    is not the next table's."""
    if scan.report is not None and line.strip().startswith(("Time (%)", "Time(%)")):
        scan.report = None
    return None


@functools.lru_cache(maxsize=64)
def _csv_first(line: str) -> bool:
    """Whether the readers before _csv_reader pass over this line whatever the scan's state (the
    CSV reader then sees it first), given a report named before it that is read: no status line,
    title or heading (_report_line), no markdown or GUI table (_markdown_reader, _gui_reader)."""
    lead = line.lstrip()[:1]
    return not (_EXECUTING.search(line) or line[:8] == "SKIPPED:" or _GENERATING.search(line)
                or _CSV_TITLE.search(line) or _legacy_title(line) or lead in ("#", "|") or "\t" in line)


# the readers, in the order each line is offered to them: the first that takes it reads on from it
_READERS = (_report_line, _markdown_reader, _gui_reader, _csv_not_read_reader, _csv_reader, _console_reader,
            _header_resets)


def parse(doc: Document) -> DialectResult:
    scan = _Scan(doc.lines, doc.pre)
    i = 0
    pre = scan.pre.tables if scan.pre is not None else {}
    while i < scan.n:
        line = scan.lines[i].replace("\r", "")
        if not line and (i + 1 == scan.n or "-" not in scan.lines[i + 1] or not _dash_line(scan.lines[i + 1])):
            i += 1  # a blank line: no reader takes it (only _console_reader, above a line of dashes)
            continue
        if line[:11] == "Generating " and scan.report is None and (j := _runs_at(scan, i, pre)) is not None:
            i = j  # a sweep's runs, each a start, a status line and a batched table, read at once
            continue
        t = pre.get(i)
        if t is not None and _csv_first(line) and _not_read(scan.report) is None:
            # a table found on the bytes whose header line no reader before the CSV reader takes
            # (a sweep's thousands of runs: one header line each)
            j = _csv_reader(scan, i, line) if t.batch is None else _batch_reader(scan, i, line, t)
            if j is not None:
                i = j
                continue
        for reader in _READERS:
            j = reader(scan, i, line)
            if j is not None:
                i = j
                break
        else:
            i += 1
    result = scan.result
    kinds, sections = nsys_sweep.reports(scan.events)
    kinds.update(ev.block.kind for ev in scan.events if ev.block is not None)
    sections.update(ev.block.section for ev in scan.events if ev.block is not None)
    result.profiles = grouping.group(nsys_sweep.events(scan.events), TOOL)
    combined = not kinds.isdisjoint(READ_AS_GPU) and not kinds.isdisjoint(_SPECIFIC_GPU)
    traced = not sections.isdisjoint(_TRACE_SUMMARY)
    for prof in result.profiles if combined or traced else ():  # (thousands of runs of neither: no loop)
        if prof.sweep is None:  # (a sweep's profile holds one table: neither pass changes it)
            _drop_repeated_gpu_rows(prof, result.notes)
            _summarize_traces(prof)
    return result


_SPECIFIC_GPU = {"cuda_gpu_kern_sum", "gpukernsum", "cuda_gpu_mem_time_sum", "gpumemtimesum"}
_LAUNCH_SUFFIX = re.compile(r" \[(?:grid|block) [^\]]*\]$")


def _drop_repeated_gpu_rows(prof: RawProfile, notes: list[str]) -> None:
    """nsys's combined GPU report (cuda_gpu_sum, gpusum: kernels and memory operations in one table)
    printed beside cuda_gpu_kern_sum or cuda_gpu_mem_time_sum repeats their rows: ranked together, every
    kernel would count twice. The combined table's rows that one of those reports holds (same name; a
    kernel split by launch configuration counts as its name) are left out, with a note; its other rows stay."""
    specific = [b for b in prof.blocks if b.kind in _SPECIFIC_GPU]
    combined = [b for b in prof.blocks if b.kind in READ_AS_GPU]
    if not specific or not combined:
        return
    names = {_LAUNCH_SUFFIX.sub("", n) for b in specific for n in _names_of(b)}
    for blk in combined:
        kept = [r for r in blk.rows if _LAUNCH_SUFFIX.sub("", r.name) not in names]
        left = len(blk.rows) - len(kept)
        if not left:
            continue
        said = (f"{left} row(s) of nsys report {blk.kind} (all GPU work in one "
                f"table) repeat {' and '.join(sorted({b.kind for b in specific if b.kind}))} of the same run: "
                "counted once, from the latter")
        if kept:
            blk.rows = kept
            blk.rows_left_out = left
            blk.notes.append(said)
        else:
            prof.blocks.remove(blk)
            notes.append(f"lines {blk.line_start}-{blk.line_end}: {said}")


def _names_of(blk: Block) -> list[str]:
    """The names of a block's rows: its Row objects' and its columns' (a table read as columns)."""
    names = [r.name for r in blk.rows]
    if blk.table is not None and blk.table.has("name"):
        names.extend(blk.table.col("name"))
    if blk.span is not None:
        names.extend(blk.span.col("name"))
    return names


_TRACE_SUMMARY = {"gpu-trace": "gpu", "api-trace": "api"}


def _not_read_note(report: str, what: str, first: int, last: int) -> str:
    return f"lines {first}-{last}: {not_read_text(report, what)}"


def not_read_text(report: str, what: str) -> str:
    """The note on a report's table profconv does not read, after its 'lines A-B: '."""
    return (f"nsys report {report} ({what}) is not read: profconv ranks the per-name "
            "summaries (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, osrt_sum, nvtx_sum)")


def _summarize_traces(prof: RawProfile) -> None:
    """A trace report (cuda_gpu_trace, cuda_api_trace, gputrace) gets the per-name summary that ranks
    its kernels and memcopies (or API calls), as nvprof's traces do (traces.summarize_trace) --
    unless the profile already holds nsys's own summary of that section (cuda_gpu_kern_sum,
    cuda_gpu_mem_time_sum, cuda_api_sum): the same events would be counted twice."""
    have = {b.section for b in prof.blocks}
    for blk in list(prof.blocks):
        target = _TRACE_SUMMARY.get(blk.section or "")
        if target is None or target in have or blk.table is None or not len(blk.table):
            continue
        summary = summarize_trace(blk.table, target, text_bases(blk.names) if blk.names is not None else None)
        summary.kind = f"{blk.kind or blk.section} summary"
        prof.blocks.append(summary)
        have.add(target)


# a stats table copied from the Nsight Systems GUI: tab-separated, times with their units
# ('583.496 μs'), shares with '%', a Category column (CUDA_KERNEL, MEMORY_OPER, CUDA_API, …)
_GUI_FIELDS = {"time": "pct", "time (%)": "pct", "total time": "time", "instances": "calls", "count": "calls",
               "num calls": "calls", "calls": "calls", "avg": "avg", "med": "med", "min": "min", "max": "max",
               "stddev": "std", "std dev": "std", "category": "category", "operation": "name", "name": "name",
               "range": "name", "style": "style"}
_GUI_SECTIONS = {"CUDA_KERNEL": "gpu", "MEMORY_OPER": "gpu", "CUDA_API": "api", "OS_RUNTIME": "os-runtime",
                 "NVTX": "nvtx", "OPENACC": "openacc"}


def _gui_table(lines: list[str], i: int) -> tuple[Block | None, int, list[int]] | None:
    """A GUI-copied stats table from line index i: its block, the index after it and the lines
    that did not read; None when line i is not such a header."""
    cols = [c.strip().lower() for c in lines[i].rstrip("\r").split("\t")]
    fields = [_GUI_FIELDS.get(c) for c in cols]
    if None in fields or "name" not in fields or "time" not in fields or "pct" not in fields or len(cols) < 4:
        return None
    rows: list[Row] = []
    bad: list[int] = []
    at, end = _gui_extent(lines, i, len(cols))
    # the decimal mark from every cell of the table ('84,4%' beside '583,496 μs': a de_DE GUI)
    numeric = [c.strip() for k in at for f, c in zip(fields, lines[k].split("\t"))
               if f not in (None, "name", "category", "style", "calls")]
    counts = [c.strip() for k in at for f, c in zip(fields, lines[k].split("\t")) if f == "calls"]
    loc = units.decide_locale(numeric, counts)
    notes = [units.AMBIGUOUS_NOTE] if loc.ambiguous else []
    if len(at) < end - i - 1:  # program output among the rows: passed over, said
        notes.append(stray_note(sorted(set(range(i + 2, end + 1)) - {k + 1 for k in at})))
    for j in at:
        cells = [c.strip() for c in lines[j].rstrip("\r").split("\t")]
        v: dict[str, float] = {}
        name = category = ""
        try:
            for f, c in zip(fields, cells):
                if f == "name":
                    name = c
                elif f == "category":
                    category = c
                elif f == "style":
                    continue
                elif f == "pct":
                    if not c.endswith("%"):
                        raise ValueError(c)
                    v[f] = units.percent(c, loc)
                elif f == "calls":
                    v[f] = units.count(c, loc)
                elif f is not None:
                    v[f] = units.time_ns(c, locale=loc)  # a time without its unit raises: never read in a guessed unit
        except ValueError:
            bad.append(j + 1)
            continue
        if not name or (category and category not in _GUI_SECTIONS):
            bad.append(j + 1)
            continue
        rows.append(Row(section=_GUI_SECTIONS.get(category, "gpu"), name=name, line_start=j + 1, line_end=j + 1,
                        time_pct=v.get("pct", float("nan")), total_ns=v["time"],
                        calls=int(v["calls"]) if "calls" in v else None, avg_ns=v.get("avg", float("nan")),
                        med_ns=v.get("med", float("nan")), min_ns=v.get("min", float("nan")),
                        max_ns=v.get("max", float("nan")), std_ns=v.get("std", float("nan"))))
    if not rows:
        return None if not bad else (None, end, bad)
    sections = {r.section for r in rows}
    section = sections.pop() if len(sections) == 1 else "gpu"
    if len(sections):  # kernels and API calls in one copied table: not one ranking, keep them apart
        return None, end, [k + 1 for k in at]
    return Block(section=section, rows=rows, line_start=i + 1, line_end=end, kind="gui", notes=notes), end, bad


def _gui_extent(lines: list[str], i: int, ncols: int) -> tuple[list[int], int]:
    """The indices of a GUI-copied table's rows after its header at index i, and the index after
    the table: a line of program output among them (a row follows within STRAY_RUN lines) is
    passed over; a blank line or another table ends it."""
    def row(k: int) -> bool:
        return lines[k].count("\t") == ncols - 1 and bool(lines[k].strip())

    at: list[int] = []
    j = i + 1
    while j < len(lines):
        if row(j):
            at.append(j)
            j += 1
            continue
        k = next((k for k in range(j + 1, min(len(lines), j + 1 + STRAY_RUN)) if row(k)), None)
        if k is None or not all(_stray_line(lines[x]) for x in range(j, k)):
            break
        j = k
    return at, (at[-1] + 1 if at else i + 1)


_MD_ROW = re.compile(r"^\s*\|.*\|\s*$")
_MD_RULE = re.compile(r"^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*(?::?-{3,}:?\s*)?$"  # markdown: |---|:--:|
                      r"|^\s*\+(?:-{3,}\+)+\s*$")  # `nsys stats --format table`: +----+----+
_REPORT_NAME = re.compile(r"\b(" + "|".join(sorted(REPORTS, key=len, reverse=True)) + r")\b")


def _markdown_rule(lines: list[str], i: int) -> int | None:
    """The index of the rule under a markdown (or grid) header at index i: the next line, or the
    one after a line of program output; None when line i is no such header."""
    if i + 1 >= len(lines) or not _MD_ROW.match(lines[i]):
        return None
    if _MD_RULE.match(lines[i + 1]):
        return i + 1
    if i + 2 < len(lines) and _stray_line(lines[i + 1]) and not _MD_ROW.match(lines[i + 1]) and _MD_RULE.match(lines[i + 2]):
        return i + 2
    return None


def _markdown_table(lines: list[str], i: int, report: str | None) -> tuple[Block | None, int, list[int]] | None:
    """A stats table written as a markdown pipe table (course reports, READMEs) or printed by `nsys
    stats --format table` (a grid of +---+ borders): the header with a Time (%) and a Total Time or
    Total column, the `|---|---|` (or `+---+---+`) rule, then one `| … |` line per row.
    Its block, the index after it and the rows that did not read; None when line i is not one."""
    rule = _markdown_rule(lines, i)
    if rule is None:
        return None
    cols = [c.strip().strip("`*").strip() for c in clean(lines[i]).split("\t")]
    fields = [_field_of(c) for c in cols]
    if "pct" not in fields or not any(f in ("time", "mbytes", "kib", "total") for f in fields):
        return None
    j = rule + 1
    cells: list[list[str]] = []
    line_nos: list[int] = []
    stray: list[int] = [i + 2] if rule > i + 1 else []  # program output between the header and its rule
    while j < len(lines) and (_MD_ROW.match(lines[j]) or (
            _stray_line(lines[j]) and j + 1 < len(lines) and _MD_ROW.match(lines[j + 1]))):
        if not _MD_ROW.match(lines[j]):
            stray.append(j + 1)  # program output inside the table: its rows go on after it
            j += 1
            continue
        row = [c.strip().strip("`").strip() for c in clean(lines[j]).split("\t")]
        cells.append(row if len(row) == len(cols) else [])  # a ragged row is reported, never shifted
        line_nos.append(j + 1)
        j += 1
    if "name" not in fields:  # times without a column saying of what (cut by the author): reported
        return None, j, line_nos
    if not cells:
        return None, j, []
    k = fields.index("name")
    rep = report or _report_from_header(cols, [c[k] for c in cells if c])
    blk, bad = _rows_to_block(rep, fields, cells, line_nos)
    if stray:
        blk.notes.append(stray_note(stray))
    return blk, j, bad


_COMMENT = re.compile(r"^(.*?\S)(\s+)#\s+\S.*$")


def _drop_comments(cells: list[list[str]], fields: list[str | None], width: int, nvtx: bool) -> int:
    """Remove the comments a report's author appended to the rows of a pasted table
    ('cudaMalloc            # 显存分配 API'): a '#' standing alone after the name. No kernel, API,
    OS-call or memory-operation name holds one; an NVTX range may, so there the comment must
    start two blanks after the name or past the column's width. Returns the rows changed."""
    if not fields or fields[-1] != "name":
        return 0
    changed = 0
    for cell in cells:
        if not cell or "#" not in cell[-1]:
            continue
        m = _COMMENT.match(cell[-1])
        if m is None or (nvtx and len(m.group(2)) < 2 and len(m.group(1)) < width):
            continue
        cell[-1] = m.group(1)
        changed += 1
    return changed


def _is_console_row(row: str, spans: list[tuple[int, int]]) -> bool:
    """A line that reads as a row of the table whose dash runs are `spans`: its cells but the
    name are numbers."""
    if not row.strip():
        return False
    cells = _console_cells(row.replace("\r", ""), spans)
    return len(cells) == len(spans) and all(c[:1].isdigit() for c in cells[:-1] if c)


def _console_cells(row: str, spans: list[tuple[int, int]], fields: list[str | None] | None = None) -> list[str]:
    """A console row cut at its header's dash runs (numbers may hold spaces: '37 312 001'),
    or split on whitespace when the row does not line up with them (pasted, re-indented)."""
    ends = [e for _, e in spans[:-1]]
    # a cut between two digits one space apart would split a number grouped with spaces ('51 467')
    split_number = any(row[e - 1 : e].isdigit() and row[e + 1 : e + 2].isdigit() for e in ends)
    if (len(row) > spans[-1][0] and all(row[e : e + 1] in (" ", "") for e in ends) and row[spans[-1][0] - 1] == " "
            and not split_number):
        cells, lo = [], 0
        for _, e in spans[:-1]:
            cells.append(row[lo:e].strip())
            lo = e
        cells.append(row[spans[-1][0] :].strip())
        if all(cells):
            return cells
        if fields is not None and len(fields) == len(cells) and all(c or f is None for c, f in zip(cells, fields)):
            return cells  # blank cells only in columns not read (a trace's grid and memcpy columns)
    grouped = _grouped_cells(row, len(spans), fields)
    if grouped is not None:  # [] when the digit groups read more than one way: a row to report
        return grouped
    return [t.strip() for t in row.split(None, len(spans) - 1)]


_NUM_TOKEN = re.compile(r"\d[\d.,]*")
_GROUP_HEAD = re.compile(r"[1-9]\d{0,2}")
_GROUP_MID = re.compile(r"\d{3}")
_GROUP_LAST = re.compile(r"\d{3}(?:[.,]\d+)?")


def _grouped_cells(row: str, ncols: int, fields: list[str | None] | None = None) -> list[str] | None:
    """A row that does not line up with its header, whose numbers are grouped with spaces
    ('308 807 930', a French or Russian locale): the one way its leading number tokens make the
    table's numeric cells, with the name after them. Where the groups could be cut more than one
    way, only the cuts whose cells agree with each other count (total = calls x average, min <=
    average and median <= max, a share <= 100%). None when no cut is left (then the row is split
    on whitespace as usual); [] when more than one is: the row is reported, never guessed."""
    need = ncols - 1
    # the leading number tokens and the one after them: a cut uses at most 6 tokens a cell, so
    # more than that many numbers cannot be cut (and a row of 80,000 tokens is not split whole
    # again for each row glued to it: linear time)
    spans = _lead_tokens(row, 6 * need + 2)
    toks = [row[a:b] for a, b in spans]
    tight = [spans[k + 1][0] - spans[k][1] == 1 for k in range(len(spans) - 1)]
    m = 0
    while m < len(toks) and _NUM_TOKEN.fullmatch(toks[m]):
        m += 1
    if m > 6 * need:
        return [] if fields is not None else None  # no cut covers that many numbers
    if m <= need or m == len(toks):
        return None  # no spare tokens to group, or no name after the numbers
    if toks[m][:1].isdigit():
        return []  # a name that starts like a number ('8nan13,0'): where the numbers end is not known
    ways: list[list[str]] = []

    def one(g: list[str]) -> bool:
        if len(g) == 1:
            t = g[0]
            return not (len(t) > 1 and t[0] == "0" and t[1].isdigit())  # '093' is no number of its own
        return (_GROUP_HEAD.fullmatch(g[0]) is not None and all(_GROUP_MID.fullmatch(t) for t in g[1:-1])
                and _GROUP_LAST.fullmatch(g[-1]) is not None)

    def walk(i: int, cells: list[str]) -> None:
        if len(ways) > 64:
            return
        if len(cells) == need:
            if i == m:
                ways.append(cells)
            return
        for j in range(i, min(m, i + 6)):  # a number of up to 18 digits: at most 6 groups
            if j > i and not tight[j - 1]:
                break
            g = toks[i : j + 1]
            if one(g):
                walk(j + 1, [*cells, " ".join(g)])

    walk(0, [])
    if fields is not None and len(ways) <= 64:  # even a single cut must agree: a damaged row has one too
        numeric = [f for f in fields if f != "name"]
        ways = [w for w in ways if _agrees(dict(zip(numeric, w)))]
        if not ways:
            return []
    if len(ways) > 1:
        return []  # more than one reading: the row is reported (no cells), never read one way or the other
    if not ways:
        return None
    return [*ways[0], " ".join(row[spans[m][0] :].split())]


def _lead_tokens(row: str, most: int) -> list[tuple[int, int]]:
    """Where the first `most` blank-separated tokens of `row` are (start, end)."""
    out = []
    for t in re.finditer(r"\S+", row):
        out.append((t.start(), t.end()))
        if len(out) >= most:
            break
    return out


def _agrees(cells: dict[str | None, str]) -> bool:
    """Whether a row's cells (grouped with spaces, any ',' or '.' the decimal mark) agree."""
    v: dict[str, float] = {}
    for f, c in cells.items():
        if f is None:
            continue
        try:
            v[f] = float(c.replace(" ", "").replace(",", "."))
        except ValueError:
            return False
    if v.get("pct", 0.0) > 100.0:
        return False
    lo, hi = v.get("min"), v.get("max")
    for f in ("avg", "med"):
        x = v.get(f)
        if x is not None and ((lo is not None and x < lo * (1 - 1e-9)) or (hi is not None and x > hi * (1 + 1e-9))):
            return False
    t, k, a = v.get("time"), v.get("calls"), v.get("avg")
    if t is not None and hi is not None and hi > t * (1 + 1e-9):
        return False  # one call longer than all of them together
    if t is not None and k is not None and lo is not None and lo * k > t * (1 + 1e-9):
        return False
    if t is not None and k is not None and a is not None:
        if k != int(k):
            return False
        quantum = 10.0 ** (math.floor(math.log10(a)) - 2) if a > 0 else 1.0  # the average's printed precision
        if abs(t - k * a) > max(1e-3 * t, k * quantum, 1.0):
            return False
    return True


def _header_cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    parts = re.split(r"\s{2,}", line.strip())
    if len(parts) == len(spans):  # names never hold two spaces: this holds however the header is indented
        return parts
    cells = []
    for k in range(len(spans)):
        lo = spans[k - 1][1] if k else 0
        hi = spans[k + 1][0] if k + 1 < len(spans) else len(line)
        cells.append(line[lo:hi].strip())
    return cells


# A long log of nsys runs (a sweep's `nsys stats` outputs one after the other) is read part by part
# (profconv.parse.stream), cut where a run's 'Generating …' line opens a profile with no report named
# before it (DialectResult.resume: the reader carries nothing else from one line to the next). Its
# windows are half a megabyte (a few thousand summary rows: read together from the bytes, `pre_read`,
# bytescan.find; a megabyte's took 58-64 MiB at 20 MB, 2.9-3.2 bytes a byte, half of one 51-52 MiB
# in the same CPU time, medians of 3: docs/performance.md, session 23). nvprof's markers '(%)' and
# '%' are in every nsys summary header: the stream looks at them through nvprof's detect on each
# window (`local_markers`): the tests they gate look at the
# file's first 64 Ki characters (a window's too) or at one header line and the two after it (in one
# window: windows overlap by stream.MARGIN lines); nvprof's other markers still make it read whole.
STREAM = {"window": 1 << 19, "pre_read": True, "local_markers": {"nvprof": ("(%)", "%")}}

DIALECT = Dialect(
    name="nsys", title="nsys", product="Nsight Systems", tool=TOOL,
    # (each text _DETECT finds holds one: 'Start(ns)  Duration(ns)', a trace's header, no comma after it)
    markers=("stats report", "Total Time", "Statistics", "Start (ns),", "Time (%),", "Processing [", "Duration (",
             "Duration("),
    part_start="Generating ",
    sections=("gpu", "api", "openacc", "nvtx", "os-runtime", "gpu-memory-size", "gpu-trace", "api-trace"),
    detect=detect, parse=parse, extra={"stream": STREAM},
)
