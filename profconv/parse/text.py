"""Undo what documents do to pasted profiler text: encodings, line breaks, comment prefixes,
markdown, HTML bold, elisions, PID markers in other dash forms.

`normalize` runs once over the whole input (a few C-level passes, no per-line Python loop);
`clean` runs per line where a dialect reads report-style lines.
"""

from __future__ import annotations

import csv
import re

from profconv.parse import native

_BOLD_PAIR = re.compile(r"<(b|strong|code|em|i|tt)>(.*?)</\1>")
_BOLD_END = re.compile(r"</(?:b|strong|code|em|i|tt)>|\*\*")
_BOLD_OPEN = re.compile(r"(?<![\w>:,])<(?:b|strong|code|em|i|tt)>")  # after a name it is a template
_DASH_PID = re.compile(r"[—–](\d+)[—–]")
_LEADING_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|\\\*\s+|>\s+)")
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
# '< snip >', '......', '[...]', '…', '⋮', a lone '.' (a column of dots down a pasted table),
# '(output truncated)', and the same marks between dots or dashes ('... < snip > ...', '-- snip --',
# '[... snip ...]'): something was left out here
_ELIDED = (r"(?:<\s*snip(?:ped)?\s*>|\[?\s*(?:\.+|…|⋮|︙)\s*\]?"
           r"|\(?\s*(?:snip|snipped|output truncated|truncated)\s*\)?|\.\s\.\s\.)")
ELISION = re.compile(rf"^\s*(?:{_ELIDED}|[.\-–—]+[ \t]*{_ELIDED}[ \t]*[.\-–—]+|\[\s*\.+\s*snip\s*\.+\s*\])\s*$",
                     re.IGNORECASE)

_CONTROL_CHARS = "\f\v\u0085\u2028\u2029\x1c\x1d\x1e\ufeff"
_PREFIX_AT_LINE = re.compile(r"\n[ \t]*(?://|#(?![\w{])|>|--(?=[ \t]|$))", re.M)  # starts with a literal: a fast scan
_PREFIX_FIRST = re.compile(r"[ \t]*(?://|#(?![\w{])|>|--(?=[ \t]|$))", re.M)
_CONTROL = re.compile("[\f\v\u0085\u2028\u2029\x1c\x1d\x1e\ufeff]")
_PREFIX = re.compile(r"(?m)^[ \t]*(//+|#+(?![\w{])|>+|--(?=[ \t]|$))[ \t]?")
# a typographic apostrophe between digit groups: the Swiss thousands separator after autocorrect
_TYPOGRAPHIC_GROUP = re.compile(r"(?<=\d)[\u2019\u02bc](?=\d{3}(?!\d))")
_PID_DASHES = re.compile(r"(?m)^([ \t]*(?:(?:#{1,6}|>+|//)[ \t]+)?)(?:-{2}|[—–‒―]{1,2})(\d{2,})(?:-{2}|[—–‒―]{1,2})(?=\s|$)")


