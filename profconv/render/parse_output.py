"""`profconv parse` output sinks (profconv.parse.emit.Sink): the parse record as JSON, the rows as
CSV, the ranked tables on a console.

The JSON and CSV sinks hold the inputs read whole until they are closed and write them in one
go; once a long log comes part by part, every input is spooled to a temporary file instead (rows
a slice at a time, each input's profiles as JSON of their own), so memory does not grow with the
number of profiles, and the file is copied out when the sink is closed (os.sendfile where the
output is a descriptor). Either way the bytes are those of `write_json` / `write_csv` of the
whole ProfileSets. The table sink prints each input (or part) as it comes."""

from __future__ import annotations

import io
import math
import os
import sys
from array import array
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from profconv.parse.core import ProfileSet


def rows_with_source(sets: list[ProfileSet]) -> pd.DataFrame:
    import pandas as pd

    frames = [ps.frame.assign(source=ps.source) for ps in sets]
    df = pd.concat(frames, ignore_index=True)
    return df[["source", *[c for c in df.columns if c != "source"]]]


def _plain(v):
    """JSON-safe Python value: NaN, inf and pandas' NA become null (JSON has no NaN/Infinity)."""
    t = type(v)
    if t is str or t is int or t is bool:  # most values: nothing to check
        return v
    if v is None or t.__name__ == "NAType":  # pandas' NA, without importing pandas
        return None
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def write_json(sets: list[ProfileSet], out) -> None:
    """The parse output record (profconv.records.ParseOutput, schemas/parse.schema.json): the
    header through the record type, each input's profiles converted together (_profiles_json: one
    conversion for thousands of profiles, not one each), the rows a slice at a time from the plain
    columns (null for NaN)."""
    from profconv.render.rows import write_json_rows

    head, cut, pieces = _json_head([(ps.source, [n for n, _ in ps.unplaced]) for ps in sets])
    out.write(pieces[0])
    for ps, after in zip(sets, pieces[1:]):
        out.write('"profiles": [\n' + _profiles_json(ps.profiles) + "\n   ]" if ps.profiles else '"profiles": []')
        _write_after(out, after, ps.notes)
    out.write('"rows": [')
    write_json_rows([(ps.source, ps.rows) for ps in sets], out)
    out.write("\n ]" + head[cut + len('"rows": []') :] + "\n")


def _json_head(inputs: list[tuple[str, list[int]]]) -> tuple[str, int, list[str]]:
    """The record's text with no profile, no warning and no row (each input's source and unplaced
    lines), where its rows begin, and its text up to there cut at each input's empty profiles list
    (one piece more than inputs: each after the first holds its input's empty warnings list,
    _write_after's)."""
    from profconv.records import ParsedInput, ParseOutput

    head = ParseOutput(inputs=[ParsedInput(source=src, profiles=[], unplaced_lines=u, warnings=[])
                               for src, u in inputs], rows=[]).to_json()
    cut = head.rindex('"rows": []')
    pieces = head[:cut].split('"profiles": []')
    assert len(pieces) == len(inputs) + 1
    return head, cut, pieces


WARNINGS_BATCH = 4096  # warnings formatted at a time (_write_after): a sweep's may be hundreds of thousands


def _write_after(out: Any, after: str, warnings: Any) -> None:
    """A piece of _json_head's text that follows an input's profiles, its empty warnings list written
    as the record type writes `warnings` (indented as it is there), a batch at a time: the text of
    every warning is never held at once (a 1 GB sweep of nsys's default reports gives ~60 MB of them)."""
    import msgspec

    before, empty, rest = after.partition('"warnings": []')
    assert empty and '"warnings": []' not in rest
    if not len(warnings):
        out.write(after)
        return
    out.write(before + '"warnings": [\n')
    batches = warnings.batches() if hasattr(warnings, "batches") else (  # (a NoteList: from its file)
        warnings[at : at + WARNINGS_BATCH] for at in range(0, len(warnings), WARNINGS_BATCH))
    for k, batch in enumerate(batches):
        text = msgspec.json.format(msgspec.json.encode(batch), indent=1).decode()
        out.write((",\n" if k else "") + "   " + text[2:-2].replace("\n ", "\n    "))
    out.write("\n   ]" + rest)


def _profiles_json(infos) -> str:
    """_profile_json of each profile joined by ',\n' (_profiles_utf8's text)."""
    return _profiles_utf8(infos).decode()


