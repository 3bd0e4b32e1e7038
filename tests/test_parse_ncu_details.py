"""`ncu --csv` details pages (one row per launch and metric) read as columns
(profconv/parse/dialects/ncu_details.py) give what the row reader gives, to the value: pages of every
kind of value cell, read five ways -- from the file's bytes (ncu_raw.find), from the text's lines
(profconv.parse_text), from the file mapped a few KiB at a time, by the pure-Python twin of the C
scan (PROFCONV_PURE_PYTHON=1), and by the row reader (the column path switched off)."""

from __future__ import annotations

import random
from array import array

import pytest

import profconv
from profconv.parse import native
from profconv.parse.colviews import Const, Floats, Sparse
from profconv.parse.dialects import ncu, ncu_details, ncu_raw
from tests.conftest import assert_cli_alike, run_cli
from tests.ncu_pages import cut, read_alike, read_from_bytes

IDS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
       "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
METRICS = [("GPU Speed Of Light Throughput", "DRAM Frequency", "cycle/nsecond"),
           ("GPU Speed Of Light Throughput", "Memory Throughput", "%"),
           ("GPU Speed Of Light Throughput", "Duration", "nsecond"),
           ("Launch Statistics", "Registers Per Thread", "register/thread"),
           ("Launch Statistics", "Function Cache Configuration", ""),
           ("Occupancy", "Achieved Occupancy", "%")]
KERNELS = ["conv_forward_kernel(float *, const float *, const float *, int, int, int, int, int, int)",
           "gemm(float*, int)", "void im2col<float>(int, float const *)"]


def page(n: int, cell=None, seed: int = 1, head: str = "==PROF== Connected to process 9 (/home/dev/app)\n") -> str:
    """A details page of n launches, each launch its METRICS; `cell` put in place of a value now and then."""
    rng = random.Random(seed)
    rows = [",".join(f'"{h}"' for h in IDS)]
    for k in range(n):
        vals = [f"{rng.uniform(1, 9):.2f}", f"{rng.uniform(0, 100):.2f}", f"{rng.randint(1000, 9_000_000):,}",
                str(rng.choice([32, 40, 64])), "CachePreferNone", f"{rng.uniform(0, 100):.2f}"]
        if cell is not None and k % 7 == 3:
            vals[k % 3] = cell
        ids = [str(k), "9", "app", "h", KERNELS[k % 3], "1", "7", "(256, 1, 1)", "(94, 1, 1)", "0", "9.0"]
        rows += [",".join(f'"{c}"' for c in [*ids, s, m, u, v]) for (s, m, u), v in zip(METRICS, vals)]
    return head + "\n".join(rows) + "\n"


RULES = ["Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"]
ADVICE = ('"SOLBottleneck","OPT","This workload exhibits low compute throughput -- see the ""Roofline"" '
          'chart (https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#roofline).","local","31.5"')


def page_2024(n: int, cell=None, seed: int = 1, advice: str = ADVICE) -> str:
    """page() as ncu 2024+ prints it: the rule columns in the header, each metric row its cells and a
    trailing comma, a rule's row after each launch's Speed Of Light and Occupancy sections (as the
    2025.3 pages made on an H200: tests/data/ncu-csv/h200-*)."""
    lines = page(n, cell, seed).split("\n")
    out = [lines[0], lines[1][:-1] + '",' + ",".join(f'"{h}"' for h in RULES)]
    for line in lines[2:-1]:
        out.append(line + ",")
        cells = line.split('","')
        if cells[-3] in ("Memory Throughput", "Achieved Occupancy"):
            out.append('","'.join(cells[:11]) + '","' + cells[11] + '","","","",' + advice)
    return "\n".join(out) + "\n"


def _row_reader(monkeypatch) -> None:
    monkeypatch.setattr(ncu_details, "MIN_ROWS", 10**9)


def _five(monkeypatch, tmp_path, text: str, columns: bool = True):
    """The page read five ways (tests/ncu_pages.py): all alike; the file's result. `columns`: whether
    the column path reads it (else it leaves it to the row reader)."""
    pages = []
    real = ncu_details.read
    monkeypatch.setattr(ncu_details, "read", lambda *a: pages.append(real(*a)) or pages[-1])
    got = read_alike(monkeypatch, tmp_path / "details.log", text, _row_reader)
    assert all((p is not None) == columns for p in pages) and (len(pages) >= 4 or not columns)
    return got


