"""The fifth real corpus, first half (issue 12, session 5): nvprof, OpenACC timing, and profiler
output pasted into documents; exact values for every file, and the classes they revealed.

Each file listed in SOURCES.md "Batch 5a" was copied from the text the search tool's read_file (or,
for issue threads, its issue search) returned for a public repository (repository, path and commit
there). Values were checked by hand against the lines they come from (see test_parse_corpus_more.py
for what a Case holds). Below the files: synthetic tests of each class of failure a file revealed,
so the fix holds for the class and not for the one file.
"""

from __future__ import annotations

import pytest

from tests.test_parse_corpus_more import Case, check_case, check_listed_once, check_no_profile, parse_text_file

MXNET_REDUCE = ("void mshadow::cuda::MapPlanKernel<mshadow::sv::saveto, int=8, mshadow::expr::Plan<mshadow::Tensor"
                "<mshadow::gpu, int=2, float>, float>, mshadow::expr::Plan<mshadow::expr::ReduceWithAxisExp<"
                "mshadow::red::maximum, mshadow::Tensor<mshadow::gpu, int=3, float>, float, int=3, bool=1, int=2>, "
                "float>>(mshadow::gpu, unsigned int, mshadow::Shape<int=2>, int=2)")

# fmt: off
CASES = [
    Case('nvprof-new/b5a-atsmith3-ece408-m2-rai-v100-wrapped-mid-name-excerpt.log',
         tools=('nvprof',), rows=56, unplaced=0,
         sections={(1, 'api'): 38, (1, 'gpu'): 18},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 7), (1, 'api', 'cudaStreamCreateWithFlags', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 34689000.0, 20, 1734500.0),
             (1, 'gpu', 'volta_gcgemm_64x32_nt', 19162000.0, 4, 4790500.0),
             (1, 'gpu', MXNET_REDUCE, 4896.0, 1, 4896.0),  # its name cut after 'Plan<mshadow:' by rai's stream
             (1, 'gpu', 'cudnn::gemm::computeOffsetsKernel(cudnn::gemm::ComputeOffsetsParams)', 2336.0, 1, 2336.0),
             (1, 'api', 'cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags', 3694.0, 1, 3694.0),
             (1, 'api', 'cudaGetLastError', 116730.0, 573, 203.0),
             (1, 'api', 'cuDriverGetVersion', 1970.0, 3, 656.0),
         ],
         notes=[]),
    Case('nvprof-new/b5a-atsmith3-ece408-m3-rai-oom-traceback-wrapped-api-name-excerpt.log',
         tools=('nvprof',), rows=42, unplaced=0,
         sections={(1, 'api'): 36, (1, 'gpu'): 6},
         tops=[(1, 'gpu', 'mxnet::op::forward_kernel(float*, float const *', 2), (1, 'api', 'cudaStreamCreateWithFlags', 3)],
         checks=[
             (1, 'gpu', 'mxnet::op::forward_kernel(float*, float const *, float const *, int, int, int, int, int, int)',
              497500000.0, 1, 497500000.0),
             (1, 'gpu', '[CUDA memset]', 8544.0, 8, 1068.0),
             (1, 'api', 'cudaStreamCreateWithFlags', 74280800000.0, 22, 3376400000.0),
             (1, 'api', 'cudaHostGetDevicePointer', 7206.0, 2, 3603.0),  # 'cudaH' / 'ostGetDevicePointer'
             (1, 'api', 'cuDeviceGetCount', 6203.0, 6, 1033.0),  # the row after the cut one
             (1, 'api', 'cudaGetErrorString', 300.0, 1, 300.0),
         ],
         notes=[]),
    Case('acc-time/b5a-milladgit-comd-pgi18.10-update-directive-transfers-memutils-h.log',
         tools=('nvhpc-acc',), rows=30, unplaced=0,
         sections={(1, 'gpu'): 8, (1, 'openacc'): 22},
         tops=[(1, 'gpu', 'ljForce@ljForce.c:200 kernel', 1),
               (1, 'openacc', 'updateGPU@timestep.c:140 data copyin transfers', 2)],
         checks=[
             (1, 'gpu', 'ljForce@ljForce.c:200 kernel', 1116045000.0, 101, 11049000.0),
             (1, 'gpu', 'kineticEnergy@timestep.c:192 reduction kernel', 44000.0, 11, 4000.0),
             (1, 'gpu', 'transferToGPU@memUtils.h:34 kernel', 5495000.0, 2744, 2000.0),  # inside the line-55 region
             (1, 'openacc', 'updateHost@timestep.c:101 update directive', None, 100, None),
             (1, 'openacc', 'updateHost@timestep.c:101 data copyout transfers', 291948000.0, 600, 486000.0),
             (1, 'openacc', 'updateGPU@timestep.c:140 data copyin transfers', 480251000.0, 600, 800000.0),
             (1, 'openacc', 'transferToGPU@memUtils.h:55 data region', None, 1, None),  # 'reached 1 time'
             (1, 'openacc', 'transferToGPU@memUtils.h:56 data copyin transfers', 5040000.0, 7, 720000.0),
         ],
         notes=[]),
    Case('pasted/b5a-nek5000-pr284-nvprof-pipe-table-without-outer-bars-backticks-excerpt.md.log',
         tools=('nvprof',), rows=7, unplaced=0,
         sections={(1, 'gpu'): 7},
         tops=[(1, 'gpu', 'hsmg_do_fast_acc_1128_gpu', 5)],
         checks=[
             (1, 'gpu', 'hsmg_do_fast_acc_1128_gpu', 3116170000.0, 490, 6359500.0),
             (1, 'gpu', '[CUDA memcpy HtoD]', 1671860000.0, 5141, 325200.0),
             (1, 'gpu', 'hsmg_extrude_544_gpu', 321980000.0, 2459, 130940.0),
             (1, 'gpu', 'global_div3_169_gpu', 293860000.0, 245, 1199400.0),
         ],
         notes=['profile 1, gpu table, lines 9-15: Time(%) adds up to 87.18%, not 100%']),
    Case('pasted/b5a-nvidia-apex-issue666-nvprof-rows-without-header-continued-excerpt.md.log',
         tools=('nvprof',), rows=10, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 3},
         tops=[(1, 'gpu', 'void fft2d_c2r_64x64<__half, bool=0>', 3), (1, 'api', 'cudaMalloc', 4)],
         checks=[
             (1, 'gpu', 'void fft2d_c2r_64x64<__half, bool=0>', 175110.0, 1, 175110.0),
             (1, 'gpu', 'void fft1d_r2c_256<__half, float, float2, bool=1, bool=0>', 29793.0, 1, 29793.0),
             (1, 'api', 'cudaMalloc', 8516660000.0, 98, 86905000.0),
             (1, 'api', 'cudaGetDevice', 274560000.0, 132316, 2075.0),
             (1, 'api', 'cudaMemcpyAsync', 176840000.0, 890, 198700.0),
         ],
         notes=['profile 1, gpu table, lines 2-4: Time(%) adds up to 0.00%',
                'profile 1, api table, lines 5-11: Time(%) adds up to 97.32%']),
    Case('pasted/b5a-bluebrain-coreneuron-issue145-openacc-excl-rows-without-header-excerpt.md.log',
         tools=('nvprof',), rows=12, unplaced=0,
         sections={(1, 'openacc'): 12},
         tops=[(1, 'openacc', 'acc_compute_construct@treeset_core.cpp:151', 5)],
         checks=[
             (1, 'openacc', 'acc_compute_construct@treeset_core.cpp:151', 7298000.0, 8002, 912.0),
             (1, 'openacc', 'acc_compute_construct@iostream:584', 7019000.0, 8000, 877.0),
             (1, 'openacc', 'acc_wait@(OpenACC API):1', 436100.0, 99, 4405.0),
             (1, 'openacc', 'acc_enter_data@iostream:619', 395830.0, 2, 197910.0),
             (1, 'openacc', 'acc_wait@netcvode.cpp:699', 90635.0, 16, 5664.0),
         ],
         notes=['profile 1, openacc table, lines 2-13: Time(%) adds up to 2.00%']),
    Case('pasted/b5a-clima-oceananigans-issue1912-julia-mangled-names-prose-between-sections-excerpt.md.log',
         tools=('nvprof',), rows=8, unplaced=0,
         sections={(1, 'api'): 6, (1, 'gpu'): 2},
         tops=[(1, 'gpu', '_Z23julia_gpu__apply_y_bcs_7ContextI14__CUDACtx_Namevv14__PassType_257v12DisableHooks', 2),
               (1, 'api', 'cuStreamQuery', 2)],
         checks=[
             (1, 'gpu', '_Z23julia_gpu__apply_y_bcs_7ContextI14__CUDACtx_Namevv14__PassType_257v12DisableHooks',
              33696.0, 10, 3369.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 12800.0, 10, 1280.0),
             (1, 'api', 'cuStreamQuery', 702120000.0, 468805, 1497.0),
             (1, 'api', 'cuCtxGetCurrent', 277250000.0, 470363, 589.0),
             (1, 'api', 'cuMemAlloc', 344380.0, 20, 17218.0),
         ],
         notes=['profile 1, gpu table, lines 2-3: Time(%) adds up to 0.11%']),
    Case('pasted/b5a-lanl-bml-pr478-email-reply-double-spaced-nvprof-excerpt.md.log',
         tools=('nvprof',), rows=6, unplaced=0,
         sections={(1, 'gpu'): 6},
         tops=[(1, 'gpu', 'bml_multiply_AB_ellpack_single_real$_omp_fn$0', 1)],
         checks=[
             (1, 'gpu', 'bml_multiply_AB_ellpack_single_real$_omp_fn$0', 364960000.0, 1, 364960000.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 4535700.0, 15, 302380.0),
             (1, 'gpu', '[CUDA memcpy HtoD]', 3569000.0, 20, 178450.0),
             (1, 'gpu', 'bml_zero_matrix_ellpack_single_real$_omp_fn$0', 997400.0, 3, 332470.0),
         ],
         notes=[]),
    Case('acc-time/b5a-usnistgov-hiperc-issue49-pgi17-tilde-paths-cut-excerpt.md.log',
         tools=('nvhpc-acc',), rows=5, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'openacc'): 3},
         tops=[(1, 'gpu', 'convolution_kernel@openacc_discretization.c:35 kernel', 1)],
         checks=[
             (1, 'gpu', 'convolution_kernel@openacc_discretization.c:35 kernel', 16020256000.0, 100000, 160000.0),
             (1, 'gpu', 'diffusion_kernel@openacc_discretization.c:57 kernel', None, 100000, None),  # cut before its times
             (1, 'openacc', 'convolution_kernel@openacc_discretization.c:35 data region', None, 200000, None),
             (1, 'openacc', 'diffusion_kernel@openacc_discretization.c:57 compute region', None, 100000, None),
         ],
         notes=[]),
    Case('pasted/b5a-ghe10-ece408-fa17-readme-indented-blocks-snip-elisions-excerpt.md.log',
         tools=('nvprof', 'nvprof'), rows=7, unplaced=0,
         sections={(1, 'api'): 3, (1, 'gpu'): 3, (2, 'gpu'): 1},
         tops=[(1, 'gpu', 'sgemm_128x128x8_NT_vec', 3), (1, 'api', 'cudaFree', 3),
               (2, 'gpu', 'void mxnet::op::forward_kernel<mshadow::gpu, float>', 1)],
         checks=[
             (1, 'gpu', 'sgemm_128x128x8_NT_vec', 8748800.0, 1, 8748800.0),
             (1, 'gpu', '[CUDA memcpy HtoD]', 6957100.0, 13, 535160.0),
             (1, 'gpu', 'void', 4659800.0, 2, 2329900.0),  # the author cut the name; '... < snip > ...' is no part of it
             (1, 'api', 'cudaStreamCreateWithFlags', 2908620000.0, 16, 181790000.0),
             (1, 'api', 'cudaMemGetInfo', 780120000.0, 24, 32505000.0),
             (2, 'gpu', 'void mxnet::op::forward_kernel<mshadow::gpu, float>(float*, mxnet::op::forward_kernel<mshadow::gpu, '
              'float> const *, mxnet::op::forward_kernel<mshadow::gpu, float> const , int, int, int, int, int, int)',
              14895200000.0, 1, 14895200000.0),
         ],
         notes=['profile 1, gpu table, lines 21-23: Time(%) adds up to 71.63%']),
    Case('nvprof-trace/b5a-milladgit-comd-pgi-gputrace-gtx970-uacc-fill-excerpt.log',
         tools=('nvprof',), rows=13, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'gpu-trace'): 11},
         tops=[(1, 'gpu', '__pgi_uacc_cuda_fill_35_gpu', 2)],  # 89.3% alone
         checks=[
             (1, 'gpu-trace', 5, '[CUDA memcpy HtoD]', 282260000.0, 1344.0),
             (1, 'gpu-trace', 6, '__pgi_uacc_cuda_fill_35_gpu [25]', 282630000.0, 1696.0),
             (1, 'gpu-trace', 15, '__pgi_uacc_cuda_fill_35_gpu [43]', 282730000.0, 1088.0),
             (1, 'gpu', '__pgi_uacc_cuda_fill_35_gpu', 11232.0, 10, 1123.2),  # summed from the trace
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [
    ("foreign/b5a-olcf-openacc-workshop-2013-craypat-pipe-tables-no-profile-excerpt.log",
     "CrayPat 5.3 tables with Time% / Time / Calls cells between bars: another profiler's, not nvprof's"),
    ("foreign/b5a-owensgroup-ml-perf-model-nvprof-metric-names-list-no-profile.log",
     "a list of nvprof metric names, one a line, no values"),
    ("foreign/b5a-peak-team-pr15-kernel-statistics-pipe-table-no-profile-excerpt.md.log",
     "another tool's '| Kernel | Calls | Total(s) | Max(s) | Min(s) |' table between dashed rules"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_corpus5a_file(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_corpus5a_no_profile(path, why, cli):
    check_no_profile(path, cli)


def test_corpus5a_files_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes

CUT_LOG = """==7== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:  100.00%  1.0000ms         2  500.00us  400.00us  600.00us  conv_forward_kernel(float*, float const *)
      API calls:   90.00%  9.0000ms         1  9.0000ms  9.0000ms  9.0000ms  cudaMalloc
                    9.00%  900.00us         2  450.00us  400.00us  500.00us  cudaH
ostGetDevicePointer
                    1.00%  100.00us         4  25.000us  20.000us  30.000us  cudaFree
"""


@pytest.mark.parametrize("pure", ["1", "0"], ids=["pure-python", "native-if-built"])
def test_a_name_cut_mid_word_joins_its_row(tmp_path, monkeypatch, pure):
    """A log whose writer broke lines at a byte count, not at line ends (rai's streamed output in ECE 408
    logs): the rest of a name at column 0 on the next line, between two rows. It joins its row without a
    space, on the C row reader's path and the pure-Python one alike. Before: the row kept 'cudaH' and the
    line 'ostGetDevicePointer' was dropped without a word."""
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", pure)
    ps = parse_text_file(tmp_path, CUT_LOG)
    f = ps.frame
    assert ps.unplaced == []
    api = f[f["section"] == "api"]
    assert list(api["name"]) == ["cudaMalloc", "cudaHostGetDevicePointer", "cudaFree"]
    row = api[api["name"] == "cudaHostGetDevicePointer"].iloc[0]
    assert (row["total_ns"], int(row["calls"]), row["avg_ns"]) == (900000.0, 2, 450000.0)
    assert (int(row["line_start"]), int(row["line_end"])) == (5, 6)


@pytest.mark.parametrize("between", ["  <- this one is slow", "see below", "ostGet Device"])
def test_text_between_two_rows_is_reported_not_dropped(tmp_path, between):
    """Text that is not the rest of a cut name (indented, several words, or after a complete name)
    between two rows of one table is reported as unplaced; both rows are kept as printed."""
    text = CUT_LOG.replace("cudaH\nostGetDevicePointer", "cudaHostAlloc\n" + between)
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert list(f[f["section"] == "api"]["name"]) == ["cudaMalloc", "cudaHostAlloc", "cudaFree"]
    assert [n for n, _ in ps.unplaced] == [6]


def test_a_cut_word_after_the_last_row_is_not_guessed(tmp_path):
    """Only a line with a row after it is taken for the rest of a name; a word after a table's last row
    (program output, the next paragraph) is left alone, as before."""
    text = CUT_LOG.replace("cudaFree\n", "cudaFree\nDone\n")
    ps = parse_text_file(tmp_path, text)
    assert "cudaFree" in set(ps.frame["name"])
    assert ps.unplaced == []


NEK = """Time(%)  |     Time     | Calls  |      Avg  |      Min  |      Max  | Name
---------|--------------|--------|-----------|-----------|-----------|--------------------------
 43.73%  | 6.85225s     |  7826  | 875.57us  |    928ns  | 2.7926ms  | `[CUDA memcpy HtoD]`
 56.27%  | 8.81737s     |   310  | 28.443ms  | 1.6530ms  | 33.063ms  | `hsmg_do_fast_acc_1128_gpu`
"""


@pytest.mark.parametrize("rule", ["---------|--------------|--------|-----------|-----------|-----------|-----",
                                  "---------| -------------| -------| ----------| ----------| ----------| ----",
                                  ":--------|-------------:|-------:|----------:|----------:|----------:|:----"])
def test_pipe_table_without_outer_bars(tmp_path, rule):
    """A markdown table written without its outer bars (GitHub renders 'a | b | c' rows as a table): its
    cells are read like those of '| a | b | c |', and a code span's backticks around a whole cell
    ('`[CUDA memcpy HtoD]`') are markup, not part of the name. Before: 'found profiler tables but no
    row could be read'."""
    text = NEK.replace(NEK.split("\n")[1], rule)
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    assert list(f["name"]) == ["[CUDA memcpy HtoD]", "hsmg_do_fast_acc_1128_gpu"]
    assert list(f["total_ns"]) == [6852250000.0, 8817370000.0]
    assert list(f["calls"]) == [7826, 310]
    assert list(f["min_ns"]) == [928.0, 1653000.0]


def test_bars_inside_a_plain_row_are_not_a_table(tmp_path):
    """A kernel name holding '|' ('operator|') in a plain nvprof row is not read as table cells: only
    bars with blanks on both sides, two or more of them, make one."""
    text = ("            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"
            " GPU activities:  100.00%  2.0000ms         2  1.0000ms  1.0000ms  1.0000ms  "
            "void k<bool_or>(int|int, a||b)\n")
    ps = parse_text_file(tmp_path, text)
    assert list(ps.frame["name"]) == ["void k<bool_or>(int|int, a||b)"]


ROWS_ONLY = """The slowest calls were:
                    0.39%  7.2980ms      8002     912ns     834ns  12.646us  {a}
                    0.38%  7.0569ms      8002     881ns     782ns  78.907us  {b}
"""


@pytest.mark.parametrize(("a", "b", "section"), [
    ("acc_compute_construct@treeset_core.cpp:151", "acc_wait@(OpenACC API):1", "openacc"),
    ("cudaMalloc", "cudaLaunchKernel", "api"),
    ("conv_forward_kernel(float*, int)", "[CUDA memcpy HtoD]", "gpu"),
])
def test_summary_rows_pasted_without_their_header(tmp_path, a, b, section):
    """Rows of an nvprof summary pasted without the header and the lines above it (the second message
    of a thread, an excerpt): two rows in a row in nvprof's 8-column layout (share, time with unit,
    calls, avg/min/max with units, name) are a table; its section is told by the names (acc_*@file:line
    are the OpenACC section's). Before: 'no profiler output found'."""
    ps = parse_text_file(tmp_path, ROWS_ONLY.format(a=a, b=b))
    f = ps.frame
    assert ps.unplaced == []
    assert list(f["section"]) == [section, section]
    assert list(f["name"]) == [a, b]
    assert list(f["total_ns"]) == [7298000.0, 7056900.0]
    assert list(f["calls"]) == [8002, 8002]
    assert list(f["avg_ns"]) == [912.0, 881.0]


def test_a_labelled_row_without_header_and_a_lone_row_before_it(tmp_path):
    """'API calls:' rows without a header are read by their label; a lone unlabelled row before them
    (one row is no table) is reported, not read and not dropped."""
    text = ("                    0.03%  12.800us        10  1.2800us  1.2160us  1.6320us  [CUDA memcpy DtoH]\n"
            "\n"
            "      API calls:   70.92%  702.12ms    468805  1.4970us  1.2730us  101.02us  cuStreamQuery\n"
            "                   28.00%  277.25ms    470363     589ns     433ns  15.851us  cuCtxGetCurrent\n")
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert list(f["name"]) == ["cuStreamQuery", "cuCtxGetCurrent"]
    assert set(f["section"]) == {"api"}
    assert [n for n, _ in ps.unplaced] == [1]


def test_one_row_alone_is_no_profile(tmp_path):
    """A single row-like line in prose is not a profile (no header, no label, no second row)."""
    from profconv.errors import NoProfileFound

    with pytest.raises(NoProfileFound):
        parse_text_file(tmp_path, "We measured\n    0.39%  7.2980ms      8002     912ns     834ns  12.646us  k\nthen stopped.\n")


ACC_PATHS = """Accelerator Kernel Timing data
{path}
  jacobi  NVIDIA  devicenum=0
    time(us): 1,234
    35: compute region reached 10 times
        35: kernel launched 10 times
            grid: [64]  block: [128]
             device time(us): total=1,234 max=130 min=120 avg=123
"""


@pytest.mark.parametrize(("path", "file"), [
    ("~/hiperc/gpu-openacc-diffusion/openacc_discretization.c", "openacc_discretization.c"),
    ("./src/jacobi.F90", "jacobi.F90"),
    ("../common/laplace2d.cpp", "laplace2d.cpp"),
    ("src/solver/jacobi.cu", "jacobi.cu"),
    ("/home/u/acc/memUtils.h", "memUtils.h"),
    ("C:\\Users\\Ana María\\lab3\\jacobi.c", "jacobi.c"),
])
def test_openacc_source_lines_in_any_path_form(tmp_path, path, file):
    """The line naming the source file of the functions below it, at column 0, in any path form:
    home-relative ('~/…', PGI prints the path as given to the compiler), dot-relative, relative,
    absolute, a drive letter. Before: only absolute paths and bare file names were taken, so rows of
    '~/…' sources lost their file ('jacobi:35 kernel')."""
    ps = parse_text_file(tmp_path, ACC_PATHS.format(path=path))
    f = ps.frame
    assert ps.unplaced == []
    assert list(f[f["section"] == "gpu"]["name"]) == [f"jacobi@{file}:35 kernel"]
    assert list(f[f["section"] == "gpu"]["total_ns"]) == [1234000.0]


@pytest.mark.parametrize("mark", ["... < snip > ...", "-- snip --", "[... snip ...]", "...", "<snipped>"])
def test_elision_marks_between_dots_are_no_part_of_a_name(tmp_path, mark):
    """'... < snip > ...' (a course README's elision, dots around the mark) after a row whose name may go
    on ('void'): the mark says rows were left out; it is not the rest of the name, and the table goes on
    after it. Before: the row was named 'void ... < snip > ...'."""
    text = ("Time(%)      Time     Calls       Avg       Min       Max  Name\n"
            " 60.00%  6.0000ms         2  3.0000ms  1.0000ms  5.0000ms  void\n"
            f"     {mark}\n"
            " 40.00%  4.0000ms         1  4.0000ms  4.0000ms  4.0000ms  sgemm_128x128x8_NT_vec\n")
    ps = parse_text_file(tmp_path, text)
    assert list(ps.frame["name"]) == ["void", "sgemm_128x128x8_NT_vec"]
    assert list(ps.frame["total_ns"]) == [6000000.0, 4000000.0]
    assert ps.unplaced == []


def test_rows_without_header_end_with_their_paragraph(tmp_path):
    """Rows pasted without header or label end at a blank line or a code fence: rows after it are
    another table, told apart by their own names. Before: a kernel row and the API rows of the next
    paragraph (whose 'API calls:' label was lost, glued to prose) were one block, all called API."""
    text = ("```\n"
            "                    0.08%  33.696us        10  3.3690us  2.5920us  4.0320us  conv_forward_kernel(float*)\n"
            "                    0.03%  12.800us        10  1.2800us  1.2160us  1.6320us  [CUDA memcpy DtoH]\n"
            "\n"
            "grid = 16384 x 16384      API calls:   70.92%  702.12ms    468805  1.4970us  1.2730us  101.02us  cuStreamQuery\n"
            "                   28.00%  277.25ms    470363     589ns     433ns  15.851us  cuCtxGetCurrent\n"
            "                    0.85%  8.3729ms       302  27.724us  11.380us  3.7689ms  cuLaunchKernel\n"
            "```\n")
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    gpu = f[f["section"] == "gpu"]
    assert list(gpu["name"]) == ["conv_forward_kernel(float*)", "[CUDA memcpy DtoH]"]
    assert list(f[f["section"] == "api"]["name"]) == ["cuCtxGetCurrent", "cuLaunchKernel"]
    assert [n for n, _ in ps.unplaced] == [5]  # the glued line: its row is not read as another's
