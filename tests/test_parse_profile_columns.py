"""Many small profiles carried as columns: a batch of small tables read together (nsys_batch) gives
each table as a range of the batch's rows (model.Span), gathered once for all of them, their notes
and consistency as the row-by-row blocks give them."""

from __future__ import annotations

from array import array

import pytest

from profconv.parse.core import _block_notes, _drop_inconsistent, _rows
from profconv.parse.dialects.nsys_batch import Batch
from profconv.parse.model import Block, RawProfile
from profconv.parse.schema import Row


def _batch(names: list[str], text: bool = False, avg: float = 10.0) -> Batch:
    n = len(names)
    numbers = {"time_pct": array("d", [50.0, 50.0, 30.0, 30.0, 40.0, 7.0, 100.0][:n]),
               "total_ns": array("d", [float(10 * (k + 1)) for k in range(n)]),
               "calls": [k + 1 for k in range(n)],
               "avg_ns": array("d", [avg] * n)}
    codes = None
    if text:
        pa = pytest.importorskip("pyarrow")
        import numpy as np

        pool = list(dict.fromkeys(names))
        codes = _Text(np.array([pool.index(k) for k in names], dtype=np.int32), pa.array(pool, pa.string()))
    return Batch(numbers, names, codes)


class _Text:
    def __init__(self, codes, pool) -> None:
        self.codes, self.pool = codes, pool


NAMES = ["void k1<float>(float*)", "[CUDA memcpy HtoD]", "void k1<float>(float*)", "k2", "k3", "k4", "k5"]


def _raw(batch: Batch, other: Batch) -> list[RawProfile]:
    """Four profiles: ranges 0-1 and 2-4 of `batch` (consecutive), a block of Row objects, range
    6 (row 5 is no table's: not consecutive), a range of another batch."""
    row = Row(section="api", name="cudaMalloc", line_start=30, line_end=30, time_pct=100.0, total_ns=5.0, calls=1,
              avg_ns=5.0)
    return [
        RawProfile("nsys", 1, 8, [Block(section="gpu", line_start=5, line_end=6, span=batch.span(0, 2))]),
        RawProfile("nsys", 10, 31, [Block(section="gpu", line_start=20, line_end=22, span=batch.span(2, 3)),
                                    Block(section="api", line_start=30, line_end=30, rows=[row])]),
        RawProfile("nsys", 40, 45, [Block(section="gpu", line_start=44, line_end=44, span=batch.span(6, 1))]),
        RawProfile("nsys", 50, 55, [Block(section="os-runtime", line_start=52, line_end=52, span=other.span(0, 1))]),
    ]


@pytest.mark.parametrize("text", [False, True])
def test_ranges_gathered_once(text):
    batch = _batch(NAMES, text)
    got = _rows(_raw(batch, _batch(["poll"])), first=3, shift=100)
    assert got.n == 8
    assert list(got.col("profile")) == [3, 3, 4, 4, 4, 4, 5, 6]
    assert list(got.col("section")) == ["gpu", "gpu", "gpu", "gpu", "gpu", "api", "gpu", "os-runtime"]
    assert list(got.col("table")) == [5, 5, 20, 20, 20, 30, 44, 52]
    # a stream window's blocks carry the shift in their line_start already (stream._shift, before
    # finish): a range's rows are at its block's line_start; only Row objects' and tables' own line
    # numbers (the window's) get `shift`
    assert list(got.col("line_start")) == [5, 6, 20, 21, 22, 130, 44, 52]
    assert list(got.col("line_end")) == list(got.col("line_start"))
    assert list(got.col("name")) == NAMES[:5] + ["cudaMalloc", "k5", "poll"]
    assert list(got.col("short_name")) == ["k1<…>", "[CUDA memcpy HtoD]", "k1<…>", "k2", "k3", "cudaMalloc", "k5", "poll"]
    assert list(got.col("total_ns")) == [10.0, 20.0, 30.0, 40.0, 50.0, 5.0, 70.0, 10.0]
    assert list(got.col("calls")) == [1, 2, 3, 4, 5, 1, 7, 1]
    assert list(got.col("tool")) == ["nsys"] * 8


def test_ranges_let_go_once_gathered():
    raw = _raw(_batch(NAMES), _batch(["poll"]))
    _rows(raw)
    assert all(b.span is None for p in raw for b in p.blocks)


