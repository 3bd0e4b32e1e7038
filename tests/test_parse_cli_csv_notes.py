"""`profconv parse --csv` says on stderr what its rows leave out (profconv.render.parse_output.
say_held_back): the lines that look like table data but could not be placed and the warnings, which
the JSON record and the tables hold and the CSV rows cannot. Inputs read whole and read part by part."""
import io
import json

import pytest

from profconv.parse import stream
from profconv.render import parse_output

DATA = "tests/data/pasted/joeboh71-kisystem-performance-parser-py-nsys-decimal-comma-de-windows.py.log"

HEAD = "==7== NVPROF is profiling process 7, command: ./app {n}\n==7== Profiling result:\n"
# Time(%) adds up to 95%: each profile has a note
TABLE = ("            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
         " GPU activities:   70.00%  3.0000ms         3  1.0000ms  0.5000ms  1.5000ms  k{n}(float*)\n"
         "                   25.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  [CUDA memcpy HtoD]\n")


def test_an_input_read_whole_says_its_unplaced_line_and_its_warning(cli):
    r = cli("parse", DATA, "--csv")
    assert r.returncode == 0
    record = json.loads(cli("parse", DATA, "--json").stdout)["inputs"][0]
    assert record["unplaced_lines"] == [296] and len(record["warnings"]) == 1
    assert r.stderr.splitlines() == [
        f"warning: {DATA}: 1 line(s) look like table data but could not be placed: line 296",
        f"warning: {DATA}: {record['warnings'][0]}",
    ]
    assert r.stdout.startswith("source,")  # the rows are unchanged: stdout holds only them


def test_json_and_clean_inputs_say_nothing_on_stderr(cli):
    assert cli("parse", DATA, "--json").stderr == ""  # (the record holds both)
    r = cli("parse", "tests/data/seeds/001_f908eb42489cd140.log", "--csv")
    assert r.returncode == 0 and r.stderr == ""


def test_a_streamed_sweep_says_its_first_warnings_and_how_many_more(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 12)
    monkeypatch.setattr(stream, "WINDOW", 1 << 11)
    streamed = []
    part = parse_output.SpoolSink.part
    monkeypatch.setattr(parse_output.SpoolSink, "part", lambda self, ps: (streamed.append(1), part(self, ps)))
    path = tmp_path / "sweep.log"
    path.write_text("".join(HEAD.format(n=n) + TABLE.format(n=n) for n in range(40)))
    r = cli("parse", str(path), "--csv")
    assert r.returncode == 0 and len(streamed) > 3
    warnings = json.loads(cli("parse", str(path), "--json").stdout)["inputs"][0]["warnings"]
    assert len(warnings) == 40
    said = r.stderr.splitlines()
    assert said == [f"warning: {path}: {w}" for w in warnings[:5]] + [
        f"warning: {path}: +35 more warning(s): --json or the table lists every one"]
    assert "profile 1, gpu table" in said[0] and "95.00%" in said[0]


def test_many_unplaced_lines_are_counted_and_the_first_twenty_named():
    err = io.StringIO()
    parse_output.say_held_back([("a.log", list(range(1, 26)), []), ("b.log", [], ["x"]), ("c.log", [], [])], err)
    assert err.getvalue() == (
        "warning: a.log: 25 line(s) look like table data but could not be placed: lines "
        + ", ".join(map(str, range(1, 21))) + " (+5 more)\n"
        "warning: b.log: x\n")


class _Full(io.StringIO):
    def write(self, s):
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("err", [_Full(), io.StringIO()])
def test_a_full_or_closed_stderr_does_not_fail_the_output(err):
    if not isinstance(err, _Full):
        err.close()
    parse_output.say_held_back([("a.log", [3], ["a note"])], err)  # (no exception: the rows were written)
