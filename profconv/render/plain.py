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
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len, get_character_cell_size
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console

    from profconv.render.format import Column, Fitted

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


# printable characters rich measures one cell wide: ASCII, Latin-1, Greek, Cyrillic, punctuation
# (— …), arrows and maths (≥ ×), box drawing and shapes (─ ●); a string of them is len() cells
_RANGES = ((0x20, 0x7E), (0xA1, 0xAC), (0xAE, 0x2FF), (0x370, 0x482), (0x2010, 0x2027), (0x2030, 0x205E),
           (0x2190, 0x22FF), (0x2500, 0x25FC))
_NARROW = frozenset(ch for a, b in _RANGES for ch in map(chr, range(a, b + 1))
                    if ch.isprintable() and get_character_cell_size(ch) == 1)
_narrow = _NARROW.issuperset


def width(text: str) -> int | None:
    """The cells `text` takes, or None where rich might not print it as it is: a character that is
    not printable (control, format, separator other than the space, tab, line break) or that takes
    no cell (a combining mark, variation selector), whose width rich works out in its own ways."""
    if _narrow(text):
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


def markup_free(text: str) -> bool:
    """A string rich reads as markup prints as it is: no tag or escape, no emoji code."""
    return "[" not in text and "\\" not in text and (":" not in text or not EMOJI.search(text))


_WORD = re.compile(r"\s*\S+\s*")  # a word and the spaces after it (rich._wrap.re_word)


def _breaks(text: str, width: int) -> list[int] | None:
    """Where rich's Text.wrap breaks a line of narrow characters (rich._wrap.divide_line, a character a
    cell): before each word that does not fit what is left of its line; None where a word is wider than
    `width` (rich folds it)."""
    out: list[int] = []
    offset = 0
    for m in _WORD.finditer(text):
        start, word = m.start(), m.group()
        size = len(word.rstrip())
        if size > width:
            return None
        if width - offset >= size:
            offset += len(word)
        elif offset and start:
            out.append(start)
            offset = len(word)
    return out


def writer(con: Console) -> Writer | None:
    """A plain writer for `con` where rich would print plain lines there (a file or a pipe), else None.
    The console's state is read once: use it for one command's output."""
    return Writer(con) if enabled(con) else None


class Writer:
    """Lines and tables written to a console's file as rich prints them there. Each method answers
    False, having written nothing, where rich must draw it."""

    def __init__(self, con: Console) -> None:
        self.write: Callable[[str], object] = con.file.write
        self._file_write = con.file.write
        self.width = con.width
        self._held: list[str] = []
        from profconv.ui import TrimmedLines

        self.trims = isinstance(con.file, TrimmedLines)  # the file drops the spaces that end a line

    def hold(self) -> None:
        """Keep what is written until flush() (one write of many lines and tables); flush before
        anything else writes to the console's file."""
        self.write = self._held.append

    def flush(self) -> None:
        if self._held:
            self._file_write("".join(self._held))
            self._held.clear()

    def line(self, text: str, markup: bool = False) -> bool:
        """`text` as con.print prints it (a str is read as markup: markup=True; a Text is not), when
        it is one line that fits the console."""
        w = width(text)
        if w is None or w > self.width or (markup and not markup_free(text)):
            return False
        self.write(text + "\n")
        return True

    def wrapped(self, text: str) -> bool:
        """`text` as con.print(Text(text)) prints it, wrapped at the console's width, when each of its
        characters takes a cell and no word of it is wider than the console (rich would fold it)."""
        lines = _wrapped_lines(text, self.width)
        if lines is None:
            return False
        self.write("\n".join(lines) + "\n")
        return True

    def table(self, t: Fitted) -> bool:
        """`t` as con.print(t) prints it (rich's SIMPLE_HEAD table without edges), when every column
        takes its natural width within the console's."""
        cols = t.columns
        if not cols:
            return False
        bodies: list[list[str]] = []
        table_width = 3 * (len(cols) - 1)  # a space of padding either side of a column, a space between
        rows = None
        for c in cols:
            strings = _column_strings(c)
            if strings is None or (rows is not None and rows != len(strings)):
                return False
            rows = len(strings)
            sized = _sizes(strings, t.min_width(c))
            if sized is None or (sized[1] == 0 and len(cols) == 1):
                return False  # (a column of width 0 alone: rich gives it one cell)
            sizes, w = sized
            bodies.append(_justified(strings, sizes, w, c.justify))
            table_width += w
        if table_width > self.width:
            return False
        tw = width(t.title) if t.title else 0
        if tw is None or tw > table_width or (t.title and not markup_free(t.title)):
            return False  # (a title is centred: wrapped, it is rich's)
        notes = []
        for a in t.caption.split("\n") if t.caption else []:
            aw = width(a)
            if aw is None or not markup_free(a):
                return False
            got = [a] if aw <= table_width else _wrapped_lines(a, table_width)  # wrapped as rich wraps it (left)
            if got is None:
                return False
            notes += got
        out = [t.title + " " * (table_width - (width(t.title) or 0))] if t.title else []
        lines = list(map("   ".join, zip(*bodies)))
        out.append(lines[0])
        out.append("─" * table_width)
        out.extend(lines[1:])
        out.extend(a + " " * (table_width - (width(a) or 0)) for a in notes)
        self.write("\n".join(out) + "\n")
        return True


def _wrapped_lines(text: str, w: int) -> list[str] | None:
    """The lines rich wraps a Text into at width `w` (rich._wrap.divide_line, Text.rstrip_end), or
    None where a character is not one cell or a word is wider than `w` (rich folds it)."""
    if not _narrow(text):
        return None
    breaks = _breaks(text, w)
    if breaks is None:
        return None
    lines = []
    for a, b in zip([0, *breaks], [*breaks, len(text)]):
        line = text[a:b]
        if len(line) > w:  # (Text.rstrip_end: the spaces past the width dropped)
            line = line[: len(line) - min(len(line) - len(line.rstrip()), len(line) - w)]
            if len(line) > w:
                return None
        lines.append(line)
    return lines


def _column_strings(c: Column) -> list[str] | None:
    """A column's header and cells as plain strings, or None where rich would style or wrap them."""
    if not markup_free(c.header) or c.justify not in ("left", "right"):
        return None
    strings = [c.header]
    for v in c.cells:
        if type(v) is str:
            strings.append(v)
        elif type(v) is Text and v.justify is None and v.overflow is None and not v.no_wrap and v.end == "\n":
            strings.append(v.plain)
        else:
            return None
    return strings


def _sizes(strings: list[str], min_width: int) -> tuple[list[int], int] | None:
    """Each string's cell width and the column's (None: a width this printer cannot know)."""
    if _narrow("".join(strings)):
        sizes = list(map(len, strings))
        return sizes, max(sizes)  # the column's min_width: its natural width or less
    sizes = []
    for s in strings:
        sw = width(s)
        if sw is None:
            return None
        sizes.append(sw)
    return sizes, max(min_width, *sizes)


def _justified(strings: list[str], sizes: list[int], w: int, justify: str) -> list[str]:
    if justify != "right":
        return [s + " " * (w - sw) for s, sw in zip(strings, sizes)]
    body = []
    for s, sw in zip(strings, sizes):
        if s[-1:] == " ":  # rich right-justifies the text without its trailing spaces
            stripped = s.rstrip()
            sw -= len(s) - len(stripped)
            s = stripped
        body.append(" " * (w - sw) + s)
    return body
