"""Developer sessions: tests, lint (ruff), types (mypy)."""

import nox

nox.options.sessions = ["tests", "lint", "types"]


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("pytest", "-q", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "profconv", "tests", "benchmarks", "scripts")


@nox.session
def types(session: nox.Session) -> None:
    session.install("-e", ".[dev]")
    session.run("mypy")
