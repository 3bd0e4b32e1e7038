"""Read what a report is made from: run records (run.json or its directory) and profiler logs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profconv.errors import InputError
from profconv.parse import parse
from profconv.parse.core import ProfileSet
from profconv.run.bench import SCHEMA as BENCH_SCHEMA
from profconv.run.bench import SCHEMA_VERSION as BENCH_SCHEMA_VERSION
from profconv.run.record import SCHEMA, SCHEMA_VERSION


@dataclass
class RunInput:
    path: Path
    record: dict[str, Any]


@dataclass
class BenchInput:
    path: Path
    record: dict[str, Any]


@dataclass
class LogInput:
    path: Path
    profiles: ProfileSet


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not a valid run record ({exc.msg} at line {exc.lineno})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def read_bench(path: Path, doc: dict[str, Any]) -> BenchInput:
    version = doc.get("schema_version")
    if not isinstance(version, int) or version > BENCH_SCHEMA_VERSION:
        raise InputError(f"{path}: bench record schema version {version} is newer than this profconv reads "
                         f"({BENCH_SCHEMA_VERSION}); upgrade profconv")
    return BenchInput(path, doc)


def read_record(path: Path, doc: Any = None) -> dict[str, Any]:
    """A run record, checked: other files, newer schema versions and half files are refused clearly."""
    if doc is None:
        doc = _read_json(path)
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


Input = RunInput | BenchInput | LogInput


def _json_input(path: Path) -> RunInput | BenchInput:
    doc = _read_json(path)
    if isinstance(doc, dict) and doc.get("schema") == BENCH_SCHEMA:
        return read_bench(path, doc)
    return RunInput(path, read_record(path, doc))


def load(paths: list[str]) -> list[Input]:
    """Each path: a run or bench directory, a run.json or bench.json, or a profiler log ('-' for stdin)."""
    out: list[Input] = []
    for p in paths:
        path = Path(p)
        if p != "-" and path.is_dir():
            found = [path / name for name in ("run.json", "bench.json") if (path / name).exists()]
            if not found:
                raise InputError(f"{p}: a directory without run.json or bench.json: not a profconv run directory")
            out.append(_json_input(found[0]))
        elif path.suffix == ".json" and path.exists():
            out.append(_json_input(path))
        else:
            out.append(LogInput(path, parse(p)))
    return out
