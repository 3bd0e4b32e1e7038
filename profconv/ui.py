"""The one rich console the CLI writes to (tests swap it through Typer's CliRunner)."""

from __future__ import annotations

from rich.console import Console


def console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def error_console() -> Console:
    return Console(stderr=True, highlight=False)
