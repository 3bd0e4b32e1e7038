"""Nsight Compute output: the console details page and `--csv` (details and raw pages).

Every metric becomes an ncu-metric row; each launch's duration also feeds a `gpu` summary
row per kernel, so ncu output ranks like any other profile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

from profconv.parse import bytescan, grouping, units
from profconv.parse.context import contains_any
from profconv.parse.dialect import Dialect
from profconv.parse.dialects import ncu_console, ncu_details, ncu_raw
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

def _other_tool_text(line: str) -> bool:
    """One of the texts of what _OTHER_TOOL matches is in the line (a few `in` tests: sre tries an
    alternation at every character, 6 us a line)."""
    return ("==" in line or "Executing" in line or "Generating " in line or "Processing [" in line
            or "Accelerator Kernel" in line)
DURATION_METRICS = {"Duration", "gpu__time_duration.sum", "gpu__time_duration"}
SUMMARY_NOTE = ("ncu --print-summary prints each kernel's minimum, maximum and average duration over its "
                "launches, no total: the kernels are listed, not ranked by time")
TIME_UNIT = {"nsecond": "ns", "usecond": "us", "msecond": "ms", "second": "s",
             "ns": "ns", "us": "us", "ms": "ms", "s": "s"}


# a details page pasted without its ==PROF== lines (slides, reports): a kernel line, then a section
_PASTED_KERNEL = re.compile(r"^  \S[^\n]*?, (?:\d{4}-\w{3}-\d{2} [\d:]+, )?Context \d+, Stream \d+[^\n]*\n"
                            r"(?:[^\n]*\n){0,6}?[ \t]+Section: ", re.M)


MARKERS = ("==PROF==", '"Metric Name"', '"Kernel Name"', "Section: ", "Metric Unit")  # one of them in what detect takes


def detect(doc: Document) -> bool:
    t = doc.text
    if not contains_any(t, MARKERS):  # one pass over a text without any (each window of a long log)
        return False
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
        vote.add(voting(c[4:7]))
        if c[2] in DURATION_METRICS and c[3] in _WHOLE_NS:
            # ncu prints a duration in nanoseconds as a whole number: '8,192' or '8.192' groups
            # thousands, so its other mark is the decimal one (as nvprof's call counts tell)
            vote.add_counts(voting(c[4:7]))
    return vote


def voting(cells: Iterable[str | None]) -> list[str]:
    """The value cells that vote on a table's decimal mark, their '(!)' marks taken off: not a cell
    holding a parenthesised list, such as a 2025 `--print-details all` body item's '8,524 (100; 100;
    75)' (a value and its items: no number, and its ',' says nothing of the decimal mark)."""
    return [t for x in cells if x is not None and "(" not in (t := x.replace("(!)", ""))]


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
    return summarize_ns((name, duration_ns(value, unit), line) for name, value, unit, line in durations)


def summarize_ns(durations: Iterable[tuple[str, float, int]]) -> list[Row]:
    """summarize_durations of launches' (name, duration in ns or NaN, line)."""
    acc: dict[str, list[tuple[float, int]]] = {}
    for name, d, line in durations:
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
_ColumnPage = ncu_raw.Page | ncu_details.Page  # a --csv page read as columns
RAW_COLUMNS_FROM = ncu_raw.MIN_LAUNCHES  # launches: from here on a raw page is read as columns (ncu_raw)


def _csv_extent(lines: list[str], start: int, width: int) -> tuple[list[int], int, list[int]]:
    """The rows of the CSV table whose header is line index `start` (every line starting with a
    quote), the index after it and the stray lines inside it: a line of program output with a
    row right after it does not end the table. A last line whose last cell has no closing quote
    is a row cut short (an input that stops mid-line: '"cycle","5' of '"cycle","5,120.5",'): not a
    row, reported unplaced (engine.cut_last_line), not read as a smaller number."""
    rows: list[int] = []
    stray: list[int] = []
    j = start + 1
    while j < len(lines):
        line = lines[j]
        if line.startswith('"'):
            if line.startswith(('"ID",', '"Process ID",')) or (j == len(lines) - 1 and line.count('"') % 2):
                break  # the next page, or a row cut short
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
    pre = _pre_read(doc, start, header)
    if pre is not None:
        if pre.cut_row:  # a row cut between its cells, the input's last line: the page's, unplaced (as below)
            result.claimed.add(pre.last_line + 1)
            result.unplaced.append(pre.last_line + 1)
        return _page(pre, start, pre.last_line + pre.cut_row, result, events)
    at, j, stray = _csv_extent(lines, start, len(header))
    col = {h: k for k, h in enumerate(header)}
    kname = col.get("Kernel Name", col.get("Function Name"))
    if kname is None or ("Metric Name" in col and "Metric Value" not in col):
        # no column says which kernel (or no value column): nothing here can be placed
        result.unplaced.extend(k + 1 for k in at)
        return j
    least = ncu_details.MIN_ROWS if "Metric Name" in col else RAW_COLUMNS_FROM
    if len(at) > least and not stray:
        page = _page_of_lines(lines, at, j, header)
        if page is not None:
            return _page(page, start, j, result, events)
    result.claimed.update(range(start + 1, j + 1))
    notes = [stray_note([k + 1 for k in stray])] if stray else []
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


