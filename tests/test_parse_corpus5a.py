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
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [
    ("foreign/b5a-olcf-openacc-workshop-2013-craypat-pipe-tables-no-profile-excerpt.log",
     "CrayPat 5.3 tables with Time% / Time / Calls cells between bars: another profiler's, not nvprof's"),
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
