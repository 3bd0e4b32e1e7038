"""`profconv parse FILE…`: any profiler's text output as ranked tables, JSON or CSV."""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from profconv.errors import InputError
from profconv.parse import parse
from profconv.parse.core import ProfileSet, source_label
from profconv.parse.dialect import dialect_list
from profconv.parse.dialect import names as dialect_names
from profconv.ui import console, error_console

if TYPE_CHECKING:
    import pandas as pd
    import typer

    from profconv.commands._options import FullNames, Threshold, Width


# the --format choices: the registered dialects (profconv.parse.dialect)
Format = Enum("Format", {name: name for name in dialect_names()}, type=str)  # type: ignore[misc]


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
    header through the record type, the rows a slice at a time from the plain columns (null for NaN)."""
    from profconv.records import ParsedInput, ParsedProfile, ParseOutput, struct_from
    from profconv.render.rows import write_json_rows

    head = ParseOutput(
        inputs=[ParsedInput(source=ps.source, profiles=[struct_from(ParsedProfile, _plain(vars(p))) for p in ps.profiles],
                            unplaced_lines=[n for n, _ in ps.unplaced], warnings=list(ps.notes)) for ps in sets],
        rows=[],
    ).to_json()
    cut = head.rindex('"rows": []')
    out.write(head[:cut] + '"rows": [')
    write_json_rows([(ps.source, ps.rows) for ps in sets], out)
    out.write("\n ]" + head[cut + len('"rows": []') :] + "\n")


def _profiles_json(infos) -> str:
    """_profile_json of each profile joined by ',\n', from one conversion and one encoding of them
    all: the list's items are formatted one level deeper (a space more a line) than alone, and
    three more spaces make the four _profile_json gives. A profile the record type refuses (a bug)
    is left to _profile_json, which says which."""
    if not infos:
        return ""
    import msgspec

    from profconv.records import ParsedProfile

    # read from the profiles' attributes: what _plain makes null (NaN, infinities) msgspec writes as
    # null too, except in an Op Time list, where _plain's null is refused: such a list, or anything
    # else the record type refuses, goes the way of _profile_json
    ops = [x for info in infos for x in info.op_times_s]
    try:
        structs = msgspec.convert(infos, list[ParsedProfile], strict=False, from_attributes=True)
        finite = all(map(math.isfinite, ops))
    except (msgspec.ValidationError, TypeError):
        finite = False
    if not finite:
        return ",\n".join(map(_profile_json, infos))
    text = msgspec.json.format(msgspec.json.encode(structs), indent=1).decode()
    return "   " + text[2:-2].replace("\n", "\n   ")


def _profile_json(info) -> str:
    """One profile of the record's inputs[].profiles as ParseOutput.to_json writes it there."""
    import msgspec

    from profconv.records import ParsedProfile, struct_from

    text = msgspec.json.format(msgspec.json.encode(struct_from(ParsedProfile, _plain(vars(info)))), indent=1).decode()
    return "    " + text.replace("\n", "\n    ")


def _stream_big(files: list[str], format: str | None, threshold: float, as_json: bool, advance) -> bool:
    """--json / --csv of inputs among which some are long logs: those are read part by part
    (profconv.parse.stream), their rows written to a temporary file a slice at a time and each
    part let go, so memory does not grow with the number of profiles. The output is the same,
    byte for byte, as write_json / write_csv of the whole ProfileSets: rows go through the same
    slices, and an input found to need the whole-file reader midway is read again whole (what it
    had written is taken back). A temporary file that cannot be written (a full disk) is said in
    one line, exit 5. False: one input that is read whole, left to the caller (no temporary file)."""
    import tempfile

    from profconv.errors import SystemRefused

    try:
        spooled = _spool(files, format, threshold, as_json, advance)
    except OSError as exc:  # the input's own read errors are the whole-file reader's to report
        raise SystemRefused(f"a temporary file for the output in {tempfile.gettempdir()}: "
                            f"{exc.strerror or type(exc).__name__} (TMPDIR names another directory)") from None
    if spooled is None:
        return False
    _write_spooled(*spooled, as_json=as_json)
    return True


Spooled = tuple[Any, list[tuple[str, Any, list[int], list[str]]]]


