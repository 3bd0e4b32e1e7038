"""`python -m profconv.records [DIR]`: write the published JSON Schemas (default: schemas/)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from profconv.io import write_atomic
from profconv.records import SCHEMA_FILES, json_schema


def main(out: Path) -> None:
    for cls, name in SCHEMA_FILES.items():
        write_atomic(out / name, json.dumps(json_schema(cls), indent=1, sort_keys=True) + "\n")
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas"))
