"""A file name that is not UTF-8 (bytes Python keeps as lone surrogates) is named with backslash
escapes in --json and --csv, read whole or part by part; it once ended `parse --json` with an
internal error."""
import json
import os

import pytest

from profconv.parse.core import source_label
from profconv.parse.stream import STREAM_FROM

PROFILE = ("==7== Profiling result:\n"
           "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
           " GPU activities:  100.00%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  k\n")


def test_source_label_escapes_only_what_is_not_utf8():
    assert source_label("-") == "<stdin>"
    assert source_label("runs/nvprof-é.log") == "runs/nvprof-é.log"
    assert source_label(os.fsdecode(b"/tmp/bad\xff.log")) == "/tmp/bad\\xff.log"


@pytest.fixture
def odd_dir(tmp_path):
    try:
        (tmp_path / os.fsdecode(b"probe\xff")).write_text("x")
    except (OSError, UnicodeError):
        pytest.skip("this filesystem refuses file names that are not UTF-8")
    return tmp_path


@pytest.mark.parametrize("copies", [1, STREAM_FROM // len(PROFILE) + 50], ids=["whole", "streamed"])
def test_non_utf8_file_name_in_json_and_csv(odd_dir, cli, copies):
    path = odd_dir / os.fsdecode(b"nv\xff.log")
    path.write_text(PROFILE * copies)
    want = str(odd_dir) + "/nv\\xff.log"
    r = cli("parse", str(path), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["inputs"][0]["source"] == want
    assert {row["source"] for row in doc["rows"]} == {want}
    assert len(doc["rows"]) == copies
    r = cli("parse", str(path), "--csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == copies + 1 and lines[1].startswith(want + ",1,nvprof,gpu,k,k,100.0,1000000.0,1,")
