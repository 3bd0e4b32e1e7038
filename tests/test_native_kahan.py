"""profconv.parse._kahan (the C side of shares.share_rows) against the pure-Python path, bit for bit:
on the rows of every tests/data log and on generated sections (NaN, zeros, ties, a Time column that
contradicts Time(%), several source tables, huge and tiny values). Skipped where the C module was
not built (`python setup.py build_ext --inplace`, or `pip install -e .` with a compiler)."""

from __future__ import annotations

import glob
import math
import random
import struct
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import profconv
from profconv.errors import NoProfileFound
from profconv.parse import native
from profconv.parse.colviews import Sparse, View
from profconv.parse.core import _share_notes
from profconv.parse.schema import TIMED_SECTIONS
from profconv.parse.shares import ranked, share_rows
from profconv.parse.table import Rows

kahan = pytest.importorskip("profconv.parse._kahan", reason="the C accelerator _kahan is not built")

FILES = sorted(
    p for p in glob.glob("tests/data/**/*", recursive=True)
    if p.endswith((".log", ".txt", ".csv")) and "/runs/" not in p and "/grade/" not in p and "/bench/" not in p
)
SHARE = ("share", "cumulative", "in_top", "share_basis")


def _bits(values) -> list:
    """Floats as their 64 bits (NaN's sign and payload included), anything else as itself with its type."""
    return [struct.pack("<d", v) if type(v) is float else (type(v).__name__, v) for v in values]


def _both(rows: Rows, monkeypatch, threshold: float = 0.90):
    """`ranked` of two copies of `rows`: with the C module, and with PROFCONV_PURE_PYTHON=1."""
    monkeypatch.delenv("PROFCONV_PURE_PYTHON", raising=False)
    assert native.load("_kahan") is not None
    c_rows, c_notable = ranked(Rows(dict(rows.cols), rows.n), threshold)
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", "1")
    assert native.load("_kahan") is None
    py_rows, py_notable = ranked(Rows(dict(rows.cols), rows.n), threshold)
    monkeypatch.delenv("PROFCONV_PURE_PYTHON")
    return c_rows, c_notable, py_rows, py_notable


def _same(rows: Rows, monkeypatch, threshold: float = 0.90) -> Rows:
    c_rows, c_notable, py_rows, py_notable = _both(rows, monkeypatch, threshold)
    views = isinstance(rows.col("section"), View)
    for name in SHARE:  # the shares as arrays of doubles where C ranked (no float object a row), else lists
        col = c_rows.col(name)
        if views:  # an ncu page's views: its timed rows' shares (shares._ranked_part), C's values in a Sparse
            assert type(col) is Sparse
            col = col.values
        assert type(col) in ((array, list) if name in ("share", "cumulative") else (list,))
        assert _bits(c_rows.col(name)) == _bits(py_rows.col(name)), name
    assert c_notable == py_notable
    return c_rows


def test_c_module_is_used_and_switched_off(monkeypatch):
    monkeypatch.delenv("PROFCONV_PURE_PYTHON", raising=False)
    assert native.load("_kahan") is kahan
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", "1")
    assert native.load("_kahan") is None
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", "0")
    assert native.load("_kahan") is kahan


@pytest.mark.parametrize("path", FILES, ids=lambda p: p[len("tests/data/"):])
def test_every_test_log(path, monkeypatch):
    monkeypatch.delenv("PROFCONV_PURE_PYTHON", raising=False)
    try:
        ps = profconv.parse(path)
    except NoProfileFound:
        return
    rows = ps.rows
    # the parser's columns are what C reads (floats, array('d'), ints): no silent fall back to Python
    # (an ncu page's views are ranked by their timed rows alone, shares._ranked_part: C reads those rows)
    section = rows.col("section")
    sub = rows.take(list(section.positions(TIMED_SECTIONS))) if isinstance(section, View) else rows
    assert kahan.rank(*[sub.col(c) for c in ("section", "profile", "table", "time_pct", "total_ns")],
                      TIMED_SECTIONS, 0.9) is not None
    _same(rows, monkeypatch)
    _same(rows, monkeypatch, threshold=0.5)
    # the notes next to the tables: from the C module's notable sections, the Python path's and a
    # walk over the rows (what _share_notes does when given none)
    c_rows, c_notable, py_rows, py_notable = _both(rows, monkeypatch)
    got = [{}, {}, {}]
    _share_notes(c_rows, got[0], c_notable)
    _share_notes(py_rows, got[1], py_notable)
    _share_notes(py_rows, got[2])
    assert got[0] == got[1] == got[2]


