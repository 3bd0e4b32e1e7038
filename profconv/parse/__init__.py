"""Parsing stage: profiler text (any dialect) -> canonical rows (see schema.py)."""

from profconv.parse.core import ProfileSet, parse, parse_text, read_text
from profconv.parse.schema import COLUMNS, ProfileInfo, empty_frame, validate
from profconv.parse.stream import parts

__all__ = ["COLUMNS", "ProfileInfo", "ProfileSet", "empty_frame", "parse", "parse_text", "parts", "read_text",
           "validate"]
