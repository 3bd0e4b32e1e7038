"""Human units for nanosecond values, in one place."""

from __future__ import annotations

import math


def duration(ns: float | None) -> str:
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "—"
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:.4g} s"
    if a >= 1e6:
        return f"{ns / 1e6:.4g} ms"
    if a >= 1e3:
        return f"{ns / 1e3:.4g} us"
    return f"{ns:.4g} ns"


def count(v) -> str:
    try:
        if v is None or v != v:
            return "—"
    except TypeError:
        return "—"
    return f"{int(v):,}"


def _missing(v) -> bool:
    try:
        return v is None or v != v
    except (TypeError, ValueError):
        return v is None


def seconds(s: float | None) -> str:
    """A time in seconds with the unit a reader expects: '1.541 s', '7.374 ms', '654.2 µs', '912 ns'."""
    if _missing(s):
        return "—"
    assert s is not None
    a = abs(s)
    if a >= 1.0:
        return f"{s:.4g} s"
    if a >= 1e-3:
        return f"{s * 1e3:.4g} ms"
    if a >= 1e-6:
        return f"{s * 1e6:.4g} µs"
    return f"{s * 1e9:.4g} ns"


def ratio(v: float | None) -> str:
    """A speedup or slowdown: '2,355×', '11.3×', '0.775×'."""
    if _missing(v):
        return "—"
    assert v is not None
    return f"{v:,.0f}×" if abs(v) >= 100 else f"{v:.3g}×"


def percent(fraction: float | None, digits: int = 1) -> str:
    """A share given as a fraction: 0.913 -> '91.3%'."""
    if _missing(fraction):
        return "—"
    assert fraction is not None
    return f"{fraction * 100:.{digits}f}%"


def number(v: float | None, fmt: str = ",.4g") -> str:
    if _missing(v):
        return "—"
    assert v is not None
    return format(v, fmt)
