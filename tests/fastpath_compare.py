"""What the fast paths' compare-with-the-readers tests share. The columnar fast paths'
(tests/test_parse_nvprof_csv_sweep.py, tests/test_parse_nsys_csv_sweep.py,
tests/test_parse_nvprof_text_columns.py): a generated sweep written with random mutations, the fast path
switched off (the reference: the stream's windows read by the existing readers), and the checks that the
library's ProfileSet, the stream's parts and the CLI's `--json`/`--csv`/table output are the same with the
fast path on and off. The byte path's and the sweeps' (tests/test_parse_bytescan.py,
tests/test_parse_nvprof_trace_bytes.py, tests/test_parse_nvprof_sweep.py, tests/test_parse_nvprof_text_sweep.py):
the CLI's outputs each way a file can be read (`cli_outputs`), which way the byte path went (`byte_path_used`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import profconv
from profconv.parse import bytescan, core, file_windows, read_buffer, stream
from profconv.parse.profile_infos import ProfileColumns
from profconv.parse.schema import COLUMNS
from profconv.parse.table import FLOAT_COLUMNS, Rows, missing_value
from tests.conftest import run_cli

# the CLI's outputs compared: --json, --csv, the table (a terminal's width), --json with a threshold
CLI_MODES = (["--json"], ["--csv"], ["--width", "150"], ["--json", "--threshold", "0.5"])


def cli_outputs(path: Path, monkeypatch, ways: dict[str, Callable], modes=CLI_MODES) -> dict[str, tuple]:
    """`profconv parse path` in each of `modes` (a list of arguments each), once each way (`ways[name](m)`
    switches what it switches on a monkeypatch context `m`, undone after): each way's (exit status, stdout,
    stderr) a mode, in a tuple."""
    got = {}
    for name, switch in ways.items():
        with monkeypatch.context() as m:
            switch(m)
            got[name] = tuple((r.returncode, r.stdout, r.stderr) for r in (run_cli("parse", str(path), *mode)
                                                                            for mode in modes))
    return got


def text_path(m) -> None:
    """A `cli_outputs` way: the text path (the byte path finds no table on the input's bytes)."""
    m.setattr(bytescan, "find", lambda data, pays_from: None)


def byte_path_used(path: Path) -> str:
    """'bytes' where the byte path gave the result, 'reparse' where it went back to the text, 'none'
    where no table was found (taken) on the bytes."""
    pre = bytescan.find(path.read_bytes(), core.BYTES_PAY_FROM)
    if pre is None:
        return "none"
    try:
        core._parse([core.decode(pre.data)], str(path), None, False, pre)
    except bytescan.Reparse:
        return "reparse"
    return "bytes"


def fields(ps) -> tuple:
    """What a ProfileSet holds, every schema column (one a reader leaves out: missing in every row)."""
    n = ps.rows.n
    rows = {k: list(ps.rows.cols[k]) if k in ps.rows.cols else [missing_value(k)] * n for k in COLUMNS}
    for k in FLOAT_COLUMNS:
        rows[k] = [repr(float(x)) for x in rows[k]]  # NaN equal to NaN, 0.0 not to -0.0
    return (rows, ps.profiles.columns(), ps.unplaced, ps.notes, ps.table_notes, ps.source)


def joined(parts: list) -> tuple:
    """The parts' fields joined, their notes sorted (where a part ends decides which part a damaged row's
    note joins: their order depends on the windows' sizes, in the readers' parts too)."""
    return fields(parts[0].__class__(None, ProfileColumns.concat([p.profiles for p in parts]), parts[0].source,
                                     [u for p in parts for u in p.unplaced], sorted(n for p in parts for n in p.notes),
                                     {k: v for p in parts for k, v in p.table_notes.items()},
                                     rows=Rows.concat([p.rows for p in parts])))


def write_lines(tmp_path: Path, lines: list[str], end: str = "\n") -> Path:
    """The lines as tmp_path/sweep.log, `end` after the last."""
    path = tmp_path / "sweep.log"
    path.write_text("\n".join(lines) + end)
    return path


def write_mutated(tmp_path: Path, rng: random.Random, lines: list[str], mutate: Callable, plain: bool) -> tuple[Path, int]:
    """The lines after one to three random `mutate(rng, lines)` (none where `plain`), written with a newline at
    the end (a mutated one's left out one time in 20): the file and the number of mutations."""
    mutations = 0 if plain else rng.randint(1, 3)
    for _ in range(mutations):
        mutate(rng, lines)
    return write_lines(tmp_path, lines, "\n" if rng.random() < 0.95 or not mutations else ""), mutations


def mutate_lines(rng: random.Random, lines: list[str], k: int, what: int, odd_bytes: str, stray: list[str]) -> bool:
    """The mutations of any dialect's lines (what 0 to 4): line k with a byte changed to one of `odd_bytes`,
    deleted, doubled, a line of `stray` before it, swapped with another; False for another `what`."""
    if what == 0:  # a byte changed
        s = lines[k]
        at = rng.randrange(len(s) + 1)
        lines[k] = s[:at] + rng.choice(odd_bytes) + s[at + 1:]
    elif what == 1:
        del lines[k]
    elif what == 2:
        lines.insert(k, lines[k])
    elif what == 3:
        lines.insert(k, rng.choice(stray))
    elif what == 4:
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
    else:
        return False
    return True


def set_cell(rng: random.Random, lines: list[str], rows: list[int], j: int, value: str) -> None:
    """Cell j of one of the comma-separated lines at `rows` (a random one) set to `value`."""
    i = rng.choice(rows)
    cells = lines[i].split(",")
    cells[j] = value
    lines[i] = ",".join(cells)


@dataclass(frozen=True)
class FastPath:
    """A fast path and its switch: `module.<switch>()` answering None leaves every file to the readers."""

    module: ModuleType
    switch: str

    def small(self, dialect_streams: tuple[dict, ...] = (), **sizes: int):
        """A fixture (assign it to `small` in the test module): streams and the fast path at sizes a test's
        sweep reaches, several windows, chunks and parts. The stream's STREAM_FROM 4 KiB and WINDOW 8 KiB (a
        dialect's own stream settings, `dialect_streams`, their window too), the module's `sizes` (CHUNK=...), which the
        CLI's spool uses too (stream.SPOOL_PART 0: the module's PART)."""

        def small(monkeypatch) -> None:
            monkeypatch.setattr(stream, "STREAM_FROM", 1 << 12)
            monkeypatch.setattr(stream, "WINDOW", 1 << 13)
            for settings in dialect_streams:
                monkeypatch.setitem(settings, "window", 1 << 13)
            for name, value in sizes.items():
                monkeypatch.setattr(self.module, name, value)
            monkeypatch.setattr(stream, "SPOOL_PART", 0)  # the CLI's spool too: the module's PART
            monkeypatch.setattr(file_windows, "WHOLE", 0)  # a whole-file read's windows the module's CHUNK too

        return pytest.fixture(small)

    def off(self, m) -> None:
        """The fast path switched off on monkeypatch (context) `m`."""
        m.setattr(self.module, self.switch, lambda: None)

    def parsed(self, path: Path, on: bool, monkeypatch) -> tuple:
        """profconv.parse(path) and the stream's parts, the fast path on or off."""
        with monkeypatch.context() as m:
            if not on:
                self.off(m)
            whole = profconv.parse(str(path))
            parts = list(stream.parts(str(path)))
        return whole, parts

    def assert_library_same(self, path: Path, monkeypatch) -> tuple:
        """The ProfileSet and the stream's parts the same with the fast path on and off; the two ProfileSets."""
        whole, parts = self.parsed(path, True, monkeypatch)
        ref_whole, ref_parts = self.parsed(path, False, monkeypatch)
        assert fields(whole) == fields(ref_whole)
        assert joined(parts) == joined(ref_parts)
        return whole, ref_whole

    def assert_buffer_kept(self, long: Path, short: Path, monkeypatch) -> None:
        """A regular file is mapped (profconv.parse.file_windows): no buffer taken or kept. One that cannot
        be (file_windows.mappable false: a pipe's) is read through a buffer the module's `read` keeps for
        the next read in the process (profconv.parse.read_buffer: 8 MiB not zeroed anew, page by page,
        each read): `short` read next through it holds `long`'s bytes past its end, which are not looked
        at -- it gives what the readers give and what the mapped read gives, and the buffer is the same
        one. A stream's parts keep theirs to themselves."""
        size = 2 * self.module.CHUNK
        monkeypatch.setattr(read_buffer, "_KEPT", [])
        assert short.stat().st_size < size < long.stat().st_size
        mapped = self.module.read(str(short), str(short))
        assert self.module.read(str(long), str(long)) is not None and read_buffer._KEPT == []
        monkeypatch.setattr(file_windows, "mappable", lambda f: False)
        assert self.module.read(str(long), str(long)) is not None
        kept = list(read_buffer._KEPT)
        assert [len(b) for b in kept] == [size]
        whole, _ = self.assert_library_same(short, monkeypatch)
        assert fields(whole) == fields(mapped)
        assert read_buffer._KEPT == kept and read_buffer._KEPT[0] is kept[0]
        for _ in self.module.parts(str(short), str(short)):
            pass
        assert read_buffer._KEPT[0] is kept[0]

    def assert_cli_same(self, path: Path, monkeypatch) -> None:
        """`profconv parse path` in each of CLI_MODES: exit status, stdout and stderr the same with the fast
        path on and off."""
        got = cli_outputs(path, monkeypatch, {"on": lambda m: None, "off": self.off})
        assert got["on"] == got["off"]
