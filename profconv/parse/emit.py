"""Inputs read and handed to an output sink as they are read: the CLI's `parse` in library form.

`emit(files, sink, …)` reads each input and gives it to `sink` (profconv.render.parse_output has
the JSON, CSV and table sinks): an input read whole as one ProfileSet (`sink.whole`); a long log
that may be read part by part (profconv.parse.stream) as its parts (`sink.begin`, `sink.part`
each, `sink.end` with the whole input's warnings: a NoteList, in a file past a batch), so that
neither its text nor all of its rows are held at once. What the sink gets is what reading each input whole gives, byte for byte
once written.

A sink that can take back what it was given of an input (`rollback_ok`: it spools) gets a long
log's parts as they come; where the log turns out to need the whole-file reader midway, it is
told to `rollback` and gets the whole ProfileSet instead. A sink that cannot (a terminal) only
gets parts of a log checked first to be readable part by part; its other inputs are all read
before anything is handed to it, so that an input's error comes before any output.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from typing import Protocol

from profconv.errors import InputError
from profconv.parse.core import ProfileSet, noted, parse, parse_whole, source_label
from profconv.parse.note_list import NoteList, SpillFile

DEFAULT_THRESHOLD = 0.90


class Sink(Protocol):
    rollback_ok: bool

    def whole(self, ps: ProfileSet) -> None: ...

    def begin(self, source: str) -> None: ...

    def part(self, ps: ProfileSet) -> None: ...

    def end(self, unplaced: list[int], warnings: NoteList) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...


def read_whole(path: str, format: str | None = None, profile: int | None = None,
               threshold: float = DEFAULT_THRESHOLD, strict: bool = False) -> ProfileSet:
    """One input read whole (profile N only, shares re-marked at `threshold`); an OSError while
    reading is one line (InputError)."""
    try:
        # a long log that could be read part by part was tried that way already (or must not be)
        ps = parse_whole(path, format=format, strict=strict) if size(path) >= _stream_from() else \
            parse(path, format=format, strict=strict)
    except OSError as exc:  # reading: /proc/self/mem, a device, a file that vanished
        raise InputError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if profile is not None:
        ps = ps.profile(profile)
    if threshold != DEFAULT_THRESHOLD:  # the rows' in_top marks the 90% set; --threshold re-marks it
        ps.rethreshold(threshold)
    return ps


def _stream_from() -> int:
    from profconv.parse.stream import STREAM_FROM

    return STREAM_FROM


def size(path: str) -> int:
    """A regular file's size (0 for '-', a pipe, anything that cannot be looked at)."""
    try:
        return os.stat(path).st_size if path != "-" and os.path.isfile(path) else 0
    except OSError:
        return 0


def emit(files: list[str], sink: Sink, *, format: str | None = None, profile: int | None = None,
         threshold: float = DEFAULT_THRESHOLD, strict: bool = False,
         advance: Callable[[str], None] = lambda path: None) -> None:
    """Every input to `sink`, in order (see the module docstring); then `sink.close()`. A long log
    written on Windows or gzipped is read as its plain twin (profconv.parse.unix_twin)."""
    from profconv.parse.unix_twin import unix_twin

    with contextlib.ExitStack() as twins:
        plain = [twins.enter_context(unix_twin(f)) for f in files]
        given = dict(zip(plain, files))
        _emit(plain, sink, format=format, profile=profile, threshold=threshold, strict=strict,
              advance=lambda path: advance(given[path]))


