"""One exception hierarchy and exit codes, so the CLI turns every failure into one line."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran but found a problem (a failed variant, a regression)
    BAD_INPUT = 2  # unusable input: missing, empty, binary or unrecognised file, bad option
    NO_GPU = 3  # the command needs CUDA and CuPy and they are not here
    NO_PROFILER = 4  # the profiler asked for is missing or refuses this GPU
    INTERRUPTED = 130


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


class GpuUnavailable(ProfconvError):
    exit_status = ExitStatus.NO_GPU


class ProfilerUnavailable(ProfconvError):
    exit_status = ExitStatus.NO_PROFILER


class ProfilerFailed(ProfconvError):
    """The profiler ran but failed; the message names its log."""