def _pre_read(doc: Document, start: int, header: list[str]) -> _ColumnPage | None:
    """The raw page whose header is line index `start`, read from the input's bytes
    (ncu_raw.find), if it was; bytescan.Reparse where the text's header is not the one read."""
    pre = doc.pre
    if pre is None or getattr(pre, "dialect", "") != "ncu":
        return None
    for key in (start, start + 1):  # the page's table is keyed by its units row, where it has one
        t = pre.tables.get(key)
        if t is not None and key == start + t.batch.has_units:
            pre.take(key)
            if t.batch.header != header:
                raise bytescan.Reparse
            return cast("_ColumnPage", t.batch)
    return None


def _page_of_lines(lines: list[str], at: list[int], end: int, header: list[str]) -> _ColumnPage | None:
    """A page of the text's lines read as columns (ncu_raw.read, or ncu_details.read for a details
    page, on their bytes)."""
    if "Metric Name" in header:
        data = ("\n".join(lines[at[0] : end]) + "\n").encode("utf-8", "surrogateescape")
        return ncu_details.read(data, 0, len(data), header, at[0] + 1)
    units_row = csv_row(lines[at[0]])
    has_units = bool(units_row) and not units_row[0].strip()
    first = at[0] + has_units
    data = ("\n".join(lines[first:end]) + "\n").encode("utf-8", "surrogateescape")
    return ncu_raw.read(data, 0, len(data), header, units_row if has_units else None, first + 1)


def _page(page: _ColumnPage, start: int, end: int, result: DialectResult, events: list[grouping.Event]) -> int:
    """A raw page read as columns: its header and units lines claimed, its launches' lines its own
    (`bulk`: claimed as one range, not a set of line numbers), its blocks."""
    result.claimed.update(range(start + 1, page.first_line))
    result.bulk.append((page.first_line, end - page.cut_row))  # (a cut row's text kept: it is reported)
    for blk in page.blocks(start + 1, end):
        events.append(grouping.Event("block", start + 1, block=blk))
    return end


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


