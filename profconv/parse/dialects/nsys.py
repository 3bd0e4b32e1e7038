"""Nsight Systems `nsys stats` output: console tables (current and legacy report names) and CSV."""

from __future__ import annotations

import io
import re

import pandas as pd

from profconv.parse import grouping, units
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row, conform

TOOL = "nsys"

_EXECUTING = re.compile(r"Executing '(\w+)' stats report|Processing \[.*\] with \[.*?/(\w+)\.py\]")
_CSV_TITLE = re.compile(r"\*\*\s.*\((\w+)\):?\s*$")
_DASHES = re.compile(r"-{3,}")
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
    "name": "name", "operation": "name", "range": "name",
    "total (mb)": "mbytes", "total (kib)": "kib", "total": "total",
    "start (ns)": "start", "start": "start", "duration (ns)": "dur", "duration": "dur",
}


_MARKERS = ("stats report", "Total Time (ns)", "Statistics (nanoseconds)", "Runtime API Statistics",
            "\nStart (ns),", "\nTime (%),", "Statistics:\n")
_DETECT = re.compile(r"Time\(%\) +Total Time|Processing \[[^\]\n]*\] with \[[^\]\n]*_(?:sum|trace)\.py\]")


def detect(doc: Document) -> bool:
    text = doc.text
    if any(m in text for m in _MARKERS) or text.startswith(("Start (ns),", "Time (%),")):
        return True
    if "Total Time" not in text and "Processing [" not in text:
        return False
    return _DETECT.search(text) is not None


def _report_from_header(cols: list[str], names: list[str]) -> str:
    """A table printed without its report name: tell it by its columns (and names)."""
    lc = [c.lower() for c in cols]
    if any(c.startswith("total (") or c == "total" for c in lc):
        return "cuda_gpu_mem_size_sum"
    if "range" in lc:
        return "nvtx_sum"
    if "start (ns)" in lc or "start" in lc:
        return "cuda_gpu_trace"
    if "operation" in lc:
        return "cuda_gpu_mem_time_sum"
    if "instances" in lc:
        return "cuda_gpu_kern_sum"
    api = sum(1 for n in names if re.match(r"^(cu[A-Z]|cuda[A-Z]|cublas|cudnn|nvtx)", str(n)))
    return "cuda_api_sum" if api * 2 >= max(1, len(names)) else "osrt_sum"


def _size_factor(field: str) -> float:
    return {"mbytes": 1e6, "kib": 1024.0, "total": 1024.0}.get(field, 1.0)


def _rows_to_block(report: str, fields: list[str | None], cells: list[list[str]], lines: list[int]) -> tuple[Block, list[int]]:
    section = REPORTS.get(report, "gpu")
    bad: list[int] = []
    rows: list[Row] = []
    for cell, line in zip(cells, lines):
        vals: dict[str, float] = {}
        name = ""
        try:
            for f, c in zip(fields, cell):
                if f == "name":
                    name = c.strip() if not name else name
                elif f in ("pct",):
                    vals[f] = units.percent(c)
                elif f == "calls":
                    vals[f] = units.number(c)
                elif f in ("mbytes", "kib", "total"):
                    vals["bytes"] = units.number(c) * _size_factor(f)
                elif f is not None:
                    vals[f] = units.number(c)
        except ValueError:
            bad.append(line)
            continue
        if section == "gpu-memory-size":
            rows.append(Row(section=section, name=name, line_start=line, line_end=line,
                            bytes=vals.get("bytes", float("nan")),
                            calls=int(vals["calls"]) if "calls" in vals else None))
            continue
        if section.endswith("-trace"):
            rows.append(Row(section=section, name=name, line_start=line, line_end=line,
                            start_ns=vals.get("start", float("nan")),
                            total_ns=vals.get("dur", float("nan")), calls=1))
            continue
        rows.append(Row(
            section=section, name=name, line_start=line, line_end=line,
            time_pct=vals.get("pct", float("nan")), total_ns=vals.get("time", float("nan")),
            calls=int(vals["calls"]) if "calls" in vals else None,
            avg_ns=vals.get("avg", float("nan")), med_ns=vals.get("med", float("nan")),
            min_ns=vals.get("min", float("nan")), max_ns=vals.get("max", float("nan")),
            std_ns=vals.get("std", float("nan")),
        ))
    blk = Block(section=section, rows=rows, line_start=lines[0] if lines else 0,
                line_end=lines[-1] if lines else 0, kind=report)
    return blk, bad


def _field_of(col: str) -> str | None:
    c = col.strip().lower()
    if c in FIELDS:
        return FIELDS[c]
    base = re.sub(r"\s*\(.*\)$", "", c)
    if base in ("avg", "med", "min", "max", "stddev") and "(" in c:
        return None  # sizes in a memory-size table: only the total is kept
    return FIELDS.get(base)


