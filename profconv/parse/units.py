"""Numbers as profilers print them: units, thousands separators, comma decimals.

Only finite, non-negative numbers written with digits are numbers here: `nan`, `inf`, `1e400`,
`2_0` and `-5` are refused (ValueError), so a value that appears nowhere in the input is never
emitted. Which character is the decimal point is decided per table (`Locale`), from all its cells.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

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
    "tb": 1024**4, "tib": 1024**4, "pb": 1024**5, "pib": 1024**5,
    "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
}

# A number as any locale prints it: digits grouped by , . ' space or NBSP, one decimal mark.
_SEP = "[,.'\u00a0\u202f ]"
_LOCALE_NUM = re.compile(rf"^\d{{1,4}}(?:{_SEP}\d{{3,4}})*(?:[.,]\d+)?$|^\d+[.,]\d+$|^\d+$")
# thousands (',' every three digits) or ten-thousands (every four, as CJK locales group: '44,0087,8248');
# a lone ',dddd' is a decimal comma as often ('1,6783ms' in de_DE): not read as grouped here
_GROUPED = re.compile(r"^[+]?(?:\d{1,3}(,\d{3})+|\d{1,4}(,\d{4}){2,})(\.\d*)?$")
_COMMA_DECIMAL = re.compile(r"^[+]?\d+,\d{1,2}$|^[+]?\d+,\d{5,}$|^[+]?0,\d+$")
_AMBIGUOUS = re.compile(r"^[1-9]\d{0,2}[.,]\d{3}$")
_PLAIN = re.compile(r"^[+]?(?:\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\d+\.|\.\d+)$")  # not '1.e090'
_TIME = re.compile(
    r"^(\d[\d,.'\u00a0\u202f]*(?<![.,])(?:[eE][+-]?\d+)?|\d+\.|\.\d+(?:[eE][+-]?\d+)?)\s*(s|ms|us|µs|μs|ns|u)$"
)
_SIZE = re.compile(r"^(\d[\d,.'\u00a0\u202f]*)\s*([KMGTP]?i?B)$", re.IGNORECASE)


@dataclass(frozen=True)
class Locale:
    """How one table writes numbers: its decimal mark and the thousands separators it uses."""

    decimal: str = "."
    ambiguous: bool = False  # no cell told which mark is the decimal one
    group4: bool = False  # ',' groups four digits ('44,0087,8248' in the same table): '1,3583' is 13583

    def convert(self, t: str) -> float:
        """A digits-and-separators string in this locale -> float (ValueError if it is not one).

        In an ambiguous table a cell such as '1.234' or '1,234' is NaN: not guessed.
        """
        if self.ambiguous and _AMBIGUOUS.match(t):
            return NAN
        if self.group4 and _GROUP4.fullmatch(t):
            return finite(float(t.replace(",", "")))
        if self.decimal == ",":
            if "." in t and "," in t and t.rfind(".") > t.rfind(","):
                raise ValueError(f"not a number in this table's locale: {t!r}")
            t = t.replace(".", "").replace("'", "").replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
            if t.count(",") > 1:
                raise ValueError(f"not a number: {t!r}")
            return finite(float(t.replace(",", ".")))
        return number(t)


C_LOCALE = Locale()
GROUP4_LOCALE = Locale(".", group4=True)
_GROUP4 = re.compile(r"\d{1,4}(?:,\d{4})+(?:\.\d+)?")
_GROUP4_MANY = re.compile(r"\d{1,4}(?:,\d{4}){2,}(?:\.\d+)?")
COMMA_LOCALE = Locale(",")
AMBIGUOUS_LOCALE = Locale(".", ambiguous=True)
AMBIGUOUS_NOTE = ("numbers such as '1.234' could use '.' or ',' as the decimal mark and no cell of this table "
                  "says which: those cells are left empty")
MAX_COUNT = 2**63 - 1  # the Int64 calls column


# A power-of-ten factor as the exponent that scales a number's text: float('260.10' + 'e6') is the
# double nearest 260,100,000, where float('260.10') * 1e6 rounds twice (260100000.00000003).
EXPONENT = {1e9: "e9", 1e6: "e6", 1e3: "e3", 1.0: "", 1e-3: "e-3", 1e-6: "e-6", 1e-9: "e-9"}
UNIT_EXPONENT = {u: EXPONENT[f] for u, f in TIME_UNITS_NS.items()}


def scaled_text(text: str, factor: float) -> float:
    """A plain number's text (digits, one dot, no exponent) times a power of ten, correctly rounded."""
    return float(text + EXPONENT[factor])


def scaled(v: float, factor: float) -> float:
    """v x factor as the decimal product of v's shortest text, correctly rounded: 260.1 ms ->
    260100000.0 ns (not 260100000.00000003). Factors that are no power of ten, NaN and inf multiply."""
    e = EXPONENT.get(factor)
    if e is None or not math.isfinite(v):
        return v * factor
    if not e:
        return v
    mantissa, _, exp = repr(v).partition("e")  # 1e-05 ms: the exponents add (1e-05e-3 is no number)
    return float(f"{mantissa}e{int(exp or 0) + int(e[1:])}")