class _Run:
    """The metrics of one ncu run as printed (each kernel's cells), read when the run's output ends
    in the decimal mark their cells say, and the blocks they make."""

    def __init__(self) -> None:
        self.pending: list[_Cells] = []  # the current kernel's cells
        self.kernels: list[list[_Cells]] = []  # each kernel's cells since the last flush
        # a --print-summary duration row's line -> its kernel line and launch count (-1: not a count)
        self.launches: dict[int, tuple[int, int]] = {}
        self.summary_lines: set[int] = set()  # --print-summary rows (averages, not one launch each)
        self.metrics: list[Row] = []
        self.summary_gpu: list[Row] = []  # --print-summary duration rows as GPU rows (no total printed)
        self.ambiguous: list[str] = []  # kernels whose sections left the decimal mark undecided
        self.first_line = 0

    def end_kernel(self) -> None:
        if self.pending:
            self.kernels.append(self.pending)
            self.pending = []

    def _run_locale(self) -> units.Locale | None:
        """The mark all the run's kernels say together (one process prints in one locale): for a
        kernel of integers alone ('524,288' requests)."""
        if len(self.kernels) < 2:
            return None
        vote = units.LocaleVote()
        for cells in self.kernels:
            _vote(cells, vote)
        if not (vote.comma or vote.dot or vote.comma4 or vote.group4):
            return None
        run = vote.locale()
        return None if run.ambiguous else run

    def resolve(self) -> None:
        self.end_kernel()
        run = self._run_locale()
        kernels = self.kernels
        for k, cells in enumerate(kernels):
            kernels[k] = []  # each kernel's cells let go as its rows are made (a run may hold 100,000s)
            read, undecided = _read(cells, run)
            if undecided:
                self.ambiguous.append(cells[0][0])
            for row in read:
                self.metrics.append(row)
                if row.line_start in self.launches and row.metric in DURATION_METRICS:
                    self._summary_row(row)
        self.kernels.clear()
        self.launches.clear()

    def _summary_row(self, row: Row) -> None:
        at, launched = self.launches[row.line_start]
        d = [duration_ns(v, row.unit) for v in (row.value, row.value_min, row.value_max)]
        if all(x == x for x in d):  # its launch count is on the kernel line
            self.summary_gpu.append(Row(section="gpu", name=row.name, line_start=at, line_end=row.line_start,
                                        calls=launched if launched >= 0 else None, avg_ns=d[0], min_ns=d[1],
                                        max_ns=d[2]))

    def flush(self, events: list[grouping.Event]) -> None:
        self.resolve()
        first, metrics, summary_gpu = self.first_line, self.metrics, self.summary_gpu
        if summary_gpu:
            events.append(grouping.Event("block", first, block=Block(
                section="gpu", rows=summary_gpu, line_start=first, line_end=summary_gpu[-1].line_end,
                notes=[SUMMARY_NOTE])))
        if metrics:
            notes = [f"{', '.join(self.ambiguous)}: {units.AMBIGUOUS_NOTE}"] if self.ambiguous else []
            events.append(grouping.Event("block", first, block=Block(
                section="ncu-metric", rows=metrics, line_start=first, line_end=metrics[-1].line_end, notes=notes)))
            summary = summarize(metrics, self.summary_lines)
            self.summary_lines.clear()
            if summary:
                events.append(grouping.Event("block", first, block=Block(
                    section="gpu", rows=summary, line_start=first, line_end=metrics[-1].line_end)))
        if metrics or summary_gpu:
            self.first_line = 0  # the next kernel line begins the next table
        self.metrics, self.summary_gpu = [], []
        self.ambiguous.clear()


