"""What a session tells its caller while it works: progress, each result, notes, and whether to stop.

Every callback is optional; a session with `Callbacks()` runs silently (a notebook, a script). The
CLI hands in callbacks that draw a progress bar and print notes; a notebook may collect the results
as they come or stop the session from another thread (`stop`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Level = Literal["info", "warning", "detail"]


@dataclass(frozen=True)
class Note:
    """One line for the user: `head` (e.g. 'GPU variants skipped') then `text`; `level` says how loud."""

    text: str
    level: Level = "info"
    head: str = ""

    def __str__(self) -> str:
        return f"{self.head}: {self.text}" if self.head else self.text


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


def _never() -> bool:
    return False


@dataclass
class Callbacks:
    """progress(message, done, total): a step (done/total images when it has a size, else None);
    result(item): each VariantResult (run) or BenchLayer (bench) as soon as it is recorded;
    note(Note): a line worth telling (a skipped variant, a re-run under a profiler);
    stop(): polled between steps; True ends the session as Ctrl-C does (record kept, interrupted)."""

    progress: Callable[[str, int | None, int | None], None] = _nothing
    result: Callable[[Any], None] = _nothing
    note: Callable[[Note], None] = _nothing
    stop: Callable[[], bool] = _never

    def check_stop(self) -> None:
        """KeyboardInterrupt when the caller asked the session to stop (handled like Ctrl-C)."""
        if self.stop():
            raise KeyboardInterrupt
