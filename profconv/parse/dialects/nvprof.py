"""nvprof text output: summaries (both layouts), --csv, GPU/API traces and Unified Memory tables.

Written to survive reports: markdown tables, HTML bold, tab-split columns, names wrapped over
lines, tables cut by code fences, `—PID—` prefixes. Pure: lines in, profiles out.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from itertools import takewhile
from operator import add, truth
from typing import Any

from profconv.parse import grouping, native, units
from profconv.parse.dialect import Dialect
from profconv.parse.model import Block, DialectResult, Document, RawProfile
from profconv.parse.names import brackets_open, short_name, strip_correlation
from profconv.parse.schema import Row
from profconv.parse.table import Rows
from profconv.parse.text import ELISION, FENCE, clean, csv_rows, is_neutral
from profconv.parse.traces import base_codes as _base_codes
from profconv.parse.traces import summarize_trace

TOOL = "nvprof"

_PREFIX = re.compile(r"^\s*(?:==(\d+)==|={8})\s?")
_START = re.compile(r"NVPROF is profiling process (\d+), command: (.*)$")
_APPLICATION = re.compile(r"Profiling application: (.*)$")
_RESULT = re.compile(r"^\s*Profiling result:?\s*$")
_API_MARKER = re.compile(r"^\s*API calls:?\s*$")
_DEVICE = re.compile(r'^\s*Device "(.+)"\s*$')
_LABEL = re.compile(r"^\s*(GPU activities|API calls|OpenACC \((?:excl|incl)\))\s*:\s*")
_UM_TRAILER = re.compile(
    r"^\s*(Total CPU Page faults|Total CPU thrashes|Total CPU throttles)\s*:\s*(\d{1,3}(?:,\d{3})+|\d+)\s*$"
)
_UM_TRAILER_NAME = re.compile(r"^\s*(Total CPU Page faults|Total CPU thrashes|Total CPU throttles)\s*:")
_TOKEN = re.compile(r"\S+")
_COUNT = re.compile(r"\d{1,3}(?:([.,'])\d{3})?(?:\1\d{3})*|\d+")
_SUFFIX_EXP = {"ms": "e6", "us": "e3", "ns": ""}
_UNIT_ONLY = re.compile(r"^(s|ms|us|µs|ns)$")
_TRACE_ROW = re.compile(
    r"^\s*(?P<start>\S+)\s+(?P<dur>\S+)\s+(?P<mid>.*?)\s*(?P<ctx>\d+)\s+(?P<stream>\d+)\s+(?P<name>[^\d\s].*)$"
)
_API_TRACE_ROW = re.compile(r"^\s*(?P<start>\S+)\s+(?P<dur>\S+)\s+(?P<name>[A-Za-z_].*)$")
_CSV_HEADER = re.compile(r'^"(Type|Time\(%\)|Start|Device)",|^Time\(%\),Time,Calls,')  # nvprof --csv, quoted or not

LABEL_SECTIONS = {
    "GPU activities": "gpu",
    "API calls": "api",
    "OpenACC (excl)": "openacc",
    "OpenACC (incl)": "openacc",
}
HEADER_FIELDS = {
    "type": "type",
    "time(%)": "pct",
    "time": "time",
    "calls": "calls",
    "call": "calls",
    "avg": "avg",
    "min": "min",
    "max": "max",
    "name": "name",
}
FULL_LAYOUT = ["pct", "time", "calls", "avg", "min", "max", "name"]
_N = r"(\d{1,15}(?:\.\d{1,12})?)(s|ms|us|ns)"
_FAST_ROW = re.compile(
    r"^\s*(?:==\d+==\s*)?(?:(GPU activities|API calls|OpenACC \((?:excl|incl)\))\s*:)?\s+(\d{1,3}\.\d\d)%\s+"
    rf"{_N}\s+(\d{{1,18}})\s+{_N}\s+{_N}\s+{_N}\s+(\S.*)$"
)
_NEEDS_CLEAN = re.compile(r"</?(?:b|strong|code|em|i|tt)>")
# the start of another summary row inside a row's name: rows glued together when line breaks were lost
_GLUED_ROW = re.compile(r"\s{2,}(?:(?:GPU activities|API calls|OpenACC \((?:excl|incl)\))\s*:\s+)?"
                        r"\d{1,3}(?:[.,]\d+)?%\s+\d")
_INF = float("inf")
_MATCHED = _FAST_ROW.match(" 1.00%  1s  1  1s  1s  1s  k")  # stands for a match not yet made


def _needs_clean(line: str) -> bool:
    """Markup a report may have added (table bars, entities, bold, tabs, dashes): _NEEDS_CLEAN,
    with the plain-character checks first (substring tests cost less than the regex). A lone '*'
    (a pointer, 'float*') is no markup: only '**' (bold) and a leading '\\*' are taken out."""
    if "|" in line or "&" in line or "\t" in line or "\u2014" in line or "\u2013" in line:
        return True
    if "*" in line and ("**" in line or "\\*" in line):
        return True
    return "<" in line and _NEEDS_CLEAN.search(line) is not None

_NAN = float("nan")
_CPU_ROW = re.compile(r"^\s*\d[\d.]*%\s+\S+\s+\S")
BULK_LINES = 20_000
_BULK_LINE = re.compile(r" *(\d{1,15}(?:\.\d{1,12})?)(ms|us|ns|s) +(\d{1,15}(?:\.\d{1,12})?)(ms|us|ns|s) ")
_UNIT_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
# the same units as exponents for a number's text: float('260.10' + 'e6'), correctly rounded, where
# float('260.10') * 1e6 is 260100000.00000003 (units.scaled_text)
_UNIT_EXP = {"s": "e9", "ms": "e6", "us": "e3", "ns": ""}
API_NAME = re.compile(r"^(cu[A-Z]|cuda[A-Z]|cublas|cudnn[A-Z]|nvtx|acc_)")
_ACC_EVENT = re.compile(r"^acc_\w+@")  # an OpenACC event and where it happened


# a profile start or a table, as grouping.group takes them (no copy per event at the end)
_Event = grouping.Event


@dataclass
class _Table:
    """The summary table being read: its columns and the row whose name may continue."""

    fields: list[str]
    time_unit: str | None
    section: str | None
    block: Block | None = None
    open_row: Row | None = None
    neutral_run: int = 0
    by_section: dict[str, Block] = field(default_factory=dict)
    fast: bool = False  # the standard 8-column layout: rows may take the one-regex path
    units_row: bool = False  # a units row under the header: every time cell may be a bare number
    pending: list[tuple[int, str]] = field(default_factory=list)  # numbers of a row split over lines
    orphan_text: bool = False  # a text line no row took since the last row: a name out of place?
    headerless: bool = False  # rows pasted without their header: a code fence ends them (their paste)
    unlabelled: bool = False  # and without a section label: a blank line ends them too (their paragraph)
    cell_per_line: bool = False  # the header came one cell a line (PDF text): a row's name follows its numbers
    votes: units.LocaleVote = field(default_factory=units.LocaleVote)  # every numeric cell so far
    locale: units.Locale = units.C_LOCALE
    read: list[tuple[Row, str, list[str], str | None]] = field(default_factory=list)  # to re-read if the locale changes
    # rows read in bulk are columns of their block (Block.table); where their lines are (index
    # ranges into `lines`), per section key, so they can become Row objects again (a row read line
    # by line joins the block, or the locale changes and every row is read again)
    bulk_raw: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # the parse's lines (summary rows stay in them)

    def materialize(self, key: str) -> None:
        """The bulk rows of the block of `key` as Row objects (in blk.rows), listed in `read`."""
        spans = self.bulk_raw.pop(key, None)
        blk = self.by_section.get(key)
        if spans is None or blk is None or blk.table is None:
            return
        raws = [ln for a, b in spans for ln in self.lines[a:b]]
        c = blk.table.cols
        rows = list(map(Row, c["section"], c["name"], c["line_start"], c["line_end"], c["time_pct"],
                        c["total_ns"], c["calls"], c["avg_ns"], c["min_ns"], c["max_ns"]))
        blk.rows = rows + blk.rows
        blk.table = None
        self.read.extend((r, _body(raw), self.fields, self.time_unit) for r, raw in zip(rows, raws))

    def vote(self, body: str) -> tuple[units.Locale, units.LocaleVote]:
        v = self.votes.copy().add(t for t in body.split() if t[:1].isdigit())
        return v.locale(), v

    def relocate(self, loc: units.Locale) -> None:
        """The table's decimal mark turned out different: read its earlier rows again."""
        self.locale = loc
        for key in list(self.bulk_raw):
            self.materialize(key)
        for row, body, fields, unit in self.read:
            parsed = parse_summary_row(body, fields, unit, loc)
            if parsed is not None:
                fresh = _row_from(parsed[1], row.name, row.section, row.line_start)
                for f in ("time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns"):
                    setattr(row, f, getattr(fresh, f))
        for blk in self.by_section.values():
            blk.notes = [units.AMBIGUOUS_NOTE] if loc.ambiguous else []


