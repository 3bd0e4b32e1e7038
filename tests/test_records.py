"""Typed records: one model to write and read, published JSON Schemas, one-line refusals (exit 2)
for every malformed record of hostile-input.md §9 and §30."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profconv import records
from profconv.errors import InputError
from profconv.records import BenchRecord, ParseOutput, RunRecord

RUN = Path("tests/data/runs/ece408-h200.json")
BENCH = Path("tests/data/bench/bench-h200-first.json")
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@pytest.mark.parametrize("cls", [RunRecord, BenchRecord, ParseOutput])
def test_published_schema_matches_the_model(cls):
    """schemas/*.json are generated from the models (`python -m profconv.records`): a model change
    without regenerating them fails here."""
    published = json.loads((SCHEMAS / records.SCHEMA_FILES[cls]).read_text())
    assert published == json.loads(json.dumps(records.json_schema(cls)))
    assert published["properties"]["schema"] == {"const": cls.SCHEMA}
    assert "schema_version" in published["required"]


def test_stored_records_round_trip():
    """Version 1 run records are upgraded to 2 on reading; writing and reading again is the identity."""
    run = records.load(RUN)
    assert isinstance(run, RunRecord) and run.schema_version == 2 and run.profile is None
    assert run.results[0].conv[0].op_time is not None and run.results[0].conv[0].dims is None  # an old record
    again = records.convert(json.loads(run.to_json()), RunRecord, "again")
    assert again == run
    bench = records.load(BENCH)
    assert isinstance(bench, BenchRecord) and bench.layers[0].dims.B == 10000
    assert records.convert(json.loads(bench.to_json()), BenchRecord, "again") == bench


def _doc() -> dict:
    return json.loads(RUN.read_text())


def _set(doc, path, value):
    obj = doc
    for key in path[:-1]:
        obj = obj[key]
    if value is KeyError:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return doc


# hostile-input.md §9: wrong types anywhere in a run record; the message names the JSON path
BAD_RUNS = [
    (("results", 0, "conv", 0, "op_time"), [1, 2], "Expected `object | null`, got `array` - at `$.results[0].conv[0].op_time`"),
    (("results", 0, "conv", 0, "op_time"), "fast", "got `str` - at `$.results[0].conv[0].op_time`"),
    (("results", 0, "conv", 0, "op_time", "median_s"), "0.1",
     "Expected `float`, got `str` - at `$.results[0].conv[0].op_time.median_s`"),
    (("results", 0, "conv", 0, "op_time", "max_s"), "0.1", "at `$.results[0].conv[0].op_time.max_s`"),
    (("results", 0, "conv", 0, "op_time", "min_s"), KeyError,
     "missing required field `min_s` - at `$.results[0].conv[0].op_time`"),
    (("results", 0, "conv", 0, "op_time", "median_s"), -1.0,
     "Expected `float` >= 0.0 - at `$.results[0].conv[0].op_time.median_s`"),
    (("results", 0, "conv", 0, "dims"), "10x10", "got `str` - at `$.results[0].conv[0].dims`"),
    (("results", 0, "type_totals"), [1], "Expected `object`, got `array` - at `$.results[0].type_totals`"),
    (("results", 0, "forward_s"), "1s", "got `str` - at `$.results[0].forward_s`"),
    (("results", 0, "status"), "great", "Invalid enum value 'great' - at `$.results[0].status`"),
    (("environment", "gpu"), 5, "got `int` - at `$.environment.gpu`"),
    (("settings", "variants"), 5, "Expected `array`, got `int` - at `$.settings.variants`"),
    (("argv",), [1, 2], "Expected `str`, got `int` - at `$.argv[0]`"),
    (("profile",), "cupti", "got `str` - at `$.profile`"),
    (("profile",), {"tool": "ncu", "launches": 5}, "Expected `array`, got `int` - at `$.profile.launches`"),
    (("profile",), {"tool": "ncu", "launches": [{"range": 1}]}, "Expected `str`, got `int` - at `$.profile.launches[0].range`"),
    (("model",), KeyError, "missing required field `model`"),
    (("interrupted",), 1, "Expected `bool`, got `int` - at `$.interrupted`"),
]


@pytest.mark.parametrize("path, value, message", BAD_RUNS)
def test_malformed_run_records_one_line_exit_2(tmp_path, cli, path, value, message):
    p = tmp_path / "run.json"
    p.write_text(json.dumps(_set(_doc(), path, value)))
    with pytest.raises(InputError) as exc:
        records.load(p)
    assert message in str(exc.value)
    r = cli("report", str(p))
    assert r.returncode == 2 and r.stdout == ""
    assert message in r.stderr.replace("\n", "") and r.stderr.startswith("error:") and "Traceback" not in r.stderr


@pytest.mark.parametrize("content, message", [
    (b'{"schema": "profconv.run", "schema_version": "1"}', '"schema_version" must be a positive integer, got "1"'),
    (b'{"schema": "profconv.run"}', '"schema_version" must be a positive integer, got null'),
    (b'{"schema": "profconv.run", "schema_version": true}', '"schema_version" must be a positive integer, got true'),
    (b'{"schema": "profconv.run", "schema_version": 0}', '"schema_version" must be a positive integer, got 0'),
    (b'{"schema": "profconv.run", "schema_version": 3}', "run record schema version 3 is newer than this profconv "
                                                          "reads (2); upgrade profconv"),
    (b'{"schema": "profconv.bench", "schema_version": 2}', "bench record schema version 2 is newer"),
    (b'{"schema": "profconv.parse", "schema_version": 1}', "a 'profconv.parse' file, not a profconv run or bench record"),
    (b'{"schema": "profconv.run", "x": "\xff\xfe"}', "not a valid JSON record (not UTF-8 text)"),
    (b"[" * 100_000 + b"]" * 100_000, "not a valid JSON record"),
    (b'{"schema": "profconv.run", "schema_version": 1', "not a valid JSON record (Input data was truncated)"),
])
def test_versions_and_undecodable_files(tmp_path, cli, content, message):
    """hostile-input.md §30 (string, missing and boolean versions) and §9 (bad UTF-8, deep nesting)."""
    p = tmp_path / "run.json"
    p.write_bytes(content)
    with pytest.raises(InputError, match=None) as exc:
        records.load(p)
    assert message in str(exc.value)
    r = cli("report", str(p))
    assert r.returncode == 2 and message in r.stderr.replace("\n", "")


def test_record_directory_and_unreadable(tmp_path, cli):
    (tmp_path / "run.json").mkdir()
    r = cli("report", str(tmp_path))
    assert r.returncode == 2 and "without run.json or bench.json" in r.stderr


def test_parse_json_is_a_parse_output_record(cli):
    r = cli("parse", "tests/data/nvprof-new/tyler-cs566-reductions.log", "--json")
    assert r.returncode == 0
    out = records.validate(json.loads(r.stdout), ParseOutput, "stdout")
    assert out.schema == "profconv.parse" and out.rows and out.inputs[0].profiles


def test_doubled_results_refused(tmp_path, cli):
    """hostile-input.md §9: `run --images 10,10` or `--variant cpu,cpu` records crashed the report."""
    doc = _doc()
    doc["results"].append(doc["results"][0])
    p = tmp_path / "run.json"
    p.write_text(json.dumps(doc))
    r = cli("report", str(p))
    assert r.returncode == 2
    assert "results[7] repeats cpu at 10000 images (results[0])" in r.stderr.replace("\n", "")
