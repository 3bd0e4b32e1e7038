"""`ncu --csv --page raw` pages read as columns (profconv/parse/dialects/ncu_raw.py) give what the row
reader gives, to the value: pages of every kind of cell (grouped thousands, '(!)', text, exponents,
comma decimals, whole nanoseconds, empty cells), big enough for the column path, read four ways --
from the file's bytes (ncu_raw.find), from the text's lines (profconv.parse_text), by the pure-Python
twin of the C scan (PROFCONV_PURE_PYTHON=1), and by the row reader (the column path switched off)."""

from __future__ import annotations

import random
from array import array

import pytest

import profconv
from profconv.parse import native
from profconv.parse.colviews import Const, Floats, Repeated, Sparse, Tiled
from profconv.parse.dialects import ncu, ncu_raw
from tests.conftest import assert_cli_alike
from tests.ncu_pages import cut, read_alike, read_from_bytes

IDS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Device", "CC"]
METRICS = [("dram__bytes_read.sum", "Mbyte"), ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("launch__registers_per_thread", "register/thread"), ("gpu__time_duration.sum", "nsecond"),
           ("launch__func_cache_config", "")]


def page(n: int, cell=None, units: bool = True, seed: int = 1) -> str:
    rng = random.Random(seed)
    head = ",".join(f'"{h}"' for h in IDS + [m for m, _ in METRICS])
    rows = [head]
    if units:
        rows.append(",".join(['""'] * len(IDS) + [f'"{u}"' for _, u in METRICS]))
    for k in range(n):
        vals = [f"{rng.uniform(0, 5000):,.2f}", f"{rng.uniform(0, 100):.2f}", str(rng.choice([32, 40, 64])),
                f"{rng.randint(1000, 9_000_000):,}", "CachePreferNone"]
        if cell is not None and k % 7 == 3:
            vals[k % 4] = cell
        name = ["conv_tuned", "gemm(float*, int)", 'k"q"'][k % 3].replace('"', '""')
        rows.append(",".join(f'"{c}"' for c in [str(k), "9", "app", "h", name, "1", "7", "0", "9.0", *vals]))
    return "==PROF== Connected to process 9 (/home/dev/app)\n" + "\n".join(rows) + "\n"


def plain_page(n: int, cell=None, units: bool = True) -> str:
    """page() without the quoted kernel name (a doubled quote sends a page to the row reader)."""
    return page(n, cell, units).replace('"k""q"""', '"kq"')


def _row_reader(monkeypatch) -> None:
    monkeypatch.setattr(ncu, "RAW_COLUMNS_FROM", 10**9)
    monkeypatch.setattr(ncu_raw, "MIN_LAUNCHES", 10**9)


def _four(monkeypatch, tmp_path, text: str):
    """The page read every way (tests/ncu_pages.py): all alike; the file's result."""
    return read_alike(monkeypatch, tmp_path / "raw.log", text, _row_reader)


N = 250  # launches (more than ncu.RAW_COLUMNS_FROM: read as columns)


@pytest.mark.parametrize("cell", [None, "1.5(!)", " 7 ", "n/a", "1.5e+03", "1e400", "12,5", "1'234.5", "", "0,125",
                                  "524.288", "1,024", "1.234.567", "+5", "٣", "-3", "9" * 400, "0.1234567890123456789",
                                  "00012.50", "1,234,567.", "&", "a--b", "x//y"])
def test_raw_page_as_columns_equals_rows(monkeypatch, tmp_path, cell):
    _four(monkeypatch, tmp_path, plain_page(N, cell))
    _four(monkeypatch, tmp_path, page(N, cell))


@pytest.mark.parametrize("n", [ncu.RAW_COLUMNS_FROM + 1, 30, 92])
@pytest.mark.parametrize("cell", [None, "n/a", "12,5", "0,125", "1,024", "1.5e+03", " 7 ", "&"])
def test_a_small_raw_page_as_columns_equals_rows(monkeypatch, tmp_path, n, cell):
    """Pages of a few launches (a course's profile of one run) are read as columns too, as the row reader reads them."""
    assert ncu.RAW_COLUMNS_FROM == ncu_raw.MIN_LAUNCHES <= 8
    _four(monkeypatch, tmp_path, plain_page(n, cell))
    _four(monkeypatch, tmp_path, page(n, cell))
    pages = []
    real = ncu._page
    monkeypatch.setattr(ncu, "_page", lambda *a: pages.append(a[0]) or real(*a))
    profconv.parse_text(plain_page(n))
    assert len(pages) == 1 and len(pages[0].names) == n  # (read as a page of columns)


