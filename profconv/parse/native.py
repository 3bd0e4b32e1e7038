"""The parser's optional C accelerators (setup.py builds them at install when it can).

`load(name)` gives the compiled module `profconv.parse.<name>`, or None where it was not built (no
compiler at install, a plain checkout on PYTHONPATH) or where PROFCONV_PURE_PYTHON is set to
anything but '' or '0'. Callers keep a pure-Python path that gives the same output, bit for bit;
tests/test_native.py runs both on every test log."""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType


def pure_python() -> bool:
    """Whether the C accelerators are switched off (PROFCONV_PURE_PYTHON)."""
    return os.environ.get("PROFCONV_PURE_PYTHON", "") not in ("", "0")


def load(name: str) -> ModuleType | None:
    """`profconv.parse.<name>` if it was built and may be used, else None."""
    if pure_python():
        return None
    got = sys.modules.get(f"profconv.parse.{name}")  # (loaded already: no trip through importlib, ~1 µs)
    if got is not None:
        return got
    try:
        return importlib.import_module(f"profconv.parse.{name}")
    except ImportError:
        return None


def available() -> dict[str, bool]:
    """Which accelerators this install has (setup.py's list), whether used or not."""
    out = {}
    for name in ("_rowscan", "_kahan", "_bytescan", "_ncucells", "_rowjoin", "_summarycells", "_csvcols", "_mapguard"):
        try:
            importlib.import_module(f"profconv.parse.{name}")
            out[name] = True
        except ImportError:
            out[name] = False
    return out
