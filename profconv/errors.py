"""One exception hierarchy and exit codes, so the CLI turns every failure into one line.

Exit codes (also in `profconv --help` and the README):
  0   success
  1   the command ran but found a problem (a failed variant), or an internal error
  2   usage error or unusable input: bad option or value, missing/empty/binary/unrecognised file
  3   the command needs CUDA and CuPy and they are not here (e.g. `run --variant naive` on a CPU-only machine)
  4   the profiler asked for is missing or refuses this GPU
  5   the system refused a read or write (disk full, permission denied, read-only file system)
  6   `report --compare --fail-on-regression` found a significant regression
  130 interrupted (Ctrl-C, or SIGTERM: a run or bench keeps its partial record, marked interrupted)
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran but found a problem (a failed variant, a regression)
    BAD_INPUT = 2  # unusable input: missing, empty, binary or unrecognised file, bad option
    NO_GPU = 3  # the command needs CUDA and CuPy and they are not here
    NO_PROFILER = 4  # the profiler asked for is missing or refuses this GPU
    SYSTEM = 5  # the operating system refused a read or write (ENOSPC, EACCES, EROFS, ...)
    REGRESSION = 6  # report --compare --fail-on-regression found a significant regression
    INTERRUPTED = 130


EXIT_CODES_HELP = (
    "Exit codes: 0 ok · 1 a check failed · 2 usage or input error · 3 needs a CUDA GPU · "
    "4 profiler unavailable · 5 disk full or permission denied · 6 regression (report --compare) · 130 interrupted."
)


class ProfconvError(Exception):
    """An error the user can act on; its message is the one line they see."""

    exit_status = ExitStatus.FAILURE


class InputError(ProfconvError):
    exit_status = ExitStatus.BAD_INPUT


class NoProfileFound(InputError):
    pass


class StrictModeError(InputError):
    pass


class DataFileError(InputError):
    """A data or weights file is missing, truncated or not in the expected format."""


class InputChanged(InputError):
    """The input file was cut short while it was read (another program truncated or rewrote it): the
    rows read would be of no one version of it."""


class GpuUnavailable(ProfconvError):
    exit_status = ExitStatus.NO_GPU


class ProfilerUnavailable(ProfconvError):
    exit_status = ExitStatus.NO_PROFILER


class ProfilerFailed(ProfconvError):
    """The profiler ran but failed; the message names its log."""


class Interrupted(ProfconvError):
    """A session stopped by Ctrl-C, SIGTERM or its caller's `stop` callback. `record` is what it had
    measured (marked interrupted) and `path` where that record was kept (None when nothing had finished)."""

    exit_status = ExitStatus.INTERRUPTED

    def __init__(self, message: str, record: object = None, path: object = None) -> None:
        super().__init__(message)
        self.record = record
        self.path = path


class SystemRefused(ProfconvError):
    """The operating system refused a read or write: disk full, permission, read-only file system."""

    exit_status = ExitStatus.SYSTEM


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError: what failed, on which file, in the system's words."""
    what = exc.strerror or type(exc).__name__
    name = exc.filename
    if name is None:
        return f"a read or write failed: {what}"
    return f"{name}: {what}"


def did_you_mean(name: str, choices) -> str:
    """' (did you mean 'parse'?)' for a near miss among `choices` (a typo: `prase`, `ece408-hgih`), else ''."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