def test_raw_page_without_units_row(monkeypatch, tmp_path):
    _four(monkeypatch, tmp_path, plain_page(N, units=False))


def test_raw_page_values(monkeypatch, tmp_path):
    ps = _four(monkeypatch, tmp_path, plain_page(N))
    m = ps.frame[ps.frame.section == "ncu-metric"]
    assert len(m) == N * len(METRICS)
    first = m.iloc[: len(METRICS)]
    assert first["metric"].tolist() == [x for x, _ in METRICS]
    assert first["unit"].tolist()[:4] == ["Mbyte", "%", "register/thread", "nsecond"] and first["unit"].isna().tolist()[4]
    assert first["value_text"].tolist()[4] == "CachePreferNone" and first["line_start"].tolist() == [4] * 5
    rng = random.Random(1)
    assert first["value"].tolist()[0] == float(f"{rng.uniform(0, 5000):,.2f}".replace(",", ""))
    gpu = ps.frame[ps.frame.section == "gpu"]
    assert sorted(gpu["calls"].tolist()) == [83, 83, 84]


@pytest.mark.parametrize("edit", ["usecond", "two timed", "no time unit"])
def test_raw_page_durations_in_any_unit(monkeypatch, tmp_path, edit):
    """The GPU rows from the duration column read as a whole column (its unit looked up once, usecond
    scaled by its text), from two duration columns cell by cell, none where the unit is no time: as the
    row reader gives them, to the value."""
    text = plain_page(N)
    if edit == "usecond":
        text = text.replace('"nsecond"', '"usecond"')
    elif edit == "two timed":
        text = text.replace('"dram__bytes_read.sum"', '"Duration"').replace('"Mbyte"', '"msecond"')
    else:
        text = text.replace('"nsecond"', '"cycle"')
    gpu = _four(monkeypatch, tmp_path, text).frame.query("section == 'gpu'")
    rng, want = random.Random(1), []
    for k in range(N):  # page()'s draws: conv_tuned's launches are k % 3 == 0
        mb, _, _, ns = f"{rng.uniform(0, 5000):,.2f}", rng.uniform(0, 100), rng.choice([32, 40, 64]), rng.randint(1000, 9_000_000)
        if k % 3 == 0:
            want += [float(mb.replace(",", "") + "e6"), float(ns)] if edit == "two timed" else [float(f"{ns}e3")]
    conv = gpu[gpu.name == "conv_tuned"]
    if edit == "no time unit":
        assert gpu.empty
        return
    assert conv["calls"].tolist() == [len(want)] and len(want) == (168 if edit == "two timed" else 84)
    assert conv["total_ns"].tolist() == [sum(want)] and conv["max_ns"].tolist() == [max(want)]
    assert conv["min_ns"].tolist() == [min(want)] and conv["line_start"].tolist() == [4]


def test_raw_page_kept_as_views(tmp_path):
    """A page read from the file's bytes keeps its metric rows as columns without an object a row."""
    path = tmp_path / "raw.log"
    path.write_text(plain_page(N))
    rows = profconv.parse(str(path)).rows
    n = N * len(METRICS)
    assert rows.n == n + 3  # and the three kernels' GPU rows
    assert isinstance(rows.cols["metric"], Tiled) and isinstance(rows.cols["name"], Repeated)
    assert isinstance(rows.cols["section"], Const) and isinstance(rows.cols["share"], Sparse)
    assert isinstance(rows.cols["value"], Floats) and type(rows.cols["value"].values) is array
    assert rows.col("section")[n - 1 : n + 1] == ["ncu-metric", "gpu"]
    assert rows.col("name")[: 6] == ["conv_tuned"] * 5 + ["gemm(float*, int)"]
    assert rows.col("line_start")[5 * 7] == 4 + 7


def test_page_in_the_first_bytes_and_after(monkeypatch, tmp_path):
    """Launches before bytescan.KEEP stay in the text (the engine looks for dialects there), the
    others are blank lines: both read from the bytes, with what follows the page read as text."""
    text = "* Running ./app 1000\nOp Time: 3.5 ms\n" + plain_page(3000) + "Correctness: 0.9\n"
    ps = _four(monkeypatch, tmp_path, text)
    assert ps.profiles[0].op_times_s == [0.0035] and ps.profiles[0].command == "/home/dev/app"
    assert (ps.profiles[0].line_start, ps.profiles[0].line_end) == (4, 3005)
    assert len(ps.frame) == 3000 * len(METRICS) + 3


