"""Batch 5b of the real corpus (issue 12, session 5): Nsight Systems / Nsight Compute output of many
versions and other profilers' text, with exact values, and the classes of failure they revealed.

Each file listed in SOURCES.md "Batch 5b" was copied from the text the search tool's read_file
returned (repository, path and commit there; whole files checked against the index's length).
Values were checked by hand against the lines they come from (see test_parse_corpus_more.py for
what a Case holds). Below the files: synthetic tests of each class, so the fix holds for the class.
"""

from __future__ import annotations

import pandas as pd
import pytest

from profconv.parse import units
from tests.test_parse_corpus_more import Case, check_case, check_listed_once, check_no_profile, parse_text_file

_COMMENT_NOTE = "1 row(s) end with a comment"

# fmt: off
CASES = [
    Case('ncu-text/b5b-ishana23g-heat-eq-ncu2025-cc8.9-workload-distribution-opt-separators-tail-excerpt.log',
         tools=('ncu',), rows=82, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'ncu-metric'): 80},
         tops=[(1, 'gpu', 'heat_to_color_kernel_2d(float *, uchar4 *, int, int)', 1)],
         checks=[
             (1, 'gpu', 'heat_to_color_kernel_2d', 30180.0, 1, 30180.0),  # Duration 30.18 us
             (1, 'gpu', 'add_heat_kernel_2d', 1540.0, 1, 1540.0),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'Threads', 'thread', 1048576.0, None),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'SM Active Cycles', 'cycle', 63656.74, None),
             (1, 'ncu-metric', 'heat_to_color_kernel_2d', 'Function Cache Configuration', None, None, 'CachePreferNone'),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Total SMSP Elapsed Cycles', 'cycle', 478536.0, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Achieved Occupancy', '%', 15.10, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Waves Per SM', None, 0.05, None),
             (1, 'ncu-metric', 'add_heat_kernel_2d', 'Driver Shared Memory Per Block', 'Kbyte/block', 1.02, None),
         ],
         notes=[]),
    Case('nsys-text/b5b-hthuz-ece408-nsys2019.5.2-fp16-row-split-in-name-padding.log',
         tools=('nsys',), rows=37, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 25},
         tops=[(1, 'api', 'cudaMemcpy', 2), (1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'os-runtime', 'sem_timedwait', 4)],
         checks=[
             (1, 'api', 'cudaMemcpy', 581196667.0, 20, 29059833.4),
             (1, 'gpu', 'conv_forward_kernel', 52171241.0, 6, 8695206.8),
             (1, 'gpu', '[CUDA memcpy HtoD]', 45979929.0, 14, 3284280.6),
             (1, 'os-runtime', 'pthread_cond_wait', 16532313239.0, 2, 8266156619.5),
             (1, 'os-runtime', 'open', 29371.0, 5, 5874.2),  # the row broken inside its name padding
             (1, 'os-runtime', 'pipe2', 22798.0, 1, 22798.0),
             (1, 'os-runtime', 'listen', 1320.0, 1, 1320.0),
         ],
         notes=['profile 1, gpu table, lines 115-125: merged from 2 source tables']),
    Case('nsys-text/b5b-vinaatty-mnist-cudnn-korean-report-nsys2025-mem-time-and-size-mb-excerpt.md.log',
         tools=('nsys',), rows=8, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-memory-size'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy Device-to-Device]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy Device-to-Device]', 444289.0, 360, 1234.1),
             (1, 'gpu', '[CUDA memcpy Host-to-Device]', 443137.0, 196, 2260.9),
             (1, 'gpu', '[CUDA memset]', 7136.0, 4, 1784.0),
         ],
         notes=[]),
    Case('pasted/b5b-yktian-ai4materials-readme-nsys2020-legacy-tables-tilde-fence-names-cut-at-333-no-eol.md.log',
         tools=('nsys',), rows=84, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 30, (1, 'gpu-memory-size'): 3, (1, 'os-runtime'): 38},
         tops=[(1, 'api', 'cudaMalloc', 4), (1, 'gpu', '[CUDA memcpy HtoD]', 14), (1, 'os-runtime', 'usleep', 4)],
         checks=[
             (1, 'api', 'cudaMalloc', 1709124966.0, 195, 8764743.4),
             (1, 'api', 'cuInit', 3200.0, 3, 1066.7),
             (1, 'gpu', 'void phi::BNForwardInference<float, (common::DataLayout)2>', 58366.0, 6, 9727.7),
             (1, 'gpu', 'void cub::DeviceReduceSingleTileKernel<', 3968.0, 3, 1322.7),
             (1, 'gpu', 'void phi::funcs::VectorizedElementwiseKernel<float, phi::CudaAbsFunctor<float, void>',
              1119.0, 1, 1119.0),
             (1, 'gpu', '[CUDA memcpy DtoD]', 58141.0, 56, 1038.2),
             (1, 'os-runtime', 'usleep', 5009774690.0, 6, 834962448.3),
             (1, 'os-runtime', 'signal', 1280.0, 1, 1280.0),  # its padding cut to one space
         ],
         notes=['profile 1, gpu table, lines 30-67: merged from 2 source tables']),
    Case('pasted/b5b-nvidia-cutlass-issue2810-cutedsl-python-ncu-metrics-cc11-frequency-warning.md.log',
         tools=('ncu', 'ncu'), rows=18, unplaced=0,
         sections={(1, 'ncu-metric'): 9, (2, 'ncu-metric'): 9},
         tops=[],
         checks=[
             (1, 'ncu-metric', 'kernel_cutlass_kernel___main__TensorOpGemm',
              'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum', None, 4416.0, None),
             (1, 'ncu-metric', 'kernel_cutlass_kernel___main__TensorOpGemm',
              'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum', None, 0.0, None),
             (2, 'ncu-metric', 'kernel_cutlass_kernel___main__TensorOpGemm',
              'l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum', None, 6508.0, None),
             (2, 'ncu-metric', 'kernel_cutlass_kernel___main__TensorOpGemm',
              'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.avg', None, 0.60, None),
             (2, 'ncu-metric', 'kernel_cutlass_kernel___main__TensorOpGemm',
              'l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.max', None, 12.0, None),
         ],
         notes=[]),
    Case('nsys-text/b5b-mbm6448-concurrent-streams-readme-nsys2021-stats-titles-report-moved.md.log',
         tools=('nsys',), rows=45, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 3, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 27},
         tops=[(1, 'api', 'cudaEventCreate', 4), (1, 'gpu', 'decrypt_gpu(unsigned long*, unsigned long, unsigned long)', 3),
               (1, 'os-runtime', 'poll', 3)],
         checks=[
             (1, 'api', 'cudaEventCreate', 315416188.0, 2, 157708094.0),
             (1, 'api', 'cudaEventDestroy', 5118.0, 2, 2559.0),
             (1, 'gpu', 'decrypt_gpu(unsigned long*, unsigned long, unsigned long)', 134096353.0, 8, 16762044.1),
             (1, 'gpu', '[CUDA memcpy DtoH]', 48880683.0, 8, 6110085.4),
             (1, 'os-runtime', 'pthread_mutex_trylock', 1117.0, 1, 1117.0),
         ],
         notes=['profile 1, gpu table, lines 48-57: merged from 2 source tables']),
    Case('nsys-text/b5b-mnicely-transfer-examples-readme-nsys2021-grouped-nvtx-pushpop-crlf.md.log',
         tools=('nsys',), rows=28, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 4, (1, 'gpu-memory-size'): 2, (1, 'nvtx'): 9},
         tops=[(1, 'api', 'cudaStreamSynchronize', 1), (1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'nvtx', 'Process_Loop', 3)],
         checks=[
             (1, 'api', 'cudaStreamSynchronize', 7935281846.0, 30, 264509394.9),
             (1, 'gpu', 'void VectorOperation<Add<float>, float>(int, float, float*, Add<float>)', 67362653.0, 15, 4490843.5),
             (1, 'gpu', '[CUDA memcpy HtoD]', 5142402501.0, 30, 171413416.7),
             (1, 'nvtx', 'Process_Loop', 3889587729.0, 5, 777917545.8),
             (1, 'nvtx', 'D2H_B', 14849.0, 5, 2969.8),
         ],
         notes=['profile 1, gpu table, lines 91-101: merged from 2 source tables']),
    Case('nsys-text/b5b-qiyueliuhuo-cuda-course-zh-nsys2025-rows-annotated-with-hash-comments-excerpt.md.log',
         tools=('nsys',), rows=42, unplaced=0,
         sections={(1, 'api'): 6, (1, 'gpu'): 3, (1, 'gpu-memory-size'): 2, (1, 'nvtx'): 6, (1, 'os-runtime'): 25},
         tops=[(1, 'api', 'cudaMalloc', 1), (1, 'gpu', 'matrixMulKernel(...)', 3), (1, 'nvtx', ':Matrix Multiplication', 2),
               (1, 'os-runtime', 'poll', 2)],
         checks=[
             (1, 'nvtx', ':Memory Allocation', 323408432.0, 1, 323408432.0),
             (1, 'os-runtime', 'pthread_cond_broadcast', 1290.0, 1, 1290.0),  # one blank before its '#'
             (1, 'api', 'cuModuleGetLoadingMode', 677.0, 1, 677.0),
             (1, 'api', 'cudaDeviceSynchronize', 2645612.0, 1, 2645612.0),
             (1, 'gpu', 'matrixMulKernel(...)', 2644050.0, 1, 2644050.0),
             (1, 'gpu', '[CUDA memcpy Host-to-Device]', 1154050.0, 2, 577025.0),
         ],
         notes=['lines 112-116: nsys report cuda_memcpy_sync (an `nsys analyze` rule',
                'lines 135-137: nsys report cuda_api_sync (an `nsys analyze` rule',
                'lines 160-162: nsys report gpu_time_util (an `nsys analyze` rule',
                'profile 1, nvtx table, lines 20-25: 6 row(s) end with a comment',
                'profile 1, os-runtime table, lines 31-55: 25 row(s) end with a comment',
                'profile 1, api table, lines 61-66: 6 row(s) end with a comment',
                'profile 1, gpu table, lines 72-72: ' + _COMMENT_NOTE,
                'profile 1, gpu table, lines 78-79: 2 row(s) end with a comment',
                'profile 1, gpu table, lines 72-79: merged from 2 source tables',
                'profile 1, gpu-memory-size table, lines 85-86: 2 row(s) end with a comment']),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [
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
def test_corpus5b_file(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_corpus5b_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line


def test_corpus5b_files_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


def test_corpus5b_sizes_and_crlf_kept():
    """The size tables' bytes (MB are 10^6 bytes, KiB 1024) and the CRLF file read like an LF one."""
    f = parse_text_file_frame("nsys-text/b5b-vinaatty-mnist-cudnn-korean-report-nsys2025-mem-time-and-size-mb-excerpt.md.log")
    sizes = f[f["section"] == "gpu-memory-size"].set_index("name")["bytes"]
    assert sizes.to_dict() == {"[CUDA memcpy Host-to-Device]": 3821000.0, "[CUDA memcpy Device-to-Device]": 275000.0,
                               "[CUDA memset]": 52000.0, "[CUDA memcpy Device-to-Host]": 5000.0}
    f = parse_text_file_frame("nsys-text/b5b-mnicely-transfer-examples-readme-nsys2021-grouped-nvtx-pushpop-crlf.md.log")
    assert list(f[f["section"] == "gpu-memory-size"]["bytes"]) == [32212254720.0, 32212254720.0]  # 31,457,280.000 KiB
    f = parse_text_file_frame("nsys-text/b5b-hthuz-ece408-nsys2019.5.2-fp16-row-split-in-name-padding.log")
    assert list(f[f["section"] == "gpu-memory-size"]["bytes"]) == [862672.0 * 1024, 276206.0 * 1024]


def parse_text_file_frame(path: str) -> pd.DataFrame:
    import profconv

    return profconv.parse("tests/data/" + path).frame


# ---------------------------------------------------------------- classes

ANNOTATED = """[5/8] Executing 'cuda_api_sum' stats report  # CUDA API summary

 Time (%)  Total Time (ns)  Num Calls    Avg (ns)    Med (ns)   Min (ns)   Max (ns)   StdDev (ns)          Name
 --------  ---------------  ---------  ----------  ----------  --------  ----------  -----------  ----------------------
     90.0          900,000          3   300,000.0   300,000.0   300,000     300,000          0.0  cudaMalloc            # first
     10.0          100,000          1   100,000.0   100,000.0   100,000     100,000          0.0  cudaDeviceSynchronize # waits

[3/8] Executing 'nvtx_sum' stats report

 Time (%)  Total Time (ns)  Instances   Avg (ns)    Med (ns)   Min (ns)   Max (ns)   StdDev (ns)   Style        Range
 --------  ---------------  ---------  ----------  ----------  --------  ----------  -----------  -------  ---------------
     60.0          600,000          1   600,000.0   600,000.0   600,000     600,000          0.0  PushPop  step # 1
     40.0          400,000          1   400,000.0   400,000.0   400,000     400,000          0.0  PushPop  load  # the input
"""


def test_nsys_rows_with_comments_after_a_hash(tmp_path):
    """Pasted nsys tables whose author appended a comment to each row ('cudaMalloc   # …', a course
    translation): the comment is not part of the name, and a note next to the table says so. An NVTX
    range may hold a '#' ('step # 1'): there only a '#' two blanks after the name or past the
    column starts a comment. Before: every name carried its comment ('cudaMalloc   # the first …')."""
    ps = parse_text_file(tmp_path, ANNOTATED)
    f = ps.frame
    assert list(zip(f["section"], f["name"], f["total_ns"])) == [
        ("api", "cudaMalloc", 900000.0), ("api", "cudaDeviceSynchronize", 100000.0),
        ("nvtx", "step # 1", 600000.0), ("nvtx", "load", 400000.0)]
    assert [n.split(": ", 1)[1] for n in ps.notes] == [
        "2 row(s) end with a comment after ' # ' (added to the pasted table): read as a comment, not as part of the name",
        "1 row(s) end with a comment after ' # ' (added to the pasted table): read as a comment, not as part of the name"]
    assert ps.unplaced == []


SIZE_MB = """[8/8] Executing 'cuda_gpu_mem_size_sum' stats report

 Total (MB)  Count  Avg (MB)  Med (MB)  Min (MB)  Max (MB)  StdDev (MB)           Operation
 ----------  -----  --------  --------  --------  --------  -----------  ----------------------------
      8.389      2     4.194     4.194     4.194     4.194        0.000  [CUDA memcpy Host-to-Device]
      4.194      1     4.194     4.194     4.194     4.194        0.000  [CUDA memcpy Device-to-Host]
"""


def test_size_table_decimal_mark_read_from_every_column(tmp_path):
    """A memory-size table keeps only its Total, but every column tells the decimal mark: '0.000'
    (StdDev) cannot be a thousands group, so '8.389' MB is 8,389,000 bytes. Before: the Totals alone
    ('8.389', '4.194') read either way, the table was called ambiguous and its sizes left empty."""
    ps = parse_text_file(tmp_path, SIZE_MB)
    assert list(ps.frame["bytes"]) == [8389000.0, 4194000.0]
    assert ps.notes == []


def test_a_number_whose_head_is_longer_than_a_group_is_not_grouped(tmp_path):
    """'524288.000' or '1454.730' cannot be thousands grouping (a group head has 1-3 digits): the
    mark is the decimal one, so such a table is not called ambiguous ('1.234' still is, when no cell
    decides). Before: a KiB table whose numbers all end in '.000' got the note that its cells were
    left empty, though none was."""
    assert units.decide_locale(["524288.000", "65536.000"]) == units.C_LOCALE
    assert units.decide_locale(["1454,730"]) == units.COMMA_LOCALE
    assert units.decide_locale(["1.234"]).ambiguous
    assert units.decide_locale(["1.234", "0.500"]) == units.C_LOCALE
    text = ("CUDA Memory Operation Statistics (by size in KiB):\n\n"
            "   Total     Operations   Average    Minimum    Maximum       Operation     \n"
            " ----------  ----------  ---------  ---------  ---------  ------------------\n"
            " 524288.000           8  65536.000  65536.000  65536.000  [CUDA memcpy DtoH]\n")
    ps = parse_text_file(tmp_path, text)
    assert list(ps.frame["bytes"]) == [524288.0 * 1024] and ps.notes == []


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


NSYS_SAVED_ONLY = """WARNING: loops and any of its children processes will be profiled.

Collecting data...

The target application terminated with signal 4 (SIGILL)
Processing events...
Saving temporary "/tmp/nsys-report-aba0-a14b.qdstrm" file to disk...
Creating final output files...

Processing [==============================================================100%]
Saved report file to "/tmp/nsys-report-aba0-a14b.qdrep"
Report file moved to "/home/student/lab4/report3.qdrep"
"""


def test_nsys_2020_run_without_stats_says_where_the_report_is(tmp_path):
    """nsys 2020-2021 without --stats prints 'Saved report file to "….qdrep"' (and where it was moved):
    the error names the report and the command that prints its tables. Before: 'no profiler output'."""
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, NSYS_SAVED_ONLY)
    assert str(e.value).endswith(": no profiler output found: Nsight Systems saved its results in "
                                 "/home/student/lab4/report3.qdrep instead of printing them "
                                 "(`nsys stats /home/student/lab4/report3.qdrep` prints them as text)")
    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, NSYS_SAVED_ONLY.replace('Report file moved to "/home/student/lab4/report3.qdrep"\n', ""))
    assert "saved its results in /tmp/nsys-report-aba0-a14b.qdrep instead" in str(e.value)


