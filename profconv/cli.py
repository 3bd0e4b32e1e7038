"""The profconv command line: assembles the per-noun commands and turns errors into one line."""

from __future__ import annotations

import os
import sys

import typer
from rich.markup import escape

from profconv.commands.parse import parse_command
from profconv.errors import ExitStatus, ProfconvError
from profconv.ui import error_console

app = typer.Typer(
    name="profconv",
    help="Run, check and profile CUDA convolution kernels; parse any profiler's text output.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("parse")(parse_command)


def _register_optional() -> None:
    from profconv.commands.bench import bench_command
    from profconv.commands.report import report_command
    from profconv.commands.run import models_command, run_command

    app.command("run")(run_command)
    app.command("models")(models_command)
    app.command("report")(report_command)
    app.command("bench")(bench_command)


_register_optional()


def main() -> None:
    """Entry point: any ProfconvError becomes one line and its exit code (PROFCONV_TRACEBACK=1 for the trace)."""
    try:
        status = app(standalone_mode=False)  # click returns typer.Exit's code instead of raising
        if isinstance(status, int) and status:
            sys.exit(status)
    except ProfconvError as exc:
        if os.environ.get("PROFCONV_TRACEBACK"):
            raise
        error_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(int(exc.exit_status))
    except KeyboardInterrupt:
        error_console().print("interrupted")
        sys.exit(int(ExitStatus.INTERRUPTED))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(int(ExitStatus.INTERRUPTED))
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(int(ExitStatus.BAD_INPUT))
        raise
