"""profconv: run, check, profile and report CUDA convolution kernels; parse any profiler's text output.

The library API is `profconv.parse(path)`, `profconv.parse_text(text)` and `profconv.ProfileSet`.
They are loaded on first use (PEP 562), so `import profconv` (and the CLI's `--help`) stays cheap:
pandas and the parsers are imported only when something is parsed.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["ProfileSet", "__version__", "parse", "parse_text"]

if TYPE_CHECKING:
    from profconv.parse.core import ProfileSet, parse, parse_text

_LAZY = {"ProfileSet": "ProfileSet", "parse_text": "parse_text"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from profconv.parse import core

        return getattr(core, _LAZY[name])
    raise AttributeError(f"module 'profconv' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """`profconv.parse` is the parse function, as before the lazy loading, even after the subpackage
    `profconv.parse` is imported (the import system binds a subpackage to its parent's attribute)."""

    @property
    def parse(self):  # type: ignore[override]
        from profconv.parse.core import parse

        return parse

    @parse.setter
    def parse(self, value: object) -> None:
        pass  # the subpackage stays reachable as sys.modules["profconv.parse"]


sys.modules[__name__].__class__ = _Package