@pytest.mark.parametrize(("path", "said"), [
    ("foreign/b5b-sergasgr-codealign-readme-ncu-no-metrics-then-device-unsupported-spanish-no-profile.md.log",
     '"Profiling is not supported on device 0. To find out supported GPUs refer --list-chips option."'),
    ("foreign/lanluyuu-cuda-gemm-ncu-error-no-executable.log", "\"'./main' does not exist or is not an executable."),
    ("ncu-text/shra1-25-cml-ncu-target-terminated-traceback-no-result.log",
     '"ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters'),
])
def test_ncu_run_without_results_says_why(path, said, cli):
    """An ncu run that printed no result: the one line quotes ncu's most specific ==ERROR== (not the
    generic 'The application returned an error code'), else its 'No kernels were profiled' /
    'No metrics to collect' warning. Before: only 'no profiler output … found'."""
    line = check_no_profile(path, cli)
    assert "found: Nsight Compute printed no results (" + said in line


def test_ncu_run_that_collected_nothing_quotes_the_warning(tmp_path):
    from profconv.errors import NoProfileFound

    text = ("==WARNING== No metrics to collect found in sections.\n"
            "==PROF== Connected to process 32564 (/home/u/gemv)\n"
            "==PROF== Disconnected from process 32564\n"
            "[32564] gemv@127.0.0.1\n"
            "  gemv_kernel(const float *, float *, int) (4, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 12.0\n")
    with pytest.raises(NoProfileFound) as e:
        parse_text_file(tmp_path, text)
    assert str(e.value).endswith('Nsight Compute printed no results ("No metrics to collect found in sections.")')


