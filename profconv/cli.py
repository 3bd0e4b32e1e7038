"""The profconv command line: per-noun commands loaded only when used, every failure one line.

`main()` is the console script. The Typer app is built on first use (`profconv.cli.app`), and each
command's module is imported only when that command runs, so `profconv --help` imports neither
pandas nor NumPy. The group's `main` translates every outcome into an exit status (see
`profconv.errors`), so Typer's CliRunner sees exactly what a user sees:

- usage errors (unknown option, missing argument, bad choice or value): Typer/click's own message, exit 2;
- a ProfconvError: one line `error: …`, its documented exit status;
- the OS refusing a write (disk full, permission): one line, exit 5; a closed pipe (`| head`): exit 0;
- Ctrl-C, also while importing, or SIGTERM: exit 130, no traceback (a run keeps its partial record);
- anything else is a bug: one line naming it, exit 1.
`--traceback` (anywhere on the command line) or PROFCONV_TRACEBACK=1 re-raises instead.
"""

import errno
import importlib
import os
import signal
import sys
import threading
from typing import Any

from profconv import __version__
from profconv.errors import EXIT_CODES_HELP, ExitStatus

# name -> (module, function, one-line help shown by `profconv --help` without importing the module;
# tests/test_cli.py checks that it is the first line of the function's docstring)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("profconv.commands.run", "run_command",
            "Run each convolution variant, and your own kernels, on a model's forward pass: Op Time, check, Correctness."),
    "bench": ("profconv.commands.bench", "bench_command",
              "Time every variant and cuDNN on every layer shape: ratios to cuDNN, shares of the roofline floor."),
    "parse": ("profconv.commands.parse", "parse_command",
              # parse_files.__doc__, from the dialect registry (tests/test_cli.py holds them equal)
              "Read nvprof, Nsight Systems, Nsight Compute, OpenACC timing, CUDA profiler or rocprof logs and rank what "
              "takes the time."),
    "report": ("profconv.commands.report", "report_command",
               "Write the report: environment, Op Times, speedups, the ladder, efficiency, plots, >=90% tables."),
    "explain": ("profconv.commands.explain", "explain_command",
                "Why each conv kernel of a run takes its time, and what to try next (diagnosis + ranked advice)."),
    "models": ("profconv.commands.models", "models_command", "List the models with their layer shapes."),
    "kernel": ("profconv.commands.kernel", "app",
               "Start your own convolution kernel: profconv kernel new NAME --contract device|host|course|python."),
    "grade": ("profconv.commands.grade", "grade_command",
              "Grade a class: each submission x model checked and timed in isolation, then the leaderboard and ranking."),
}

HELP = ("Run, check and profile CUDA convolution kernels; parse any profiler's text output.\n\n"
        + EXIT_CODES_HELP + " PROFCONV_TRACEBACK=1 or --traceback shows the full trace of an error.")

_traceback = False
_app: Any = None
_loaded: dict[str, Any] = {}  # command name -> its click command, built on first use


def _want_traceback() -> bool:
    return _traceback or bool(os.environ.get("PROFCONV_TRACEBACK"))


def _pop_traceback_flag(args: list[str]) -> list[str]:
    """`--traceback` works before or after the command name (not after a `--`)."""
    global _traceback
    end = args.index("--") if "--" in args else len(args)
    _traceback = "--traceback" in args[:end]
    if _traceback:
        return [a for i, a in enumerate(args) if not (i < end and a == "--traceback")]
    return args


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _term_as_interrupt():
    """SIGTERM (`kill`, `timeout`, a batch system's limit) ends a command as Ctrl-C does: a run or bench
    keeps its partial record marked interrupted, exit 130. Returns the handler to put back (None off
    the main thread, where signals cannot be caught)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)


def _silence_stdout() -> None:
    """After a closed pipe or a full disk: point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (CliRunner): nothing to silence
        pass


def _say(message: str) -> None:
    try:
        from rich.markup import escape

        from profconv.ui import error_console
    except OSError:  # no descriptor left to import with (the process's open-file limit): plain text
        try:
            sys.stderr.write(f"error: {message}\n")
        except (OSError, ValueError):
            pass
        return
    try:
        error_console().print(f"[red]error:[/red] {escape(message)}", highlight=False)
    except (OSError, ValueError):  # stderr full or closed (2>/dev/full): the exit status still says it
        pass


def _is_usage_error(exc: BaseException) -> bool:
    """click's and typer's vendored click's exceptions alike (typer 0.27 and 0.29+): they show themselves."""
    names = {c.__name__ for c in type(exc).__mro__}
    return ("ClickException" in names or callable(getattr(exc, "show", None))) and isinstance(
        getattr(exc, "exit_code", None), int)


