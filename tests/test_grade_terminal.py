"""`profconv grade` in an 80-column terminal (first-contact-2, layout): each failed job's reason was
printed twice, on its progress line and under the leaderboard, both as single lines the terminal broke
mid-word. In a terminal now: the progress line is one line (the reason cut with …), the list under the
leaderboard wraps between words under its own text. A file or a pipe keeps every line whole."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

import profconv.commands.grade as grade_cmd
from tests.conftest import terminal_console

DATA = Path(__file__).parent / "data" / "grade"
REASON = "boom: the job could not find its input file anywhere on this machine at all"


@pytest.fixture
def failing(tmp_path: Path) -> list[str]:
    """Two submissions whose job exits 3 with a 74-character message on stderr, and the grade options."""
    shutil.copytree(DATA / "class", tmp_path / "class")
    job = tmp_path / "job.py"
    job.write_text(f"import sys\nprint({REASON!r}, file=sys.stderr)\nsys.exit(3)\n")
    return [str(tmp_path / "class" / "alice"), str(tmp_path / "class" / "bob"), "-m", "ece408", "--dry-run",
            "--no-pool", "--out", str(tmp_path / "g"), "--job-command", f"{{python}} {shlex.quote(str(job))}"]


def test_in_a_terminal_each_reason_is_said_once_whole_and_wrapped_between_words(cli, failing, monkeypatch):
    con = terminal_console(80)
    monkeypatch.setattr(grade_cmd, "console", lambda: con)
    assert cli("grade", *failing).returncode == 0
    lines = [line.rstrip() for line in con.file.getvalue().splitlines()]
    assert max(len(line) for line in lines) <= 80
    progress = [line for line in lines if line.startswith("[")]  # "[1/2] alice/ece408 error 0.1 s (exit 3, …"
    assert [line.split(" ")[0] for line in progress] == ["[1/2]", "[2/2]"]
    assert sorted(line.split(" ")[1:3] for line in progress) == [["alice/ece408", "error"], ["bob/ece408", "error"]]
    assert all(len(line) == 80 and line.endswith("…") and "s (exit 3, no run record: boom: the job" in line
               for line in progress)
    i = lines.index("- alice (ece408): error: exit 3, no run record: boom: the job could not find its")
    assert lines[i + 1:i + 4] == ["  input file anywhere on this machine at all",
                                  "- bob (ece408): error: exit 3, no run record: boom: the job could not find its",
                                  "  input file anywhere on this machine at all"]
    assert sum(line.count("anywhere on this machine") for line in lines) == 2  # once per job, not twice


def test_in_a_file_every_line_stays_whole(cli, failing):
    r = cli("grade", *failing)
    assert r.returncode == 0
    progress = [line for line in r.stdout.splitlines() if line.startswith("[1/2]")]
    assert len(progress) == 1 and progress[0].endswith(f"(exit 3, no run record: {REASON})")
    assert f"- alice (ece408): error: exit 3, no run record: {REASON}" in r.stdout.splitlines()
