"""`profconv parse` tables in a file or a pipe written without rich's layout (render/plain): the
same bytes as rich prints, for every parseable file of tests/data and for synthetic tables (long
and wide-character names, empty cells, marks, notes, captions, dropped columns, several
profiles), under every table option; and rich still draws what the plain writer does not cover."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.errors import MarkupError
from rich.text import Text

from profconv import ui
from profconv.errors import ProfconvError
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.render import plain, ranked_text
from profconv.render.format import Column, fit_table
from profconv.render.profile_tables import TableOptions, render

DATA = Path("tests/data")


def _console(width: int = ui.PLAIN_WIDTH, **kw):
    """The console `profconv parse` prints to in a pipe (profconv.ui.console), on a buffer."""
    buf = io.StringIO()
    con = ui._console_class()(file=ui.TrimmedLines(buf), highlight=False, soft_wrap=False, width=width, **kw)
    return con, buf


class Counter:
    """plain.Writer's table and line, counting what they wrote (a test that compares rich with rich
    proves nothing)."""

    def __init__(self, monkeypatch):
        self.tables = self.lines = self.refused = 0
        table, line = plain.Writer.table, plain.Writer.line

        def counted_table(writer, t):
            done = table(writer, t)
            self.tables += done
            self.refused += not done
            return done

        def counted_line(writer, text, markup=False):
            done = line(writer, text, markup)
            self.lines += done
            return done

        monkeypatch.setattr(plain.Writer, "table", counted_table)
        monkeypatch.setattr(plain.Writer, "line", counted_line)
        blocks = ranked_text.blocks

        def counted_blocks(*args, **kw):  # ranked tables laid out a run of profiles at a time
            got = blocks(*args, **kw)
            done = [b for bs in got.values() for b in bs if b.text is not None]
            self.tables += len(done)
            self.lines += sum(b.summary is None for b in done)  # the summary line written with its table
            return got

        monkeypatch.setattr(ranked_text, "blocks", counted_blocks)


def _both(monkeypatch, ps: ProfileSet, opts: TableOptions, width: int = ui.PLAIN_WIDTH, set_width=None) -> str:
    """The parse output of `ps` through the plain writer and through rich alone; asserts they are the
    same bytes and returns them."""
    ui.set_width(set_width)
    try:
        con, fast = _console(width)
        render(ps, con, opts)
        with monkeypatch.context() as m:
            m.setattr(plain, "enabled", lambda con: False)
            con, slow = _console(width)
            render(ps, con, opts)
    finally:
        ui.set_width(None)
    assert fast.getvalue() == slow.getvalue()
    return fast.getvalue()


def _parsed_files() -> list[tuple[str, ProfileSet]]:
    out = []
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.name == "SOURCES.md":
            continue
        try:
            ps = parse(str(path))
        except ProfconvError:  # no profile in it (gprof, --help, JSON records...)
            continue
        if ps.profiles:
            out.append((str(path), ps))
    return out


@pytest.fixture(scope="module")
def parsed():
    files = _parsed_files()
    assert len(files) >= 60, [p for p, _ in files]
    return files


OPTIONS = [
    TableOptions(),
    TableOptions(threshold=0.5, max_rows=None),
    TableOptions(threshold=0.99, max_rows=3, full_names=True),
]


@pytest.mark.parametrize("opts", OPTIONS, ids=["default", "threshold-all", "full-names-top3"])
def test_every_data_file_same_bytes_as_rich(monkeypatch, parsed, opts):
    """Every file under tests/data that parses: the plain writer's output is rich's, byte for byte,
    and the plain writer did write most tables (what it refuses goes to rich)."""
    count = Counter(monkeypatch)
    for path, ps in parsed:
        out = _both(monkeypatch, _rethresholded(ps, opts.threshold), opts)
        assert out, path
    # tables: the plain writer draws nearly all; a few have a title wider than the table (rich wraps)
    assert count.tables > 200 and count.refused < count.tables / 10, (count.tables, count.refused)
    assert count.lines > 300


def _rethresholded(ps: ProfileSet, threshold: float) -> ProfileSet:
    if threshold != 0.90:
        ps = parse(ps.source) if isinstance(ps.source, str) else ps
        ps.rethreshold(threshold)
    return ps


@pytest.mark.parametrize("width", [80, 120])
def test_data_files_at_a_set_width_same_bytes_as_rich(monkeypatch, parsed, width):
    """--width N in a pipe: headings are rules (rich), tables that need columns dropped carry the
    caption saying so, names that must fold go to rich; the bytes are rich's."""
    count = Counter(monkeypatch)
    for _, ps in parsed[::3]:
        _both(monkeypatch, ps, TableOptions(), width=width, set_width=width)
    assert count.tables > 10 and count.refused > 0