N = 120  # launches: 720 rows (more than ncu_details.MIN_ROWS)


@pytest.mark.parametrize("cell", [None, "1.5(!)", " 7 ", "n/a", "1.5e+03", "1e400", "1,234.5", "", "0.125",
                                  "00012.50", "1,234,567.", "+5", "-3", "9" * 400, "0.1234567890123456789"])
def test_details_page_as_columns_equals_rows(monkeypatch, tmp_path, cell):
    # '0.125' also lands on a duration in whole nanoseconds, where it groups thousands: a comma vote
    # that leaves the page's mark in doubt, so the row reader reads it
    _five(monkeypatch, tmp_path, page(N, cell), columns=cell != "0.125")


@pytest.mark.parametrize("cell", ["12,5", "0,125", "1.234.567", "524.288", "&", "a--b", "x//y", "٣"])
def test_pages_whose_cells_the_row_reader_reads(monkeypatch, tmp_path, cell):
    """A decimal mark other than C's (or left in doubt), bytes normalize rewrites, non-ASCII: the row
    reader's, with the same output."""
    _five(monkeypatch, tmp_path, page(N, cell), columns=False)


@pytest.mark.parametrize("duration", ["1.234", "1,234", "1.000"])
def test_a_duration_votes_as_a_count(monkeypatch, tmp_path, duration):
    """A duration in whole nanoseconds votes as a count (ncu._vote): '1.234' groups thousands with a
    dot, so the page's mark is the comma and the row reader reads it; '1,234' says the dot."""
    text = page(N)
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if '"Duration"' in line)
    lines[k] = lines[k][: lines[k].rindex(',"')] + f',"{duration}"'
    ps = _five(monkeypatch, tmp_path, "\n".join(lines), columns=duration == "1,234")
    durations = ps.frame.query("metric == 'Duration'")["value"].tolist()
    if duration == "1,234":
        assert durations[:2] == [1234.0, 6369886.0] and not ps.notes
    else:  # the dot and comma votes disagree: the page's mark is left in doubt, its cell empty, and said
        assert durations[1] == 6369886.0 and durations[0] != durations[0]
        assert ps.notes == ["profile 1, ncu-metric table, lines 2-722: numbers such as '1.234' could use '.' or ',' "
                            "as the decimal mark and no cell of this table says which: those cells are left empty"]


def test_details_page_values(monkeypatch, tmp_path):
    ps = _five(monkeypatch, tmp_path, page(N))
    m = ps.frame[ps.frame.section == "ncu-metric"]
    assert len(m) == N * len(METRICS)
    first = m.iloc[: len(METRICS)]
    assert first["metric"].tolist() == [x for _, x, _ in METRICS] and first["name"].tolist() == [KERNELS[0]] * 6
    assert first["unit"].tolist()[:4] == ["cycle/nsecond", "%", "nsecond", "register/thread"]
    assert first["unit"].isna().tolist() == [False] * 4 + [True, False]
    assert first["value_text"].tolist()[4] == "CachePreferNone" and first["line_start"].tolist() == [3, 4, 5, 6, 7, 8]
    rng = random.Random(1)
    assert first["value"].tolist()[:3] == [float(f"{rng.uniform(1, 9):.2f}"), float(f"{rng.uniform(0, 100):.2f}"),
                                           float(rng.randint(1000, 9_000_000))]
    gpu = ps.frame[ps.frame.section == "gpu"]
    assert sorted(gpu["calls"].tolist()) == [40, 40, 40] and gpu["line_start"].min() == 5


def test_details_page_kept_as_columns(tmp_path):
    """A page read from the file's bytes keeps its rows as columns: one str per distinct kernel,
    metric and unit, the values in an array."""
    path = tmp_path / "details.log"
    path.write_text(page(3 * N))
    rows = profconv.parse(str(path)).rows
    n = 3 * N * len(METRICS)
    assert rows.n == n + 3  # and the three kernels' GPU rows
    assert isinstance(rows.cols["section"], Const) and isinstance(rows.cols["value"], Floats)
    assert type(rows.cols["value"].values) is array and isinstance(rows.cols["value_text"], Sparse)
    names = rows.col("name")[:n]
    assert len({id(x) for x in names}) == 3 and len({id(x) for x in rows.col("metric")[:n]}) == len(METRICS)
    assert rows.col("line_start")[6 * 7] == 3 + 6 * 7


