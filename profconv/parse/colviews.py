"""Columns of Rows computed on demand: a big table's constant, repeated and tiled columns without a
Python object per row.

An `ncu --csv --page raw` page of 30,000 launches x 50 metrics is 1.5 million ncu-metric rows, but
only its values (one double each) vary from row to row: the kernel name and line number are each
launch's (repeated once per metric), the metric name and unit each metric's (tiled once per
launch), section, profile, tool and table one value all along. A `View` holds what it is made of
and gives Python lists only for what is asked: a slice (the --json/--csv writers take 10,000 rows
at a time), one value, an iteration in slices, NumPy's `__array__` (`Rows.to_frame`). Rows appended
after the view's own (`extend`: the gpu summary of the page gathered after its metric rows) are
kept as a plain list.

A sweep of summaries (nvprof --csv, nsys stats CSV: tens of thousands of small tables) is the same in
other shapes: its profile and table numbers are one value a run of a few rows (`Runs`), its names
and short names one str a distinct name and a code a row (`Coded`). A list a row of each was 1.2 MiB
of memory new to the process per 150,000 rows, a page fault per 4 KiB, and the time to fill it.

Where a caller would look at every row to find a few (the ranked sections' rows of one profile,
profconv.parse.shares and profconv.render.profile_tables), `positions(values)` says where the
view's rows hold one of `values` without a look at each row.
"""

from __future__ import annotations

from abc import abstractmethod
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, repeat
from typing import Any

SLICE = 1 << 16  # rows materialised at a time by an iteration


class View(Sequence):
    """n rows of the view's own (`_part`), then the rows of `tail` (a list)."""

    __slots__ = ("n", "tail")

    def __init__(self, n: int) -> None:
        self.n = n
        self.tail: list[Any] = []

    @abstractmethod
    def _part(self, lo: int, hi: int) -> list[Any]:
        """Rows lo:hi of the view's own (0 <= lo <= hi <= n) as a new list."""

    @abstractmethod
    def _own_positions(self, values: frozenset) -> Sequence[int]:
        """The positions of the view's own rows that hold one of `values`."""

    def __len__(self) -> int:
        return self.n + len(self.tail)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            lo, hi, step = k.indices(len(self))
            if step != 1:
                return self.tolist()[k]
            hi = max(lo, hi)
            out = self._part(min(lo, self.n), min(hi, self.n))
            if hi > self.n:
                out.extend(self.tail[max(lo - self.n, 0) : hi - self.n])
            return out
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("view index out of range")
        return self._at(k) if k < self.n else self.tail[k - self.n]

    def _at(self, k: int) -> Any:
        """Own row k (0 <= k < n)."""
        return self._part(k, k + 1)[0]

    def __iter__(self) -> Iterator[Any]:
        for lo in range(0, self.n, SLICE):
            yield from self._part(lo, min(self.n, lo + SLICE))
        yield from self.tail

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        own = self._own_array(np, dtype)
        if own is None:
            return np.asarray(self.tolist(), dtype=dtype)
        return np.concatenate([own, np.asarray(self.tail, dtype=own.dtype)]) if self.tail else own

    def _own_array(self, np: Any, dtype: Any) -> Any:
        """The view's own rows as a NumPy array of `dtype` made without a list (None: by the list)."""
        return None

    def tolist(self) -> list[Any]:
        return self[0 : len(self)]

    def codes(self, np: Any) -> tuple[list[Any], Any]:
        """(the distinct values, an int32 code per row): the view's own from what it is made of, no
        list of its rows (Rows.to_frame's string columns: each distinct value made once)."""
        distinct, own = self._own_codes(np)
        if not self.tail:
            return distinct, own
        index = {v: k for k, v in enumerate(distinct)}
        tail = [index.setdefault(v, len(index)) for v in self.tail]
        return list(index), np.concatenate([own, np.asarray(tail, dtype=np.int32)])

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}
        codes = [index.setdefault(v, len(index)) for v in self._part(0, self.n)]
        return list(index), np.asarray(codes, dtype=np.int32)

    def count(self, value: Any) -> int:
        return sum(self._part(lo, min(self.n, lo + SLICE)).count(value) for lo in range(0, self.n, SLICE)) + \
            self.tail.count(value)

    def extend(self, values: Iterable[Any]) -> None:
        self.tail.extend(values)

    def take(self, idx: Sequence[int]) -> list[Any]:
        """The values at positions `idx` (one list of the whole view made first where they are many)."""
        if isinstance(idx, range) and idx.step == 1:
            return self[idx.start : idx.stop]
        if len(idx) <= 4096:
            return [self[i] for i in idx]
        whole = self.tolist()
        return [whole[i] for i in idx]

    def positions(self, values: Iterable[Any]) -> Sequence[int]:
        """The positions, in order, of the rows that hold one of `values` (a range where it can be)."""
        want = frozenset(values)
        own = self._own_positions(want)
        more = [self.n + i for i, v in enumerate(self.tail) if _member(v, want)]
        if not more:
            return own
        if isinstance(own, range) and (not own or own.stop == more[0]) and more[-1] - more[0] == len(more) - 1:
            return range(own.start if own else more[0], more[-1] + 1)  # the view's last rows, the tail's first
        return [*own, *more]

    @abstractmethod
    def mapped(self, fn: Callable[[Any], Any]) -> View:
        """A view of fn(value) for every row, fn called once per distinct value (the tail's too)."""