def _profiles_utf8(infos) -> bytes:
    """_profile_json of each profile joined by ',\n', as UTF-8: from their fields as columns where
    each is of its plain type, else from one conversion and one encoding of them all: the list's
    items are formatted one level deeper (a space more a line) than alone, and three more spaces
    make the four _profile_json gives. A profile the record type refuses (a bug) is left to
    _profile_json, which says which."""
    if not infos:
        return b""
    fast = _profiles_json_columns(infos)
    if fast is not None:
        return fast
    return _profiles_json_records(infos).encode()


def _profiles_json_records(infos) -> str:
    """_profiles_utf8's text through the record type (ParsedProfile)."""
    import msgspec

    from profconv.records import ParsedProfile

    # read from the profiles' attributes: what _plain makes null (NaN, infinities) msgspec writes as
    # null too, except in an Op Time list, where _plain's null is refused: such a list, or anything
    # else the record type refuses, goes the way of _profile_json
    ops = [x for info in infos for x in info.op_times_s]
    try:
        structs = msgspec.convert(list(infos), list[ParsedProfile], strict=False, from_attributes=True)
        finite = all(map(math.isfinite, ops))
    except (msgspec.ValidationError, TypeError):
        finite = False
    if not finite:
        return ",\n".join(map(_profile_json, infos))
    text = msgspec.json.format(msgspec.json.encode(structs), indent=1).decode()
    return "   " + text[2:-2].replace("\n", "\n   ")


# _profiles_json's text of a profile with no Op Time: these pieces, each field's JSON after its own
_PIECES = [b",\n    {\n" + b'     "profile": ', *(f',\n     "{name}": '.encode() for name in (
    "tool", "line_start", "line_end", "pid", "command", "model", "correctness", "op_times_s", "device"))]
_END = b"\n    }"
_INTS = ("profile", "line_start", "line_end")
_TEXTS = ("tool", "pid", "command", "model", "device")  # (pid: an int or null, its JSON once per value as these)
_ORDER = ("profile", "tool", "line_start", "line_end", "pid", "command", "model", "correctness", "op_times_s", "device")


def _profiles_json_columns(infos) -> bytes | None:
    """_profiles_json's text (UTF-8) from the profiles' fields read as columns
    (profconv.parse.profile_infos: no object a profile): each value's JSON once per distinct value,
    the text joined from the pieces by profconv.render.rowjoin (one cell a field, no Python object
    a profile); None where a value is not of its field's plain type (int, str, None, a float for
    correctness), a line number is negative or a profile has Op Times (then the record type
    converts them as ever)."""
    from profconv.parse.profile_infos import columns_of
    from profconv.render import rowjoin

    got = columns_of(infos)
    cols: dict[str, Any] = {name: got.view(name) for name in (*_INTS, *_TEXTS, "correctness", "op_times_s")}
    if cols["op_times_s"] is not None and any(cols["op_times_s"]):
        return None
    ints = {f: _int_piece(cols[f]) for f in _INTS}
    if None in ints.values() or not (
            _typed(cols["pid"], rowjoin.INT, (int, type(None)))
            and _typed(cols["correctness"], rowjoin.FLOAT, (float, type(None)))
            and all(_typed(cols[f], rowjoin.STR, (str, type(None))) for f in ("tool", "command", "model", "device"))):
        return None
    from profconv.render.rows import json_encoder

    encode, n = json_encoder(), len(infos)
    texts: dict[str, Any] = {**ints, "op_times_s": b"[]"}
    for f in _TEXTS:
        col = cols[f]
        if col is None:
            texts[f] = b"null"
        else:
            col = col if type(col) is list else list(col)
            texts[f] = (rowjoin.KEYED, col, {v: encode(v) for v in set(col)})
    pct = cols["correctness"]  # (each float alone: -0.0 and 0.0 are one key of a dict)
    texts["correctness"] = b"null" if pct is None else (
        rowjoin.CELLS, [b"null" if v is None else encode(v) for v in pct])
    pieces = [x for piece, f in zip(_PIECES, _ORDER) for x in (piece, texts[f])]
    return rowjoin.join(n, [*pieces, _END], b"")[2:]