def test_whole_parse_same_with_and_without(monkeypatch):
    """A log whose Time column contradicts its Time(%) and one merged from several tables: the
    ProfileSet (rows, notes) is the same either way."""
    for path in FILES:
        monkeypatch.delenv("PROFCONV_PURE_PYTHON", raising=False)
        try:
            a = profconv.parse(path)
        except NoProfileFound:
            continue
        monkeypatch.setenv("PROFCONV_PURE_PYTHON", "1")
        b = profconv.parse(path)
        assert a.notes == b.notes and a.table_notes == b.table_notes, path
        for name in SHARE:
            assert _bits(a.rows.col(name)) == _bits(b.rows.col(name)), (path, name)


def _rows(records: list[tuple]) -> Rows:
    """Rows of (profile, section, table, time_pct, total_ns)."""
    n = len(records)
    cols = list(zip(*records)) if n else [(), (), (), (), ()]
    return Rows({"profile": list(cols[0]), "section": list(cols[1]), "table": list(cols[2]),
                 "time_pct": list(cols[3]), "total_ns": list(cols[4]),
                 "line_start": list(range(1, n + 1)), "line_end": list(range(1, n + 1))}, n)


NAN = float("nan")
INF = float("inf")


def test_known_section_values(monkeypatch):
    """A consistent table ranks by time; one whose times contradict Time(%) ranks by Time(%);
    ties keep file order; NaN times rank as 0."""
    rows = _rows([
        (1, "gpu", 10, 50.0, 100.0), (1, "gpu", 10, 30.0, 60.0), (1, "gpu", 10, 20.0, 40.0),
        (1, "api", 20, 10.0, 900.0), (1, "api", 20, 90.0, 100.0),  # contradicts: by Time(%)
        (2, "gpu", 30, 40.0, 5.0), (2, "gpu", 30, 40.0, 5.0), (2, "gpu", 30, 20.0, NAN),
        (2, "other", None, 1.0, 1.0),
    ])
    out = _same(rows, monkeypatch)
    assert list(out.col("share")[:5]) == [0.5, 0.3, 0.2, 0.1, 0.9]
    assert out.col("share_basis")[:6] == ["total_ns"] * 3 + ["time_pct"] * 2 + ["total_ns"]
    assert list(out.col("cumulative")[:3]) == [0.5, 0.8, 1.0]
    assert list(out.col("cumulative")[3:5]) == [1.0, 0.9]
    assert out.col("in_top")[:5] == [True, True, True, False, True]  # 0.8 before the third: under 0.9
    assert list(out.col("share")[5:8]) == [0.5, 0.5, 0.0]
    assert list(out.col("cumulative")[5:8]) == [0.5, 1.0, 1.0]
    assert out.col("in_top")[5:8] == [True, True, False]
    assert math.isnan(out.col("share")[8]) and out.col("in_top")[8] is None and out.col("share_basis")[8] is None


def test_values_only_python_takes_go_to_python(monkeypatch):
    """Ints, NumPy scalars and None in the ranked columns: the C module declines (None) and the
    Python path gives what it gives."""
    import numpy as np

    base = [(1, "gpu", 10, 60.0, 3.0), (1, "gpu", 10, 40.0, 2.0)]
    for bad in ((1, "gpu", 10, 1, 2.0), (1, "gpu", 10, np.float64(1.0), 2.0), (1, "gpu", 10.0, 1.0, 2.0),
                (1, "gpu", 1 << 70, 1.0, 2.0)):
        rows = _rows([*base, bad])
        assert kahan.rank(rows.col("section"), rows.col("profile"), rows.col("table"), rows.col("time_pct"),
                          rows.col("total_ns"), TIMED_SECTIONS, 0.9) is None
        _same(rows, monkeypatch)
    with pytest.raises(ValueError):
        kahan.rank(["gpu"], [1, 2], [1], [1.0], [1.0], TIMED_SECTIONS, 0.9)


def test_a_large_section_sorts_stably(monkeypatch):
    """Thousands of rows in one section, many ties: the merge sort keeps file order among equals."""
    recs = [(1, "api", 7 if i % 3 else 9, float(i % 5), float((i * 7919) % 13)) for i in range(5000)]
    _same(_rows(recs), monkeypatch)
    _same(_rows(recs[::-1]), monkeypatch)


