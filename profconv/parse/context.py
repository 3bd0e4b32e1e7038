"""The run around a profile: command line, Op Time and Correctness lines, model name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from profconv.parse import native
from profconv.parse.text import clean
from profconv.parse.units import TIME_UNITS_NS, number, scaled

_OP_TIME = re.compile(r"\bOp Time:\s*([0-9.]+(?:[eE][+-]?\d+)?)\s*(s|ms|us|ns)?\b")
_CORRECTNESS = re.compile(r"\bCorrectness:\s*([0-9.]+)(?:\s+Model:\s*(\S+))?")
_ACCURACY = re.compile(
    r"(?:Test Accuracy|Net Accuracy|'accuracy')\s*[:=]?\s*'?:?\s*([0-9.]+)\s*(%)?", re.IGNORECASE
)
_COMMAND = re.compile(r"^\s*(?:[*✱]\s*Running\s+|\$\s+|>\s*Running\s+)(.+?)\s*$")


@dataclass
class ContextLine:
    line: int
    kind: str  # command | op_time | correctness
    value: float | None = None
    text: str | None = None


KEYWORDS = ("Op Time", "ccuracy", "Correctness", "Running", "$ ")


def _candidate_starts(text: str) -> list[int]:
    """Start offsets of the lines holding a keyword: str.find per keyword beats one regex alternation."""
    starts = set()
    for kw in KEYWORDS:
        i = text.find(kw)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            j = text.find("\n", i)
            if j < 0:
                break
            i = text.find(kw, j)
    return sorted(starts)


def _value(text: str) -> float | None:
    """A context number, or None for '1.2.3', '..', '1e400': such a line is not context."""
    try:
        return number(text)
    except ValueError:
        return None


def contains_any(text: str | bytes, needles: tuple[str, ...]) -> bool:
    """`any(m in text for m in needles)` (bytes: the needles' UTF-8 looked for in them, no str made of
    them): by one pass of the C accelerator where it was built (and a str text is of one byte a
    character; bytes where the build takes them), else by one substring search per needle."""
    mod = native.load("_kahan")
    raw = isinstance(text, bytes)
    got = mod.find_any(text, needles) if mod is not None and (not raw or hasattr(mod, "FIND_ANY_BYTES")) else None
    if got is not None:
        return got
    return any(m.encode() in text for m in needles) if raw else any(m in text for m in needles)


def scan(text: str) -> list[ContextLine]:
    """Context lines in `text` (the whole input), found by one substring pass per keyword."""
    found: list[ContextLine] = []
    if not contains_any(text, KEYWORDS):
        return found
    pos, lineno = 0, 1
    for start in _candidate_starts(text):
        lineno += text.count("\n", pos, start)
        pos = start
        i = lineno
        end = text.find("\n", start)
        line = clean(text[start : end if end >= 0 else None])
        if m := _COMMAND.match(line):
            found.append(ContextLine(i, "command", text=m.group(1).strip('"')))
            continue
        for m in _OP_TIME.finditer(line):
            unit = m.group(2) or "s"
            if (v := _value(m.group(1))) is not None:
                found.append(ContextLine(i, "op_time", scaled(v, TIME_UNITS_NS[unit] / 1e9)))
        if m := _CORRECTNESS.search(line):
            if (v := _value(m.group(1))) is not None:
                found.append(ContextLine(i, "correctness", v, m.group(2)))
        elif m := _ACCURACY.search(line):
            if (v := _value(m.group(1))) is not None:
                found.append(ContextLine(i, "correctness", v / 100 if m.group(2) else v))
    return found