def _int_piece(col) -> Any:
    """A column of line numbers (ints >= 0) as a rowjoin piece of their text; None where it is
    anything else (the record type then says what)."""
    from profconv.render import rowjoin

    if col is None:
        return None
    col = col if type(col) is list else col.tolist() if isinstance(col, array) else list(col)
    if not _typed(col, rowjoin.INT, (int,)) or min(col, default=0) < 0:
        return None
    if rowjoin.scan(col, 0, len(col))[0] == rowjoin.INT:  # ints of 64 bits: written from the column
        return (rowjoin.INTS, col, 0)
    return (rowjoin.CELLS, [str(v).encode() for v in col])


def _typed(col, kind: int, types: tuple[type, ...]) -> bool:
    """_all_of(col, types), told at C speed where rowjoin.scan finds every value of its `kind`
    (FLOAT: floats, INT: ints of 64 bits, STR: str or None -- each exactly that type)."""
    from profconv.render import rowjoin

    if type(col) is list and rowjoin.accelerated() and rowjoin.scan(col, 0, len(col))[0] == kind:
        return True
    return _all_of(col, types)


def _all_of(col, types: tuple[type, ...]) -> bool:
    """Every value's type is one of `types` (exactly: a bool is no int here); None (no column: every
    one the field's default, None): True."""
    return col is None or set(map(type, col)) <= set(types)


def _profile_json(info) -> str:
    """One profile of the record's inputs[].profiles as ParseOutput.to_json writes it there."""
    import msgspec

    from profconv.records import ParsedProfile, struct_from

    text = msgspec.json.format(msgspec.json.encode(struct_from(ParsedProfile, _plain(vars(info)))), indent=1).decode()
    return "    " + text.replace("\n", "\n    ")




class SpoolSink:
    """--json or --csv of every input (see the module docstring). A temporary file that cannot be
    written (a full disk) is one line, exit 5 (SystemRefused)."""

    rollback_ok = True

    def __init__(self, as_json: bool, out: Any = None, err: Any = None) -> None:
        self.as_json = as_json
        self.out = out
        self.held: list[ProfileSet] = []  # inputs read whole, before any spooling
        self.spool: Any = None
        self.writer: Any = None
        self.profiles: Any = None  # every spooled input's profiles as JSON, one after the other (--json)
        self.inputs: list[tuple[str, tuple[int, int], list[int], Any]] = []  # source, its profiles' bytes
        # in self.profiles (from, to), unplaced, warnings
        self.streaming = False  # parts of an input have been spooled (and may be taken back)
        self.current = 0  # where the streamed input's profiles began, their separator, where its rows began
        self.sep = b""
        self.mark: tuple[int, bytes] = (0, b"")
        self.err = err  # where --csv says what its rows leave out (sys.stderr when None)

    # an input read whole
    def whole(self, ps: ProfileSet) -> None:
        if self.spool is None:
            self.held.append(ps)
            return
        self._guarded(self._spool_whole, ps)

    def _spool_whole(self, ps: ProfileSet) -> None:
        self.writer.add(ps.source, ps.rows)
        self.writer.end()
        start = self._profiles_at()
        if self.profiles is not None and ps.profiles:
            self.profiles.write(_profiles_utf8(ps.profiles))
        self.inputs.append((ps.source, (start, self._profiles_at()), [n for n, _ in ps.unplaced], list(ps.notes)))

    # a long log, part by part
    def begin(self, path: str) -> None:
        from profconv.parse.core import source_label

        self.source = source_label(path)
        self.streaming = False

    def part(self, ps: ProfileSet) -> None:
        if self.spool is None:
            self._guarded(self._start)
        if not self.streaming:
            self.streaming = True
            self.current = self._profiles_at()
            self.sep = b""
            self.mark = (self.spool.tell(), self.writer.sep)
        self._guarded(self._spool_part, ps)

    def _spool_part(self, ps: ProfileSet) -> None:
        self.writer.add(ps.source, ps.rows)
        if self.profiles is not None and ps.profiles:
            self.profiles.write(self.sep + _profiles_utf8(ps.profiles))
            self.sep = b",\n"

    def end(self, unplaced: list[int], warnings: Any) -> None:
        if self.spool is None:  # no part came: cannot be (a stream hands one at least)
            self._guarded(self._start)
        if not self.streaming:
            self.current = self._profiles_at()
        self._guarded(self.writer.end)
        self.inputs.append((self.source, (self.current, self._profiles_at()), unplaced, warnings))
        self.streaming = False

    def rollback(self) -> None:
        if self.streaming:
            pos, sep = self.mark
            self.spool.seek(pos)
            self.spool.truncate()
            self.writer.sep, self.writer.parts, self.writer.n = sep, [], 0
            if self.profiles is not None:
                self._guarded(self._cut_profiles, self.current)
        self.streaming = False

    def close(self) -> None:
        if self.spool is None:
            out = self.out or sys.stdout
            (write_json if self.as_json else write_csv)(self.held, out)
            said = [(ps.source, [n for n, _ in ps.unplaced], ps.notes) for ps in self.held]
        else:
            self._guarded(self.spool.flush)
            _write_spooled(self.spool, self.profiles, self.inputs, self.as_json, self.out or sys.stdout)
            said = [(src, unplaced, notes) for src, _, unplaced, notes in self.inputs]
        if not self.as_json:  # (the JSON record holds both: ParsedInput.unplaced_lines and .warnings)
            say_held_back(said, self.err or sys.stderr)

    # spooling
    def _start(self) -> None:
        """From now on every input goes to the temporary file (those held first, in order)."""
        import tempfile

        from profconv.render.rows import SliceWriter

        self.spool = tempfile.TemporaryFile()
        self.profiles = tempfile.TemporaryFile() if self.as_json else None  # UTF-8 bytes
        self.writer = SliceWriter(self.spool.write, "json" if self.as_json else "csv")
        held, self.held = self.held, []
        for ps in held:
            self._spool_whole(ps)

    def _profiles_at(self) -> int:
        return self.profiles.tell() if self.profiles is not None else 0

    def _cut_profiles(self, at: int) -> None:
        self.profiles.seek(at)
        self.profiles.truncate()

    @staticmethod
    def _guarded(fn, *args) -> Any:
        import tempfile

        from profconv.errors import SystemRefused

        try:
            return fn(*args)
        except OSError as exc:
            raise SystemRefused(f"a temporary file for the output in {tempfile.gettempdir()}: "
                                f"{exc.strerror or type(exc).__name__} (TMPDIR names another directory)") from None