_PCT_HEADER = re.compile(r"Time ?\(%\)")
# a substring every marker, header and label test of the line loop needs (outside a table): a line
# with none of them can only be data or nothing
_KEYWORD = re.compile(r'Time|NVPROF|Profiling|CPU profiling|API calls|Invocations|Kernel: |Unified Memory|Start|"'
                      r"|GPU activities|OpenACC")


def detect(doc: Document) -> bool:
    if any(marker in doc.text for marker in ("NVPROF", "Profiling result", "GPU activities:")):
        return True
    pct = "(%)" in doc.text  # one scan for what the two Time(%) tests below need
    if pct and "Time(%),Time,Calls," in doc.text:  # nvprof --csv summary saved without its prefix lines
        return True
    if "Kernel: " in doc.text and _METRIC_FRAGMENT.search(doc.text):  # a --metrics summary fragment
        return True
    if "%" in doc.text and _headerless_rows(doc.text[:HEADERLESS_SCAN]):
        return True
    for m in _PCT_HEADER.finditer(doc.text) if pct else ():  # a bare summary header (pasted without its prefix lines)
        start = doc.text.rfind("\n", 0, m.start()) + 1
        end = doc.text.find("\n", m.end())
        line = doc.text[start : end if end >= 0 else None]
        if "Name" in line and "Total Time" not in line and "," not in line:
            return True
    return False


HEADERLESS_SCAN = 65536  # summary rows pasted without their header are looked for this far in
_ROW_TEXT = (r"[ \t]*(?:(?:GPU activities|API calls|OpenACC \((?:excl|incl)\))[ \t]*:)?[ \t]+\d{1,3}\.\d\d%[ \t]+"
             r"(?:\d+(?:\.\d+)?(?:s|ms|us|ns)[ \t]+)\d+(?:[ \t]+\d+(?:\.\d+)?(?:s|ms|us|ns)){3}[ \t]+\S[^\n]*")
_TWO_ROWS = re.compile(rf"(?m)^{_ROW_TEXT}\n{_ROW_TEXT}$")


def _row_run(body: str, lines: list[str], i: int) -> bool:
    """Whether this line and the next (index i) are nvprof summary rows: a table without a header."""
    return i < len(lines) and _FAST_ROW.match(body) is not None and _FAST_ROW.match(lines[i]) is not None


def _headerless_rows(text: str) -> bool:
    """Two nvprof summary rows in a row ('0.39%  7.2980ms  8002  912ns  834ns  12.646us  acc_…'):
    a table pasted without its header and the lines above it (a thread's second message, an
    excerpt); the 8-column layout with its units and share is nvprof's alone."""
    return _TWO_ROWS.search(text) is not None


_TIME_HEADER = re.compile(r"Time\((ms|us|ns|s)\)")


def parse_header(body: str) -> tuple[list[str], str | None] | None:
    """'Type Time(%) Time Calls Avg Min Max Name' -> field list; None if not a summary header."""
    if "Name" not in body or "Time" not in body:  # the last token and the Time(%) one
        return None
    got = _HEADERS.get(body, _UNKNOWN)
    if got is _UNKNOWN:
        if len(_HEADERS) >= 256:
            _HEADERS.clear()
        got = _HEADERS[body] = _parse_header(body)
    return got  # type: ignore[return-value]


_HEADERS: dict[str, tuple[list[str], str | None] | None] = {}  # a log repeats its headers: each read once
_UNKNOWN = object()


def _parse_header(body: str) -> tuple[list[str], str | None] | None:
    text = body.replace("Time (%)", "Time(%)").replace("Time (ms)", "Time(ms)")
    text = text.replace("Time (us)", "Time(us)").replace("Time (s)", "Time(s)")
    tokens = text.split()
    if "Time(%)" not in tokens or tokens[-1] != "Name":
        return None
    fields, unit = [], None
    for tok in tokens:
        m = _TIME_HEADER.fullmatch(tok) if tok.startswith("Time(") else None
        if m:
            fields.append("time")
            unit = m.group(1)
            continue
        f = HEADER_FIELDS.get(tok.lower())
        if f is None:
            return None
        fields.append(f)
    return fields, unit


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Whitespace tokens with spans; '24.749 us' (unit split off by a PDF) becomes one token."""
    raw = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[tuple[str, int, int]] = []
    for tok in raw:
        if out and _UNIT_ONLY.match(tok[0]) and units.is_number(out[-1][0]):
            prev = out.pop()
            out.append((prev[0] + tok[0], prev[1], tok[2]))
        else:
            out.append(tok)
    return out


def parse_summary_row(body: str, fields: list[str], time_unit: str | None, loc: units.Locale = units.C_LOCALE,
                      all_times: bool = False):
    """One summary row -> (label, values, name) or None when the line is not a row of this table."""
    label = None
    m = _LABEL.match(body)
    rest = body
    if m:
        label = m.group(1)
        rest = body[m.end() :]
    toks = _tokens(rest)
    values: dict[str, float] = {}
    k = 0
    for f in fields:
        if f in ("type", "name"):
            continue
        if k >= len(toks):
            return None
        tok = toks[k][0]
        try:
            if f == "pct":
                if not units.is_percent(tok):
                    return None
                values[f] = units.percent(tok, loc)
            elif f == "calls":
                if not _COUNT.fullmatch(tok):
                    return None
                values[f] = units.count(tok, loc)
            elif f == "time" or all_times:
                values[f] = units.time_ns(tok, time_unit, loc)
            else:
                values[f] = units.time_ns(tok, None, loc)
        except ValueError:
            return None
        k += 1
    name = rest[toks[k][1] :].replace("\t", " ").strip() if k < len(toks) else ""
    return label, values, name


def _row_from(values: dict[str, float], name: str, section: str, line: int) -> Row:
    calls = values.get("calls")
    return Row(
        section=section,
        name=name,
        line_start=line,
        line_end=line,
        time_pct=values.get("pct", float("nan")),
        total_ns=values.get("time", float("nan")),
        calls=int(calls) if calls is not None else None,
        avg_ns=values.get("avg", float("nan")),
        min_ns=values.get("min", float("nan")),
        max_ns=values.get("max", float("nan")),
    )


_METRIC_VALUE = re.compile(r"^(\d[\d.]*(?:[eE][+-]?\d+)?)\s*([A-Za-z%/]+)?$")
_MVAL = r"(?:[A-Za-z]+ \(\d+\)|\S+)"  # '0.935178', '99.92%', '1.9424GB/s', 'Low (1)'
_METRIC_LINE = re.compile(
    r"^\s*(\d+)\s+(\w+ \(\d+ instances\))\s+(\S.*?)\s+(-)\s+(-)\s+(\[.*\])\s*$"  # per-instance values
    rf"|^\s*(\d+)\s+(\w+)\s+(\S.*?)\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s*$"
)
# --events: Invocations, Event Name, Min, Max, Avg, Total (no description)
_EVENT_LINE = re.compile(rf"^\s*(\d+)\s+(\w+)\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s+({_MVAL})\s*$")
_LEVEL = re.compile(r"^([A-Za-z]+) \((\d+)\)$")
_METRIC_HEADER = re.compile(r"^\s*Invocations\s+(?:Metric|Event) Name\s+(?:(?:Metric|Event) Description\s+)?Min\s+Max\s+Avg")
_METRIC_FRAGMENT = re.compile(r"Kernel: [^\n]+\n\s*\d+\s+\w+\s+\S[^\n]*\s\S+\s+\S+\s+\S+\n")
# (a paste may have joined the device line to the kernel's: 'Device "GeForce GT 1030 (0)"    Kernel: mm$_omp_fn$0')
_KERNEL_LINE = re.compile(r'^\s*(?:Device "[^"]*"\s+)?Kernel: (\S.*?)\s*$')
_NOT_PRINTED = ("-",)  # a per-instance row's Min and Max
_NOT_AVAILABLE = ("n/a", "N/A")


def _metric_cell(cell: str) -> tuple[float, str | None, str | None] | None:
    """One Min/Max/Avg/Total cell of nvprof's --metrics/--events: (number, unit, text as printed
    when it is not a plain number); None when it is none of nvprof's forms. A utilization level
    ('Low (1)') is its number with its text; a per-instance list ('[ 1 2 ]') and n/a are text only."""
    c = cell.strip()
    if lv := _LEVEL.match(c):
        return units.number(lv.group(2)), None, c
    if c.startswith("[") or c in _NOT_AVAILABLE:
        return float("nan"), None, c
    if c in _NOT_PRINTED:
        return float("nan"), None, None
    if m := _METRIC_VALUE.match(c):
        return units.number(m.group(1)), m.group(2), None
    return None


def _metric_row(kernel: str, metric: str, invocations: str, cells: tuple[str, str, str], line: int,
                description: str | None = None, total: str | None = None) -> Row | None:
    """One --metrics / --events summary row: `value` is the Avg over the invocations, with Min and
    Max (and an event's Total) beside it, each in the row's unit: the Avg's as printed ('%', 'GB/s';
    where the Avg is no number, the unit Min and Max share). A Min or Max printed in another unit
    ('0.00000B/s' beside '1.2132GB/s') keeps its text only: nvprof's scale is not assumed (zero
    aside, which is zero in any unit). None when a cell is none of nvprof's forms (the line is
    reported)."""
    try:
        calls = units.count(invocations) if invocations.strip() else None
        got = [_metric_cell(c) for c in cells]
        tot = _metric_cell(total) if total is not None else None
    except ValueError:
        return None
    lo, hi, avg = got
    if lo is None or hi is None or avg is None or (total is not None and tot is None):
        return None
    unit = avg[1] if avg[0] == avg[0] else (lo[1] if lo[1] == hi[1] else None)

    def in_unit(c: tuple[float, str | None, str | None], printed: str) -> tuple[float, str | None]:
        v, u, text = c
        if u == unit or v == 0.0:
            return v, text
        return float("nan"), printed.strip()

    vmin, tmin = in_unit(lo, cells[0])
    vmax, tmax = in_unit(hi, cells[1])
    vtot = float("nan")
    if tot is not None:
        vtot, ttot = in_unit(tot, total or "")
        if ttot is not None and ttot not in _NOT_AVAILABLE:
            return None  # a Total printed as text or in another unit: no column keeps it, so reported
    return Row(section="metric", name=kernel.strip(), line_start=line, line_end=line, metric=metric.strip(),
               description=description.strip() or None if description is not None else None,
               unit=unit, value=avg[0], value_text=avg[2], value_min=vmin, value_max=vmax, value_total=vtot,
               value_text_min=tmin, value_text_max=tmax, calls=calls)


def _metric_line(body: str, layout: str | None, kernel: str, lineno: int) -> tuple[Row | None, str | None] | None:
    """A --metrics or --events row under `layout` ('metric', 'event', or None when no header was
    seen: a fragment pasted from its 'Kernel:' line, where a row whose description would be a
    number is an event row): the row (None if its cells do not read) and the layout it had; None
    when the line is no such row."""
    if layout != "metric" and (em := _EVENT_LINE.match(body)):
        if layout == "event" or _METRIC_VALUE.match(em.group(3).strip()):
            inv, name, lo, hi, avg, total = em.groups()
            return _metric_row(kernel, name, inv, (lo, hi, avg), lineno, total=total), "event"
    if layout == "event":
        return None
    mm = _METRIC_LINE.match(body)
    if mm is None:
        return None
    g = mm.groups()
    inv, name, desc, lo, hi, avg = g[:6] if g[0] is not None else g[6:]
    return _metric_row(kernel, name, inv, (lo, hi, avg), lineno, description=desc), "metric"


def _metric_follows(lines: list[str], i: int) -> bool:
    """A 'Kernel: name' line opens a metric summary fragment when metric rows follow it."""
    return i < len(lines) and _METRIC_LINE.match(lines[i]) is not None


def _units_row(body: str) -> str | None:
    """'%  ms  ms  ms  ms  ms' under a summary header: the one time unit every bare number is in."""
    toks = body.split()
    if len(toks) < 3 or toks[0] != "%" or any(t not in _UNIT_NS for t in toks[1:]) or len(set(toks[1:])) != 1:
        return None
    return toks[1]


_TRACE_UNIT_CELLS = {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "B/s", "KB/s", "MB/s", "GB/s", "TB/s"}


def _trace_units(raw: str) -> tuple[str, str] | None:
    """'      ms        ms   KB  KB  MB  GB/s' under a trace header (--normalized-time-unit): the
    units of the Start and Duration columns; None when the line is not such a row."""
    toks = raw.split()
    if len(toks) < 2 or toks[0] not in _UNIT_NS or toks[1] not in _UNIT_NS:
        return None
    return (toks[0], toks[1]) if all(t in _UNIT_NS or t in _TRACE_UNIT_CELLS for t in toks) else None


def _summary_follows(lines: list[str], i: int) -> bool:
    """Whether the next non-blank line (index i on) is a summary table's header."""
    for ln in lines[i : i + 3]:
        body = clean(ln)
        m = _PREFIX.match(body)
        body = body[m.end():] if m else body
        if body.strip():
            return parse_header(body) is not None
    return False


