"""profconv/parse/colviews.py: columns computed on demand give the lists they stand for."""

from __future__ import annotations

import math
from array import array

import numpy as np
import pytest

from profconv.parse import colviews
from profconv.parse.colviews import Chain, Coded, Const, Floats, Repeated, Runs, Sparse, Tiled, View, Window, both, positions
from profconv.parse.table import Rows


def _cases():
    yield Const("gpu", 7), ["gpu"] * 7
    yield Repeated(["a", "b", "c"], 4), ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    yield Repeated(range(10, 13), 2), [10, 10, 11, 11, 12, 12]
    yield Tiled(["m1", "m2", None], 3), ["m1", "m2", None] * 3
    yield Sparse(None, 9, [2, 5], ["x", "y"]), [None, None, "x", None, None, "y", None, None, None]
    yield Floats(array("d", [1.5, 2.5, 1.5, 0.0, 7.0])), [1.5, 2.5, 1.5, 0.0, 7.0]
    # several ncu pages' columns one after the other (core._chained), the small tables between as lists
    yield Chain([Tiled(["m1", None], 2), ["x", "m1"], Const("gpu", 2)]), ["m1", None, "m1", None, "x", "m1", "gpu", "gpu"]
    yield Chain([Floats(array("d", [1.5, 2.5])), [0.5], range(3, 5)]), [1.5, 2.5, 0.5, 3, 4]
    # one profile's rows of such columns (--profile N: ProfileSet.profile)
    yield Window(Tiled(["m1", "m2", None], 4), 2, 9), (["m1", "m2", None] * 4)[2:9]
    chain = Chain([Const("gpu", 3), ["x", "y"], Repeated(["k1", "k2"], 2)])
    yield Window(chain, 1, 8), ["gpu", "gpu", "x", "y", "k1", "k1", "k2"]
    yield Window(Window(Floats(array("d", [1.5, 2.5, 0.5, 3.0, 4.0, 9.0])), 1, 6), 0, 4), [2.5, 0.5, 3.0, 4.0]
    yield Window(["a", "b", "c", "d", "e", "f"], 1, 5), ["b", "c", "d", "e"]
    # a sweep's profile and table (a value a run of rows, a run of none among them) and names (a code a row)
    yield Runs(["p1", "p2", "p3", "p4"], np.array([2, 0, 3, 1], dtype=np.int64)), ["p1", "p1", "p3", "p3", "p3", "p4"]
    yield Runs(range(5, 8), np.array([1, 2, 2], dtype=np.int64)), [5, 6, 6, 7, 7]
    yield Coded(["k1", "k2", "k1s", "k2"], np.array([1, 0, 3, 2, 0], dtype=np.int64)), ["k2", "k1", "k2", "k1s", "k1"]
    yield Window(Runs([1, 2], np.array([3, 4], dtype=np.int64)), 2, 6), [1, 2, 2, 2]
    # a sweep's table column: its line numbers an int64 array, listed only where a row is asked for
    yield Runs(np.array([5, 12, 19], dtype=np.int64), np.array([2, 1, 3], dtype=np.int64)), [5, 5, 12, 19, 19, 19]


def test_views_are_their_lists():
    for view, want in _cases():
        assert len(view) == len(want) and view.tolist() == want and list(view) == want
        for lo in range(-1, len(want) + 2):
            for hi in range(lo, len(want) + 2):
                assert view[lo:hi] == want[lo:hi]
        assert [view[i] for i in range(-len(want), len(want))] == want + want
        assert view[::2] == want[::2] and view.take([3, 0, 3]) == [want[3], want[0], want[3]]
        assert view.take(range(1, 4)) == want[1:4]
        assert view.count(want[2]) == want.count(want[2])


def test_runs_and_codes_without_the_c_module(monkeypatch):
    """A sweep's views give the same rows where _summarycells is not built (the pure-Python mode)."""
    monkeypatch.setattr(colviews, "_cells", lambda: None)
    test_views_are_their_lists()


