"""A line of program output inside an nsys (console or CSV) or ncu CSV table does not end it: the
rows after it are read, and a note says which line was left out (issue 26, hostile-2.md D1: one
'Done.' inside a table had lost every later row without a word, 40 -> 15 and 106 -> 29 rows).
Metamorphic over every nsys and ncu CSV test log: the same line inserted between two rows of a
table leaves every row as it was (only the line numbers after it move by one)."""

from __future__ import annotations

from pathlib import Path

import pytest

import profconv
from profconv.errors import ProfconvError

DATA = Path(__file__).parent / "data"
LOGS = sorted(str(p.relative_to(DATA)) for d in ("nsys-csv", "nsys-text", "ncu-csv") for p in (DATA / d).iterdir())
JUNK = ["Done.", "Warning: device 0 throttled"]
KEEP = ["section", "name", "time_pct", "total_ns", "calls", "avg_ns", "min_ns", "max_ns", "med_ns", "std_ns",
        "start_ns", "bytes", "metric", "unit", "value", "value_text"]


def _rows(ps) -> list[tuple]:
    f = ps.frame[KEEP].astype(object).where(ps.frame[KEEP].notna(), None)
    return sorted(map(tuple, f.itertuples(index=False)), key=repr)


def _inside(ps) -> list[int]:
    """Line numbers of rows whose line before is a row of the same table: a line put before one
    of them lands inside the table."""
    f = ps.frame
    at = set(zip(f["table"], f["line_start"]))
    rows = sorted({(t, n) for t, n in at if (t, n - 1) in at and n == int(n)})
    step = max(1, len(rows) // 4)
    return [int(n) for _, n in rows[::step]][:5]


@pytest.mark.parametrize("junk", JUNK)
@pytest.mark.parametrize("name", LOGS)
def test_a_stray_line_inside_a_table_loses_no_row(name, junk):
    text = (DATA / name).read_text(encoding="utf-8", errors="replace")
    try:
        base = profconv.parse_text(text)
    except ProfconvError:
        pytest.skip("no profile in this log")
    places = _inside(base)
    if not places:
        pytest.skip("no table of two rows or more")
    lines = text.split("\n")
    for n in places:
        hit = "\n".join(lines[: n - 1] + [junk] + lines[n - 1 :])
        got = profconv.parse_text(hit)
        assert _rows(got) == _rows(base), (name, n)
        said = any(f"line(s) {n} inside the table" in note for note in got.notes)
        assert said or (n, junk) in got.unplaced, (name, n, got.notes, got.unplaced)


NSYS_CSV = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            + "".join(f"{50 - k},{1000 * (50 - k)},1,{1000 * (50 - k)}.0,{1000 * (50 - k)}.0,{1000 * (50 - k)},"
                      f"{1000 * (50 - k)},0.0,k{k}\n" for k in range(5)))


def test_nsys_csv_stray_line_kept_out_with_a_note():
    lines = NSYS_CSV.split("\n")
    text = "\n".join(lines[:3] + ["Warning: device 0 throttled"] + lines[3:])
    ps = profconv.parse_text(text)
    assert ps.frame["name"].tolist() == ["k0", "k1", "k2", "k3", "k4"]
    assert ps.frame["line_start"].tolist() == [2, 3, 5, 6, 7]
    assert ps.unplaced == []
    assert any("line(s) 4 inside the table are not rows of it" in n for n in ps.notes)


def test_nsys_csv_status_line_still_ends_the_table():
    """A status line of nsys's own ('Processing [...]', a report title) begins the next report: the
    table ends there as before, and a next table with the same columns is its own."""
    text = NSYS_CSV + "Processing [r.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]...\n" + NSYS_CSV.replace("k", "cuda")
    ps = profconv.parse_text(text)
    assert not any("inside the table" in n for n in ps.notes)
    assert sorted(set(ps.frame["section"])) == ["api", "gpu"]


def test_nsys_console_stray_line_reproducer():
    """hostile-2/nsys-text-junk-line.log: the corpus log with 'Done.' after its osrt table's 2nd row."""
    text = (DATA / "nsys-text" / "ayush-os-a100-vectoradd-stats.log").read_text()
    lines = text.split("\n")
    hit = "\n".join(lines[:20] + ["Done."] + lines[20:])
    ps = profconv.parse_text(hit)
    osrt = ps.frame[ps.frame.section == "os-runtime"]
    assert len(ps.frame) == len(profconv.parse_text(text).frame) == 40
    assert osrt.set_index("name").loc["sem_wait", "share"] == pytest.approx(0.6806369108767513)  # not 0.7777 (2 rows)
    assert any("line(s) 21 inside the table" in n for n in ps.notes)


def test_ncu_csv_stray_line_reproducer():
    """hostile-2/ncu-csv-junk-line.log: a details page with 'Done.' among its rows: 106 rows, not 29."""
    text = (DATA / "ncu-csv" / "andrewxu22-rodinia-cfd-v100-ncu2020.csv.log").read_text()
    lines = text.split("\n")
    at = next(k for k, ln in enumerate(lines) if ln.startswith('"ID"')) + 30
    hit = "\n".join(lines[:at] + ["Done."] + lines[at:])
    assert len(profconv.parse_text(hit).frame) == len(profconv.parse_text(text).frame)
    assert any(f"line(s) {at + 1} inside the table" in n for n in profconv.parse_text(hit).notes)


