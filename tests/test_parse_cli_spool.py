"""The CLI's --json / --csv of a long log read part by part (profconv.render.parse_output.SpoolSink):
the same bytes as the whole file's record, its profiles spooled as UTF-8 and joined by rowjoin, its
JSON slices written across the parts without joining them (profconv.render.rows); in process, C and
pure-Python modes."""
import io
import json

import pytest

from profconv.parse import stream
from profconv.parse.core import parse
from profconv.parse.profile_infos import ProfileInfo
from profconv.render import parse_output, rowjoin, rows

HEAD = "==7== NVPROF is profiling process 7, command: ./récit {n}\n==7== Profiling result:\n"
TABLE = ("            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
         " GPU activities:   75.00%  3.0000ms         3  1.0000ms  0.5000ms  1.5000ms  k{n}(float*)\n"
         "                   25.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  [CUDA memcpy HtoD]\n"
         "      API calls:  100.00%  2.0000ms         2  1.0000ms  1.0000ms  1.0000ms  cudaMalloc\n")


@pytest.fixture(params=["c", "pure"])
def mode(request, monkeypatch):
    if request.param == "pure":
        monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    elif not rowjoin.accelerated():
        pytest.skip("the C accelerator is not built")
    return request.param


@pytest.fixture
def parts(monkeypatch):
    """How many parts the CLI's sink was given."""
    given = []
    part = parse_output.SpoolSink.part
    monkeypatch.setattr(parse_output.SpoolSink, "part", lambda self, ps: (given.append(ps.rows.n), part(self, ps)))
    return given


@pytest.fixture
def log(tmp_path, monkeypatch):
    """120 summary-only nvprof profiles (a command that is not ASCII), read part by part: parts of a
    few profiles, JSON slices of 7 rows (each across parts)."""
    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 12)
    monkeypatch.setattr(stream, "WINDOW", 1 << 11)
    monkeypatch.setattr(rows, "CHUNK_ROWS", 7)
    path = tmp_path / "sweep.log"
    path.write_text("".join(HEAD.format(n=n % 3) + TABLE.format(n=n % 5) for n in range(120)))
    return path


def test_streamed_json_is_the_whole_files_record(log, cli, mode, parts):
    r = cli("parse", str(log), "--json")
    assert r.returncode == 0, r.stderr
    assert len(parts) > 5 and sum(parts) == 360 and any(n % 7 for n in parts)  # slices across parts
    whole = io.StringIO()
    parse_output.write_json([parse(str(log))], whole)
    assert r.stdout == whole.getvalue()
    doc = json.loads(r.stdout)
    profiles = doc["inputs"][0]["profiles"]
    assert len(profiles) == 120 and len(doc["rows"]) == 360
    assert profiles[4] == {"profile": 5, "tool": "nvprof", "line_start": 25, "line_end": 30, "pid": 7,
                           "command": "./récit 1", "model": None, "correctness": None, "op_times_s": [],
                           "device": None}
    assert doc["rows"][7]["name"] == "[CUDA memcpy HtoD]" and doc["rows"][7]["profile"] == 3
    assert '    {\n     "profile": 2,\n     "tool": "nvprof",\n     "line_start": 7,' in r.stdout


def test_streamed_csv_is_the_whole_files(log, cli, mode, parts):
    r = cli("parse", str(log), "--csv")
    assert r.returncode == 0, r.stderr
    assert len(parts) > 5 and sum(parts) == 360
    whole = io.StringIO()
    parse_output.write_csv([parse(str(log))], whole)
    assert r.stdout == whole.getvalue()
    assert r.stdout.count("\n") == 361


