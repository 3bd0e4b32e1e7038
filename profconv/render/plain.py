"""Plain text for a file or a pipe: the lines rich prints there (no colour, no terminal), written
without rich's layout engine, byte for byte the same.

`profconv parse` of a long log prints thousands of small tables; rich measured, wrapped, padded
and cropped every cell through its segment machinery (~6 ms a profile, 140 s for 8,000). Where
the output is not a terminal and has no colour, a table whose every column takes its natural
width (it fits the console) is a matter of padding strings: `table` writes it so. Whatever this
module does not reproduce exactly is left to rich, decided per table or line (each function
answers False and writes nothing): a terminal, colour (FORCE_COLOR), an encoding that is not
UTF-8 (rich draws ASCII boxes), a table wider than the console (rich would fold or crop), rich
markup or an emoji code in a title, caption or header, characters rich measures or strips
specially (control and format characters, zero-width marks, tabs, line breaks), a title or
caption longer than the table (rich would wrap it). tests/test_render_plain.py renders every
parseable file of tests/data both ways and compares the bytes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.cells import cell_len, get_character_cell_size

if TYPE_CHECKING:
    from rich.console import Console

    from profconv.render.format import Fitted

EMOJI = re.compile(r":\S*?:")  # what rich's emoji replacement might touch in a markup string


def enabled(con: Console) -> bool:
    """True where rich would print plain lines: not a terminal, no colour, UTF-8, nothing captured or
    recorded, no live display hooked in, lines wrapped at the console's width."""
    try:
        return (not con.is_terminal and con.color_system is None and not con.legacy_windows
                and con.encoding.lower().startswith("utf") and not con.record and not con.soft_wrap
                and getattr(con, "_buffer_index", 1) == 0 and not getattr(con, "_render_hooks", [None]))
    except (AttributeError, TypeError, ValueError):
        return False


_NARROW = frozenset(map(chr, range(0x20, 0x7F)))


def width(text: str) -> int | None:
    """The cells `text` takes, or None where rich might not print it as it is: a character that is
    not printable (control, format, separator other than the space, tab, line break) or that takes
    no cell (a combining mark, variation selector), whose width rich works out in its own ways."""
    if _NARROW.issuperset(text):
        return len(text)
    if not text.isprintable():
        return None
    total = 0
    for ch in text:
        size = get_character_cell_size(ch)
        if size not in (1, 2):
            return None
        total += size
    return total if total == cell_len(text) else None


def _markup_free(text: str) -> bool:
    """A string rich reads as markup prints as it is: no tag or escape, no emoji code."""
    return "[" not in text and "\\" not in text and not EMOJI.search(text)


def line(con: Console, text: str, markup: bool = False) -> bool:
    """`text` as con.print prints it (markup as given; a str is read as markup, a Text is not),
    when it is one line that fits the console."""
    w = width(text)
    if w is None or w > con.width or (markup and not _markup_free(text)) or not enabled(con):
        return False
    con.file.write(text + "\n")
    return True


def table(con: Console, t: Fitted) -> bool:
    """`t` as con.print(t) prints it (rich's SIMPLE_HEAD table without edges), when every column
    takes its natural width within the console's."""
    from rich.text import Text

    cols = t.columns
    if not cols or not enabled(con):
        return False
    n = len(cols)
    texts: list[list[str]] = []
    widths: list[int] = []
    for c in cols:
        if not _markup_free(c.header) or c.justify not in ("left", "right"):
            return False
        strings = [c.header]
        for v in c.cells:
            if isinstance(v, str):
                strings.append(v)
            elif type(v) is Text and v.justify is None and v.overflow is None and not v.no_wrap and v.end == "\n":
                strings.append(v.plain)
            else:
                return False
        w = t.min_width(c)
        for s in strings:
            sw = width(s)
            if sw is None:
                return False
            w = max(w, sw)
        texts.append(strings)
        widths.append(w)
    if len({len(strings) for strings in texts}) > 1:
        return False
    pads = [(0 if i == 0 else 1) + (0 if i == n - 1 else 1) for i in range(n)]
    if any(w + p < 1 for w, p in zip(widths, pads)):
        return False  # rich gives such a column one cell
    table_width = sum(widths) + sum(pads) + n - 1
    if table_width > con.width:
        return False
    notes = t.caption.split("\n") if t.caption else []
    for a in ([t.title] if t.title else []) + notes:
        aw = width(a)
        if aw is None or aw > table_width or not _markup_free(a):
            return False

    def cell(i: int, s: str) -> str:
        if cols[i].justify == "right":
            s = s.rstrip()
            body = " " * (widths[i] - width(s)) + s  # type: ignore[operator]
        else:
            body = s + " " * (widths[i] - width(s))  # type: ignore[operator]
        return (" " + body if i else body) + (" " if i < n - 1 else "")

    out = []
    if t.title:
        out.append(t.title + " " * (table_width - width(t.title)))  # type: ignore[operator]
    for r in range(len(texts[0])):
        out.append(" ".join(cell(i, texts[i][r]) for i in range(n)))
        if r == 0:
            out.append("─" * table_width)
    for a in notes:
        out.append(a + " " * (table_width - width(a)))  # type: ignore[operator]
    con.file.write("\n".join(out) + "\n")
    return True