def _csv_block(lines: list[str], start: int, report: str | None) -> tuple[Block | None, int, list[int]]:
    j = start
    while j < len(lines) and lines[j].strip() and "," in lines[j]:
        j += 1
    text = "\n".join(lines[start:j])
    big = j - start > 5000
    # large tables: let read_csv parse the numbers; small ones: strings, checked cell by cell
    df = pd.read_csv(io.StringIO(text), dtype=None if big else str, keep_default_na=False)
    cols = list(df.columns)
    fields = [_field_of(c) for c in cols]
    name_col = cols[fields.index("name")] if "name" in fields else cols[-1]
    rep = report or _report_from_header(cols, df[name_col].head(50).tolist())
    if rep in ("cuda_gpu_trace", "cuda_api_trace", "gputrace"):
        return _csv_trace(df, cols, fields, rep, start), j, []
    if len(df) > 5000:  # large summary-like table: vectorised
        return _csv_bulk(df, cols, fields, rep, start), j, []
    cells = df.values.tolist()
    line_nos = list(range(start + 2, start + 2 + len(df)))
    blk, bad = _rows_to_block(rep, fields, cells, line_nos)
    return blk, j, bad


def _num(s: pd.Series) -> pd.Series:
    if pd.api.types.is_numeric_dtype(s):
        return s
    return pd.to_numeric(s.astype(str).str.replace(",", "", regex=False), errors="raise")


def _csv_trace(df: pd.DataFrame, cols: list[str], fields: list[str | None], rep: str, start: int) -> Block:
    section = REPORTS.get(rep, "gpu-trace")
    name_col = cols[fields.index("name")] if "name" in fields else cols[-1]
    lines = pd.RangeIndex(start + 2, start + 2 + len(df))
    frame = pd.DataFrame({
        "name": df[name_col], "start_ns": _num(df[cols[fields.index("start")]]),
        "total_ns": _num(df[cols[fields.index("dur")]]), "calls": 1,
        "line_start": lines, "line_end": lines, "section": section,
    })
    return Block(section=section, frame=conform(frame), line_start=start + 2,
                 line_end=start + 1 + len(df), kind=rep)


def _csv_bulk(df: pd.DataFrame, cols: list[str], fields: list[str | None], rep: str, start: int) -> Block:
    section = REPORTS.get(rep, "gpu")
    lines = pd.RangeIndex(start + 2, start + 2 + len(df))
    out = {"section": section, "line_start": lines, "line_end": lines}
    names = {"pct": "time_pct", "time": "total_ns", "calls": "calls", "avg": "avg_ns",
             "med": "med_ns", "min": "min_ns", "max": "max_ns", "std": "std_ns", "name": "name"}
    for c, f in zip(cols, fields):
        if f in names:
            out[names[f]] = df[c] if f == "name" else _num(df[c])
    return Block(section=section, frame=conform(pd.DataFrame(out)), line_start=start + 2,
                 line_end=start + 1 + len(df), kind=rep)


def parse(doc: Document) -> DialectResult:
    result = DialectResult()
    lines = doc.lines
    events: list[grouping.Event] = []
    report: str | None = None
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i].replace("\r", "")
        if m := _EXECUTING.search(line):
            report = m.group(1) or m.group(2)
            result.claimed.add(i + 1)
            i += 1
            continue
        if _GENERATING.search(line):
            events.append(grouping.Event("start", i + 1))
            i += 1
            continue
        if m := _CSV_TITLE.search(line):
            report = m.group(1)
            i += 1
            continue
        title = next((rep for t, rep in TITLES if t in line and "Executing" not in line), None)
        if title and not line.strip().startswith(("Time", "-")):
            report = title
            i += 1
            continue
        stripped = line.strip()
        if re.match(r'^"?(Time ?\(%\)|Start \(ns\)|Total \()', stripped) and "," in stripped:
            blk, j, bad = _csv_block(lines, i, report)
            if blk is not None:
                events.append(grouping.Event("block", i + 1, block=blk))
            result.claimed.update(range(i + 1, j + 1))
            result.unplaced.extend(bad)
            report = None
            i = j
            continue
        if i + 1 < n and _DASHES.search(lines[i + 1]) and not lines[i + 1].replace("-", "").strip():
            spans = [(m.start(), m.end()) for m in _DASHES.finditer(lines[i + 1])]
            # headers may overhang their dash run: take the text between runs
            cols = _header_cells(line, spans)
            fields = [_field_of(c) for c in cols]
            if "name" in fields or any(f in ("mbytes", "kib", "total") for f in fields):
                j = i + 2
                cells, line_nos = [], []
                while j < n and lines[j].strip():
                    row = lines[j].replace("\r", "")
                    toks = row.split(None, len(cols) - 1)
                    cells.append([t.strip() for t in toks])
                    line_nos.append(j + 1)
                    j += 1
                rep = report or _report_from_header(cols, [c[-1] for c in cells if c])
                blk, bad = _rows_to_block(rep, fields, cells, line_nos)
                events.append(grouping.Event("block", i + 1, block=blk))
                result.claimed.update(range(i + 1, j + 1))
                result.unplaced.extend(bad)
                report = None
                i = j
                continue
        i += 1
    result.profiles = grouping.group(events, TOOL)
    return result


def _header_cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    cells = []
    for k in range(len(spans)):
        lo = spans[k - 1][1] if k else 0
        hi = spans[k + 1][0] if k + 1 < len(spans) else len(line)
        cells.append(line[lo:hi].strip())
    return cells
