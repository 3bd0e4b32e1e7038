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
