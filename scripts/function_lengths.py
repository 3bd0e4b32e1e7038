"""Functions longer than a limit: `python scripts/function_lengths.py [--max 60] PATH...` lists each one
as `path:line: name is N lines (> MAX)` and exits 1 when there is any.

Python functions (`*.py`) are found by walking the AST, from the first decorator to the end of the body.
C functions (`*.c`, `*.h`: the parser's accelerators) are found as this code base writes them (clang-format):
a definition starts at a line in the first column that is not a comment, a preprocessor line or a
declaration ending in ';', its body's `{` ends its signature's last line and its `}` is alone in the first
column; from the signature's first line to that `}` (a macro's body -- lines ending in a backslash -- is
not looked at).

The lint session (noxfile.py) runs it on profconv/parse/ (issue 23: no function there over 60
lines, beside ruff's C901 at complexity 20); tests/test_code_shape.py does too."""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

_C_NAME = re.compile(r"(\w+)\s*\(")  # the first name before a '(' in a signature: the function's
_C_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(.*?\)\)\s*")  # __attribute__((target("avx2"))) before it


def python_functions(path: Path) -> list[tuple[int, str, int]]:
    """(line, name, length) of each function of a Python file."""
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.append((node.lineno, node.name, (node.end_lineno or node.lineno) - first + 1))
    return out


def c_functions(path: Path) -> list[tuple[int, str, int]]:
    """(line, name, length) of each function definition of a C file (see the module's docstring)."""
    out, start, body = [], 0, False
    lines = path.read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines, 1):
        end = line.rstrip()
        if not start and (line[:1].isalpha() or line[:1] == "_") and "(" in line and not line.startswith("typedef"):
            if end.endswith("}"):  # a definition on one line
                out.append((k, _name(line), 1))
                continue
            start = k
        if not start:
            continue
        if not body and end.endswith(";"):
            start = 0  # a declaration, not a definition
        elif not body and end.endswith("{"):
            body = True
        elif body and line == "}":
            out.append((start, _name(lines[start - 1]), k - start + 1))
            start, body = 0, False
    return out


def _name(signature: str) -> str:
    got = _C_NAME.search(_C_ATTRIBUTE.sub("", signature))
    return got.group(1) if got else "?"


def too_long(paths: list[Path], limit: int) -> list[tuple[Path, int, str, int]]:
    """(file, line, function, length) of every function over `limit` lines under `paths` (Python and C)."""
    found = []
    for root in paths:
        files = sorted([*root.rglob("*.py"), *root.rglob("*.c"), *root.rglob("*.h")]) if root.is_dir() else [root]
        for path in files:
            functions = python_functions(path) if path.suffix == ".py" else c_functions(path)
            found += [(path, line, name, n) for line, name, n in functions if n > limit]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=60, help="the most lines a function may have (default 60)")
    ap.add_argument("paths", nargs="+", type=Path)
    args = ap.parse_args(argv)
    found = too_long(args.paths, args.max)
    for path, line, name, length in found:
        print(f"{path}:{line}: {name} is {length} lines (> {args.max})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