FLOATS = st.one_of(
    st.sampled_from([NAN, 0.0, -0.0, 1.0, 2.0, 50.0, 100.0, 0.01, 1e-300, 5e-324, 1e300, 1.7976931348623157e308,
                     INF, -INF, -1.0, 33.33, 66.67]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.0, max_value=100.0),
)
ROW = st.tuples(
    st.sampled_from([1, 2, 3]),
    st.sampled_from([*TIMED_SECTIONS[:3], "kernel-trace", None]),
    st.sampled_from([None, 5, 40, -1, 100]),
    FLOATS,
    FLOATS,
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ROW, max_size=40), st.sampled_from([0.9, 0.5, 0.0, 1.0, 0.999999999999]))
def test_generated_sections(monkeypatch, records, threshold):
    _same(_rows(records), monkeypatch, threshold)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([1, 2, 3, -5, True, 2.0, 2**70, 7]), st.sampled_from(TIMED_SECTIONS[:2])),
                max_size=40), st.booleans())
def test_generated_profiles(monkeypatch, keys, rising):
    """Profiles that rise (each group looked for among the newest profile's), come back, or are not
    plain ints (True, 2.0, past 64 bits: the dict of groups then): C's groups are Python's."""
    if rising:
        keys = sorted(keys, key=lambda k: int(k[0]))
    recs = [(p, sec, 10, float(i % 7), float((i * 31) % 11)) for i, (p, sec) in enumerate(keys)]
    _same(_rows(recs), monkeypatch)


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([40.0, 30.0, 20.0, 10.0, 5.0, 0.0, NAN]),
                          st.sampled_from([4.0, 3.0, 2.0, 1.0, 0.0, 4000.0, NAN])), min_size=1, max_size=25),
       st.booleans())
def test_generated_tables(monkeypatch, cells, two_tables):
    """One section with consistent, contradicting and partly missing values, one or two source tables."""
    recs = [(1, "gpu", 10 if not two_tables or i % 2 else 90, p, t) for i, (p, t) in enumerate(cells)]
    _same(_rows(recs), monkeypatch)


def test_share_rows_is_ranked_rows(monkeypatch):
    rows = _rows([(1, "gpu", 10, 70.0, 7.0), (1, "gpu", 10, 30.0, 3.0)])
    out = share_rows(rows)
    assert list(out.col("share")) == [0.7, 0.3] and out.col("in_top") == [True, True]


def _first_test(totals, calls, avgs) -> bool:
    """core._any_inconsistent's first test in Python: every row's total within 1% of calls x average."""
    return all(c is not None and abs(t - c * a) <= 0.01 * t for t, c, a in zip(totals, calls, avgs))


CELL = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 100.0, 1e300]))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(CELL, st.one_of(st.none(), st.integers(-5, 10**6), st.sampled_from([2**60, 2**1100])),
                          CELL), max_size=12),
       st.booleans())
def test_plausible_is_the_first_test(rows, arrays):
    from array import array

    totals = [t for t, _, _ in rows]
    calls = [c for _, c, _ in rows]
    avgs = [a for _, _, a in rows]
    if arrays:
        totals, avgs = array("d", totals), array("d", avgs)  # type: ignore[assignment]
    try:
        want = _first_test(totals, calls, avgs)
    except OverflowError:  # an int beyond a double: C declines, Python's own test raises it
        assert kahan.plausible(totals, calls, avgs) is False
        return
    got = kahan.plausible(totals, calls, avgs)
    assert got is False or want is True  # True only where Python's test passes every row
    # where every cell is a plain float/int (not None) C decides as Python does
    if all(c is not None for c in calls):
        assert got is want


def test_plausible_declines_what_it_does_not_read():
    from array import array

    assert kahan.plausible([10.0], [10], [1.0]) is True
    assert kahan.plausible([10.05], [10], [1.0]) is True  # within 1%
    assert kahan.plausible([11.0], [10], [1.0]) is False
    assert kahan.plausible(array("d", [10.0]), [10], array("d", [1.0])) is True
    assert kahan.plausible(array("f", [10.0]), [10], [1.0]) is False  # floats of another width
    assert kahan.plausible([10], [10], [1.0]) is False  # an int total: Python's to look at
    assert kahan.plausible(None, [10], [1.0]) is False
    assert kahan.plausible([10.0], [True], [1.0]) is False
    assert kahan.plausible([10.0, 1.0], [10], [1.0]) is False  # lengths differ
    assert kahan.plausible([], [], []) is True