def _header_word(body: str) -> bool:
    """A line holding one summary-header cell and nothing else ('Type', 'Time(%)', 'Avg')."""
    w = body.strip().replace("Time (", "Time(")
    return bool(w) and " " not in w and (w.lower() in HEADER_FIELDS or _TIME_HEADER.fullmatch(w) is not None)


def _cell_per_line_header(lines: list[str], i: int) -> tuple[tuple[list[str], str | None], int] | None:
    """A summary header with each cell on a line of its own, from index i up to the 'Name' line:
    its fields and the index of that line, or None."""
    words: list[str] = []
    if i > 0 and clean(lines[i - 1]).strip() == "Type":  # a line with no keyword: the loop passed it
        words.append("Type")
    j = i
    while j < len(lines) and j < i + 9:
        w = clean(lines[j]).strip()
        m = _PREFIX.match(w)
        w = w[m.end():].strip() if m else w
        if not _header_word(w):
            return None
        words.append(w)
        if w == "Name":
            got = parse_header(" ".join(words))
            return (got, j) if got is not None and len(words) >= 4 else None
        j += 1
    return None


def _count_only(body: str) -> bool:
    """A line holding one plain count ('6'): the Calls cell of a row a PDF put one cell per line."""
    t = body.strip()
    return t.isdigit() and len(t) <= 15


def _numbers_only(body: str) -> bool:
    """A line of nothing but numbers, times and percentages (one piece of a split row)."""
    m = _LABEL.match(body)
    toks = (body[m.end() :] if m else body).split()
    return bool(toks) and all(t[:1].isdigit() or t[:1] == "<" for t in toks) and any(
        units.is_time(t) or t.endswith("%") for t in toks)


def _numeric_row(body: str) -> bool:
    """A line of four or more numbers and a name: a summary row this table could not read."""
    toks = body.split()
    return len(toks) >= 5 and sum(1 for t in toks[:8] if t[:1].isdigit() and units.is_number(t.rstrip("%"))) >= 4


def looks_like_data(body: str) -> bool:
    # how times and shares start, and end (a time ends with its unit: 's', 'u'; a share with '%')
    toks = [t for t in body.split() if t[-1] in "su%" and (t[:1].isdigit() or t[:1] in (".", "+"))]
    if not toks:
        return False
    times = sum(1 for t in toks if units.is_time(t))
    pcts = sum(1 for t in toks if t.endswith("%") and units.is_number(t[:-1]))
    return times >= 2 or (times >= 1 and pcts >= 1)


def _continues(row: Row) -> bool:
    return _name_continues(row.name)


def _name_continues(n: str) -> bool:
    """A row name that may go on on the next line (cut at the terminal's edge)."""
    if not n or n.endswith((" void", ",", "::")) or n == "void":
        return True
    if "<" in n or ">" in n:  # what '<' and '>' count for depends on their neighbours ('<<', '->')
        return brackets_open(n)
    # brackets_open's depth at the end without them: the brackets opened less those closed
    return n.count("(") + n.count("[") > n.count(")") + n.count("]")


_IDENT_TAIL = re.compile(r"[A-Za-z_][\w$]*$")
_IDENT_PART = re.compile(r"[\w$]+")


def _cut_token(raw: str, name: str) -> bool:
    """A line that is the rest of an identifier the line above was cut inside: one word of
    identifier characters at the line's very start (a continuation the log's writer wrapped, not
    an indented row or prose), after a name ending in an identifier."""
    return _IDENT_PART.fullmatch(raw.rstrip("\r\n ")) is not None and _IDENT_TAIL.search(name) is not None


def _row_follows(raw: str, table: _Table) -> bool:
    """Whether the line reads as a row of this summary table."""
    if _FAST_ROW.match(raw):
        return True
    line = clean(raw)
    pm = _PREFIX.match(line) if "=" in line else None
    return parse_summary_row(line[pm.end():] if pm else line, table.fields, table.time_unit, table.locale,
                             table.units_row) is not None


