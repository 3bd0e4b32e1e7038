"""Nsight Compute output: the console details page and `--csv` (details and raw pages).

Every metric becomes an ncu-metric row; each launch's duration also feeds a `gpu` summary
row per kernel, so ncu output ranks like any other profile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from profconv.parse import columnar, grouping, units
from profconv.parse.dialect import Dialect
from profconv.parse.model import Block, DialectResult, Document
from profconv.parse.schema import Row
from profconv.parse.text import csv_row, csv_rows

TOOL = "ncu"

_KERNEL = re.compile(
    r"^  (?P<name>\S.*?)(?: \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\))?,"
    r"(?: \d{4}-\w{3}-\d{2} [\d:]+,)? Context (?P<ctx>\d+), Stream (?P<stream>\d+)"
    r"(?:, Device (?P<dev>\d+), CC (?P<cc>[\d.]+))?\s*$"
)
# `--print-summary per-kernel`/`per-gpu`: one line per kernel with its launch count, under a device line
_SUMMARY_KERNEL = re.compile(
    r"^\s{2,}(?P<name>\S.*?)(?: \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\))?,"
    r"(?:(?: Device \d+, CC [\d.]+,)? Invocations (?P<inv>\d+)"
    # 2021-2022: `name, Block Size 256, Grid Size 8192, 1 invocations`
    r"| Block Size \d+, Grid Size \d+, (?P<inv2>\d+) invocations)\s*$"
)
_DEVICE_LINE = re.compile(r"^\s+Device \d+(?:, CC [\d.]+)?\s*$")
_SECTION = re.compile(r"^\s+Section: (.+?)\s*$")
_RULE = re.compile(r"^\s+-{3,}( -{3,})+\s*$")
_PROCESS = re.compile(r"^\[(\d+)\] (\S+)")
_CONNECTED = re.compile(r"==PROF== Connected to process (\d+)(?: \((.*)\))?")
_ADVICE = re.compile(r"^\s*(?:OPT|WRN|INF|ERR|WARN|INFO)\s")
_METRIC_LIKE = re.compile(r"^\s+\S.*?\s{2,}\S+\s{2,}[\d.,]+\s*$")
_ENDS_IN_NUMBER = re.compile(r"\S\s+[\d.,]*\d\s*$")
_OTHER_TOOL = re.compile(r"^\s*==\d+== |^\s*\[\d+/\d+\] Executing|^\s*Generating '|^\s*Processing \[|"
                         r"^\s*Accelerator Kernel Timing data|^\s*Generating [\w ]*Statistics\.\.\.")  # nsys 2020-2021
DURATION_METRICS = {"Duration", "gpu__time_duration.sum", "gpu__time_duration"}
SUMMARY_NOTE = ("ncu --print-summary prints each kernel's minimum, maximum and average duration over its "
                "launches, no total: the kernels are listed, not ranked by time")
TIME_UNIT = {"nsecond": "ns", "usecond": "us", "msecond": "ms", "second": "s",
             "ns": "ns", "us": "us", "ms": "ms", "s": "s"}


# a details page pasted without its ==PROF== lines (slides, reports): a kernel line, then a section
_PASTED_KERNEL = re.compile(r"^  \S[^\n]*?, (?:\d{4}-\w{3}-\d{2} [\d:]+, )?Context \d+, Stream \d+[^\n]*\n"
                            r"(?:[^\n]*\n){0,6}?[ \t]+Section: ", re.M)


def detect(doc: Document) -> bool:
    t = doc.text
    return ("==PROF==" in t or '"Metric Name"' in t or '"Kernel Name"' in t
            or (", Context " in t and "Section: " in t and _PASTED_KERNEL.search(t) is not None)
            or (("Invocations " in t or " invocations" in t) and _SUMMARY_HEADER.search(t) is not None))


_SUMMARY_HEADER = re.compile(r"Metric Unit +Minimum +Maximum +Average")


def _value(text: str) -> float:
    t = text.replace("(!)", "").strip()
    try:
        return units.number(t)
    except ValueError:
        return float("nan")


def _number_or_text(cell: str, loc: units.Locale = units.C_LOCALE) -> tuple[float, str | None]:
    """A value and, where it is not a number ('CachePreferNone', 'n/a'), its text. In a table whose
    cells say another decimal mark (`loc`, decided from all of them) a number is read in it; in an
    ambiguous table a cell such as '524.288' is left empty (NaN, no text): never guessed."""
    if loc is not units.C_LOCALE:
        t = cell.replace("(!)", "").strip()
        if t[:1].isdigit():
            try:
                return loc.convert(t), None
            except ValueError:
                return float("nan"), cell.strip()  # '1,234.5' in a decimal-comma table: kept as printed
    v = _value(cell)
    return v, (cell.strip() if v != v and cell.strip() else None)


def _metric(name: str, line: int, metric: str, unit: str | None, cell: str,
            lo: str | None = None, hi: str | None = None, loc: units.Locale = units.C_LOCALE) -> Row:
    """One metric row; a value that is not a number ('CachePreferNone', 'n/a') is kept as text. A
    --print-summary row's Minimum and Maximum go beside its Average (value); the launches they are
    taken over are the kernel's GPU row's calls (its kernel line, not the metric's)."""
    v, text = _number_or_text(cell, loc)
    row = Row(section="ncu-metric", name=name, line_start=line, line_end=line, metric=metric,
              unit=unit or None, value=v, value_text=text)
    if lo is not None:
        row.value_min, row.value_text_min = _number_or_text(lo, loc)
    if hi is not None:
        row.value_max, row.value_text_max = _number_or_text(hi, loc)
    return row


# one metric as printed, read once its table's decimal mark is known: kernel, line, metric, unit,
# value (Average), Minimum, Maximum
_Cells = tuple[str, int, str, str | None, str, str | None, str | None]


def _vote(cells: list[_Cells], vote: units.LocaleVote | None = None) -> units.LocaleVote:
    """The evidence for the decimal mark of one table (a kernel's sections, a --csv page) from all
    its value cells (the nvprof/nsys vote: '12,5' or '1.048.576' says comma, '12.5' or '1,048,576'
    says dot), added to `vote` where given."""
    vote = vote or units.LocaleVote()
    for c in cells:
        vote.add(x.replace("(!)", "") for x in (c[4], c[5], c[6]) if x is not None)
        if c[2] in DURATION_METRICS and c[3] in _WHOLE_NS:
            # ncu prints a duration in nanoseconds as a whole number: '8,192' or '8.192' groups
            # thousands, so its other mark is the decimal one (as nvprof's call counts tell)
            vote.add_counts(x.replace("(!)", "") for x in (c[4], c[5], c[6]) if x is not None)
    return vote


_WHOLE_NS = {"nsecond", "ns"}


def _read(cells: list[_Cells], run: units.Locale | None = None) -> tuple[list[Row], bool]:
    """The metric rows of one table, read in its decimal mark; True where the mark stayed ambiguous.
    A table its own cells leave undecided takes `run`'s mark where given: the one all the tables of
    its ncu run decided together (one process prints in one locale)."""
    loc = _vote(cells).locale()
    if loc.ambiguous and run is not None:
        loc = run
    return [_metric(k, ln, m, u, v, lo, hi, loc) for k, ln, m, u, v, lo, hi in cells], loc.ambiguous


def whole(digits: str) -> int | None:
    """A process id or launch count printed as digits; None past the Int64 column (2^63 - 1), and
    for a run of digits too long to be a number at all (no int() of 5,000 digits)."""
    if len(digits) > 19:
        return None
    v = int(digits)
    return v if v <= units.MAX_COUNT else None


def duration_ns(value: float, unit: str | None) -> float:
    u = TIME_UNIT.get((unit or "").strip())
    return units.scaled(value, units.TIME_UNITS_NS[u]) if u else float("nan")


def summarize(metrics: list[Row], skip: set[int] | frozenset[int] = frozenset()) -> list[Row]:
    """Per kernel name: launches, total/avg/min/max of the duration metric (rows on the lines in
    `skip` are a --print-summary's averages, not one launch each)."""
    return summarize_durations((r.name, r.value, r.unit, r.line_start) for r in metrics
                               if r.metric in DURATION_METRICS and r.line_start not in skip)


def summarize_durations(durations: Iterable[tuple[str, float, str | None, int]]) -> list[Row]:
    """Per kernel name, from its launches' (name, duration, unit, line): launches, total/avg/min/max."""
    acc: dict[str, list[tuple[float, int]]] = {}
    for name, value, unit, line in durations:
        d = duration_ns(value, unit)
        if d == d:
            acc.setdefault(name, []).append((d, line))
    rows = []
    for name, ds in acc.items():
        times = [d for d, _ in ds]
        rows.append(Row(section="gpu", name=name, line_start=min(x for _, x in ds),
                        line_end=max(x for _, x in ds), total_ns=sum(times), calls=len(times),
                        avg_ns=sum(times) / len(times), min_ns=min(times), max_ns=max(times)))
    rows.sort(key=lambda r: -r.total_ns)
    return rows


_ID_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Function Name",
               "Context", "Stream", "Device", "CC", "Kernel Time", "Block Size", "Grid Size"}
