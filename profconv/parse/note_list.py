"""A long log's warnings as its parts give them, held in a temporary file past a batch.

A sweep of `nsys stats`'s default reports gives a note a run (its kernels and memory operations
merged into one table): ~300,000 of them, ~60 MB of text, in a 1 GB log. The CLI writes them in the
JSON record's header, so they wait for the log's end; `NoteList` keeps BATCH of them in memory and
the rest in a temporary file, a JSON line a batch (the CLI's memory flat in the log's size), and
gives them back in order, a batch at a time (`batches`) or one by one.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

BATCH = 4096  # notes held in memory before they go to the file


class NoteList:
    """Notes in order: `first` (a few, given last: the stream's whole-file note), then those extended."""

    def __init__(self) -> None:
        self.first: list[str] = []
        self.held: list[str] = []
        self.file: Any = None
        self.spilled = 0  # notes in the file

    def extend(self, notes: Iterable[str]) -> None:
        self.held.extend(notes)
        if len(self.held) >= BATCH:
            import msgspec

            if self.file is None:
                self.file = tempfile.TemporaryFile()
            self.file.write(msgspec.json.encode(self.held) + b"\n")
            self.spilled += len(self.held)
            self.held = []

    def after(self, first: list[str]) -> NoteList:
        """These notes with `first` before them (what profconv.parse.stream.Stream.warnings adds)."""
        self.first = list(first)
        return self

    def __len__(self) -> int:
        return len(self.first) + self.spilled + len(self.held)

    def batches(self) -> Iterator[list[str]]:
        """The notes in order, a list at a time (none empty)."""
        import msgspec

        if self.first:
            yield self.first
        if self.file is not None:
            self.file.seek(0)
            for line in self.file:
                yield msgspec.json.decode(line)
        if self.held:
            yield self.held

    def __iter__(self) -> Iterator[str]:
        for batch in self.batches():
            yield from batch

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