def test_range_notes_as_a_table_s():
    raw = _raw(_batch(NAMES), _batch(["poll"]))
    notes = _block_notes(raw, first=1)
    assert notes == {  # only tables with a note have a key: 50 + 50, 30 + 30 + 40 and 100 add up
        (4, "os-runtime"): ["lines 52-52: Time(%) adds up to 50.00%, not 100% (rows missing or cut)"],
    }


def test_notes_in_their_tables_order():
    """A key's place is its profile's first table of that section, whichever table's note came first."""
    from profconv.parse.core import _in_block_order

    gpu = Row(section="gpu", name="k", line_start=3, line_end=3, total_ns=50.0, calls=1, avg_ns=50.0, time_pct=100.0)
    raw = [RawProfile(tool="nsys", line_start=1, line_end=9, blocks=[
        Block(section="gpu", line_start=3, line_end=3, rows=[gpu]),
        Block(section="api", line_start=5, line_end=5, notes=["b"]),
        Block(section="gpu", line_start=7, line_end=7, notes=["c"])])]
    notes = _block_notes(raw, first=4)
    notes[(4, "os-runtime")] = ["a note of a section with no table"]
    got = _in_block_order(notes, raw, first=4)
    assert list(got.items()) == [((4, "gpu"), ["lines 7-7: c"]), ((4, "api"), ["lines 5-5: b"]),
                                 ((4, "os-runtime"), ["a note of a section with no table"])]


def test_ranges_are_not_checked_again():
    """A batch's rows were checked where read (every total within 1% of calls x average): the
    engine's check passes over them (here made inconsistent: avg 99 ns), where it drops a block's
    row that is not."""
    bad = Row(section="gpu", name="k", line_start=9, line_end=9, total_ns=50.0, calls=2, avg_ns=10.0)
    raw = _raw(_batch(NAMES, avg=99.0), _batch(["poll"], avg=99.0))
    raw[0].blocks.append(Block(section="api", line_start=9, line_end=9, rows=[bad]))
    assert _drop_inconsistent(raw) == [9]
    assert raw[0].blocks[0].span is not None and raw[0].blocks[0].span.n == 2


def _pandas_frame(rows):
    """Rows.to_frame without its shortcuts: every column through pandas' own conversion."""
    import numpy as np
    import pandas as pd

    from profconv.parse.schema import COLUMNS

    out = {}
    for name, dtype in COLUMNS.items():
        c = rows.cols.get(name)
        if c is None:
            out[name] = pd.array([None] * rows.n, dtype=dtype) if dtype not in ("float64", "int64") else \
                np.full(rows.n, np.nan if dtype == "float64" else 0)
        else:
            out[name] = pd.array(list(c), dtype=dtype) if dtype not in ("float64", "int64") else \
                np.asarray(c, dtype=dtype)
    return pd.DataFrame(out, index=pd.RangeIndex(rows.n))


def test_frame_of_strings_and_whole_numbers_as_pandas_makes_it():
    from profconv.parse.table import Rows

    n = 3000
    rows = Rows({
        "profile": [1 + k // 40 for k in range(n)],
        "section": ["gpu"] * n,  # one value all along
        "tool": ["nsys" if k % 3 else None for k in range(n)],  # few, some missing
        "name": [f"k{k % 7}" for k in range(n)],  # few
        "short_name": [f"s{k}" for k in range(n)],  # many: pandas' own conversion
        "metric": [None] * n,
        "unit": [float("nan")] * (n - 1) + ["%"],  # not str and None alone: pandas' own conversion
        "table": [5] * n,  # whole numbers
        "line_start": [k if k % 11 else None for k in range(n)],  # a missing one: pandas' own conversion
        "calls": [2**62] * n,
    }, n)
    got, want = rows.to_frame(), _pandas_frame(rows)
    assert got.equals(want)
    assert [str(t) for t in got.dtypes] == [str(t) for t in want.dtypes]
    assert got["tool"].isna().sum() == 1000 and got["name"].iloc[10] == "k3" and got["calls"].iloc[0] == 2**62
    assert got["section"].dtype == "string" and got["table"].dtype == "Int64"


def test_frame_of_a_sweep_as_pandas_makes_it(tmp_path):
    """The ranges of a batch (a sweep of 60 nsys runs read together) gathered, then as a frame."""
    pytest.importorskip("pyarrow")
    from profconv.parse import bytescan, parse
    from tests.test_parse_bytescan import _sweep, _taken

    path = tmp_path / "sweep.log"
    path.write_text(_sweep())
    assert _taken(path) == 60
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bytescan, "BATCH_ROWS", 1)
        ps = parse(str(path))
    assert len(ps.profiles) == 60 and ps.rows.n == 2400
    assert ps.frame.equals(_pandas_frame(ps.rows))
    assert list(ps.frame["profile"].iloc[[0, 39, 40, 2399]]) == [1, 1, 2, 60]
    assert list(ps.frame["line_start"].iloc[[0, 39, 40]]) == [5, 44, 50]


