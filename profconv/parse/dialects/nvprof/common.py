"""What every nvprof reader shares: the line prefix, labels and headers of summary tables, how a
summary row reads, units, and grouping a parse's events into profiles."""

from __future__ import annotations

import re

from profconv.parse import grouping, units
from profconv.parse.model import Block, RawProfile
from profconv.parse.names import brackets_open
from profconv.parse.schema import Row
from profconv.parse.text import clean

TOOL = "nvprof"

_PREFIX = re.compile(r"^\s*(?:==(\d+)==|={8})\s?")
_START = re.compile(r"NVPROF is profiling process (\d+), command: (.*)$")
_APPLICATION = re.compile(r"Profiling application: (.*)$")
_RESULT = re.compile(r"^\s*Profiling result:?\s*$")
_API_MARKER = re.compile(r"^\s*API calls:?\s*$")
_DEVICE = re.compile(r'^\s*Device "(.+)"\s*$')
_LABEL = re.compile(r"^\s*(GPU activities|API calls|OpenACC \((?:excl|incl)\))\s*:\s*")
_TOKEN = re.compile(r"\S+")
_COUNT = re.compile(r"\d{1,3}(?:([.,'])\d{3})?(?:\1\d{3})*|\d+")
_UNIT_ONLY = re.compile(r"^(s|ms|us|µs|ns)$")
_CSV_HEADER = re.compile(r'^"(Type|Time\(%\)|Start|Device)",|^Time\(%\),Time,Calls,')  # nvprof --csv, quoted or not

LABEL_SECTIONS = {
    "GPU activities": "gpu",
    "API calls": "api",
    "OpenACC (excl)": "openacc",
    "OpenACC (incl)": "openacc",
    "Range": "nvtx",  # the first row of each table of an 'NVTX result:' block (read there only)
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

_PCT_HEADER = re.compile(r"Time ?\(%\)")
# a substring every marker, header and label test of the line loop needs (outside a table): a line
# with none of them can only be data or nothing
_KEYWORD = re.compile(r'Time|NVPROF|NVTX|Profiling|CPU profiling|API calls|Invocations|Kernel: |Unified Memory|Start|"'
                      r"|GPU activities|OpenACC")
# how a line of nvprof's own that ends a table starts (a marker, a header, a label; a PID prefix is
# tested apart): program output among a table's rows ('Op Time: 12.5 ms') holds such words only later
_MARKER = re.compile(r'\s*(?:Type\s|Count\s|Time ?\(%\)|Invocations|Device "|Kernel: |Thread "|Domain "|Range "'
                     r'|NVPROF|NVTX|Profiling|CPU profiling|API calls|Unified Memory|Start\s|GPU activities|OpenACC|")')


def is_marker(line: str) -> bool:
    """A line of nvprof's own that ends a table: a PID prefix ('==12==', glued on or not) or a
    marker, header or label at its start. Stray program output inside a table is none."""
    return "==" in line or _MARKER.match(line) is not None


HEADERLESS_SCAN = 65536  # summary rows pasted without their header are looked for this far in
_ROW_TEXT = (r"[ \t]*(?:(?:GPU activities|API calls|OpenACC \((?:excl|incl)\))[ \t]*:)?[ \t]+\d{1,3}\.\d\d%[ \t]+"
             r"(?:\d+(?:\.\d+)?(?:s|ms|us|ns)[ \t]+)\d+(?:[ \t]+\d+(?:\.\d+)?(?:s|ms|us|ns)){3}[ \t]+\S[^\n]*")
_TWO_ROWS = re.compile(rf"(?m)^{_ROW_TEXT}\n{_ROW_TEXT}$")
_PCT_BLANK = re.compile(r"%[ \t]")  # in every such row (its share's '%' and the blanks after it)


def _row_run(body: str, lines: list[str], i: int) -> bool:
    """Whether this line and the next (index i) are nvprof summary rows: a table without a header."""
    # _FAST_ROW needs a '%' (a substring test costs less than the match)
    return (i < len(lines) and "%" in body and _FAST_ROW.match(body) is not None and "%" in lines[i]
            and _FAST_ROW.match(lines[i]) is not None)


def _headerless_rows(text: str) -> bool:
    """Two nvprof summary rows in a row ('0.39%  7.2980ms  8002  912ns  834ns  12.646us  acc_…'):
    a table pasted without its header and the lines above it (a thread's second message, an
    excerpt); the 8-column layout with its units and share is nvprof's alone. A text without a '%'
    followed by a blank has none (looked for first: ~20 us over the 64 Ki characters of a head where
    _TWO_ROWS, tried at every line, takes ~0.5 ms)."""
    return _PCT_BLANK.search(text) is not None and _TWO_ROWS.search(text) is not None


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



def classify(block: Block) -> str:
    """A table printed without a section marker: API calls if most names are CUDA API names."""
    names = [r.name for r in block.rows] or (list(block.table.col("name")) if block.table is not None else [])
    acc = sum(1 for n in names if _ACC_EVENT.match(n))
    if names and acc * 2 >= len(names):
        return "openacc"  # 'acc_compute_construct@file.c:12': the OpenACC (excl) section's names
    api = sum(1 for n in names if API_NAME.match(n))
    return "api" if names and api * 2 >= len(names) else "gpu"


def _body(raw: str) -> str:
    """A plain summary row's text after its PID prefix (what the line path reads)."""
    return raw[_PREFIX.match(raw).end() :] if raw.lstrip().startswith("==") else raw  # type: ignore[union-attr]

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


# a CUDA API function as nvprof names it in 'API calls' (a kernel's name has its arguments, a template
# or a return type; nvprof's GPU activities never list one of these)
_API_CALL = re.compile(r"cu(?:da)?[A-Z][A-Za-z0-9_]*")


def _group(events: list[grouping.Event], n_lines: int, device: str | None, unplaced: list[int]) -> list[RawProfile]:
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

