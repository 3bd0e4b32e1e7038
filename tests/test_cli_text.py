"""What a newcomer reads: every command's help and plain output, as snapshots and as properties.

Snapshots live in tests/data/cli/. After a deliberate change to a command's options or help text,
regenerate them and read the diff before committing:

    PROFCONV_UPDATE_GOLDEN=1 python -m pytest tests/test_cli_text.py

Help is click's plain layout on every typer release profconv supports (0.27 with click, 0.29 with
its vendored click): 78 columns in any terminal at least 80 wide, the same text in a pipe or a file
(CliRunner lays it out for 80).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import terminal_console

SNAPSHOTS = Path(__file__).parent / "data" / "cli"
HELP = [(), ("run",), ("bench",), ("parse",), ("report",), ("models",), ("kernel",), ("kernel", "new")]
EVERY_HELP = [*HELP, ("grade",)]  # grade's options belong to its own tests: checked here for layout only


def _snapshot(name: str, got: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("PROFCONV_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
    assert path.exists(), f"{path} missing: run with PROFCONV_UPDATE_GOLDEN=1 once"
    expected = path.read_text()
    if got != expected:
        for i, (a, b) in enumerate(zip(got.splitlines(), expected.splitlines(), strict=False), 1):
            if a != b:
                pytest.fail(f"{path}:{i} differs (PROFCONV_UPDATE_GOLDEN=1 regenerates after a deliberate change):\n"
                            f"  got:      {a}\n  expected: {b}")
        pytest.fail(f"{path}: {len(got.splitlines())} lines, expected {len(expected.splitlines())}")


def _name(args: tuple[str, ...]) -> str:
    return "help-" + ("-".join(args) or "profconv") + ".txt"


@pytest.mark.parametrize("args", HELP, ids=lambda a: " ".join(a) or "profconv")
def test_help_snapshot(cli, args):
    r = cli(*args, "--help")
    assert r.returncode == 0, r.stderr
    _snapshot(_name(args), r.stdout)


@pytest.mark.parametrize("args", EVERY_HELP, ids=lambda a: " ".join(a) or "profconv")
def test_help_reads_well(cli, args):
    r = cli(*args, "--help")  # CliRunner lays help out for 80 columns (a terminal: 78 at any width >= 80)
    out = r.stdout
    assert r.returncode == 0 and out.startswith("Usage: profconv")
    assert max(len(line) for line in out.splitlines()) <= 80
    assert not [line for line in out.splitlines() if line != line.rstrip()]
    # no type names where a value's meaning belongs, no braces, nothing cut, no boxes or colour
    assert not re.search(r"<(str|int|float|bool|path|list|text)\b", out), out
    assert "{" not in out.split("\n\n")[0] and "…" not in out and "╭" not in out and "\x1b[" not in out
    commands = out.split("Commands:\n")[1] if "Commands:\n" in out else ""
    assert not re.search(r"\w\.\.\.$", commands, re.M), "a command's summary was cut short"


def test_every_value_option_names_its_value(cli):
    r = cli("run", "--help")
    for expected in ("-m, --model MODEL", "-n, --images N[,N...]", "--variant NAME[,NAME...]", "--out DIR",
                     "--profile TOOL[,TOOL]", "-k, --kernel PATH", "--contract CONTRACT", "--kernel-timeout SECONDS"):
        assert expected in r.stdout
    assert "Usage: profconv kernel new [OPTIONS] NAME\n" in cli("kernel", "new", "--help").stdout
    assert "Usage: profconv report [OPTIONS] INPUT...\n" in cli("report", "--help").stdout
    assert "Usage: profconv grade [OPTIONS] SUBMISSION...\n" in cli("grade", "--help").stdout


# --- -v and -V: one meaning everywhere ---

@pytest.mark.parametrize("command", ["run", "bench"])
def test_dash_v_is_not_variant_and_says_what_to_write(cli, command):
    r = cli(command, "-v", "cpu")
    assert r.returncode == 2
    assert "No such option: -v (profconv gives -v no meaning: write --variant; -V is --version)" in r.stderr


def test_dash_capital_v_is_version(cli):
    import profconv

    assert cli("-V").stdout == f"profconv {profconv.__version__}\n"


# --- typos suggest the near miss ---

@pytest.mark.parametrize("args, line", [
    (["prase", "x.log"], "Error: No such command 'prase' (did you mean 'parse'?)."),
    (["modles"], "Error: No such command 'modles' (did you mean 'models'?)."),
    (["zzz"], "Error: No such command 'zzz'."),
])
def test_mistyped_command_suggests(cli, args, line):
    r = cli(*args)
    assert r.returncode == 2 and line in r.stderr.splitlines()


def test_mistyped_option_suggests(cli):
    r = cli("run", "--modle", "ece408")
    assert r.returncode == 2 and "No such option: --modle" in r.stderr and "--model" in r.stderr


@pytest.mark.parametrize("args, start", [
    (["run", "--model", "ece408-hgih"], "error: unknown model 'ece408-hgih' (did you mean 'ece408-high'?): choose one of "),
    (["run", "--variant", "navie"], "error: unknown variant(s) navie (did you mean 'naive'?): choose from cpu, naive,"),
    (["kernel", "new", "k", "--contract", "devcie"],
     "error: --contract 'devcie' (did you mean 'device'?) is not one of device, host, course, python"),
])
def test_mistyped_value_suggests(cli, args, start, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli(*args)
    assert r.returncode == 2 and r.stderr.startswith(start) and len(r.stderr.splitlines()) == 1


# --- --out that names a file ---

@pytest.mark.parametrize("command, record", [("run", "run.json"), ("bench", "bench.json")])
def test_out_naming_a_file_is_a_usage_error_before_any_work(cli, tmp_path, command, record):
    f = tmp_path / "taken"
    f.write_text("keep me")
    r = cli(command, "--out", str(f), "--images", "5")
    assert r.returncode == 2
    assert r.stderr == f"error: --out {f}: is a file, not a directory (the record is written to DIR/{record})\n"
    assert r.stdout == "" and f.read_text() == "keep me"


# --- plain output: models, kernel new ---

@pytest.mark.parametrize("width", ["80", "120", None])
def test_models_snapshot(cli, width):
    r = cli("models", *(["--width", width] if width else []))
    assert r.returncode == 0
    assert not [line for line in r.stdout.splitlines() if line != line.rstrip()]  # no padding to the width
    # redirected: the markdown listing within 80 columns (the table laid out for no terminal was 304 wide)
    assert max(len(line) for line in r.stdout.splitlines()) <= int(width or 80)
    _snapshot(f"models-{width or 'redirected'}.txt", r.stdout)


def test_kernel_new_says_what_it_wrote_and_what_next(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("kernel", "new", "myconv")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("wrote myconv/myconv.cu\n"
                        "device kernel 'myconv'; next: profconv run --model ece408 --kernel myconv\n")
    again = cli("kernel", "new", "myconv")
    assert again.returncode == 2 and again.stderr == "error: myconv/myconv.cu exists: choose another name or pass --force\n"


def test_plain_output_has_no_trailing_spaces():
    import io

    from profconv.ui import TrimmedLines

    buf = io.StringIO()
    out = TrimmedLines(buf)
    for chunk in ["a  ", "  b   ", "\nc ", " ", "\n", "   \n", "d  "]:
        out.write(chunk)
    assert buf.getvalue() == "a    b\nc\n\nd"


# --- shell completion of values, without NumPy or pandas ---

def _complete(cli, line: str) -> list[str]:
    words = line.split(" ")
    env = {"_PROFCONV_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    r = cli(env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.parametrize("line, expected", [
    ("profconv run --model ece408-f", ["ece408-fa18", "ece408-fa19", "ece408-fa20"]),
    ("profconv run -m cif", ["cifar10"]),
    ("profconv run --variant cpu,na", ["cpu,naive"]),
    ("profconv run --variant tensor", ["tensorcore", "tensorcore-tf32", "tensorcore-3xtf32"]),
    ("profconv run --variant no", ["none"]),
    ("profconv run --contract p", ["python"]),
    ("profconv bench --model ece408,cif", ["ece408,cifar10"]),
    ("profconv bench --variant c", ["constant", "cudnn", "cudnn-nhwc", "cudnn-tf32", "cudnn-tf32-nhwc", "cudnn-fp16",
                                    "cudnn-fp16-nhwc", "cudnn-bf16", "cudnn-bf16-nhwc"]),  # bench times no CPU variant
    ("profconv kernel new k --contract h", ["host"]),
])
def test_option_values_complete(cli, line, expected):
    assert _complete(cli, line) == expected


def test_completion_lists_every_variant_in_ladder_order():
    from profconv.commands._complete import variant_names
    from profconv.run.variants import VARIANTS

    assert variant_names() == [v.name for v in VARIANTS] + ["none"]


def test_completing_a_value_imports_neither_numpy_nor_pandas():
    """A TAB in a fresh interpreter: the command's options are read, the libraries are not loaded."""
    import subprocess
    import sys

    code = "\n".join([
        "import os, sys", "from profconv.cli import main",
        "os.environ.update(_PROFCONV_COMPLETE='complete_bash', COMP_WORDS='profconv run --variant cpu,na', COMP_CWORD='3')",
        "try:", "    main([])", "except SystemExit:", "    pass",
        "print(sorted(m for m in ('pandas', 'numpy', 'cupy', 'matplotlib') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.split() == ["cpu,naive", "[]"], (r.stdout, r.stderr)


# --- one layout for every table: bench's live tables and run's profiler tables are the report's ---

BENCH = "tests/data/bench/bench-h200-first.json"


def _bench_text(width: int | None) -> str:
    import io

    from rich.console import Console

    from profconv.records import load
    from profconv.render import terminal
    from profconv.report.bench import layer_section, summary_sections
    from profconv.run import bench

    record = load(BENCH)
    df = bench.frame(record)
    con = (terminal_console(width) if width
           else Console(file=io.StringIO(), width=1000, color_system=None))  # a pipe: plain, complete
    for i, layer in enumerate(record.layers):  # as `profconv bench` prints each layer when it is measured
        terminal.section(con, layer_section(layer, i, df))
    for s in summary_sections(record):
        terminal.section(con, s)
    return con.file.getvalue()


def test_bench_tables_at_80_columns_keep_op_time_and_ratio():
    out = _bench_text(80)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    row = next(line for line in out.splitlines() if line.startswith("tuned ") and "0.42×" in line)
    assert row.split()[:5] == ["tuned", "587.4", "µs", "0.42×", "cudnn"]  # Op Time with its unit, the ratio, vs whom
    words = " ".join(out.split())  # captions wrap at the table's width
    assert "rel. error, min, precision not shown at 80 columns (--width N shows them)" in words
    best = out.split("Best variant per layer")[1]
    assert "ece408-high   conv1   fp32        tuned          587.4 µs      0.42×" in best
    assert "shape, share of floor, cuDNN peer (layout) not shown at 80 columns" in " ".join(best.split())
    assert "Best cuDNN per layer and precision" in out


def test_bench_tables_at_120_and_redirected():
    wide = _bench_text(120)
    assert max(len(line) for line in wide.splitlines()) <= 120
    piped = _bench_text(None)
    assert "not shown" not in piped and "─" * 500 not in piped  # complete; headings are one plain line
    assert "── ece408-high conv1: M=50 C=1 28x28 K=5, 10,000 images ──" in piped
    header = next(line for line in piped.splitlines() if line.startswith("variant "))
    assert header.split()[:4] == ["variant", "precision", "Op", "Time"]


def test_live_commands_use_the_report_tables_not_their_own():
    """bench and run print through the Document renderer; no command lays out a report table by hand."""
    import inspect

    import profconv.commands.bench as bench_cmd
    import profconv.profile.session as session

    assert "fitted_table" not in inspect.getsource(bench_cmd)
    assert not hasattr(session, "ncu_table") and not hasattr(session, "agreement_table")


def test_fit_takes_back_a_narrow_column_once_a_wide_one_is_gone():
    from profconv.render.format import Column, fit

    cols = [Column("name", ["conv_forward_kernel"], justify="left", wrap=True), Column("n", ["3"], drop=1),
            Column("a very wide column", ["x" * 30], drop=2), Column("Op Time", ["2.203 ms"])]
    kept, dropped = fit(cols, 50, wrap_min=12)
    assert [c.header for c in kept] == ["name", "n", "Op Time"] and dropped == ["a very wide column"]


def test_cpu_run_shows_no_empty_interval_column(cli, tmp_path):
    r = cli("run", "--model", "ece408", "--variant", "cpu", "--images", "5", "--out", tmp_path / "r", "--width", "80")
    assert r.returncode == 0, r.stderr
    header = next(line for line in r.stdout.splitlines() if line.startswith("images   variant   layer")).split()
    assert "±" not in header and "±" not in r.stdout  # a CPU run has no interval: no empty column, no caption for it
    # which of `n` and `rel. error` fits 80 columns depends on how wide the measured times print ("812.3 ms" or
    # "1.204 s"): whichever is left out is named under the table, never dropped without a word
    assert header[:6] == ["images", "variant", "layer", "Op", "Time", "min"] and header[-2:] == ["Correctness", "status"]
    shown = {"n": "n" in header, "rel. error": "rel." in header}
    assert any(shown.values())
    gone = [h for h in ("n", "rel. error") if not shown[h]]
    caption = "Op Time: median of the n timed runs\n"
    caption += f"{', '.join(gone)} not shown at 80 columns (--width N shows them)\n" if gone else ""
    assert caption in r.stdout


def test_a_column_left_out_at_80_columns_is_the_least_important_that_makes_room():
    """The run table's `n` (rank 1) goes before `rel. error` (rank 2); when leaving out `n` alone is not
    enough, both go and the one ranked higher comes back first if it fits."""
    from profconv.render.format import Column, fit

    def table(op_time: str):
        return [Column("images", ["5"]), Column("variant", ["cpu"], justify="left"), Column("Op Time", [op_time]),
                Column("n", ["3"], drop=1), Column("rel. error", ["0.00e+00"], drop=2),
                Column("status", ["ok"], justify="left", wrap=True)]

    kept, dropped = fit(table("1.204 s"), 52, wrap_min=12)
    assert [c.header for c in kept] == ["images", "variant", "Op Time", "n", "rel. error", "status"] and dropped == []
    kept, dropped = fit(table("812.3 ms"), 50, wrap_min=12)
    assert [c.header for c in kept] == ["images", "variant", "Op Time", "rel. error", "status"] and dropped == ["n"]
    kept, dropped = fit(table("812.3 ms"), 43, wrap_min=12)
    assert [c.header for c in kept] == ["images", "variant", "Op Time", "n", "status"] and dropped == ["rel. error"]


def test_a_noun_alone_shows_its_help_like_profconv_alone(cli):
    r = cli("kernel")
    assert r.returncode == 0 and r.stdout.startswith("Usage: profconv kernel [OPTIONS] COMMAND [ARGS]...")


def test_two_runs_in_the_same_second_get_their_own_directories(tmp_path):
    """hostile-input.md §25: the default runs/<model>-<timestamp>/ is reserved by mkdir, never shared."""
    from profconv.session.recording import fresh_directory

    first = fresh_directory(tmp_path / "runs", "ece408-20261126-093000")
    second = fresh_directory(tmp_path / "runs", "ece408-20261126-093000")
    assert (first.name, second.name) == ("ece408-20261126-093000", "ece408-20261126-093000-2")
    assert first.is_dir() and second.is_dir()


def test_run_writes_its_record_in_a_directory_of_its_own(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    for _ in range(2):
        assert cli("run", "--model", "ece408", "--variant", "cpu", "--images", "3", "--cpu-repeat", "1").returncode == 0
    assert len(list((tmp_path / "runs").glob("ece408-*/run.json"))) == 2


@pytest.mark.parametrize("make, message", [
    (lambda d: (d / "f").write_text("x") and d / "f" / "sub", "f is a file, not a directory"),
    (lambda d: (d / "o" / "run.json").mkdir(parents=True) or d / "o", "is a directory (the record file goes there)"),
])
def test_bad_out_paths_are_refused_before_any_work(cli, tmp_path, make, message):
    """hostile-input.md §10: these used to fail after the first variant ran, its work lost."""
    out = make(tmp_path)
    r = cli("run", "--out", str(out), "--variant", "cpu", "--images", "3")
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1
    assert "Op Time" not in r.stdout


def test_bullets_wrap_under_their_text():


    from profconv.render import terminal
    from profconv.render.document import Bullets, Section

    con = terminal_console(40)
    terminal.section(con, Section("s").add(Bullets(["command: profconv run --model ece408-high --images 10000 --out runs/x"])))
    lines = [line.rstrip() for line in con.file.getvalue().splitlines()[1:] if line.strip()]
    assert lines[0].startswith("• command:") and all(line.startswith("  ") for line in lines[1:]) and len(lines) > 1


@pytest.mark.nogpu
def test_sigterm_ends_a_run_as_ctrl_c_does_with_its_partial_record(tmp_path):
    """hostile-input.md §26: `kill` (or a batch system's time limit) used to leave `"interrupted": false`."""
    import json
    import signal
    import subprocess
    import sys
    import time

    # --cpu-repeat 1000: minutes on any machine (the default 3 repeats of 10,000 images take 12 s or more
    # here, and could end within the 3 s below on a machine a few times faster); the signal ends it
    proc = subprocess.Popen([sys.executable, "-m", "profconv", "run", "--model", "ece408-high", "--variant", "cpu",
                             "--cpu-repeat", "1000", "--out", str(tmp_path / "r")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:  # the notice comes just before the run
        if line.startswith("synthetic data"):
            break
    else:  # the child ended without it (not a busy loop on readline's '' at the end of its output)
        pytest.fail(f"no 'synthetic data' notice; exit {proc.wait()}: {proc.stderr.read()}")
    time.sleep(3)  # inside the run
    proc.send_signal(signal.SIGTERM)
    out, err = proc.stdout.read(), proc.stderr.read()  # the buffered reader, not communicate(): nothing lost
    proc.wait(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and f"interrupted: partial record in {tmp_path / 'r' / 'run.json'}" in out
    assert json.loads((tmp_path / "r" / "run.json").read_text())["interrupted"] is True


def test_sigterm_handler_is_put_back_after_each_command(cli):
    import signal

    before = signal.getsignal(signal.SIGTERM)
    assert cli("models").returncode == 0
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_interrupt_while_a_kernel_child_runs_ends_the_child_too(tmp_path):
    """Ctrl-C or SIGTERM in `run --kernel`: the kernel's process (its own session) does not outlive us."""
    import os
    import sys

    from profconv.run.user import isolate
    from profconv.run.user.worker import PROGRESS

    pid_file = tmp_path / "pid"
    code = (f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
            f"print({PROGRESS!r} + 'checking', flush=True); time.sleep(60)")

    def interrupted(message):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        isolate._spawn([sys.executable, "-c", code], tmp_path / "child.log", 60, interrupted)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize("args, usage", [(["help"], "Usage: profconv [OPTIONS] COMMAND"),
                                         (["help", "run"], "Usage: profconv run [OPTIONS]"),
                                         (["help", "kernel", "new"], "Usage: profconv kernel new [OPTIONS] NAME")])
def test_help_as_a_word(cli, args, usage):
    r = cli(*args)
    assert r.returncode == 0 and r.stdout.startswith(usage)
