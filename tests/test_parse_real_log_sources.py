"""Every real profiler log in tests/data has its provenance (repository, path, commit) in SOURCES.md,
and no log is checked value for value in two places (the cases of tests/test_parse_real_*.py).
"""

from __future__ import annotations

from tests import (
    test_parse_real_ncu,
    test_parse_real_nsys,
    test_parse_real_nvprof,
    test_parse_real_openacc,
    test_parse_real_other_tools,
    test_parse_real_pasted,
)
from tests.real_logs import DATA

MODULES = [test_parse_real_nvprof, test_parse_real_nsys, test_parse_real_ncu, test_parse_real_openacc,
           test_parse_real_pasted, test_parse_real_other_tools]
CASES = [c for m in MODULES for c in getattr(m, "CASES", [])]
NO_PROFILE = [p for m in MODULES for p in getattr(m, "NO_PROFILE", [])]


def test_sources_lists_every_corpus_file():
    """Every real log in tests/data has its provenance (repository, path, commit) in SOURCES.md."""
    import glob
    import os

    sources = open(DATA + "SOURCES.md", encoding="utf-8").read()
    logs = ("acc-time/", "cudaprof/", "ncu-", "nsys-", "nvprof-", "pasted/", "foreign/")  # the profiler-log folders
    files = sorted(os.path.relpath(p, DATA) for p in glob.glob(DATA + "**/*", recursive=True) if os.path.isfile(p))
    missing = [f for f in files if f.startswith(logs) and f"| {f} |" not in sources]
    assert missing == []
    listed = {c.path for c in CASES} | {p for p, _ in NO_PROFILE}
    assert len(listed) == len(CASES) + len(NO_PROFILE)  # no file twice