NVPROF = """==1== NVPROF is profiling process 1, command: ./{cmd}
==1== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   60.00%  3.0000ms         3  1.0000ms  1.0000ms  1.0000ms  {a}
                   30.00%  1.5000ms         2  750.00us  700.00us  800.00us  {b}
                   10.00%  500.00us         1  500.00us  500.00us  500.00us  [CUDA memcpy HtoD]
      API calls:   90.00%  9.0000ms         1  9.0000ms  9.0000ms  9.0000ms  cudaMalloc
                   10.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  cudaFree
"""

NAMES = {
    "long": ("conv_forward_kernel_" + "x" * 300 + "(float*, float const*, int)", "b"),
    "cjk": ("卷积核_前向(float*)", "カーネル二"),
    "mixed-width": ("conv_ÄÖÜ_é_ß_Ω_Ж", "naïve·kernel—µs ≥ ±"),
    "brackets": ("kernel[red]x[/red]", "void f<[1], 2>(int)"),
    "emoji-code": ("kern:smile:el", "a::b::c"),
    "spaces": ("a  b   c", "void k<int, 3>(float const*, int)"),
    "combining": ("cafe\u0301_kernel", "zero\u200bwidth"),
    "fullwidth": ("ＡＢＣ_kernel", "한국어_커널"),
}


@pytest.mark.parametrize("kind", list(NAMES))
@pytest.mark.parametrize("cmd", ["a", "a:smile: [b]", "dir\\a"])
def test_synthetic_names_same_bytes_as_rich(tmp_path, monkeypatch, kind, cmd):
    """Long, wide (CJK: two cells a character), accented, bracketed (rich markup), emoji-code and
    zero-width names, a command line rich reads as markup: three profiles, every option."""
    a, b = NAMES[kind]
    count = Counter(monkeypatch)
    log = tmp_path / "s.log"
    log.write_text("".join(NVPROF.format(cmd=cmd, a=a, b=b).replace("==1==", f"=={i}==") for i in (1, 2, 3)),
                   encoding="utf-8")
    ps = parse(str(log))
    assert len(ps.profiles) == 3
    for opts in OPTIONS[:2] + [TableOptions(max_rows=1, full_names=True)]:
        _both(monkeypatch, _rethresholded(ps, opts.threshold), opts)
    plain_gpu_tables = count.tables - 9  # the 3 profiles' API tables under 3 options go plain
    for width in (60, 200):
        _both(monkeypatch, ps, TableOptions(), width=width, set_width=width)
    # names rich measures as printable text (wide ones included) are written plain; a combining
    # accent or a zero-width space goes to rich
    assert plain_gpu_tables == (0 if kind == "combining" else 9)


def _same(t, width: int = ui.PLAIN_WIDTH) -> bool:
    """One fitted table written by plain.Writer.table (when it takes it) and printed by rich: the same
    bytes. Returns whether the writer took it."""
    con, fast = _console(width)
    took = plain.Writer(con).table(t)
    con, slow = _console(width)
    try:
        con.print(t.rich())
    except MarkupError:  # a header such as '[/]' is rich markup that rich itself refuses
        assert not took
        return took
    if took:
        assert fast.getvalue() == slow.getvalue()
    else:
        assert fast.getvalue() == ""
    return took


def _cols(names, nums=("1 ms", "—"), header="Name", justify="left"):
    return [
        Column("", [Text("●", style="green"), Text("")]),
        Column("Total", list(nums), drop=2),
        Column("Calls", ["12,345", ""], drop=1),
        Column(header, [Text(n, style="bold") for n in names], justify=justify, wrap=True),
    ]


@pytest.mark.parametrize(("names", "took"), [
    (["conv", "memcpy"], True),
    (["", ""], True),  # empty name cells
    (["卷积核", "カーネル"], True),  # two cells a character
    (["a" * 2000, "b"], False),  # wider than the console: rich folds
    (["tab\there", "b"], False),
    (["line\nbreak", "b"], False),
    (["zwj\u200dx", "b"], False),
    (["trailing  ", "  leading"], True),
])
def test_tables_same_bytes_as_rich(names, took):
    assert _same(fit_table("GPU activities", _cols(names), 1000)) is took