def _spool(files: list[str], format: str | None, threshold: float, as_json: bool, advance) -> Spooled | None:
    """The rows of every input into a temporary file, each input's profiles (JSON) into one of its
    own; None where the one input is read whole (left to the caller)."""
    import tempfile

    from profconv.parse.stream import STREAM_FROM, NotStreamable, Stream
    from profconv.render.rows import SliceWriter

    spool: Any = tempfile.TemporaryFile()
    writer = SliceWriter(spool.write, "json" if as_json else "csv")
    inputs: list[tuple[str, Any, list[int], list[str]]] = []  # source, its profiles' JSON (a file), unplaced, warnings
    for path in files:
        profiles: Any = tempfile.TemporaryFile("w+", encoding="utf-8") if as_json else None
        unplaced: list[int] = []
        notes: list[str] = []
        sep = ""
        done = False
        if path != "-" and os.path.isfile(path) and os.path.getsize(path) >= STREAM_FROM:
            pos, before = spool.tell(), writer.sep
            stream = Stream(path, format)
            handed = whole = False
            try:
                for part in stream:
                    handed = True
                    if threshold != 0.90:
                        part.rethreshold(threshold)
                    writer.add(part.source, part.rows)
                    if profiles is not None and part.profiles:
                        profiles.write(sep + _profiles_json(part.profiles))
                        sep = ",\n"
                    unplaced.extend(n for n, _ in part.unplaced)
                    notes.extend(part.notes)
                    del part
                writer.end()
                notes = stream.warnings(notes)
                done = True
            except NotStreamable:  # read it whole: that says what is wrong, if anything
                whole = len(files) == 1 and not handed
                spool.seek(pos)
                spool.truncate()
                writer.sep, writer.parts, writer.n = before, [], 0
                if profiles is not None:
                    profiles.seek(0)
                    profiles.truncate()
                unplaced, notes, sep = [], [], ""
            if whole:  # one input read whole (a trace): written straight out, no temporary file
                from profconv.nogc import give_back

                give_back()  # what the stream's look at the head held (a few MiB) would stay resident
                return None
        if not done:
            ps = _parse_one(path, format, None, threshold, False)
            writer.add(ps.source, ps.rows)
            writer.end()
            if profiles is not None and ps.profiles:
                profiles.write(_profiles_json(ps.profiles))
            unplaced, notes = [n for n, _ in ps.unplaced], list(ps.notes)
            del ps
        inputs.append((source_label(path), profiles, unplaced, notes))
        advance(path)
    spool.flush()
    return spool, inputs


def _write_spooled(spool: Any, inputs: list[tuple[str, Any, list[int], list[str]]], as_json: bool) -> None:
    import shutil

    from profconv.records import ParsedInput, ParseOutput
    from profconv.render.rows import HEADER, byte_writer

    out = sys.stdout
    if not as_json:
        write = byte_writer(out)
        write((",".join(HEADER) + "\n").encode())
        _copy(spool, write)
        return
    head = ParseOutput(inputs=[ParsedInput(source=src, profiles=[], unplaced_lines=u, warnings=w)
                               for src, _, u, w in inputs], rows=[]).to_json()
    cut = head.rindex('"rows": []')
    pieces = head[:cut].split('"profiles": []')
    assert len(pieces) == len(inputs) + 1
    out.write(pieces[0])
    for (_, prof, _, _), after in zip(inputs, pieces[1:]):
        if prof.tell():
            out.write('"profiles": [\n')
            prof.seek(0)
            shutil.copyfileobj(prof, out, 1 << 20)
            out.write("\n   ]")
        else:
            out.write('"profiles": []')
        out.write(after)
    out.write('"rows": [')
    _copy(spool, byte_writer(out))
    out.write("\n ]" + head[cut + len('"rows": []') :] + "\n")


def _copy(spool, write) -> None:
    """A spooled output to `write`, a megabyte at a time, each piece ending at a line end (where
    `write` decodes, no character is cut). Where `write` is stdout's binary buffer over a file
    descriptor, the kernel copies the bytes (os.sendfile): no pass through this process."""
    spool.seek(0)
    raw = getattr(write, "__self__", None)
    if raw is not None and raw is getattr(sys.stdout, "buffer", None):
        spool.seek(_sendfile(spool, raw))
    rest = b""
    while chunk := spool.read(1 << 20):
        chunk = rest + chunk
        cut = chunk.rfind(b"\n") + 1
        if cut:
            write(chunk[:cut])
            rest = chunk[cut:]
        else:
            rest = chunk
    if rest:
        write(rest)