class Const(View):
    """One value, n times."""

    __slots__ = ("value",)

    def __init__(self, value: Any, n: int) -> None:
        super().__init__(n)
        self.value = value

    def _part(self, lo: int, hi: int) -> list[Any]:
        return [self.value] * (hi - lo)

    def _at(self, k: int) -> Any:
        return self.value

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        return range(self.n) if _member(self.value, values) else range(0)

    def _own_array(self, np: Any, dtype: Any) -> Any:
        return np.full(self.n, self.value, dtype=dtype) if dtype is not None else None

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        return [self.value], np.zeros(self.n, dtype=np.int32)

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Const(fn(self.value), self.n)
        out.tail = _mapped_list(self.tail, fn)
        return out


class Repeated(View):
    """Each of `values` `times` times in a row (a launch's kernel name once per metric)."""

    __slots__ = ("times", "values")

    def __init__(self, values: Sequence[Any], times: int) -> None:
        super().__init__(len(values) * times)
        self.values, self.times = values, times

    def _part(self, lo: int, hi: int) -> list[Any]:
        if lo >= hi:
            return []
        t = self.times
        a, b = lo // t, (hi - 1) // t + 1
        out = list(chain.from_iterable(map(repeat, self.values[a:b], repeat(t))))
        return out[lo - a * t : hi - a * t]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        return np.repeat(np.asarray(self.values, dtype=dtype), self.times) if dtype is not None else None

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}
        codes = np.asarray([index.setdefault(v, len(index)) for v in self.values], dtype=np.int32)
        return list(index), np.repeat(codes, self.times)

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        t = self.times
        hits = [k for k, v in enumerate(self.values) if _member(v, values)]
        if len(hits) == len(self.values):
            return range(self.n)
        return [k * t + j for k in hits for j in range(t)]

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Repeated(_mapped_list(self.values, fn), self.times)
        out.tail = _mapped_list(self.tail, fn)
        return out


class Tiled(View):
    """`values` one after the other, `times` times over (each launch's metric names)."""

    __slots__ = ("times", "values")

    def __init__(self, values: Sequence[Any], times: int) -> None:
        super().__init__(len(values) * times)
        self.values, self.times = list(values), times

    def _part(self, lo: int, hi: int) -> list[Any]:
        if lo >= hi:
            return []
        m = len(self.values)
        a, b = lo // m, (hi - 1) // m + 1
        return (self.values * (b - a))[lo - a * m : hi - a * m]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        return np.tile(np.asarray(self.values, dtype=dtype), self.times) if dtype is not None else None

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}
        codes = np.asarray([index.setdefault(v, len(index)) for v in self.values], dtype=np.int32)
        return list(index), np.tile(codes, self.times)

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        m = len(self.values)
        hits = [j for j, v in enumerate(self.values) if _member(v, values)]
        if len(hits) == m:
            return range(self.n)
        return [k * m + j for k in range(self.times) for j in hits]

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Tiled(_mapped_list(self.values, fn), self.times)
        out.tail = _mapped_list(self.tail, fn)
        return out


