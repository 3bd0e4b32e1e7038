"""What a newcomer tripped on (../shared/findings/first-contact-2.md, the M/m items and polish that are not
tested elsewhere): a CPU-only report that describes CPU timing, says no GPU rung ran and lists the skipped
kernel; the forward pass explained; messages without doubled words or nested parentheses; hints for a case
typo, a manifest key typo and a piped stdin. (M1/M2/m6/m17: test_compare_untestable.py; m1/m2/m14:
test_session.py; m5: test_cli_text.py; m7/m8: test_parse_nsys_names_and_merges.py; m16: below.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "examples" / "device-tiled"


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """One CPU-only run with a user kernel (skipped without CUDA), as the README's kernel workflow does."""
    from conftest import run_cli

    out = tmp_path_factory.mktemp("run") / "k1"
    r = run_cli("run", "-m", "ece408", "-n", "10,20", "--variant", "cpu,naive", "-k", KERNEL, "--cpu-repeat", "2",
                "--out", out, "--width", "100")
    return r, out


@pytest.mark.nogpu
def test_cpu_only_report_describes_cpu_timing_and_no_empty_ladder(cpu_run, cli, tmp_path):
    """m3: no 'CUDA events' for a run timed with perf_counter; m4: 'No GPU rungs ran', not a header-only table."""
    r, out = cpu_run
    assert r.returncode == 0, r.stderr
    cli("report", out, "--markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    assert "CUDA events" not in md
    assert "timing: CPU reference: median of 2 pass(es) over every image (perf_counter)" in md
    assert "(perf_counter around each pass over every image, chunk by chunk)" in md
    assert "No GPU rungs ran (4 skipped: needs CUDA and CuPy): the ladder compares the GPU variants." in md
    assert "| rung |" not in md
    assert "GPU: none — CuPy" in md or "GPU: none — " in md  # no nested parentheses


@pytest.mark.nogpu
def test_skipped_user_kernel_is_in_the_report(cpu_run, cli, tmp_path):
    """m9: `run -k my_conv` on a CPU machine: the kernel is named in the report with its contract."""
    _, out = cpu_run
    cli("report", out, "--html", tmp_path / "r.html")
    cli("report", out, "--markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    assert ("- `tiled` (your kernel, device contract, `examples/device-tiled/conv_tiled.cu`), 10 images: skipped — "
            "needs CUDA and CuPy; its manifest and contract were checked") in md.replace(str(ROOT) + "/", "")
    assert "- `naive`: skipped — needs CUDA and CuPy" in md
    assert "your kernel, device contract" in (tmp_path / "r.html").read_text()


@pytest.mark.nogpu
def test_run_output_wording(cpu_run):
    """Polish: one-line messages without nested parentheses or a plural verb for one kernel; the forward
    pass's conv explained next to the table (m13); Correctness names its image count."""
    r, _ = cpu_run
    text = " ".join(r.stdout.split())
    assert "GPU variants skipped: they need CUDA and CuPy — CuPy is not installed" in text
    assert "((" not in text and "'[cuda12]'))" not in text
    assert "your kernel skipped: tiled needs CUDA and CuPy; recorded as skipped." in text
    assert "its Correctness cannot be compared with the course's published accuracy" in text
    assert "conv inside the whole net (one pass on the CPU): Op Time is the conv alone, repeated" in text
    assert "Correctness: 0.8 Model: ece408 (10 images, cpu)" in text


@pytest.mark.nogpu
def test_a_cpu_run_says_nothing_about_gpu_variants_it_was_not_asked_for(cli, tmp_path):
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "--out", tmp_path)
    assert r.returncode == 0 and "GPU variants skipped" not in r.stdout