def _sendfile(spool, raw) -> int:
    """As much of `spool` as os.sendfile copies to `raw`'s descriptor (all of it on Linux); the
    offset where it stopped (0: not at all), from which the caller copies the rest itself. A
    write error (a full disk, a closed pipe) is raised as a write's would be."""
    import errno

    if not hasattr(os, "sendfile"):
        return 0
    try:
        out_fd = raw.fileno()
        in_fd = spool.fileno()
    except (OSError, ValueError):  # no descriptor (a test's buffer)
        return 0
    raw.flush()
    size = os.fstat(in_fd).st_size
    offset = 0
    while offset < size:
        try:
            sent = os.sendfile(out_fd, in_fd, offset, size - offset)
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


BIG_BLOCKS_FROM = 4 << 20  # bytes of input from which malloc keeps big blocks (profconv.nogc.big_blocks)


def _total_size(files: list[str]) -> int:
    total = 0
    for f in files:
        try:
            total += os.stat(f).st_size if f != "-" else 0
        except OSError:
            pass
    return total


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if os.path.isfile(path) else 0
    except OSError:
        return 0


BIG_INPUT = 20 << 20  # bytes: inputs this large get a progress bar on stderr (in a terminal)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed
        return False


@contextlib.contextmanager
def _progress(files: list[str]):
    """A bar over the input bytes (files done/total, ETA) on stderr when the inputs are big and stderr is a
    terminal; the parser reports no progress inside one file, so a single big file shows a spinner."""
    sizes = {}
    for f in files:
        try:
            sizes[f] = os.stat(f).st_size if f != "-" else 0
        except OSError:
            sizes[f] = 0
    total = sum(sizes[f] for f in files)
    # rich is imported only where a bar may show: a big input, and stderr a terminal or said to be
    # one (rich's TTY_COMPATIBLE, FORCE_COLOR) -- ~20 ms of every other parse
    env = os.environ
    if total < BIG_INPUT or not (_isatty(sys.stderr) or env.get("TTY_COMPATIBLE") == "1" or env.get("FORCE_COLOR")):
        yield lambda path: None
        return
    con = error_console()
    if not con.is_terminal:
        yield lambda path: None
        return
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(SpinnerColumn(), TextColumn("parsing {task.description}"), BarColumn(bar_width=20), DownloadColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(), console=con, transient=True) as prog:
        task = prog.add_task(escape(files[0]), total=total)

        def advance(path: str) -> None:
            prog.advance(task, sizes[path])
            rest = files[files.index(path) + 1:]
            if rest:
                prog.update(task, description=escape(rest[0]))

        yield advance


def __getattr__(name: str) -> Any:
    """`parse_command`, the command Typer builds from parse_files: its annotations name typer and
    the shared options, imported here on first use, so that `profconv parse FILE --json`, which
    calls parse_files without the app (profconv.cli), does not import typer (~40 ms a run)."""
    if name == "parse_command":
        import typer

        from profconv.commands import _options

        g = globals()
        g.update(typer=typer, FullNames=_options.FullNames, Threshold=_options.Threshold, Width=_options.Width)
        g["parse_command"] = parse_files
        return parse_files
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_files(
    files: Annotated[list[str], typer.Argument(help="Profiler logs ('-' for stdin, .gz accepted).")],
    format: Annotated[Format | None, typer.Option("--format", "-f", help="Force a dialect instead of detecting it.")] = None,
    profile: Annotated[int | None, typer.Option("--profile", "-p", min=1, metavar="N", help="Show only profile N (1-based) of each file.")] = None,
    threshold: Threshold = 0.90,
    as_json: Annotated[bool, typer.Option("--json", help="Write the canonical rows as JSON instead of tables.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Write the canonical rows as CSV instead of tables.")] = False,
    strict: Annotated[bool, typer.Option(help="Fail if any line looks like table data but could not be placed.")] = False,
    all_rows: Annotated[bool, typer.Option("--all", help="Show every row, not just the top ones.")] = False,
    full_names: FullNames = False,
    width: Width = None,
) -> None:
    if as_json and as_csv:
        raise InputError("choose one of --json and --csv")
    if "-" in files and sys.stdin is None:
        raise InputError("-: standard input is closed (pipe a log into profconv, or name a file)")
    from profconv.nogc import big_blocks, paused

    if _total_size(files) >= BIG_BLOCKS_FROM:
        big_blocks()
    with paused():  # millions of row objects, no cycles among them: see profconv/nogc.py
        _parse_and_write(files, format, profile, threshold, as_json, as_csv, strict, all_rows, full_names)


