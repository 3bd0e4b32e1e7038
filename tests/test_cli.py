"""The CLI as a user types it: tables, JSON/CSV, and one-line errors with exit code 2."""

import gzip
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from profconv.cli import app

SEED = "tests/data/seeds/002_b0bcac5cefbf4480.log"
runner = CliRunner()


def cli(*args, input=None):
    """Run `python -m profconv` as a process: exit codes and stderr exactly as a user sees them."""
    return subprocess.run([sys.executable, "-m", "profconv", *args], capture_output=True, text=True,
                          input=input, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def test_parse_seed_shows_ranked_tables():
    r = cli("parse", SEED)
    assert r.returncode == 0, r.stderr
    assert "Profile 2 · nvprof" in r.stdout
    assert "Op Time: 0.355486 s, 0.652564 s" in r.stdout
    assert "Correctness: 0.8451 Model: ece408" in r.stdout
    assert "1 of 14 GPU activities take 89.8% of GPU time" not in r.stdout
    assert "2 of 14 GPU activities take 92.4% of GPU time" in r.stdout
    assert "mxnet::op::forward_kernel" in r.stdout


def test_parse_json_and_profile_selection():
    r = cli("parse", SEED, "--json", "--profile", "2")
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1
    assert {row["profile"] for row in doc["rows"]} == {2}
    top = max((row for row in doc["rows"] if row["section"] == "gpu"), key=lambda row: row["total_ns"])
    assert top["name"] == "mxnet::op::forward_kernel" and top["calls"] == 2
    assert top["total_ns"] == pytest.approx(1.00787e9)


def test_parse_csv_stdin_and_gzip(tmp_path):
    text = open("tests/data/nvprof-old/howardjchen-sparse-cnn-coo.log").read()
    r = cli("parse", "-", "--csv", input=text)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith("source,profile,tool,section,name")
    assert len(lines) == 1 + 16
    gz = tmp_path / "log.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    r2 = cli("parse", str(gz), "--csv")
    assert r2.stdout.splitlines()[1:] == [ln.replace("<stdin>", str(gz), 1) for ln in lines[1:]]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty input"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"hello world\nno profiler here\n", "no profiler output"),
        (b"\x1f\x8b\x08broken gzip", "corrupt gzip"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, content, message):
    f = tmp_path / "in.log"
    f.write_bytes(content)
    r = cli("parse", str(f))
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_missing_file_and_bad_options():
    r = cli("parse", "does/not/exist.log")
    assert r.returncode == 2 and "no such file" in r.stderr
    r = cli("parse", SEED, "--profile", "99")
    assert r.returncode == 2 and "no profile 99 (it holds 6)" in r.stderr
    r = cli("parse", SEED, "--threshold", "1.5")
    assert r.returncode == 2 and "--threshold" in r.stderr


def test_strict_mode_fails_on_unplaced_rows(tmp_path):
    f = tmp_path / "damaged.log"
    f.write_text(
        "==1== Profiling result:\n"
        "Time(%)      Time     Calls       Avg       Min       Max  Name\n"
        " 90.00%  9.0000ms         1  9.0000ms  9.0000ms  9.0000ms  kernelA\n"
        " garbled 1.0000ms 1.0000ms kernelB\n"
    )
    r = cli("parse", str(f))
    assert r.returncode == 0 and "1 line(s) look like table data but could not be placed: lines 4" in r.stdout
    assert "Time(%) adds up to 90.00%" in r.stdout
    r = cli("parse", str(f), "--strict")
    assert r.returncode == 2 and "could not be placed (lines 4)" in r.stderr


def test_format_forced():
    r = cli("parse", SEED, "--format", "nsys")
    assert r.returncode == 2 and "no nsys profile found" in r.stderr


def test_help_lists_only_real_commands():
    r = runner.invoke(app, ["--help"])
    assert r.exit_code == 0
    for cmd in ("parse", "run", "models"):
        assert cmd in r.output
