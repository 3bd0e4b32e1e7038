"""The shape the code is held to (issue 23): no function in profconv/parse/ over 60 lines, Python or C
(ruff's C901 holds the Python ones to complexity 20: pyproject.toml). scripts/function_lengths.py is
the check the lint session runs too."""

from __future__ import annotations

from pathlib import Path

from scripts.function_lengths import main, too_long

ROOT = Path(__file__).resolve().parent.parent


def test_no_function_in_the_parser_is_over_60_lines():  # (its C accelerators too)
    found = too_long([ROOT / "profconv" / "parse"], 60)
    assert found == [], "\n".join(f"{p.relative_to(ROOT)}:{line}: {name} is {n} lines" for p, line, name, n in found)


def test_the_check_finds_a_long_function(tmp_path, capsys):
    src = tmp_path / "long.py"
    src.write_text("def f():\n" + "    x = 1\n" * 61)
    assert main(["--max", "60", str(src)]) == 1
    assert capsys.readouterr().out == f"{src}:1: f is 62 lines (> 60)\n"
    assert main(["--max", "62", str(src)]) == 0


C_SOURCE = """#include <stdio.h>
/* a comment (int x) */
static int declared(int a,
                    int b);
#define TWICE(NAME)                \\
    static int NAME(int a) {       \\
        return 2 * a;              \\
    }
static const double TABLE[2] = {1.0, 2.0};
static PyMethodDef methods[] = {
    {"f", f, METH_VARARGS, "f(x)"},
};
static int one(int a) { return a; }
static PyObject *long_one(PyObject *self,
                          PyObject *args) {
""" + "    x++;\n" * 59 + """}
static int short_one(void) {
    return 0;
}
__attribute__((target("avx2"))) static int fast(const unsigned char *t,
                                                Py_ssize_t n) {
    return t[n];
}
"""


def test_the_check_finds_a_long_c_function(tmp_path, capsys):
    """A C definition from its signature's first line to its `}` in the first column (62 lines here; an
    attribute before one is not its name); a prototype, a one-line definition, a macro's body, tables and
    struct initializers are not long ones."""
    from scripts.function_lengths import c_functions

    src = tmp_path / "long.c"
    src.write_text(C_SOURCE)
    assert c_functions(src) == [(13, "one", 1), (14, "long_one", 62), (76, "short_one", 3), (79, "fast", 4)]
    assert main(["--max", "60", str(src)]) == 1
    assert capsys.readouterr().out == f"{src}:14: long_one is 62 lines (> 60)\n"
    assert main(["--max", "62", str(src)]) == 0
