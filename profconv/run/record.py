"""The run record: one JSON file per run, schema below, written atomically.

{
  "schema": "profconv.run", "schema_version": 1, "created": ISO-8601 UTC, "argv": [...],
  "environment": {gpu, compute_capability, driver_version, runtime_version, cupy_version,
                  torch_version, cudnn_version, profconv_version, python, platform, ...},
  "model": {name, semester, input_shape, spec, reference_accuracy},
  "data": {source, synthetic},
  "settings": {repeat, warmup},
  "results": [ {images, variant, technique, precision, status: ok|failed|skipped, error,
                correctness, forward_s, layer_times: {layer: median_s},
                type_totals: {conv|tanh|relu|pool|fc|softmax: s},
                conv: [{layer, shape, dims: {B, M, C, H, W, K, P}, op_time: {median_s, min_s, max_s, samples_s},
                        rel_error, max_abs_error, tolerance, status, error}]} ],
  "interrupted": bool,
  "profile": {tool, …}   (with --profile: files in the run directory; ncu: metrics per launch)
}
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "profconv.run"
SCHEMA_VERSION = 1


@dataclass
class ConvResult:
    layer: str
    shape: str
    dims: dict[str, int] = field(default_factory=dict)  # B, M, C, H, W, K, P
    params: dict = field(default_factory=dict)  # what the variant chose for this shape (tuned: the sweep)
    op_time: dict | None = None
    rel_error: float | None = None
    max_abs_error: float | None = None
    tolerance: float | None = None
    status: str = "ok"
    error: str | None = None


@dataclass
class VariantResult:
    images: int
    variant: str
    technique: str
    precision: str
    status: str = "ok"  # ok | failed | skipped
    error: str | None = None
    correctness: float | None = None
    forward_s: float | None = None
    layer_times: dict[str, float] = field(default_factory=dict)
    type_totals: dict[str, float] = field(default_factory=dict)
    conv: list[ConvResult] = field(default_factory=list)


@dataclass
class RunRecord:
    argv: list[str]
    created: str
    environment: dict[str, Any]
    model: dict[str, Any]
    data: dict[str, Any]
    settings: dict[str, Any]
    results: list[VariantResult] = field(default_factory=list)
    interrupted: bool = False
    profile: dict = field(default_factory=dict)  # --profile: tool, files written, ncu metrics per launch

    def to_json(self) -> str:
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **asdict(self)}
        return json.dumps(doc, indent=1, allow_nan=False, default=str)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; the file gets the mode a plain open() would
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