def classify(block: Block) -> str:
    """A table printed without a section marker: API calls if most names are CUDA API names."""
    names = [r.name for r in block.rows] or (list(block.table.col("name")) if block.table is not None else [])
    acc = sum(1 for n in names if _ACC_EVENT.match(n))
    if names and acc * 2 >= len(names):
        return "openacc"  # 'acc_compute_construct@file.c:12': the OpenACC (excl) section's names
    api = sum(1 for n in names if API_NAME.match(n))
    return "api" if names and api * 2 >= len(names) else "gpu"


# ---------------------------------------------------------------- traces


def _trace_block(rows: list[tuple], section: str, start_line: int, end_line: int,
                 bulk: list[dict] | None = None) -> tuple[Block, tuple[list[int], list[str]]]:
    """The trace rows (tuples, and column chunks read in bulk) as one block of columns in line
    order, short names filled once per distinct name without its correlation id. Also returns the
    rows' base-name codes and the distinct base names, for the summary."""
    parts = list(bulk or [])
    if rows:
        names, starts, durs, lo, hi = zip(*rows)
        part: dict = {"name": list(names), "start_ns": array("d", starts), "total_ns": array("d", durs),
                      "line": list(lo)}
        if lo != hi:  # a name wrapped over lines
            part["line_end"] = list(hi)
        parts.append(part)
    if len(parts) > 1:
        parts.sort(key=lambda c: int(c["line"][0]))
    index: dict[str, int] = {}
    codes: list[int] = []
    for c in parts:
        codes.extend(_base_codes(c["name"], index))
    uniques = list(index)
    shorts = [short_name(b) for b in uniques]
    line: list[int] = []
    line_end: list[int] | None = [] if any("line_end" in c for c in parts) else None
    names_all: list[str] = []
    start = array("d")
    total = array("d")
    for c in parts:
        line.extend(c["line"])
        if line_end is not None:
            line_end.extend(c.get("line_end", c["line"]))
        names_all.extend(c["name"])
        start.extend(c["start_ns"])
        total.extend(c["total_ns"])
    parts.clear()
    n = len(line)
    table = Rows({
        "section": [section] * n, "name": names_all, "short_name": list(map(shorts.__getitem__, codes)),
        "start_ns": start, "total_ns": total, "calls": [1] * n, "line_start": line,
        "line_end": line if line_end is None else line_end,
    }, n)
    return Block(section=section, table=table, line_start=start_line, line_end=end_line), (codes, uniques)


_ALIGNED: dict[int, re.Pattern] = {}


def _aligned_row(name_col: int) -> re.Pattern:
    """A trace row whose name starts at `name_col` (a space before it, none at it): the two
    leading times, units glued on, captured."""
    rx = _ALIGNED.get(name_col)
    if rx is None:
        rx = _ALIGNED[name_col] = re.compile(rf"(?=.{{{name_col - 1}}} [^ ])" + _BULK_LINE.pattern)
    return rx


def _bulk_trace(lines: list[str], i: int, name_col: int) -> tuple[dict | None, int]:
    """Aligned trace rows from index i read by one regex pass (the common case: 'start duration …
    name' with units glued on); returns the chunk and the index after it. Rows that do not read
    cleanly are left to the line-by-line path."""
    row = _aligned_row(name_col)
    n = min(len(lines), i + BULK_LINES)  # a slice at a time: the temporaries stay small
    found: list[Any] = list(map(row.match, lines[i : min(n, i + 64)]))
    if len(found) < 64 or None in found:
        return None, i
    found.extend(map(row.match, lines[i + 64 : n]))
    if None in found:  # stop before the first row that needs a closer look
        del found[found.index(None) :]
    j = i + len(found)
    block = lines[i:j]
    # digits and a dot only (the pattern says so): every value is finite
    unit = _UNIT_EXP
    start = array("d", [float(m[1] + unit[m[2]]) for m in found])
    dur = array("d", [float(m[3] + unit[m[4]]) for m in found])
    names = [ln[name_col:].rstrip() for ln in block]
    del block, found
    lines[i:j] = [""] * (j - i)  # read: the rows are theirs alone (DialectResult.bulk), free the text as we go
    return {"name": names, "start_ns": start, "total_ns": dur, "line": range(i + 1, j + 1)}, j


NAN_ = float("nan")


def _trace_header(body: str) -> str | None:
    if "Start" not in body:
        return None
    toks = body.split()
    if len(toks) >= 3 and toks[0] == "Start" and toks[1] == "Duration" and toks[-1] == "Name":
        return "gpu-trace" if len(toks) > 3 else "api-trace"
    return None


# ---------------------------------------------------------------- CSV


def _csv_rows(lines: list[str], i: int) -> tuple[list[list[str]], int]:
    """Consecutive CSV lines from index i (each cleaned of its report markup and PID prefix);
    returns rows and the index after them. Only the table's own lines are read: linear in the file."""
    out = [_csv_line(lines[i])]
    j = i + 1
    if j < len(lines) and "," in lines[j]:
        out.append(_csv_line(lines[j]))
        j += 1
    while j < len(lines):
        c = _csv_line(lines[j])
        if not (c.strip() and (c[0] in '",' or c[0].isdigit())):
            break
        out.append(c)
        j += 1
    return csv_rows(out), j


def _csv_line(line: str) -> str:
    c = clean(line)
    m = _PREFIX.match(c)
    return c[m.end() :] if m else c


def _csv_value(cell: str, unit: str, kind: str) -> float:
    cell = cell.strip()
    if cell in ("", "-", "<OVERFLOW>", "n/a"):
        return float("nan")
    if kind == "time":
        return units.time_ns(cell, unit if unit in units.TIME_UNITS_NS else None)
    if kind == "size":
        return units.size_bytes(cell) if not units.is_number(cell) else units.number(cell) * (
            units.SIZE_UNITS_BYTES.get(unit.lower(), 1)
        )
    return units.number(cell)


_NUMBER_STARTS = ("+", ".")


def _parse_csv_table(rows: list[list[str]], first_line: int) -> tuple[list[Block], list[int]]:
    """A --csv table (header, optional units row, data) -> blocks; returns unparsable line numbers."""
    header = rows[0]
    if not header:
        return [], list(range(first_line, first_line + len(rows)))
    has_units = len(rows) > 1 and (not rows[1] or rows[1][0] in ("", "%", "ms", "us", "s", "ns")) and not any(
        units.is_number(c) for c in rows[1] if c.strip()[:1] in _NUMBER_STARTS or c.strip()[:1].isdigit()
    )  # a number starts with a digit, '+' or '.' (a unit cell is looked at no further)
    unit_row = rows[1] if has_units else [""] * len(header)
    data = rows[2:] if has_units else rows[1:]
    offset = first_line + (2 if has_units else 1)
    bad: list[int] = []
    col = {h: k for k, h in enumerate(header)}
    blocks: dict[str, Block] = {}

    def block(section: str, line: int) -> Block:
        if section not in blocks:
            blocks[section] = Block(section=section, line_start=line, line_end=line)
        return blocks[section]

    if "Time(%)" in col:  # summary
        for n, r in enumerate(data):
            line = offset + n
            if (len(r) > len(header) and header[-1] == "Name" and brackets_open(r[len(header) - 1])
                    and all(x.startswith(" ") for x in r[len(header) :])):
                # an unquoted name with commas ('red_sor(float*, float*)'): the name is the last
                # column, so the extra fields are the rest of it
                r = r[: len(header) - 1] + [",".join(r[len(header) - 1 :])]
            if len(r) != len(header):
                bad.append(line)
                continue
            try:
                section = LABEL_SECTIONS.get(r[col["Type"]], "gpu") if "Type" in col else "gpu"
                vals = {
                    "pct": units.percent(r[col["Time(%)"]]),
                    "time": _csv_value(r[col["Time"]], unit_row[col["Time"]], "time"),
                    "calls": int(r[col["Calls"]]),
                    "avg": _csv_value(r[col["Avg"]], unit_row[col["Avg"]], "time"),
                    "min": _csv_value(r[col["Min"]], unit_row[col["Min"]], "time"),
                    "max": _csv_value(r[col["Max"]], unit_row[col["Max"]], "time"),
                }
                b = block(section, line)
                b.rows.append(_row_from(vals, r[col["Name"]], section, line))
                b.line_end = line
            except (ValueError, IndexError, KeyError):
                bad.append(line)
    elif header[0] == "Start":  # GPU / API trace
        name_col = col.get("Name", len(header) - 1)
        recs = []
        for n, r in enumerate(data):
            line = offset + n
            try:
                start = _csv_value(r[0], unit_row[0], "time")
                dur = _csv_value(r[1], unit_row[1], "time")
                recs.append((r[name_col], start, dur, line, line))
            except (ValueError, IndexError):
                bad.append(line)
        section = "gpu-trace" if "Grid X" in col or "Size" in col else "api-trace"
        if recs:
            tb, bases = _trace_block(recs, section, offset, offset + len(data) - 1)
            assert tb.table is not None
            blocks[section] = tb
            summary = summarize_trace(tb.table, "gpu" if section == "gpu-trace" else "api", bases)
            blocks[summary.section or "gpu"] = summary
    elif header[0] == "Device" and "Count" in col:  # Unified Memory
        for n, r in enumerate(data):
            line = offset + n
            try:
                name = r[-1]
                count = r[col["Count"]].strip()
                b = block("unified-memory", line)
                b.rows.append(
                    Row(
                        section="unified-memory",
                        name=name,
                        line_start=line,
                        line_end=line,
                        calls=int(count) if count else None,
                        bytes=_csv_value(r[col["Total Size"]], "", "size"),
                        total_ns=_csv_value(r[col["Total Time"]], unit_row[col["Total Time"]] or "s", "time"),
                    )
                )
                b.line_end = line
            except (ValueError, IndexError, KeyError):
                bad.append(line)
    elif "Kernel" in col and ("Metric Name" in col or "Event Name" in col) and {"Min", "Max", "Avg"} <= col.keys():
        # --metrics / --events summary: one row per kernel x metric (or event)
        name_col = col["Metric Name"] if "Metric Name" in col else col["Event Name"]
        for n, r in enumerate(data):
            line = offset + n
            if len(r) != len(header):
                bad.append(line)
                continue
            row = _metric_row(r[col["Kernel"]], r[name_col], r[col["Invocations"]] if "Invocations" in col else "",
                              (r[col["Min"]], r[col["Max"]], r[col["Avg"]]), line,
                              description=r[col["Metric Description"]] if "Metric Description" in col else None,
                              total=r[col["Total"]] if "Total" in col else None)
            if row is None:
                bad.append(line)
                continue
            b = block("metric", line)
            b.rows.append(row)
            b.line_end = line
    elif header[0] == "Device" and "Kernel" in col:  # --metrics / --events trace
        kernel = col["Kernel"]
        for n, r in enumerate(data):
            line = offset + n
            b = block("metric", line)
            for k, h in enumerate(header):
                if k <= col.get("Correlation_ID", kernel) or k >= len(r):
                    continue
                cell = r[k]
                try:
                    value = units.number(cell) if cell.strip() else float("nan")
                except ValueError:
                    value = float("nan")
                b.rows.append(
                    Row(
                        section="metric",
                        name=strip_correlation(r[kernel]),
                        line_start=line,
                        line_end=line,
                        metric=h,
                        unit=unit_row[k] if k < len(unit_row) else None,
                        value=value,
                    )
                )
            b.line_end = line
    else:
        bad.extend(range(first_line, first_line + len(rows)))
    return list(blocks.values()), bad