class _Page:
    """One pass over an ncu log: the console details page (kernel lines, sections, metric tables,
    --print-summary tables) and the --csv pages among them."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.result = DialectResult()
        self.events: list[grouping.Event] = []
        self.run = _Run()
        self.kernel: str | None = None
        self.spans: list[tuple[int, int]] | None = None  # the dash runs of the metric table open
        self.rows_in_table = 0
        self.pid: int | None = None
        self.command: str | None = None
        self.invocations: int | None = None  # a --print-summary kernel line: min/max/avg over this many launches
        self.kernel_line = 0
        self.texts: dict[str, str] = {}  # metric names and units as first met

    def claim(self, lineno: int) -> bool:
        self.result.claimed.add(lineno)
        return True

    def flush(self) -> None:
        self.run.flush(self.events)
        if not isinstance(self.run, _Run):  # a console page's columns (adopt): the next run is the row reader's
            run, self.run = self.run, _Run()
            self.run.first_line = run.first_line

    def keep_resume(self, lineno: int) -> None:
        """At a profile start (a --csv page's header, a console run's '[N] app@host' line), just
        flushed: where the run holds nothing more (no kernel line waiting for its metrics), what a
        fresh parse from this line needs is this state (DialectResult.resume: a long log may be cut
        here, profconv.parse.stream)."""
        if not self.run.first_line and not self.run.summary_lines:
            self.result.resume[lineno] = (self.pid, self.command, self.kernel,
                                          None if self.spans is None else tuple(self.spans),
                                          self.rows_in_table, self.invocations, self.kernel_line)

    def resume_from(self, state: tuple) -> None:
        """The state keep_resume kept (a part of a longer log, read from that line)."""
        pid, command, kernel, spans, self.rows_in_table, self.invocations, self.kernel_line = state
        self.pid, self.command, self.kernel = pid, command, kernel
        self.spans = None if spans is None else list(spans)

    def adopt(self, region: ncu_console.Region, end: int) -> int:
        """A console page read from the bytes (ncu_console): its run and the state after its last line
        made this page's, the lines of it that stay in the text claimed; `end` (the index after
        its lines) handed back."""
        run = region.run
        run.first_line = self.run.first_line or run.first_line  # (a kernel line of no metric before)
        self.run = run  # type: ignore[assignment]
        self.kernel, spans, self.rows_in_table, self.invocations, self.kernel_line = region.state
        self.spans = None if spans is None else list(spans)
        self.result.claimed |= region.claimed
        return end

    def csv_page(self, i: int) -> int:
        """A --csv page: a profile of its own (two pages one after the other, the output of two
        runs, are two profiles even where no '==PROF==' line says whose they are); a long log may be
        cut at it (keep_resume)."""
        self.flush()
        self.keep_resume(i + 1)
        self.events.append(grouping.Event("start", i + 1, pid=self.pid, command=self.command))
        return _csv(self.doc, i, self.result, self.events)

    def run_line(self, line: str, lineno: int) -> bool:
        """'==PROF== Connected to process N' or '[N] app@host': who the following output is of."""
        # (each pattern tried only where a text it needs is in the line: most lines are metric rows)
        if "Connected to process" in line and (m := _CONNECTED.search(line)):
            self.pid, self.command = whole(m.group(1)), m.group(2)
            return True
        if line[:1] == "[" and (m := _PROCESS.match(line)):
            self.flush()
            self.keep_resume(lineno)
            self.events.append(grouping.Event("start", lineno, pid=whole(m.group(1)),
                                              command=self.command or m.group(2)))
            return self.claim(lineno)
        return False

    def kernel_of(self, line: str, lineno: int) -> bool:
        """A kernel line (details page) or a --print-summary kernel line with its launch count."""
        m = _KERNEL.match(line) if ", Stream " in line else None
        summary = None if m or "nvocations" not in line else _SUMMARY_KERNEL.match(line)
        if m is None and summary is None:
            return False
        self.run.end_kernel()
        self.kernel = (m or summary).group("name")  # type: ignore[union-attr]
        self.invocations = None
        if summary is not None:
            self.invocations = whole(summary.group("inv") or summary.group("inv2"))
            if self.invocations is None:  # a launch count past the Int64 calls column: reported, not read
                self.result.unplaced.append(lineno)
                self.invocations = -1
            self.kernel_line = lineno
        self.run.first_line = self.run.first_line or lineno
        self.spans = None
        return self.claim(lineno)

    def frame_line(self, line: str, lineno: int) -> bool:
        """A device line, a section title, a table's rule, or another profiler's output beginning."""
        device = "Device " in line and _DEVICE_LINE.match(line)
        if device and (self.kernel is not None or self.pid is not None or self.run.first_line == 0):
            return self.claim(lineno)
        if self.kernel is None:
            return True  # nothing of a kernel's output before its kernel line
        if "Section: " in line and _SECTION.match(line):
            self.spans = None
            return self.claim(lineno)
        if "---" in line and _RULE.match(line):
            if self.spans is not None and self.rows_in_table:
                self.spans = None  # the rule that closes a table: advice and program output follow
            else:
                self.spans = [(m.start(), m.end()) for m in re.finditer(r"-{3,}", line)]
                self.rows_in_table = 0
            return self.claim(lineno)
        if _other_tool_text(line) and _OTHER_TOOL.match(line):
            self.flush()
            self.events.append(grouping.Event("break", lineno))
            self.kernel, self.spans = None, None  # another profiler's output follows the ncu log
            return True
        return False

    def summary_row(self, line: str, lineno: int) -> None:
        """A row of a --print-summary table: Metric Name, Metric Unit, Minimum, Maximum, Average."""
        spans = cast("list[tuple[int, int]]", self.spans)
        name = line[: spans[1][0]].strip()
        if name == "Metric Name":
            self.claim(lineno)
            return
        unit = line[spans[1][0] : spans[2][0]].strip()
        cells = line[spans[2][0] :].replace("(!)", "").split()
        # the three values inside their columns (right-aligned since 2023, left-aligned before), a
        # blank before the first: a line shifted by a paste (or damaged) cuts a number in two and
        # is reported instead
        aligned = line[spans[2][0] - 1 : spans[2][0]] == " " and _in_columns(line, spans[2:])
        if name and len(cells) == 3 and aligned and not _ADVICE.match(line) and not line[: spans[0][0]].strip():
            lo, hi, avg = cells
            self.run.summary_lines.add(lineno)
            self.run.pending.append((cast(str, self.kernel), lineno, name, unit, avg, lo, hi))
            self.run.launches[lineno] = (self.kernel_line, cast(int, self.invocations))
            self.rows_in_table += 1
            self.claim(lineno)
        elif (_METRIC_LIKE.match(line) or _ENDS_IN_NUMBER.search(line)) and not _ADVICE.match(line):
            self.result.unplaced.append(lineno)  # a row that does not fit its columns (two cells run together)

    def metric_row(self, line: str, lineno: int) -> None:
        """A row of a details page's section table: Metric Name, Metric Unit, Metric Value."""
        spans = cast("list[tuple[int, int]]", self.spans)
        name = line[: spans[1][0]].strip()
        if name == "Metric Name":
            self.claim(lineno)
            return
        unit = line[spans[1][0] : spans[2][0]].strip()
        value = line[spans[2][0] :].strip()
        if name and value and _aligned(line, spans):
            texts = self.texts  # each metric's name and unit held once, not once a kernel
            if len(texts) > 4096:  # (not metric names: lines of something else)
                texts.clear()
            name, unit = texts.setdefault(name, name), texts.setdefault(unit, unit)
            self.run.pending.append((cast(str, self.kernel), lineno, name, unit, value, None, None))
            self.rows_in_table += 1
            self.claim(lineno)
        elif _METRIC_LIKE.match(line) and not _ADVICE.match(line):
            self.result.unplaced.append(lineno)  # a metric row out of line with its table

    def line(self, line: str, lineno: int) -> None:
        if self.run_line(line, lineno) or self.kernel_of(line, lineno) or self.frame_line(line, lineno):
            return
        if not self.spans or not line.strip():
            return
        if len(self.spans) == 5 and self.invocations is not None:
            self.summary_row(line, lineno)
        elif len(self.spans) == 3:
            self.metric_row(line, lineno)