class Floats(View):
    """An array of doubles (array('d')) as a view: rows appended go to the tail, never into the
    array (extending a big array in place may copy it whole: two of it held at once)."""

    __slots__ = ("values",)

    def __init__(self, values: array) -> None:
        super().__init__(len(values))
        self.values = values

    def _part(self, lo: int, hi: int) -> list[Any]:
        return self.values[lo:hi].tolist()

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        return [i for i, v in enumerate(self.values) if _member(v, values)]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        return np.frombuffer(self.values, dtype=np.float64).astype(dtype or np.float64)  # a copy: the frame's own

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Repeated(_mapped_list(self.values, fn), 1)
        out.tail = _mapped_list(self.tail, fn)
        return out


class Sparse(View):
    """`default` everywhere but at the positions `at` (sorted) where `values` are."""

    __slots__ = ("at", "default", "values")

    def __init__(self, default: Any, n: int, at: Sequence[int] = (), values: Sequence[Any] = ()) -> None:
        super().__init__(n)
        self.default, self.at, self.values = default, list(at), list(values)

    def _part(self, lo: int, hi: int) -> list[Any]:
        out = [self.default] * (hi - lo)
        k = bisect_left(self.at, lo)
        at, values = self.at, self.values
        while k < len(at) and at[k] < hi:
            out[at[k] - lo] = values[k]
            k += 1
        return out

    def _own_array(self, np: Any, dtype: Any) -> Any:
        if dtype is None:
            return None
        out = np.full(self.n, self.default, dtype=dtype)
        out[np.asarray(self.at, dtype=np.int64)] = np.asarray(self.values, dtype=dtype)
        return out

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {self.default: 0}
        codes = np.zeros(self.n, dtype=np.int32)
        codes[np.asarray(self.at, dtype=np.int64)] = [index.setdefault(v, len(index)) for v in self.values]
        return list(index), codes

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        if _member(self.default, values):
            return [i for i, v in enumerate(self._part(0, self.n)) if _member(v, values)]
        return [i for i, v in zip(self.at, self.values) if _member(v, values)]

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Sparse(fn(self.default), self.n, self.at, _mapped_list(self.values, fn))
        out.tail = _mapped_list(self.tail, fn)
        return out


class Runs(View):
    """values[k] sizes[k] times in a row, k after k (a sweep's profile and table of each row: a few
    rows each). `sizes` an int64 NumPy array, no size below 0; `values` a sequence, or an int64 NumPy
    array (line numbers: their list made only where a row is asked for, not by a parse that only
    hands the column on or makes its frame)."""

    __slots__ = ("ends", "ends_list", "given", "index", "listed", "sizes")

    def __init__(self, values: Sequence[Any], sizes: Any) -> None:
        ends = sizes.cumsum()
        super().__init__(int(ends[-1]) if len(ends) else 0)
        self.given: Any = values if getattr(values, "dtype", None) is not None else None
        self.listed: list[Any] | None = None if self.given is not None else list(values)
        self.sizes, self.ends = sizes, ends
        self.index: dict[Any, list[int]] | None = None
        self.ends_list: list[int] | None = None

    @property
    def values(self) -> list[Any]:
        if self.listed is None:
            self.listed = self.given.tolist()
        return self.listed

    def _runs(self, lo: int, hi: int) -> tuple[int, int, int]:
        """The runs that hold rows lo:hi (lo < hi) as a:b, and the row where run a starts."""
        a = int(self.ends.searchsorted(lo, side="right"))
        b = int(self.ends.searchsorted(hi - 1, side="right")) + 1
        return a, b, int(self.ends[a] - self.sizes[a])

    def _part(self, lo: int, hi: int) -> list[Any]:
        if lo >= hi:
            return []
        a, b, first = self._runs(lo, hi)
        scan = _cells()
        if scan is not None:
            out = scan.nvprof_runs(self.values[a:b], self.sizes[a:b])
        else:
            out = list(chain.from_iterable(map(repeat, self.values[a:b], self.sizes[a:b].tolist())))
        return out[lo - first : hi - first]

    def _at(self, k: int) -> Any:
        if self.ends_list is None:  # (a row at a time: the table's few rows of a profile, section by section)
            self.ends_list = self.ends.tolist()
        values = self.listed if self.listed is not None else self.values  # (no property call a row)
        return values[bisect_right(self.ends_list, k)]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        if dtype is None:
            return None
        return np.repeat(np.asarray(self.given if self.given is not None else self.values, dtype=dtype), self.sizes)

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}
        codes = np.asarray([index.setdefault(v, len(index)) for v in self.values], dtype=np.int32)
        return list(index), np.repeat(codes, self.sizes)

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        if self.index is None:  # each value's runs (of rows), made once: a look per profile is not one per run
            self.index = {}
            for k, (v, size) in enumerate(zip(self.values, self.sizes.tolist())):
                if size and _hashable(v):  # (an unhashable value is none of them: _member)
                    self.index.setdefault(v, []).append(k)
        ends, sizes = self.ends, self.sizes
        runs = sorted(k for v in values for k in self.index.get(v, ()))
        spans = [range(int(ends[k] - sizes[k]), int(ends[k])) for k in runs]
        if not spans:
            return range(0)
        if spans[-1].stop - spans[0].start == sum(map(len, spans)):  # (one after the other: one range)
            return range(spans[0].start, spans[-1].stop)
        return [i for r in spans for i in r]

    def take(self, idx: Sequence[int]) -> list[Any]:
        at = _own_indices(idx, self)
        if at is None:
            return super().take(idx)
        return list(map(self.values.__getitem__, self.ends.searchsorted(at, side="right").tolist()))

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Runs(_mapped_list(self.values, fn), self.sizes)
        out.tail = _mapped_list(self.tail, fn)
        return out


