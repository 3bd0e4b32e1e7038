"""The report's data as JSON (`profconv report --json`): every table of the document with its raw
values in base units (seconds, fractions), for scripts and notebooks, and every warning the other
renderers show (what was left out and why), so nothing is dropped without a word. Schema "profconv.report"."""

from __future__ import annotations

import json
import math
from typing import Any

from profconv.render.document import Document, Figure, Paragraph, Section, Table

SCHEMA = "profconv.report"
SCHEMA_VERSION = 1


def _value(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    try:
        if v != v:  # pd.NA, NaT
            return None
    except (TypeError, ValueError):
        return None
    return str(v)


def table_data(t: Table, path: list[str]) -> dict[str, Any]:
    keys = list(dict.fromkeys([c.key for c in t.columns] + [c.full_key for c in t.columns if c.full_key]
                              + ([t.highlight] if t.highlight else []) + list(t.data_keys)))
    keys = [k for k in keys if k in t.frame.columns]
    return {
        "id": t.id, "section": path, "title": t.title,
        "columns": [{"key": c.key, "header": c.header, "kind": c.kind} for c in t.columns],
        "highlight": t.highlight,
        "rows": [{k: _value(rec[k]) for k in keys} for rec in t.frame.to_dict("records")],
    }


def to_data(doc: Document) -> dict[str, Any]:
    tables: list[dict[str, Any]] = []
    figures: list[dict[str, str]] = []
    warnings: list[dict[str, str]] = []

    def walk(s: Section, path: list[str]) -> None:
        here = [*path, s.title]
        for b in s.blocks:
            if isinstance(b, Table):
                tables.append(table_data(b, here))
            elif isinstance(b, Figure):
                figures.append({"section": " / ".join(here), "path": b.path.as_posix(), "alt": b.alt})
            elif isinstance(b, Paragraph) and b.kind == "warning":
                warnings.append({"section": " / ".join(here), "text": b.text})
        for sub in s.sections:
            walk(sub, here)

    for s in doc.sections:
        walk(s, [])
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "title": doc.title, "tables": tables,
            "figures": figures, "warnings": warnings}


def render(doc: Document) -> str:
    return json.dumps(to_data(doc), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