def test_arrays_of_doubles_are_read_in_c(monkeypatch):
    """Time(%) and Time as array('d') (how the bulk reader's columns are gathered): read by C, the
    Python path's bits; a NumPy array (NumPy scalars in Python) is Python's."""
    from array import array

    import numpy as np

    recs = [(1, "gpu", 10, 50.0, 100.0), (1, "gpu", 10, 30.0, 60.0), (1, "gpu", 10, NAN, 40.0),
            (1, "api", 20, 10.0, 900.0), (1, "api", 20, 90.0, 100.0), (2, "nvtx", None, 1.0, INF)]
    rows = _rows(recs)
    rows.cols["time_pct"] = array("d", rows.col("time_pct"))
    rows.cols["total_ns"] = array("d", rows.col("total_ns"))
    args = (rows.col("section"), rows.col("profile"), rows.col("table"))
    assert kahan.rank(*args, rows.col("time_pct"), rows.col("total_ns"), TIMED_SECTIONS, 0.9) is not None
    assert kahan.rank(*args, np.asarray(rows.col("time_pct")), rows.col("total_ns"), TIMED_SECTIONS, 0.9) is None
    assert kahan.rank(*args, array("f", [1.0] * 6), rows.col("total_ns"), TIMED_SECTIONS, 0.9) is None
    _same(rows, monkeypatch)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet=st.sampled_from("ab=P\"ROF \n\tSé\xff"), max_size=60),
       st.lists(st.text(alphabet=st.sampled_from("ab=PROF\" S\n"), min_size=2, max_size=6), max_size=5))
def test_find_any_is_any_substring(text, needles):
    assert kahan.find_any(text, tuple(needles)) is any(m in text for m in needles)


def test_find_any_long_texts_and_many_needles():
    """find_any on texts past one SIMD step (32 places) and up to 64 needles: a needle at each place,
    across the steps' ends and at the text's end."""
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("ab=P\"ROF \n\tSé\xff$Tt") for _ in range(rng.randint(0, 200)))
        needles = tuple("".join(rng.choice('ab=PROF" S\n$') for _ in range(rng.randint(2, 6)))
                        for _ in range(rng.randint(0, 64 if rng.random() < 0.2 else 6)))
        assert kahan.find_any(text, needles) is any(m in text for m in needles)
        raw = text.encode("latin-1")  # bytes: the same places (one byte a character here)
        assert kahan.find_any(raw, needles) is any(m.encode() in raw for m in needles)
    for at in range(70):
        text = "x" * at + "==PROF==" + "y" * (rng.randint(0, 3))
        assert kahan.find_any(text, ("zz", "==PROF==")) is True
        assert kahan.find_any(text[:-1] if text.endswith("=") else text[: at + 7], ("zz", "==PROF==")) is False


def test_find_any_needles_alike_in_their_first_bytes():
    """Needles of 2 to 12 bytes alike in their first two or more (what each place's first eight bytes
    pass over without a full compare: "Processing" against "Profiling result"), found or not as Python
    finds them, at a text's end too (fewer than eight bytes left)."""
    rng = random.Random(5)
    for _ in range(4000):
        stem = "".join(rng.choice("Pro") for _ in range(rng.randint(2, 9)))
        needles = tuple(stem[: rng.randint(2, len(stem))] + "".join(rng.choice("fcs") for _ in range(rng.randint(0, 3)))
                        for _ in range(rng.randint(1, 6)))
        text = "".join(rng.choice(["Pro", "P", "r", "o", "f", "c", "s", " "]) for _ in range(rng.randint(0, 40)))
        assert kahan.find_any(text, needles) is any(m in text for m in needles), (text, needles)
        raw = text.encode()
        assert kahan.find_any(raw, needles) is any(m.encode() in raw for m in needles)
    assert kahan.find_any("Processing [a.sqlite]", ("Profiling result", "gputime")) is False
    assert kahan.find_any("x Profiling result", ("Profiling result",)) is True
    assert kahan.find_any("xx gputim", ("gputime",)) is False and kahan.find_any("x gputime", ("gputime",)) is True


