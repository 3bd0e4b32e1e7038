"""The rich consoles the CLI writes to, and how wide they are.

In a terminal the output fits the terminal. When stdout is a file or a pipe it is plain (no colour)
and complete: the console is wide enough that no cell is clipped and nothing wraps mid-value.
`--width N` (or the COLUMNS variable in a terminal) sets the width explicitly. Typer's CliRunner
swaps sys.stdout, so consoles are made per call and write to whatever stdout is now.
"""

from __future__ import annotations

import errno
import sys
from typing import IO, TYPE_CHECKING, cast

if TYPE_CHECKING:
    from rich.console import Console

PLAIN_WIDTH = 1000  # redirected output: tables take their natural width, lines are not re-wrapped
MIN_WIDTH = 40
MAX_WIDTH = 10_000  # --width's bounds

_width: int | None = None


def set_width(width: int | None) -> None:
    """--width N for this process (None: the terminal's width, or complete plain output when redirected)."""
    global _width
    _width = width


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced stdout
        return False


def width() -> int | None:
    """The width tables are laid out for; None means the terminal decides."""
    if _width is not None:
        return _width
    return None if stdout_is_terminal() else PLAIN_WIDTH


def width_set() -> bool:
    """Whether --width N chose the layout (a table laid out for N columns even in a file or a pipe)."""
    return _width is not None


def plain() -> bool:
    """True when output goes to a file or pipe (no colour, no live progress, complete lines)."""
    return not stdout_is_terminal()


def _console_class() -> type[Console]:
    from rich.console import Console

    class PipeAwareConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich exits 1 here; a reader that stopped early (`| head`) is not an error: the CLI exits 0
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    return PipeAwareConsole


class TrimmedLines:
    """A text stream that drops the spaces rich pads each line with (a table cell, a title) before the
    line ends: a file or a pipe gets no trailing whitespace."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._pending = ""  # trailing spaces of the line not yet ended

    def write(self, text: str) -> int:
        if not self._pending and text[-1:] == "\n" and " \n" not in text:  # whole lines, none to trim
            self._stream.write(text)
            return len(text)
        lines = (self._pending + text).split("\n")
        last = lines.pop()
        kept = last.rstrip(" ")
        self._pending = last[len(kept):]
        self._stream.write("".join(line.rstrip(" ") + "\n" for line in lines) + kept)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _height(w: int | None) -> int | None:
    """The height to give rich with an explicit width: rich lays a terminal whose TERM is dumb or unknown
    (Emacs' shell, some CI runners) out for 80 columns unless it is told both width and height."""
    if w is None:
        return None
    import shutil

    return shutil.get_terminal_size().lines


def console() -> Console:
    w = width()
    if stdout_is_terminal():
        return _console_class()(highlight=False, soft_wrap=False, width=w, height=_height(w))
    return _console_class()(file=cast("IO[str]", TrimmedLines(sys.stdout)), highlight=False, soft_wrap=False, width=w,
                            height=_height(w))


def error_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def heading(con: Console, text: str) -> None:
    """A section heading: a rule across the terminal, or one plain line in a file or pipe."""
    from rich.text import Text

    if heading_is_rule(con, Text.from_markup(text).cell_len):
        con.rule(text)
    else:
        con.print(f"── {text} ──", highlight=False)


def heading_is_rule(con: Console, cells: int) -> bool:
    """Whether `heading` draws a rule (a terminal or --width, and a title of `cells` that fits) rather
    than one plain line `── title ──`."""
    return (con.is_terminal or _width is not None) and cells + 6 <= con.width


def print_markdown(con: Console, text: str) -> None:
    """Markdown rendered in a terminal; the markdown itself (plain text, nothing cut) in a file or pipe, or
    when a table is wider than the terminal."""
    table_rows = [line for line in text.splitlines() if line.startswith("|")]
    fits = all(len(line) <= con.width for line in table_rows)  # rich would cut cells of wider tables
    if con.is_terminal and fits:
        from rich.markdown import Markdown

        con.print(Markdown(text))
    else:
        con.file.write(text if text.endswith("\n") else text + "\n")
