"""A long log's warnings as its parts give them, held in a temporary file past a batch.

A sweep of `nsys stats`'s default reports gives a note a run (its kernels and memory operations
merged into one table): ~300,000 of them, ~60 MB of text, in a 1 GB log. The CLI writes them in the
JSON record's header, so they wait for the log's end; `NoteList` keeps BATCH of them in memory and
the rest in a temporary file, a JSON line a batch (the CLI's memory flat in the log's size), and
gives them back in order, a batch at a time (`batches`) or one by one. The lists of one call share one
`SpillFile` (one descriptor however many inputs spill: a call over thousands of files stays far under
the common limit of 1,024 open files).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

BATCH = 4096  # notes held in memory before they go to the file


class SpillFile:
    """One temporary file (made when first written) that lists keep byte strings in: `put` appends
    one and says where it is, `get` reads it back."""

    def __init__(self) -> None:
        self.file: Any = None
        self.size = 0

    def put(self, data: bytes) -> tuple[int, int]:
        if self.file is None:
            self.file = tempfile.TemporaryFile()
        self.file.seek(self.size)
        self.file.write(data)
        at, self.size = self.size, self.size + len(data)
        return at, len(data)

    def get(self, at: int, n: int) -> bytes:
        self.file.flush()
        self.file.seek(at)
        return self.file.read(n)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class NoteList:
    """Notes in order: those of `lead` (another NoteList, given last: a long log's parts' lead notes,
    ProfileSet.lead), `first` (a few, given last: the stream's whole-file note), then those extended;
    the batches past the first in `spill` (a SpillFile of their own unless one is given)."""

    def __init__(self, spill: SpillFile | None = None) -> None:
        self.lead: NoteList | None = None
        self.first: list[str] = []
        self.held: list[str] = []
        self.spill = spill if spill is not None else SpillFile()
        self.where: list[tuple[int, int]] = []  # the spilled batches' places in `spill`
        self.spilled = 0  # notes in the file

    def extend(self, notes: Iterable[str]) -> None:
        self.held.extend(notes)
        if len(self.held) >= BATCH:
            import msgspec

            self.where.append(self.spill.put(msgspec.json.encode(self.held)))
            self.spilled += len(self.held)
            self.held = []

    def after(self, first: list[str], lead: NoteList | None = None) -> NoteList:
        """These notes with `first` before them (what profconv.parse.stream.Stream.warnings adds), and
        `lead`'s before those (profconv.parse.stream.whole_notes)."""
        self.first = list(first)
        self.lead = lead
        return self

    def __len__(self) -> int:
        return (len(self.lead) if self.lead is not None else 0) + len(self.first) + self.spilled + len(self.held)

    def batches(self) -> Iterator[list[str]]:
        """The notes in order, a list at a time (none empty). (msgspec is loaded only where a batch went
        to the file: 1.5 MiB more at the end of a long log's table, its peak.)"""
        if self.lead is not None:
            yield from self.lead.batches()
        if self.first:
            yield self.first
        for at, n in self.where:
            import msgspec

            yield msgspec.json.decode(self.spill.get(at, n))
        if self.held:
            yield self.held

    def __iter__(self) -> Iterator[str]:
        for batch in self.batches():
            yield from batch

    def close(self) -> None:
        """Closes the spill file (shared: its other lists' batches too)."""
        self.spill.close()
