"""Typed records: one msgspec model per JSON file profconv writes, used to write and to read.

- run.json   (`profconv run`)     -> RunRecord,   schemas/run.schema.json
- bench.json (`profconv bench`)   -> BenchRecord, schemas/bench.schema.json
- `profconv parse --json`         -> ParseOutput, schemas/parse.schema.json

`load(path)` reads either record kind; errors are one InputError line naming the JSON path.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import msgspec

from profconv.errors import InputError
from profconv.io import read_bytes
from profconv.records.base import Record, convert, decode_json, encode, read, struct_from, to_builtins, validate
from profconv.records.bench import BenchLayer, BenchRecord, BenchResult, BenchSettings, DeviceFacts
from profconv.records.common import Dims, Environment, OpTime, Params
from profconv.records.facts import (
    CompileFacts,
    DeterminismFacts,
    EdgeFacts,
    FormFacts,
    GhostFacts,
    HarnessFacts,
    KernelFacts,
    LayerFacts,
    OutputFacts,
    SanitizerFacts,
    TimedCallFacts,
    TimingFacts,
)
from profconv.records.parse_output import ParsedInput, ParsedProfile, ParsedRow, ParseOutput
from profconv.records.run import (
    ConvLayerShape,
    ConvResult,
    DataInfo,
    ModelInfo,
    NcuLaunch,
    ProfileInfo,
    RunRecord,
    RunSettings,
    VariantResult,
)

RECORDS: dict[str, type[Record]] = {cls.SCHEMA: cls for cls in (RunRecord, BenchRecord, ParseOutput)}


def load_doc(doc: Any, label: str | Path) -> RunRecord | BenchRecord:
    """A decoded JSON document as a run or bench record (by its "schema" tag)."""
    tag = doc.get("schema") if isinstance(doc, dict) else None
    if tag == BenchRecord.SCHEMA:
        return convert(doc, BenchRecord, label)
    if tag == RunRecord.SCHEMA or not isinstance(tag, str):
        return convert(doc, RunRecord, label)
    raise InputError(f"{label}: a {tag!r} file, not a profconv run or bench record")


def load(path: Path) -> RunRecord | BenchRecord:
    return load_doc(decode_json(read_bytes(path), path), path)


def json_schema(cls: type[Record]) -> dict[str, Any]:
    """The published JSON Schema of a record (schemas/<kind>.schema.json)."""
    (schema,), components = msgspec.json.schema_components([cls], ref_template="#/$defs/{name}")
    doc: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "$id": f"https://profconv.invalid/schemas/{cls.SCHEMA}.v{cls.VERSION}.json",
                           "title": f"{cls.SCHEMA} version {cls.VERSION}", **components[cls.__name__]}
    doc["properties"]["schema"] = {"const": cls.SCHEMA}
    doc["properties"]["schema_version"] = {"const": cls.VERSION}
    doc["required"] = sorted({*doc.get("required", []), "schema", "schema_version"})
    doc["$defs"] = {k: v for k, v in components.items() if k != cls.__name__}
    return _clean_descriptions(doc)


def _clean_descriptions(node: Any) -> Any:
    """Docstrings as descriptions with their indentation removed (inspect.cleandoc), as msgspec >= 0.23 writes
    them and 0.22 did not: the published schema is the same whichever version made it."""
    if isinstance(node, dict):
        return {k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else _clean_descriptions(v)
                for k, v in node.items()}
    if isinstance(node, list):
        return [_clean_descriptions(v) for v in node]
    return node


SCHEMA_FILES: dict[type[Record], str] = {RunRecord: "run.schema.json", BenchRecord: "bench.schema.json",
                                         ParseOutput: "parse.schema.json"}

__all__ = [
    "RECORDS", "SCHEMA_FILES", "BenchLayer", "CompileFacts", "DeterminismFacts", "EdgeFacts", "FormFacts", "GhostFacts",
    "HarnessFacts", "KernelFacts", "LayerFacts", "OutputFacts", "SanitizerFacts", "TimedCallFacts", "TimingFacts",
    "BenchRecord", "BenchResult", "BenchSettings", "ConvLayerShape",
    "ConvResult", "DataInfo", "DeviceFacts", "Dims", "Environment", "ModelInfo", "NcuLaunch", "OpTime", "Params",
    "ParseOutput", "ParsedInput", "ParsedProfile", "ParsedRow", "ProfileInfo", "Record", "RunRecord", "RunSettings",
    "VariantResult", "convert", "decode_json", "encode", "json_schema", "load", "load_doc", "read", "struct_from",
    "to_builtins", "validate",
]