@pytest.mark.parametrize("edit", ["stray", "ragged", "two pages", "non-ascii name", "no newline at the end"])
def test_pages_the_row_reader_reads(monkeypatch, tmp_path, edit):
    text = plain_page(N)
    if edit == "stray":
        text = text.replace('\n"100",', '\nprogram says hi\n"100",', 1)
    elif edit == "ragged":
        text = text.replace('"app","h","conv_tuned","1","7"', '"app","h","conv_tuned","1"', 1)
    elif edit == "two pages":
        text += plain_page(N + 5).split("\n", 1)[1]
    elif edit == "non-ascii name":
        text = text.replace("conv_tuned", "conv_tuné")
    else:
        text = text.rstrip("\n")
    ps = _four(monkeypatch, tmp_path, text)
    assert len(ps.frame[ps.frame.section == "ncu-metric"]) >= (N - 1) * len(METRICS)
    if edit == "ragged":
        assert [n for n, _ in ps.unplaced] == [4]
    if edit == "two pages":
        assert len(ps.profiles) == 2


# where a page's last row is cut (an input cut while ncu wrote it: a job's time limit), from its '"app"' cell,
# and whether inside a cell: the page's other rows are read from the bytes either way; a cell cut open is no
# row of the page, one cut between cells is (the page's last line), both reported unplaced as the text path does
CUTS = {"in a cell": (2, True), "after a cell": (5, False), "after a comma": (6, False),
        "after a quote opened": (7, True), "in the last cell": (-3, True), "before the last quote": (-1, True)}


@pytest.mark.parametrize("where", sorted(CUTS))
def test_a_page_cut_in_its_last_row(monkeypatch, tmp_path, where):
    text = plain_page(N)
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    at, in_cell = CUTS[where]
    text = cut(text, last.index('"app"') + at if at >= 0 else len(last) + at)
    ps = _four(monkeypatch, tmp_path, text)
    assert read_from_bytes(tmp_path / "raw.log")
    assert [n for n, _ in ps.unplaced] == [text.count("\n") + 1]
    assert len(ps.frame[ps.frame.section == "ncu-metric"]) == (N - 1) * len(METRICS)
    assert (ps.profiles[0].line_start, ps.profiles[0].line_end) == (2, text.count("\n") + (not in_cell))


def test_next_header_looks_at_line_starts_from_an_offset(monkeypatch):
    """ncu_raw._next_header: the first line at or after an offset that starts a page, either mark,
    found window by window (a mark across a window's end too); -1 where none."""
    data = b'"ID","a"\nx "ID",\n"1","2"\n"Process ID","b"\n"ID",\n'
    got = [ncu_raw._next_header(data, lo) for lo in (0, 1, 9, 25, 26, 39, 45)]
    assert got == [0, 25, 25, 25, 42, 42, -1]
    assert ncu_raw._next_header(b'"Process ID",\n', 0) == 0 and ncu_raw._next_header(b'x"ID",\n', 0) == -1
    monkeypatch.setattr(ncu_raw, "WINDOW", 4)
    assert [ncu_raw._next_header(data, lo) for lo in (0, 1, 9, 25, 26, 39, 45)] == got


@pytest.mark.parametrize("window", [1 << 22, 7])
def test_page_end_and_its_lines_c_and_python_alike(monkeypatch, window):
    """ncu_raw._page_end: the first line after a page's rows (not starting with a quote, empty, or
    another page's header) and the rows' line ends before it, by _ncucells.page_end and by the
    pure-Python search and count, whatever the window."""
    monkeypatch.setattr(ncu_raw, "WINDOW", window)
    rows = b'"1","a"\n"2","b"\n'
    cases = {rows + b"Done\n": (16, 2), rows + b'"ID","x"\n': (16, 2), rows + b'"Process ID",\n': (16, 2),
             rows + b"\n" + rows: (16, 2), rows: (16, 2), rows + b'"3","c"': (23, 2), b"x" + rows: (0, 0),
             rows + b'"ID"\n"Process"\n' + b"ok": (31, 4)}
    for body, want in cases.items():
        data = b"h\n" + body
        got = [(e - 2, n) for e, n in [ncu_raw._page_end(data, 2)]]
        with monkeypatch.context() as m:
            m.setenv("PROFCONV_PURE_PYTHON", "1")
            assert [(e - 2, n) for e, n in [ncu_raw._page_end(data, 2)]] == got
        assert got == [want], body
    with monkeypatch.context() as m:  # an _ncucells built before page_end: the pure-Python search
        m.setattr(native, "load", lambda name: object())
        assert ncu_raw._page_end(b"h\n" + rows + b"Done\n", 2) == (18, 2)


