"""Developer and CI sessions.

- tests-latest: the suite against the newest release of every dependency (a fresh resolution), so an
  upstream release that breaks profconv fails CI before it reaches users;
- tests-locked: the suite against the versions in constraints.txt (what was last known to work);
- tests-cli-oldest: the CLI tests on typer 0.27 (the lower bound in pyproject.toml);
- lint (ruff), types (mypy);
- slurm: `profconv grade --executor slurm` through a real single-node Slurm that the session brings up
  (scripts/slurm_single_node.sh: Debian's slurm-wlm and munge, installed with apt when missing; needs
  root) and takes down again: job arrays, time limits, Ctrl-C/SIGTERM cancelling, a requeued task,
  resume (tests/test_grade_slurm.py), then the class throughput on it (benchmarks/grade_throughput.py).
pytest's exit 5 (no tests collected) fails a session like any other non-zero status.
"""

import nox

nox.options.sessions = ["tests-latest", "tests-locked", "tests-cli-oldest", "lint", "types"]  # slurm: CI names it (needs root)
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True

EXTRAS = ".[dev,grade-ray]"  # grade-ray: the tests of `profconv grade --executor ray` (a local Ray instance)


@nox.session(name="tests-latest")
def tests_latest(session: nox.Session) -> None:
    session.install("--upgrade", "--upgrade-strategy", "eager", "-e", EXTRAS)
    session.run("python", "-m", "pip", "list", "--format=freeze", silent=False)
    session.run("pytest", "-q", *session.posargs)


@nox.session(name="tests-locked")
def tests_locked(session: nox.Session) -> None:
    session.install("-c", "constraints.txt", "-e", EXTRAS)
    session.run("pytest", "-q", *session.posargs)


@nox.session(name="tests-cli-oldest")
def tests_cli_oldest(session: nox.Session) -> None:
    """The CLI's tests on the oldest typer profconv supports (0.27, with click: what the GPU machine
    has), the rest locked: help, usage errors and completion must read the same on both."""
    session.install("-c", "constraints.txt", "-e", ".[dev]")
    session.install("typer==0.27.*", "click>=8.2,<8.3")
    session.run("python", "-c", "import typer; print('typer', typer.__version__)")
    session.run("pytest", "-q", "tests/test_cli.py", "tests/test_cli_text.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("-c", "constraints.txt", "ruff")
    session.run("ruff", "check", "profconv", "tests", "benchmarks", "scripts")
    # no function in the parser over 60 lines (ruff's C901 holds it to complexity 20: pyproject.toml)
    session.run("python", "scripts/function_lengths.py", "--max", "60", "profconv/parse")


@nox.session
def types(session: nox.Session) -> None:
    session.install("-c", "constraints.txt", "-e", ".[dev]")
    session.run("mypy")


@nox.session
def slurm(session: nox.Session) -> None:
    """grade through a real single-node Slurm, brought up here and taken down after (see the module docstring)."""
    session.install("-c", "constraints.txt", "-e", ".[dev]")
    session.run("bash", "scripts/slurm_single_node.sh", "up", external=True)
    try:
        session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_grade_slurm.py", *session.posargs,
                    env={"PROFCONV_SLURM_TESTS": "1"})
        session.run("python", "benchmarks/grade_throughput.py", "dry", "12", "--engine", "slurm", "--",
                    "--cpus-per-task", "1")
    finally:
        session.run("bash", "scripts/slurm_single_node.sh", "down", external=True)


@nox.session
def fuzz(session: nox.Session) -> None:
    """The bounded fuzz run (not in the default sessions: ~40 minutes on 2 cores): scripts/fuzz.py over
    100,000 hostile inputs (logs, stray lines in tables, notebooks, records, kernel manifests, grade
    listings; `nox -s fuzz -- N` for another count), each within 10 s, no traceback, no row or student
    dropped without a word (fuzz-report.json); then the parser's hypothesis fuzz tests with 3,000 examples."""
    session.install("-e", ".[dev]")
    inputs = session.posargs[0] if session.posargs else "100000"
    session.run("python", "scripts/fuzz.py", "--inputs", inputs, "--timeout", "10", "--report", "fuzz-report.json")
    session.run("pytest", "-q", "tests/test_parse_fuzz.py", "tests/test_properties.py", "-p", "no:cacheprovider",
                env={"PROFCONV_FUZZ_EXAMPLES": "3000"})