def decode(data: bytes) -> str:
    """Bytes -> text: UTF-8 (BOM or not), UTF-16 (BOM, or NUL-interleaved as PowerShell 5 writes), else Latin-1."""
    codec = utf16_codec(data)
    if codec is not None:
        return data.decode(codec, errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def utf16_codec(data: bytes) -> str | None:
    """The UTF-16 codec `decode` reads `data` with, None where it is not UTF-16: its byte-order mark, or
    (without one) the order in which its first 4 KiB read as text -- over 40% of their 2-byte units a
    character of ASCII text (the other byte NUL), more of them in that order than in the
    other. A few characters of other scripts (Chinese, Korean, box drawing: a NUL in the other byte
    lane for U+xx00) do not hide it; binary data with NULs is not taken."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    head = data[:4096]
    head = head[: len(head) & ~1]
    if len(head) < 4 or head.count(0) < len(head) // 10:  # (text of one byte a character: no NULs)
        return None
    le, be = _text_units(head[0::2], head[1::2]), _text_units(head[1::2], head[0::2])
    if max(le, be) <= 0.4 * (len(head) // 2) or le == be:
        return None
    return "utf-16-le" if le > be else "utf-16-be"


_TEXT_BYTE = bytes(c in (9, 10, 12, 13) or 32 <= c < 127 for c in range(256))


def _text_units(low: bytes, high: bytes) -> int:
    """How many 2-byte units (low[i], high[i]) are a character of ASCII text: high NUL, low printable or a
    space. (Not Latin-1's letters too: 2-byte integers below 300 would read as such text.)"""
    return sum(_TEXT_BYTE[a] for a, b in zip(low, high) if not b)


def normalize(text: str) -> str:
    """One text as the profiler printed it: '\\n' line ends only, no BOM or form feeds,
    comment prefixes ('//', '#', '>', and ' * ' inside a /* … */ block) and HTML line breaks
    ('<br>') ending a line removed, LaTeX-escaped percent signs ('47.10\\%') unescaped, PID markers
    in any dash form written '==PID==',
    digit groups joined by a typographic apostrophe ('25’056') by the plain one.
    A Jupyter notebook (.ipynb) becomes the text its cells show: see `notebook_text`."""
    box = [_line_ends(text)]  # handed over, so that the old text is let go before the new one is joined
    folded = _folded(box)
    if folded is None:
        del text
        return _rewritten(box)
    short, runs = folded
    lines = short.count("\n")
    box = [short]
    del short
    got = _unfolded(_rewritten(box), runs, lines)
    # None is not met (every rewrite keeps each line where it was, once <pre> blocks are out); then
    # the text as given (its caller holds it) rewritten whole
    return got if got is not None else _rewritten([_line_ends(text)])


def _rewritten(box: list[str]) -> str:
    """normalize's rewrites after the line ends, of the text in `box` (taken out of it)."""
    text, rare = _blanks_and_rare_marks(box)
    if rare is not False:
        text = _markup_blocks(text)
    text = _prefixes_and_dashes(text, rare)
    if rare is not False:
        text = _rare_marks(text)
    if "\u2019" in text or "\u02bc" in text:
        text = _TYPOGRAPHIC_GROUP.sub("'", text)  # '25’056' (a word processor's apostrophe) is 25'056
    return text


# Long runs of blank lines (a big table's rows that profconv.parse.bytescan read on the bytes leave
# one blank line each: 83,000 in a 20 MB trace) are rewritten as FOLD_KEEP of them: each rewrite
# looks at a line and its neighbours, never at how many blank lines follow each other (two or a
# thousand: the same), and none adds or removes a line, but an HTML <pre> block's (its tags and
# entities can span lines: such a text is rewritten whole). The rewritten text gets the blank
# lines back where they were (their neighbours found again by their line numbers).
FOLD_FROM = 256  # newlines in a row from which they are folded
FOLD_KEEP = 16  # newlines left of each run while the text is rewritten
_NEWLINES = re.compile("\n+")


def _folded(box: list[str]) -> tuple[str, list[tuple[int, int]]] | None:
    """The text in `box` (taken out of it) with each run of FOLD_FROM or more newlines cut to
    FOLD_KEEP, and the runs: (the index of the line the run's first newline ends, the newlines
    left out). None (`box` as it was) where there is none, or a <pre> block."""
    text, run = box[0], "\n" * FOLD_FROM
    i = text.find(run)
    if i < 0:
        return None
    pieces: list[str] = []
    runs: list[tuple[int, int]] = []
    pos = line = 0
    while i >= 0:
        e = _NEWLINES.match(text, i).end()  # type: ignore[union-attr]  # (text[i] is a newline)
        line += text.count("\n", pos, i)
        pieces.append(text[pos : i + FOLD_KEEP])
        runs.append((line, e - i - FOLD_KEEP))
        line += FOLD_KEEP
        pos = e
        i = text.find(run, pos)
    pieces.append(text[pos:])
    short = "".join(pieces)
    if "<pre" in short or "<PRE" in short:
        return None
    box.clear()
    return short, runs


def _unfolded(text: str, runs: list[tuple[int, int]], lines: int) -> str | None:
    """The rewritten folded `text` with each run's newlines back after the line that ends where the
    run began (found by its number: the runs of FOLD_KEEP newlines or more in the text, counted
    from the start); None where a run is not found so, or the text has not the folded text's
    `lines` newlines."""
    if text.count("\n") != lines:
        return None
    pieces: list[str] = []
    pos = line = cut = 0  # searched from pos, the newlines before it counted (line), copied up to cut
    k = 0
    while k < len(runs):
        at = text.find("\n" * FOLD_KEEP, pos)
        if at < 0:
            return None
        line += text.count("\n", pos, at)
        end = _NEWLINES.match(text, at).end()  # type: ignore[union-attr]
        while k < len(runs) and line <= runs[k][0] and runs[k][0] + FOLD_KEEP <= line + end - at:
            put = at + runs[k][0] - line
            pieces += [text[cut:put], "\n" * runs[k][1]]
            cut, k = put, k + 1
        if k < len(runs) and runs[k][0] < line:
            return None
        line += end - at
        pos = end
    pieces.append(text[cut:])
    return "".join(pieces)


def _line_ends(text: str) -> str:
    """A notebook's shown text; '\n' line ends only; form feeds, BOMs and other Unicode line breaks
    out (the text's own line breaks where it is written with them)."""
    if text[:1] == "{" or text.lstrip()[:1] == "{":
        nb = notebook_text(text)
        if nb is not None:
            text = nb
    control = any(c in text for c in _CONTROL_CHARS)
    if control:
        text = _unicode_line_breaks(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\n" not in text:
            text = text.replace("\r", "\n")  # classic Mac line ends
    if control:
        text = text.replace("\f", "").replace("\v", "").replace("\ufeff", "")
        text = _CONTROL.sub(" ", text)  # other Unicode line breaks: not lines of their own here
    return text


def _blanks_and_rare_marks(box: list[str]) -> tuple[str, bool | None]:
    """The text in `box` (taken out of it) without blanks ending its lines, and whether it holds one
    of the rare multi-character marks (_RARE: None where the C scan is not built, then each is
    looked for). One pass in C where it is built (a 50 MB trace: 0.04 s, not 0.14; each
    two-character `in` test costs ~1 ms a MB)."""
    text = box[0]
    scan = native.load("_kahan")
    rare = scan.find_any(text, _RARE) if scan is not None else None
    if rare is False:
        box.clear()
        return (text.rstrip(" ") if text.endswith(" ") else text), rare
    del text
    text = _strip_trailing_spaces(box)  # a padded line ('%   ' would be a CSV cell's unit)
    if scan is not None:  # the other marks, now that no line ends in a blank (one more C pass)
        rare = scan.find_any(text, _RARE[:4] + _RARE[5:])
    return text, rare


def _markup_blocks(text: str) -> str:
    """An HTML page's <pre> block as it shows; a markdown indented code block dedented."""
    if "<" in text and ("<pre" in text or "<PRE" in text):
        text = _html_pre(text)
    if "\n\n" in text and ("\n\n    " in text or "\n\n\t" in text):
        text = _dedent_code_blocks(text)
    return text


def _prefixes_and_dashes(text: str, rare: bool | None) -> str:
    """Comment prefixes of pasted blocks removed, PID markers in dash forms as '==PID=='."""
    # single characters first: a one-character test is a memchr, a two-character one a slower search
    # ('//' is one of the rare marks: where the C pass found none, no search for it)
    if (">" in text or "#" in text or (rare is not False and "/" in text and _DOUBLE_SLASH.search(text))
            or (rare is not False and ("-- " in text or "--\n" in text))) and _two(_prefix_lines(text)):
        text = _strip_prefixes(text)
    if "—" in text or "–" in text or "‒" in text or "―" in text or ("-" in text and "--" in text):
        text = _PID_DASHES.sub(r"\1==\2==", text)
    return text


def _rare_marks(text: str) -> str:
    """HTML line breaks ending a line, LaTeX-escaped percent signs, a C comment block's stars."""
    if "<" in text and ("<br" in text or "<BR" in text):
        text = _LINE_BREAK_TAG.sub("", text)  # 'command: ./add <br>' (markdown that needed a line break)
    if "\\" in text and "\\%" in text:
        text = _LATEX_PERCENT.sub("%", text)  # '47.10\\%' and 'Time(\\%)': a document's LaTeX escape
    if "*" in text and "/*" in text and _STAR_LINE.search(text):
        text = _strip_comment_stars(text)
    return text


def _strip_trailing_spaces(box: list[str]) -> str:
    """Blanks at the end of lines removed from the text in `box` (taken out of it), by one search
    for ' \n' over the text and a step per line that has them (a regex over every blank of a 50 MB
    trace costs ten times more). The old text is let go before the pieces are joined: at most two
    copies are held (three had raised a 50 MB trace's peak by one byte per input byte)."""
    text = box.pop()
    i = text.find(" \n")
    if i < 0:
        return text.rstrip(" ") if text.endswith(" ") else text
    out, pos = [], 0
    while i >= 0:
        j = i
        while j > pos and text[j - 1] == " ":
            j -= 1
        out.append(text[pos:j])
        pos = i + 1  # the '\n'
        i = text.find(" \n", pos)
    out.append(text[pos:].rstrip(" "))
    del text
    return "".join(out)
_UNICODE_BREAKS = re.compile("[\u0085\u2028\u2029]")


def _unicode_line_breaks(text: str) -> str:
    """U+0085, U+2028 and U+2029 where they are the text's line breaks (more of them than of '\n':
    a text saved by a tool that ends lines so) become '\n'; a stray one stays a space (below), so
    that the line numbers of the rest stay those of an editor."""
    n = text.count("\n")
    if len(_UNICODE_BREAKS.findall(text)) <= n:
        return text
    return _UNICODE_BREAKS.sub("\n", text.replace("\u2028\n", "\n").replace("\u0085\n", "\n")
                               .replace("\u2029\n", "\n"))


_PRE = re.compile(r"(?is)<pre\b[^>]*>(.*?)</pre\s*>")
_CODE_TAG = re.compile(r"(?i)</?code\b[^>]*>")


def _html_pre(text: str) -> str:
    """A log inside an HTML page's <pre> block: the block's text as it shows (its tags removed,
    '&lt;' '&amp;' … unescaped), the lines of the page staying where they were."""
    import html

    def shown(m: re.Match) -> str:
        body = _CODE_TAG.sub("", m.group(1))
        return html.unescape(body)

    if "</pre" not in text and "</PRE" not in text:
        return text
    return _PRE.sub(shown, text)


_CODE_BLOCK_START = re.compile(r"(?:^|\n)[^\s][^\n]*\n(?:[ \t]*\n)+(?=    |\t)")
_INDENT4 = re.compile(r"^(?:    |\t)")


def _dedent_code_blocks(text: str) -> str:
    """A markdown indented code block (after a paragraph of prose or the start of the text and a
    blank line, every line indented by four spaces or a tab) loses that indentation, as markdown
    shows it: a log pasted so reads as printed. A block after an indented line (an ncu section
    after a blank line) is the log's own indentation and stays, and so does one whose paragraph
    follows an indented line directly (program output among a log's own indented lines: 'Done.'
    between two ncu sections)."""
    lines = None
    for m in _CODE_BLOCK_START.finditer(text):
        if lines is None:
            lines = text.split("\n")
        first = text.count("\n", 0, m.end())  # the index of the block's first line
        if _inside_indented(lines, text.count("\n", 0, m.start() + 1) - 1):
            continue
        k = first
        while k < len(lines) and (not lines[k].strip() or _INDENT4.match(lines[k])):
            k += 1
        while k > first and not lines[k - 1].strip():
            k -= 1
        for j in range(first, k):
            lines[j] = _INDENT4.sub("", lines[j])
    return text if lines is None else "\n".join(lines)


def _inside_indented(lines: list[str], i: int) -> bool:
    """The paragraph whose last line is at index i follows an indented line directly (no blank
    line before it): it is no markdown paragraph but lines among a log's own indented ones."""
    while i >= 0 and lines[i].strip() and not lines[i][0].isspace():
        i -= 1
    return i >= 0 and lines[i].strip() != "" and lines[i][0].isspace()


# what normalize's tests of more than one character look for (one find_any pass first)
_RARE = ("<br", "<BR", "\\%", "/*", " \n", "<pre", "<PRE", "\n\n    ", "\n\n\t", "-- ", "--\n", "//")
# an HTML line break ending a line, after a blank (a template argument 'k<br>' has none) or alone
_LINE_BREAK_TAG = re.compile(r"(?im)(?:[ \t]+|^)<br[ \t]*/?>[ \t]*$")
_LATEX_PERCENT = re.compile(r"(?<=[\d(])\\%")
_DOUBLE_SLASH = re.compile("//")  # sre's search for it is twice as fast as str's on a long text
_STAR_LINE = re.compile(r"\n[ \t]+\*(?![*/])")
_STAR = re.compile(r"^[ \t]+\*(?![*/])[ \t]?")


def _strip_comment_stars(text: str) -> str:
    """Output pasted into a C block comment whose lines each start with ' * ' (the style editors
    keep): inside '/* … */' only, that prefix is removed ('* Running …' at the start of a line
    elsewhere is rai's, and stays)."""
    lines = text.split("\n")
    inside = False
    for k, ln in enumerate(lines):
        if not inside:
            at = ln.find("/*")
            inside = at >= 0 and "*/" not in ln[at + 2 :]
            continue
        if "*/" in ln:
            inside = False
            if ln.strip().startswith("*/"):
                continue
        if m := _STAR.match(ln):
            lines[k] = ln[m.end() :]
    return "\n".join(lines)


def _prefix_lines(text: str):
    """Line starts that hold a comment prefix (the first line too), without copying the text."""
    if _PREFIX_FIRST.match(text):
        yield 0
    yield from _PREFIX_AT_LINE.finditer(text)


def _two(it) -> bool:
    return next(it, None) is not None and next(it, None) is not None


def _strip_prefixes(text: str) -> str:
    """Remove a comment prefix where it marks a pasted block: the same prefix on at least two
    consecutive lines ('# SMs' alone is an ncu metric name, not a comment)."""
    lines = text.split("\n")
    marks = [m.group(1) if (m := _PREFIX.match(ln)) else None for ln in lines]
    out = []
    for k, ln in enumerate(lines):
        p = marks[k]
        if p and ((k and marks[k - 1] == p) or (k + 1 < len(lines) and marks[k + 1] == p)):
            m = _PREFIX.match(ln)
            assert m is not None
            ln = ln[m.end() :]
        out.append(ln)
    return "\n".join(out)


def clean(line: str) -> str:
    """One report line back to what the profiler printed (cells of markdown tables tab-joined)."""
    if "\\" in line:
        if (latex := _latex_row(line)) is not None:
            return latex
    if "&" in line:
        import html  # on first use: its import compiles a large pattern (~4 ms of every parse)

        line = html.unescape(line)
    if "<" in line or "*" in line:
        line = _BOLD_PAIR.sub(r"\2", line)
        line = _BOLD_END.sub("", line)
        line = _BOLD_OPEN.sub("", line)
    if "—" in line or "–" in line:
        line = _DASH_PID.sub(r"==\1==", line)
    if "#" in line or ">" in line or "\\" in line:  # what _LEADING_MARKUP needs (a substring test costs less)
        line = _LEADING_MARKUP.sub("", line)
    if "|" in line:
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3:
            if _MD_SEPARATOR.match(stripped):
                return ""
            return "\t".join(map(_cell, stripped[1:-1].split("|")))
        if stripped.count("|") >= 2 and (_MD_SEPARATOR.match(stripped) or len(_MD_INNER_BAR.findall(stripped)) >= 2):
            # a pipe table written without its outer bars ('Time(%)  |  Time  | … | Name', as GitHub
            # allows): its cells are between the bars, a bar with blanks on both sides
            if _MD_SEPARATOR.match(stripped):
                return ""
            return "\t".join(map(_cell, _MD_INNER_BAR.split(stripped)))
    return line.rstrip("\r\n")


_MD_INNER_BAR = re.compile(r"\s+\|\s+")


def _cell(cell: str) -> str:
    """A markdown table cell's text: blanks around it, and a code span's backticks around all
    of it ('`[CUDA memcpy HtoD]`'), removed."""
    cell = cell.strip()
    if len(cell) > 2 and cell[0] == "`" and cell[-1] == "`" and "`" not in cell[1:-1]:
        return cell[1:-1].strip()
    return cell


_LATEX_RULE = re.compile(r"^\s*(?:\\(?:hline|toprule|midrule|bottomrule|cline\{[^}]*\})\s*)+$")
_LATEX_END = re.compile(r"\s*\\\\\s*(?:\\(?:hline|toprule|midrule|bottomrule|cline\{[^}]*\})\s*)*$")
_LATEX_AMP = re.compile(r"(?<!\\)&")
_LATEX_CMD = re.compile(r"\\(?:textbf|texttt|textit|emph|mathrm|text)\{([^{}]*)\}")
_LATEX_MU = re.compile(r"\$\\mu\$\s*|\\textmu(?:\{\})?\s*|\$\\mu\s*\$")


def _latex_row(line: str) -> str | None:
    """A row of a LaTeX tabular ('72.32\\% & 1.02030s & … \\\\ \\hline') as its cells tab-joined, a
    rule line as '' (like a markdown separator); None when the line is not one."""
    if _LATEX_RULE.match(line):
        return ""
    end = _LATEX_END.search(line)
    if end is None or len(_LATEX_AMP.findall(line)) < 2:
        return None
    body = _LATEX_MU.sub("u", line[: end.start()])
    body = _LATEX_CMD.sub(r"\1", body)
    cells = [c.strip() for c in _LATEX_AMP.split(body)]
    cells = [c.replace("\\%", "%").replace("\\_", "_").replace("\\&", "&").replace("\\#", "#")
             .replace("\\$", "$").replace("~", " ").replace("{}", "") for c in cells]
    return "\t".join(cells)


def csv_row(line: str) -> list[str]:
    """One CSV line as its fields ([] when it cannot be read). A carriage return inside the line
    (not at its end) is damage: '5\r0.1' is not 50.1, so such a line cannot be read."""
    line = line.rstrip("\r")
    if "\r" in line:
        return []
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return []


def csv_rows(lines: list[str]) -> list[list[str]]:
    """CSV lines, one row per line (never a quoted field running over lines)."""
    if any("\r" in ln for ln in lines):
        return [csv_row(ln) for ln in lines]
    try:
        rows = list(csv.reader(lines))
        if len(rows) == len(lines):
            return rows
    except csv.Error:
        pass
    return [csv_row(ln) for ln in lines]


def is_neutral(line: str) -> bool:
    """Blank lines, code fences and elisions: they neither end nor belong to a table."""
    return not line.strip() or FENCE.match(line) is not None or ELISION.match(line) is not None


_JSON_STRING_LINE = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*,?\s*$')


def notebook_text(text: str) -> str | None:
    """A Jupyter notebook -> the text a reader sees in it: its cells' outputs (printed streams and
    plain-text results) and its markdown cells, in order; code and everything else blank. None when
    the text is not a notebook.

    Where the notebook keeps one string per line (as Jupyter and Colab write it), each shown line
    stays on its own line number, so the line numbers of rows are those of the .ipynb file;
    otherwise the shown texts follow each other, one per line (line numbers are then those of the
    shown text)."""
    import json

    if '"cells"' not in text[:4096] and '"nbformat"' not in text[-4096:]:
        return None
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit: not a notebook we read
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    pieces: list[str] = []  # every string element shown, in file order
    for cell in nb["cells"]:
        if not isinstance(cell, dict):
            continue
        if cell.get("cell_type") == "markdown":
            pieces.extend(_strings(cell.get("source")))
        outputs = cell.get("outputs")
        for out in outputs if isinstance(outputs, list) else []:
            if not isinstance(out, dict):
                continue
            if out.get("output_type") == "stream":
                pieces.extend(_strings(out.get("text")))
            elif isinstance(out.get("data"), dict):
                pieces.extend(_strings(out["data"].get("text/plain")))
    # one string per line of the file, each ending its shown line: keep the line numbers
    lines = text.split("\n")
    kept = [""] * len(lines)
    k = 0
    for no, ln in enumerate(lines):
        if k == len(pieces):
            break
        if '"' in ln and (m := _JSON_STRING_LINE.match(ln)):
            try:
                value = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(value, str) and whole_text(value) == pieces[k] and "\n" not in value.rstrip("\n"):
                kept[no] = pieces[k].rstrip("\n")
                k += 1
    if k == len(pieces):
        return "\n".join(kept)
    return "".join(p if p.endswith("\n") else p + "\n" for p in pieces)


def whole_text(s: str) -> str:
    """A JSON string as text every output can encode: a lone surrogate escape (`\\ud800`, which JSON
    allows and UTF-8 cannot hold) becomes U+FFFD."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")  # one U+FFFD each


def _strings(v) -> list[str]:
    if isinstance(v, str):
        return [whole_text(v)]
    if isinstance(v, list):
        return [whole_text(x) for x in v if isinstance(x, str)]
    return []