@pytest.mark.parametrize("edit", ["stray", "ragged", "rule row", "two pages", "no unit column", "unit before name",
                                  "function name",
                                  "header twice", "no newline at the end", "few rows", "program output after"])
def test_pages_of_other_shapes(monkeypatch, tmp_path, edit):
    text, columns = page(N), True
    if edit == "stray":
        text, columns = text.replace('\n"100",', '\nprogram says hi\n"100",', 1), False
    elif edit == "ragged":
        text, columns = text.replace('"app","h","gemm(float*, int)","1","7"', '"app","h","gemm(float*, int)","1"', 1), False
    elif edit == "rule row":  # no metric name and no rule columns: no rule's row, the row reader's
        text, columns = text.replace('"Occupancy","Achieved Occupancy","%"', '"Occupancy","",""', 1), False
    elif edit == "two pages":
        text += page(N + 5, seed=2, head="")
    elif edit == "no unit column":
        text = "\n".join('","'.join(c[:-2] + c[-1:]) if (c := line.split('","'))[0].startswith('"') else line
                          for line in text.split("\n"))
    elif edit == "unit before name":  # the durations' texts then read line by line (not by one search)
        text = "\n".join('","'.join(c[:-3] + [c[-2], c[-3], c[-1]]) if (c := line.split('","'))[0].startswith('"') else line
                          for line in text.split("\n"))
    elif edit == "function name":
        text = text.replace('"Kernel Name"', '"Function Name"', 1)
    elif edit == "header twice":
        text, columns = text.replace('"Context","Stream"', '"Context","Context"', 1), False
    elif edit == "no newline at the end":
        text = text.rstrip("\n")
    elif edit == "few rows":
        text, columns = page(10), False
    else:
        text += "Done\n==PROF== Disconnected from process 9\n"
    ps = _five(monkeypatch, tmp_path, text, columns)
    want = 10 * len(METRICS) if edit == "few rows" else N * len(METRICS) + (5 + N) * len(METRICS) * (edit == "two pages")
    assert len(ps.frame[ps.frame.section == "ncu-metric"]) == want - (edit == "ragged")
    if edit == "ragged":
        assert [n for n, _ in ps.unplaced] == [3 + 6]
    if edit == "no unit column":
        assert ps.frame.query("section == 'ncu-metric'")["unit"].isna().all()


# where a page's last row is cut (an input cut while ncu wrote it), from its '"Occupancy"' cell, and whether
# inside a cell: the page's other rows are read from the bytes either way; a cell cut open is no row of the page,
# one cut between cells before its value is (the page's last line), both reported unplaced as the text path does
CUTS = {"in a cell": (3, True), "after a cell": (11, False), "after a comma": (12, False),
        "in the value": (-3, True), "before the value's quote": (-1, True)}


@pytest.mark.parametrize("where", sorted(CUTS))
@pytest.mark.parametrize("make", [page, page_2024])
def test_a_page_cut_in_its_last_row(monkeypatch, tmp_path, where, make):
    text = make(N)
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    at, in_cell = CUTS[where]
    if make is page_2024 and at < 0:
        at -= 1  # before its trailing comma
    text = cut(text, last.index('"Occupancy"') + at if at >= 0 else len(last) + at)
    # (the text's page holds the cut line between cells: its column reader leaves that page to the row reader)
    ps = read_alike(monkeypatch, tmp_path / "details.log", text, _row_reader)
    assert read_from_bytes(tmp_path / "details.log")
    assert [n for n, _ in ps.unplaced] == [text.count("\n") + 1]
    # (a 2024 page's last row is a rule's advice, no metric)
    assert len(ps.frame[ps.frame.section == "ncu-metric"]) == N * len(METRICS) - (make is page)
    assert ps.profiles[0].line_end == text.count("\n") + (not in_cell)


def test_a_details_row_whole_but_its_line_end_is_the_text_paths(monkeypatch, tmp_path):
    """A 2024 page's metric row cut before its trailing comma is a row whole (its value there): the row
    reader's, read as a metric (the bytes' page would leave it out)."""
    text = page_2024(N)
    lines = text.rstrip("\n").split("\n")
    text = "\n".join(lines[:-1])[:-1]  # the last metric row, its comma cut off (the advice row after it gone)
    ps = _five(monkeypatch, tmp_path, text, columns=False)
    assert not read_from_bytes(tmp_path / "details.log")
    assert ps.unplaced == [] and len(ps.frame[ps.frame.section == "ncu-metric"]) == N * len(METRICS)