def test_find_any_in_ranges_is_the_ranges_joined():
    """find_any(data, needles, ranges): each range of a buffer (bytes, a bytearray, a memoryview: a sweep's
    chunk) looked in on its own -- what the ranges' text joined by a NUL gives, a needle across two ranges
    not found; a range outside the data an error."""
    import struct

    rng = random.Random(4)
    for _ in range(3000):
        data = bytes(rng.choice(b'ab=P"ROF \n$') for _ in range(rng.randint(0, 120)))
        cuts = sorted(rng.randint(0, len(data)) for _ in range(2 * rng.randint(0, 5)))
        pairs = list(zip(cuts[::2], cuts[1::2]))
        needles = tuple("".join(rng.choice('ab=PROF" \n$') for _ in range(rng.randint(2, 5)))
                        for _ in range(rng.randint(0, 8)))
        ranges = b"".join(struct.pack("qq", a, b) for a, b in pairs)
        joined = b"\x00".join(data[a:b] for a, b in pairs)
        want = any(m.encode() in joined for m in needles)
        for form in (data, bytearray(data), memoryview(data)):
            assert kahan.find_any(form, needles, ranges) is want
    assert kahan.FIND_ANY_RANGES == 1
    assert kahan.find_any(b"xx==PROF==", ("==PROF==",), struct.pack("qq", 2, 10)) is True
    assert kahan.find_any(b"xx==PROF==", ("==PROF==",), struct.pack("qqqq", 0, 6, 6, 10)) is False  # (across two)
    assert kahan.find_any(b"abc", ("a",), struct.pack("qq", 0, 3)) is None  # a needle of one character: Python's
    with pytest.raises(ValueError):
        kahan.find_any(b"abc", ("ab",), struct.pack("qq", 1, 4))
    with pytest.raises(ValueError):
        kahan.find_any(b"abc", ("ab",), b"\x00" * 8)


def test_find_any_in_short_ranges_of_a_long_buffer():
    """Ranges shorter than a SIMD step (32 places) in a long buffer are looked in 32 places a step too (the
    bytes past a range read, the places past its end left out): a needle that ends at a range's last byte
    is found, one that runs a byte past it is not."""
    import struct

    rng = random.Random(5)
    for _ in range(2000):
        data = bytearray(rng.choice(b'ab=P"ROF \n$') for _ in range(rng.randint(40, 400)))
        needles = tuple("".join(rng.choice('ab=PROF" $') for _ in range(rng.randint(2, 5))) for _ in range(rng.randint(1, 6)))
        cuts = sorted(rng.randint(0, len(data)) for _ in range(2 * rng.randint(1, 12)))
        pairs = [(a, min(b, a + rng.randint(0, 40))) for a, b in zip(cuts[::2], cuts[1::2])]
        if rng.random() < 0.5:  # a needle at a range's end: whole, or cut by its last byte
            a, b = rng.choice(pairs)
            m = rng.choice(needles).encode()
            at = max(a, b - len(m) + rng.choice((0, 1)))
            data[at : at + len(m)] = m[: len(data) - at]
        ranges = b"".join(struct.pack("qq", a, b) for a, b in pairs)
        joined = b"\x00".join(bytes(data[a:b]) for a, b in pairs)
        assert kahan.find_any(bytes(data), needles, ranges) is any(m.encode() in joined for m in needles)


def test_find_any_markers_and_what_it_leaves_to_python():
    from profconv.parse.context import KEYWORDS, contains_any
    from profconv.parse.stream import other_markers

    OTHER_MARKERS = other_markers("nvprof")

    assert kahan.find_any("==1== NVPROF\n==PROF== x", OTHER_MARKERS) is True
    assert kahan.find_any("==1== NVPROF\n==PRO", OTHER_MARKERS) is False
    assert kahan.find_any("a\n$ ./m3", KEYWORDS) is True and kahan.find_any("a$", KEYWORDS) is False
    assert kahan.find_any("", OTHER_MARKERS) is False
    assert kahan.find_any("Op Time → 1 ms", KEYWORDS) is None  # two bytes a character: Python's
    assert kahan.find_any("abc", ("a",)) is None  # a needle of one character
    assert kahan.find_any("abc", ("é€",)) is None  # not ASCII
    assert contains_any("Op Time → 1 ms", KEYWORDS) is True and contains_any("→", KEYWORDS) is False
    assert kahan.FIND_ANY_BYTES == 1 and kahan.find_any(b"==1== NVPROF\n==PROF== x", OTHER_MARKERS) is True
    assert kahan.find_any("Op Time → 1 ms".encode(), KEYWORDS) is True  # (bytes: a byte a place)
    with pytest.raises(TypeError):
        kahan.find_any(bytearray(b"abc"), OTHER_MARKERS)
    # contains_any of bytes: the C pass, else the needles' UTF-8 looked for (a needle of one character,
    # one not ASCII: Python's)
    assert contains_any(b"a\n$ ./m3", KEYWORDS) is True and contains_any(b"a$", KEYWORDS) is False
    assert contains_any("x → y".encode(), ("→",)) is True and contains_any(b"x y", ("y",)) is True
    assert contains_any(b"x y", ("→", "z")) is False