def _guarded(call) -> int:
    """Run the command line; return its exit status, with every failure said in one line."""
    from profconv.errors import ProfconvError, describe_os_error

    try:
        rv = call()
        sys.stdout.flush()  # surface a full disk or a closed pipe here, not in the interpreter's exit
        return rv if isinstance(rv, int) else 0
    except ProfconvError as exc:
        if _want_traceback():
            raise
        _say(str(exc))
        return int(exc.exit_status)
    except KeyboardInterrupt:
        return int(ExitStatus.INTERRUPTED)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            _silence_stdout()
            return int(ExitStatus.OK)
        if _want_traceback():
            raise
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            _silence_stdout()
            _say(f"writing the output failed: {exc.strerror}"
                 + (f" ({exc.filename})" if exc.filename is not None else ""))
        else:
            _say(describe_os_error(exc))
        return int(ExitStatus.SYSTEM)
    except MemoryError:
        _say("out of memory: the input is too large for this machine's memory (split it, or parse a part with "
             "`--profile N`)")
        return int(ExitStatus.SYSTEM)
    except Exception as exc:
        if _is_usage_error(exc):
            if getattr(exc, "option_name", None) == "-v" and isinstance(getattr(exc, "message", None), str):
                exc.message += " (profconv gives -v no meaning: write --variant; -V is --version)"  # type: ignore[attr-defined]
            _hint_stdin(exc)
            exc.show()  # type: ignore[attr-defined]
            return int(exc.exit_code)  # type: ignore[attr-defined]
        if type(exc).__name__ == "Abort":
            return int(ExitStatus.INTERRUPTED)
        if _want_traceback():
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        _say(f"internal error (a bug in profconv, please report it): {type(exc).__name__}: {first} "
             "— rerun with --traceback for the full trace")
        return int(ExitStatus.FAILURE)


def _hint_stdin(exc) -> None:
    """`cat log | profconv parse` (no FILE): the missing argument's message says to write `-`."""
    param = getattr(exc, "param", None)
    if getattr(param, "name", None) != "files" or type(exc).__name__ != "MissingParameter":
        return
    stdin = sys.stdin
    if stdin is not None and not stdin.isatty():
        exc.message = ("Input is piped in but no FILE is named: write - to read standard input "  # type: ignore[attr-defined]
                       "(`... | profconv parse -`)")


def _type_word(param) -> str:
    """A metavar from an option's type, on typer 0.27 (click types) and 0.29 (type descriptors) alike."""
    choices = getattr(getattr(param, "type", None), "choices", None)  # click.Choice
    descriptor = getattr(param, "type_descriptor", None)
    if choices is None and getattr(descriptor, "is_choice", False):
        choices = getattr(descriptor, "choices", None)
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    name = getattr(getattr(param, "type", None), "name", None)
    if name is None:
        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        args = getattr(annotation, "__args__", None)
        annotation = args[0] if args else annotation
        name = getattr(annotation, "__name__", "text")
    name = str(name).split()[0].lower()
    return {"int": "N", "integer": "N", "float": "NUMBER", "path": "PATH"}.get(name, "TEXT")


def _tidy_help(cmd) -> None:
    """One help layout on typer 0.27 and 0.29: click's plain two columns (readable at 80 columns, the
    same in a terminal, a pipe or a file), flags without a `<bool>`, every value named in capitals
    (`--model MODEL`, never `<str>` or `<list[str]>`), arguments as `FILE...` (never `{files}...`)."""
    cmd.rich_markup_mode = None
    make_help_option = cmd.get_help_option

    def get_help_option(ctx):
        option = make_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    cmd.get_help_option = get_help_option
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "argument":
            if p.metavar is None:
                p.metavar = p.name.upper().rstrip("S") if p.nargs != 1 else p.name.upper()
            piece = p.metavar + ("..." if p.nargs != 1 else "")
            piece = piece if p.required else f"[{piece}]"
            p.get_usage_pieces = lambda ctx, piece=piece: [piece]
            p.make_metavar = lambda *a, metavar=p.metavar, **k: metavar  # the Arguments list: FILE, not <str> (0.27)
            p.display_type_rich = lambda *a, **k: None  # (0.29)
        elif getattr(p, "is_flag", False):
            if p.metavar is None:
                p.metavar = ""
        elif p.metavar is None:
            p.metavar = _type_word(p)
    for sub in getattr(cmd, "commands", {}).values():  # `profconv kernel new`
        if sub.short_help is None and sub.help:  # listed whole (wrapped), not cut at click's 45 characters
            sub.short_help = " ".join(sub.help.strip().split("\n\n")[0].split())
        _tidy_help(sub)