def _console_region(doc: Document, i: int) -> bytescan.Table | None:
    """The console page after the '[N]' line at index `i`, read from the input's bytes, if it was."""
    t = doc.pre.tables.get(i) if getattr(doc.pre, "dialect", "") == "ncu" else None  # type: ignore[union-attr]
    if t is None or not isinstance(t.batch, ncu_console.Region):
        return None
    return doc.pre.take(i)  # type: ignore[union-attr]


def _window_pages(data: bytes) -> bytescan.PreRead | None:
    """A long log's window's --csv pages read from its bytes, as a whole file's are (ncu_raw.find;
    profconv.parse.stream)."""
    return ncu_raw.find(data, keep=False)


def parse(doc: Document) -> DialectResult:
    page = _Page(doc)
    if "ncu" in doc.state:  # a part of a longer log, from a profile start (DialectResult.resume)
        page.resume_from(doc.state["ncu"])
    lines = doc.lines
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r\n")
        if line.startswith(('"ID",', '"Process ID",')):
            i = page.csv_page(i)
            continue
        page.line(line, i + 1)
        if line[:1] == "[" and doc.pre is not None and (t := _console_region(doc, i)) is not None:
            i = page.adopt(t.batch, i + 1 + t.rows)  # a console page read from the bytes (ncu_console)
            continue
        i += 1
    page.flush()
    page.result.profiles = grouping.group(page.events, TOOL)
    return page.result


DIALECT = Dialect(
    name="ncu", title="ncu", product="Nsight Compute", tool=TOOL,
    markers=MARKERS,
    # a sweep of runs (each opened by its '==PROF== Connected' line) is cut at a profile start: a
    # --csv page's header, a console run's '[N] app@host' line (_Page.keep_resume); a '%' unit is no
    # nvprof marker there, nor 'Launch Statistics' an nsys one: their detects look at each window
    # instead (profconv.parse.stream)
    part_start="==PROF== Connected to process",
    # a run's pages of several MB (thousands of launches) are read whole: from the file's bytes, a page
    # at a time, they take less than the windows that would hold them
    extra={"stream": {"local_markers": {"nvprof": ("(%)", "%"), "nsys": ("Statistics",)}, "pre_read": _window_pages,
                      "window_most": 4 << 20}},
    sections=("gpu", "ncu-metric"),
    detect=detect, parse=parse,
)