def test_page_after_the_first_bytes(monkeypatch, tmp_path):
    """Rows before bytescan.KEEP stay in the text, the others are blank lines: both read from the
    bytes, with what comes before and after the page read as text."""
    text = "* Running ./app 1000\nOp Time: 3.5 ms\n" + page(600) + "Correctness: 0.9\n"
    ps = _five(monkeypatch, tmp_path, text)
    assert ps.profiles[0].op_times_s == [0.0035] and ps.profiles[0].command == "/home/dev/app"
    assert (ps.profiles[0].line_start, ps.profiles[0].line_end) == (4, 3604)
    assert len(ps.frame) == 3600 + 3


def test_scan_of_several_text_columns_c_and_python_alike():
    """_ncucells.rows gives the text of each 'n' column, in column order, as its twin does."""
    c_mod = native.load("_ncucells")
    if c_mod is None:
        pytest.skip("the C accelerator _ncucells is not built")
    data = b'"0","k1","Duration","nsecond","1,234"\n"0","k1","Mode","","n/a"\n'
    got = []
    for scan in (c_mod.rows, ncu_raw._scan_py):
        out = array("d", [0.0]) * 2
        res = scan(data, 0, len(data), b"innnm", out)
        got.append((res, [v if v == v else "nan" for v in out]))
    assert got[0] == got[1]
    assert got[0][0][4] == ["k1", "Duration", "nsecond", "k1", "Mode", ""] and got[0][1] == [1234.0, "nan"]


def test_cli_alike(monkeypatch, tmp_path):
    path = tmp_path / "details.log"
    path.write_text(page(N, "1.5(!)"))
    assert_cli_alike(monkeypatch, path, _row_reader)


def test_min_rows_is_where_the_readers_agree():
    assert ncu_details.MIN_ROWS == 64 and ncu.RAW_COLUMNS_FROM == ncu_raw.MIN_LAUNCHES


H200 = "tests/data/ncu-csv/h200-ncu2025.3-scale-add-"


def test_ncu_2025_details_all_body_items_do_not_vote():
    """ncu 2025.3 `--print-details all` (made on an H200): body items such as '8,524 (100; 100; 75)' are
    a value and its items, no number; they voted for a decimal comma, left the page's mark in doubt and
    every '5,216' empty, the durations with them (no GPU rows). Now they do not vote."""
    ps = profconv.parse(H200 + "print-details-all-two-launches.csv.log")
    assert not ps.notes
    gpu = ps.frame.query("section == 'gpu'")
    assert gpu[["name", "total_ns", "calls"]].values.tolist() == [["add(float *, const float *, int)", 5760.0, 1],
                                                                   ["scale(float *, int, float)", 5216.0, 1]]
    m = ps.frame.query("section == 'ncu-metric'")
    assert len(m) == 296 and m.query("metric == 'Elapsed Cycles'")["value"].tolist() == [7758.0, 8546.0]
    items = m[m.value_text.fillna("").str.contains(r"\(")]
    assert len(items) == 16 and items["value"].isna().all()
    assert items["value_text"].iloc[0].startswith("8,524 (100; 100; 100;")


def test_ncu_2025_rule_columns_page():
    """ncu 2025.3's default `--csv` page: metric rows of 15 cells and a trailing comma, rules' rows of
    20 (advice, no metric: left out); the row reader reads it (its rows are not all of the header's width)."""
    ps = profconv.parse(H200 + "rule-columns-two-launches.csv.log")
    assert not ps.notes and not ps.unplaced
    gpu = ps.frame.query("section == 'gpu'")
    assert gpu[["name", "total_ns"]].values.tolist() == [["add(float *, const float *, int)", 5632.0],
                                                         ["scale(float *, int, float)", 5184.0]]
    m = ps.frame.query("section == 'ncu-metric'")
    assert len(m) == 100 and m["metric"].iloc[0] == "DRAM Frequency" and m["value"].iloc[0] == 3178497942.39


