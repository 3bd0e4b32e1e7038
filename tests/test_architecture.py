"""The import contract: profconv's packages form layers and imports only point down (checked on the
source with ast, lazy imports inside functions included). A new top-level package must be placed in
LAYERS; an arrow that points up fails here with the file that draws it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "profconv"

# An import of a leaf module (one that imports nothing from profconv, e.g. analysis/stats.py: pure
# arithmetic on samples) is allowed from any layer: it cannot close a cycle.
LAYERS: list[set[str]] = [
    {"__main__"},  # python -m profconv
    {"cli"},  # the thin CLI: assembles the commands, turns errors into one line
    {"commands"},  # one module per noun: options in, library call, renderer out
    {"session"},  # the library sessions (RunSession, BenchSession, ...): request in, typed record out
    {"report", "grade"},  # documents, grading sessions
    {"provenance"},  # what code and machine a measurement ran on (a grade worker's model bundle records it too)
    {"render"},  # Document -> markdown, HTML, JSON, terminal tables, plots
    {"judge"},  # a user kernel's evidence judged by a course's rules (data) into a verdict naming the rule
    {"analysis"},  # records and frames -> frames (pure)
    {"profile", "run"},  # collecting: profilers, the variants on the GPU
    {"parse"},  # any profiler's text -> the canonical frame
    {"records"},  # typed JSON records (msgspec)
    {"hardware", "io", "ui", "data", "nogc", "__version__"},  # device peaks and the roofline floor, atomic I/O, console, GC pause
    {"errors"},  # the exception hierarchy and exit statuses
]
LEVEL = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(top-level package, full module name, line) of every profconv import in `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "profconv" and len(parts) > 1:
                out.append((parts[1], name, node.lineno))
    return out


def _module_file(name: str) -> Path | None:
    """The file of the longest importable prefix of profconv.a.b.c."""
    parts = name.split(".")[1:]
    while parts:
        for candidate in (ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts, "__init__.py")):
            if candidate.is_file():
                return candidate
        parts = parts[:-1]
    return None


def _is_leaf(name: str) -> bool:
    f = _module_file(name)
    return f is not None and f.name != "__init__.py" and not _imports(f)


def test_every_package_has_a_layer():
    found = {p.name.removesuffix(".py") for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists())) and p.name != "__init__.py"}
    assert found - LEVEL.keys() == set(), "place the new package in tests/test_architecture.py LAYERS"


def test_imports_point_down():
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel == Path("__init__.py"):
            continue  # the package facade re-exports lazily (PEP 562)
        src = rel.parts[0].removesuffix(".py")
        for dst, name, line in _imports(path):
            if dst == src or dst not in LEVEL or _is_leaf(name):
                continue
            if LEVEL[dst] <= LEVEL[src]:
                wrong.append(f"profconv/{rel}:{line}: {src} imports {dst}")
    assert wrong == [], "imports that point up or sideways:\n" + "\n".join(wrong)
