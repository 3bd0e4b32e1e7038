"""The run record: one JSON file per run, written atomically after every variant.

The model is profconv.records.run (msgspec Structs, used to write here and to read in `report`);
its JSON Schema is schemas/run.schema.json. This module keeps the names the runner uses.
"""

from __future__ import annotations

from profconv.io import write_atomic
from profconv.records.common import Dims, OpTime
from profconv.records.run import (
    SCHEMA,
    SCHEMA_VERSION,
    ConvResult,
    DataInfo,
    ModelInfo,
    ProfileInfo,
    RunRecord,
    RunSettings,
    VariantResult,
)

__all__ = ["SCHEMA", "SCHEMA_VERSION", "ConvResult", "DataInfo", "Dims", "ModelInfo", "OpTime", "ProfileInfo",
           "RunRecord", "RunSettings", "VariantResult", "write_atomic"]
