"""Canonical rows held as plain Python columns: what the parse core produces, with no pandas in sight.

`Rows` is a column store over the schema of profconv/parse/schema.py (same column names, same
meaning). A column is a list (or any sequence: `array`, a NumPy array from a bulk reader) of one
value per row; a column the rows never had is simply absent and reads as missing. Missing values
are NaN in float columns and None elsewhere, exactly where the DataFrame holds NaN / <NA>.

The terminal tables of `profconv parse` are rendered from `Rows` directly, so a parse that only
prints a table never imports pandas; `to_frame()` builds the documented DataFrame (and imports
pandas) only when a caller asks for it (`ProfileSet.frame`, --json, --csv, the report).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from profconv.parse.colviews import View
from profconv.parse.schema import COLUMNS

if TYPE_CHECKING:
    import pandas as pd

NAN = float("nan")
FLOAT_COLUMNS = frozenset(c for c, t in COLUMNS.items() if t == "float64")


def missing_value(column: str) -> Any:
    """What an absent cell of `column` reads as: NaN for float columns, None for the others."""
    return NAN if column in FLOAT_COLUMNS else None


_NO_DOUBLES = array("d")


def _is_doubles(col: Any) -> bool:
    return type(col) is array and col.typecode == "d"


def _doubles_joined(name: str, parts: Sequence[Rows]) -> array:
    """One array('d') of a float column from parts whose column is an array('d') or absent (NaN)."""
    out = array("d")
    for p in parts:
        c = p.cols.get(name)
        out.extend(array("d", [NAN]) * p.n if c is None else c)  # type: ignore[arg-type]
    return out


def _appended(col: Any, v: Any) -> Sequence[Any]:
    """A column with one value after its own, of the same kind where it can be."""
    if isinstance(col, View):
        col.extend([v])
        return col
    if isinstance(col, range) and col.step == 1 and v == col.stop:
        return range(col.start, col.stop + 1)
    if type(col) is array:
        col.append(v)
        return col
    if hasattr(col, "dtype"):  # a NumPy array: one of the same dtype (an int column stays ints)
        import numpy as np

        return np.append(col, np.asarray([v], dtype=col.dtype))
    return [*col, v]


class Rows:
    """Columnar canonical rows: `cols` maps a schema column to one value per row (absent: missing)."""

    __slots__ = ("cols", "n")

    def __init__(self, cols: dict[str, Sequence[Any]] | None = None, n: int | None = None) -> None:
        self.cols: dict[str, Sequence[Any]] = dict(cols or {})
        if n is None:
            n = len(next(iter(self.cols.values()))) if self.cols else 0
        self.n = n
        for name, col in self.cols.items():
            if name not in COLUMNS:
                raise ValueError(f"not a schema column: {name}")
            if len(col) != n:
                raise ValueError(f"column {name} has {len(col)} values, expected {n}")

    @classmethod
    def trusted(cls, cols: dict[str, Sequence[Any]], n: int) -> Rows:
        """Rows over `cols` as they are (not copied, not checked): for a reader whose columns are
        schema columns of n values each by construction (nvprof's bulk summary rows)."""
        rows = cls.__new__(cls)
        rows.cols = cols
        rows.n = n
        return rows

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"Rows({self.n} rows; {', '.join(self.cols)})"

    def has(self, name: str) -> bool:
        return name in self.cols

    def col(self, name: str) -> Sequence[Any]:
        """The column's values (a constant missing value per row when the rows never had it)."""
        c = self.cols.get(name)
        if c is None:
            return [missing_value(name)] * self.n
        return c

    def set(self, name: str, values: Sequence[Any]) -> None:
        if name not in COLUMNS:
            raise ValueError(f"not a schema column: {name}")
        if len(values) != self.n:
            raise ValueError(f"column {name} has {len(values)} values, expected {self.n}")
        self.cols[name] = values

    def with_row(self, values: dict[str, Any]) -> Rows:
        """These rows and one more after them (`values` by column; a column it lacks is missing there),
        each column kept in its kind: a view's row goes to its tail, an array's onto it, line
        numbers that go on stay a range (a big table read as columns, and its last line, cut short
        in the input, read alone: profconv.parse.dialects.nsys)."""
        cols: dict[str, Sequence[Any]] = {}
        for name, col in self.cols.items():
            v = values.get(name, missing_value(name))
            cols[name] = _appended(col, v)
        return Rows(cols, self.n + 1)

    def take(self, idx: Sequence[int]) -> Rows:
        """The rows at positions `idx`, in that order."""
        return Rows({k: v.take(idx) if isinstance(v, View) else [v[i] for i in idx] for k, v in self.cols.items()},
                    len(idx))

    def where(self, keep: Iterable[bool]) -> Rows:
        return self.take([i for i, k in enumerate(keep) if k])

    def records(self, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """One dict per row (every schema column, or `columns`), missing cells as NaN / None."""
        names = list(columns or COLUMNS)
        cols = [self.col(c) for c in names]
        return [dict(zip(names, vals)) for vals in zip(*cols)] if self.n else []

    @staticmethod
    def from_tuples(records: Sequence[tuple], columns: Sequence[str], fixed: dict[str, Any] | None = None) -> Rows:
        """Rows from tuples in `columns` order, plus constant columns."""
        n = len(records)
        cols: dict[str, Sequence[Any]] = {}
        if n:
            for name, values in zip(columns, zip(*records)):
                cols[name] = list(values)
        else:
            cols = {name: [] for name in columns}
        for k, v in (fixed or {}).items():
            cols[k] = [v] * n
        return Rows(cols, n)

    @staticmethod
    def concat(parts: Sequence[Rows]) -> Rows:
        """The rows of every part, in order; a column some part lacks is missing in its rows."""
        parts = [p for p in parts if p.n]
        if not parts:
            return Rows()
        if len(parts) == 1:
            return Rows(dict(parts[0].cols), parts[0].n)
        names = [c for c in COLUMNS if any(c in p.cols for p in parts)]
        cols: dict[str, Sequence[Any]] = {}
        for name in names:
            if name in FLOAT_COLUMNS and all(_is_doubles(p.cols.get(name, _NO_DOUBLES)) for p in parts):
                cols[name] = _doubles_joined(name, parts)  # arrays of doubles stay one (no float objects)
                continue
            got = [a for a in (p.cols.get(name) for p in parts) if isinstance(a, array)]
            if len(got) == len(parts) and len({a.typecode for a in got}) == 1:
                cols[name] = joined = array(got[0].typecode)
                for a in got:  # arrays of integers (calls, line numbers) stay one too (no int objects)
                    joined.extend(a)
                continue
            out: list[Any] = []
            for p in parts:
                c = p.cols.get(name)
                if c is None:
                    out.extend([missing_value(name)] * p.n)
                else:
                    out.extend(c)
            cols[name] = out
        return Rows(cols, sum(p.n for p in parts))

    # ------------------------------------------------------------------ DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The documented DataFrame (schema.COLUMNS order and dtypes)."""
        import numpy as np
        import pandas as pd

        from profconv.parse.schema import empty_frame

        n = self.n
        if not n:
            return empty_frame()
        pd_array: Any = pd.array  # dtype given as a string: the stubs' overloads do not cover it
        out: dict[str, Any] = {}
        for name, dtype in COLUMNS.items():
            c = self.cols.get(name)
            if isinstance(c, View):  # an ncu page's column: made from what it is made of where it can
                made = _view_column(pd, np, c, dtype)
                if made is not None:
                    out[name] = made
                    continue
                c = c.tolist()
            if dtype == "float64":
                out[name] = np.full(n, np.nan) if c is None else np.asarray(c, dtype="float64")
            elif dtype == "int64":
                out[name] = np.zeros(n, dtype="int64") if c is None else np.asarray(c, dtype="int64")
            elif c is None:
                out[name] = _missing_column(pd, n, dtype)
            elif dtype == "Int64" and (whole := _whole(np, c)) is not None:
                out[name] = pd.array(whole, dtype="Int64")
            elif dtype == "boolean" and (bools := _bools(np, c)) is not None:
                out[name] = pd.arrays.BooleanArray(*bools)
            elif dtype == "string" and (strings := _string_column(pd, c)) is not None:
                out[name] = strings
            else:
                out[name] = pd_array(c if isinstance(c, (list, np.ndarray)) else list(c), dtype=dtype)
        return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)

    @staticmethod
    def from_frame(frame: pd.DataFrame) -> Rows:
        """Rows from a frame in the schema (a CUPTI profile, a stored CSV read back)."""
        import pandas as pd

        n = len(frame)
        cols: dict[str, Sequence[Any]] = {}
        for name in COLUMNS:
            if name not in frame.columns:
                continue
            s = frame[name]
            if name in FLOAT_COLUMNS:
                cols[name] = s.to_numpy(dtype="float64", na_value=float("nan")).tolist()
            else:
                cols[name] = [None if v is pd.NA or v is None or (isinstance(v, float) and v != v) else v
                              for v in s.astype(object).tolist()]
        return Rows(cols, n)


def _view_column(pd: Any, np: Any, c: View, dtype: str) -> Any:
    """A View's column of the frame: NumPy's array of a numeric one, an Int64 or boolean one as values
    and a mask, a "string" one (pyarrow storage) from its distinct values and codes; None for the
    others (pandas' conversion of its list)."""
    if dtype in ("float64", "int64"):
        return np.asarray(c, dtype=dtype)
    if dtype == "Int64":
        try:
            return pd.array(np.asarray(c, dtype=np.int64), dtype="Int64")
        except (TypeError, ValueError, OverflowError):  # a missing value: from the distinct values
            return _masked_view(pd, np, c, dtype)
    if dtype == "boolean":
        return _masked_view(pd, np, c, dtype)
    if dtype != "string" or getattr(pd.StringDtype(), "storage", "") != "pyarrow":
        return None
    distinct, codes = c.codes(np)
    if not set(map(type, distinct)) <= {str, type(None)}:
        return None
    import pyarrow as pa

    try:
        pool = pa.array(distinct, type=pa.large_string())
    except (pa.ArrowException, UnicodeError):  # a lone surrogate: pandas says what
        return None
    return pd.arrays.ArrowStringArray(pa.chunked_array([pool.take(codes)]))


def _masked_view(pd: Any, np: Any, c: View, dtype: str) -> Any:
    """A View's Int64 or boolean column (a missing value or more) from its distinct values and codes
    (View.codes: no list of its rows; a raw ncu page's calls and in_top, 1.4 million rows: ~0.6 s
    by pandas' conversion of the list): values and mask a distinct value, as pandas makes them (1 or
    False under the mask). None where a value is not an int (Int64) or bool (boolean), or is beyond
    int64: pandas' conversion of the list."""
    distinct, codes = c.codes(np)
    kind = bool if dtype == "boolean" else int
    if not all(v is None or type(v) is kind for v in distinct):
        return None
    fill = False if dtype == "boolean" else 1
    try:
        values = np.array([fill if v is None else v for v in distinct], dtype=kind if kind is bool else np.int64)
    except OverflowError:
        return None
    mask = np.array([v is None for v in distinct], dtype=bool)
    make = pd.arrays.BooleanArray if dtype == "boolean" else pd.arrays.IntegerArray
    return make(values[codes], mask[codes])


def _whole(np: Any, c: Any) -> Any:
    """An Int64 column's values as an int64 ndarray where none is missing (one C conversion, where
    pandas would look at each list item), else None. (An array of integers, a sweep's calls and line
    numbers, was made a list first: 15-18 ms a column of 160,000 rows, against 1 ms.)"""
    if isinstance(c, np.ndarray):
        return c.astype("int64", copy=False) if c.dtype.kind in "iu" else None
    if isinstance(c, array) and c.typecode in "bBhHiIlLqQ":
        return _int64(np, np.frombuffer(c, dtype=c.typecode)) if c else np.zeros(0, dtype=np.int64)
    if type(c) is not list or (c and type(c[0]) is not int):
        return None
    try:
        return np.array(c, dtype=np.int64)
    except (TypeError, OverflowError, ValueError):  # a None (missing), a value beyond int64: pandas' way
        return None


def _int64(np: Any, values: Any) -> Any:
    """values (an integer ndarray) as a new int64 array, None where one is beyond int64 (pandas' way)."""
    if values.dtype == np.uint64 and values.max() > np.iinfo(np.int64).max:
        return None
    return values.astype(np.int64)


def _bools(np: Any, c: Any) -> Any:
    """A boolean column's list (in_top) as pandas' values and mask where each item is a bool or None,
    else None: pandas' conversion of the list (which takes 0 and 1 too, and refuses a float among
    bools). ~10 ms against pandas' ~17-25 ms for 160,000 rows."""
    if type(c) is not list:
        return None
    kinds, n = set(map(type, c)), len(c)
    if kinds <= {bool}:
        return np.fromiter(c, dtype=bool, count=n), np.zeros(n, dtype=bool)
    if kinds != {bool, type(None)}:
        return None
    items = np.array(c, dtype=object)
    mask = np.equal(items, None)
    items[mask] = False
    return items.astype(bool), mask


def _string_column(pd: Any, c: Any) -> Any:
    """A "string" column (pyarrow storage) of a list as pandas makes it from the list: one str all
    along as that str taken n times, else pyarrow's array of the list (_strings); None: pandas' own
    conversion (where pyarrow is not pandas' storage, or an item is not a str or None)."""
    if type(c) is not list or getattr(pd.StringDtype(), "storage", "") != "pyarrow":
        return None
    if c and type(c[0]) is str and c.count(c[0]) == len(c):  # (a sweep's section or tool: no hashing)
        import numpy as np
        import pyarrow as pa

        one = pa.array([c[0]], type=pa.large_string())
        return pd.arrays.ArrowStringArray(pa.chunked_array([one.take(np.zeros(len(c), dtype=np.int32))]))
    return _strings(pd, c)


def _strings(pd: Any, c: list) -> Any:
    """A list of str and None (NaN too) as pandas makes its "string" column (pyarrow storage), by one
    pyarrow conversion: ~8 ms against pandas' ~20 ms for an nvprof trace's 83,000 names, most of them
    distinct, and against ~17 ms from the distinct values and their codes for a sweep's 116,000
    sections of 5. None where an item is not a str (pandas makes a str of it) or cannot be encoded
    (pandas says what)."""
    import pyarrow as pa

    try:
        return pd.arrays.ArrowStringArray(pa.chunked_array([pa.array(c, type=pa.large_string(), from_pandas=True)]))
    except (pa.ArrowException, UnicodeError, TypeError, ValueError):
        return None


def _missing_column(pd: Any, n: int, dtype: str) -> Any:
    """A column the rows never had: n missing values of `dtype`. A pyarrow-backed string column
    (pandas' "string" where pyarrow is installed) is made as one block of nulls, not from n Nones
    one by one (seven such columns were most of building an nsys trace's frame); an Int64 or boolean
    one as its values and a mask all set (pandas' conversion of n Nones: ~20 ms a column of 160,000)."""
    if dtype == "string" and getattr(pd.StringDtype(), "storage", "") == "pyarrow":
        import pyarrow as pa

        return pd.arrays.ArrowStringArray(pa.chunked_array([pa.nulls(n, pa.large_string())]))
    import numpy as np

    if dtype == "Int64":  # (the values under the mask as pandas sets them: 1)
        return pd.arrays.IntegerArray(np.ones(n, dtype=np.int64), np.ones(n, dtype=bool))
    if dtype == "boolean":
        return pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    return pd.array([None] * n, dtype=dtype)