def test_captions_titles_headers():
    """Captions of one and two lines (the ≥90% mark, the rows not shown, the columns dropped), a
    title wider than the table (rich centres and wraps it: refused), a caption wider than the table
    (wrapped as rich wraps it), markup in a header (refused)."""
    wide = ["conv_forward_kernel_with_a_long_name(float*)", "m"]
    assert _same(fit_table("Kernels", _cols(wide), 1000, caption="bold: the rows that take the ≥90% share"))
    t = fit_table("Kernels", _cols(wide), 1000, caption="bold: the rows that take the ≥90% share\n2 more row(s)")
    assert _same(t)
    t = fit_table("Kernels", _cols(["k" * 30, "m"]), 44, caption="2 more row(s) not shown")
    assert t.caption == "2 more row(s) not shown\nCalls not shown at 44 columns (--width N shows them)"
    assert _same(t, 44)  # its second caption line wraps at the table's width, as rich wraps it
    assert not _same(fit_table("A title much longer than the table itself is", _cols(["c", "m"]), 1000))
    assert _same(fit_table("t", _cols(["c", "m"]), 1000, caption="a caption much longer than this table is"))  # wrapped
    assert not _same(fit_table("t", _cols(["conv", "m"], header="Name [ns]"), 1000))
    assert not _same(fit_table("[b]t[/b]", _cols(["conv", "m"]), 1000))
    assert _same(fit_table("", _cols(["conv", "m"]), 1000))  # no title line
    assert _same(fit_table("t", _cols(["c", "m"], justify="right"), 1000))


def test_rich_keeps_terminals_colour_and_capture(monkeypatch):
    """A terminal, colour (a colour system, FORCE_COLOR in a pipe), ASCII output (rich draws ASCII
    boxes) and a captured console are rich's."""
    con, _ = _console()
    assert plain.writer(con) is not None
    with con.capture():
        assert plain.writer(con) is None
    assert plain.writer(_console(force_terminal=True)[0]) is None
    assert plain.writer(_console(color_system="standard")[0]) is None
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert plain.writer(ui._console_class()(file=ascii_out, highlight=False, soft_wrap=False, width=1000)) is None
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert plain.writer(_console()[0]) is None


def test_cli_parse_in_a_pipe_same_bytes_as_rich(monkeypatch, tmp_path):
    """`profconv parse LOG...` in-process (stdout not a terminal): the plain writer's bytes are rich's."""
    from typer.testing import CliRunner

    from profconv.cli import app

    log = tmp_path / "p.log"
    log.write_text("".join(NVPROF.format(cmd="a", a="conv(float*)", b="卷积核").replace("==1==", f"=={i}==")
                           for i in range(5)), encoding="utf-8")
    files = [str(log), "tests/data/nvprof-old/" + sorted(p.name for p in (DATA / "nvprof-old").iterdir())[0]]
    runner = CliRunner()
    for extra in ([], ["--threshold", "0.5", "--all"], ["--full-names"], ["--width", "70"]):
        fast = runner.invoke(app, ["parse", *files, *extra])
        with monkeypatch.context() as m:
            m.setattr(plain, "enabled", lambda con: False)
            slow = runner.invoke(app, ["parse", *files, *extra])
        assert fast.exit_code == slow.exit_code == 0, fast.output
        assert fast.stdout == slow.stdout
        assert "卷积核" in fast.stdout
    # colour in a pipe when asked for: rich's (whose colour TERM=dumb, TTY_COMPATIBLE=0 or NO_COLOR would turn off)
    colour = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "TTY_COMPATIBLE": None, "NO_COLOR": None}
    coloured = runner.invoke(app, ["parse", *files], env=colour)
    assert coloured.exit_code == 0 and "\x1b[" in coloured.stdout


ALPHABETS = {
    "hostile": "ab Z09_:[]\\/-.,()<>*&~●µ—≥×·─é卷积カ한Ａ\u0301\u200b\u200d\ufe0f\t😀",
    "printable": "ab Z09_-.,()<>*&~●µ—≥×·─é卷积カ한Ａ",  # what the writer takes: wide characters, spaces
}


