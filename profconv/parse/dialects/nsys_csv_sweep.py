"""A machine-written `nsys stats --format csv` sweep read whole as columns: no line made a str, no engine.

A sweep's `nsys stats --format csv` outputs concatenated (benchmarks/parse_throughput.py's 20 MB input:
4,049 runs of 40 kernels) are runs of one shape, each

    Generating SQLite file RUN.sqlite from RUN.nsys-rep
    Processing [RUN.sqlite] with [/PATH/reports/REPORT.py]...
    (blank)
    Time (%),Total Time (ns),…,Name      (a plain summary header: nsys_batch.header_fields, all nine fields)
    one plain row or more
    (blank)

(more Processing blocks a run may follow, one per report, each of another section; a run's last reports
may be ones profconv does not read -- nsys.NOT_READ: an app on unified memory prints um_sum, um_total_sum
and um_cpu_page_faults_sum -- each table stepped over with the note nsys's readers give it, naming its
lines, said before the merged tables' notes as they say it: ProfileSet.lead). The stream reads
such a file window by window: each window's tables read from its bytes (bytescan, nsys_batch), its
text normalized and split into lines, nsys's reader, the stream's cut, context and the core's finish,
then the parts joined. Here the file is mapped (profconv.parse.file_windows: a file up to 256 MiB
one chunk, the pass writing the number columns into the arrays the rows keep; a stream's parts a
part at a time), each chunk checked and read by one C pass (`_summarycells.nsys_sweep`: the lines
between the tables held to the shape above, every
table's header one of the nine fields in the first one's order -- a run's reports print several: kernels'
'Instances', API and OS calls' 'Num Calls', memory operations' 'Count' and 'Operation' -- or the
memory sizes' SIZE_HEADER (`cuda_gpu_mem_size_sum`: MB, no Time(%); its rows made what nsys._row_of
makes of them: bytes and calls, not ranked), the rows read as nsys_batch's C read reads them and
checked as it checks them, straight into columns); where
that pass does not take a chunk (anything it does not know), the same checks step by step: `_bytescan.tables` finds every
summary table, a regular expression holds every byte between them to the shape above, the rows are
read by nsys_batch's C read (`_summarycells.columns`, what the windows use) and checked as it checks
them. What the core does to them (profiles, blocks, lines, short names, shares) is done once by
NumPy and C (profconv/parse/sweep_rows.py, `_summarycells.nvprof_runs`, as
dialects/nvprof/csv_sweep.py does for nvprof). Only where the core would say nothing: every table
taken by nsys_batch (plain cells, totals within 1% of calls x average, plain names), each table's
Time(%) clearly adding up to 100, no report twice in a run (a run's tables of one section -- kernels
and memory operations, `nsys stats`'s default reports -- merged as the core merges them, with its
note, where they come one after the other), no name with '%', another
dialect's marker or a context keyword, nothing between the tables but the lines above with plain file
names -- [A-Za-z0-9._/-], or as Windows writes them ('\\', ':', single blanks, '(', ')', '~': "C:\\Program
Files\\...\\reports\\cuda_api_sum.py"; no word a reader looks for in them, such as "Statistics" or
"Generating": both passes) --, no other dialect found in
the file's head, no plugin dialect. Anything else: the stream's
windows read the file from the first part not read so (the reference; tests compare both on
generated and mutated sweeps). Not used in the pure-Python mode (the C modules are not loaded) nor
without the columnar reader."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Generator, Iterator, Mapping
from contextlib import closing
from typing import Any

import numpy as np

from profconv.parse import bytescan, columnar, native, sweep_rows
from profconv.parse.colviews import Const, Runs
from profconv.parse.made_notes import MadeNotes

CHUNK = 4 << 20  # bytes read and checked at a time (`read` of a file not mapped: file_windows.WHOLE where mapped)
# bytes of the file a part holds (`parts`: a stream's parts; a terminal table holds each part's rendered
# text: 1 MiB parts took a 20 MB sweep of the default reports to 3.0 B/B, 256 KiB to 2.5; the CLI's spool
# reads 1 MiB parts, stream.SPOOL_PART)
PART = 1 << 18
_PLAIN_PATH = rb"[A-Za-z0-9._/-]+"
# a path as Windows writes it (nsys_sweep's ns_win_path_ok): '\\', ':', single blanks, '(', ')', '~' too, no blank
# at an end, none of the words a reader looks for on a line
_WIN_PATH = (rb"(?! )(?:(?!  |Statistics|Summary|Generating|Saving report|Running|Executing|Processing|SKIPPED|"
             rb"Exporting|Exported)[A-Za-z0-9._/\\:() ~-])+(?<! )")
_REPORTS_DIR = rb"[/\\]reports[/\\]"  # '/' or '\\' around it


def _path(before: bytes) -> bytes:
    """A plain path or else a Windows one, up to where `before` follows: one way to match it (an atomic
    group: the regular expressions that hold many paths do not try each both ways when they fail)."""
    return rb"(?>" + _PLAIN_PATH + rb"(?=" + before + rb")|" + _WIN_PATH + rb"(?=" + before + rb"))"


_SCRIPT_DIR = _path(_REPORTS_DIR + rb"[a-z0-9_]+\.py\]")  # a report script's folder, before its reports folder
_RUN = (rb"Generating SQLite file (?>" + _PLAIN_PATH + rb" from " + _PLAIN_PATH + rb"(?=\n)|(?=[^\n]* from )"
        + _WIN_PATH + rb"(?=\n))\n")
# a report's status line (no "/reports/" in its input's path; a blank after the dots: nsys 2025), reports with
# nothing to show ("SKIPPED: ..." and a blank line) before it, a blank line after it or not
_PROCESSING = (rb"Processing \[(?![^\]\n]*" + _REPORTS_DIR + rb")" + _path(rb"\]") + rb"\] with \[(?:" + _SCRIPT_DIR
               + rb"[/\\])?reports[/\\][a-z0-9_]+\.py\]\.\.\. ?\n")
_SKIPPED = _PROCESSING + rb"SKIPPED: [ -~]*\n\n"
_REPORT = rb"(?:" + _SKIPPED + rb")*" + _PROCESSING + rb"\n?"
# a report profconv does not read (nsys.NOT_READ: a unified-memory app's um_sum, um_total_sum,
# um_cpu_page_faults_sum ...) with its table: a header of two fields or more, rows of a comma each (no '%',
# printable ASCII), a blank line -- what nsys's readers claim with a note (`_unread`: the header checked as
# they check it)
_UNREAD_BLOCK = (rb"Processing \[(?![^\]\n]*" + _REPORTS_DIR + rb")" + _path(rb"\]") + rb"\] with \[(?:" + _SCRIPT_DIR
                 + rb"[/\\])?reports[/\\](%s%s)"
                 rb"\.py\]\.\.\. ?\n\n?(%s[A-Za-z0-9(][A-Za-z0-9 ()_./-]*(?:,[A-Za-z0-9 ()_./-]*)+\n"
                 rb"(?:[ -$&-~]*,[ -$&-~]*\n)*)\n")


def _unread_patterns() -> tuple[bytes, re.Pattern, re.Pattern, tuple[bytes, ...]]:
    """_UNREAD_BLOCK of nsys.NOT_READ's reports: without groups (in _GAPS, _END), with them (the report,
    the table), a look for any of those reports' status lines; and their names (nsys_sweep's `unread`)."""
    from profconv.parse.dialects.nsys import NOT_READ

    names = tuple(sorted(k.encode() for k in NOT_READ))
    alternatives = b"|".join(map(re.escape, names))
    return (_UNREAD_BLOCK % (b"?:", alternatives, b"?:"), re.compile(_UNREAD_BLOCK % (b"", alternatives, b"")),
            re.compile(_REPORTS_DIR + rb"(?:%s)\.py\]" % alternatives), names)


_UNREAD, _UNREAD_AT, _UNREAD_ANY, _UNREAD_NAMES = _unread_patterns()
# what lies before each table, joined by NULs: the first a run's start, the others after a blank line
# (a run's last reports with nothing to show, or not read, come before the next run's Generating line, or end
# the chunk: such a report between two tables of a run is left to the readers)
_GAPS = re.compile(_RUN + _REPORT + rb"(?:\x00\n(?:(?:" + _SKIPPED + rb"|" + _UNREAD + rb")*" + _RUN + rb"|(?:"
                   + _SKIPPED + rb")*)" + _REPORT + rb")*")
_END = re.compile(rb"\n(?:" + _SKIPPED + rb"|" + _UNREAD + rb")*")
_RUN_AT = re.compile(rb"Generating SQLite file ")  # a run's line in the gaps joined (where a line starts)
_REPORT_NAME = re.compile(_REPORTS_DIR + rb"([a-z0-9_]+)\.py\]\.\.\. ?\n(?!SKIPPED: )")  # a table's, not a skipped one's
_SECTIONS = {"cuda_gpu_kern_sum": "gpu", "cuda_api_sum": "api", "cuda_gpu_mem_time_sum": "gpu", "osrt_sum": "os-runtime",
             "cuda_gpu_mem_size_sum": "gpu-memory-size", "nvtx_sum": "nvtx", "openacc_sum": "openacc"}
_CODES = list(dict.fromkeys(_SECTIONS.values()))  # section codes (a table's section: _CODES[code])
_CODE_OF = {k.encode(): _CODES.index(v) for k, v in _SECTIONS.items()}  # a report's name -> its section's code
_REPORTS = tuple(_CODE_OF)  # the report names nsys_sweep knows (their index -> _SECTION_OF)
_SECTION_OF = np.array(list(_CODE_OF.values()), dtype=np.int64)
_REPORT_OF = {r: k for k, r in enumerate(_REPORTS)}  # a report's name -> its index
_SIZES = _REPORT_OF[b"cuda_gpu_mem_size_sum"]  # the memory-size report: its table of another header, no times
# that table's header (nsys 2022 on; one of other units or fields is left to the readers), each cell's field
SIZE_HEADER = b"Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation"
_SIZE_FIELDS = ("time", "calls", "avg", "med", "min", "max", "std")  # (the Total read where the time is, then bytes)
_NVTX = _REPORT_OF[b"nvtx_sum"]  # the NVTX ranges' report: the nine fields with a Style cell before the name
NVTX_HEADER = b"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range"
_ORDER = ["pct", "time", "calls", "avg", "med", "min", "max", "std", "name"]  # the nine fields as nsys prints them
_FIELDS = set(_ORDER)
_NUMBERS = ("time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns", "med_ns", "std_ns")
_MARKS = bytescan._NEVER + bytescan._IN_NAMES


def read(path: str, label: str) -> Any:
    """The ProfileSet of the file at `path` where it is such a sweep (see the module's docstring), else None."""
    if _scanner() is None:
        return None
    chunks, numbers = [], _numbers()
    with open(path, "rb") as f, closing(_scanned(f, CHUNK, whole=True)) as scanned:
        for got in scanned:
            if got is None:
                return None  # (closed on the way out: where the file was cut short meanwhile, InputChanged)
            chunks.append(_numbers_into(numbers, got[0]))
    return _profile_set(chunks, label, 1, numbers) if chunks else None


def parts(path: str, label: str, size: int = 0) -> Iterator[tuple[Any, int, int]]:
    """`read`'s profiles a part at a time, about `size` bytes of the file each (PART where 0): (the
    part, the file's offset after it, the file's line there) -- a ProfileSet numbered as in the whole
    file, as a stream's parts are -- then (None, where the rest of the file begins, its line) where the
    rest is not such a sweep (the whole file where no part came). A part ends where a run's Generating
    line follows (a run's last reports with nothing to show before it are the part's)."""
    if _scanner() is None:
        yield None, 0, 1
        return
    number, at, line = 1, 0, 1
    with open(path, "rb") as f, closing(_scanned(f, size or PART)) as scanned:
        for got in scanned:
            part = None if got is None else _profile_set([got[0]], label, number)
            if part is None:
                scanned.close()  # (where the file was cut short while mapped: InputChanged, not the readers)
                yield None, at, line
                return
            at, line = got[1], got[0]["next_line"]
            yield part, at, line
            number += len(part.profiles)


def resume_state(part: Any) -> tuple:
    """nsys's reader state at a run's Generating line: nothing carried (nsys.parse's `resume`)."""
    return ()


def _scanner() -> Any:
    """profconv.parse._summarycells where it is built with what this reader needs, the columnar reader
    on, and no dialect but nvprof (its detect: checked by `_head_ok`) looks at a stream's windows."""
    from profconv.parse import stream
    from profconv.parse.dialect import registry
    from profconv.parse.dialects import BUILTIN

    scan, kahan, walk = native.load("_summarycells"), native.load("_kahan"), native.load("_bytescan")
    if scan is None or kahan is None or walk is None or not columnar.enabled():
        return None
    if not (getattr(scan, "NSYS_SWEEP_KINDS", 0) >= 4 and hasattr(kahan, "RANK_SKIP") and hasattr(walk, "tables")):
        return None  # (a build older than this reader)
    local = stream.options("nsys").get("local_markers", {})
    if any(d.name not in BUILTIN or (d.name in local and d.name != "nvprof") for d in registry().values()):
        return None
    return scan


def _scanned(f: Any, size: int, whole: bool = False) -> Generator[tuple[dict, int] | None, None, None]:
    """The chunks' columns (`_chunk`), window after window of about `size` bytes of the file (profconv.
    parse.file_windows: mapped, or read through a buffer; `whole`: a whole-file read's), each cut where a
    Generating line follows, with the file's offset after them (then None, and no more, where one is not
    of the shape); a window twice as large where it holds one run and more follows (to 16 x `size`)."""
    from profconv.parse import file_windows

    with file_windows.windows(f, size, whole) as src:
        if not _head_ok(src, size):
            yield None
            return
        line, want = 1, src.step
        while True:
            data, last = src.window(want)
            cut = len(data) if last else src.rfind(b"\nGenerating ", len(data)) + 1
            if cut == 0 and not last and want < 16 * src.step:
                want *= 2  # one run so far: read on
                continue
            got = _chunk(data, cut, line) if cut > 0 else None
            data.release()
            if got is None:
                yield None
                return
            yield got, src.base + cut
            if last:
                return
            src.advance(cut)
            line, want = got["next_line"], src.step


def _head_ok(src: Any, size: int) -> bool:
    """Whether the file's head (its first `size` bytes: 4 MiB for `read`; `src` a file_windows source) is
    what the stream reads on from: ASCII, no other dialect in its first stream.HEAD characters (as the
    stream's first window looks: rows and all)."""
    from profconv.parse import stream

    return src.ascii(size) and not stream._other_dialect(src.head(min(size, stream.HEAD)).decode("ascii"), "nsys")


def _tables(data: bytes, cut: int) -> np.ndarray | None:
    """The summary tables in data[:cut] (_bytescan.tables' rows: header start, rows start, rows end,
    rows, flags, byte after, mark counts), each plain, small and followed by a blank line; None else."""
    walk = native.load("_bytescan")
    w = 6 + len(_MARKS)
    vals = np.frombuffer(walk.tables(memoryview(data)[:cut], bytescan.SUMMARY, _MARKS), dtype=np.int64).reshape(-1, w)
    if not len(vals):
        return None
    never = 6 + len(bytescan._NEVER)
    rows = vals[:, 3]
    if vals[:, 4].any() or vals[:, 6:never].any() or (rows <= 0).any() or (rows >= bytescan.MIN_ROWS).any():
        return None
    if (vals[:, 5] != 0x0A).any():
        return None
    return vals


def _gaps(data: bytes, vals: np.ndarray, cut: int) -> tuple[Any, list[int], bytes] | None:
    """What lies before each table (a run's Generating line or not, the Processing line of its report,
    the blank line): its lines (`_gap_shape`: per table whether it starts a run ...), each table's
    report's index, and the text of those lines joined; None where one is not of the shape (the first
    must start a run), a report is not one read so, or the chunk does not end with the blank line after
    its last table."""
    starts, ends = vals[:, 0].tolist(), vals[:, 2].tolist()
    if _END.fullmatch(data, ends[-1], cut) is None:
        return None
    joined = b"\x00".join([data[e:a] for e, a in zip([0, *ends[:-1]], starts)])
    if _GAPS.fullmatch(joined) is None:
        return None
    end = bytes(data[ends[-1] : cut])
    unread = _unread(joined, end) if _UNREAD_ANY.search(joined) or _UNREAD_ANY.search(end) else []
    if unread is None:
        return None
    skeleton = _UNREAD_AT.sub(b"", joined) if unread else joined
    codes = [_REPORT_OF.get(r, -1) for r in _REPORT_NAME.findall(skeleton)]
    if len(codes) != len(starts) or -1 in codes or _SIZES in codes or _NVTX in codes:
        return None
    return _gap_shape(joined), codes, joined + b"\x00" + end if unread else joined, unread


# what a not-read table's header may not hold: what nsys's readers would take it for before the note
# (a status line, a title, a heading, a markdown or console table: nsys._report_line and the readers before
# nsys._csv_not_read_reader), or what they would not note it for (', ', '  ')
_NOT_A_HEADER = (b", ", b"  ", b"Statistics", b"Summary", b"Generating", b"Saving report", b"Running ", b"Executing",
                 b"Processing", b"/reports/", b"SKIPPED", b"Exporting ", b"Exported ")


def _unread(joined: bytes, end: bytes) -> list[tuple[int, int, int, int]] | None:
    """The not-read reports' tables in the gaps `joined` and the chunk's `end` (after its last table), in
    order: (the gap's index, -1 for the end; the line ends in it before the table's header; the table's
    lines; the report's index in _UNREAD_NAMES); None where a header is not one nsys's readers note or a table holds a run's or a
    report's line (what the stream cuts at)."""
    out = []
    nul = np.flatnonzero(np.frombuffer(joined, dtype=np.uint8) == 0).tolist()
    for gap, text in ((None, joined), (-1, end)):
        for m in _UNREAD_AT.finditer(text):
            table = m.group(2)
            head = table[: table.index(b"\n")]
            if any(w in head for w in _NOT_A_HEADER) or b"Generating " in table or b"Processing [" in table:
                return None
            g = bisect_right(nul, m.start()) if gap is None else -1
            first = (nul[g - 1] + 1 if g > 0 else 0) if gap is None else 0
            out.append((g, text.count(b"\n", first, m.start(2)), table.count(b"\n"), _UNREAD_NAMES.index(m.group(1))))
    return out


def _gap_needles() -> tuple[str, ...]:
    """What `_skeleton_ok` looks for in the gaps: the stream's markers of the other dialects and the
    context keywords."""
    from profconv.parse import context, stream

    return stream.other_markers("nsys") + context.KEYWORDS


def _skeleton_ok(between: bytes, heads: list[bytes], names: list[str], data: Any = None,
                 found: bool | None = None) -> bool:
    """Whether nothing the stream looks for in a window's text (its rows blank: the lines between
    the tables -- `between`, ASCII -- and the headers) or in the first window's head (the names too)
    is in the chunk: no other dialect's marker or context keyword, no '%' in a name; nvprof's detect
    (its markers '%' and '(%)' are left to it on each window's header lines and the two after them)
    not taking a header with its rows blank. `between`: the gaps' text joined by NULs, or where `data`
    (the chunk) is given, their ranges in it (int64 pairs: nsys_sweep's gap_ranges), looked in where
    they lie, or `found`: whether a needle is in them, where nsys_sweep looked as it walked them."""
    from profconv.parse.context import contains_any
    from profconv.parse.dialects import nvprof
    from profconv.parse.model import Document

    needles = _gap_needles()
    heads_text = "\n".join(h.decode("ascii") for h in heads)
    longest = max(map(len, needles), default=1)
    if data is None:
        seam = between[max(0, len(between) - longest + 1) :]  # (a needle across into the heads)
        found = contains_any(between, needles)
    else:  # (the last gap's end: a needle across into the heads)
        a, b = np.frombuffer(between, dtype=np.int64)[-2:].tolist()
        seam = bytes(memoryview(data)[max(a, b - longest + 1) : b])
        found = _in_ranges(data, between, needles) if found is None else found
    if (found or contains_any(seam.decode("ascii") + heads_text, needles)
            or contains_any("\n".join(names), (*needles, "%"))):
        return False
    return not any(nvprof.detect(Document(lines=[], label="", text=h.decode("ascii") + "\n\n\n")) for h in heads)


def _in_ranges(data: Any, ranges: bytes, needles: tuple[str, ...]) -> bool:
    """Whether a needle is in one of the ranges of data (bytes of int64 pairs): `_kahan.find_any` over each
    where it looks at ranges, else Python over their text joined by NULs (no needle holds one)."""
    from profconv.parse.context import contains_any

    got = native.load("_kahan").find_any(data, needles, ranges)
    if got is not None:
        return got
    view = memoryview(data)
    pairs = np.frombuffer(ranges, dtype=np.int64).reshape(-1, 2).tolist()
    return contains_any(b"\x00".join(bytes(view[a:b]) for a, b in pairs), needles)


def _read(data: bytes, vals: np.ndarray) -> tuple[dict[str, Any], Any, list[str], list[bytes]] | None:
    """The tables' rows as nsys_batch reads a window's (its C read and checks; every table taken),
    the tables of each header read together: numbers by schema column (NumPy arrays over the C
    read's bytes), name codes (int32, as the C pass gives them) into a pool, the distinct headers; None where a header is not
    a plain one of the nine fields or a table is not taken."""
    heads = [bytes(data[a : b - 1]) for a, b in vals[:, :2].tolist()]
    groups: dict[bytes, list[int]] = {}
    for k, h in enumerate(heads):
        groups.setdefault(h, []).append(k)
    pool: dict[str, int] = {}
    parts: list[tuple[list[int], dict[str, Any], Any]] = []
    for head, ks in groups.items():
        got = _group(data, head, vals[ks] if len(groups) > 1 else vals)
        if got is None:
            return None
        numbers, codes, names = got
        recode = np.array([pool.setdefault(s, len(pool)) for s in names] or [0], dtype=np.int32)
        parts.append((ks, numbers, recode[codes]))
    return (*_in_order(parts, vals[:, 3]), list(pool), list(groups))


def _group(data: bytes, head: bytes, vals: np.ndarray) -> tuple[dict[str, Any], Any, list[str]] | None:
    """The rows of the tables `vals` (one header, `head`) read by _summarycells.columns and checked
    as nsys_batch checks a window's (every table taken): numbers by schema column, name codes, names."""
    from profconv.parse.dialects import nsys_batch

    got = nsys_batch.header_fields(head)
    if got is None or set(got[1]) != _FIELDS:
        return None
    cols, fields = got
    sizes = vals[:, 3]
    n = int(sizes.sum())
    read = native.load("_summarycells").columns(data, np.ascontiguousarray(vals[:, 1:3]).tobytes(), len(fields) - 1,
                                                 nsys_batch._whole(fields), n)
    if read is None or len(nsys_batch._kept(nsys_batch._per_table(read[3], sizes.tolist()))) < len(sizes):
        return None
    cells, codes, names, _ = read
    numbers = {f: np.frombuffer(c, dtype=np.int64 if f == "calls" else np.float64) for f, c in zip(fields, cells)}
    if not all(np.isfinite(v).all() for f, v in numbers.items() if f != "calls"):
        return None
    table = columnar.Columns(n, dict(zip(cols, numbers.values())))
    table.texts[cols[-1]] = columnar.Text(np.frombuffer(codes, dtype=np.int32), columnar.Pool(names))
    if not all(nsys_batch._values_ok(table, cols, fields, sizes.tolist(), finite=True)):
        return None
    return {nsys_batch.SCHEMA[f]: v for f, v in numbers.items()}, table.texts[cols[-1]].codes, names


def _in_order(parts: list[tuple[list[int], dict[str, Any], Any]], sizes: Any) -> tuple[dict[str, Any], Any]:
    """The header groups' rows (each group's tables `ks` one after the other) in the tables' order."""
    if len(parts) == 1:
        return parts[0][1], parts[0][2]
    order = np.concatenate([np.asarray(ks, dtype=np.int64) for ks, _, _ in parts])
    at = np.empty(len(sizes), dtype=np.int64)  # each table's first row among the groups' rows joined
    at[order] = np.cumsum(sizes[order]) - sizes[order]
    firsts = np.cumsum(sizes) - sizes
    rows = np.repeat(at - firsts, sizes) + np.arange(int(sizes.sum()), dtype=np.int64)
    numbers = {c: np.concatenate([p[1][c] for p in parts])[rows] for c in _NUMBERS}
    return numbers, np.concatenate([p[2] for p in parts])[rows]


def _chunk(data: Any, cut: int, line: int) -> dict[str, Any] | None:
    """data[:cut] (runs whole, the first from a Generating line at the file's line `line`) read and
    checked (see the module's docstring): its rows' numbers and names, per table its rows, section,
    header line and whether it starts a run; None where it is not of the shape. One C pass
    (`_swept`) where every table has the first one's header and nothing is odd, else a pass of
    `_bytescan.tables`, a regular expression over the gaps and nsys_batch's read (the same checks:
    tests compare both)."""
    got = _swept(data, cut)
    if got is None:  # (a copy of the chunk: the regular expressions and counts take bytes, not a view)
        got = _found(bytes(data[:cut]), cut)
    if got is None:
        return None
    numbers, names, pool, sizes, new, reports, (heads, runs, newlines), unread = got
    return {"numbers": numbers, "name": names, "names": pool, "rows": sizes, "report": reports,
            "section": _SECTION_OF[reports], "header": line + heads, "run_line": line + runs,
            "new": new, "next_line": line + newlines, "unread": unread + np.array([line, line, 0], dtype=np.int64)}


def _found(data: bytes, cut: int) -> tuple | None:
    """`_chunk`'s tables found by `_bytescan.tables`, their gaps held to the shape by `_GAPS`, their
    rows read per header by nsys_batch's read: (numbers, name codes, names, rows, starts a run,
    report indices in _REPORTS, lines: per table the newlines before its header line and before its
    run's Generating line, -1 where it starts none, and the chunk's newlines) or None."""
    vals = _tables(data, cut)
    gaps = None if vals is None else _gaps(data, vals, cut)
    if gaps is None:
        return None
    got = _read(data, vals)
    if got is None or not _skeleton_ok(gaps[2], got[3], got[2]):
        return None
    sizes, (gap_lines, new, before) = vals[:, 3].copy(), gaps[0]
    heads = np.cumsum(gap_lines + np.append(0, sizes[:-1] + 1))  # what nsys_sweep counts: the lines before each
    lines = heads, np.where(new, heads - gap_lines + before, -1), data.count(b"\n", 0, cut)  # header, run, chunk
    # each not-read table's first and last line (line ends before them): its gap's first line plus those in it
    at = np.append(heads - gap_lines, heads[-1] + 1 + sizes[-1]).tolist()  # (the end: after the last table)
    unread = np.array([(at[g] + k, at[g] + k + n - 1, report) for g, k, n, report in gaps[3]] or np.empty((0, 3)),
                      dtype=np.int64)
    return got[0], got[1], got[2], sizes, new, np.array(gaps[1], dtype=np.int64), lines, unread


def _gap_shape(joined: bytes) -> tuple[Any, Any, Any]:
    """Of each gap in `joined` (the text before each table, the gaps joined by NULs): its line ends,
    whether it holds a run's Generating line, and the line ends before that line (0 where none)."""
    b = np.frombuffer(joined, dtype=np.uint8)
    newlines = np.flatnonzero(b == 10)  # (line ends before a byte: how many of these are before it)
    at = np.append(0, np.flatnonzero(b == 0) + 1)  # each gap's first byte
    lines = np.diff(np.append(np.searchsorted(newlines, at), len(newlines)))
    runs = np.array([m.start() for m in _RUN_AT.finditer(joined)], dtype=np.int64)
    runs = runs[(runs == 0) | np.isin(b[runs - 1], (10, 0))]  # at a line's start
    gap = np.searchsorted(at, runs, side="right") - 1
    new = np.zeros(len(at), dtype=bool)
    new[gap] = True
    before = np.zeros(len(at), dtype=np.int64)
    before[gap] = np.searchsorted(newlines, runs) - np.searchsorted(newlines, at[gap])
    return lines, new, before


def _swept(data: bytes, cut: int) -> tuple | None:
    """`_found`'s result by one C pass (_summarycells.nsys_sweep: the gaps, headers and rows checked
    and read at once) where every table's header is a plain one of the nine fields in nsys's order (a
    run's reports: kernels' 'Instances', API and OS calls' 'Num Calls', memory operations' 'Count' ...
    'Operation'), SIZE_HEADER under the memory-size report or NVTX_HEADER under the NVTX one; None
    where that pass does not take the chunk (then `_found` decides)."""
    from profconv.parse.dialects import nsys_batch

    scan, fields = native.load("_summarycells"), _ORDER
    where = tuple(fields.index(f) for f in ("pct", "time", "calls", "avg"))
    sizes = bytes(fields.index(f) for f in _SIZE_FIELDS)  # a memory-size row's cells: where they go
    # the gaps between the tables as ranges of the chunk, looked in where they lie (their text joined was a
    # copy of a fifth of an app on unified memory's sweep: its um_* tables), where both modules do so; and
    # looked in by the C pass itself as it walks them where it can (a second pass over the chunk was ~10%
    # of a parse of such a sweep)
    ranges = getattr(scan, "NSYS_SWEEP_GAP_RANGES", 0) and getattr(native.load("_kahan"), "FIND_ANY_RANGES", 0)
    look = (True, _gap_needles()) if ranges and getattr(scan, "NSYS_SWEEP_NEEDLES", 0) else (True,) if ranges else ()
    if look and getattr(scan, "NVPROF_SWEEP_ALLOC", 0):  # the number columns written straight into arrays
        look = (True, look[1] if len(look) > 1 else None, _alloc)
    got = scan.nsys_sweep(memoryview(data)[:cut], bytescan.SUMMARY, _REPORTS, len(fields) - 1,
                          nsys_batch._whole(fields), where, bytescan.MIN_ROWS, SIZE_HEADER[:11], len(sizes), 2, sizes,
                          NVTX_HEADER[:-5], _UNREAD_NAMES, *look)
    if (got is None or not all(h in (SIZE_HEADER, NVTX_HEADER) or _header_fields(h) == fields for h in got[5])
            or any(map(nsys_batch.odd_name, got[3]))
            or not _skeleton_ok(got[4], list(got[5]), got[3], data if ranges else None, got[8] if len(got) > 8 else None)):
        return None
    tabs = np.frombuffer(got[0], dtype=np.int64).reshape(-1, 6)
    kinds, reports = tabs[:, 3], tabs[:, 1]
    if not (np.array_equal(kinds == 1, reports == _SIZES) and np.array_equal(kinds == 2, reports == _NVTX)):
        return None  # a memory-size or NVTX table under another report, or another table under theirs
    numbers = {nsys_batch.SCHEMA[f]: np.frombuffer(c, dtype=np.int64 if f == "calls" else np.float64)
               for f, c in zip(fields, got[1])}  # (views: of the arrays `_alloc` made where the pass wrote into them)
    names = np.frombuffer(got[2], dtype=np.int32)  # (kept so: colviews.Coded reads int32 codes)
    lines = (tabs[:, 4].copy(), tabs[:, 5].copy(), got[6])
    unread = np.frombuffer(got[7], dtype=np.int64).reshape(-1, 3).copy()  # (header, last line, report in _UNREAD_NAMES)
    return numbers, names, got[3], tabs[:, 0].copy(), tabs[:, 2] == 1, reports.copy(), lines, unread


def _alloc(rows: int) -> list[array]:
    """The number columns of `rows` rows nsys_sweep writes into, in _ORDER (arrays 'd', the calls 'q')."""
    return [array("q" if f == "calls" else "d", bytes(8)) * rows for f in _ORDER[:-1]]  # (one zero, repeated)


def _header_fields(head: bytes) -> list[str]:
    """The fields of a summary header line's cells, in order (nsys_batch.header_fields); [] where it is
    not an ASCII one that reads so."""
    from profconv.parse.dialects import nsys_batch

    got = nsys_batch.header_fields(head) if head.isascii() else None
    return list(got[1]) if got is not None else []


def _numbers() -> dict[str, array]:
    """Empty number columns: arrays 'd', the calls 'q'."""
    return {k: array("q" if k == "calls" else "d") for k in _NUMBERS}


def _numbers_into(numbers: dict[str, array], chunk: dict[str, Any]) -> dict[str, Any]:
    """The chunk's numbers appended to `numbers` (its bytes copied once; the first chunk's columns, arrays
    the pass wrote into, taken as they are) and let go: the chunk less them (the next chunk's columns
    use the memory again)."""
    for k, v in numbers.items():
        col = chunk["numbers"].pop(k)
        own = getattr(col.base, "obj", None)  # (a view of an array `_alloc` made: its buffer's object)
        if not v and type(own) is array and own.typecode == v.typecode and len(own) == len(col):
            numbers[k] = own  # (the pass wrote them into this array: the column itself)
        else:
            v.frombytes(memoryview(col).cast("B"))
    return chunk


def _joined(chunks: list[dict[str, Any]], numbers: dict[str, array] | None = None) -> dict[str, Any]:
    """The chunks' columns as one: the numbers as arrays (`numbers` where `_numbers_into` took them
    already), the names recoded into one pool."""
    if numbers is None:
        numbers = _numbers()
        for c in chunks:
            _numbers_into(numbers, c)
    got = {k: np.concatenate([c[k] for c in chunks]) for k in ("rows", "report", "section", "header", "run_line", "new")}
    if len(chunks) == 1:
        return {**got, "numbers": numbers, "name": chunks[0]["name"], "names": chunks[0]["names"]}
    pool: dict[str, int] = {}
    codes = []
    for c in chunks:
        recode = np.array([pool.setdefault(s, len(pool)) for s in c["names"]] or [0], dtype=np.int32)
        codes.append(recode[c["name"]])
    return {**got, "numbers": numbers, "name": np.concatenate(codes), "names": list(pool)}


def _layout(got: dict[str, Any]) -> dict[str, Any] | None:
    """Where the profiles (runs), tables and rows are: each profile's first and last line and rows,
    each table's first row, each row's line, and the ranked groups (a run's tables of one section one
    after the other, merged into one as the core merges them: an nsys run's kernels and memory
    operations); None where a table's Time(%) does not clearly add up to 100% (core._Ranges.not_clear)
    or a run's tables of one section are not one after the other, or a run holds a report twice (the
    core's second table of a kind opens a profile: grouping.group)."""
    sizes, header, new = got["rows"], got["header"], got["new"]
    n = int(sizes.sum())
    firsts = np.cumsum(sizes) - sizes
    sums = np.add.reduceat(np.frombuffer(got["numbers"]["time_pct"], dtype=np.float64), firsts)
    timed = got["report"] != _SIZES  # (a memory-size table has no Time(%))
    if not (np.abs(sums - 100.0) < np.maximum(1.5, 0.01 * sizes) - 1e-6)[timed].all():  # (core._CLEAR)
        return None
    profile = np.cumsum(new) - 1
    opens = np.flatnonzero(new)
    if _twice(opens, got["report"]):
        return None
    key = profile * len(_CODES) + got["section"]
    opens_group = np.append(True, key[1:] != key[:-1])  # a table that starts a ranked group
    groups = np.flatnonzero(opens_group)
    if _twice(np.flatnonzero(new[groups]), got["section"][groups]):
        return None
    closes = np.append(opens[1:] - 1, len(sizes) - 1)
    lines = array("q", [1]) * n  # each row's line: one more than the row's before, its header's + 1 at a table's first
    steps = np.frombuffer(lines, dtype=np.int64)
    steps[firsts] = header + 1 - np.append(0, (header + sizes)[:-1])  # (header + rows: a table's last row's line)
    np.cumsum(steps, out=steps)
    return {"firsts": firsts, "starts": got["run_line"][opens], "ends": header[closes] + sizes[closes],
            "per_profile": np.add.reduceat(sizes, opens), "lines": lines, "profile": profile, "groups": groups}


def _twice(opens: Any, codes: Any) -> bool:
    """Whether a code (below 63) is in some run twice (`opens`: each run's first item): a bit a code,
    their sum per run not their union."""
    bits = np.left_shift(np.int64(1), codes.astype(np.int64))
    return bool((np.add.reduceat(bits, opens) != np.bitwise_or.reduceat(bits, opens)).any())


def _merged(got: dict[str, Any], where: dict[str, Any], number: int) -> tuple[tuple[Any, bytes] | None, Mapping, list]:
    """The ranked groups where some are merged (sweep_rows.ranked_names' `groups`, with whether each table
    is in a merged one; None where none is),
    the core's note on each merged one (core._share_notes) by (profile, section), and those notes as the
    ProfileSet says them (core.table_note), in order."""
    groups, sizes = where["groups"], got["rows"]
    tables = np.diff(np.append(groups, len(sizes)))
    many = np.flatnonzero(tables > 1)
    if not len(many):
        return None, {}, []
    a = groups[many]
    k = tables[many]
    last = a + k - 1
    lines, firsts = np.frombuffer(where["lines"], dtype=np.int64), where["firsts"]
    lo, hi = lines[firsts[a]], lines[firsts[last] + sizes[last] - 1]
    notes, table_notes = _merged_notes(number + where["profile"][a], got["section"][a], lo, hi, got["header"] + 1, a, k)
    merged = (tables > 1).astype(np.uint8)
    merged[got["report"][groups] == _SIZES] = native.load("_kahan").RANK_SKIP
    return (firsts[groups], merged.tobytes(), np.repeat(tables > 1, tables)), table_notes, notes


_TAIL = "; each printed Time(%) is relative to its own table, Share is of their summed time"


def _merged_notes(profiles: Any, sections: Any, lo: Any, hi: Any, heads: Any, a: Any, k: Any) -> tuple[Any, Mapping]:
    """Each merged group's note as the ProfileSet says it, and {(profile, section): [its text]} (core's
    table notes): group g of profile profiles[g], section code sections[g], lines lo[g]-hi[g], its k[g]
    tables' first lines heads[a[g]:a[g] + k[g]]. Where every key is once (a note a run in a sweep of the
    default reports: 6,000 in 20 MB), the notes are made where they are first read (a MadeNotes: in C
    where the module has it) and the table notes are a GroupNotes over them (no dict of them:
    profconv.parse.group_notes); else made now."""
    from profconv.parse.group_notes import GroupNotes

    i64 = [np.ascontiguousarray(x, dtype=np.int64) for x in (profiles, sections, lo, hi, heads, a, k)]
    scan = native.load("_summarycells")
    order = np.sort(i64[0] * len(_CODES) + i64[1])  # (each group's key as one int)
    if bool((order[1:] != order[:-1]).all()):
        notes = MadeNotes(lambda: _notes_made(scan, i64), len(i64[0]))
        return notes, GroupNotes(notes, i64[0], i64[1], _CODES)
    made = scan.merged_notes(0, *i64[:2], tuple(_CODES), *i64[2:], _TAIL, True) if hasattr(scan, "merged_notes") else None
    return made if made is not None else _notes_in_python(i64)


def _notes_made(scan: Any, i64: list[Any]) -> list[str]:
    """The merged groups' notes (every key once): in C where the module has it, else in Python."""
    made = scan.merged_notes(0, *i64[:2], tuple(_CODES), *i64[2:], _TAIL, False) if hasattr(
        scan, "merged_notes") else None
    return made[0] if made is not None else _notes_in_python(i64)[0]


def _notes_in_python(i64: list[Any]) -> tuple[list[str], dict]:
    """_merged_notes' notes and table notes (a dict) as Python makes them."""
    from profconv.parse.core import table_note

    ps, codes, lo_, hi_, hl, al, kl = (x.tolist() for x in i64)
    texts = [f"lines {x}-{y}: merged from {n} source tables (starting at lines "
             f"{', '.join(map(str, hl[f : f + n]))}){_TAIL}" for x, y, f, n in zip(lo_, hi_, al, kl)]
    keys = list(zip(ps, [_CODES[c] for c in codes]))
    table_notes = {key: [text] for key, text in zip(keys, texts)}
    return [table_note(p, s, items[0]) for (p, s), items in table_notes.items()], table_notes


def _rows(got: dict[str, Any], where: dict[str, Any], numbers: list[int]) -> Any:
    """The rows as the stream's parts give them for the sweep, ranked (each (profile, section) group
    one table: sweep_rows.ranked_names), in the schema's column order; None where ranking them would
    note something. Each profile's number in `numbers` (the ProfileColumns' list: one int object a
    profile for both)."""
    scan = native.load("_summarycells")
    n = len(where["lines"])
    cols, unranked = dict(got["numbers"]), None
    if (got["report"] == _SIZES).any():
        unranked = _sized(cols, got)
    cols = sweep_rows.ranked_names(cols, where["firsts"], got["names"], got["name"], where["merged"], unranked,
                                   views=True)
    if cols is None:
        return None
    sizes = np.ascontiguousarray(got["rows"], dtype=np.int64)
    # section and profile a value a run of rows (Runs: as lists to the terminal table, colviews.holds_page_views),
    # not a list entry a row (1.9 MB of a 20 MB sweep's 17 MB kept, new pages a parse)
    cols["section"] = Runs(scan.nvprof_take(_CODES, np.ascontiguousarray(got["section"], dtype=np.int64)), sizes)
    cols["tool"] = Const("nsys", n)
    cols["profile"] = Runs(numbers, np.ascontiguousarray(where["per_profile"], dtype=np.int64))
    heads = (got["header"] + 1).astype(np.int64, copy=False)  # (a value a run: listed where a row is asked for)
    cols["table"] = Runs(heads, sizes)
    cols["line_start"] = cols["line_end"] = where["lines"]  # (a row a line: one array for both)
    return sweep_rows.trusted(cols, n)


def _sized(cols: dict[str, Any], got: dict[str, Any]) -> bytes:
    """The memory-size tables' rows made what the readers make of them (nsys._row_of): their bytes (the
    Total, read where a time is, in MB), their calls, no times; the bytes column added (NaN for the other
    rows). Gives a byte a table, RANK_SKIP for a memory-size one (not ranked: sweep_rows.ranked_names)."""
    sized = got["report"] == _SIZES
    tables, sizes = np.flatnonzero(sized), got["rows"]
    some = sizes[tables]  # (a few rows a run: set by their index, not a mask; a value a sized table repeated)
    rows = np.repeat((np.cumsum(sizes) - sizes)[tables] - (np.cumsum(some) - some), some) + np.arange(int(some.sum()))
    total = np.frombuffer(cols["total_ns"], dtype=np.float64)
    cols["bytes"] = out = array("d", [np.nan]) * len(total)
    np.frombuffer(out, dtype=np.float64)[rows] = total[rows] * 1e6
    for k in ("time_pct", "total_ns", "avg_ns", "min_ns", "max_ns", "med_ns", "std_ns"):
        np.frombuffer(cols[k], dtype=np.float64)[rows] = np.nan
    return (sized * native.load("_kahan").RANK_SKIP).astype(np.uint8).tobytes()


def _unread_notes(unread: Any) -> list[str]:
    """The notes nsys's readers give the not-read tables `unread` (rows of: first line, last line, report's
    index in _UNREAD_NAMES), in order."""
    from profconv.parse.dialects.nsys import NOT_READ, not_read_text

    said = [not_read_text(r.decode("ascii"), NOT_READ[r.decode("ascii")]) for r in _UNREAD_NAMES]
    scan = native.load("_summarycells")
    made = scan.line_notes(np.ascontiguousarray(unread, dtype=np.int64).tobytes(), tuple(said)) if hasattr(
        scan, "line_notes") else None  # (three a run of an app on unified memory: 14,000 in 20 MB)
    if made is not None:
        return made
    a, b, k = unread.T.tolist() if len(unread) else ([], [], [])
    return [f"lines {x}-{y}: {said[z]}" for x, y, z in zip(a, b, k)]


def _profile_set(chunks: list[dict[str, Any]], label: str, number: int, numbers: dict | None = None) -> Any:
    """The ProfileSet of the chunks' runs, numbered from `number` (None where the core would note
    something of them); `numbers`: their number columns where `_numbers_into` took them already."""
    from profconv.parse.core import ProfileSet
    from profconv.parse.profile_infos import ProfileColumns

    got = _joined(chunks, numbers)
    where = _layout(got)
    if where is None:
        return None
    where["merged"], table_notes, merged_notes = _merged(got, where, number)
    count = len(where["starts"])
    profile_numbers = list(range(number, number + count))
    rows = _rows(got, where, profile_numbers)
    if rows is None:
        return None
    profiles = ProfileColumns({"profile": profile_numbers, "tool": ["nsys"] * count,
                               "line_start": where["starts"].tolist(), "line_end": where["ends"].tolist(),
                               "pid": [None] * count, "command": [None] * count}, count)
    unread = np.concatenate([c["unread"] for c in chunks])
    # the not-read tables' notes (three a run of an app on unified memory) made where they are asked for
    notes = MadeNotes(lambda: _unread_notes(unread) + merged_notes, len(unread) + len(merged_notes))
    ps = ProfileSet(None, profiles, label, [], notes, table_notes, rows=rows)  # type: ignore[arg-type]
    ps.lead = len(unread)  # (the whole read says the not-read reports' notes first: core._parse_text)
    return ps
