"""The shape the code is held to (issue 23): no function in profconv/parse/ over 60 lines (ruff's
C901 holds them to complexity 20: pyproject.toml). scripts/function_lengths.py is the check the
lint session runs too."""

from __future__ import annotations

from pathlib import Path

from scripts.function_lengths import main, too_long

ROOT = Path(__file__).resolve().parent.parent


def test_no_function_in_the_parser_is_over_60_lines():
    found = too_long([ROOT / "profconv" / "parse"], 60)
    assert found == [], "\n".join(f"{p.relative_to(ROOT)}:{line}: {name} is {n} lines" for p, line, name, n in found)


def test_the_check_finds_a_long_function(tmp_path, capsys):
    src = tmp_path / "long.py"
    src.write_text("def f():\n" + "    x = 1\n" * 61)
    assert main(["--max", "60", str(src)]) == 1
    assert capsys.readouterr().out == f"{src}:1: f is 62 lines (> 60)\n"
    assert main(["--max", "62", str(src)]) == 0