def _record_json(sets) -> str:
    """The --json record built the plain way: every profile through the record type, one by one."""
    import io

    from profconv.records import ParsedInput, ParsedProfile, ParseOutput, struct_from
    from profconv.render.parse_output import _plain
    from profconv.render.rows import write_json_rows

    head = ParseOutput(inputs=[ParsedInput(source=ps.source, profiles=[struct_from(ParsedProfile, _plain(vars(p)))
                                                                       for p in ps.profiles],
                                           unplaced_lines=[n for n, _ in ps.unplaced], warnings=list(ps.notes))
                               for ps in sets], rows=[]).to_json()
    cut = head.rindex('"rows": []')
    out = io.StringIO()
    out.write(head[:cut] + '"rows": [')
    write_json_rows([(ps.source, ps.rows) for ps in sets], out)
    out.write("\n ]" + head[cut + len('"rows": []') :] + "\n")
    return out.getvalue()


def test_json_record_profiles_converted_together():
    import io
    from pathlib import Path

    from profconv.parse import parse
    from profconv.render.parse_output import write_json

    data = Path(__file__).parent / "data"
    sets = [parse(str(data / "seeds" / "002_b0bcac5cefbf4480.log")),
            parse(str(data / "nvprof-new" / "tyler-cs566-reductions.log"))]
    sets[1].profiles[0].correctness = float("inf")  # null in the record
    for group in (sets, sets[:1], sets[1:]):
        out = io.StringIO()
        write_json(group, out)
        assert out.getvalue() == _record_json(group)
    assert len(sets[0].profiles) == 6 and out.getvalue().count('"correctness": null') == len(sets[1].profiles)
    sets[1].profiles[0].op_times_s.append(float("nan"))  # refused by the record type: the same error
    with pytest.raises(ValueError, match="op_times_s"):
        write_json(sets, io.StringIO())
    with pytest.raises(ValueError, match="op_times_s"):
        _record_json(sets)


@pytest.mark.parametrize("native_on", [True, False])
def test_unchecked_ranges_checked_by_the_engine(monkeypatch, native_on):
    """A range of a batch whose reader did not check its rows (Span.checked False): the engine's
    check looks at them; a block with a row it drops gets columns of its own, its other rows kept."""
    from profconv.parse import native
    from profconv.parse.model import Span

    if not native_on:
        monkeypatch.setattr(native, "load", lambda name: None)
    batch = _batch(NAMES)  # total 10 (k + 1), calls k + 1, avg 10: consistent
    batch.table.cols["total_ns"] = array("d", [10.0, 20.0, 300.0, 40.0, 50.0, 60.0, 70.0])  # row 2: 300 != 3 x 10
    # a stream window's profiles as stream._part checks them: the blocks' line numbers shifted to the
    # file's already (1000 lines before the window), their rows' the window's until _rows adds it
    raw = [RawProfile("nsys", 1001, 1008, [Block(section="gpu", line_start=1005, line_end=1006,
                                                 span=Span(batch.table, 0, 2))]),
           RawProfile("nsys", 1010, 1031, [Block(section="gpu", line_start=1020, line_end=1022,
                                                 span=Span(batch.table, 2, 3))])]
    assert _drop_inconsistent(raw, shift=1000) == [1020]
    assert raw[0].blocks[0].span is not None  # consistent: a range still
    blk = raw[1].blocks[0]
    assert blk.span is None and blk.table is not None
    assert list(blk.table.col("name")) == ["k2", "k3"] and list(blk.table.col("line_start")) == [21, 22]
    got = _rows(raw, shift=1000)
    assert list(got.col("name")) == NAMES[:2] + ["k2", "k3"]
    assert list(got.col("line_start")) == [1005, 1006, 1021, 1022] and list(got.col("table")) == [1005, 1005, 1020, 1020]
    assert list(got.col("total_ns")) == [10.0, 20.0, 40.0, 50.0]