def test_runs_of_an_array_list_it_only_when_a_row_is_asked_for():
    """A Runs of an int64 array (the sweeps' table column) hands its frame the array's values with no
    list of them (a list of 100,000 ints is ~4 MB of new memory a parse); a row asked for lists them
    once, as Python ints."""
    runs = Runs(np.array([5, 12, 19], dtype=np.int64), np.array([2, 1, 3], dtype=np.int64))
    assert runs.listed is None
    assert np.asarray(runs, dtype=np.int64).tolist() == [5, 5, 12, 19, 19, 19] and runs.listed is None
    assert np.asarray(runs, dtype=np.float64).tolist() == [5.0, 5.0, 12.0, 19.0, 19.0, 19.0] and runs.listed is None
    assert runs[3] == 19 and type(runs[3]) is int and runs.listed == [5, 12, 19]
    runs.extend([7])
    assert np.asarray(runs, dtype=np.int64).tolist() == [5, 5, 12, 19, 19, 19, 7]


def test_runs_and_codes_positions():
    runs = Runs([1, 2, 1, 3], np.array([2, 3, 0, 2], dtype=np.int64))
    assert runs.positions([2]) == range(2, 5) and runs.positions([1]) == range(0, 2)
    assert runs.positions([1, 3]) == [0, 1, 5, 6] and runs.positions([9]) == range(0)
    runs.extend([3])
    assert runs.positions([3]) == range(5, 8) and positions(runs, [2, 3]) == range(2, 8)
    names = Coded(["a", "b", "a"], np.array([0, 1, 2, 1], dtype=np.int64))
    assert names.positions(["a"]) == [0, 2] and names.positions(["c"]) == range(0)
    assert Runs([], np.array([], dtype=np.int64)).tolist() == [] and len(Coded(["a"], np.array([], dtype=np.int64))) == 0
    assert runs.mapped(lambda v: v * 10).tolist() == [10, 10, 20, 20, 20, 30, 30, 30]
    assert names.mapped(str.upper).tolist() == ["A", "B", "A", "B"]


