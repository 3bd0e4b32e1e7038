"""The built-in dialects, in the order they are tried (and their results kept).

A new profiler dialect is one module here that ends with `DIALECT = Dialect(...)` (see
profconv/parse/dialect.py) plus its name below; everything that lists the dialects reads them from
`profconv.parse.dialect.registry()`. `DIALECTS` is that registry (name -> Dialect).
"""

from __future__ import annotations

from typing import Any

BUILTIN = ("nvprof", "nsys", "ncu", "acc", "cudaprof", "rocprof")


def __getattr__(name: str) -> Any:
    if name == "DIALECTS":
        from profconv.parse.dialect import registry

        return registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
