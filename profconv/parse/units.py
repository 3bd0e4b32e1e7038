"""Numbers as profilers print them: units, thousands separators, comma decimals."""

from __future__ import annotations

import re

NAN = float("nan")

TIME_UNITS_NS = {
    "s": 1e9, "sec": 1e9, "second": 1e9, "seconds": 1e9,
    "ms": 1e6, "msecond": 1e6, "msec": 1e6,
    "us": 1e3, "µs": 1e3, "μs": 1e3, "u": 1e3, "usecond": 1e3, "usec": 1e3,
    "ns": 1.0, "nsecond": 1.0, "nsec": 1.0,
}

SIZE_UNITS_BYTES = {
    "b": 1, "byte": 1, "bytes": 1,
    "kb": 1024, "kib": 1024, "mb": 1024**2, "mib": 1024**2, "gb": 1024**3, "gib": 1024**3,
    "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
}

_GROUPED = re.compile(r"^[+-]?\d{1,4}(,\d{3,4})+(\.\d*)?$")
_COMMA_DECIMAL = re.compile(r"^[+-]?\d+,\d{1,2}$|^[+-]?\d+,\d{5,}$|^[+-]?0,\d+$")
_TIME = re.compile(r"^([+-]?(?:\d[\d,]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+))\s*(s|ms|us|µs|μs|ns|u)$")
_SIZE = re.compile(r"^([+-]?\d[\d,]*\.?\d*)\s*([KMGT]?i?B)$", re.IGNORECASE)


def number(text: str) -> float:
    """Parse a plain number: '1,234.5', '44,0087,8248', '2.048e-03', '3,5' (comma decimal).

    Raises ValueError for anything else (the caller decides whether that is data).
    """
    t = text.strip()
    if _GROUPED.match(t):
        t = t.replace(",", "")
    elif _COMMA_DECIMAL.match(t):
        t = t.replace(",", ".")
    return float(t)


def is_number(text: str) -> bool:
    try:
        number(text)
    except ValueError:
        return False
    return True


_FAST_SUFFIX = (("ms", 1e6), ("us", 1e3), ("ns", 1.0))


def time_ns(text: str, default_unit: str | None = None) -> float:
    """'1.00787 s', '49.974ms', '0ns', '21.098u' -> nanoseconds. A bare number needs a default unit."""
    for suffix, factor in _FAST_SUFFIX:  # the common case, without a regex: '1.2345ms'
        if text.endswith(suffix):
            try:
                return float(text[:-2]) * factor
            except ValueError:
                break
    t = text.strip()
    m = _TIME.match(t)
    if m:
        return number(m.group(1)) * TIME_UNITS_NS[m.group(2)]
    if default_unit is not None:
        return number(t) * TIME_UNITS_NS[default_unit]
    raise ValueError(f"not a time: {text!r}")


def is_time(text: str) -> bool:
    return _TIME.match(text.strip()) is not None


def size_bytes(text: str) -> float:
    """'13.748KB', '4.0000KB', '16B', '267.7031MB' -> bytes ('-' is not a size)."""
    m = _SIZE.match(text.strip())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return number(m.group(1)) * SIZE_UNITS_BYTES[m.group(2).lower()]


def percent(text: str) -> float:
    """'12.3%', '12.3', '<0.01' (printed as a bound, so NaN: never invent the value)."""
    t = text.strip().rstrip("%").strip()
    if t.startswith("<"):
        return NAN
    return number(t)


def is_percent(text: str) -> bool:
    t = text.strip()
    if t.startswith("<") and is_number(t[1:].rstrip("%")):
        return True
    return is_number(t.rstrip("%")) and not t.startswith(("+", "-"))