def test_ncu_2025_set_full_page_as_columns(monkeypatch):
    """ncu 2025.3 `--set full` (made on an H200): 87 metrics and 13 rules' rows a launch, read as
    columns (the rules' rows handed back by the scan and left out) as the row reader reads it."""
    path = H200 + "set-full-three-launches.csv.log"
    pages = []
    real = ncu_details.read
    monkeypatch.setattr(ncu_details, "read", lambda *a: pages.append(real(*a)) or pages[-1])
    ps = profconv.parse(path)
    assert len(pages) == 1 and pages[0] is not None and len(pages[0].names) == 261 and pages[0].last_line == 306
    assert not ps.notes and not ps.unplaced
    gpu = ps.frame.query("section == 'gpu'")
    assert gpu[["name", "calls", "total_ns"]].values.tolist() == [["scale(float *, int, float)", 2, 10304.0],
                                                                   ["add(float *, const float *, int)", 1, 5792.0]]
    assert len(ps.frame.query("section == 'ncu-metric'")) == 261


def test_long_metric_texts_cut_in_the_table(tmp_path):
    """The terminal's Metrics table cuts a value printed as text at 40 characters and says so."""
    got = run_cli("parse", H200 + "print-details-all-two-launches.csv.log", "--all")
    assert got.returncode == 0
    assert "3,670 (32; 32; 32; 64; 64; 63; 63; 64; …" in got.stdout
    assert "values printed as text cut at 40 characters (…): --json and --csv hold them whole" in " ".join(got.stdout.split())
    assert max(map(len, got.stdout.splitlines())) <= 200


@pytest.mark.parametrize("cell", [None, "1.5(!)", "n/a", "1,234.5", "", "9" * 400])
def test_2024_page_as_columns_equals_rows(monkeypatch, tmp_path, cell):
    """A 2024+ page (rule columns; rules' rows among the metric rows) read as columns, the rules'
    rows left out as the row reader leaves them: the same rows, lines, GPU rows and notes."""
    ps = _five(monkeypatch, tmp_path, page_2024(N, cell))
    m = ps.frame.query("section == 'ncu-metric'")
    assert len(m) == N * len(METRICS) and m["line_start"].tolist()[:9] == [3, 4, 6, 7, 8, 9, 11, 12, 14]
    assert ps.profiles[0].line_end == 2 + N * (len(METRICS) + 2)  # the last rule's row


@pytest.mark.parametrize("edit", ["metric row of every column", "advice with markup", "advice with a backslash",
                                  "a rule's row with no advice", "advice not ascii"])
def test_2024_pages_the_row_reader_reads(monkeypatch, tmp_path, edit):
    """Rows of every column that are not a rule's, or hold bytes normalize may act on past the row:
    the row reader's, with the same output."""
    if edit == "metric row of every column":
        row = '"Registers Per Thread","register/thread","40"'
        text = page_2024(N).replace(row + ",", row + ',"","","","",""', 1)
    else:
        advice = {"advice with markup": ADVICE.replace("chart", "<b>chart</b>"),
                  "advice with a backslash": ADVICE.replace("chart", "chart \\%"),
                  "a rule's row with no advice": '"","","","",""',
                  "advice not ascii": ADVICE.replace("chart", "chart ≥ 60%")}[edit]
        text = page_2024(N, advice=advice)
    assert text != page_2024(N)
    _five(monkeypatch, tmp_path, text, columns=False)


def test_2024_page_with_a_rule_last(monkeypatch, tmp_path):
    """A page whose last row is a rule's: the page (and its profile) ends on that line."""
    text = page_2024(N)
    ps = _five(monkeypatch, tmp_path, text + "==PROF== Disconnected from process 9\n")
    assert text.rstrip("\n").endswith('"31.5"') and ps.profiles[0].line_end == 2 + N * 8


def test_scan_of_an_unquoted_empty_last_cell_c_and_python_alike():
    """Kind 'e': a line ending in an empty cell that is not quoted ('...,"21.30",'), by the C scan and its
    twin; a line whose cells go on (a rule's row) handed back whole; a line without either is refused."""
    mod = native.load("_ncucells")
    cases = [(b'"0","k","1,234",\n"1","k","n/a",\n', (2, ["k", "k"], [], [1234.0, "nan", 0.0])),
             (b'"0","k","1,234"\n', None), (b'"0","k","7"x\n', None), (b'"0","k","7",""', None),
             (b'"0","k","",""\n"1","k","2",\n', (1, ["k"], [(0, 0, 14)], [2.0, 0.0, 0.0])),
             (b'"0","k","5",\n"0","k","7","a//b","\xff"\n', (1, ["k"], [(1, 13, 36)], [5.0, 7.0, 0.0]))]
    for body, want in cases:
        for scan in [ncu_raw._scan_py] + ([mod.rows] if mod is not None else []):
            out = array("d", [0.0]) * 3
            got = scan(body, 0, len(body), b"inme", out)
            assert (got if got is None else (got[0], got[4], got[6], [v if v == v else "nan" for v in out])) == want


