"""A kernel's child started as a new process (`python -m profconv.grade.child JOB.json`), for a grade
worker whose zygote cannot fork safely (the CUDA driver was already loaded in it): the same work as a
forked child, the bundle read from disk (memory-mapped) instead of inherited."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from profconv.grade.bundle import preloaded
    from profconv.grade.zygote import run_job, under_cupti

    job = json.loads(Path(argv[0]).read_text())
    held = preloaded(Path(job["bundle"])) if job.get("bundle") else None
    return under_cupti(job.get("cupti"), lambda: run_job(job, held))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