# ---------------------------------------------------------------- driver


def parse(doc: Document) -> DialectResult:
    result = DialectResult()
    events: list[_Event] = []
    lines = doc.lines
    table: _Table | None = None
    mode: str | None = None  # summary | um | trace
    trace_rows: list[tuple] = []
    trace_bulk: list[dict] = []
    trace_section = "gpu-trace"
    trace_start = 0
    trace_units: tuple[str | None, str | None] = (None, None)  # a normalized trace's Start and Duration units
    name_col = 0
    pending_section: str | None = None
    cell_header = False  # the header just read came one cell a line
    device: str | None = None
    um_block: Block | None = None
    last_pid: int | None = None
    metric_block: Block | None = None
    metric_kernel: str | None = None
    rowscan = native.load("_rowscan")  # looked up per parse: PROFCONV_PURE_PYTHON=1 switches it off
    metric_layout: str | None = None  # metric | event (the header's), None for a fragment without one
    if "nvprof" in doc.state:  # a part of a longer log, from a profile start (DialectResult.resume)
        pending_section, cell_header, device, last_pid, metric_kernel, metric_layout = doc.state["nvprof"]

    def flush_trace(end_line: int) -> None:
        nonlocal trace_rows, trace_bulk
        result.claimed.update(r[3] for r in trace_rows)
        if trace_rows or trace_bulk:
            tb, bases = _trace_block(trace_rows, trace_section, trace_start, end_line, trace_bulk)
            assert tb.table is not None
            events.append(_Event("block", trace_start, block=tb))
            summary = summarize_trace(tb.table, "gpu" if trace_section == "gpu-trace" else "api", bases)
            events.append(_Event("block", trace_start, block=summary))
        trace_rows = []
        trace_bulk = []

    def drop_nameless(t: _Table) -> None:
        """A row whose numbers were read but whose name never came (a PDF lost that cell): its
        lines are reported, the row is not kept (a row without a name is no row)."""
        row = t.open_row
        if row is None or row.name:
            return
        blk = t.by_section.get(row.section or "?")
        if blk is not None:
            blk.rows = [r for r in blk.rows if r is not row]
        t.read = [x for x in t.read if x[0] is not row]
        span = range(row.line_start, row.line_end + 1)
        result.claimed.difference_update(span)
        result.unplaced.extend(span)
        t.open_row = None

    def end_table() -> None:
        nonlocal table, mode, um_block
        if table is not None:
            drop_nameless(table)
        if table is not None and table.pending:
            result.unplaced.extend(n for n, _ in table.pending)  # numbers that never made a row
        table = None
        um_block = None
        mode = None

    def block_for(table: _Table, label: str | None, lineno: int) -> Block:
        """The block of the section a row at `lineno` belongs to (its label switches it), made if new."""
        if label:
            table.section = LABEL_SECTIONS[label]
        section = table.section
        key = section or "?"
        blk = table.by_section.get(key)
        if blk is None:
            blk = Block(section=section, line_start=lineno, line_end=lineno)
            table.by_section[key] = blk
            events.append(_Event("block", lineno, block=blk))
        elif blk.table is not None:
            table.materialize(key)
        return blk

    def keep(table: _Table, blk: Block, row: Row, body: str, fields: list[str], unit: str | None, lineno: int) -> None:
        table.read.append((row, body, fields, unit))
        blk.rows.append(row)
        blk.line_end = lineno
        table.open_row = row
        table.neutral_run = 0
        table.orphan_text = False
        result.claimed.add(lineno)

    def place(table: _Table, parsed, body: str, row_fields: list[str], loc: units.Locale, lineno: int) -> None:
        label, values, name = parsed
        blk = block_for(table, label, lineno)
        row = _row_from(values, name, table.section or "?", lineno)
        if loc.ambiguous:
            blk.notes = [units.AMBIGUOUS_NOTE]
        keep(table, blk, row, body, row_fields, table.time_unit if row_fields is table.fields else None, lineno)

    i = 0
    n_lines = len(lines)
    while i < n_lines:
        lineno = i + 1
        raw = lines[i]
        i += 1
        if mode == "summary" and table is not None and table.fast and table.locale is units.C_LOCALE:
            # the common case in one regex: a plain nvprof row, '12.34%' saying '.' is the decimal mark
            if rowscan is not None:  # the run of plain rows from here read in C
                got = rowscan.scan(lines, i - 1, n_lines)
                if got[1] == 2:  # a line C leaves to the regex (not ASCII) before the run ended
                    m = _FAST_ROW.match(raw)
                    got = _scan_regex(lines, i - 1, m) if m is not None else None
                else:
                    m = _MATCHED if got[0] or got[1] else None  # the regex matches line i - 1
            else:
                m = _FAST_ROW.match(raw)
                got = _scan_regex(lines, i - 1, m) if m is not None else None
            if got is not None and got[0] and (j := _bulk_summary(lines, i - 1, got, table, events, result)) >= i:
                i = j  # this row and the plain rows after it read at once
                continue
            if m is _MATCHED:
                m = _FAST_ROW.match(raw)
            if m is not None and not _needs_clean(raw) and not ("%" in m.group(12) and _GLUED_ROW.search(m.group(12))):
                g = m.groups()
                pct = float(g[1])
                if pct <= 100.0:
                    table.votes.dot += 1
                    body = raw[_PREFIX.match(raw).end():] if raw.lstrip().startswith("==") else raw  # type: ignore[union-attr]
                    # what place() does, for this one layout (C locale: nothing ambiguous)
                    blk = block_for(table, g[0], lineno)
                    u = _UNIT_EXP
                    fast = Row(table.section or "?", g[11].rstrip(), lineno, lineno, pct, float(g[2] + u[g[3]]),
                               int(g[4]), float(g[5] + u[g[6]]), float(g[7] + u[g[8]]), float(g[9] + u[g[10]]))
                    keep(table, blk, fast, body, table.fields, table.time_unit, lineno)
                    continue
        if mode == "trace" and name_col:
            chunk, j = _bulk_trace(lines, i - 1, name_col)
            if chunk is not None:
                trace_bulk.append(chunk)
                result.bulk.append((i, j))
                i = j
                continue
        if mode == "trace":
            if lineno == trace_start and (tu := _trace_units(raw)) is not None:
                # --normalized-time-unit: a units row under the header; the times below are bare numbers
                trace_units = tu
                result.claimed.add(lineno)
                continue
            # fast path: nvprof left-aligns Name under its header word; the times come first
            if name_col and len(raw) > name_col and raw[name_col - 1] == " " and raw[name_col] != " ":
                parts = raw.split(None, 2)
                try:
                    a, d = parts[0], parts[1]
                    fa, fd = _SUFFIX_EXP.get(a[-2:]), _SUFFIX_EXP.get(d[-2:])
                    start = float(a[:-2] + fa) if fa is not None else units.time_ns(a, trace_units[0])
                    # Unified Memory events (page faults, …) print '-' for a duration they do not have
                    dur = float(d[:-2] + fd) if fd is not None else (
                        _NAN if d == "-" else units.time_ns(d, trace_units[1]))
                    # float() also takes 'nan', 'inf', '-5', '1_0': only digits are times here
                    plain = a[0].isdigit() and (d[0].isdigit() or d == "-") and "_" not in a + d and "e" not in a + d
                    if plain and start < _INF and not dur >= _INF:
                        trace_rows.append((raw[name_col:].rstrip(), start, dur, lineno, lineno))
                        continue
                except (ValueError, IndexError):
                    pass
            part = raw.strip()
            if trace_rows and trace_rows[-1][4] == lineno - 1 and part and brackets_open(trace_rows[-1][0]) \
                    and not part[0].isdigit():
                # a name wrapped onto the next line ('cudaLaunchKernel (k(float*,' / '   int) [112])')
                name, start, dur, first, _ = trace_rows[-1]
                sep = "" if name.endswith((":", "<", "(", "[")) or part.startswith(":") else " "
                trace_rows[-1] = (f"{name}{sep}{part}", start, dur, first, lineno)
                result.claimed.add(lineno)
                continue
            m = _TRACE_ROW.match(raw) if trace_section == "gpu-trace" else _API_TRACE_ROW.match(raw)
            if m:
                try:
                    start = units.time_ns(m.group("start"), trace_units[0])
                    dur = units.time_ns(m.group("dur"), trace_units[1])
                    name = m.group("name").rstrip()
                    if name_col and len(raw) > name_col and raw[name_col - 1] == " " and raw[name_col] != " ":
                        name = raw[name_col:].rstrip()  # under its header word (columns of '-' before it)
                    trace_rows.append((name, start, dur, lineno, lineno))
                    result.claimed.add(lineno)
                    continue
                except ValueError:
                    result.unplaced.append(lineno)  # a trace row with a value that is no time: said, not kept
                    continue
            if ELISION.match(raw):  # '.', '......', '< snip >': rows were left out of the paste; the trace goes on
                result.claimed.add(lineno)
                continue
            first = raw.split(None, 1)[:1]
            if first and units.is_time(first[0]):
                # a trace row that does not read (cut short, a cell lost): it starts with a time, so it is
                # one of the trace's rows: reported, and the trace goes on
                result.unplaced.append(lineno)
                continue
            flush_trace(lineno - 1)
            mode = None
        line = clean(raw)
        pm = _PREFIX.match(line) if "=" in line else None
        body = line[pm.end() :] if pm else line
        if pm and pm.group(1):
            last_pid = int(pm.group(1))
        if mode is None and _KEYWORD.search(body) is None and not _row_run(body, lines, i):
            # no marker, header or label any test below looks for (program output, prose): only
            # whether it holds numbers that look like a row is left to decide
            if looks_like_data(body):
                result.unplaced.append(lineno)
            continue

        # each marker below is looked for only where the words it needs are (a substring test
        # costs less than a regex)
        if "CPU profiling result" in body:  # --cpu-profiling: a call tree of host samples, not GPU activities
            end_table()
            mode = "cpu"
            result.claimed.add(lineno)
            continue
        if mode == "cpu":
            if body.strip() and (_CPU_ROW.match(body) or body.split()[:1] == ["Time(%)"]):
                result.claimed.add(lineno)
                continue
            mode = None
        if ('",' in body or "Time(%),Time,Calls," in body) and _CSV_HEADER.match(body.strip()):
            rows, j = _csv_rows(lines, i - 1)
            j -= i - 1
            blocks, bad = _parse_csv_table(rows, lineno)
            for b in blocks:
                events.append(_Event("block", b.line_start or lineno, block=b))
            result.claimed.update(range(lineno, lineno + j))
            result.unplaced.extend(bad)
            i = i - 1 + j
            if blocks and blocks[0].section == "unified-memory":
                mode = "um-csv"
            else:
                end_table()
            continue
        if "NVPROF is profiling process " in body and (m := _START.search(body)):
            end_table()
            # all this parse carries past a profile start: a fresh parse from here is this one
            result.resume[lineno] = (pending_section, cell_header, device, last_pid, metric_kernel, metric_layout)
            events.append(_Event("start", lineno, pid=int(m.group(1)), command=m.group(2).strip()))
            result.claimed.add(lineno)
            continue
        if "Profiling application: " in body and (m := _APPLICATION.search(body)):
            end_table()
            events.append(_Event("start", lineno, pid=last_pid, command=m.group(1).strip()))
            result.claimed.add(lineno)
            continue
        if "Profiling result" in body and _RESULT.match(body):
            end_table()
            pending_section = "gpu"
            result.claimed.add(lineno)
            continue
        if 'Device "' in body and (dm := _DEVICE.match(body)) and mode not in ("um", "um-csv", "metrics") \
                and _summary_follows(lines, i):
            # --print-summary-per-gpu: one summary per device, each its own profile of the same run
            end_table()
            run = next((e for e in reversed(events) if e.kind == "start"), None)
            events.append(_Event("start", lineno, pid=run.pid if run else last_pid, command=run.command if run else None,
                                 device=dm.group(1)))
            pending_section = "gpu"
            result.claimed.add(lineno)
            continue
        if "API calls" in body and _API_MARKER.match(body) and not (
                mode == "summary" and table is not None and "type" in table.fields and not table.pending):
            end_table()
            pending_section = "api"
            result.claimed.add(lineno)
            continue
        if ("Invocations" in body and _METRIC_HEADER.match(body)) or (
                mode != "metrics" and "Kernel: " in body and _KERNEL_LINE.match(body) and _metric_follows(lines, i)):
            end_table()
            mode = "metrics"
            metric_block = Block(section="metric", line_start=lineno, line_end=lineno)
            events.append(_Event("block", lineno, block=metric_block))
            if not _METRIC_HEADER.match(body):
                metric_kernel = _KERNEL_LINE.match(body).group(1)  # type: ignore[union-attr]
                metric_layout = None  # a fragment without its header: each row tells
            else:
                metric_layout = "event" if "Event Name" in body else "metric"
            result.claimed.add(lineno)
            continue
        if mode == "metrics" and metric_block is not None:
            if is_neutral(body):
                continue
            if km := _KERNEL_LINE.match(body):
                metric_kernel = km.group(1)
                result.claimed.add(lineno)
                continue
            if _DEVICE.match(body):
                device = _DEVICE.match(body).group(1)  # type: ignore[union-attr]
                result.claimed.add(lineno)
                continue
            if metric_kernel is not None and (got := _metric_line(body, metric_layout, metric_kernel, lineno)):
                row = got[0]
                if row is not None:
                    metric_block.rows.append(row)
                    metric_block.line_end = lineno
                    result.claimed.add(lineno)
                    continue
                result.unplaced.append(lineno)
                continue
            mode = None
            metric_block = None
        if "Unified Memory profiling result" in body:
            end_table()
            mode = "um"
            um_block = Block(section="unified-memory", line_start=lineno, line_end=lineno)
            events.append(_Event("block", lineno, block=um_block))
            result.claimed.add(lineno)
            continue
        if mode in ("um", "um-csv"):
            if m := _DEVICE.match(body):
                device = m.group(1)
                result.claimed.add(lineno)
                continue
            if m := _UM_TRAILER.match(body):
                if um_block is None:
                    um_block = Block(section="unified-memory", line_start=lineno, line_end=lineno)
                    events.append(_Event("block", lineno, block=um_block))
                um_block.rows.append(
                    Row(
                        section="unified-memory",
                        name=m.group(1),
                        line_start=lineno,
                        line_end=lineno,
                        calls=int(m.group(2).replace(",", "")),
                    )
                )
                um_block.line_end = lineno
                result.claimed.add(lineno)
                continue
            if _UM_TRAILER_NAME.match(body):  # a trailer whose value is not a count: said, not guessed
                result.unplaced.append(lineno)
                continue
            if mode == "um" and body.split()[:1] == ["Count"]:
                result.claimed.add(lineno)
                continue
            if mode == "um" and um_block is not None and (row := _um_row(body, lineno)):
                um_block.rows.append(row)
                um_block.line_end = lineno
                result.claimed.add(lineno)
                continue
        if sec := _trace_header(body):
            end_table()
            mode = "trace"
            trace_section = sec
            name_col = raw.rfind(" Name") + 1 if not pm else 0
            trace_start = lineno + 1
            trace_units = (None, None)
            result.claimed.add(lineno)
            continue
        hdr = parse_header(body)
        if hdr is None and _header_word(body) and (got_hdr := _cell_per_line_header(lines, i - 1)):
            # a header a PDF put one cell per line ('Type' / 'Time(%)' / … / 'Name')
            hdr, last = got_hdr
            result.claimed.update(range(lineno - (hdr[0][0] == "type"), last + 2))
            i = last + 1
            cell_header = True
        if hdr is None and _PCT_HEADER.search(body) and "Name" not in body.split():
            # a header a PDF broke over lines ('Type Time(%) Time Calls' / 'Avg Min Max Name')
            for extra in (1, 2):
                if i - 1 + extra < n_lines:
                    joined = " ".join(clean(x) for x in lines[i - 1 : i + extra])
                    if hdr := parse_header(joined):
                        result.claimed.update(range(lineno, lineno + extra + 1))
                        i += extra
                        break
        if hdr:
            fields, unit = hdr
            table = _Table(fields=fields, time_unit=unit, section=pending_section,
                           fast=fields == ["type", *FULL_LAYOUT] and unit is None, cell_per_line=cell_header,
                           lines=lines)
            pending_section = None  # a marker ('API calls:') names the one table after it, not the next log's
            cell_header = False
            mode = "summary"
            result.claimed.add(lineno)
            continue
        if mode is None and (_LABEL.match(body) or _row_run(body, lines, i)) \
                and (hdr := parse_header("Type Time(%) Time Calls Avg Min Max Name")):
            # a labelled row with its header lost (PDF extraction), or rows pasted without their header
            # (two in a row in the 8-column layout): the label, or the layout, says the columns
            table = _Table(fields=hdr[0], time_unit=None, section=None, lines=lines, headerless=True,
                           unlabelled=_LABEL.match(body) is None)
            mode = "summary"
        if mode == "summary" and table is not None:
            if is_neutral(body):
                if table.headerless and (FENCE.match(body) or (table.unlabelled and not body.strip())):
                    # rows pasted without header or label end with their paragraph or block: what
                    # follows is told apart by its own label or names (not classified with them)
                    end_table()
                    continue
                table.neutral_run += 1
                continue
            if (lm := _LABEL.match(body)) and not body[lm.end():].strip() and not table.pending:
                # a section label on a line of its own (a table a PDF put one cell per line)
                table.section = LABEL_SECTIONS[lm.group(1)]
                table.open_row = None
                table.orphan_text = False
                result.claimed.add(lineno)
                continue
            if not table.read and (unit := _units_row(body)):  # --normalized-time-unit: '%  ms  ms …'
                table.time_unit, table.units_row, table.fast = unit, True, False
                result.claimed.add(lineno)
                continue
            loc, votes = table.vote(body)
            row_fields = table.fields
            parsed = parse_summary_row(body, table.fields, table.time_unit, loc, table.units_row)
            if parsed is None and table.fields != FULL_LAYOUT:
                # rows pasted in the full 7-column layout below a shortened header
                row_fields = FULL_LAYOUT
                parsed = parse_summary_row(body, FULL_LAYOUT, None, loc)
            if parsed is not None:
                table.votes = votes
                if loc != table.locale:
                    table.relocate(loc)
                # rows glued on one line (its line breaks lost): each read as its own row
                while "%" in parsed[2] and (gm := _GLUED_ROW.search(parsed[2])):
                    rest = parsed[2][gm.start():].strip()
                    second = parse_summary_row(rest, row_fields, table.time_unit, loc, table.units_row)
                    if second is None:
                        break
                    cut = body.find(rest)
                    place(table, (parsed[0], parsed[1], parsed[2][: gm.start()].rstrip()), body[:cut], row_fields,
                          loc, lineno)
                    parsed, body = second, body[cut:]
                place(table, parsed, body, row_fields, loc, lineno)
                continue
            if table.open_row is not None and _continues(table.open_row) and table.neutral_run <= 4:
                if not looks_like_data(body) and not _PREFIX.match(line) and not _numbers_only(body) \
                        and not _count_only(body):
                    row = table.open_row
                    part = body.replace("\t", " ").strip()
                    # a name cut mid-token at the terminal's edge ('Plan<mshadow:' + ':expr::…') joins
                    # without a space: C++ never puts one inside '::' or after '<', '(' or '['
                    sep = "" if row.name.endswith((":", "<", "(", "[")) or part.startswith(":") else " "
                    row.name = f"{row.name}{sep}{part}".strip() if row.name else part
                    row.line_end = lineno
                    result.claimed.add(lineno)
                    table.neutral_run = 0
                    continue
            if (table.open_row is not None and table.open_row.line_end == lineno - 1 and body.strip()
                    and i < n_lines and _row_follows(lines[i], table)):
                # a line between two rows of one table: a name the log cut mid-token at a fixed
                # byte count ('…  cudaH' / 'ostGetDevicePointer', rai's logs) joins its row; any
                # other text there is reported (never dropped)
                if _cut_token(raw, table.open_row.name):
                    table.open_row.name += body.strip()
                    table.open_row.line_end = lineno
                    result.claimed.add(lineno)
                else:
                    result.unplaced.append(lineno)
                continue
            drop_nameless(table)
            table.open_row = None
            if _numbers_only(body) or table.pending:
                # a row whose numbers a PDF spread over several lines: gather them until they read as
                # one row; its name ends the last piece or follows on the next line(s)
                table.pending.append((lineno, body))
                joined = " ".join(b for _, b in table.pending)
                got = parse_summary_row(joined, table.fields, table.time_unit, loc, table.units_row)
                if got is None and not _numbers_only(body) and not _count_only(body):
                    table.pending.pop()
                    result.unplaced.extend(n for n, _ in table.pending)
                    table.pending = []
                    if looks_like_data(body) or _numeric_row(body):
                        result.unplaced.append(lineno)
                    elif table.cell_per_line and body.strip():
                        result.unplaced.append(lineno)  # the name of the row whose cells did not add up
                    elif body.strip():
                        table.orphan_text = True
                    continue
                if got is not None and got[2] and _numbers_only(got[2]):
                    got = None  # more numbers than one row holds: pieces of two rows, never paired
                    result.unplaced.extend(n for n, _ in table.pending)
                    table.pending = []
                    continue
                if got is not None:
                    first = table.pending[0][0]
                    if table.orphan_text and not got[2] and not table.cell_per_line:
                        # a name-like line came before: which name is theirs? (one cell a line: names follow)
                        result.unplaced.extend(n for n, _ in table.pending)
                    else:
                        place(table, got, joined, table.fields, loc, lineno)
                        table.open_row.line_start = first  # type: ignore[union-attr,attr-defined]
                        result.claimed.update(n for n, _ in table.pending)
                    table.pending = []
                continue
            if table.pending:
                result.unplaced.extend(n for n, _ in table.pending)
                table.pending = []
            if looks_like_data(body) or _numeric_row(body):
                result.unplaced.append(lineno)
            elif body.strip():
                table.orphan_text = True
            continue
        if looks_like_data(body):
            result.unplaced.append(lineno)
    if mode == "trace":
        flush_trace(n_lines)
    # a table the input ends inside (a log cut short): its numbers still waiting for a name, a row
    # without one, are reported as any table's end reports them, not dropped
    end_table()

    result.profiles = _group(events, n_lines, device, result.unplaced)
    return result