RAW_COLUMNS_FROM = 200  # launches: from here on a raw page is read as columns (profconv.parse.columnar)


def _csv_extent(lines: list[str], start: int, width: int) -> tuple[list[int], int, list[int]]:
    """The rows of the CSV table whose header is line index `start` (every line starting with a
    quote), the index after it and the stray lines inside it: a line of program output with a
    row right after it does not end the table."""
    rows: list[int] = []
    stray: list[int] = []
    j = start + 1
    while j < len(lines):
        line = lines[j]
        if line.startswith('"'):
            if line.startswith(('"ID",', '"Process ID",')):
                break  # the next page
            rows.append(j)
        elif j + 1 < len(lines) and _stray(line) and _row_of(lines[j + 1], width):
            stray.append(j)
        else:
            break
        j += 1
    return rows, j, stray


def _stray(line: str) -> bool:
    """Program output printed into a CSV table: not blank, no quote (the rest of a wrapped row
    holds one), not a line of ncu's own or another profiler's."""
    return bool(line.strip()) and '"' not in line and not line.startswith("==PROF==") and not _OTHER_TOOL.match(line)


def _row_of(line: str, width: int) -> bool:
    """A row of a CSV table whose header has `width` cells (a details page's rows may leave its
    rule columns off), not the header of the next page."""
    return (line.startswith('"') and not line.startswith(('"ID",', '"Process ID",'))
            and width // 2 < len(csv_row(line)) <= width)


def stray_note(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if len(numbers) > 10 else "")
    return (f"line(s) {shown} inside the table are not rows of it (program output?): left out, "
            "the table's rows after them are read")


def _details_cells(table: list[list[str]], at: list[int], col: dict[str, int], kname: int,
                   result: DialectResult) -> list[_Cells]:
    """A details page: one row per (launch, metric)."""
    unit_at = col.get("Metric Unit")
    name_at, value_at = col["Metric Name"], col["Metric Value"]
    need = max(kname, name_at, value_at, unit_at or 0)
    width = len(table[0])
    cells: list[_Cells] = []
    for k, r in zip(at, table[1:]):
        # 2024+ adds Rule Name/Type/Description/Estimated Speedup columns after the value; a
        # metric row leaves them off, a rule row (advice) has no metric name
        if len(r) <= need or len(r) > width:
            result.unplaced.append(k + 1)
            continue
        if not r[name_at].strip() and any(x.strip() for x in r[need + 1 :]):
            continue  # a rule's advice, not a metric
        cells.append((r[kname], k + 1, r[name_at], r[unit_at] if unit_at is not None else None, r[value_at], None, None))
    return cells


def _metric_columns(header: list[str]) -> list[int]:
    return [h for h, c in enumerate(header) if not (c in _ID_COLUMNS or ":" in c and "Range" in c)]


def _raw_cells(table: list[list[str]], at: list[int], kname: int, result: DialectResult) -> list[_Cells]:
    """A raw page: one wide row per launch, the units in the row after the header."""
    header = table[0]
    has_units = len(table) > 1 and bool(table[1]) and not table[1][0].strip()
    unit_row = table[1] if has_units else [""] * len(header)
    data, rows_at = (table[2:], at[1:]) if has_units else (table[1:], at)
    metrics = _metric_columns(header)
    cells: list[_Cells] = []
    for k, r in zip(rows_at, data):
        if len(r) != len(header):
            result.unplaced.append(k + 1)
            continue
        cells.extend((r[kname], k + 1, header[h], unit_row[h] if h < len(unit_row) else None, r[h], None, None)
                     for h in metrics)
    return cells


def _csv(doc: Document, start: int, result: DialectResult, events: list[grouping.Event]) -> int:
    lines = doc.lines
    header = csv_row(lines[start])
    at, j, stray = _csv_extent(lines, start, len(header))
    col = {h: k for k, h in enumerate(header)}
    kname = col.get("Kernel Name", col.get("Function Name"))
    if kname is None or ("Metric Name" in col and "Metric Value" not in col):
        # no column says which kernel (or no value column): nothing here can be placed
        result.unplaced.extend(k + 1 for k in at)
        return j
    result.claimed.update(range(start + 1, j + 1))
    notes = [stray_note([k + 1 for k in stray])] if stray else []
    if "Metric Name" not in col and len(at) > RAW_COLUMNS_FROM and not stray and columnar.enabled():
        from profconv.parse.dialects.ncu_raw import raw_columns

        blocks = raw_columns(lines, start, j, header, kname)
        if blocks is not None:
            for blk in blocks:
                events.append(grouping.Event("block", start + 1, block=blk))
            return j
    table = [header, *csv_rows([lines[k] for k in at])]
    if "Metric Name" in col:
        cells = _details_cells(table, at, col, kname, result)
    else:
        cells = _raw_cells(table, at, kname, result)
    metrics, ambiguous = _read(cells)  # the page's decimal mark, from all its values
    if metrics:
        if ambiguous:
            notes.append(units.AMBIGUOUS_NOTE)
        events.append(grouping.Event("block", start + 1, block=Block(
            section="ncu-metric", rows=metrics, line_start=start + 1, line_end=j, notes=notes)))
        summary = summarize(metrics)
        if summary:
            events.append(grouping.Event("block", start + 1, block=Block(
                section="gpu", rows=summary, line_start=start + 1, line_end=j)))
    return j


def _aligned(line: str, spans: list[tuple[int, int]]) -> bool:
    """A metric row lines up with its table's rule: name from the first column, unit and value
    right-aligned, gaps blank. Program output and advice text do not."""
    if _ADVICE.match(line):
        return False
    end = len(line.rstrip())
    if not spans[2][0] < end <= spans[2][1] + 1:
        return False
    if line[: spans[0][0]].strip() or line[spans[1][0] - 1 : spans[1][0]].strip():
        return False
    gap = line[spans[2][0] - 1 : spans[2][0]]
    return not gap.strip() and " " not in line[spans[2][0] :].replace("(!)", "").strip()


def _in_columns(line: str, spans: list[tuple[int, int]]) -> bool:
    """Each column's cell is one word lying within the column's rule (flush right or flush left),
    with nothing printed between the columns."""
    for k, (s, e) in enumerate(spans):
        nxt = spans[k + 1][0] if k + 1 < len(spans) else len(line) + 1
        cell = line[s:e]
        if not cell.strip() or " " in cell.strip() or line[e:nxt].strip():
            return False
        if cell[0] == " " and cell[-1] == " " or line[s - 1 : s].strip():
            return False  # flush to neither edge, or the cell begins before the column
    return True


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
    rows_in_table = 0
    invocations: int | None = None  # the kernel line of a --print-summary: min/max/avg over this many launches
    summary_gpu: list[Row] = []  # its duration rows, as GPU rows (calls, avg, min, max; no total printed)
    kernel_line = 0
    summary_lines: set[int] = set()  # lines of --print-summary metric rows (averages, not one launch each)
    # each kernel's metrics as printed: read when the run's output ends (flush), in the decimal mark
    # all their cells say (a --print-summary duration row: its kernel line and launch count beside it)
    pending: list[_Cells] = []
    kernels: list[list[_Cells]] = []  # each kernel's cells since the last flush (one ncu run)
    launches: dict[int, tuple[int, int]] = {}  # line -> its kernel line, launches (-1: not a count)
    ambiguous: list[str] = []  # kernels whose sections left the decimal mark undecided

    def end_kernel() -> None:
        nonlocal pending
        if pending:
            kernels.append(pending)
            pending = []

    def resolve() -> None:
        end_kernel()
        if not kernels:
            return
        run = None  # a kernel of integers alone ('524,288' requests) takes the mark the run's others say
        if len(kernels) > 1:
            vote = units.LocaleVote()
            for cells in kernels:
                _vote(cells, vote)
            decided = vote.comma or vote.dot or vote.comma4 or vote.group4
            run = vote.locale() if decided else None
            run = None if run is not None and run.ambiguous else run
        rows = []
        for cells in kernels:
            read, undecided = _read(cells, run)
            rows += read
            if undecided:
                ambiguous.append(cells[0][0])
        kernels.clear()
        for row in rows:
            metrics.append(row)
            if row.line_start in launches and row.metric in DURATION_METRICS:
                at, launched = launches[row.line_start]
                calls = launched if launched >= 0 else None
                d = [duration_ns(v, row.unit) for v in (row.value, row.value_min, row.value_max)]
                if all(x == x for x in d):  # its launch count is on the kernel line
                    summary_gpu.append(Row(section="gpu", name=row.name, line_start=at, line_end=row.line_start,
                                           calls=calls, avg_ns=d[0], min_ns=d[1], max_ns=d[2]))
        launches.clear()

    def flush() -> None:
        nonlocal metrics, summary_gpu, first_line
        resolve()
        if summary_gpu:
            events.append(grouping.Event("block", first_line, block=Block(
                section="gpu", rows=summary_gpu, line_start=first_line, line_end=summary_gpu[-1].line_end,
                notes=[SUMMARY_NOTE])))
            summary_gpu = []
        if metrics:
            notes = [f"{', '.join(ambiguous)}: {units.AMBIGUOUS_NOTE}"] if ambiguous else []
            events.append(grouping.Event("block", first_line, block=Block(
                section="ncu-metric", rows=metrics, line_start=first_line, line_end=metrics[-1].line_end,
                notes=notes)))
            summary = summarize(metrics, summary_lines)
            summary_lines.clear()
            if summary:
                events.append(grouping.Event("block", first_line, block=Block(
                    section="gpu", rows=summary, line_start=first_line, line_end=metrics[-1].line_end)))
        if metrics or summary_gpu:
            first_line = 0  # the next kernel line begins the next table
        metrics = []
        ambiguous.clear()

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
            pid, command = whole(m.group(1)), m.group(2)
            continue
        if m := _PROCESS.match(line):
            flush()
            events.append(grouping.Event("start", lineno, pid=whole(m.group(1)), command=command or m.group(2)))
            result.claimed.add(lineno)
            continue
        if m := _KERNEL.match(line):
            end_kernel()
            kernel = m.group("name")
            invocations = None
            first_line = first_line or lineno
            result.claimed.add(lineno)
            spans = None
            continue
        if m := _SUMMARY_KERNEL.match(line):
            end_kernel()
            kernel = m.group("name")
            invocations = whole(m.group("inv") or m.group("inv2"))
            if invocations is None:  # a launch count past the Int64 calls column: reported, not read
                result.unplaced.append(lineno)
                invocations = -1
            kernel_line = lineno
            first_line = first_line or lineno
            result.claimed.add(lineno)
            spans = None
            continue
        if _DEVICE_LINE.match(line) and (kernel is not None or pid is not None or first_line == 0):
            result.claimed.add(lineno)
            continue
        if kernel is None:
            continue
        if _SECTION.match(line):
            spans = None
            result.claimed.add(lineno)
            continue
        if _RULE.match(line):
            result.claimed.add(lineno)
            if spans is not None and rows_in_table:
                spans = None  # the rule that closes a table: advice and program output follow
                continue
            spans = [(m.start(), m.end()) for m in re.finditer(r"-{3,}", line)]
            rows_in_table = 0
            continue
        if _OTHER_TOOL.match(line):
            flush()
            events.append(grouping.Event("break", lineno))
            kernel, spans = None, None  # another profiler's output follows the ncu log
            continue
        if spans and len(spans) == 5 and invocations is not None and line.strip():
            # a --print-summary table: Metric Name, Metric Unit, Minimum, Maximum, Average
            name = line[: spans[1][0]].strip()
            unit = line[spans[1][0] : spans[2][0]].strip()
            cells = line[spans[2][0] :].replace("(!)", "").split()
            if name == "Metric Name":
                result.claimed.add(lineno)
                continue
            # the three values inside their columns (right-aligned since 2023, left-aligned before), a
            # blank before the first: a line shifted by a paste (or damaged) cuts a number in two and
            # is reported instead
            aligned = line[spans[2][0] - 1 : spans[2][0]] == " " and _in_columns(line, spans[2:])
            if name and len(cells) == 3 and aligned and not _ADVICE.match(line) and not line[: spans[0][0]].strip():
                lo, hi, avg = cells
                summary_lines.add(lineno)
                pending.append((kernel, lineno, name, unit, avg, lo, hi))
                launches[lineno] = (kernel_line, invocations)
                rows_in_table += 1
                result.claimed.add(lineno)
                continue
            if (_METRIC_LIKE.match(line) or _ENDS_IN_NUMBER.search(line)) and not _ADVICE.match(line):
                result.unplaced.append(lineno)  # a row that does not fit its columns (two cells run together)
            continue
        if spans and len(spans) == 3 and line.strip():
            name = line[: spans[1][0]].strip()
            unit = line[spans[1][0] : spans[2][0]].strip()
            value = line[spans[2][0] :].strip()
            if name == "Metric Name":
                result.claimed.add(lineno)
                continue
            if name and value and _aligned(line, spans):
                pending.append((kernel, lineno, name, unit, value, None, None))
                rows_in_table += 1
                result.claimed.add(lineno)
                continue
            if _METRIC_LIKE.match(line) and not _ADVICE.match(line):
                result.unplaced.append(lineno)  # a metric row out of line with its table
            continue
    flush()
    result.profiles = grouping.group(events, TOOL)
    return result


DIALECT = Dialect(
    name="ncu", title="ncu", product="Nsight Compute", tool=TOOL,
    markers=("==PROF==", '"Metric Name"', '"Kernel Name"', "Section: ", "Metric Unit"),
    sections=("gpu", "ncu-metric"),
    detect=detect, parse=parse,
)
