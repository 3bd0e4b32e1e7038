"""Nsight Compute output: the console details page and `--csv` (details and raw pages).

Every metric becomes an ncu-metric row; each launch's duration also feeds a `gpu` summary
row per kernel, so ncu output ranks like any other profile.
"""

from __future__ import annotations

import csv
import re

from profconv.parse import grouping, units
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row

TOOL = "ncu"

_KERNEL = re.compile(
    r"^  (?P<name>\S.*?)(?: \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\))?,"
    r"(?: \d{4}-\w{3}-\d{2} [\d:]+,)? Context (?P<ctx>\d+), Stream (?P<stream>\d+)"
    r"(?:, Device (?P<dev>\d+), CC (?P<cc>[\d.]+))?\s*$"
)
_SECTION = re.compile(r"^\s+Section: (.+?)\s*$")
_RULE = re.compile(r"^\s+-{3,}( -{3,})+\s*$")
_PROCESS = re.compile(r"^\[(\d+)\] (\S+)")
_CONNECTED = re.compile(r"==PROF== Connected to process (\d+)(?: \((.*)\))?")
DURATION_METRICS = {"Duration", "gpu__time_duration.sum", "gpu__time_duration"}
TIME_UNIT = {"nsecond": "ns", "usecond": "us", "msecond": "ms", "second": "s",
             "ns": "ns", "us": "us", "ms": "ms", "s": "s"}


def detect(doc: Document) -> bool:
    return "==PROF==" in doc.text or '"Metric Name"' in doc.text or '"Kernel Name"' in doc.text


def _value(text: str) -> float:
    t = text.replace("(!)", "").strip()
    try:
        return units.number(t)
    except ValueError:
        return float("nan")


def duration_ns(value: float, unit: str | None) -> float:
    u = TIME_UNIT.get((unit or "").strip())
    return value * units.TIME_UNITS_NS[u] if u else float("nan")


def summarize(metrics: list[Row]) -> list[Row]:
    """Per kernel name: launches, total/avg/min/max of the duration metric."""
    acc: dict[str, list[tuple[float, int]]] = {}
    for r in metrics:
        if r.metric in DURATION_METRICS:
            d = duration_ns(r.value, r.unit)
            if d == d:
                acc.setdefault(r.name, []).append((d, r.line_start))
    rows = []
    for name, ds in acc.items():
        times = [d for d, _ in ds]
        rows.append(Row(section="gpu", name=name, line_start=min(x for _, x in ds),
                        line_end=max(x for _, x in ds), total_ns=sum(times), calls=len(times),
                        avg_ns=sum(times) / len(times), min_ns=min(times), max_ns=max(times)))
    rows.sort(key=lambda r: -r.total_ns)
    return rows


def _csv(doc: Document, start: int, result: DialectResult, events: list[grouping.Event]) -> int:
    lines = doc.lines
    j = start
    while j < len(lines) and lines[j].startswith('"'):
        j += 1
    table = list(csv.reader(lines[start:j]))
    header = table[0]
    col = {h: k for k, h in enumerate(header)}
    metrics: list[Row] = []
    if "Metric Name" in col:  # details page: one row per (launch, metric)
        for k, r in enumerate(table[1:], start=start + 2):
            try:
                metrics.append(Row(section="ncu-metric", name=r[col["Kernel Name"]], line_start=k,
                                   line_end=k, metric=r[col["Metric Name"]],
                                   unit=r[col["Metric Unit"]], value=_value(r[col["Metric Value"]])))
            except IndexError:
                result.unplaced.append(k)
    else:  # raw page: one wide row per launch, units in the second row
        unit_row = table[1] if len(table) > 1 and not table[1][0].strip() else [""] * len(header)
        data = table[2:] if unit_row is not table[0] and len(table) > 1 and not table[1][0].strip() else table[1:]
        first = start + (3 if data is not table[1:] else 2)
        kname = col.get("Kernel Name", col.get("Function Name", 4))
        skip = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Function Name",
                "Context", "Stream", "Device", "CC", "Kernel Time", "Block Size", "Grid Size"}
        for k, r in enumerate(data, start=first):
            if len(r) != len(header):
                result.unplaced.append(k)
                continue
            for h, c in enumerate(header):
                if c in skip or ":" in c and "Range" in c:
                    continue
                metrics.append(Row(section="ncu-metric", name=r[kname], line_start=k, line_end=k,
                                   metric=c, unit=unit_row[h] if h < len(unit_row) else None,
                                   value=_value(r[h])))
    result.claimed.update(range(start + 1, j + 1))
    if metrics:
        blk = Block(section="ncu-metric", rows=metrics, line_start=start + 1, line_end=j)
        events.append(grouping.Event("block", start + 1, block=blk))
        summary = summarize(metrics)
        if summary:
            events.append(grouping.Event("block", start + 1, block=Block(
                section="gpu", rows=summary, line_start=start + 1, line_end=j)))
    return j


def parse(doc: Document) -> DialectResult:
    result = DialectResult()
    events: list[grouping.Event] = []
    lines = doc.lines
    metrics: list[Row] = []
    kernel: str | None = None
    spans: list[tuple[int, int]] | None = None
    first_line = 0
    pid: int | None = None
    command: str | None = None

    def flush() -> None:
        nonlocal metrics
        if metrics:
            events.append(grouping.Event("block", first_line, block=Block(
                section="ncu-metric", rows=metrics, line_start=first_line, line_end=metrics[-1].line_end)))
            summary = summarize(metrics)
            if summary:
                events.append(grouping.Event("block", first_line, block=Block(
                    section="gpu", rows=summary, line_start=first_line, line_end=metrics[-1].line_end)))
        metrics = []

    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r\n")
        lineno = i + 1
        if line.startswith('"ID",') or line.startswith('"Process ID",'):
            flush()
            if pid is not None or command:
                events.append(grouping.Event("start", lineno, pid=pid, command=command))
            i = _csv(doc, i, result, events)
            continue
        i += 1
        if m := _CONNECTED.search(line):
            pid, command = int(m.group(1)), m.group(2)
            continue
        if m := _PROCESS.match(line):
            flush()
            events.append(grouping.Event("start", lineno, pid=int(m.group(1)), command=command or m.group(2)))
            result.claimed.add(lineno)
            continue
        if m := _KERNEL.match(line):
            kernel = m.group("name")
            first_line = first_line or lineno
            result.claimed.add(lineno)
            spans = None
            continue
        if kernel is None:
            continue
        if _SECTION.match(line):
            spans = None
            result.claimed.add(lineno)
            continue
        if _RULE.match(line):
            spans = [(m.start(), m.end()) for m in re.finditer(r"-{3,}", line)]
            result.claimed.add(lineno)
            continue
        if spans and len(spans) == 3 and line.strip():
            name = line[: spans[1][0]].strip()
            unit = line[spans[1][0] : spans[2][0]].strip()
            value = line[spans[2][0] :].strip()
            if name == "Metric Name":
                result.claimed.add(lineno)
                continue
            if name and value:
                metrics.append(Row(section="ncu-metric", name=kernel, line_start=lineno,
                                   line_end=lineno, metric=name, unit=unit, value=_value(value)))
                result.claimed.add(lineno)
                continue
    flush()
    result.profiles = grouping.group(events, TOOL)
    return result