def _build_app():
    import typer
    from typer.core import TyperGroup
    from typer.main import get_command

    from profconv.commands._options import Width

    def command_from(name: str, func) -> Any:
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(name, context_settings={"help_option_names": ["-h", "--help"]})(func)
        cmd = get_command(single)
        cmd.name = name
        _tidy_help(cmd)
        return cmd

    def stub(name: str) -> Any:
        def listed() -> None:
            pass

        listed.__doc__ = COMMANDS[name][2]
        cmd = command_from(name, listed)
        cmd.short_help = COMMANDS[name][2]  # listed whole (wrapped), not cut at click's 45 characters
        return cmd

    class LazyGroup(TyperGroup):
        """Commands listed from COMMANDS; a command's module is imported only when that command runs."""

        _resolving = False

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            _tidy_help(self)

        def list_commands(self, ctx) -> list[str]:
            return list(COMMANDS)

        def get_command(self, ctx, cmd_name: str):
            if cmd_name not in COMMANDS:
                return None
            if not self._resolving:
                return stub(cmd_name)  # help listing and shell completion of command names
            if cmd_name not in _loaded:
                module, attr, _ = COMMANDS[cmd_name]
                obj = getattr(importlib.import_module(module), attr)
                if isinstance(obj, typer.Typer):  # a noun with sub-commands (`profconv kernel new`)
                    cmd = get_command(obj)
                    cmd.name = cmd_name
                    _tidy_help(cmd)
                    _loaded[cmd_name] = cmd
                else:
                    _loaded[cmd_name] = command_from(cmd_name, obj)
            return _loaded[cmd_name]

        def resolve_command(self, ctx, args):
            name = args[0] if args else ""
            if name and name not in COMMANDS and not name.startswith("-") and not ctx.resilient_parsing:
                from profconv.errors import did_you_mean

                ctx.fail(f"No such command {name!r}{did_you_mean(name, COMMANDS)}.")  # `prase`: did you mean 'parse'?
            self._resolving = True
            try:
                return super().resolve_command(ctx, args)
            finally:
                self._resolving = False

        def invoke(self, ctx):
            try:
                return super().invoke(ctx)
            except BrokenPipeError:  # `profconv parse x | head`: the reader has what it wanted
                _silence_stdout()
                raise typer.Exit(int(ExitStatus.OK)) from None

        def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
            from profconv import ui

            ui.set_width(None)  # per invocation (CliRunner runs many in one process)
            argv = list(sys.argv[1:] if args is None else args)
            argv = _pop_traceback_flag(argv) or ["--help"]  # `profconv` alone shows the help, exit 0
            if len(argv) == 1 and argv[0] in COMMANDS and COMMANDS[argv[0]][1] == "app":
                argv.append("--help")  # so does a noun with sub-commands alone (`profconv kernel`)
            if argv[0] == "help" and "help" not in COMMANDS:
                argv = [*argv[1:], "--help"]  # `profconv help run`, as git and pip take it
            previous = _term_as_interrupt()
            try:
                code = _guarded(lambda: super(LazyGroup, self).main(
                    args=argv, prog_name=prog_name or "profconv", complete_var=complete_var,
                    standalone_mode=False, **extra))
            finally:
                if previous is not None:
                    signal.signal(signal.SIGTERM, previous)
            if standalone_mode:
                sys.exit(code)
            return code

    def show_version(value: bool) -> None:
        if value:
            print(f"profconv {__version__}")
            raise typer.Exit()

    app = typer.Typer(cls=LazyGroup, name="profconv", help=HELP, no_args_is_help=True, add_completion=True,
                      pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})

    @app.callback()
    def root(
        version: bool = typer.Option(False, "--version", "-V", callback=show_version, is_eager=True,
                                     help="Print profconv's version and exit."),
        traceback: bool = typer.Option(False, "--traceback",
                                       help="Show the full Python traceback of an error (also PROFCONV_TRACEBACK=1)."),
        width: Width = None,
    ) -> None:
        pass

    return app


def __getattr__(name: str) -> Any:
    """`profconv.cli.app`, the Typer app, built on first use (tests hand it to CliRunner)."""
    global _app
    if name == "app":
        if _app is None:
            _app = _build_app()
        return _app
    raise AttributeError(f"module 'profconv.cli' has no attribute {name!r}")


