"""The report as a document of typed blocks: what the analysis found, not how it is drawn.

Analysis functions return DataFrames (base units: seconds, fractions); the report builder wraps them
in `Table`s that say which columns to show and how to format them, plus headings, paragraphs and
figures. The markdown, HTML and JSON renderers take a `Document` and `RenderOptions` and nothing
else, so a new report section is one analysis function plus one `Table`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd

from profconv.render import format as fmt

Kind = Literal["text", "code", "int", "seconds", "ratio", "fraction", "percent", "number", "sci", "value"]
"""How a column's raw value is shown: seconds -> '7.374 ms', fraction 0.913 -> '91.3%', percent 91.3
(already in percent, as profilers print Time(%)) -> '91.30', ratio -> '11.3×', code -> `name`,
value -> a number as `number`, or the text a tool printed instead of one ('Low (1)', 'n/a')."""


@dataclass(frozen=True)
class Column:
    key: str  # the frame's column
    header: str
    kind: Kind = "text"
    full_key: str | None = None  # a code column's full text (the demangled signature), shown on request
    digits: str = ",.4g"  # for kind "number"
    drop: int | None = None  # terminal: left out (lowest first) when the table does not fit the width
    keep: bool = False  # terminal: never left out (a compare's verdict), whatever the width

    @property
    def numeric(self) -> bool:
        return self.kind not in ("text", "code")

    def show(self, value) -> str:
        if self.kind == "seconds":
            return fmt.seconds(value)
        if self.kind == "ratio":
            return fmt.ratio(value)
        if self.kind == "fraction":
            return fmt.percent(value)
        if self.kind == "percent":
            return fmt.number(value, ".2f")
        if self.kind == "int":
            return fmt.count(value)
        if self.kind == "number" or (self.kind == "value" and not isinstance(value, str)):
            return fmt.number(value, self.digits)
        if self.kind == "sci":
            return fmt.number(value, ".1e")
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            return "—"
        return str(value)


@dataclass
class Table:
    id: str  # unique in the document: the HTML anchor and the JSON key
    title: str
    frame: pd.DataFrame
    columns: list[Column]
    highlight: str | None = None  # a bool column: the rows that make up the >=90% share
    note: str = ""  # one paragraph under the title (inline markdown: `code`, **bold**)
    group: str | None = None  # a column whose repeated values are shown once (markdown)
    highlight_kind: Literal["top", "regression"] = "top"  # how marked rows are drawn (HTML)
    data_keys: tuple[str, ...] = ()  # JSON: frame columns given raw besides the shown ones (n per side, ...)

    def cells(self, full_names: bool = False) -> list[list[str]]:
        rows = []
        for rec in self.frame.to_dict("records"):
            row = []
            for c in self.columns:
                key = c.full_key if (full_names and c.full_key) else c.key
                row.append(c.show(rec.get(key)))
            rows.append(row)
        return rows

    def marked(self) -> list[bool]:
        if self.highlight is None or self.highlight not in self.frame.columns:
            return [False] * len(self.frame)
        return [bool(v) for v in self.frame[self.highlight].fillna(False)]


@dataclass
class Paragraph:
    text: str  # inline markdown
    kind: Literal["text", "note", "warning"] = "text"


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Figure:
    path: Path  # a PNG written by profconv.render.plots
    alt: str


Block = Table | Paragraph | Bullets | Figure


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    appendix: bool = False  # full tables: markdown shows them with --full, HTML folds them

    def add(self, *blocks: Block) -> Section:
        self.blocks.extend(blocks)
        return self


@dataclass
class Document:
    title: str
    sections: list[Section] = field(default_factory=list)
    exit_status: int = 0  # what the command should exit with (a compare that found regressions: 1)


@dataclass(frozen=True)
class RenderOptions:
    full: bool = False  # markdown: include the appendix sections
    full_names: bool = False  # full demangled signatures instead of short names
    link_base: Path | None = None  # markdown: figures linked relative to this directory
    full_hint: str = ""  # markdown without --full: how to get the full tables


def tables(doc: Document) -> list[Table]:
    """Every table of the document, depth first."""
    out: list[Table] = []

    def walk(sections: list[Section]) -> None:
        for s in sections:
            out.extend(b for b in s.blocks if isinstance(b, Table))
            walk(s.sections)

    walk(doc.sections)
    return out
