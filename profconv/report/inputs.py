"""Read what a report is made from: run records (run.json or its directory) and profiler logs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.run.record import SCHEMA, SCHEMA_VERSION


@dataclass
class RunInput:
    path: Path
    record: dict[str, Any]


@dataclass
class LogInput:
    path: Path
    profiles: ProfileSet


def read_record(path: Path) -> dict[str, Any]:
    """A run record, checked: other files, newer schema versions and half files are refused clearly."""
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a valid run record ({exc.msg} at line {exc.lineno})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(f"{path}: not a profconv run record (no \"schema\": \"{SCHEMA}\")")
    version = doc.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise InputError(f"{path}: run record schema version {version} is newer than this profconv reads "
                         f"({SCHEMA_VERSION}); upgrade profconv")
    return upgrade(doc)


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """Bring an older record to the current shape (version 1 is the first: only defaults)."""
    doc.setdefault("interrupted", False)
    for res in doc.get("results", []):
        for conv in res.get("conv", []):
            conv.setdefault("dims", {})
    return doc


def load(paths: list[str]) -> list[RunInput | LogInput]:
    """Each path: a run directory, a run.json, or a profiler log ('-' for stdin)."""
    out: list[RunInput | LogInput] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir():
            rec = path / "run.json"
            if not rec.exists():
                raise InputError(f"{p}: a directory without run.json: not a profconv run directory")
            out.append(RunInput(rec, read_record(rec)))
        elif path.suffix == ".json" and path.exists():
            out.append(RunInput(path, read_record(path)))
        else:
            out.append(LogInput(path, parse(p)))
    return out