NOTES_SAID = 5  # warnings of an input --csv says on stderr (a sweep may hold thousands: --json has every one)
LINES_SAID = 20  # unplaced line numbers said, as the table's footer says them


def say_held_back(inputs: list[tuple[str, list[int], Any]], err: Any) -> None:
    """What --csv's rows leave out, on stderr: for each input, how many lines look like table data
    but could not be placed (their numbers, as the table's footer gives them) and its warnings (the
    first NOTES_SAID, then how many more). Nothing where nothing is left out. The rows hold neither,
    and a row left out must never go unsaid (the JSON record and the tables list both)."""
    for source, unplaced, notes in inputs:
        lines = []
        if unplaced:
            nums = ", ".join(map(str, unplaced[:LINES_SAID]))
            more = f" (+{len(unplaced) - LINES_SAID} more)" if len(unplaced) > LINES_SAID else ""
            which = "line" if len(unplaced) == 1 else "lines"
            lines.append(f"{len(unplaced)} line(s) look like table data but could not be placed: {which} {nums}{more}")
        n = len(notes)
        if n:
            from itertools import islice

            lines.extend(islice(notes, NOTES_SAID))
            if n > NOTES_SAID:
                lines.append(f"+{n - NOTES_SAID} more warning(s): --json or the table lists every one")
        try:
            err.write("".join(f"warning: {source}: {line}\n" for line in lines))
        except (OSError, ValueError):  # stderr full or closed (2>/dev/full): the rows were written
            return
    try:
        err.flush()
    except (OSError, ValueError):
        pass


