"""The CLI as a user types it: tables, JSON/CSV, and one-line errors with exit code 2."""

import errno
import gzip
import json
import os

import pytest

from tests.conftest import terminal_console

SEED = "tests/data/seeds/002_b0bcac5cefbf4480.log"


def test_parse_seed_shows_ranked_tables(cli):
    r = cli("parse", SEED)
    assert r.returncode == 0, r.stderr
    assert "Profile 2 · nvprof" in r.stdout
    assert "Op Time: 0.355486 s, 0.652564 s" in r.stdout
    assert "Correctness: 0.8451 Model: ece408" in r.stdout
    assert "1 of 14 GPU activities take 89.8% of GPU time" not in r.stdout
    assert "2 of 14 GPU activities take 92.4% of GPU time" in r.stdout
    assert "mxnet::op::forward_kernel" in r.stdout


def test_parse_json_and_profile_selection(cli):
    r = cli("parse", SEED, "--json", "--profile", "2")
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1
    assert {row["profile"] for row in doc["rows"]} == {2}
    top = max((row for row in doc["rows"] if row["section"] == "gpu"), key=lambda row: row["total_ns"])
    assert top["name"] == "mxnet::op::forward_kernel" and top["calls"] == 2
    assert top["total_ns"] == pytest.approx(1.00787e9)


def test_parse_csv_stdin_and_gzip(cli, tmp_path):
    text = open("tests/data/nvprof-old/howardjchen-sparse-cnn-coo.log").read()
    r = cli("parse", "-", "--csv", input=text)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("source,profile,tool,section,name")
    assert len(lines) == 1 + 16
    gz = tmp_path / "log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    r2 = cli("parse", str(gz), "--csv")
    assert r2.stdout.splitlines()[1:] == [ln.replace("<stdin>", str(gz), 1) for ln in lines[1:]]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty input"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"hello world\nno profiler here\n", "no profiler output"),
        (b"\x1f\x8b\x08broken gzip", "corrupt gzip"),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, tmp_path, content, message):
    f = tmp_path / "in.log"
    f.write_bytes(content)
    r = cli("parse", str(f))
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_missing_file_and_bad_options(cli):
    r = cli("parse", "does/not/exist.log")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = cli("parse", SEED, "--profile", "99")
    assert r.returncode == 2 and "no profile 99 (it holds 6)" in r.stderr
    r = cli("parse", SEED, "--threshold", "1.5")
    assert r.returncode == 2 and "--threshold" in r.stderr


def test_strict_mode_fails_on_unplaced_rows(cli, tmp_path):
    f = tmp_path / "damaged.log"
    f.write_text(
        "==1== Profiling result:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " 90.00%  9.0000ms         1  9.0000ms  9.0000ms  9.0000ms  kernelA\n"
        " garbled 1.0000ms 1.0000ms kernelB\n"
    )
    r = cli("parse", str(f))
    assert r.returncode == 0 and "1 line(s) look like table data but could not be placed: lines 4" in r.stdout
    assert "Time(%) adds up to 90.00%" in r.stdout
    r = cli("parse", str(f), "--strict")
    assert r.returncode == 2 and "could not be placed (lines 4)" in r.stderr


def test_format_forced(cli):
    r = cli("parse", SEED, "--format", "nsys")
    assert r.returncode == 2 and "no nsys profile found" in r.stderr


def test_help_lists_only_real_commands(cli):
    r = cli("--help")
    assert r.returncode == 0
    for cmd in ("parse", "run", "models", "report", "bench"):
        assert cmd in r.stdout


P = ("==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n"
     " GPU activities: 100.00% 1ms 1 1ms 1ms 1ms k\n")


# --- usage errors: typer/click's own message, exit 2, never a traceback (first-contact.md §1, hostile §1) ---

@pytest.mark.parametrize("args, message", [
    (["parse"], "Missing argument"),
    (["parse", "--bogus", "x"], "No such option: --bogus"),
    (["parse", SEED, "--profile", "abc"], "--profile"),
    (["parse", SEED, "--profile", "0"], "--profile"),
    (["parse", SEED, "--format", "bogus"], "--format"),
    (["parse", SEED, "--threshold", "nan"], "must be a share in (0, 1]"),
    (["parse", SEED, "--threshold", "0"], "must be a share in (0, 1]"),
    (["models", "extra"], "unexpected extra argument"),
    (["report", "tests/data/runs/ece408-h200.json", "--markdown"], "requires an argument"),
    (["report", "--compare", "a", "b", "--regression-threshold", "-1"], "must be a fraction >= 0"),
    (["run", "--repeat", "0"], "--repeat"),
    (["run", "--warmup", "-1"], "--warmup"),
    (["bogus-command"], "No such command"),
    (["--width", "5", "models"], "--width"),
])
def test_usage_errors_are_clicks_message_and_exit_2(cli, args, message):
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert "Error:" in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_usage_error_detection_is_by_duck_type():
    from profconv.cli import _is_usage_error

    class VendoredUsageError(Exception):  # what typer._click or click raise: they show themselves, with an exit code
        exit_code = 2

        def show(self):
            pass

    assert _is_usage_error(VendoredUsageError())
    assert not _is_usage_error(ValueError("x"))