class Coded(View):
    """pool[codes[i]] for each row i (a sweep's names: each distinct one a str once, a code a row).
    `codes` an int64 or int32 NumPy array of indices into `pool` (int32: as the nsys sweep's C pass
    writes them, no copy)."""

    __slots__ = ("codes_", "order", "pool", "starts")

    def __init__(self, pool: Sequence[Any], codes: Any) -> None:
        super().__init__(len(codes))
        self.pool, self.codes_ = list(pool), codes
        self.order: Any = None
        self.starts: Any = None

    def _part(self, lo: int, hi: int) -> list[Any]:
        scan = _cells()
        if scan is not None:  # (nvprof_take reads int64 codes)
            return scan.nvprof_take(self.pool, self.codes_[lo:hi].astype("int64", copy=False))
        return list(map(self.pool.__getitem__, self.codes_[lo:hi].tolist()))

    def _at(self, k: int) -> Any:
        return self.pool[self.codes_[k]]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        return np.asarray(self.pool, dtype=dtype)[self.codes_] if dtype is not None else None

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}  # (a pool may hold a value twice: a short name of two names)
        remap = np.asarray([index.setdefault(v, len(index)) for v in self.pool] or [0], dtype=np.int32)
        return list(index), remap[self.codes_]

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        import numpy as np

        hits = [k for k, v in enumerate(self.pool) if _member(v, values)]
        if not hits:
            return range(0)
        if self.order is None:  # the rows in order of their codes, made once: a look is not one at each row
            self.order = np.argsort(self.codes_, kind="stable")
            self.starts = np.searchsorted(self.codes_[self.order], np.arange(len(self.pool) + 1))
        got = np.concatenate([self.order[self.starts[k] : self.starts[k + 1]] for k in hits])
        return np.sort(got).tolist()

    def take(self, idx: Sequence[int]) -> list[Any]:
        at = _own_indices(idx, self)
        if at is None:
            return super().take(idx)
        return list(map(self.pool.__getitem__, self.codes_[at].tolist()))

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        out = Coded(_mapped_list(self.pool, fn), self.codes_)
        out.tail = _mapped_list(self.tail, fn)
        return out


def _own_indices(idx: Sequence[int], view: View) -> Any:
    """`idx` as an int64 NumPy array where every index is one of the view's own rows (0 <= i < n), they
    are not one run of rows (View.take slices those) and not a few, else None (View.take's way)."""
    if (isinstance(idx, range) and idx.step == 1) or len(idx) < 64:  # (a few: row by row, `_at`)
        return None
    import numpy as np

    at = np.asarray(idx, dtype=np.int64)
    if at.ndim != 1 or (len(at) and (int(at.min()) < 0 or int(at.max()) >= view.n)):
        return None
    return at


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _cells() -> Any:
    """profconv.parse._summarycells where it is built with nvprof_take and nvprof_runs, else None."""
    from profconv.parse import native

    scan = native.load("_summarycells")
    return scan if scan is not None and hasattr(scan, "nvprof_runs") else None


