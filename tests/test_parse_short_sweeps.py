"""Machine-written sweeps shorter than the stream's STREAM_FROM (nvprof --csv, nvprof's summary-only
text, nsys stats --format csv: one run of a few reports is ~2 KB, a course's sweep 100 KB to a few MB)
read as columns by the same one C pass as long ones (profconv.parse.stream.read_long from SWEEP_FROM
bytes): `profconv.parse` and the CLI give what the whole-file readers give, generated and mutated
sweeps alike, at the stream's own sizes (nothing patched)."""

from __future__ import annotations

import io
import random

import pytest

from profconv.parse import core, native, parse, stream
from profconv.parse.dialects import nsys_csv_sweep
from profconv.parse.dialects.nvprof import csv_sweep, text_columns
from profconv.render import parse_output
from tests import test_parse_nsys_csv_sweep as nsys_gen
from tests import test_parse_nvprof_csv_sweep as csv_gen
from tests import test_parse_nvprof_text_columns as text_gen
from tests.conftest import run_cli
from tests.fastpath_compare import write_lines, write_mutated

pytestmark = pytest.mark.skipif(native.load("_summarycells") is None, reason="the C accelerators are not built")

# (the module whose read() takes such a sweep, a sweep of n runs' lines, its mutations)
KINDS = {
    "nsys": (nsys_csv_sweep, lambda rng, n: nsys_gen._sweep(rng, n, rng.choice([nsys_gen.MERGING, nsys_gen.SIZED])),
             nsys_gen._mutate),
    "nvprof-csv": (csv_sweep, lambda rng, n: csv_gen._sweep(rng, n, rng.choice(list(csv_gen.UNITS))), csv_gen._mutate),
    "nvprof-text": (text_columns, text_gen._sweep, text_gen._mutate),
}


def _outputs(ps) -> tuple[str, str, list, list]:
    js, cs = io.StringIO(), io.StringIO()
    parse_output.write_json([ps], js)
    parse_output.write_csv([ps], cs)
    return js.getvalue(), cs.getvalue(), ps.notes, ps.unplaced


@pytest.fixture
def reads(monkeypatch):
    """The files each kind's columnar read() was given (and what it answered: None, the readers')."""
    seen: list[tuple[str, bool]] = []
    for name, (module, _, _) in KINDS.items():
        real = module.read

        def counted(path, label, real=real, name=name):
            got = real(path, label)
            seen.append((name, got is not None))
            return got

        monkeypatch.setattr(module, "read", counted)
    return seen


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", range(16))
def test_a_short_sweep_gives_what_the_readers_give(kind, seed, tmp_path, reads):
    rng = random.Random(seed)
    module, sweep, mutate = KINDS[kind]
    lines = sweep(rng, rng.randint(3, 60))
    path, mutations = write_mutated(tmp_path, rng, lines, mutate, plain=seed < 6)
    size = path.stat().st_size
    assert size < stream.STREAM_FROM
    got = parse(str(path))
    assert _outputs(got) == _outputs(core.parse_whole(str(path)))
    if not mutations and size >= stream.SWEEP_FROM:
        assert (kind, True) in reads, "a plain short sweep is read as columns"


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_clis_outputs_of_a_short_sweep_are_the_readers(kind, tmp_path, monkeypatch, reads):
    """--json, --csv and the table the same whether the pass reads the sweep or the readers do."""
    module, sweep, _ = KINDS[kind]
    path = write_lines(tmp_path, sweep(random.Random(7), 40))
    assert stream.SWEEP_FROM <= path.stat().st_size < stream.STREAM_FROM
    modes = (["--json"], ["--csv"], ["--width", "150"])
    on = [run_cli("parse", str(path), *m) for m in modes]
    assert (kind, True) in reads
    monkeypatch.setattr(stream, "SWEEP_FROM", 1 << 40)  # the readers
    del reads[:]
    off = [run_cli("parse", str(path), *m) for m in modes]
    assert not reads
    assert [(r.returncode, r.stdout, r.stderr) for r in on] == [(r.returncode, r.stdout, r.stderr) for r in off]
    assert on[0].returncode == 0 and on[1].stdout.startswith("source,profile,")


def test_below_sweep_from_or_one_run_the_readers_read_it(tmp_path, reads):
    """A file shorter than SWEEP_FROM, or one run however long, is not looked at as a sweep."""
    rng = random.Random(3)
    one = write_lines(tmp_path, nsys_gen._sweep(rng, 1, [nsys_gen.MERGING[0]]))
    assert one.stat().st_size < stream.SWEEP_FROM
    assert stream.read_long(str(one)) is None and not reads
    big_run = tmp_path / "one-run.log"
    lines = nsys_gen._sweep(rng, 1, [["cuda_gpu_kern_sum"]])
    head, rows = lines[:4], lines[4:-1]
    big_run.write_text("\n".join(head + rows * (stream.SWEEP_FROM // 40)) + "\n")
    assert big_run.stat().st_size > stream.SWEEP_FROM and stream.read_long(str(big_run)) is None and not reads


def test_in_a_process_without_numpy_a_short_sweep_is_read_as_columns_where_that_pays(tmp_path):
    """A CLI run (no NumPy loaded) reads a short sweep as columns only from SWEEP_PAYS_FROM (loading NumPy
    costs ~0.2 s of CPU): nsys's default reports of 64 KB by the readers, with no NumPy, those of 600 KB as
    columns; nvprof's summary text of 600 KB by the readers (they read it at ~30 MB/s)."""
    import subprocess
    import sys

    def sweep(gen, rng, size):
        lines: list[str] = []
        while sum(map(len, lines)) < size:
            lines += gen(rng, 20)
        return write_lines(tmp_path, lines)

    rng = random.Random(11)
    small_nsys = sweep(lambda r, n: nsys_gen._sweep(r, n, nsys_gen.MERGING), rng, 64 << 10).rename(tmp_path / "n64.log")
    big_nsys = sweep(lambda r, n: nsys_gen._sweep(r, n, nsys_gen.MERGING), rng, 600 << 10).rename(tmp_path / "n600.log")
    text = sweep(text_gen._sweep, rng, 600 << 10).rename(tmp_path / "t600.log")
    code = "\n".join([
        "import sys", "from profconv.cli import main", "from profconv.parse import stream",
        "real, read = stream._columns, []",
        "stream._columns = lambda *a: read.append(a[0]) or real(*a)",
        "def numpy_after(path):",
        "    try:", "        main(['parse', path, '--csv'])", "    except SystemExit as e:", "        assert not e.code, e.code",
        "    return 'numpy' in sys.modules",
        f"loaded = [numpy_after(p) for p in {[str(small_nsys), str(text), str(big_nsys)]!r}]",
        "print(loaded, [p.rsplit('/', 1)[1] for p in read])"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    # (_columns is asked of each: it reads none but the 600 KB nsys sweep as columns, the only one loading NumPy)
    assert r.stdout.strip().splitlines()[-1] == "[False, False, True] ['n64.log', 't600.log', 'n600.log']", r.stderr