KERN_EXEC = """[6/8] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances  Avg (ns)   Med (ns)   Min (ns)  Max (ns)  StdDev (ns)        Name
 --------  ---------------  ---------  ---------  ---------  --------  --------  -----------  ---------------
    100.0        1,132,611          2  566,305.5  566,305.5   566,000   566,611        432.0  matmul_gpu(int)

[7/8] Executing 'cuda_kern_exec_sum' stats report

 PID  TID  Count  QCount  TAvg (ns)  AAvg (ns)  KAvg (ns)  KMin (ns)  KMax (ns)     API Name         Kernel Name
 ---  ---  -----  ------  ---------  ---------  ---------  ---------  ---------  ----------------  ---------------
  42   42      2       0  570,000.0    3,500.0  566,305.5    566,000    566,611  cudaLaunchKernel  matmul_gpu(int)

Processing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.6.2/host-linux-x64/reports/nvtx_gpu_proj_sum.py]...

 ** NVTX GPU Projection Summary (nvtx_gpu_proj_sum):

Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns)
:step,PushPop,1132611,1200000,2,566305.5,566305.5,566000,566611
"""


def test_nsys_reports_that_are_not_per_name_summaries_are_not_read(tmp_path):
    """Named nsys reports that are not one per-name time summary (cuda_kern_exec_sum's launch/queue/
    execution times per kernel and API, nvtx_gpu_proj_sum's ranges projected onto the GPU, nvtx_kern_sum,
    um_sum …) are claimed, not read, and a note names them. Before: an unknown report was read as GPU
    activities, so cuda_kern_exec_sum's rows counted every kernel's launches twice next to
    cuda_gpu_kern_sum, and NVTX ranges were ranked as GPU activities."""
    ps = parse_text_file(tmp_path, KERN_EXEC)
    f = ps.frame
    assert list(zip(f["section"], f["name"], f["calls"], f["total_ns"])) == [("gpu", "matmul_gpu(int)", 2, 1132611.0)]
    assert [n.split(" (")[0] for n in ps.notes] == ["lines 9-11: nsys report cuda_kern_exec_sum",
                                                    "lines 17-18: nsys report nvtx_gpu_proj_sum"]
    assert ps.unplaced == []


