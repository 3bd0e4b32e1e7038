"""benchmarks/grade_class.py compare: grade's verdicts against `profconv run --kernel`'s, file by file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("grade_class", Path(__file__).parents[1] / "benchmarks" / "grade_class.py")
grade_class = importlib.util.module_from_spec(spec)
spec.loader.exec_module(grade_class)

GRADE = [
    "/work/a/.gpu/data/grade/001-x/new-forward.cu\tok\tNone\t\t0.4928\t[5.8, 44.4]",
    "/work/a/.gpu/data/grade/006-y/new-forward.cu\tfailed\tminidnn.work-in-timed-call\t8 kernel launch(es)\t0.4928\t[0.0]",
    "/tmp/g8/ours/ex-host-constant/conv_host.cu\tok\tNone\t\t0.4928\t[5.1, 20.0]",
]
RUN = [
    "/root/b/.gpu/data/grade/001-x/new-forward.cu\tok\tNone\t\t0.4928",
    "/root/b/.gpu/data/grade/006-y/new-forward.cu\tfailed\tprofconv.ran\tcudaErrorInvalidAddressSpace\tNone",
]


def _write(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_files_compare_by_their_path_from_the_data_folder_on(tmp_path, capsys):
    rc = grade_class.compare(_write(tmp_path, "g.tsv", GRADE), _write(tmp_path, "r.tsv", RUN))
    out = capsys.readouterr().out.splitlines()
    assert rc == 1
    assert out[0] == "DIFFERS grade/006-y/new-forward.cu"
    assert out[3] == "not run: ours/ex-host-constant/conv_host.cu"
    assert out[-1] == ("1 of 2 identical (verdict, rule, Correctness; 2 real course files among the 2), 1 differ, "
                       "1 graded but not run")


def test_identical_verdicts_exit_0_and_nothing_compared_is_not_a_pass(tmp_path, capsys):
    same = _write(tmp_path, "r.tsv", RUN[:1])
    assert grade_class.compare(_write(tmp_path, "g.tsv", GRADE[:1]), same) == 0
    assert capsys.readouterr().out.endswith("1 of 1 identical (verdict, rule, Correctness; 1 real course files among "
                                            "the 1), 0 differ, 0 graded but not run\n")
    assert grade_class.compare(_write(tmp_path, "e.tsv", []), same) == 1


def test_a_file_that_is_not_a_verdicts_file_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"x.tsv: line\(s\) 1 hold fewer than five columns: not a verdicts file"):
        grade_class.compare(_write(tmp_path, "x.tsv", ["a\tb"]), _write(tmp_path, "r.tsv", RUN))