class Chain(View):
    """Columns one after the other as one (several big ncu pages of one file, each part a view, with
    the small tables between them as lists): no list of the rows, each part keeps what it is made
    of. A part may be any sequence that slices (a View, a list, an array, a range)."""

    __slots__ = ("parts", "starts")

    def __init__(self, parts: Iterable[Sequence[Any]]) -> None:
        flat: list[Sequence[Any]] = []
        for p in parts:
            if isinstance(p, Chain) and not p.tail:
                flat.extend(p.parts)
            elif len(p):
                flat.append(p)
        starts = [0]
        for p in flat:
            starts.append(starts[-1] + len(p))
        super().__init__(starts[-1])
        self.parts, self.starts = flat, starts

    def locate(self, lo: int) -> int:
        """The index of the part that holds row lo (0 <= lo < n)."""
        return bisect_right(self.starts, lo) - 1

    def _part(self, lo: int, hi: int) -> list[Any]:
        out: list[Any] = []
        k = self.locate(lo) if lo < hi else 0
        while lo < hi:
            s, b = self.starts[k], min(hi, self.starts[k + 1])
            out.extend(self.parts[k][lo - s : b - s])
            lo, k = b, k + 1
        return out

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        return self.positions_in(values, 0, self.n)

    def positions_in(self, values: Iterable[Any], lo: int, hi: int) -> Sequence[int]:
        """The positions in lo:hi (of the chain's own rows) that hold one of `values`, looking only
        at the parts there (one profile's rows of a file of several pages); a range where they are."""
        want = values if isinstance(values, frozenset) else frozenset(values)
        pieces: list[Sequence[int]] = []  # ranges, each joined to the one before where they meet
        k = self.locate(lo) if lo < hi else len(self.parts)
        while k < len(self.parts) and self.starts[k] < hi:
            s, p = self.starts[k], self.parts[k]
            at = positions(p, want)
            a, b = max(lo - s, 0), min(hi - s, len(p))
            if isinstance(at, range) and at.step == 1:
                x = max(at.start, a)
                got: Sequence[int] = range(s + x, s + max(min(at.stop, b), x))
            else:
                got = [s + i for i in at if a <= i < b]
                if got and got[-1] - got[0] == len(got) - 1:  # (a small table's rows, all of them)
                    got = range(got[0], got[-1] + 1)
            if got:
                last = pieces[-1] if pieces else None
                if isinstance(last, range) and isinstance(got, range) and last.stop == got.start:
                    pieces[-1] = range(last.start, got.stop)
                else:
                    pieces.append(got)
            k += 1
        if len(pieces) <= 1:
            return pieces[0] if pieces else range(0)
        flat = [i for piece in pieces for i in piece]
        return range(flat[0], flat[-1] + 1) if flat[-1] - flat[0] == len(flat) - 1 else flat

    def _own_array(self, np: Any, dtype: Any) -> Any:
        got = []
        for p in self.parts:
            a = p._own_array(np, dtype) if isinstance(p, View) and not p.tail else None
            if a is None and not isinstance(p, View) and dtype is not None:
                a = np.asarray(p, dtype=dtype)
            if a is None:
                return None
            got.append(a)
        return np.concatenate(got)

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        index: dict[Any, int] = {}
        got = []
        for p in self.parts:
            if isinstance(p, View):
                distinct, codes = p.codes(np)
            else:
                own: dict[Any, int] = {}
                codes = np.asarray([own.setdefault(v, len(own)) for v in p], dtype=np.int32)
                distinct = list(own)
            remap = np.asarray([index.setdefault(v, len(index)) for v in distinct], dtype=np.int32)
            got.append(remap[codes])
        return list(index), np.concatenate(got)

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        once = _once(fn)
        out = Chain([p.mapped(once) if isinstance(p, View) else _mapped_list(p, once) for p in self.parts])
        out.tail = _mapped_list(self.tail, once)
        return out