def test_report_forward_pass_is_explained(cli, tmp_path):
    """m13: Op Time and the forward pass's conv differ; the report says why (numbers in notes/hostile.md)."""
    cli("report", ROOT / "tests" / "data" / "runs" / "ece408-h200.json", "--markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    assert "Its conv column is measured inside the net, so it differs from the sum of the Op Times" in md
    assert "Correctness (10,000 images): " in md


def test_interrupted_run_prints_what_had_finished(cli, tmp_path, monkeypatch):
    """Polish: Ctrl-C printed none of the results that had finished (the record was kept)."""
    from profconv.errors import Interrupted
    from profconv.records import load
    from profconv.session import run as run_session

    record = load(ROOT / "tests" / "data" / "runs" / "ece408-h200.json")
    record.results = record.results[:2]

    def interrupted(self):
        raise Interrupted(f"interrupted: partial record in {tmp_path / 'run.json'}", record, tmp_path / "run.json")

    monkeypatch.setattr(run_session.RunSession, "run", interrupted)
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--out", tmp_path / "x", "--width", "100")
    assert r.returncode == 130
    assert "ece408: Op Time per conv layer" in r.stdout and "naive" in r.stdout
    assert " ".join(r.stdout.split()).endswith(f"interrupted: partial record in {tmp_path / 'run.json'}")


@pytest.mark.parametrize("args, message", [
    (["run", "-m", "ECE408"], "unknown model 'ECE408' (did you mean 'ece408'? model names are lower case)"),
    (["parse", "nothere.log"], "nothere.log"),
])
def test_suggestions_and_single_names(cli, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    r = cli(*args)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("nothere.log") <= 1


def test_manifest_key_typo_and_empty_folder(cli, tmp_path):
    k = tmp_path / "k"
    k.mkdir()
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "-k", k, "--out", tmp_path / "o")
    said = " ".join((r.stdout + r.stderr).split())  # a kernel refused: FAILED alone (exit 1) or the run (exit 2)
    assert r.returncode in (1, 2) and "no kernel file (.cu, .cuh or .py) and no profconv.toml in this folder" in said
    (k / "k.cu").write_text((ROOT / "examples" / "host-constant" / "conv_host.cu").read_text())  # no header manifest
    (k / "k.toml").write_text('grd = ["1"]\n')
    r = cli("run", "-m", "ece408", "-n", "4", "--variant", "cpu", "--cpu-repeat", "1", "-k", k / "k.cu",
            "--out", tmp_path / "o2")
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode in (1, 2) and "unknown key(s) grd (did you mean 'grid'?)" in said


def test_grade_missing_submission_names_it_once(cli, tmp_path):
    r = cli("grade", tmp_path / "nothere", "--plan", "-m", "ece408", "--out", tmp_path / "g")
    assert r.returncode == 2 and r.stderr.count("nothere") == 1


def test_unwritable_html_path_names_the_file_asked_for(cli, tmp_path):
    """Polish: an unwritable --html path showed the name of a temporary file beside it."""
    import os

    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    r = cli("report", ROOT / "tests" / "data" / "runs" / "ece408-h200.json", "--html", d / "r.html")
    assert r.returncode == 5 and str(d / "r.html") in r.stderr and ".r.html." not in r.stderr


def test_write_atomic_error_names_the_target(tmp_path, monkeypatch):
    import tempfile

    from profconv.io import write_atomic

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".r.html.abc123"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError) as info:
        write_atomic(tmp_path / "r.html", "x")
    assert info.value.filename == str(tmp_path / "r.html")


def test_unplaced_line_count_reads_as_one_line(cli, tmp_path):
    log = tmp_path / "x.log"
    log.write_text("==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n"
                   " GPU activities: 100.00% 1ms 1 1ms 1ms 1ms k\n 12.5% 1ms\n")
    cli("report", log, "--markdown", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    if "could not be placed" in md:
        assert "1 line looked like table data but could not be placed: line 4" in md


def test_readme_prose_is_no_saved_report(cli, tmp_path):
    """m11: `profconv parse README.md` diagnosed 'Nsight Compute saved its results in x.ncu-rep'."""
    doc = tmp_path / "notes.md"
    doc.write_text("A run that saved its results to a file (`==PROF== Report: x.ncu-rep`, `==1== Generated result "
                   "file: a.nvvp`) says so.\n")
    r = cli("parse", doc)
    assert r.returncode == 2 and "saved its results" not in r.stderr and "no profiler output" in r.stderr
    r = cli("parse", "-", input="==PROF== Connected to process 1\n==PROF== Report: /tmp/x.ncu-rep\n")
    assert "Nsight Compute saved its results in /tmp/x.ncu-rep" in r.stderr


def test_piped_stdin_without_dash_says_to_write_dash(cli):
    """m12: `cat log | profconv parse` said only "Missing argument 'FILE'"."""
    r = cli("parse", input="==1== Profiling result:\n")
    assert r.returncode == 2 and "write - to read standard input (`... | profconv parse -`)" in r.stderr


def test_plot_legend_labels_differ():
    """m16: four cuDNN kernels read "sm80_xmma_fprop_impl...xecute_kernel__5x_cudnn" in the legend."""
    from profconv.render.plots import legend_labels

    names = [f"sm80_xmma_fprop_implicit_gemm_{v}_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
             "warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn" for v in ("indexed_wo_smem", "indexed",
                                                                                  "wo_smem", "plain")]
    labels = legend_labels(names)
    assert len(set(labels)) == 4 and all(len(label) <= 44 for label in labels)
    assert legend_labels(["short", "k"]) == ["short", "k"]


def test_leaderboard_reason_with_backticks_renders_as_one_code_span():
    """m10: a reason holding backticks broke the HTML leaderboard's code span."""
    from profconv.render.html import inline
    from profconv.render.markdown import code

    assert inline(code("use `-O3` here")) == "<code>use `-O3` here</code>"


def test_models_json_is_machine_readable(cli):
    doc = json.loads(cli("models", "--json").stdout)
    assert {m["name"] for m in doc["models"]} >= {"ece408", "ece408-high", "cifar10"}


def test_many_profiles_in_a_terminal_get_a_hint_first():
    """m15: 3,000 profiles scrolled for 50 s in a terminal with no word on --profile N or --json."""
    from conftest import terminal_console

    from profconv import parse_text
    from profconv.render.profile_tables import TableOptions, render

    one = ("==1== Profiling result:\n Type Time(%) Time Calls Avg Min Max Name\n"
           " GPU activities: 100.00% 1ms 1 1ms 1ms 1ms k\n")
    ps = parse_text(one * 60)
    con = terminal_console(100)
    render(ps, con, TableOptions())
    first = con.file.getvalue().splitlines()[0]
    assert "profiles in <text>: every one follows; `--profile N` shows one, `--json` or `--csv`" in first
    small = terminal_console(100)
    render(parse_text(one * 3), small, TableOptions())
    assert "every one follows" not in small.file.getvalue()
