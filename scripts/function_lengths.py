"""Functions longer than a limit (lines from the first decorator to the end of the body), found by
walking the AST: `python scripts/function_lengths.py [--max 60] PATH...` lists each one as
`path:line: name is N lines (> MAX)` and exits 1 when there is any.

The lint session (noxfile.py) runs it on profconv/parse/ (issue 23: no function there over 60
lines, beside ruff's C901 at complexity 20); tests/test_code_shape.py does too."""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def too_long(paths: list[Path], limit: int) -> list[tuple[Path, int, str, int]]:
    """(file, line, function, length) of every function over `limit` lines under `paths`."""
    found = []
    for root in paths:
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for path in files:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    length = (node.end_lineno or node.lineno) - first + 1
                    if length > limit:
                        found.append((path, node.lineno, node.name, length))
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