class Window(View):
    """Rows lo:hi of a column (a view, its tail's rows too, a list, an array, a range) as a view of
    them: one profile's rows of a file of several big ncu pages (ProfileSet.profile: --profile N), no
    list of its rows made."""

    __slots__ = ("base", "lo")

    def __init__(self, base: Sequence[Any], lo: int, hi: int) -> None:
        if isinstance(base, Window) and not base.tail:
            base, lo, hi = base.base, base.lo + lo, base.lo + hi
        super().__init__(hi - lo)
        self.base, self.lo = base, lo

    def _part(self, lo: int, hi: int) -> list[Any]:
        got = self.base[self.lo + lo : self.lo + hi]
        return got if type(got) is list else list(got)

    def _own_positions(self, values: frozenset) -> Sequence[int]:
        lo, hi = self.lo, self.lo + self.n
        base = self.base
        at = base.positions_in(values, lo, hi) if isinstance(base, Chain) and not base.tail else positions(base, values)
        if isinstance(at, range) and at.step == 1:
            a = max(at.start, lo)
            return range(a - lo, max(min(at.stop, hi), a) - lo)
        return [i - lo for i in at if lo <= i < hi]

    def _own_array(self, np: Any, dtype: Any) -> Any:
        if dtype is None:
            return None  # (by the list of its own rows)
        whole = np.asarray(self.base, dtype=dtype) if isinstance(self.base, View) else None
        if whole is None:
            return np.asarray(self.base[self.lo : self.lo + self.n], dtype=dtype)
        return whole[self.lo : self.lo + self.n].copy()

    def _own_codes(self, np: Any) -> tuple[list[Any], Any]:
        if not isinstance(self.base, View):
            return super()._own_codes(np)
        distinct, codes = self.base.codes(np)  # (the base's values: a few of them may be no row's here)
        return distinct, codes[self.lo : self.lo + self.n].copy()

    def mapped(self, fn: Callable[[Any], Any]) -> View:
        once = _once(fn)
        base = self.base
        out: View = (Window(base.mapped(once), self.lo, self.lo + self.n) if isinstance(base, View)
                     else Chain([_mapped_list(self._part(0, self.n), once)]))
        out.tail = _mapped_list(self.tail, once)
        return out


def _once(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """fn called once per distinct value (the parts of a view and its tail: one memo)."""
    memo: dict[Any, Any] = {}

    def once(v: Any) -> Any:
        got = memo.get(v, memo)
        if got is memo:
            got = memo[v] = fn(v)
        return got

    return once


def _member(value: Any, values: frozenset) -> bool:
    try:
        return value in values
    except TypeError:  # an unhashable value is none of them
        return False


def _mapped_list(values: Sequence[Any], fn: Callable[[Any], Any]) -> list[Any]:
    memo: dict[Any, Any] = {}
    out = []
    for v in values:
        got = memo.get(v, memo)
        if got is memo:
            got = memo[v] = fn(v)
        out.append(got)
    return out


def holds_views(cols: Iterable[Any]) -> bool:
    """Whether any of these columns is a View (the rows of a table that keeps its columns so)."""
    return any(isinstance(c, View) for c in cols)


def holds_page_views(cols: Iterable[Any]) -> bool:
    """Whether any of these columns is a View other than Runs: an ncu page's kept as views (a few big
    profiles, whose rows the terminal table finds by the views). A sweep's Runs (its profile and section:
    a value a run of a few rows, thousands of profiles) are as a list to it."""
    return any(isinstance(c, View) and not isinstance(c, Runs) for c in cols)


def both(a: Sequence[int], b: Sequence[int]) -> Sequence[int]:
    """The positions in both of two ordered sequences of positions (a range where both are)."""
    if isinstance(a, range) and isinstance(b, range) and a.step == b.step == 1:
        return range(max(a.start, b.start), max(max(a.start, b.start), min(a.stop, b.stop)))
    if isinstance(b, range):
        a, b = b, a
    if isinstance(a, range):
        return [i for i in b if i in a]
    keep = set(b)
    return [i for i in a if i in keep]


def positions(col: Sequence[Any], values: Iterable[Any]) -> Sequence[int]:
    """The positions of the rows of `col` that hold one of `values`: by the view where it is one."""
    if isinstance(col, View):
        return col.positions(values)
    want = frozenset(values)
    return [i for i, v in enumerate(col) if _member(v, want)]