parse_files.__doc__ = f"Read {dialect_list('product')} logs and rank what takes the time."


def _parse_one(path: str, format: str | None, profile: int | None, threshold: float, strict: bool) -> ProfileSet:
    try:
        ps = parse(path, format=format, strict=strict)
    except OSError as exc:  # reading: /proc/self/mem, a device, a file that vanished
        raise InputError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if profile is not None:
        ps = ps.profile(profile)
    if threshold != 0.90:  # the rows' in_top marks the 90% set; --threshold re-marks it
        ps.rethreshold(threshold)
    return ps


def _parse_and_write(files: list[str], format: Format | None, profile: int | None, threshold: float, as_json: bool,
                     as_csv: bool, strict: bool, all_rows: bool, full_names: bool) -> None:
    from profconv.parse.stream import STREAM_FROM

    fmt = format.value if format else None
    from profconv.parse.stream import streamed as stream_dialect

    if ((as_json or as_csv) and profile is None and not strict and stream_dialect(fmt) is not None
            and any(f != "-" and _size(f) >= STREAM_FROM for f in files)):
        with _progress(files) as advance:
            if _stream_big(files, fmt, threshold, as_json, advance):
                return
    streamed: set[str] = set()
    if not as_json and not as_csv and profile is None and not strict and stream_dialect(fmt) is not None:
        from profconv.parse.stream import _streamable_file

        # tables of a long nvprof log are printed a part at a time as it is read (the whole file
        # checked first); the other inputs are parsed before anything is printed, as always
        streamed = {f for f in files if _size(f) >= STREAM_FROM and _streamable_file(f, fmt)}
    if streamed:
        from profconv.render.profile_tables import TableOptions, render

        opts = TableOptions(threshold=threshold, max_rows=None if all_rows else 25, full_names=full_names)
        whole = [None if f in streamed else _parse_one(f, fmt, profile, threshold, strict) for f in files]
        for path, ps in zip(files, whole):
            if ps is None:
                _tables_streamed(path, fmt, threshold, opts)
            else:
                render(ps, console(), opts)
        return
    sets = []
    with _progress(files) as advance:
        for path in files:
            sets.append(_parse_one(path, fmt, profile, threshold, strict))
            advance(path)
    if as_json:
        write_json(sets, sys.stdout)
        return
    if as_csv:
        write_csv(sets, sys.stdout)
        return
    from profconv.render.profile_tables import TableOptions, render

    opts = TableOptions(threshold=threshold, max_rows=None if all_rows else 25, full_names=full_names)
    for ps in sets:
        render(ps, console(), opts)


def _tables_streamed(path: str, format: str | None, threshold: float, opts) -> None:
    """The tables of a long nvprof log, a part at a time as it is read (profconv.parse.stream.parts:
    the whole file was checked first; what it prints is what the whole-file parse prints)."""
    from profconv.parse.stream import parts
    from profconv.parse.table import Rows
    from profconv.render.profile_tables import render_footer, render_profiles

    con = console()
    unplaced: list[tuple[int, str]] = []
    notes: list[str] = []
    table_notes: dict[tuple[int, str], list[str]] = {}
    it = parts(path, format, checked=True)
    while True:
        try:
            part = next(it, None)
        except OSError as exc:  # reading (writing, a closed pipe, is the CLI's to say)
            raise InputError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
        if part is None:
            break
        if threshold != 0.90:
            part.rethreshold(threshold)
        render_profiles(part, con, opts)
        unplaced.extend(part.unplaced)
        notes.extend(part.notes)
        table_notes.update(part.table_notes)
    render_footer(ProfileSet(None, [], path, unplaced, notes, table_notes, rows=Rows()), con)
