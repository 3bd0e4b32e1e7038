"""The spans of a user kernel's calls, for whoever watches them (a leaf: it imports nothing from profconv,
so a profiler in another package may import it).

A CUPTI collector in a user kernel's child records API calls only inside these spans
(`CuptiCollector(api_windows=True)`): the judge places work by the calls' ranges, and the checks' own
CuPy calls outside them (`cudaGetDevice` on every array operation: 364,710 records in one graded child
on an H200, 6 s to flush and write) are nobody's evidence.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

_watchers: list[Callable[[bool], None]] = []


def watch_calls(fn: Callable[[bool], None]) -> Callable[[], None]:
    """fn(True) as each call of a user's kernel (or its sweep) starts, fn(False) once it has ended. Returns
    the undo."""
    _watchers.append(fn)
    return lambda: _watchers.remove(fn)


@contextlib.contextmanager
def window() -> Iterator[None]:
    """The span of one call of the user's code."""
    for fn in _watchers:
        fn(True)
    try:
        yield
    finally:
        for fn in _watchers:
            fn(False)
