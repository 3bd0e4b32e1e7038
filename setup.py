"""Optional C accelerators of the parser, built at install when a C compiler and Python's headers
are there; without them the install goes on and profconv uses the pure-Python paths, which give the
same output (tests/test_native.py compares both on every test log). The list below is what
`profconv.parse.native.load` can find; PROFCONV_PURE_PYTHON=1 ignores built ones."""

import os

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
# (module, source): a source not there yet is not built
NATIVE = [
    ("profconv.parse._rowscan", "profconv/parse/_rowscan.c"),
    ("profconv.parse._kahan", "profconv/parse/_kahan.c"),
    ("profconv.parse._bytescan", "profconv/parse/_bytescan.c"),
    ("profconv.parse._ncucells", "profconv/parse/_ncucells.c"),
    ("profconv.parse._rowjoin", "profconv/parse/_rowjoin.c"),
    ("profconv.parse._summarycells", "profconv/parse/_summarycells.c"),
    ("profconv.parse._csvcols", "profconv/parse/_csvcols.c"),
    ("profconv.parse._mapguard", "profconv/parse/_mapguard.c"),
]
# -ffp-contract=off: no fused multiply-add, so that every sum is the pure-Python path's to the bit
FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math"] if os.name != "nt" else ["/fp:precise"]

# headers the modules share (a change to one rebuilds them; listed so that an sdist carries them)
DEPENDS = ["profconv/parse/_bytestable.h", "profconv/parse/_teddy.h"]

setup(ext_modules=[Extension(name, [src], depends=DEPENDS, optional=True, extra_compile_args=FLAGS)
                   for name, src in NATIVE if os.path.exists(os.path.join(HERE, src))])