def _body(raw: str) -> str:
    """A plain summary row's text after its PID prefix (what the line path reads)."""
    return raw[_PREFIX.match(raw).end() :] if raw.lstrip().startswith("==") else raw  # type: ignore[union-attr]


_GROUPS = re.Match.groups
SUMMARY_CHUNK = 64  # lines matched at a time by the bulk summary reader (doubling up to BULK_LINES)


def _scan_regex(lines: list[str], k: int, first: re.Match | None = None, limit: int | None = None) -> tuple:
    """The plain rows of a standard nvprof summary table from index k, by the regex: what
    profconv.parse._rowscan.scan(lines, k, limit) returns, the same values to the bit (see its
    source): (count, stop, segments, pct_at), or (count, stop) where no row is kept. The run is
    the lines _FAST_ROW matches, up to the first with markup or a share above 100 (stop 1 there,
    else 0); `first` is line k's match where the caller has it."""
    n = len(lines) if limit is None else min(len(lines), k + limit)
    if first is None:
        first = _FAST_ROW.match(lines[k]) if k < n else None
        if first is None:
            return 0, 0
    found: list[Any] = [first]
    j, step = k + 1, SUMMARY_CHUNK
    while j < n:
        # lazily: matching stops at the first line that is not a row (the next table is not read)
        got = len(found)
        found.extend(takewhile(truth, map(_FAST_ROW.match, lines[j : min(j + step, n)])))
        if len(found) - got < step:
            break
        j += step
        step = min(2 * step, BULK_LINES)
    stop = 0
    if _needs_clean("\n".join(lines[k : k + len(found)])):  # markup a report added: the run ends before it
        del found[next(x for x, r in enumerate(lines[k : k + len(found)]) if _needs_clean(r)) :]
        stop = 1
    if not found:
        return 0, stop
    # C-level maps from here: the groups transposed into columns, numbers by float() and int()
    cols = list(zip(*map(_GROUPS, found)))
    del found
    pct = list(map(float, cols[1]))
    if max(pct) > 100.0:  # not a share: the run ends before it
        cut = next(x for x, p in enumerate(pct) if p > 100.0)
        if not cut:
            return 0, 1
        del pct[cut:]
        cols = [c[:cut] for c in cols]
        stop = 1
    count = len(pct)
    names = list(map(str.rstrip, cols[11]))
    calls = list(map(int, cols[4]))
    unit = _UNIT_EXP.__getitem__
    times = [list(map(float, map(add, cols[v], map(unit, cols[v + 1])))) for v in (2, 5, 7, 9)]
    labels = cols[0]
    # a segment ends where a label names another section (the first's is unknown without a label)
    cuts = [0]
    if labels.count(None) != count:
        cur = LABEL_SECTIONS[labels[0]] if labels[0] else None
        for x, lab in enumerate(labels):
            if x and lab and LABEL_SECTIONS[lab] != cur:
                cuts.append(x)
                cur = LABEL_SECTIONS[lab]
    cuts.append(count)
    segments = []
    for a, b in zip(cuts, cuts[1:]):
        whole = a == 0 and b == count
        segments.append((labels[a], a, names if whole else names[a:b], calls if whole else calls[a:b],
                         array("d", pct[a:b]), *(array("d", t[a:b]) for t in times)))
    pct_at = next(x for x, nm in enumerate(names) if "%" in nm) if "%" in "\x00".join(names) else -1
    return count, stop, segments, pct_at


