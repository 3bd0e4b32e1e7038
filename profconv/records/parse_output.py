"""`profconv parse --json`: the parsed profiles and their rows (schema "profconv.parse").
Published as schemas/parse.schema.json; the row columns are profconv.parse.schema.COLUMNS."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from profconv.records.base import Count, Record

SCHEMA = "profconv.parse"
SCHEMA_VERSION = 1


class ParsedProfile(msgspec.Struct, kw_only=True):
    profile: int
    tool: str
    line_start: Count
    line_end: Count
    pid: int | None = None
    command: str | None = None
    model: str | None = None
    correctness: float | None = None
    op_times_s: list[float] = msgspec.field(default_factory=list)
    device: str | None = None


class ParsedInput(msgspec.Struct, kw_only=True):
    source: str
    profiles: list[ParsedProfile] = msgspec.field(default_factory=list)
    unplaced_lines: list[int] = msgspec.field(default_factory=list)
    warnings: list[str] = msgspec.field(default_factory=list)


class ParsedRow(msgspec.Struct, kw_only=True, omit_defaults=False):
    """One row of the canonical frame (see profconv.parse.schema); null where the input printed nothing."""

    source: str
    profile: int
    tool: str
    section: str
    name: str | None = None
    short_name: str | None = None
    time_pct: float | None = None
    total_ns: float | None = None
    calls: int | None = None
    avg_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None
    med_ns: float | None = None
    std_ns: float | None = None
    start_ns: float | None = None
    bytes: float | None = None
    metric: str | None = None
    description: str | None = None
    unit: str | None = None
    value: float | None = None
    value_min: float | None = None
    value_max: float | None = None
    value_total: float | None = None
    value_text: str | None = None
    value_text_min: str | None = None
    value_text_max: str | None = None
    share: float | None = None
    cumulative: float | None = None
    in_top: bool | None = None
    share_basis: str | None = None
    table: int | None = None
    line_start: int | None = None
    line_end: int | None = None


class ParseOutput(Record, kw_only=True):
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION
    inputs: list[ParsedInput] = msgspec.field(default_factory=list)
    rows: list[ParsedRow] = msgspec.field(default_factory=list)

    SCHEMA: ClassVar[str] = SCHEMA
    VERSION: ClassVar[int] = SCHEMA_VERSION
    KIND: ClassVar[str] = "parse output"