@pytest.mark.parametrize("alphabet", list(ALPHABETS))
def test_random_tables_same_bytes_as_rich(alphabet):
    """Random cells, headers, titles, captions and widths over an alphabet of what rich treats
    specially (markup, emoji codes, wide, zero-width and combining characters, tabs, an emoji):
    where the plain writer takes a table, its bytes are rich's."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    text = st.text(alphabet=ALPHABETS[alphabet], max_size=30)
    took = []

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(st.integers(1, 4), st.integers(0, 4), st.data(), st.sampled_from([40, 80, 1000]))
    def check(ncols, nrows, data, width):
        cols = []
        for i in range(ncols):
            cells = [data.draw(text) for _ in range(nrows)]
            as_text = data.draw(st.booleans())
            cols.append(Column(data.draw(text), [Text(c, style="bold") if as_text else c for c in cells],
                               justify=data.draw(st.sampled_from(["left", "right"])),
                               drop=data.draw(st.sampled_from([None, 1, 2])) if i else None, wrap=i == ncols - 1))
        t = fit_table(data.draw(text), cols, width, caption=data.draw(st.one_of(st.none(), text)))
        took.append(_same(t, width))

    check()
    assert sum(took) > (200 if alphabet == "printable" else 5), sum(took)


def test_cli_long_log_streamed_same_bytes_as_rich(monkeypatch, tmp_path):
    """A long nvprof log printed a part at a time (profconv.parse.stream), next to a short one: the
    plain writer's bytes are rich's, with and without --threshold/--all."""
    from profconv.parse import stream as stream_mod
    from tests.conftest import run_cli

    monkeypatch.setattr(stream_mod, "WINDOW", 8192)
    monkeypatch.setattr(stream_mod, "MARGIN", 8)
    monkeypatch.setattr(stream_mod, "STREAM_FROM", 1000)
    seed = (DATA / "seeds" / "002_b0bcac5cefbf4480.log").read_text()
    summary = (DATA / "nvprof-new" / "tyler-cs566-reductions.log").read_text()
    long = tmp_path / "long.log"
    long.write_text(seed + summary * 20)
    assert len(list(stream_mod.parts(str(long)))) > 3
    for extra in ([], ["--threshold", "0.5", "--all"]):
        fast = run_cli("parse", str(long), str(DATA / "nvprof-new" / "tyler-cs566-reductions.log"), *extra)
        with monkeypatch.context() as m:
            m.setattr(plain, "enabled", lambda con: False)
            slow = run_cli("parse", str(long), str(DATA / "nvprof-new" / "tyler-cs566-reductions.log"), *extra)
        assert fast.returncode == slow.returncode == 0, fast.stderr
        assert fast.stdout == slow.stdout
        assert fast.stdout.count("── Profile ") == len(parse(str(long)).profiles) + 1 == 27


@pytest.mark.parametrize("width", [12, 20, 37, 80, 81, 120, 200])
def test_wrapped_notes_same_bytes_as_rich(width):
    """A warning longer than the console (a report not read: ~200 characters, thousands a sweep) written
    wrapped as rich wraps a Text: the same breaks, the spaces past the width dropped; refused (rich's)
    where a word is wider than the console or a character is not one cell."""
    import random

    rng = random.Random(width)
    words = ["lines", "45-49:", "nsys", "report", "um_sum", "(unified", "memory)", "is", "not", "read:", "a" * 11,
             "x", "", "é", "—", "b" * 25, "profconv", "ranks", "(cuda_gpu_kern_sum,", "…", "ab,cd"]
    texts = ["warning: " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    texts += ["warning: lines 45-49: nsys report um_sum (unified memory page faults) is not read: profconv ranks the "
              "per-name summaries (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, osrt_sum, nvtx_sum)",
              "warning:  two  spaces   and trailing   ", "warning: 中文 wide", "warning: tab\there", "w" * (width + 3)]
    took = 0
    for text in texts:
        con, fast = _console(width)
        w = plain.writer(con)
        done = w.wrapped(text)
        took += done
        if not done:
            assert fast.getvalue() == ""
            continue
        con, slow = _console(width)
        con.print(Text(text, style="yellow"))
        assert fast.getvalue() == slow.getvalue(), text
    assert took >= 200 if width >= 26 else took >= 1


@pytest.mark.parametrize("width", [20, 37, 45, 80, 120])
def test_wrapped_captions_same_bytes_as_rich(width):
    """A caption line wider than its table ('10,250 more metric row(s) not shown (--all shows them;
    --json and --csv hold every one)' under a narrow Metrics table) written wrapped at the table's
    width as rich wraps it; refused (rich's) where a word is wider than the table or a character is
    not one cell. A 1,000-row Metrics table drawn by rich took 1.8 s."""
    import random

    rng = random.Random(width)
    words = ["10,250", "more", "metric", "row(s)", "not", "shown", "(--all", "shows", "them;", "--json", "and", "x", "",
             "é", "—", "c" * 19, "every", "one)", "中文"]
    took = 0
    for k in range(150):
        caption = " ".join(rng.choice(words) for _ in range(rng.randint(1, 25)))
        if k % 3 == 0:
            caption += "\nCalls not shown at 44 columns (--width N shows them)"
        took += _same(fit_table("Metrics", _cols(["conv_forward", "m"]), width, caption=caption), width)
    assert took == {20: 53, 37: 82, 45: 89, 80: 92, 120: 88}[width]  # of 150 (the others: a word wider, a character not one cell)