def test_file_mapped_without_its_bytes_held(monkeypatch, tmp_path):
    """A file from FILE_FROM bytes on is mapped, not read: the PreRead holds no copy of it, its
    blanked text is the lines around the page, and the page's values are the row reader's."""
    path = tmp_path / "raw.log"
    path.write_text(plain_page(11000) + "Op Time: 1.5 ms\n")
    assert path.stat().st_size > ncu_raw.FILE_FROM
    pre = ncu_raw.find_file(str(path))
    assert pre is not None and pre.source == b"" and pre.dialect == "ncu"
    (key, table), = pre.tables.items()
    assert key == 2 and table.rows == 11000 and table.batch.first_line == 4 and len(table.batch.names) == 11000
    assert pre.data.count(b"\n") == 11000 + 4 and pre.data.endswith(b"\n" * (11000 - table.kept) + b"Op Time: 1.5 ms\n")
    assert ncu_raw.find_file(str(tmp_path / "absent.log")) is None
    _four(monkeypatch, tmp_path, plain_page(11000) + "Op Time: 1.5 ms\n")


def test_scan_c_and_python_alike():
    """_ncucells.rows against its pure-Python twin on every kind of cell: values, votes, odd cells."""
    c_mod = native.load("_ncucells")
    if c_mod is None:
        pytest.skip("the C accelerator _ncucells is not built")
    cells = ["1", "1,234", "524.288", "1,234,567.5", "12.", "0.125", "", "n/a", "1.5e+03", " 7 ", "9" * 400,
             "0012", "1,23", "12,345,6", "0.1234567890123456789", "123456789012345678", "7(!)", "1.234"]
    line = ",".join(f'"{c}"' for c in ["k", *cells]) + "\n"
    data = (line * 3).encode()
    kinds = b"n" + b"m" * (len(cells) - 1) + b"d"
    got = []
    for scan in (c_mod.rows, ncu_raw._scan_py):
        out = array("d", [0.0]) * (3 * len(cells))
        res = scan(data, 0, len(data), kinds, out)
        got.append((res, [v if v == v else "nan" for v in out]))
    assert got[0] == got[1]
    (rows, dot, comma, undecided, names, odd, full), values = got[0]
    assert full == []  # (no kind 'e': no row of more cells)
    assert (rows, names) == (3, ["k", "k", "k"])
    assert values[: 6] == [1.0, 1234.0, 524.288, 1234567.5, 12.0, 0.125]
    assert values[14] == 0.12345678901234568 and values[15] == 123456789012345678.0 and values[17] == 1.234
    assert (dot, comma, undecided) == (3 * 4, 3 * 1, 1)  # '1.234' as a duration: a comma vote
    assert [data[a:b].decode() for _, a, b in odd[:6]] == ["n/a", "1.5e+03", " 7 ", "9" * 400, "1,23", "12,345,6"]


@pytest.mark.parametrize("seed", range(3))
def test_scan_c_and_python_alike_on_random_cells(seed):
    """_ncucells.rows (one pass a cell: its end and bytes, then its number as it is checked) against
    the twin on 3,000 random lines of cells made of digits, marks, signs, letters and the bytes and
    pairs normalize rewrites: the same rows, values, votes and odd cells, or both refuse the line."""
    c_mod = native.load("_ncucells")
    if c_mod is None:
        pytest.skip("the C accelerator _ncucells is not built")
    rng = random.Random(seed)
    alphabet = "0000123456789999,,,...e+- /<bp*&x(!)"
    refused = 0
    for _ in range(3000):
        cells = ["".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 12, 18, 25])))
                 for _ in range(4)]
        if rng.random() < 0.5:  # plain numbers of every shape, most of the time
            cells[1] = f"{rng.uniform(0, 10 ** rng.randint(0, 20)):,.{rng.randint(0, 25)}f}"
            cells[2] = f"{rng.randint(0, 10 ** rng.randint(0, 25))}.{rng.randint(0, 10 ** rng.randint(0, 25))}"
        data = (",".join(f'"{c}"' for c in ["k", *cells]) + "\n").encode()
        got = []
        for scan in (c_mod.rows, ncu_raw._scan_py):
            out = array("d", [0.0]) * 4
            res = scan(data, 0, len(data), b"nmmmd", out)
            got.append((res, [v if v == v else "nan" for v in out] if res is not None else None))  # refused: no values
        assert got[0] == got[1], data
        refused += got[0][0] is None
    assert 0 < refused < 3000


