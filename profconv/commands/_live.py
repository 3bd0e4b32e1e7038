"""What the CLI shows while a session works: a progress bar (rich, transient) and one line per note."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column

from profconv.session.events import Callbacks, Note

STYLES = {"warning": "yellow", "detail": "dim"}


def _fixed(width: int) -> Column:
    return Column(no_wrap=True, min_width=width)


def note_markup(note: Note) -> str:
    """A note as one console line: a warning's head in yellow, a detail dimmed."""
    style = STYLES.get(note.level)
    if note.head:
        head = f"[{style}]{escape(note.head)}:[/{style}]" if style else f"{escape(note.head)}:"
        return f"{head} {escape(note.text)}"
    return f"[{style}]{escape(note.text)}[/{style}]" if style else escape(note.text)


class Live:
    """Callbacks for a session drawn on `con`: `with Live(con, unit) as live: Session(req, live.callbacks)`.
    The bar starts at the first progress step; notes print above it; it is gone when the block ends."""

    def __init__(self, con, unit: str = "") -> None:
        self.con = con
        self.unit = unit
        self.prog: Progress | None = None
        self.task: Any = None
        self.callbacks = Callbacks(progress=self.progress, note=self.note)

    def __enter__(self) -> Live:
        return self

    def __exit__(self, *exc) -> None:
        if self.prog is not None:
            self.prog.stop()
            self.prog = None

    @property
    def console(self):
        """Where to print while the bar is shown (rich keeps the bar below what is printed)."""
        return self.prog.console if self.prog is not None else self.con

    def progress(self, message: str, done: int | None = None, total: int | None = None) -> None:
        """A step with a size (done of total) gets a bar and an ETA; others a spinner."""
        if self.prog is None:
            # at 80 columns the description gives way first (cut with …), never the count or the times
            self.prog = Progress(SpinnerColumn(), TextColumn("{task.description}", table_column=Column(
                                     ratio=1, no_wrap=True, overflow="ellipsis")), BarColumn(bar_width=20),
                                 MofNCompleteColumn(table_column=_fixed(11)),
                                 TextColumn(f"{self.unit}ETA", table_column=_fixed(len(self.unit) + 3)),
                                 TimeRemainingColumn(table_column=_fixed(7)), TimeElapsedColumn(table_column=_fixed(7)),
                                 console=self.con, transient=True)
            self.prog.start()
            self.task = self.prog.add_task("starting", total=None)
        assert self.task is not None
        self.prog.update(self.task, description=escape(message), completed=done or 0, total=total)
        if done is None:
            self.prog.reset(self.task, total=None, description=escape(message))

    def note(self, note: Note) -> None:
        self.console.print(note_markup(note))