@pytest.mark.parametrize("seed", range(3))
def test_scan_with_rules_rows_c_and_python_alike_on_random_lines(seed):
    """_ncucells.rows against its twin on 2,000 random windows of metric rows and rows of every
    column (a rule's advice of any bytes, names cycling past the scan's cache of recent texts): the
    same rows, texts, values, votes, odd cells and rows handed back, or both refuse."""
    mod = native.load("_ncucells")
    if mod is None:
        pytest.skip("the C accelerator _ncucells is not built")
    rng = random.Random(seed)
    names = [f"k{j}" for j in range(40)]
    refused = 0
    for _ in range(2000):
        lines = []
        for _ in range(rng.randint(1, 12)):
            cells = [str(rng.randint(0, 9)), rng.choice(names), rng.choice(names),
                     rng.choice(["1,234", "5", "n/a", "", "0.5", "1.234", "7(!)"])]
            if rng.random() < 0.3:
                advice = "".join(rng.choice('ab "/-,<&\\\x7f') for _ in range(rng.randint(0, 12)))
                lines.append('"' + '","'.join(cells[:3]) + '","",' + f'"{advice}","1"')
            else:
                lines.append('"' + '","'.join(cells) + '",')
        body = ("\n".join(lines) + "\n").encode("latin-1")
        got = []
        for scan in (mod.rows, ncu_raw._scan_py):
            out = array("d", [0.0]) * 12
            res = scan(body, 0, len(body), b"innme", out)
            got.append((res if res is None else (res[0], res[1], res[2], bool(res[3]), res[4], res[5], res[6]),
                        [v if v == v else "nan" for v in out] if res is not None else None))
        assert got[0] == got[1], body
        refused += got[0][0] is None
    assert refused < 2000


def test_duration_cells_in_row_order_of_the_metrics_named():
    """The value cells of the rows that end in a duration metric named, a unit of whole nanoseconds and
    the value (they vote as counts): found by each metric's bytes, in the order of the rows."""
    from profconv.parse.dialects.ncu_details import _duration_cells

    rows = [b'"0","k","SOL","Duration","nsecond","1,173",\n', b'"0","k","SOL","Memory","%","5",\n',
            b'"1","k","SOL","gpu__time_duration","ns","2.5"\n', b'"1","k","SOL","Duration","usecond","7",\n',
            b'"2","k","SOL","Duration","ns","9",\n', b'"3","k","Duration","Duration","ns","4",\n']
    data = b"".join(rows)
    assert _duration_cells(data, 0, len(data), {"Duration", "gpu__time_duration"}) == ["1,173", "2.5", "9", "4"]
    assert _duration_cells(data, 0, len(data), {"Duration"}) == ["1,173", "9", "4"]
    assert _duration_cells(data, len(rows[0]), len(data), {"Duration"}) == ["9", "4"]
    assert _duration_cells(data, 0, len(data), set()) == []


def test_duration_cells_as_one_expression_over_the_rows_finds_them():
    """Against the expression tried at every '","' that found them before (an oracle): 3,000 random rows
    of duration metrics, units, values, quotes and section cells named like a metric."""
    import re

    from profconv.parse.dialects.ncu_details import _duration_cells

    names = b"|".join(re.escape(m.encode()) for m in sorted(ncu.DURATION_METRICS))
    oracle = re.compile(rb'","(?:' + names + rb')","(?:nsecond|ns)","([^"\n]*)",?\n')
    rng = random.Random(7)
    words = ["Duration", "gpu__time_duration", "gpu__time_duration.sum", "ns", "nsecond", "usecond", "1,173", "9", "",
             'x"y']
    found = 0
    for _ in range(3000):
        rows = ['"' + '","'.join(rng.choice(words) for _ in range(rng.randint(2, 6))) + '"' + rng.choice(["", ","]) + "\n"
                for _ in range(rng.randint(1, 4))]
        data = "".join(rows).encode()
        want = [m.group(1).decode() for m in oracle.finditer(data)]
        assert _duration_cells(data, 0, len(data), set(ncu.DURATION_METRICS)) == want, data
        found += len(want)
    assert found == 213  # (the seed fixes them)