def test_profiles_joined_by_rowjoin_are_the_records_text(mode):
    infos = [ProfileInfo(profile=n + 1, tool="nsys", line_start=10 * n, line_end=10 * n + 9,
                         pid=[None, 12, 2**40][n % 3], command=["a\"b", None, "é"][n % 3], model=None,
                         correctness=[None, 0.5, -0.0][n % 3], op_times_s=[], device="H200")
             for n in range(4)]
    got = parse_output._profiles_json_columns(infos)
    assert got is not None
    assert got.decode() == parse_output._profiles_json_records(infos)
    assert got.split(b",\n    {")[1] == (
        b'\n     "profile": 2,\n     "tool": "nsys",\n     "line_start": 10,\n     "line_end": 19,\n'
        b'     "pid": 12,\n     "command": null,\n     "model": null,\n     "correctness": 0.5,\n'
        b'     "op_times_s": [],\n     "device": "H200"\n    }')


@pytest.mark.parametrize("field, value", [("line_start", True), ("line_end", 2**70), ("pid", False),
                                          ("command", 3), ("correctness", 1)])
def test_a_value_of_another_type_goes_the_records_way(mode, field, value):
    infos = [ProfileInfo(profile=n + 1, tool="nvprof", line_start=n, line_end=n, pid=1, command="x") for n in range(3)]
    setattr(infos[1], field, value)
    fast = parse_output._profiles_json_columns(infos)
    if field == "line_end":  # an int beyond 64 bits is still an int: its text is str's
        assert fast is not None and b'"line_end": 1180591620717411303424,' in fast
    else:
        assert fast is None


@pytest.mark.parametrize("batch", [1, 2, 5, 4096])
def test_warnings_written_a_batch_at_a_time_are_the_records_text(batch, monkeypatch):
    """The inputs' warnings written after the record's head, WARNINGS_BATCH at a time (a 1 GB sweep of
    nsys's default reports has ~300,000: their text never held whole), byte for byte what the record
    type writes: escapes, non-ASCII, backslashes, an input without warnings, one with one."""
    from profconv.records import ParsedInput, ParseOutput

    warnings = ['a "quoted" name', "caf\u00e9", "back\\slash", "line\nbreak", "x" * 300] * 3
    inputs = [("a.log", [3, 4], warnings), ('"warnings": [] in a name.log', [], []), ("c.log", [], ["one"])]
    want = ParseOutput(inputs=[ParsedInput(source=s, profiles=[], unplaced_lines=u, warnings=w) for s, u, w in inputs],
                       rows=[]).to_json()
    monkeypatch.setattr(parse_output, "WARNINGS_BATCH", batch)
    head, cut, pieces = parse_output._json_head([(s, u) for s, u, _ in inputs])
    out = io.StringIO()
    out.write(pieces[0])
    for after, (_, _, w) in zip(pieces[1:], inputs):
        out.write('"profiles": []')
        parse_output._write_after(out, after, w)
    out.write(head[cut:])
    assert out.getvalue() == want
    assert json.loads(out.getvalue())["inputs"][0]["warnings"] == warnings


@pytest.mark.parametrize("out", ["--json", "--csv"])
def test_inputs_after_a_streamed_one_share_the_spools_files(log, cli, out, tmp_path, monkeypatch):
    """Once a long log was spooled, each later input's profiles go to one shared file (they had a
    temporary file each, held open to the end: ~1,000 inputs reached the common limit of 1,024
    open files): two temporary files in all, however many inputs, and the same bytes as the whole
    files' record, a streamed log among them too (its profiles between two inputs' in that file)."""
    import tempfile

    small = tmp_path / "small.log"
    small.write_text(HEAD.format(n=1) + TABLE.format(n=2))
    files = [str(log), *[str(small)] * 150, str(log), str(small)]
    made = []
    temporary = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda *a, **k: made.append(1) or temporary(*a, **k))
    r = cli("parse", *files, out)
    assert r.returncode == 0, r.stderr
    assert len(made) == (2 if out == "--json" else 1)
    whole = io.StringIO()
    (parse_output.write_json if out == "--json" else parse_output.write_csv)([parse(f) for f in files], whole)
    assert r.stdout == whole.getvalue()
    if out == "--json":
        doc = json.loads(r.stdout)
        assert [len(i["profiles"]) for i in doc["inputs"]] == [120, *[1] * 150, 120, 1]
        assert doc["inputs"][151]["profiles"][119]["line_end"] == 720
