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
        raise InputError(f"{path}: not a valid JSON record ({exc.msg} at line {exc.lineno})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def _require(path: Path, kind: str, where: str, obj: Any, fields: dict[str, type]) -> None:
    """One line naming the first field a record lacks or has the wrong type of (a hand-edited or
    foreign file that carries our schema tag), instead of a KeyError deep in the report."""
    if not isinstance(obj, dict):
        raise InputError(f"{path}: not a valid {kind} record ({where} is not an object)")
    for name, typ in fields.items():
        if not isinstance(obj.get(name), typ):
            raise InputError(f"{path}: not a valid {kind} record ({where} lacks a {typ.__name__} \"{name}\")")


def read_bench(path: Path, doc: dict[str, Any]) -> BenchInput:
    version = doc.get("schema_version")
    if not isinstance(version, int) or version > BENCH_SCHEMA_VERSION:
        raise InputError(f"{path}: bench record schema version {version} is newer than this profconv reads "
                         f"({BENCH_SCHEMA_VERSION}); upgrade profconv")
    _require(path, "bench", "the record", doc, {"layers": list})
    for i, layer in enumerate(doc["layers"], 1):
        _require(path, "bench", f"layer {i}", layer, {"model": str, "layer": str, "shape": str, "images": int})
        for res in layer.get("results", []) + layer.get("fused", []):
            _require(path, "bench", f"a result of layer {i}", res, {"variant": str, "precision": str, "status": str})
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
    _require(path, "run", "the record", doc, {"model": dict, "environment": dict, "data": dict, "settings": dict,
                                              "results": list})
    _require(path, "run", "\"model\"", doc["model"], {"name": str})
    for i, res in enumerate(doc["results"], 1):
        _require(path, "run", f"result {i}", res, {"images": int, "variant": str, "status": str})
        for conv in res.get("conv", []):
            _require(path, "run", f"a conv layer of result {i}", conv, {"layer": str, "shape": str, "status": str})
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
