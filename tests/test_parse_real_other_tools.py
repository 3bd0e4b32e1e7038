"""Real logs of the other tools: the legacy CUDA command-line profiler, value for value
(tests/data/cudaprof/; its output pasted into a document is in test_parse_real_pasted.py), and the files
under tests/data/foreign/ that hold no profile profconv reads: other profilers' tables (gprof, cProfile,
torch.profiler, Julia TimerOutputs, CrayPat, a library's own statistics), profiler commands, help text
and listings, program output. Each of those gives 'no profile found' in one line (exit 2), and
another profiler's tables are named. rocprof, which profconv reads, is in tests/test_parse_rocprof.py.

Each log was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path
and commit, under the batch named in the comment above its entry. The cudaprof log's values were checked
by hand against the lines they come from; tests/real_logs.py says what a case holds.
"""

from __future__ import annotations

import pytest

from tests.real_logs import Case, check_case, check_listed_once, check_no_profile, parse_text_file

# fmt: off
CASES = [
    # SOURCES.md "Batch 2"
    Case('cudaprof/dmikushin-kernelgen-sincos-tesla-c2070-cuda-profile-log.log',
         tools=('cudaprof',), rows=7, unplaced=0,
         sections={(1, 'gpu'): 3, (1, 'gpu-trace'): 4},
         tops=[(1, 'gpu', 'memcpyHtoD', 2)],
         checks=[
             (1, 'gpu', 'memcpyHtoD', 47627008.0, 2, 23813504.0),
             (1, 'gpu', 'sincos_15_gpu', 3552064.0, 1, 3552064.0),
             (1, 'gpu-trace', 6, 'memcpyHtoD', None, 23987137.0),
             (1, 'gpu-trace', 9, 'memcpyDtoH', None, 36782977.0),
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [  # (file, why it holds no profile)
    # SOURCES.md "Batch 2"
    ("foreign/codingadventures-iet-engine-nvprof-help-text-excerpt.log", "nvprof --help text"),
    ("foreign/marcogrivol-gprof-flat-profile-call-graph-excerpt.log", "GNU gprof flat profile and call graph"),
    ("foreign/srsapireddy-ncu-list-sections-table-in-cu-file.log", "ncu --list-sections table"),
    ("foreign/adityagupta1-cis5650-flocking-fps-list-dashed-headings.log", "fps list under dashed headings"),
    ("foreign/downvoteed-gpgpu-ncu-command-line-only-windows.log", "an ncu command line, no output"),
    ("foreign/lanluyuu-cuda-gemm-ncu-error-no-executable.log", "ncu ==ERROR== before running anything"),
    ("foreign/lisennlp-dc-triton-ncu-query-metrics-listing-excerpt.log", "ncu --query-metrics listing, no values"),
    ("foreign/timothygrant80-cistem-nvprof-log-app-output-only.log", "a log named nvprof.log with program output only"),
    ("foreign/wilfonba-mfc-nsys-txt-run-killed-before-report.log", "nsys run killed before any report"),
    ("foreign/oliatsm-rtx4070ti-nvc-minfo-and-app-timings-no-profiler-excerpt.md.log",
     "nvc -Minfo 'Generating ...' lines and program timings"),
    ("foreign/xinliu0609-turba-sim-gpu-trace-txt-not-a-profiler.log", "a simulator's own trace file named gpu_trace.txt"),
    # SOURCES.md "Batch 3"
    ("foreign/vipul-olcf-hw4-report-ncu-commands-no-results-windows.md.log",
     "a course report with ncu command lines and prose, no results"),
    ("foreign/oliatsm-rtx4070ti-if-full-program-timings-no-profiler.md.log",
     "a program's own per-layer timings in a fence, no profiler"),
    # SOURCES.md "Batch 4"
    ("foreign/abenich7-cpu-gpu-inference-pytorch-profiler-top-cuda-ops-no-profile.log",
     "PyTorch profiler key_averages tables (Self CUDA %, CUDA total, # of Calls): not a CUDA profiler's output"),
    ("foreign/muhammadkhan1040-pdc-julia-timeroutputs-no-eol-no-profile.log",
     "a Julia TimerOutputs table (ncalls, time, %tot under box-drawing rules), no final newline"),
    ("foreign/krzystekmatej-gpu-path-tracer-section-timings-no-profile-excerpt.log",
     "a renderer's own 'Section: …, Runs: …, Total Time: … ms, Percentage of Total Time' log lines"),
    ("foreign/josiprz-game-of-life-cprofile-windows-paths-no-profile.log",
     "Python cProfile output with Windows paths (ncalls tottime percall cumtime)"),
    # SOURCES.md "Batch 5a"
    ("foreign/b5a-olcf-openacc-workshop-2013-craypat-pipe-tables-no-profile-excerpt.log",
     "CrayPat 5.3 tables with Time% / Time / Calls cells between bars: another profiler's, not nvprof's"),
    ("foreign/b5a-owensgroup-ml-perf-model-nvprof-metric-names-list-no-profile.log",
     "a list of nvprof metric names, one a line, no values"),
    ("foreign/b5a-peak-team-pr15-kernel-statistics-pipe-table-no-profile-excerpt.md.log",
     "another tool's '| Kernel | Calls | Total(s) | Max(s) | Min(s) |' table between dashed rules"),
    # SOURCES.md "Batch 5b"
    ("foreign/b5b-chenwg2000-nanogpt-mxfp8-torch-profiler-cuda-api-names-no-profile.log",
     "torch.profiler key_averages tables whose rows are cudaLaunchKernel, cudaStreamSynchronize …"),
    ("foreign/b5b-tamerlan-cuda-course-notes-ncu-commands-only-russian-no-profile.md.log",
     "ncu command lines in Russian course notes, no output"),
    ("foreign/b5b-endlessfancy-gnx-stage-report-cpu-gpu-npu-inf-crlf-no-eol-no-profile.log",
     "a project's own CPU/GPU/NPU stage report with 'inf', CRLF, no final newline"),
    ("foreign/b5b-gpleemrijse-audalac-ncu-section-values-hand-collected-tsv-no-eol-no-profile.log",
     "ncu section values (Mem Busy, L2 Hit Rate) collected by hand into a TSV"),
    ("foreign/b5b-sergasgr-codealign-readme-ncu-no-metrics-then-device-unsupported-spanish-no-profile.md.log",
     "ncu collected no metrics, then 'Profiling is not supported on device 0'"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_other_tool_log(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_other_tool_log_holds_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line


def test_other_tool_logs_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes


@pytest.mark.parametrize(("path", "what"), [
    ("foreign/b5b-chenwg2000-nanogpt-mxfp8-torch-profiler-cuda-api-names-no-profile.log",
     "PyTorch profiler output (key_averages().table())"),
    ("foreign/abenich7-cpu-gpu-inference-pytorch-profiler-top-cuda-ops-no-profile.log",
     "PyTorch profiler output (key_averages().table())"),
    ("foreign/marcogrivol-gprof-flat-profile-call-graph-excerpt.log", "gprof's CPU profile"),
    ("foreign/josiprz-game-of-life-cprofile-windows-paths-no-profile.log", "Python cProfile's CPU profile"),
    ("foreign/muhammadkhan1040-pdc-julia-timeroutputs-no-eol-no-profile.log", "Julia TimerOutputs timings"),
])
def test_another_profilers_tables_are_named(path, what, cli):
    """Another profiler's tables (torch.profiler, gprof, cProfile, TimerOutputs; CUDA.jl below; rocprof
    is read since issue 23: tests/test_parse_rocprof.py) give 'no profile found' in one line that says
    what they are and what to run instead. Before: only 'no profiler output … found', though a
    torch.profiler table lists cudaLaunchKernel."""
    line = check_no_profile(path, cli)
    assert f"found: the tables are {what}, which profconv does not read (" in line


@pytest.mark.parametrize(("text", "what"), [
    ("Profiler ran for 10.0 ms, capturing 13651 events.\n\nHost-side activity: calling CUDA APIs took 7.28 ms "
     "(72.74% of the trace)\n│   18.28% │    1.83 ms │   525 │ cuLaunchKernel │\n", "CUDA.jl's profiler output"),
])
def test_amd_and_julia_profiler_tables_are_named(tmp_path, text, what):
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, text)
    assert f"the tables are {what}" in str(e.value) and "\n" not in str(e.value)