@pytest.mark.parametrize("after", [10, 17, 49, 60, 66, 73])
def test_nsys_console_stray_line_between_header_and_dashes(after):
    """hostile fuzz stray:260000138 and 122 more: a line between a console table's header and its
    dash line had hidden the table (the stray line taken for its header, every row lost: 40 -> 13).
    The header is the line that names the columns; the stray line is left out with a note."""
    text = (DATA / "nsys-text" / "ayush-os-a100-vectoradd-stats.log").read_text()
    lines = text.split("\n")
    ps = profconv.parse_text("\n".join(lines[:after] + ["Done."] + lines[after:]))
    assert _rows(ps) == _rows(profconv.parse_text(text))
    assert len(ps.frame) == 40
    assert ps.unplaced == []
    assert any(f"line(s) {after + 1} inside the table" in n for n in ps.notes)


NCU_TEXT = (DATA / "ncu-text" / "md-info-fused-rmsnorm-t4-colab.log").read_text()


@pytest.mark.parametrize("after", [123, 126, 147, 155, 169, 176])
@pytest.mark.parametrize("junk", JUNK)
def test_ncu_console_stray_line_between_sections(after, junk):
    """hostile fuzz stray:260006917 and 46 more: an unindented line after a section's table (then a
    blank line) made what follows look like a markdown indented code block; dedented, the later
    sections were no sections (44 rows -> 11). The indentation around it is the log's own."""
    lines = NCU_TEXT.split("\n")
    ps = profconv.parse_text("\n".join(lines[:after] + [junk] + lines[after:]))
    whole = profconv.parse_text(NCU_TEXT)
    assert len(ps.frame) == len(whole.frame) == 44
    assert _rows(ps) == _rows(whole)
    assert ps.unplaced == []


def test_a_markdown_code_block_after_a_paragraph_is_still_dedented():
    """The markdown case the dedent is for: prose, a blank line, the log indented by four."""
    from profconv.parse.text import normalize

    assert normalize("Output:\n\n    a  1\n    b  2\n") == "Output:\n\na  1\nb  2\n"
    assert normalize("    a  1\nDone.\n\n    b  2\n") == "    a  1\nDone.\n\n    b  2\n"
    # a paragraph after a block that was itself dedented is markdown too
    assert normalize("x\n\n    a\nDone.\n\n    b\n") == "x\n\na\nDone.\n\nb\n"


# (log, index the line goes at): the places the every-line metamorphic run found in other nsys layouts
LAYOUTS = [
    ("pasted/tyler-hilbert-linreg-t4-nsys-markdown-pipe-tables-readme.md.log", 11),  # markdown header | rule
    ("pasted/reguly-laplace-vector-a100-h100-nsys-markdown-right-aligned-backticks.md.log", 5),
    ("nsys-text/mystous-vllm-hybrid-qwen7b-b200-nsys2025-format-table-grid-in-md.log", 15),  # header | +---+
    ("nsys-text/meanpaper-ece408-m2-nsys-legacy-with-time-output.log", 62),  # legacy: header | blank, dashes
    ("nsys-text/meanpaper-ece408-m2-nsys-legacy-with-time-output.log", 63),  # header, blank | dashes
    ("nsys-text/meanpaper-ece408-m2-nsys-legacy-with-time-output.log", 113),  # rai: row, blank | row
    ("nsys-text/b5b-hthuz-ece408-nsys2019.5.2-fp16-row-split-in-name-padding.log", 159),  # row | blank, row
    ("pasted/oliatsm-rtx4070ti-managed-pad-acc-time-and-nsys-gui-tab-table.md.log", 201),  # GUI header | row
    ("pasted/oliatsm-rtx4070ti-managed-pad-acc-time-and-nsys-gui-tab-table.md.log", 203),  # GUI row | row
]


@pytest.mark.parametrize(("name", "at"), LAYOUTS)
def test_a_stray_line_in_other_nsys_layouts_loses_no_row(name, at):
    """Markdown pipe tables, `--format table` grids, legacy (rai) tables with blank lines between
    header, dashes and rows, GUI-copied tab tables: a line of program output there had ended or
    hidden the table (35 -> 28, 47 -> 19, 37 -> 12, 11 -> 6 rows, nothing said). The table goes on
    and a note names the line."""
    text = (DATA / name).read_text()
    lines = text.split("\n")
    ps = profconv.parse_text("\n".join(lines[:at] + ["Done."] + lines[at:]))
    whole = profconv.parse_text(text)
    assert _rows(ps) == _rows(whole)
    assert [n for n, _ in ps.unplaced] == [n + (n > at) for n, _ in whole.unplaced]
    assert any(f"line(s) {at + 1} inside the table" in n for n in ps.notes)
