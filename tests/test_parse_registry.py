"""The dialect registry (profconv/parse/dialect.py): every list of dialects is derived from it, and
a dialect from outside (a module named in PROFCONV_DIALECTS) registers as one module."""

from __future__ import annotations

import sys
import textwrap

import pytest

from profconv.parse import dialect as dialect_mod
from profconv.parse import parse_text
from profconv.parse.dialect import Dialect, dialect_list, registry
from profconv.parse.schema import SECTIONS


def test_format_choices_are_the_registry():
    from profconv.commands.parse import Format

    assert [f.value for f in Format] == list(registry()) == ["nvprof", "nsys", "ncu", "acc", "cudaprof", "rocprof"]


def test_help_and_messages_name_the_registered_dialects():
    from profconv.cli import COMMANDS
    from profconv.commands.parse import parse_files

    assert parse_files.__doc__ == ("Read nvprof, Nsight Systems, Nsight Compute, OpenACC timing, CUDA profiler or "
                                   "rocprof logs and rank what takes the time.")
    assert COMMANDS["parse"][2] == parse_files.__doc__
    assert dialect_list() == "nvprof, nsys, ncu, OpenACC timing, the CUDA command-line profiler or rocprof"


def test_sections_declared_are_the_schema_sections():
    declared = {s for d in registry().values() for s in d.sections}
    assert declared == set(SECTIONS)
    with pytest.raises(ValueError, match="not in profconv.parse.schema.SECTIONS"):
        Dialect(name="x", title="x", tool="x", markers=("X",), sections=("kernels",),
                detect=lambda doc: False, parse=lambda doc: None)  # type: ignore[arg-type,return-value]


def test_a_dialect_must_declare_markers_and_a_new_name():
    with pytest.raises(ValueError, match="declares no markers"):
        Dialect(name="x", title="x", tool="x", markers=(), detect=lambda doc: False,
                parse=lambda doc: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="registered already"):
        dialect_mod.register(registry()["nvprof"], dict(registry()))


def test_every_built_in_dialect_streams():
    got = {d.name: d.part_start for d in registry().values() if d.streams}
    assert got == {"nvprof": "NVPROF is profiling process", "nsys": "Generating ", "acc": "Accelerator Kernel Timing data",
                   "ncu": "==PROF== Connected to process", "cudaprof": "CUDA_PROFILE_LOG_VERSION",
                   "rocprof": "TotalDurationNs"}
    assert [d.name for d in registry().values() if d.whole_if] == ["nvprof"]  # nvprof's Device line is file-wide


TOY = textwrap.dedent('''
    from profconv.parse.dialect import Dialect
    from profconv.parse.model import Block, DialectResult, RawProfile
    from profconv.parse.schema import Row


    def detect(doc):
        return "TOYPROF" in doc.text


    def parse(doc):
        result = DialectResult()
        blk = Block(section="gpu")
        for n, line in doc.numbered():
            if line.startswith("TOYPROF "):
                name, ns = line.split()[1:3]
                blk.rows.append(Row(section="gpu", name=name, line_start=n, line_end=n, total_ns=float(ns), calls=1))
                blk.line_start, blk.line_end = blk.line_start or n, n
                result.claimed.add(n)
        result.profiles = [RawProfile(tool="toyprof", line_start=blk.line_start, line_end=blk.line_end, blocks=[blk])]
        return result


    DIALECT = Dialect(name="toy", title="toyprof", tool="toyprof", markers=("TOYPROF",), sections=("gpu",),
                      detect=detect, parse=parse)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    (tmp_path / "toyprof_dialect.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PROFCONV_DIALECTS", "toyprof_dialect")
    monkeypatch.setattr(dialect_mod, "_REGISTRY", None)
    yield
    sys.modules.pop("toyprof_dialect", None)
    monkeypatch.setattr(dialect_mod, "_REGISTRY", None)


def test_a_plugin_dialect_is_one_module(toy):
    from profconv.parse.stream import other_markers

    assert list(registry())[-1] == "toy"
    assert dialect_list().endswith("the CUDA command-line profiler, rocprof or toyprof")
    assert "TOYPROF" in other_markers("nvprof")  # a long nvprof log holding toyprof output is read whole
    ps = parse_text("TOYPROF conv 3000\nTOYPROF gemm 1000\n")
    assert [p.tool for p in ps.profiles] == ["toyprof"]
    assert list(ps.rows.col("name")) == ["conv", "gemm"]
    assert list(ps.rows.col("share")) == [0.75, 0.25]
    ps = parse_text("TOYPROF conv 3000\n", format="toy")
    assert ps.rows.n == 1
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound, match=r"or toyprof\) found"):
        parse_text("nothing here\n")


def test_a_plugin_that_cannot_be_imported_is_one_line(monkeypatch, cli):
    monkeypatch.setenv("PROFCONV_DIALECTS", "no_such_dialect_module")
    monkeypatch.setattr(dialect_mod, "_REGISTRY", None)
    r = cli("parse", "-", "--json", input="x\n")
    assert r.returncode == 2
    assert r.stderr.startswith("error: PROFCONV_DIALECTS: cannot import no_such_dialect_module")
    monkeypatch.setattr(dialect_mod, "_REGISTRY", None)