def test_profconv_alone_shows_help_exit_0(cli):
    r = cli()
    assert r.returncode == 0
    assert "Usage: profconv" in r.stdout and "parse" in r.stdout and "Exit codes:" in r.stdout


def test_version(cli):
    import profconv

    r = cli("--version")
    assert r.returncode == 0 and r.stdout == f"profconv {profconv.__version__}\n"
    assert profconv.__version__ == "0.1.0"


def test_shell_completion_is_offered(cli):
    r = cli("--help")
    assert "--install-completion" in r.stdout and "--show-completion" in r.stdout


def test_help_shows_no_bool_metavars_and_names_the_file_argument(cli):
    r = cli("parse", "--help")
    assert r.returncode == 0
    assert "<bool>" not in r.stdout and "FILE" in r.stdout and "{files}" not in r.stdout


def test_listed_help_is_the_commands_own_first_line():
    import importlib

    from profconv.cli import COMMANDS

    for name, (module, attr, short) in COMMANDS.items():
        doc = getattr(importlib.import_module(module), attr).__doc__
        assert doc.strip().splitlines()[0] == short, name


def test_help_loads_no_command_module_nor_pandas():
    """`profconv --help` in a fresh interpreter imports neither the commands nor pandas/NumPy/matplotlib."""
    import subprocess
    import sys

    code = "\n".join([
        "import sys", "from profconv.cli import main", "try:", "    main(['--help'])", "except SystemExit:", "    pass",
        "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'profconv.commands.run', "
        "'profconv.commands.parse', 'profconv.commands.report') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stderr


def test_parse_loads_neither_pandas_nor_numpy():
    """`profconv parse LOG` (the terminal table, --json and --csv alike) runs on the parse's plain
    columns: pandas and NumPy are imported only when a frame is asked for (the report, ProfileSet.frame)."""
    import subprocess
    import sys

    logs = ("'tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log', "
            "'tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log'")
    code = "\n".join([
        "import sys", "from profconv.cli import main",
        "for extra in (['--threshold', '0.5'], ['--json'], ['--csv']):", "    try:",
        f"        main(['parse', {logs}, *extra])",
        "    except SystemExit as e:", "        assert not e.code, e.code",
        "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stderr
    assert "GPU activities" in r.stdout


# --- profconv's own errors: one line, documented exit status; --traceback for the trace ---

def test_traceback_flag_reraises(cli):
    from profconv.errors import InputError

    r = cli("parse", "does/not/exist.log")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1
    with pytest.raises(InputError):
        cli("parse", "does/not/exist.log", "--traceback")
    with pytest.raises(InputError):
        cli("parse", "does/not/exist.log", env={"PROFCONV_TRACEBACK": "1"})


def test_internal_errors_are_one_line(cli, monkeypatch):
    from profconv.parse import emit

    def boom(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(emit, "parse", boom)
    r = cli("parse", SEED)
    assert r.returncode == 1
    assert r.stderr.startswith("error: internal error") and "ZeroDivisionError" in r.stderr
    assert len(r.stderr.splitlines()) == 1


# --- rich markup in user text is escaped (hostile §7) ---

def test_markup_in_user_text_is_printed_literally(cli, tmp_path):
    (tmp_path / "d[").mkdir()
    f = tmp_path / "d[" / "x].log"  # the path d[/x].log
    f.write_text("==1== NVPROF is profiling process 1, command: ./a [/x] [bold]b[/bold]\n" + P)
    r = cli("parse", str(f))
    assert r.returncode == 0, r.stderr
    assert "command: ./a [/x] [bold]b[/bold]" in r.stdout
    assert "d[/x].log" in r.stdout
    r = cli("parse", str(tmp_path / "[red]missing[/red].log"))
    assert r.returncode == 2 and "[red]missing[/red].log" in r.stderr


def test_markup_in_out_and_markdown_paths(cli, tmp_path):
    out = tmp_path / "r[/x].md"
    r = cli("report", "tests/data/runs/ece408-h200.json", "--markdown", str(out))
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}" in r.stdout and out.exists()


# --- pipes, full disks, Ctrl-C (hostile §8, §13) ---

class _Refusing:
    """A stdout whose writes fail the way a closed pipe or a full disk fails."""

    def __init__(self, err):
        self.err = err

    def write(self, text):
        raise OSError(self.err, os.strerror(self.err)) if self.err != errno.EPIPE else BrokenPipeError(
            errno.EPIPE, "Broken pipe")

    def flush(self):
        pass

    def isatty(self):
        return False


def _console_to(monkeypatch, err):
    import profconv.commands.parse as parse_cmd
    from profconv import ui

    monkeypatch.setattr(parse_cmd, "console", lambda: ui._console_class()(file=_Refusing(err), width=1000))


def test_closed_pipe_exits_0_quietly(cli, monkeypatch):
    _console_to(monkeypatch, errno.EPIPE)
    r = cli("parse", SEED)
    assert r.returncode == 0 and r.stderr == ""


def test_full_disk_is_one_line(cli, monkeypatch):
    _console_to(monkeypatch, errno.ENOSPC)
    r = cli("parse", SEED)
    assert r.returncode == 5
    assert r.stderr == "error: writing the output failed: No space left on device\n"


def test_unwritable_markdown_path_is_one_line(cli, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        r = cli("report", "tests/data/runs/ece408-h200.json", "--markdown", str(ro / "r.md"))
    finally:
        ro.chmod(0o700)
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    assert r.returncode == 5 and "Permission denied" in r.stderr and len(r.stderr.splitlines()) == 1


def test_ctrl_c_while_importing_exits_130_quietly(monkeypatch, capsys):
    import profconv.cli as cli_mod

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "_app", None)
    monkeypatch.setattr(cli_mod, "_build_app", interrupted)
    with pytest.raises(SystemExit) as exc:
        cli_mod.main(["--help"])
    assert exc.value.code == 130
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_ctrl_c_while_loading_a_command_exits_130_quietly(cli, monkeypatch):
    import profconv.cli as cli_mod

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "_loaded", {})
    monkeypatch.setattr(cli_mod.importlib, "import_module", interrupted)
    r = cli("models")
    assert r.returncode == 130 and r.stderr == "" and r.stdout == ""


def test_real_pipe_to_head_exits_0(tmp_path):
    """The whole process, as a shell runs it: `profconv parse big.log | head -1`."""
    import shlex
    import subprocess
    import sys

    big = tmp_path / "big.log"
    big.write_text(P.replace(" k\n", "".join(f" kernel_{i}\n GPU activities: 0.00% 1ms 1 1ms 1ms 1ms" for i in range(1000))
                             + " k\n"))
    parse = shlex.join([sys.executable, "-m", "profconv", "parse", "--all", str(big)])  # paths with spaces too
    r = subprocess.run(f"{parse} | head -1; exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


# --- 80 columns, 120 columns, redirected (first-contact.md §2) ---

TYLER = "tests/data/nvprof-new/tyler-cs566-reductions.log"


def _widest(text):
    return max(len(line.rstrip()) for line in text.splitlines())


def test_parse_at_80_columns_keeps_names_and_units(cli):
    r = cli("parse", TYLER, "--width", "80")
    assert r.returncode == 0, r.stderr
    assert _widest(r.stdout) <= 80
    assert "…" not in r.stdout
    for name in ("cudaDeviceSynchronize", "cudaEventElapsedTime", "cuDeviceGetAttribute"):
        assert name in r.stdout  # names never shrink to nothing
    assert "2.203 ms" in r.stdout and "5.506 µs" in r.stdout  # times keep their units
    assert "●" in r.stdout
    assert "Min, Max, Cum. not shown at 80 columns (--width N shows them)" in r.stdout


def test_parse_at_120_columns_shows_every_column(cli):
    r = cli("parse", TYLER, "--width", "120")
    assert _widest(r.stdout) <= 120 and "…" not in r.stdout
    header = next(line for line in r.stdout.splitlines() if "Time(%)" in line)
    assert header.split() == ["Time(%)", "Share", "Cum.", "Total", "Calls", "Avg", "Min", "Max", "Name"]
    assert "not shown" not in r.stdout


def test_parse_redirected_is_complete_and_plain(cli):
    r = cli("parse", TYLER, "--full-names")
    assert r.returncode == 0
    assert "\x1b[" not in r.stdout and "…" not in r.stdout and "not shown" not in r.stdout
    assert "── Profile 1 · nvprof · tests/data/nvprof-new/tyler-cs566-reductions.log lines 1-28 ──" in r.stdout
    row = next(line for line in r.stdout.splitlines() if line.rstrip().endswith("cudaEventCreate"))
    assert row.split()[:9] == ["●", "87.72", "87.72%", "87.7%", "98.83", "ms", "2", "49.42", "ms"]


def test_report_redirected_is_the_markdown_itself(cli):
    r = cli("report", "tests/data/runs/ece408-high-h200.json")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    assert any(line.startswith("| 10,000 | cudnn | fp32 | conv1 | 2.073 ms |") for line in r.stdout.splitlines())


def test_models_at_80_and_redirected(cli):
    narrow = cli("models", "--width", "80")
    assert narrow.returncode == 0 and _widest(narrow.stdout) <= 80 and "…" not in narrow.stdout
    assert "ece408-high" in narrow.stdout and "cifar10" in narrow.stdout
    wide = cli("models", "--width", "400")
    assert "conv 50 5; tanh; pool 2; fc 500; tanh; fc 10; softmax" in wide.stdout  # the net column, whole


def test_models_in_a_file_fit_80_columns_and_lose_nothing(cli):
    """first-contact: `profconv models > models.txt` was one 304-column table; now markdown within 80."""
    from profconv.commands.models import model_dict
    from profconv.run.models import MODELS

    r = cli("models")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) == 78 and lines[:2] == ["# Models", ""]
    assert [line[3:] for line in lines if line.startswith("## ")] == list(MODELS)
    block = r.stdout.split("## cifar10\n", 1)[1]
    assert block == ("\n- semester: ConvNetJS CIFAR-10\n- input: 3x32x32\n- conv layers (per image):\n"
                     "  - conv1: M=16 C=3 32x32 K=5 pad 2\n  - conv2: M=20 C=16 16x16 K=5 pad 2\n"
                     "  - conv3: M=20 C=20 8x8 K=5 pad 2\n"
                     "- net: conv 16 5 pad 2 bias; relu; pool 2; conv 20 5 pad 2 bias; relu; pool 2;\n"
                     "  conv 20 5 pad 2 bias; relu; pool 2; fc 10; softmax\n"
                     "- course accuracy: 0.7825 (first 1200 images)\n")
    joined = " ".join(line.strip() for line in lines)  # wrapped values rejoined
    for m in MODELS.values():
        d = model_dict(m)
        for value in (d["semester"], d["spec"], d["reference_accuracy"], *(c["shape"] for c in d["conv_layers"])):
            assert value in joined, (m.name, value)


def test_run_table_at_80_columns_units_and_no_empty_comparisons(cli, tmp_path):
    r = cli("run", "--model", "ece408", "--variant", "cpu", "--images", "20", "--out", str(tmp_path), "--width", "80")
    assert r.returncode == 0, r.stderr
    assert _widest(r.stdout) <= 80 and "…" not in r.stdout
    assert "vs naive" not in r.stdout and "vs cuDNN" not in r.stdout  # nothing to compare on a CPU-only run
    row = next(line for line in r.stdout.splitlines() if line.split()[:3] == ["20", "cpu", "conv1"])
    assert row.split()[4] in ("s", "ms", "µs")  # "12.3 ms": the Op Time keeps its unit
    assert "synthetic data" in r.stdout and "its Correctness cannot be compared with the course's" in " ".join(r.stdout.split())


def test_unreadable_input_and_closed_stdin_are_one_line(cli, monkeypatch):
    import sys

    r = cli("parse", "/proc/self/mem")
    assert r.returncode == 2 and r.stderr.startswith("error: /proc/self/mem: cannot be read")
    monkeypatch.setattr(sys, "stdin", None)
    from profconv.commands.parse import parse_command

    with pytest.raises(Exception, match="standard input is closed"):
        parse_command(["-"])


def test_markdown_in_a_terminal_falls_back_to_the_text_when_a_table_is_too_wide():


    from profconv.ui import print_markdown

    md = "# Title\n\n| variant | Op Time |\n| --- | ---: |\n| " + "x" * 90 + " | 2.073 ms |\n"
    narrow = terminal_console(80)
    print_markdown(narrow, md)
    assert "| " + "x" * 90 + " | 2.073 ms |" in narrow.file.getvalue()  # nothing cut
    wide = terminal_console(200)
    print_markdown(wide, md)
    assert "# Title" not in wide.file.getvalue() and "2.073 ms" in wide.file.getvalue()  # rendered by rich


def test_width_holds_in_a_dumb_terminal(monkeypatch):
    """--width N in a terminal whose TERM is dumb (Emacs' shell, some CI runners): rich, given a width
    alone, lays such a terminal out for 80 columns."""
    import io

    from profconv import ui

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr("sys.stdout", Terminal())
    monkeypatch.setattr(ui, "_width", 150)
    con = ui.console()
    assert con.is_terminal and con.is_dumb_terminal and con.width == 150


def test_headings_fit_or_print_whole(cli):
    r = cli("parse", "tests/data/seeds/002_b0bcac5cefbf4480.log", "--width", "40")
    assert r.returncode == 0
    heading = "Profile 1 · nvprof · tests/data/seeds/002_b0bcac5cefbf4480.log lines 14-33"
    assert "".join(heading.split()) in "".join(r.stdout.split())  # folded over lines (no trailing spaces), whole


def test_shell_completion_completes_command_names_and_options(cli):
    env = {"_PROFCONV_COMPLETE": "complete_bash", "COMP_WORDS": "profconv pa", "COMP_CWORD": "1"}
    assert cli(env=env).stdout.split() == ["parse"]
    env = {"_PROFCONV_COMPLETE": "complete_bash", "COMP_WORDS": "profconv parse --fo", "COMP_CWORD": "2"}
    assert cli(env=env).stdout.split() == ["--format"]


def test_table_cells_are_never_markup():
    import io

    from rich.console import Console

    from profconv.render.format import Column, fitted_table

    con = Console(file=io.StringIO(), width=80, color_system=None)
    con.print(fitted_table("t", [Column("name", ["k[/x]", "[red]gone[/red]"], justify="left", wrap=True)], 80))
    out = con.file.getvalue()
    assert "k[/x]" in out and "[red]gone[/red]" in out


@pytest.mark.parametrize("value", [",", "", " , "])
def test_an_option_that_names_nothing_is_refused_not_every_variant(cli, value):
    r = cli("run", "--variant", value, "--images", "5")
    assert r.returncode == 2
    assert r.stderr.strip() == f"error: --variant names nothing ({value!r}): give at least one name"
    assert "Op Time" not in r.stdout


def test_parse_refuses_a_device_instead_of_reading_it_forever(cli):
    r = cli("parse", "/dev/zero")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: /dev/zero: a device or socket, not a file (pipe it in with '-' if you mean to)"


def test_a_gzip_bomb_is_one_line_not_a_memory_error(tmp_path, monkeypatch):
    from profconv import io as pio
    from profconv.errors import DataFileError, InputError

    bomb = gzip.compress(b"x" * (3 << 20))
    with pytest.raises(InputError, match=r"x.gz: expands to more than 2 MiB; split it"):
        pio.gunzip(bomb, "x.gz", limit=2 << 20)
    with pytest.raises(DataFileError, match=r"d.gz: corrupt gzip data"):
        pio.gunzip(b"\x1f\x8b" + b"not gzip at all", "d.gz", error=DataFileError)
    assert pio.gunzip(gzip.compress(b"abc" * 1000), "ok.gz", limit=3000) == b"abc" * 1000
    monkeypatch.setattr(pio, "MAX_GUNZIP_BYTES", 2 << 20)
    monkeypatch.setattr(pio.gunzip, "__defaults__", (2 << 20, InputError))
    path = tmp_path / "bomb.log.gz"
    path.write_bytes(bomb)
    from profconv.parse.core import read_text

    with pytest.raises(InputError, match=r"bomb.log.gz: expands to more than 2 MiB"):
        read_text(str(path))


@pytest.mark.parametrize("args", [
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--json"],
    ["--csv", "tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log",
     "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log"],
    ["does/not/exist.log", "--json"],  # one line, exit 2
    ["tests/data/SOURCES.md", "--csv"],  # no profile found
    ["-", "--json"],  # stdin
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log"],  # the tables
    ["tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log", "-"],
    ["does/not/exist.log"],
    ["tests/data/ncu-text/eduardo4jesus-hw8-smem-transpose-metrics.log", "--all"],  # every metric row
    ["--full-names", "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--all"],
    ["--all", "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--json"],
    ["-", "--full-names"],
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--profile", "1", "--width=60"],
    ["--threshold", "0.95", "tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--json"],
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--format=nsys", "--csv", "--threshold=1"],
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--profile", "2"],  # no profile 2: exit 2
    ["tests/data/nsys-text/ayush-os-a100-vectoradd-stats.log", "--format", "ncu"],  # no ncu output: exit 2
])
def test_parse_json_csv_without_the_app_is_the_same(tmp_path, args):
    """`profconv parse FILE... [--json|--csv] [--all] [--full-names]` runs without building the Typer app
    (pydantic is not imported): the same bytes, messages and exit status as through the app (an
    extra `--no-strict`, the default, sends the same command line through it)."""
    import subprocess
    import sys

    log = open("tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log", "rb").read()
    # which path ran: whether Typer built its command (any typer version; typer 0.27 has no pydantic)
    code = ("import sys, atexit, typer.main as tm\n"
            "built = []\n"
            "get = tm.get_command\n"
            "tm.get_command = lambda *a, **k: (built.append(1), get(*a, **k))[1]\n"
            "atexit.register(lambda: sys.stderr.write('\\n#' + (built and 'APP' or 'FAST')"
            " + ('+pydantic' if 'pydantic' in sys.modules else '')))\n"
            "from profconv.cli import main\nmain(sys.argv[1:])")
    fast = subprocess.run([sys.executable, "-c", code, "parse", *args], input=log, capture_output=True)
    app = subprocess.run([sys.executable, "-c", code, "parse", *args, "--no-strict"], input=log,
                         capture_output=True)
    fast_err, _, fast_path = fast.stderr.rpartition(b"\n#")
    app_err, _, app_path = app.stderr.rpartition(b"\n#")
    assert fast_path == b"FAST" and app_path.startswith(b"APP")  # the fast path imports no pydantic either
    assert (fast.returncode, fast.stdout, fast_err) == (app.returncode, app.stdout, app_err)
    assert fast.returncode == (2 if "SOURCES" in args[0] or "exist" in args[0] or args[-1] in ("2", "ncu") else 0)
    assert fast.stdout.startswith((b"{", b"source,")) or fast.returncode or args[-1] not in ("--json", "--csv")
    assert len(fast.stdout) > 200 or fast.returncode


def test_an_error_with_no_descriptor_left_is_said_in_plain_text(monkeypatch, capsys):
    """Where the process's open files are all taken, rich cannot even be imported to say the error:
    the line is written plain (no traceback)."""
    import builtins

    from profconv import cli as cli_module

    real = builtins.__import__

    def no_descriptor(name, *args, **kwargs):
        if name.startswith(("rich", "profconv.ui")):
            raise OSError(24, "Too many open files")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_descriptor)
    cli_module._say("s209.log: cannot be read (Too many open files)")
    monkeypatch.setattr(builtins, "__import__", real)
    assert capsys.readouterr().err == "error: s209.log: cannot be read (Too many open files)\n"


@pytest.mark.parametrize("args, kw", [
    (["a.log"], {}),
    (["a.log", "--all", "--full-names", "--json"], {"all_rows": True, "full_names": True, "as_json": True}),
    (["a.log", "--profile", "3", "--width=80"], {"profile": 3, "width": 80}),
    (["--threshold=0.95", "a.log", "--format", "nsys"], {"threshold": 0.95, "format": "nsys"}),
    (["a.log", "--threshold", "1.0"], {"threshold": 1.0}),
    (["a.log", "--profile", "0"], None), (["a.log", "--profile", "01"], None), (["a.log", "-p", "2"], None),
    (["a.log", "--profile"], None), (["a.log", "--width", "39"], None), (["a.log", "--width", "10001"], None),
    (["a.log", "--threshold", "0"], None), (["a.log", "--threshold", "1.5"], None),
    (["a.log", "--threshold", ".95e0"], None), (["a.log", "--format", "gprof"], None),
    (["a.log", "--json", "--csv"], None), (["a.log", "--all", "--all"], None), (["a.log", "--strict"], None),
    (["--", "a.log"], None), (["--all"], None), (["a.log", "--profile", "1", "--profile", "2"], None),
])
def test_which_parse_command_lines_take_the_fast_path(args, kw):
    """What the fast path takes, and what it leaves to the app (which says what it says of a value of
    another form, or a second --profile)."""
    from profconv.cli import _fast_args

    got = _fast_args(args)
    if kw is None:
        assert got is None
    else:
        assert got is not None and got[0] == ["a.log"]
        assert {k: getattr(v, "value", v) for k, v in got[1].items()} == kw