def test_metric_table_shows_the_printed_digits(cli):
    """The terminal's Metrics table shows a metric's value as printed: '1,048,576' threads and
    '63,656.74' cycles (before: '1.04858e+06' and '63,656.7', six significant digits)."""
    r = cli("parse", "tests/data/" + CASES[0].path)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    threads = next(x for x in lines if " Threads " in x)
    assert threads.split()[-1] == "1,048,576"
    active = next(x for x in lines if "SM Active Cycles" in x)
    assert active.split()[-1] == "63,656.74"
    assert "e+0" not in r.stdout


def test_prose_mentioning_nvtx_names_no_table(tmp_path):
    """A README line that mentions NVTX ('we wrapped the loop in NVTX ranges') above an untitled nsys
    kernel table does not make it an NVTX table: a legacy title names its statistics ('NVTX Push-Pop
    Range Statistics:'). Before: the kernel ranked as an NVTX range."""
    text = ("We wrapped the loop in NVTX ranges and profiled it; the kernels:\n\n"
            " Time (%)  Total Time (ns)  Instances  Avg (ns)   Min (ns)  Max (ns)        Name\n"
            " --------  ---------------  ---------  ---------  --------  --------  ---------------\n"
            "    100.0        1,132,611          2  566,305.5   566,000   566,611  matmul_gpu(int)\n")
    f = parse_text_file(tmp_path, text).frame
    assert list(zip(f["section"], f["name"], f["total_ns"])) == [("gpu", "matmul_gpu(int)", 1132611.0)]