def _bulk_summary(lines: list[str], k: int, got: tuple, table: _Table, events: list[_Event],
                  result: DialectResult) -> int:
    """Plain rows of a standard nvprof summary table (8 columns, '.' decimal mark, no markup)
    from index k, as `got` holds them (_rowscan.scan or _scan_regex: segments of one section
    each), kept as columns of their block, no Row object per row. Returns the index after them (k:
    none here, the line path reads line k). A row glued after a name ends them; a last row whose
    name may go on (a wrapped name) is left to the line path, which keeps a row open."""
    count, _, segments, pct_at = got
    n = count
    if pct_at >= 0:  # a row glued after a name (line breaks lost): from there on, the line path
        names = [nm for seg in segments for nm in seg[2]]
        count = next((x for x in range(pct_at, count) if "%" in names[x] and _GLUED_ROW.search(names[x])), count)
    if count:
        last = segments[-1] if count == n else next(seg for seg in reversed(segments) if seg[1] < count)
        name = last[2][count - 1 - last[1]]
        if _name_continues(name) or (count == n and k + count + 1 < len(lines) and lines[k + count].strip()
                                     and _FAST_ROW.match(lines[k + count + 1])):
            # a name that may go on (wrapped), or a line between this row and another (the rest of a
            # name cut mid-word, or text): the line path keeps the row open and decides
            count -= 1
    if not count:
        return k
    if count < n:  # the segments up to row `count`
        segments = [seg if seg[1] + len(seg[2]) <= count else (*seg[:2], *(c[: count - seg[1]] for c in seg[2:]))
                    for seg in segments if seg[1] < count]
    table.votes.dot += count
    table.open_row = None
    table.neutral_run = 0
    table.orphan_text = False
    result.rows_read.append((k + 1, k + count))  # claimed by their range (no set of a number per row)
    # one block per section: a label switches it ('GPU activities:' rows, then 'API calls:')
    for label, a, names, calls, pct, total, avg, lo, hi in segments:
        if label is not None:
            table.section = LABEL_SECTIONS[label]
        section = table.section
        key = section or "?"
        b = a + len(names)
        blk = table.by_section.get(key)
        if blk is None:
            blk = table.by_section[key] = Block(section=section, line_start=k + a + 1, line_end=k + a + 1)
            events.append(_Event("block", k + a + 1, block=blk))
        starts = list(range(k + a + 1, k + b + 1))
        if blk.rows:  # a block read line by line so far: these join it as rows
            rows = list(map(Row, [key] * (b - a), names, starts, starts, pct, total, calls, avg, lo, hi))
            blk.rows.extend(rows)
            table.read.extend((r, _body(raw), table.fields, table.time_unit)
                              for r, raw in zip(rows, lines[k + a : k + b]))
        elif blk.table is None:
            # times as arrays of doubles (no float object per cell while the input is held)
            blk.table = Rows.trusted({
                "section": [key] * (b - a), "name": names, "line_start": starts,
                "line_end": starts.copy(),  # the same int objects, a list of its own
                "time_pct": pct, "total_ns": total, "calls": calls, "avg_ns": avg, "min_ns": lo, "max_ns": hi,
            }, b - a)
            table.bulk_raw[key] = [(k + a, k + b)]
        else:  # a second part of this section's block (a table cut by a profile part, or labels alike)
            c = blk.table.cols
            for col, v in (("section", [key] * (b - a)), ("name", names), ("line_start", starts),
                           ("line_end", starts), ("time_pct", pct), ("total_ns", total), ("calls", calls),
                           ("avg_ns", avg), ("min_ns", lo), ("max_ns", hi)):
                c[col].extend(v)  # type: ignore[attr-defined]
            blk.table.n += b - a
            table.bulk_raw[key].append((k + a, k + b))
        blk.line_end = k + b
    return k + count