def _times(num: str | None, v: float, factor: float) -> float:
    """num (already read as v; None where the table's locale is not C) in a unit of `factor` -> ns:
    from the text where it is plain digits with a decimal point, else from v's shortest text."""
    if factor == 1.0:
        return v
    if num is not None and num.replace(".", "", 1).isdigit() and num.isascii():
        return float(num + EXPONENT[factor])
    return scaled(v, factor)


def finite(v: float) -> float:
    """v, unless it is infinite (NaN passes: it stands for a cell left empty on purpose)."""
    if math.isinf(v):
        raise ValueError(f"not a finite number: {v!r}")
    return v


def number(text: str) -> float:
    """Parse a plain number: '1,234.5', '44,0087,8248', '2.048e-03', '3,5' (comma decimal).

    Raises ValueError for anything else, for negative, non-finite and underscore-separated
    numbers (the caller decides whether that is data).
    """
    t = text.strip()
    if _PLAIN.match(t):
        return finite(float(t))
    if _GROUPED.match(t):
        return finite(float(t.replace(",", "")))
    if _COMMA_DECIMAL.match(t):
        return finite(float(t.replace(",", ".")))
    if "'" in t or "\u00a0" in t or "\u202f" in t:
        if _LOCALE_NUM.match(t):  # 1'234.5 / 1 234,5: the mark after the last group decides
            last = max(t.rfind("."), t.rfind(","))
            dec = t[last] if last >= 0 and len(t) - last - 1 != 3 else None
            digits = re.sub(r"[^\d]", "", t[:last] if dec else t)
            return finite(float(digits + ("." + t[last + 1 :] if dec else "")))
    raise ValueError(f"not a number: {text!r}")


def is_number(text: str) -> bool:
    try:
        number(text)
    except ValueError:
        return False
    return True


class LocaleVote:
    """Evidence for a table's decimal mark, gathered cell by cell (incremental: a table read
    row by row costs one look at each cell)."""

    __slots__ = ("comma", "comma4", "dot", "group4", "undecided")

    def __init__(self) -> None:
        self.comma = self.dot = self.comma4 = 0
        self.undecided = self.group4 = False

    def copy(self) -> LocaleVote:
        v = LocaleVote()
        v.comma, v.dot, v.undecided, v.comma4, v.group4 = self.comma, self.dot, self.undecided, self.comma4, self.group4
        return v

    def add(self, cells) -> LocaleVote:
        for c in cells:
            if "," not in c and "." not in c:
                continue
            t = c.strip().rstrip("%")
            if not t or not t[0].isdigit():
                continue
            t = _strip_unit(t)
            has_c, has_d = "," in t, "." in t
            if has_c and has_d:
                if t.rfind(",") > t.rfind("."):
                    self.comma += 1
                else:
                    self.dot += 1
                    if _GROUP4.fullmatch(t):
                        self.group4 = True  # '2,6959.009': four digits grouped before a decimal point
            elif has_c or has_d:
                mark = "," if has_c else "."
                parts = t.split(mark)
                if len(parts) > 2:  # the mark repeats: it groups thousands
                    if mark == ".":
                        self.comma += 1
                    else:
                        self.dot += 1
                        if _GROUP4_MANY.fullmatch(t):
                            self.group4 = True
                elif mark == "," and len(parts[1]) == 4 and parts[0] != "0":
                    self.comma4 += 1  # '1,3583': a decimal comma, or four digits grouped (told by the others)
                elif len(parts[1]) != 3 or len(parts[0]) > 3 or parts[0][0] == "0" or "e" in parts[1].lower():
                    # not one mark between a 1-3 digit group and a 3-digit one ('524288.000', '0.125'):
                    # the mark is the decimal one
                    if mark == ",":
                        self.comma += 1
                    else:
                        self.dot += 1
                else:
                    self.undecided = True
        return self

    def add_counts(self, counts) -> LocaleVote:
        """A whole count groups thousands with whichever mark is not the decimal one."""
        for c in counts:
            t = c.strip()
            if _DOT_GROUPED.fullmatch(t):
                self.comma += 1
            elif _COMMA_GROUPED.fullmatch(t):
                self.dot += 1
        return self

    def locale(self) -> Locale:
        if self.group4:
            return AMBIGUOUS_LOCALE if self.comma else GROUP4_LOCALE
        if self.comma4:
            self.comma, self.comma4 = self.comma + self.comma4, 0
        if self.comma and not self.dot:
            return COMMA_LOCALE
        if self.comma and self.dot:
            return AMBIGUOUS_LOCALE
        return AMBIGUOUS_LOCALE if self.undecided and not self.dot else C_LOCALE


_DOT_GROUPED = re.compile(r"\d{1,3}(\.\d{3})+")
_COMMA_GROUPED = re.compile(r"\d{1,3}(,\d{3})+")


