"""The table notes of a sweep's merged groups, by key, read from their notes: no dict of them a parse.

A sweep of `nsys stats`'s default reports merges each run's kernel and memory-operation tables into
one table, and says so in a note a run (core.table_note: "profile P, SECTION table, " + the text):
6,000 in 20 MB. The ProfileSet holds those notes in order (`notes`) and each text by its table
(`table_notes`: {(P, SECTION): [text]}). Made as a dict, that is a tuple, an int, a list and a second
str a group (~4 ms of a 20 MB parse's ~45, with their pages); `GroupNotes` is that mapping over the notes
themselves, each text cut from its note where it is asked for (the terminal table asks one profile at
a time; a library call that only ranks asks none).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, Sequence
from typing import Any

_SEP = " table, "  # core.table_note's: what ends a note's "profile P, SECTION" (a section's name holds none)


class GroupNotes(Mapping[tuple[int, str], list[str]]):
    """{(profiles[g], names[sections[g]]): [the text of notes[g]]} for each group g, in order; a new
    list each time a key is looked up. `profiles` and `sections` int64 NumPy arrays, every key once."""

    __slots__ = ("index", "names", "notes", "profiles", "sections")

    def __init__(self, notes: Sequence[str], profiles: Any, sections: Any, names: Sequence[str]) -> None:
        self.notes, self.profiles, self.sections, self.names = notes, profiles, sections, tuple(names)
        self.index: dict[tuple[int, str], int] | None = None

    def __len__(self) -> int:
        return len(self.notes)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        names = self.names
        return zip(self.profiles.tolist(), [names[s] for s in self.sections.tolist()])

    def __getitem__(self, key: tuple[int, str]) -> list[str]:
        return [_text(self.notes[self._index()[key]])]

    def get(self, key: tuple[int, str], default: Any = None) -> Any:  # (no KeyError raised a miss)
        g = (self.index if self.index is not None else self._index()).get(key)  # (the terminal table: a look a table)
        return default if g is None else [_text(self.notes[g])]

    def __contains__(self, key: object) -> bool:
        return key in self._index()

    def _index(self) -> dict[tuple[int, str], int]:
        if self.index is None:  # (made once: a look per profile, the terminal table's, is not a pass each)
            self.index = {k: g for g, k in enumerate(self)}
        return self.index

    def items(self) -> ItemsView[tuple[int, str], list[str]]:
        return _Items(self)

    def __repr__(self) -> str:
        return f"GroupNotes({dict(self.items())!r})"


class _Items(ItemsView[tuple[int, str], list[str]]):
    """The items in order, each text cut from its note with no look-up by key."""

    _mapping: GroupNotes

    def __iter__(self) -> Iterator[tuple[tuple[int, str], list[str]]]:
        got = self._mapping
        return ((key, [_text(note)]) for key, note in zip(got, got.notes))


def _text(note: str) -> str:
    return note[note.index(_SEP) + len(_SEP) :]
