"""Hostile run records (../shared/findings/hostile-2.md S1, S2, T10-T15): `report` reads nothing outside a
record's directory, passes no raw HTML into markdown, and turns odd numbers and untyped fields into one
line or a warning, never a traceback. Each record is built here from a real one in tests/data/runs/ with
the one change the reproducer made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

RUNS = Path(__file__).resolve().parent / "data" / "runs"


def _record(tmp_path: Path, base: str, change, name: str = "run.json") -> Path:
    doc = json.loads((RUNS / base).read_text())
    change(doc)
    path = tmp_path / "rec" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _rows(value: str):
    def change(doc):
        doc["profile"]["rows"] = value
    return change


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "secret" / "profile-rows.csv"
    secret.parent.mkdir(parents=True)
    secret.write_text((Path(__file__).parent / "data" / "numbers" / "h200-run-prof" / "profile-rows.csv").read_text()
                      .replace("conv_forward", "SECRET_conv_forward"))
    return secret


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_profile_rows_outside_the_record_directory_is_never_read(tmp_path, cli, how):
    """S1: profile.rows as an absolute path, as ../, or a link leaving the directory: not read, and said."""
    secret = _secret(tmp_path)
    value = {"absolute": str(secret), "dotdot": "../secret/profile-rows.csv", "symlink": "profile-rows.csv"}[how]
    path = _record(tmp_path, "user-kernels-profiled-h100.json", _rows(value))
    if how == "symlink":
        os.symlink(secret, path.parent / "profile-rows.csv")
    for args in (["--html", tmp_path / "r.html"], ["--markdown", tmp_path / "r.md", "--full"]):
        r = cli("report", path, *args)
        assert r.returncode == 0, r.stderr
        text = Path(args[1]).read_text()
        assert "SECRET_" not in text
        assert "The CUPTI tables are not shown: the record's profile.rows" in text
        assert ("not a file name inside the record's directory" if how == "absolute"
                else "outside the record's directory") in text


def test_profile_rows_that_is_not_a_rows_file_or_a_fifo(tmp_path, cli):
    """T15: rows naming a text file that is no CSV of rows is a warning; a FIFO is refused unopened (no hang)."""
    path = _record(tmp_path, "user-kernels-profiled-h100.json", _rows("passwd"))
    (path.parent / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/bin/false\n\x00\x01")
    r = cli("report", path, "--json")
    assert r.returncode == 0, r.stderr
    assert "is not a profconv rows file" in r.stdout or "not shown" in r.stdout
    os.mkfifo(path.parent / "fifo.csv")
    path = _record(tmp_path, "user-kernels-profiled-h100.json", _rows("fifo.csv"))
    r = cli("report", path, "--json")
    assert r.returncode == 0 and "'fifo.csv': not a regular file" in r.stdout


def test_a_missing_rows_file_is_said_not_silently_dropped(tmp_path, cli):
    path = _record(tmp_path, "user-kernels-profiled-h100.json", lambda d: None)
    r = cli("report", path, "--markdown", tmp_path / "r.md")
    assert r.returncode == 0
    assert "The CUPTI tables are not shown: the record's profile.rows 'profile-rows.csv': cannot read" in \
        (tmp_path / "r.md").read_text()


def test_markdown_passes_no_raw_html_from_a_record(tmp_path, cli):
    """S2: a record's strings holding markup are shown as text in markdown, never as HTML."""
    def change(doc):
        doc["environment"]["cupy_version"] = "<script>alert(1)</script>"
        doc["results"][1]["error"] = "<img src=x onerror=alert(2)>"
        doc["results"][1]["status"] = "failed"
        doc["results"][1]["conv"][0].update(status="failed", error="<b>bold</b> `<i>code</i>`")
    path = _record(tmp_path, "ece408-high-h200.json", change)
    r = cli("report", path, "--markdown", tmp_path / "r.md", "--full")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "r.md").read_text()
    assert "<script" not in text and "<b>" not in text and "&lt;script>alert(1)&lt;/script>" in text
    assert "`<i>code</i>`" in text  # inside a code span markup is shown as written
    from profconv.render.markdown import code, inline

    assert inline("p < 0.05, B/A > 1") == "p < 0.05, B/A > 1"  # comparisons read as written
    assert code("a`b") == "``a`b``" and code("`x") == "`` `x ``"


@pytest.mark.parametrize("field, value, message", [
    (("results", 1, "user", "notes"), 5, "user.notes must be a list of strings, not int - at `$.results[1]`"),
    (("results", 1, "user", "notes"), "one note", "user.notes must be a list of strings, not str"),
    (("results", 1, "user", "compile"), 7, "user.compile must be a dict, not int"),
    (("results", 1, "user", "source_sha256"), 1.5, "user.source_sha256 must be a str, not float"),
    (("profile", "ncu", "settings", "argv"), 3, "settings.argv must be a list of strings, not int - at `$.profile.ncu`"),
])
def test_untyped_record_fields_are_checked_with_their_json_path(tmp_path, cli, field, value, message):
    """T11-T14: the free-form parts profconv reads (user, settings) refuse a wrong type in one line, exit 2."""
    def change(doc):
        part = doc
        for k in field[:-1]:
            part = part[k]
        part[field[-1]] = value
    path = _record(tmp_path, "user-kernels-profiled-h100.json", change)
    for args in (["report", path, "--json"], ["report", "--compare", RUNS / "user-kernels-profiled-h100.json", path]):
        r = cli(*args)
        assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_ncu_settings_with_one_control_recorded(tmp_path, cli):
    """T11: settings holding clock_control alone (no cache_control): the report reads it, no KeyError."""
    def change(doc):
        doc["profile"]["ncu"]["settings"].pop("cache_control")
    path = _record(tmp_path, "user-kernels-profiled-h100.json", change)
    r = cli("report", path, "--markdown", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert "ncu ran with `--clock-control none --cache-control all`" in (tmp_path / "r.md").read_text()


def _times(value: float, only: str | None = None):
    def change(doc):
        for res in doc["results"]:
            if only is not None and res["variant"] != only:
                continue
            for c in res["conv"]:
                if c.get("op_time"):
                    c["op_time"].update(median_s=value, min_s=value, max_s=value, samples_s=[value] * 3)
    return change


@pytest.mark.parametrize("value, only", [(0.0, None), (5e-324, None), (1e308, None), (0.0, "cudnn")])
def test_report_plots_skip_times_a_log_axis_cannot_show(tmp_path, cli, value, only):
    """T10: all-zero, denormal or 1e308 Op Times (schema-valid) give a report with a warning, no traceback
    and no numpy warning on stderr; a cuDNN baseline of 0 s gives no speedup rather than inf."""
    path = _record(tmp_path, "ece408-h200.json", _times(value, only))
    for args in (["--markdown", tmp_path / "r.md"], ["--html", tmp_path / "r.html"], ["--json"]):
        r = cli("report", path, *args)
        assert r.returncode == 0, r.stderr
        assert "Warning" not in r.stderr and "RuntimeWarning" not in r.stderr and "inf" not in r.stdout.lower()
    text = (tmp_path / "r.md").read_text()
    if only is None:
        assert "No Op Time plot: no time of this record can be drawn on a log axis" in text
    else:
        assert "Op Time(s) left out of the plot" in text and "inf×" not in text
