"""The leaderboard's verdict columns: the rule that decided each submission, the optimisations seen, the
work outside the timed call, the warnings of the ok ones (grade/leaderboard.py, render/leaderboard.py)."""

from __future__ import annotations

import msgspec

from profconv import judge
from profconv.grade import leaderboard
from profconv.judge.assemble import apply
from profconv.render import leaderboard as render
from tests.test_attribution import COPY_IN, COPY_OUT, KERNEL, Trace, course_call
from tests.test_grade import _record, _result
from tests.test_judge_apply import result


def _judged_record(prolog_kernel: bool) -> dict:
    tr = Trace()
    for layer in ("conv1", "conv2"):
        course_call(tr, f"m/mine/{layer}", prolog=(*COPY_IN, *((KERNEL,) if prolog_kernel else ())),
                    timed=() if prolog_kernel else (KERNEL,), epilog=COPY_OUT)
    res = apply(result(), judge.load("sp25"), records=tr.records())
    rec = _record([0.001, 0.003], status=res.status)
    rec["results"][2]["verdict"] = msgspec.to_builtins(res.verdict)
    rec["results"][2]["error"] = res.error
    return rec


def test_job_rows_carry_the_verdicts_rule_and_what_ran_where():
    rows = leaderboard.job_rows(_result("cheat"), _judged_record(True), builtin={"cudnn"})
    assert {(r["verdict"], r["rule"], r["course"], r["outside"]) for r in rows} == {
        ("FAILED", "sp25.work-in-timed-call", "sp25", "prolog: 1 kernel (conv_forward_kernel)")}
    assert rows[0]["reason"] == "1 kernel launch(es) in the prolog: conv_forward_kernel [sp25.work-in-timed-call]"
    ok = leaderboard.job_rows(_result("honest"), _judged_record(False), builtin={"cudnn"})
    assert {(r["verdict"], r["rule"], r["outside"], r["optimisations"]) for r in ok} == {("ok", None, "—", "—")}
    plain = leaderboard.job_rows(_result("old"), _record([0.001, 0.003]), builtin={"cudnn"})
    assert {r["rule"] for r in plain} == {None}  # a record from before the judge: the columns stay empty


def test_the_board_and_its_markdown_show_the_rule_and_the_work_outside():
    results = [_result("cheat"), _result("honest")]
    records = {"cheat": _judged_record(True), "honest": _judged_record(False)}
    rows = [row for res in results for row in leaderboard.job_rows(res, records[res.submission], builtin={"cudnn"})]
    import pandas as pd

    lay = pd.DataFrame(rows, columns=[c for c in leaderboard.LAYER_COLUMNS if c not in ("vs_cudnn", "vs_median")])
    lay["vs_cudnn"] = lay["vs_median"] = float("nan")
    b = leaderboard.board(lay)
    assert list(b["submission"]) == ["honest", "cheat"]
    assert [r if isinstance(r, str) else None for r in b["rule"]] == [None, "sp25.work-in-timed-call"]
    md = render.markdown(b, "board")
    assert "| verdict | rule | optimisations | outside the timed call |" in md
    assert "| FAILED | sp25.work-in-timed-call | — | prolog: 1 kernel (conv_forward_kernel) |" in md
    assert ("- cheat (m): FAILED: 1 kernel launch(es) in the prolog: conv_forward_kernel [sp25.work-in-timed-call]"
            in md)


def test_grade_passes_course_to_each_run_and_refuses_an_unknown_term(cli, tmp_path):
    from profconv.grade.jobs import JobSpec, build_command

    spec = JobSpec(submission="a", path="/s/a", digest="d", model="ece408-fa20", out_dir="/o/a", course="sp25")
    argv = build_command(spec, "python3")
    assert argv[-2:] == ["--course", "sp25"]
    assert spec.fingerprint() != JobSpec(submission="a", path="/s/a", digest="d", model="ece408-fa20",
                                         out_dir="/o/a").fingerprint()
    k = tmp_path / "k.cu"
    k.write_text("__global__ void k() {}\n")
    r = cli("grade", str(k), "--course", "sp99", "--out", str(tmp_path / "g"), "--dry-run")
    assert r.returncode == 2 and "--course 'sp99': no such rule set" in r.stderr