def decide_locale(cells, counts=()) -> Locale:
    """The decimal mark of a table, from every numeric cell (units stripped).

    A cell like '4.521.022,0', '72,0' or '1.234,5' says comma; '1,234.5', '12.5' or '100,167,455'
    says dot. Cells like '1,234' or '1.234' say nothing. Conflicting or no evidence -> dot, and
    `ambiguous` when some cell could be read both ways (those cells are then left empty).
    """
    return LocaleVote().add(cells).add_counts(counts).locale()


def _strip_unit(t: str) -> str:
    if t[-1:].isdigit():
        return t
    i = len(t)
    while i > 0 and not t[i - 1].isdigit():
        i -= 1
    return t[:i]


_FAST_SUFFIX = (("ms", "e6"), ("us", "e3"), ("ns", ""))
_ONE_GROUP = re.compile(r"[1-9]\d{0,2},\d{3}")


def time_ns(text: str, default_unit: str | None = None, locale: Locale = C_LOCALE) -> float:
    """'1.00787 s', '49.974ms', '0ns', '21.098u' -> nanoseconds. A bare number needs a default unit."""
    if default_unit is not None and locale is C_LOCALE and _PLAIN.match(text):
        # a bare plain number in the column's unit (nvprof --csv, --normalized-time-unit): what
        # the default-unit branch below gives, without its detours
        return finite(_times(text.lstrip("+"), finite(float(text)), TIME_UNITS_NS[default_unit]))
    if locale is C_LOCALE:
        for suffix, exp in _FAST_SUFFIX:  # the common case, without a regex: '1.2345ms'
            if text.endswith(suffix):
                head = text[:-2]
                if head[:1].isdigit() and "_" not in head and "e" not in head and "E" not in head:
                    try:
                        return finite(float(head + exp))
                    except ValueError:
                        break
                break
    t = text.strip()
    m = _TIME.match(t)
    if m:
        num = m.group(1)
        if locale is C_LOCALE and _ONE_GROUP.fullmatch(num):
            # '23,298us': no profiler groups the digits of a time it prints with its unit, so the
            # comma may be a decimal one (de_DE) as well: which, only the table's other cells can tell
            raise ValueError(f"not a time in this table's locale: {text!r}")
        return finite(_times(num if locale is C_LOCALE else None, locale.convert(num), TIME_UNITS_NS[m.group(2)]))
    if default_unit is not None and t[:1].isdigit():
        return finite(_times(t if locale is C_LOCALE else None, locale.convert(t), TIME_UNITS_NS[default_unit]))
    raise ValueError(f"not a time: {text!r}")


def is_time(text: str) -> bool:
    return _TIME.match(text.strip()) is not None


def size_bytes(text: str, locale: Locale = C_LOCALE) -> float:
    """'13.748KB', '4.0000KB', '16B', '267.7031MB', '1.0TB' -> bytes ('-' is not a size)."""
    m = _SIZE.match(text.strip())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return finite(locale.convert(m.group(1)) * SIZE_UNITS_BYTES[m.group(2).lower()])


def count(text: str, locale: Locale = C_LOCALE) -> int:
    """A call count: a whole non-negative number ('1,234', '1.234' under a comma locale) that fits
    the Int64 calls column (ValueError otherwise, also for thousands of digits)."""
    t = text.strip()
    if len(t) > 40:  # MAX_COUNT has 19 digits: no need to convert thousands of them to know
        raise ValueError(f"count too large: {text[:20]!r}…")
    if t.isdigit():
        v = int(t)
    else:
        f = locale.convert(t) if t[:1].isdigit() else number(t)
        if f != int(f):
            raise ValueError(f"not a whole count: {text!r}")
        v = int(f)
    if v > MAX_COUNT:
        raise ValueError(f"count too large: {text!r}")
    return v


def pid(text: str) -> int | None:
    """A process id as printed ('==1234==', 'process 1234'): None where it is no plain count of
    the Int64 column (thousands of digits: not a process's)."""
    try:
        return count(text) if text.isdigit() else None
    except ValueError:
        return None


def plain_count(text: str) -> int:
    """A count printed as plain digits (int() semantics: blanks around, a sign) within the Int64
    column; ValueError otherwise."""
    if len(text) > 40:
        raise ValueError(f"count too large: {text[:20]!r}…")
    v = int(text)
    if not 0 <= v <= MAX_COUNT:
        raise ValueError(f"not a count: {text!r}")
    return v


def percent(text: str, locale: Locale = C_LOCALE) -> float:
    """'12.3%', '12.3', '<0.01' (printed as a bound, so NaN: never invent the value)."""
    t = text.strip().rstrip("%").strip()
    if t.startswith("<"):
        return NAN
    v = locale.convert(t) if t[:1].isdigit() else number(t)
    if v > 100.0 + 1e-9:
        raise ValueError(f"not a percentage: {text!r}")
    return v


def is_percent(text: str) -> bool:
    t = text.strip()
    if t.startswith("<") and is_number(t[1:].rstrip("%")):
        return True
    body = t.rstrip("%")
    return bool(body[:1].isdigit()) and _LOCALE_NUM.match(body) is not None or is_number(body)
