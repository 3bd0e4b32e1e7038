"""`python -m profconv.profile.cupti_child RECORDS.json MODULE [ARGS...]`: MODULE run as `__main__` with
CUPTI collecting its activity (kernels, copies, API calls, NVTX ranges) from before its first CUDA call,
the records written to RECORDS.json when it ends, whatever its exit status.

`profconv run --profile cupti --kernel K` starts the user kernel's child process this way (the kernel
runs in a child so that a crash is only that kernel's): the parent merges the child's records with its
own (`activity.merge`) and every variant, built-in or the user's, is profiled by the same code.
"""

from __future__ import annotations

import contextlib
import json
import runpy
import sys
from pathlib import Path

from profconv.io import write_atomic

MODULE = "profconv.profile.cupti_child"


WORK_APIS = "--work-apis"  # the records of the calls that launch GPU work only (a verdict's, not a profile's)


def wrap(records: Path, argv: list[str], work_apis: bool = False) -> list[str]:
    """`python -m MODULE ARGS` as the same command under CUPTI collection (pure). `work_apis`: for the
    verdict alone (no profile shown), only the API calls that launch GPU work are recorded, as grade's
    children record them (CuptiCollector's `work_apis`); otherwise every API call inside the kernel's calls."""
    if len(argv) < 3 or argv[1] != "-m":
        raise ValueError(f"not a `python -m MODULE` command line: {argv}")
    return [argv[0], "-m", MODULE, *([WORK_APIS] if work_apis else []), str(records), *argv[2:]]


def read(records: Path) -> tuple[dict | None, str | None]:
    """The records a child wrote (as `activity.Records.to_dict`), or None and why not."""
    if not records.is_file():
        return None, "the child process ended before writing its activity records"
    try:
        d = json.loads(records.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return None, f"the child's activity records cannot be read ({type(exc).__name__})"
    if not isinstance(d, dict):
        return None, "the child's activity records are not a JSON object"
    if "error" in d:
        return None, str(d["error"])
    return d, None


def main(argv: list[str]) -> int:
    work_apis = bool(argv) and argv[0] == WORK_APIS
    argv = argv[1:] if work_apis else argv
    out, module = Path(argv[0]), argv[1]
    sys.argv = [module, *argv[2:]]
    try:
        from profconv.profile.cupti_collector import CuptiCollector

        # a profile: every API call in the kernel's calls; a verdict: the calls that launch GPU work
        collector: CuptiCollector | None = CuptiCollector(api_windows=not work_apis, work_apis=work_apis,
                                                          buffer_bytes=CuptiCollector.CHILD_BUFFER_BYTES)
    except Exception as exc:  # no cupti-python, a CUDA mismatch: the kernel still runs, unprofiled
        write_atomic(out, json.dumps({"error": f"CUPTI could not start in the child process: {exc}"}))
        collector = None
    rc: int = 0
    from profconv.run.user.callwindow import watch_calls

    unwatch = watch_calls(collector.api_window) if collector is not None and not work_apis else (lambda: None)
    try:
        with collector if collector is not None else contextlib.nullcontext():
            try:
                runpy.run_module(module, run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        unwatch()
        if collector is not None:
            write_atomic(out, collector.to_json())
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