class TableSink:
    """The ranked tables of each input on a console, as it comes (a long log a part at a time)."""

    rollback_ok = False

    def __init__(self, console: Any, opts: Any) -> None:
        self.console = console
        self.opts = opts
        self.make: tuple[Any, Any] | None = None
        self.path = ""
        self.unplaced: list[int] = []  # a long log's first unplaced lines (the footer names 20)
        self.unplaced_count = 0
        self.notes: Any = None  # the parts' notes of no one table (a NoteList: in a file past a batch)

    @classmethod
    def later(cls, console: Any, opts: Any) -> TableSink:
        """A sink whose console and table options are made (by these callables) when it is first
        given something to print: rich and the table code are not loaded while the inputs are
        read, under the parse's peak memory."""
        sink = cls(None, None)
        sink.make = (console, opts)
        return sink

    def _ready(self) -> None:
        if self.make is not None:
            self.console, self.opts = self.make[0](), self.make[1]()
            self.make = None

    def whole(self, ps: ProfileSet) -> None:
        from profconv.render.profile_tables import render

        self._ready()
        render(ps, self.console, self.opts)

    def begin(self, path: str) -> None:
        from profconv.parse.note_list import NoteList

        self.path = path
        self.unplaced, self.unplaced_count = [], 0
        if self.notes is not None:
            self.notes.close()
        self.notes = NoteList()

    def part(self, ps: ProfileSet) -> None:
        from profconv.render.profile_tables import UNPLACED_SHOWN, render_profiles

        self._ready()
        render_profiles(ps, self.console, self.opts)
        self.unplaced.extend(n for n, _ in ps.unplaced[: UNPLACED_SHOWN - len(self.unplaced)])
        self.unplaced_count += len(ps.unplaced)
        self.notes.extend(ps.general_notes())  # (the others were shown with their tables: not held)

    def end(self, unplaced: list[int], warnings: Any) -> None:
        from profconv.render.profile_tables import render_notes, render_unplaced

        self._ready()
        render_unplaced(self.unplaced, self.unplaced_count, self.console)
        render_notes(self.notes, self.console)
        self.notes.close()
        self.notes = None

    def rollback(self) -> None:
        raise AssertionError("a console cannot take back what it printed")

    def close(self) -> None:
        pass


def _write_spooled(spool: Any, profiles: Any, inputs: list[tuple[str, tuple[int, int], list[int], Any]], as_json: bool,
                   out: Any) -> None:
    from profconv.render.rows import HEADER, byte_writer

    if not as_json:
        write = byte_writer(out)
        write((",".join(HEADER) + "\n").encode())
        _copy(spool, write)
        return
    head, cut, pieces = _json_head([(src, u) for src, _, u, _ in inputs])
    out.write(pieces[0])
    if profiles is not None:
        profiles.flush()
    for (_, (start, stop), _, warnings), after in zip(inputs, pieces[1:]):
        if stop > start:
            out.write('"profiles": [\n')
            _copy(profiles, byte_writer(out), start, stop)
            out.write("\n   ]")
        else:
            out.write('"profiles": []')
        _write_after(out, after, warnings)
    out.write('"rows": [')
    _copy(spool, byte_writer(out))
    out.write("\n ]" + head[cut + len('"rows": []') :] + "\n")


def _copy(spool, write, start: int = 0, stop: int | None = None) -> None:
    """A spooled output (its bytes from `start` to `stop`, the end where None) to `write`, a
    megabyte at a time, each piece ending at a line end (where `write` decodes, no character is
    cut). Where `write` is stdout's binary buffer over a file descriptor, the kernel copies the
    bytes (os.sendfile): no pass through this process."""
    if stop is None:
        stop = spool.seek(0, os.SEEK_END)
    at = start
    raw = getattr(write, "__self__", None)
    if raw is not None and raw is getattr(sys.stdout, "buffer", None):
        at = _sendfile(spool, raw, start, stop)
    spool.seek(at)
    rest = b""
    while at < stop and (chunk := spool.read(min(1 << 20, stop - at))):
        at += len(chunk)
        chunk = rest + chunk
        cut = chunk.rfind(b"\n") + 1
        if cut:
            write(chunk[:cut])
            rest = chunk[cut:]
        else:
            rest = chunk
    if rest:
        write(rest)


def _sendfile(spool, raw, start: int, stop: int) -> int:
    """As much of `spool`'s bytes from `start` to `stop` as os.sendfile copies to `raw`'s
    descriptor (all of them on Linux); the offset where it stopped (`start`: not at all), from
    which the caller copies the rest itself. A write error (a full disk, a closed pipe) is raised
    as a write's would be."""
    import errno

    if not hasattr(os, "sendfile"):
        return start
    try:
        out_fd = raw.fileno()
        in_fd = spool.fileno()
    except (OSError, ValueError):  # no descriptor (a test's buffer)
        return start
    raw.flush()
    spool.flush()
    offset = start
    while offset < stop:
        try:
            sent = os.sendfile(out_fd, in_fd, offset, stop - offset)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EAGAIN):
                return offset  # this descriptor takes no sendfile (or not now): copied by hand
            raise
        if sent == 0:
            break
        offset += sent
    return offset


def to_json(sets: list[ProfileSet]) -> str:
    buf = io.StringIO()
    write_json(sets, buf)
    return buf.getvalue()


def write_csv(sets: list[ProfileSet], out) -> None:
    from profconv.render import rows

    rows.write_csv([(ps.source, ps.rows) for ps in sets], out)