def _emit(files: list[str], sink: Sink, *, format: str | None, profile: int | None, threshold: float,
          strict: bool, advance: Callable[[str], None]) -> None:
    from profconv.parse.stream import STREAM_FROM, starts_twice

    long = set()
    if profile is None and not strict:
        # a file whose first STREAM_FROM bytes hold fewer than two profile starts (one long trace,
        # another dialect's log) is read whole at once: the stream would read and decode that much
        # before giving up, and what it held stays on the heap under the whole read's peak
        long = {f for f in files if size(f) >= STREAM_FROM and starts_twice(f, format)}

    def whole(path: str) -> ProfileSet:
        return noted(read_whole(path, format, profile, threshold, strict), path)

    spill = SpillFile()  # every streamed input's notes past a batch: one file, however many inputs
    try:
        if sink.rollback_ok:
            for path in files:
                if not (path in long and _stream_or_rollback(path, format, threshold, sink, spill)):
                    sink.whole(whole(path))
                advance(path)
        else:
            from profconv.parse.stream import _streamable_file

            long = {f for f in long if _streamable_file(f, format)}  # checked: its parts never need taking back
            read = {f: whole(f) for f in files if f not in long}  # every error before any output
            for path in files:
                if path in long:
                    _stream_checked(path, format, threshold, sink, spill)
                else:
                    sink.whole(read.pop(path))
                advance(path)
        sink.close()
    finally:
        spill.close()


def _stream_or_rollback(path: str, format: str | None, threshold: float, sink: Sink, spill: SpillFile) -> bool:
    """A long log's parts to the sink as they come; False (what was given taken back) where it
    turns out to need the whole-file reader."""
    from profconv.parse.stream import SPOOL_PART, NotStreamable, Stream

    stream = Stream(path, format, sweep_part=SPOOL_PART)
    unplaced: list[int] = []
    notes = NoteList(spill)  # (a sweep may give hundreds of thousands: in a file past a batch)
    leads = NoteList(spill)  # the parts' lead notes: before all others (profconv.parse.stream.whole_notes)
    sink.begin(source_label(path))
    handed = False
    try:
        for part in stream:
            if not handed:  # (a .gz cut short: said first, as the whole read says it)
                noted(part, path)
            handed = True
            if threshold != DEFAULT_THRESHOLD:
                part.rethreshold(threshold)
            unplaced.extend(n for n, _ in part.unplaced)
            leads.extend(part.notes[: part.lead])
            notes.extend(part.notes[part.lead :])
            sink.part(part)
            del part
    except NotStreamable:  # read it whole: that says what is wrong, if anything
        sink.rollback()
        if not handed:
            from profconv.nogc import give_back

            give_back()  # what the stream's look at the head held (a few MiB) would stay resident
        return False
    sink.end(unplaced, notes.after(stream.warnings([]), leads))
    return True


def _stream_checked(path: str, format: str | None, threshold: float, sink: Sink, spill: SpillFile) -> None:
    """A long log checked to be readable part by part: its parts to the sink (its whole-file
    warnings with the last part, as profconv.parse.stream.parts gives them; where the whole-file
    reader turns out to be needed midway, the rest of its parse is that last part)."""
    from profconv.parse.stream import parts

    sink.begin(source_label(path))
    unplaced: list[int] = []
    notes, leads = NoteList(spill), NoteList(spill)  # (the parts' lead notes before all: stream.whole_notes)
    it: Iterable[ProfileSet] = parts(path, format, checked=True)
    for k, part in enumerate(_reading(path, it)):
        if k == 0:  # (a .gz cut short: said first, as the whole read says it)
            noted(part, path)
        if threshold != DEFAULT_THRESHOLD:
            part.rethreshold(threshold)
        unplaced.extend(n for n, _ in part.unplaced)
        leads.extend(part.notes[: part.lead])
        notes.extend(part.notes[part.lead :])
        sink.part(part)
    sink.end(unplaced, notes.after([], leads))


def _reading(path: str, it: Iterable[ProfileSet]) -> Iterable[ProfileSet]:
    """The parts of `it`; an OSError while reading them is one line (writing them is the caller's)."""
    got = iter(it)
    while True:
        try:
            part = next(got, None)
        except OSError as exc:  # reading (writing, a closed pipe, is the CLI's to say)
            raise InputError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
        if part is None:
            return
        yield part
