"""`profconv parse FILE…`: any profiler's text output as ranked tables, JSON or CSV."""

from __future__ import annotations

import contextlib
import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from profconv.errors import InputError
from profconv.parse.dialect import dialect_list
from profconv.parse.dialect import names as dialect_names
from profconv.ui import console, error_console

if TYPE_CHECKING:
    import typer

    from profconv.commands._options import FullNames, Threshold, Width


# the --format choices: the registered dialects (profconv.parse.dialect)
Format = Enum("Format", {name: name for name in dialect_names()}, type=str)  # type: ignore[misc]


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
    from profconv.nogc import paused

    # malloc's thresholds are left as glibc sets them: a fixed 8 MiB mmap threshold (once set here to
    # keep a freed 20 MB input off the heap) made every big block a fresh mapping faulted in page by
    # page (+0.025 s of a 20 MB trace in a warm process), and glibc's own sliding threshold now peaks
    # as low (docs/performance.md, session 9)
    with paused():  # millions of row objects, no cycles among them: see profconv/nogc.py
        _parse_and_write(files, format, profile, threshold, as_json, as_csv, strict, all_rows, full_names)


parse_files.__doc__ = f"Read {dialect_list('product')} logs and rank what takes the time."


def _parse_and_write(files: list[str], format: Format | None, profile: int | None, threshold: float, as_json: bool,
                     as_csv: bool, strict: bool, all_rows: bool, full_names: bool) -> None:
    """The inputs read (profconv.parse.emit) into the sink the options ask for."""
    from profconv.parse.emit import emit
    from profconv.render.parse_output import SpoolSink, TableSink

    fmt = format.value if format else None
    if as_json or as_csv:
        with _progress(files) as advance:  # a bar on stderr while a long input is read (a terminal)
            emit(files, SpoolSink(as_json), format=fmt, profile=profile, threshold=threshold, strict=strict,
                 advance=advance)
        return

    def opts() -> Any:
        from profconv.render.profile_tables import TableOptions

        return TableOptions(threshold=threshold, max_rows=None if all_rows else 25, full_names=full_names)

    # no bar: tables of a long log are printed while it is read; the console and the table code
    # (rich: ~3 MiB) are made once there is something to print, not under the parse's peak
    emit(files, TableSink.later(console, opts), format=fmt, profile=profile, threshold=threshold, strict=strict)