def test_runs_and_codes_take_many_rows_at_once():
    """take of many rows (a run of profiles' rows laid out together: render/ranked_text) by NumPy, of a
    few row by row; each the list's values, a tail's rows and negative positions too."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 4, 500)
    runs = Runs(list(range(500)), sizes.astype(np.int64))
    names = Coded(["a", "b", "c", "b"], rng.integers(0, 4, 700).astype(np.int64))
    for view in (runs, names):
        want = view.tolist()
        for idx in (rng.integers(0, len(want), 300).tolist(), list(range(len(want) - 1, -1, -7)), [5, 1], [],
                    np.arange(100, 200)):
            assert view.take(idx) == [want[i] for i in idx]
        view.extend(["t"])
        assert view.take([len(want), 0] * 40) == ["t", want[0]] * 40 and view.take([-1, -2] * 40) == ["t", want[-1]] * 40
        assert [view[i] for i in range(len(want))] == want
    assert list(runs.positions([7, 9])) == [i for i, v in enumerate(runs.tolist()) if v in (7, 9)]


def test_tail_extends_and_positions():
    view = Const("ncu-metric", 6)
    view.extend(["gpu", "gpu"])
    assert view.tolist() == ["ncu-metric"] * 6 + ["gpu"] * 2 and view[5:8] == ["ncu-metric", "gpu", "gpu"]
    assert view.positions(["gpu"]) == range(6, 8) and view.positions(["ncu-metric"]) == range(0, 6)
    assert view.positions(["ncu-metric", "gpu"]) == range(0, 8) and view.positions(["api"]) == range(0)
    profile = Const(1, 8)
    assert both(view.positions(["gpu"]), profile.positions([1])) == range(6, 8)
    assert both([1, 4, 7], range(3, 9)) == [4, 7] and both([1, 4, 7], [7, 2, 1]) == [1, 7]
    names = Repeated(["k1", "k2"], 3)
    assert names.positions(["k2"]) == [3, 4, 5] and positions(["a", "b", "a"], ["a"]) == [0, 2]
    assert Tiled(["m1", "m2"], 3).positions(["m2"]) == [1, 3, 5]


def test_mapped_once_per_value():
    calls = []

    def short(name):
        calls.append(name)
        return name.upper()

    view = Repeated(["k1", "k2", "k1"], 2)
    view.extend(["k2", "k3"])
    got = view.mapped(short)
    assert got.tolist() == ["K1", "K1", "K2", "K2", "K1", "K1", "K2", "K3"]
    assert sorted(calls) == ["k1", "k2", "k2", "k3"]  # once per distinct value of the view, once of the tail


def test_rows_of_views_to_frame():
    values = [1.5, float("nan"), 3.0, 4.0]
    rows = Rows({"section": Const("ncu-metric", 4), "name": Repeated(["a", "b"], 2), "metric": Tiled(["m", "n"], 2),
                 "value": values, "value_text": Sparse(None, 4, [1], ["n/a"]), "line_start": Repeated(range(3, 5), 2)})
    frame = rows.to_frame()
    assert frame["name"].tolist() == ["a", "a", "b", "b"] and frame["metric"].tolist() == ["m", "n", "m", "n"]
    assert frame["value_text"].tolist()[1] == "n/a" and frame["line_start"].tolist() == [3, 3, 4, 4]
    assert math.isnan(frame["value"].tolist()[1]) and np.asarray(Const(2.0, 3)).tolist() == [2.0, 2.0, 2.0]
    sub = rows.take([3, 1])
    assert sub.col("name") == ["b", "a"] and sub.col("value_text") == [None, "n/a"]


def _pandas_way(rows: Rows):
    """The frame pandas makes of each column's list (what Rows.to_frame's fast paths must equal)."""
    import pandas as pd

    from profconv.parse.schema import COLUMNS

    cols = {k: (c.tolist() if isinstance(c, View) else list(c)) for k, c in rows.cols.items()}
    out = {k: pd.array(cols[k] if k in cols else [None] * rows.n, dtype=d) if d not in ("float64", "int64")
           else np.asarray(cols.get(k, [np.nan if d == "float64" else 0] * rows.n), dtype=d) for k, d in COLUMNS.items()}
    return pd.DataFrame(out)


def test_frame_int64_and_boolean_columns_from_arrays_lists_and_views_as_pandas_makes_them():
    """to_frame's Int64 and boolean columns without pandas' conversion of a list a row: an array of
    integers (a sweep's calls), a list of bools with Nones (in_top), views with a missing value (an ncu
    page's calls and in_top), and missing columns: the frame pandas makes from the lists, value for
    value and mask for mask, and the values under the mask as pandas sets them (1, False)."""
    import pandas as pd

    rows = Rows({"calls": array("q", [3, 1, 4, 1]), "line_start": Const(None, 4), "line_end": Sparse(None, 4, [2], [9]),
                 "table": Runs([5, None], np.array([3, 1], dtype=np.int64)),
                 "in_top": [True, None, False, True], "section": Const("gpu", 4)}, 4)
    frame = rows.to_frame()
    pd.testing.assert_frame_equal(frame, _pandas_way(rows), check_exact=True)
    assert frame["calls"].tolist() == [3, 1, 4, 1] and frame["line_end"].tolist() == [pd.NA, pd.NA, 9, pd.NA]
    assert frame["table"].tolist() == [5, 5, 5, pd.NA] and frame["in_top"].tolist() == [True, pd.NA, False, True]
    assert frame["line_start"].array._data.tolist() == [1, 1, 1, 1]  # pandas' value under the mask
    assert frame["bytes"].isna().all() and frame["value_text"].isna().all()
    for name in ("calls", "line_start", "line_end", "table", "in_top"):
        assert str(frame[name].dtype) == ("boolean" if name == "in_top" else "Int64")
    missing = Rows({"in_top": Sparse(None, 3, [1], [True]), "calls": Const(None, 3)}, 3).to_frame()
    assert missing["in_top"].tolist() == [pd.NA, True, pd.NA] and missing["calls"].isna().all()
    assert missing["in_top"].array._data.tolist() == [False, True, False] and missing["profile"].tolist() == [0, 0, 0]


@pytest.mark.parametrize("values", [[1, 0, None], [1.0, True], [2, True], [True, float("nan")], ["x", True],
                                    [None, None], [np.True_, False, None]])
def test_frame_boolean_column_of_other_values_is_pandas_own(values):
    """A boolean list with a value not a bool or None (0 and 1, a float, a str, NumPy's bool) is left
    to pandas: its frame, or its error."""
    import pandas as pd

    rows = Rows({"in_top": values}, len(values))
    try:
        want = pd.array(values, dtype="boolean")
    except TypeError:
        with pytest.raises(TypeError):
            rows.to_frame()
        return
    assert rows.to_frame()["in_top"].array.equals(want)


def test_views_as_numpy_arrays():
    """`__array__` of a numeric view (Rows.to_frame's float and int64 columns) without a list."""
    nan = float("nan")
    for view in (Const(1.5, 3), Repeated([1, 2], 2), Tiled([1.0, nan], 2), Sparse(nan, 4, [1], [2.0]),
                 Floats(array("d", [nan, 3.0])), Chain([Floats(array("d", [1.0, nan])), [3.0], Const(4.0, 2), range(5, 7)]),
                 Runs([1.0, nan], np.array([1, 2], dtype=np.int64)), Coded([2.0, nan], np.array([1, 0, 1], dtype=np.int64))):
        view.extend([9.0])
        got = np.asarray(view, dtype="float64")
        assert got.dtype == np.float64 and np.array_equal(got, np.array(view.tolist(), dtype="float64"), equal_nan=True)
    assert np.asarray(Const(7, 2), dtype="int64").tolist() == [7, 7]
    assert np.asarray(Repeated([3, 4], 2)).tolist() == [3, 3, 4, 4]  # no dtype: by the list


def test_views_codes():
    """(distinct values, a code per row) of each view: the values they stand for."""
    for view, want in _cases():
        view.extend([want[0], "new"])
        distinct, codes = view.codes(np)
        assert [distinct[k] for k in codes.tolist()] == want + [want[0], "new"] and len(set(distinct)) == len(distinct)


PARTS = [Tiled(["a", "b", "c"], 4), ["x", None, "a"], Repeated(["k1", "k2"], 3), Const("a", 2),
         Floats(array("d", [1.5, float("nan"), 3.0])), Sparse(None, 5, [1, 3], ["a", "z"]), range(7, 10),
         array("d", [0.25, 0.5])]


def _chain() -> tuple[Chain, list]:
    chain = Chain(PARTS + [[]])
    chain.extend(["t1", "a"])
    rows = [v for p in PARTS for v in (p.tolist() if isinstance(p, View) else list(p))] + ["t1", "a"]
    return chain, rows


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def test_a_chain_of_every_kind_of_part_reads_as_the_list_of_its_rows():
    chain, rows = _chain()
    assert len(chain) == len(rows) == 38 and len(chain.parts) == len(PARTS)  # (an empty part is left out)
    for lo in range(len(rows) + 1):
        for hi in range(lo, len(rows) + 2):
            assert _same(chain[lo:hi], rows[lo:hi]), (lo, hi)
    assert _same(list(chain), rows) and _same([chain[k] for k in range(-len(rows), len(rows))], rows + rows)
    assert chain.count("a") == rows.count("a") == 9
    assert list(chain.positions({"a", 8})) == [k for k, v in enumerate(rows) if v in ("a", 8)]
    assert chain.take([0, 12, 37, 20]) == [rows[k] for k in (0, 12, 37, 20)]
    with pytest.raises(IndexError):
        chain[38]
    distinct, codes = chain.codes(np)
    assert _same([distinct[c] for c in codes], rows) and len(set(map(repr, distinct))) == len(distinct)
    assert chain.mapped(lambda v: f"<{v}>").tolist() == [f"<{v}>" for v in rows]
    assert Chain([Chain([[1], [2, 3]]), [4]]).parts == [[1], [2, 3], [4]]  # a chain's parts, not the chain
    assert Chain([Tiled(["a"], 3), ["b"], Const("a", 2)]).positions(["a"]) == [0, 1, 2, 4, 5]
    assert Chain([Const("a", 3), ["a"], Const("b", 2)]).positions(["a"]) == range(0, 4)


def test_a_chains_positions_within_rows_look_only_at_the_parts_there():
    """One profile's rows of several pages (profile_tables._where): positions in lo:hi, a range where
    they meet across parts (a page's Const and its small table's list), never a list of a page's rows."""
    section = Chain([Const("ncu-metric", 1000), ["gpu", "gpu"], Const("ncu-metric", 1000), ["gpu", "api"]])
    profile = Chain([Const(1, 1000), [1, 1], Const(2, 1000), [2, 2]])
    assert profile.positions([1]) == range(0, 1002) and profile.positions([2]) == range(1002, 2004)
    assert section.positions_in(["ncu-metric"], 0, 1002) == range(0, 1000)
    assert section.positions_in(["gpu"], 1002, 2004) == range(2002, 2003)
    assert section.positions_in(["gpu", "api"], 1002, 2004) == range(2002, 2004)
    assert section.positions_in(["gpu"], 0, 2004) == [1000, 1001, 2002]
    assert section.positions_in(["ncu-metric"], 500, 1500) == [*range(500, 1000), *range(1002, 1500)]
    assert section.positions_in(["x"], 0, 2004) == range(0) and section.positions_in(["gpu"], 5, 5) == range(0)


def test_a_window_of_a_view_with_its_tail():
    """A window over a view's last rows and its tail's first (a profile's rows: a page's and the gpu
    summary rows after them): positions, arrays, codes and mapped values are its rows'."""
    base = Const("ncu-metric", 5)
    base.extend(["gpu", "gpu", "api"])
    w = Window(base, 3, 7)
    assert w.tolist() == ["ncu-metric", "ncu-metric", "gpu", "gpu"] and len(w) == 4
    assert w.positions(["gpu"]) == range(2, 4) and w.positions(["api"]) == range(0)
    assert w.mapped(str.upper).tolist() == ["NCU-METRIC", "NCU-METRIC", "GPU", "GPU"]
    distinct, codes = w.codes(np)
    assert [distinct[k] for k in codes.tolist()] == w.tolist()
    values = Floats(array("d", [1.0, 2.0, 3.0]))
    values.extend([4.0])
    assert np.asarray(Window(values, 2, 4), dtype="float64").tolist() == [3.0, 4.0]
    assert Window(Chain([Const(1, 3), [1, 2], Const(2, 4)]), 2, 8).positions([2]) == range(2, 6)


def test_a_row_after_columns_of_every_kind():
    """Rows.with_row (a big table read as columns and its last line, cut short, read alone): each column
    keeps its kind, a column the row lacks is missing there."""
    rows = Rows({"section": Const("gpu-trace", 3), "name": ["a", "b", "c"], "start_ns": array("d", [1.0, 2.0, 3.0]),
                 "total_ns": np.array([4.0, 5.0, 6.0]), "calls": np.array([1, 1, 1]), "line_start": range(5, 8),
                 "line_end": range(5, 8)}, 3)
    got = rows.with_row({"section": "gpu-trace", "name": "d", "start_ns": 9.5, "total_ns": 7.0, "calls": 1,
                         "line_start": 8, "line_end": 9})
    assert len(got) == 4
    assert isinstance(got.cols["section"], Const) and list(got.col("section")) == ["gpu-trace"] * 4
    assert got.col("name") == ["a", "b", "c", "d"]
    assert got.col("start_ns") == array("d", [1.0, 2.0, 3.0, 9.5])
    assert got.col("total_ns").tolist() == [4.0, 5.0, 6.0, 7.0] and got.col("calls").dtype == np.int64
    assert got.col("line_start") == range(5, 9)
    assert list(got.col("line_end")) == [5, 6, 7, 9] and not isinstance(got.col("line_end"), range)
    partial = Rows({"name": ["a"], "total_ns": array("d", [1.0]), "calls": [2]}, 1).with_row({"name": "b"})
    assert partial.col("name") == ["a", "b"] and partial.col("calls") == [2, None]
    assert math.isnan(partial.col("total_ns")[1])
