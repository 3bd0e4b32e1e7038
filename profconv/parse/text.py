"""Undo what reports do to pasted profiler text: markdown, HTML bold, PDF-mangled prefixes."""

from __future__ import annotations

import html
import re

_BOLD = re.compile(r"</?b>|\*\*|</?strong>|</?code>")
_DASH_PID = re.compile(r"[—–](\d+)[—–]")
_LEADING_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|\\\*\s+|>\s+)")
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def clean(line: str) -> str:
    """One report line back to what the profiler printed (cells of markdown tables tab-joined)."""
    if "&" in line:
        line = html.unescape(line)
    if "<" in line or "*" in line:
        line = _BOLD.sub("", line)
    if "—" in line or "–" in line:
        line = _DASH_PID.sub(r"==\1==", line)
    line = _LEADING_MARKUP.sub("", line)
    stripped = line.strip()
    if stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3:
        if _MD_SEPARATOR.match(stripped):
            return ""
        return "\t".join(cell.strip() for cell in stripped[1:-1].split("|"))
    return line.rstrip("\r\n")


def is_neutral(line: str) -> bool:
    """Blank lines and code fences: they neither end nor belong to a table."""
    return not line.strip() or FENCE.match(line) is not None
