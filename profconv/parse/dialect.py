"""What a profiler dialect is, declared once: `Dialect`, and the one registry of them.

A dialect module (profconv/parse/dialects/<name>.py) ends with

    DIALECT = Dialect(name="acc", title="OpenACC timing", tool="nvhpc-acc",
                      markers=("Accelerator Kernel Timing data",), sections=("gpu", "openacc"),
                      detect=detect, parse=parse)

and is named once in `BUILTIN` (profconv/parse/dialects/__init__.py). Everything else that needs to
know the dialects reads them from `registry()`: the `--format` choices (profconv.commands.parse), the
markers a streamed log is checked for (profconv.parse.stream), the list of readable formats in the
parser's messages and the help text (`dialect_list`), the foreign formats no longer foreign once a
dialect reads them (profconv.parse.core), and the sections a dialect may fill (checked against
profconv.parse.schema.SECTIONS when it registers).

Dialects from outside profconv: each module named in PROFCONV_DIALECTS (comma-separated module
paths, importable from sys.path) that defines `DIALECT = Dialect(...)` registers after the built-in
ones; a name already taken is refused. (Not entry points: looking them up costs 0.1-0.2 s of every
parse in an environment of a few hundred distributions.)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from profconv.parse.model import DialectResult, Document

ENV_PLUGINS = "PROFCONV_DIALECTS"


@dataclass(frozen=True)
class Dialect:
    """One profiler's text output, as the parser knows it.

    name: the `--format` value and the registry key; title: how messages name it ('OpenACC
    timing'); product: how the help text names it ('Nsight Systems'); tool: the `tool` value of its
    rows; markers: substrings of which one is in any text `detect` takes (what a long log read part
    by part is checked for: tests/test_parse_stream.py holds every dialect to it); part_start: where
    a long log of it may be cut into parts, each parsed afresh (a line holding this text that opens a
    profile, DialectResult.resume giving the state there; profconv.parse.stream), '' where it may
    not; whole_if: text that makes a log of it be read whole (what it says holds for the whole file);
    sections: the schema sections its
    rows may have; readers: its table readers (profconv.parse.engine), in the order lines are
    offered to them; detect(doc) -> bool; parse(doc) -> DialectResult (where a dialect declares
    readers and no parse, the engine runs them); foreign: the foreign-format label
    (profconv.parse.core) this dialect makes native."""

    name: str
    title: str
    tool: str
    markers: tuple[str, ...]
    detect: Callable[[Document], bool]
    parse: Callable[[Document], DialectResult]
    product: str = ""
    part_start: str = ""
    whole_if: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    readers: tuple[Any, ...] = ()
    foreign: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"dialect name {self.name!r}: letters, digits, '-' and '_' only")
        if not self.markers:
            raise ValueError(f"dialect {self.name!r} declares no markers (what its detect looks for)")
        from profconv.parse.schema import SECTIONS

        unknown = [s for s in self.sections if s not in SECTIONS]
        if unknown:
            raise ValueError(f"dialect {self.name!r}: sections {unknown} are not in profconv.parse.schema.SECTIONS")
        if not self.product:
            object.__setattr__(self, "product", self.title)

    @property
    def streams(self) -> bool:
        """A long log of it may be read part by part."""
        return bool(self.part_start)


_REGISTRY: dict[str, Dialect] | None = None


def _dialect_of(obj: Any, where: str) -> Dialect:
    if isinstance(obj, ModuleType):
        obj = getattr(obj, "DIALECT", None)
    if not isinstance(obj, Dialect):
        from profconv.errors import InputError

        raise InputError(f"{where}: not a profconv.parse.dialect.Dialect (a module must define DIALECT)")
    return obj


def _plugins() -> list[tuple[str, Any]]:
    """(where, module) of the dialects from outside (PROFCONV_DIALECTS); one that cannot be
    imported is said in one line (InputError)."""
    from profconv.errors import InputError

    found = []
    for path in filter(None, (p.strip() for p in os.environ.get(ENV_PLUGINS, "").split(","))):
        try:
            found.append((f"{ENV_PLUGINS}={path}", importlib.import_module(path)))
        except ImportError as exc:
            raise InputError(f"{ENV_PLUGINS}: cannot import {path} ({exc})") from None
    return found


def register(dialect: Dialect, registry: dict[str, Dialect] | None = None) -> None:
    """Add a dialect after the ones there (its name must be new)."""
    reg = registry if registry is not None else registry_dict()
    if dialect.name in reg:
        raise ValueError(f"dialect {dialect.name!r} is registered already")
    reg[dialect.name] = dialect


def registry_dict() -> dict[str, Dialect]:
    """The registry itself (built on first use): built-in dialects in their order, then plugins."""
    global _REGISTRY
    if _REGISTRY is None:
        from profconv.parse.dialects import BUILTIN

        reg: dict[str, Dialect] = {}
        for name in BUILTIN:
            register(_dialect_of(importlib.import_module(f"profconv.parse.dialects.{name}"), name), reg)
        for where, obj in _plugins():
            register(_dialect_of(obj, where), reg)
        _REGISTRY = reg
    return _REGISTRY


def registry() -> dict[str, Dialect]:
    """name -> Dialect, in the order dialects are tried (and their results kept)."""
    return registry_dict()


def names() -> list[str]:
    return list(registry())


def dialect_list(attr: str = "title", conjunction: str = "or") -> str:
    """'nvprof, nsys, ncu, OpenACC timing or the CUDA command-line profiler' (titles), or the products."""
    items = [getattr(d, attr) for d in registry().values()]
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def streaming() -> list[Dialect]:
    """The dialects whose long logs may be read part by part."""
    return [d for d in registry().values() if d.streams]


def markers_except(name: str) -> tuple[str, ...]:
    """Every other dialect's markers (what a long log of `name` read part by part is checked for)."""
    return tuple(dict.fromkeys(m for d in registry().values() if d.name != name for m in d.markers))