# parse's options the fast command line takes: switches, and options whose value it checks as Typer would
# (a value of another form -- '01', '.95e0', '-p 2' -- goes to the app, which says what it says of it)
_FAST_FLAGS = {"--json": "as_json", "--csv": "as_csv", "--all": "all_rows", "--full-names": "full_names"}


def _count(low: int, high: int) -> Any:
    return lambda v: int(v) if v.isascii() and v.isdigit() and v[0] != "0" and low <= int(v) <= high else None


def _share_value(v: str) -> float | None:
    import re

    return float(v) if re.fullmatch(r"0?\.[0-9]*[1-9][0-9]*|1(?:\.0*)?", v) else None


def _format_value(v: str) -> Any:
    from profconv.commands.parse import Format

    return Format(v) if v in Format.__members__ else None


def _fast_values() -> dict[str, tuple[str, Any]]:
    from profconv import ui

    return {"--profile": ("profile", _count(1, 10**9)), "--width": ("width", _count(ui.MIN_WIDTH, ui.MAX_WIDTH)),
            "--threshold": ("threshold", _share_value), "--format": ("format", _format_value)}


def _fast_args(argv: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """The files and parse_files' keywords of a `parse` command line the fast path takes (each option
    once, not --json and --csv both), else None."""
    files: list[str] = []
    kw: dict[str, Any] = {}
    values = _fast_values()
    tokens = iter(argv)
    for a in tokens:
        if a == "-" or not a.startswith("-"):
            files.append(a)
            continue
        name, eq, value = a.partition("=")
        if name in _FAST_FLAGS and not eq and _FAST_FLAGS[name] not in kw:
            kw[_FAST_FLAGS[name]] = True
        elif name in values and values[name][0] not in kw:
            key, read = values[name]
            got = read(value if eq else next(tokens, ""))
            if got is None:
                return None
            kw[key] = got
        else:
            return None
    return (files, kw) if files and not (kw.get("as_json") and kw.get("as_csv")) else None


def _fast_parse(argv: list[str]) -> int | None:
    """`profconv parse FILE...` with switches (`--json` or `--csv`, `--all`, `--full-names`) and the
    options `--profile`, `--width`, `--threshold`, `--format` of values Typer takes as they are: the
    command run without building the Typer app -- the same function, errors and exit statuses, minus
    ~0.1 s and ~18 MiB of every such run (typer 0.29 converts each parameter through pydantic,
    imported for it). None for any other command line (`--strict`, `--traceback`, `--`, a short
    option, a value of another form, shell completion): the app takes it."""
    global _traceback
    if len(argv) < 2 or argv[0] != "parse" or os.environ.get("_PROFCONV_COMPLETE"):
        return None
    got = _fast_args(argv[1:])
    if got is None:
        return None
    files, kw = got
    from profconv import ui

    ui.set_width(kw.get("width"))  # (the app's --width callback: eager, before the command runs)
    _traceback = False
    previous = _term_as_interrupt()

    def run() -> None:
        from profconv.commands.parse import parse_files  # the command's function, without typer

        parse_files(files, **kw)

    try:
        return _guarded(run)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _prepare_streams() -> None:
    """Output that any stdout can take: a closed stdout (`>&-`) becomes /dev/null with one warning on
    stderr; an encoding that cannot hold every name (PYTHONIOENCODING=cp1252, latin-1, a Windows
    redirect) replaces what it cannot encode instead of failing half-way through a table."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
        if sys.stderr is not None:
            sys.stderr.write("warning: standard output is closed: nothing is printed there\n")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        if encoding not in ("utf-8", "utf8") and getattr(stream, "errors", "strict") == "strict":
            try:
                stream.reconfigure(errors="replace")  # type: ignore[union-attr]
            except (AttributeError, ValueError, OSError):
                pass


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point; Ctrl-C while the libraries are still importing exits 130 quietly."""
    _prepare_streams()
    code = _fast_parse(list(sys.argv[1:] if argv is None else argv))
    if code is not None:
        _exit_quietly(code)
    try:
        app = __getattr__("app")
        from typer.main import get_command

        command = get_command(app)
    except KeyboardInterrupt:
        sys.exit(int(ExitStatus.INTERRUPTED))
    try:
        command.main(args=argv, prog_name="profconv")
    except SystemExit as done:
        _exit_quietly(done.code if isinstance(done.code, int) else 0 if done.code is None else 1)


def _exit_quietly(code: int) -> None:
    """The command has finished and said its status: a SIGTERM from here on (the ~50 ms the interpreter
    takes to shut down) no longer turns a finished command into a process killed by signal 15."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(code)
