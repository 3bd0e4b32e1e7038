"""`ProfileSet.profiles` held as columns: what surrounds each profile (ProfileInfo), one list a field.

A sweep of 52,562 nvprof `--csv` profiles made a ProfileInfo object each (~1 µs and ~370 bytes
apiece) that most callers never look at: `profconv.parse()` returns them unread, the writers read
their fields in bulk. `ProfileColumns` holds the fields as columns and is a `Sequence` of
ProfileInfo all the same: an item is made where someone asks for it (by index, slice or
iteration) and kept (the same object each time, so what a caller changes in it stays), and a
writer reads `columns()` (every made item's fields as it is now, the others' from the columns).
`columns_of` gives those of any sequence of ProfileInfo (a list a caller made)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any, overload

from profconv.parse.schema import ProfileInfo

FIELDS = ("profile", "tool", "line_start", "line_end", "pid", "command", "model", "correctness", "op_times_s",
          "device")


class ProfileColumns(Sequence[ProfileInfo]):
    """n profiles' fields as columns (`cols`: FIELDS; `model`, `correctness`, `device` may be left
    out: None throughout; `op_times_s` too: none). Items made on access are held in `made`."""

    def __init__(self, cols: dict[str, Sequence[Any]], n: int) -> None:
        self.cols = cols
        self.n = n
        self.made: dict[int, ProfileInfo] = {}

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"ProfileColumns({self.n} profiles)"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ProfileColumns, list, tuple)):
            return len(other) == self.n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (a list's equality, a list's unhashability)

    @overload
    def __getitem__(self, i: int) -> ProfileInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[ProfileInfo]: ...

    def __getitem__(self, i: int | slice) -> ProfileInfo | list[ProfileInfo]:
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("profile index out of range")
        return self._item(i)

    def __iter__(self) -> Iterator[ProfileInfo]:
        return map(self._item, range(self.n))

    def _item(self, k: int) -> ProfileInfo:
        got = self.made.get(k)
        if got is None:
            cols = self.cols
            ops = cols.get("op_times_s")
            got = self.made[k] = ProfileInfo(
                profile=cols["profile"][k], tool=cols["tool"][k], line_start=cols["line_start"][k],
                line_end=cols["line_end"][k], pid=cols["pid"][k], command=cols["command"][k],
                model=_at(cols, "model", k), correctness=_at(cols, "correctness", k),
                op_times_s=list(ops[k]) if ops is not None else [], device=_at(cols, "device", k))
        return got

    def column(self, name: str) -> list[Any]:
        """One field of every profile, in order (a new list: the items made, as they are now)."""
        got = self.cols.get(name)
        if got is not None:
            out = list(got)
        else:  # every profile's default (a list of its own for op_times_s)
            out = [[] for _ in range(self.n)] if name == "op_times_s" else [None] * self.n
        for k, info in self.made.items():
            out[k] = getattr(info, name)
        return out

    def view(self, name: str) -> Sequence[Any] | None:
        """One field of every profile for reading only: the column as held where no item was made
        (no copy), else `column`; None where every profile holds the field's default (None, [])."""
        if not self.made:
            return self.cols.get(name)
        return self.column(name)

    def columns(self) -> dict[str, list[Any]]:
        """Every field (FIELDS) as a column."""
        return {name: self.column(name) for name in FIELDS}

    @staticmethod
    def concat(parts: Sequence[Sequence[ProfileInfo]]) -> ProfileColumns:
        """The profiles of `parts` (ProfileColumns or lists of ProfileInfo) one after another."""
        sets = [p if isinstance(p, ProfileColumns) else columns_of(p) for p in parts]
        n = sum(len(s) for s in sets)
        names = [f for f in FIELDS if any(f in s.cols or s.made for s in sets)]
        cols: dict[str, Sequence[Any]] = {}
        for name in names:
            cols[name] = list(chain.from_iterable(
                s.cols[name] if name in s.cols and not s.made else s.column(name) for s in sets))
        return ProfileColumns(cols, n)


def _at(cols: dict[str, Sequence[Any]], name: str, k: int) -> Any:
    got = cols.get(name)
    return None if got is None else got[k]


def columns_of(infos: Sequence[ProfileInfo]) -> ProfileColumns:
    """Any sequence of ProfileInfo as ProfileColumns (the same one where it is one; a list's
    items read once, their fields copied)."""
    if isinstance(infos, ProfileColumns):
        return infos
    cols: dict[str, Sequence[Any]] = {name: list(map(attrgetter(name), infos)) for name in FIELDS}
    cols["op_times_s"] = [list(x) for x in cols["op_times_s"]]
    return ProfileColumns(cols, len(infos))
