"""Read what a report is made from: run and bench records (typed, profconv.records) and profiler logs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from profconv.errors import InputError
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.records import BenchRecord, RunRecord
from profconv.records import load as load_record


@dataclass
class RunInput:
    path: Path
    record: RunRecord


@dataclass
class BenchInput:
    path: Path
    record: BenchRecord


@dataclass
class LogInput:
    path: Path
    profiles: ProfileSet


Input = RunInput | BenchInput | LogInput


def read_record(path: Path) -> RunRecord:
    """A run record, checked (one line naming the JSON path on a bad one)."""
    rec = load_record(path)
    if not isinstance(rec, RunRecord):
        raise InputError(f"{path}: a bench record, not a run record")
    return rec


def _json_input(path: Path) -> RunInput | BenchInput:
    rec = load_record(path)
    return BenchInput(path, rec) if isinstance(rec, BenchRecord) else RunInput(path, rec)


def _check_special(path: Path, p: str) -> None:
    """A pipe (`report <(nvprof ...)`) is read as a log, saying so when nothing comes for 2 s (a FIFO
    nobody writes to waits, but not in silence); a record that is no regular file, a device or a
    socket is refused in one line (reading them could wait forever or never end)."""
    import stat

    from profconv.io import wait_for_fifo

    if stat.S_ISFIFO(path.stat().st_mode) and path.suffix != ".json":
        from profconv.ui import error_console

        wait_for_fifo(path, say=lambda m: error_console().print(f"[yellow]note:[/yellow] {m}", markup=True))
        return
    raise InputError(f"{p}: not a regular file (a FIFO, device or socket): give a run directory, a record "
                     "or a log file ('-' reads standard input)")


def load(paths: list[str]) -> list[Input]:
    """Each path: a run or bench directory, a run.json or bench.json, or a profiler log ('-' for stdin)."""
    out: list[Input] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.exists() and not (path.is_dir() or path.is_file()):
            _check_special(path, p)
        if p != "-" and path.is_dir():
            found = [path / name for name in ("run.json", "bench.json") if (path / name).is_file()]
            if not found:
                raise InputError(f"{p}: a directory without run.json or bench.json: not a profconv run directory")
            out.append(_json_input(found[0]))
        elif path.suffix == ".json" and path.exists():
            out.append(_json_input(path))
        else:
            out.append(LogInput(path, parse(p)))
    return out