def _api_calls_out(blk: Block, unplaced: list[int]) -> None:
    """API calls among a GPU activities table's rows: the line that labelled them 'API calls:' is
    missing (a paste or copy lost it), so they continued the GPU rows above. They are reported as
    unplaced, never ranked among the kernels."""
    if blk.rows:
        bad = [r for r in blk.rows if r.name[:2] == "cu" and _API_CALL.fullmatch(r.name)]
        if bad:
            unplaced.extend(n for r in bad for n in range(r.line_start, r.line_end + 1))
            blk.rows = [r for r in blk.rows if not (r.name[:2] == "cu" and _API_CALL.fullmatch(r.name))]
    tb = blk.table
    if tb is not None and len(tb):
        names = tb.col("name")
        keep = [not (n[:2] == "cu" and _API_CALL.fullmatch(n)) for n in names]
        if not all(keep):
            unplaced.extend(int(n) for n, k in zip(tb.col("line_start"), keep) if not k)
            blk.table = tb.where(keep)


def _um_row(body: str, lineno: int) -> Row | None:
    toks = body.split()
    if len(toks) < 7 or not re.fullmatch(r"[\d,]+", toks[0]):
        return None
    name = " ".join(toks[6:])
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
        calls=int(toks[0].replace(",", "")),
        bytes=total,
        total_ns=t,
    )


# a CUDA API function as nvprof names it in 'API calls' (a kernel's name has its arguments, a template
# or a return type; nvprof's GPU activities never list one of these)
_API_CALL = re.compile(r"cu(?:da)?[A-Z][A-Za-z0-9_]*")


def _group(events: list[_Event], n_lines: int, device: str | None, unplaced: list[int]) -> list[RawProfile]:
    for ev in events:
        blk = ev.block
        if blk is not None and (blk.section is None or blk.section == "?"):
            blk.section = classify(blk)
            for r in blk.rows:
                r.section = blk.section
            if blk.table is not None:
                blk.table.set("section", [blk.section] * len(blk.table))
        if blk is not None and blk.section == "gpu":
            _api_calls_out(blk, unplaced)
    profiles = grouping.group(events, TOOL)
    for p in profiles:
        p.device = p.device or device
    return profiles


DIALECT = Dialect(
    name="nvprof", title="nvprof", tool=TOOL,
    # what detect looks for (a bare summary header or two headerless rows: their '%')
    markers=("NVPROF", "Profiling result", "GPU activities:", "Time(%),Time,Calls,", "Kernel: ", "(%)", "%"),
    part_start="NVPROF is profiling process",
    whole_if=('Device "',),  # nvprof gives every profile the file's last device
    sections=("gpu", "api", "openacc", "unified-memory", "metric", "gpu-trace", "api-trace"),
    detect=detect, parse=parse,
)
