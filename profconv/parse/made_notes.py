"""A ProfileSet's notes made where they are first asked for, not by the parse that finds them.

A sweep of `nsys stats` runs of an app on unified memory notes each run's um_* reports, which profconv does
not read: three notes a run, ~19,000 in 20 MB, ~4.8 MB of text. The CLI writes every one; a library call
that only ranks the rows never looks at them, and making them was ~3 ms of its ~35 (with their pages).
`MadeNotes` is that list: its length known at once, its notes made by `make()` the first time anything
else is asked of it (iteration, an index, a slice, a change), then held as a plain list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableSequence
from typing import Any, overload


class MadeNotes(MutableSequence[str]):
    """The `n` notes `make()` gives (a list of str), made once, when first needed; a list from then on.
    Equal to a list (or another MadeNotes) of the same notes; `+` with a list gives a list."""

    __slots__ = ("_items", "_make", "_n")

    def __init__(self, make: Callable[[], list[str]], n: int) -> None:
        self._make: Callable[[], list[str]] | None = make
        self._items: list[str] | None = None
        self._n = n

    @property
    def items(self) -> list[str]:
        """The notes as a list (made here the first time)."""
        if self._items is None:
            assert self._make is not None
            self._items, self._make = self._make(), None
        return self._items

    def made(self) -> bool:
        """Whether the notes were made already."""
        return self._items is not None

    def __len__(self) -> int:
        return self._n if self._items is None else len(self._items)

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        return self.items[k]

    def __setitem__(self, k: Any, v: Any) -> None:
        self.items[k] = v

    def __delitem__(self, k: int | slice) -> None:
        del self.items[k]

    def insert(self, k: int, v: str) -> None:
        self.items.insert(k, v)

    def extend(self, values: Iterable[str]) -> None:
        self.items.extend(values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MadeNotes):
            return self.items == other.items
        return self.items == other

    __hash__ = None  # type: ignore[assignment]  # (mutable, as a list)

    def __add__(self, other: Iterable[str]) -> list[str]:
        return self.items + list(other)

    def __radd__(self, other: Iterable[str]) -> list[str]:
        return list(other) + self.items

    def __repr__(self) -> str:
        return repr(self.items)