@pytest.mark.parametrize("bad", ['"a"b"', "a\tb", "a&b", "a\\b", "x/*y", "a<br>"])
def test_scan_refuses_what_normalize_rewrites(bad):
    data = (",".join(f'"{c}"' for c in ["k", bad, "1"]) + "\n").encode()
    mod = native.load("_ncucells")
    for scan in [ncu_raw._scan_py] + ([mod.rows] if mod is not None else []):
        assert scan(data, 0, len(data), b"nim", array("d", [0.0])) is None


def _scans() -> list:
    mod = native.load("_ncucells")
    return [ncu_raw._scan_py] + ([mod.rows] if mod is not None else [])


@pytest.mark.parametrize("at", range(0, 41, 3))
@pytest.mark.parametrize("mark", ['"', "\t", "&", "\\", "//", "/*", "--", "<b", "<P", "\x7f", "\u00e9"])
def test_scan_refuses_a_mark_anywhere_in_a_long_cell(at, mark):
    """A byte or mark normalize rewrites is found wherever it is in a cell the C scan walks sixteen bytes a
    step (before, across and after a step's edge); '/', '-' and '<' alone there are plain bytes."""
    text = "x" * at + mark + "y" * (44 - at)
    data = (",".join(f'"{c}"' for c in ["k", text, "1"]) + "\n").encode()
    for scan in _scans():
        assert scan(data, 0, len(data), b"nim", array("d", [0.0])) is None, scan
    plain = ("x" * at + mark[0] + "y" * (44 - at)) if mark[0] in "/-<" else None
    if plain is not None:
        data = (",".join(f'"{c}"' for c in ["k", plain, "1"]) + "\n").encode()
        for scan in _scans():
            assert scan(data, 0, len(data), b"nnm", array("d", [0.0])) == (1, 0, 0, 0, ["k", plain], [], [])


def test_scan_texts_one_str_each_across_calls():
    """The texts of the 'n' cells: one str for each distinct text, and where a dict is given, the one it
    holds (a details page's windows, each a call, share one), in C as in Python."""
    lines = [f'"{k}","m{k % 3}","{"u" * (k % 2)}","1"\n' for k in range(6)] * 2
    data = "".join(lines).encode()
    half = len("".join(lines[:6]))
    want = [t for k in range(6) for t in (str(k), f"m{k % 3}", "u" * (k % 2))] * 2
    for scan in _scans():
        seen: dict[str, str] = {}
        first = scan(data, 0, half, b"nnnm", array("d", [0.0]) * 6, seen)
        second = scan(data, half, len(data), b"nnnm", array("d", [0.0]) * 6, seen)
        names = first[4] + second[4]
        assert names == want and scan(data, 0, len(data), b"nnnm", array("d", [0.0]) * 12)[4] == want
        assert sorted(seen) == sorted(set(want)) and all(seen[t] is t for t in names)
        assert len({id(t) for t in names}) == len(set(want)) == 11


def test_cli_alike(monkeypatch, tmp_path):
    path = tmp_path / "raw.log"
    path.write_text(page(N, "1.5(!)"))
    assert_cli_alike(monkeypatch, path, _row_reader)


def test_a_sweep_of_small_pages_counts_its_newlines_once(monkeypatch):
    """ncu_raw.find over 300 runs each printing a page too small to read as columns, then a big one:
    the newlines before each page are counted once (each count had started where the last page read
    as columns ended: quadratic in the pages, 14 s for a 20 MB sweep of 1,170 runs), and the big page
    is read as columns at its line."""
    text = "".join(plain_page(3) for _ in range(300)) + plain_page(N)
    data = text.encode()
    counted = []
    real = ncu_raw._newlines
    monkeypatch.setattr(ncu_raw, "_newlines", lambda d, a, b: counted.append(b - a) or real(d, a, b))
    pre = ncu_raw.find(data)
    assert pre is not None and list(pre.tables) == [300 * 6 + 2]
    assert sum(counted) <= 2 * len(data)
