import os
from dataclasses import dataclass

import pytest

# The suite asserts what a user sees with rich's defaults: a pipe or a file is plain, a terminal is what
# the test makes it. A developer's shell or a CI runner may set variables that change that (GitHub
# workflows often set FORCE_COLOR): FORCE_COLOR or TTY_COMPATIBLE=1 make every pipe a colour terminal
# (escape codes in stdout and stderr: 26 CLI tests failed), TTY_INTERACTIVE turns live displays on. They
# are dropped here, for subprocesses too; a test of their effect sets them itself (CliRunner's env=).
for _var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
    os.environ.pop(_var, None)

# A test's subprocess (`python -m profconv ...`, a grade job, a kernel's child) imports the profconv of the
# checkout under test: an editable install made from another checkout of the same repository (a second
# worktree, a copy) would otherwise answer `import profconv` in the child with that checkout's code.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join([_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])

# Hypothesis: the suite's property tests draw the same examples on every run and every machine (derandomize,
# seeded from each test's own code), keep no example database between runs (.hypothesis/), have no deadline
# and no timing health check (a loaded machine is no failure). Without this, a run explored fresh random
# examples unless a CI variable was set (hypothesis then loads its own 'ci' profile) and replayed what
# .hypothesis/ held. `nox -s fuzz` (PROFCONV_FUZZ_EXAMPLES) explores new random examples instead;
# HYPOTHESIS_PROFILE=fuzz does the same for any run.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a machine with only the runtime dependencies: the property tests' modules say so
    pass
else:
    settings.register_profile("profconv", derandomize=True, database=None, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("fuzz", derandomize=False, deadline=None, print_blob=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                          or ("fuzz" if os.environ.get("PROFCONV_FUZZ_EXAMPLES") else "profconv"))


def _has_gpu() -> bool:
    from profconv.run.gpu import cupy_or_none

    return cupy_or_none() is not None


def pytest_collection_modifyitems(config, items):
    if _has_gpu():  # tests of what a machine without a GPU is told (exit 3, a CPU-only run's timing) cannot run here
        skip = pytest.mark.skip(reason="checks a machine without a CUDA GPU; this one has one")
        marker = "nogpu"
    else:
        skip = pytest.mark.skip(reason="needs a CUDA GPU and CuPy")
        marker = "gpu"
    for item in items:
        if marker in item.keywords:
            item.add_marker(skip)
    _reorder(items, os.environ.get("PROFCONV_TEST_ORDER", ""))


def pytest_configure(config):
    """PROFCONV_TEST_ORDER=shuffle without a seed gets one here, before pytest -n starts its workers (they
    inherit it, so all collect the same order); grade's GPU locks go to a folder of this process's own."""
    import tempfile

    # grade's GPU lock files (grade.gpus.lock_path) in a folder of this test process: a test's deliberately hung
    # child never holds up another test run's jobs on the same "GPU 0"
    os.environ["PROFCONV_GPU_LOCKS"] = tempfile.mkdtemp(prefix="profconv-gpu-locks-")
    order = os.environ.get("PROFCONV_TEST_ORDER", "")
    if order == "shuffle":
        import random

        os.environ["PROFCONV_TEST_ORDER"] = f"shuffle:{random.SystemRandom().randrange(10**6)}"
    elif order and order != "reverse" and not order.startswith("shuffle:"):
        raise pytest.UsageError(f"PROFCONV_TEST_ORDER={order!r}: write reverse, shuffle or shuffle:SEED")


def pytest_terminal_summary(terminalreporter):
    order = os.environ.get("PROFCONV_TEST_ORDER")
    if order:
        terminalreporter.write_line(f"PROFCONV_TEST_ORDER={order} (the same value runs the same order again)")


def _reorder(items: list, order: str) -> None:
    """PROFCONV_TEST_ORDER=reverse or shuffle[:SEED] runs the tests in another order, to find a test that
    passes only after (or fails only after) another one: state left in a module, a cache, the environment,
    the working directory."""
    if order == "reverse":
        items.reverse()
    elif order.startswith("shuffle:"):
        import random

        random.Random(int(order.partition(":")[2])).shuffle(items)


def terminal_console(width: int):
    """A rich console that is a colourless terminal `width` columns wide on a buffer (`.file.getvalue()`),
    whatever the environment says: given a width alone, rich lays a terminal out for 80 columns when TERM
    is dumb or unknown (Emacs' shell, some CI runners), so the height is given too."""
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), width=width, height=25, force_terminal=True, color_system=None)


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def _runner():
    from typer.testing import CliRunner

    try:
        return CliRunner(mix_stderr=False)  # click < 8.2 mixes stderr into stdout unless told
    except TypeError:
        return CliRunner()  # click >= 8.2 and typer's vendored click keep them apart


def run_cli(*args: str, input: str | bytes | None = None, env: dict | None = None) -> CliResult:
    """`profconv ARGS` in-process through Typer's CliRunner: exit status, stdout and stderr as a user
    sees them with output redirected to a file (plain, complete lines); `--width N` for a terminal width."""
    from profconv.cli import app

    env = {"PROFCONV_TRACEBACK": None, **(env or {})}  # a developer's traceback switch must not turn errors into bugs
    r = _runner().invoke(app, [str(a) for a in args], input=input, env=env)
    stderr = r.stderr if r.stderr_bytes is not None else ""
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception  # a bug escaped main(): show its traceback in the test report
    return CliResult(r.exit_code, r.stdout, stderr)


def assert_cli_alike(monkeypatch, path, switch_off, outs: tuple[str, ...] = ("--json", "--csv", "--all")) -> None:
    """`profconv parse PATH OUT` gives the same exit status, stdout and stderr with a reading path on
    and with it switched off (`switch_off(m)`, m a monkeypatch context), for each OUT."""
    for out in outs:
        a = run_cli("parse", str(path), out)
        assert "No such option" not in a.stderr, out  # (a switch the command does not have compares nothing)
        with monkeypatch.context() as m:
            switch_off(m)
            b = run_cli("parse", str(path), out)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


@pytest.fixture
def own_git(tmp_path, monkeypatch):
    """git in tmp_path as on a fresh machine: no repository found above tmp_path (a TMPDIR inside a checkout,
    a home directory kept in git), no global or system configuration (commit.gpgsign, hooks)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return tmp_path


@pytest.fixture
def cli():
    """The in-process CLI: `cli("parse", path)` -> CliResult(returncode, stdout, stderr)."""
    return run_cli


@pytest.fixture
def small_windows(monkeypatch):
    """The parse stream's windows of a few hundred bytes, parts cut a few lines after a profile start:
    every profile start of a test file becomes a place to cut (the streamed-parse tests)."""
    from profconv.parse import stream as stream_mod

    monkeypatch.setattr(stream_mod, "HEAD", 16)
    monkeypatch.setattr(stream_mod, "MARGIN", 3)
    return 300
