"""The third real corpus (issue 12, session 3): exact values for every file, and the classes they revealed.

Each file listed in SOURCES.md "Batch 3" was copied from the text the search tool's read_file returned for
a public repository (repository, path and commit there). Values were checked by hand against the lines
they come from (see test_parse_corpus_more.py for what a Case holds). Below the files: synthetic tests of
each class of failure a file revealed, so the fix holds for the class and not for the one file.
"""

from __future__ import annotations

import pytest

import profconv
from profconv.errors import ExitStatus, NoProfileFound
from tests.test_parse_corpus_more import Case, check_case, check_listed_once, check_no_profile, parse_text_file

# fmt: off
CASES = [
    Case('nsys-text/xiaoniaogangsi-ece408fa23-m3-nsys2019-then-ncu-report-only.log',
         tools=('nsys',), rows=38, unplaced=0,
         sections={(1, 'api'): 5, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 26},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2), (1, 'api', 'cudaMemcpy', 3)],
         checks=[
             (1, 'gpu', 'conv_forward_kernel', 148316211.0, 6, 24719368.5),
             (1, 'gpu', '[CUDA memcpy HtoD]', 38989824.0, 14, 2784987.4),
             (1, 'api', 'cudaMemcpy', 552532423.0, 20, 27626621.1),
             (1, 'os-runtime', 'pthread_cond_wait', 18082270809.0, 2, 9041135404.5),
         ],
         notes=['profile 1, gpu table, lines 115-125: merged from 2 source tables']),
    Case('nsys-text/hacheng-ece408sp25-op0-nsys-glued-progress-gridxyz-kernsum.log',
         tools=('nsys',), rows=43, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 6, (1, 'gpu-memory-size'): 2, (1, 'os-runtime'): 28},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 4), (1, 'api', 'cudaMemcpy', 3), (1, 'os-runtime', 'poll', 1)],
         checks=[
             (1, 'gpu', 'matmul_conv_fused_with_constant_mask(const float *, float *, int, int, int, int, int, int) '
                        '[grid 4000000x1x1, block 16x16x1]', 41443384.0, 1, 41443384.0),
             (1, 'gpu', 'matmul_conv_fused_with_constant_mask(const float *, float *, int, int, int, int, int, int) '
                        '[grid 722500x1x1, block 16x16x1]', 49482541.0, 1, 49482541.0),
             (1, 'gpu', '[CUDA memcpy HtoD]', 41897284.0, 6, 6982880.7),
             (1, 'api', 'cudaMemcpyToSymbol', 324778.0, 2, 162389.0),
             (1, 'os-runtime', 'poll', 87714163913.0, 845, 103803744.3),
         ],
         notes=['profile 1, gpu table, lines 70-80: merged from 2 source tables']),
    Case('ncu-text/muskanjaiswal-ipaco-2mm-tensor-rtx3050ti-ncu2025-pm-sampling-excerpt.log',
         tools=('ncu',), rows=79, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 78},
         tops=[(1, 'gpu', 'f32_to_f16(const float *, __half *, int)', 1)],
         checks=[
             (1, 'gpu', 'f32_to_f16(const float *, __half *, int)', 44990.0, 1, 44990.0),
             (1, 'ncu-metric', 'f32_to_f16', 'Memory Throughput', '%', 80.31, None),
             (1, 'ncu-metric', 'f32_to_f16', '# Pass Groups', None, 2.0, None),
             (1, 'ncu-metric', 'f32_to_f16', 'Function Cache Configuration', None, None, 'CachePreferNone'),
             (1, 'ncu-metric', 'f32_to_f16', 'Enabled TPC IDs', None, None, 'all'),
             (1, 'ncu-metric', 'f32_to_f16', 'Threads', 'thread', 1048576.0, None),
             (1, 'ncu-metric', 'f32_to_f16', 'Total SMSP Elapsed Cycles', 'cycle', 2494080.0, None),
         ],
         notes=[]),
    Case('nvprof-csv/floriansegard-gpgpu-hyst-trace-nuits-blanches-space-in-command-no-eol.csv.log',
         tools=('nvprof',), rows=13, unplaced=0,
         sections={(1, 'gpu'): 13},
         tops=[(1, 'gpu', 'hysteresis_kernel(ImageView<bool>', 5)],
         checks=[
             (1, 'gpu', 'hysteresis_kernel(ImageView<bool>', 3517503000.0, 24918, 141163.0),
             (1, 'gpu', '[CUDA memset]', 8248000.0, 24982, 330.0),
             (1, 'gpu', '[CUDA memcpy DtoD]', 903000.0, 2, 451571.0),
             (1, 'gpu', 'MemsetD2D_BL', 130000.0, 10, 13011.0),
         ],
         notes=[]),
    Case('pasted/yktian-ai4materials-paddle-nsys-legacy-tilde-text-fence-excerpt.md.log',
         tools=('nsys',), rows=17, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 4},
         tops=[(1, 'api', 'cudaMalloc', 4), (1, 'gpu', 'void phi::BNForwardInference', 4)],
         checks=[
             (1, 'api', 'cudaMalloc', 1709124966.0, 195, 8764743.4),
             (1, 'api', 'cuModuleUnload', 377387837.0, 602, 626890.1),
             (1, 'api', 'cuInit', 3200.0, 3, 1066.7),
             (1, 'gpu', 'void phi::BNForwardInference', 58366.0, 6, 9727.7),
             (1, 'gpu', 'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align1>', 28960.0, 3, 9653.3),
         ],
         notes=['profile 1, gpu table, lines 30-33: Time(%) adds up to 44.10%']),
    Case('ncu-text/eduardo4jesus-hw8-task1b-naive-transpose-metrics-2022.log',
         tools=('ncu',), rows=8, unplaced=0,
         sections={(1, 'ncu-metric'): 8},
         tops=[],
         checks=[
             (1, 'ncu-metric', 'naive_cuda_transpose', 'l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio',
              'sector/request', 32.0, None),
             (1, 'ncu-metric', 'naive_cuda_transpose', 'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum', 'sector', 16777216.0, None),
             (1, 'ncu-metric', 'naive_cuda_transpose', 'smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct', '%', 25.0, None),
         ],
         notes=[]),
    Case('nvprof-new/andrewxu22-hotspot-lassen-normalized-ms-sci-notation-um.log',
         tools=('nvprof',), rows=16, unplaced=0,
         sections={(1, 'api'): 11, (1, 'gpu'): 1, (1, 'unified-memory'): 4},
         tops=[(1, 'gpu', 'calculate_temp(int', 1), (1, 'api', 'cudaMallocManaged', 1)],
         checks=[
             (1, 'gpu', 'calculate_temp(int', 219872.0, 1, 219872.0),
             (1, 'api', 'cudaMallocManaged', 269774500.0, 3, 89924830.0),
             (1, 'api', 'cuDeviceGet', 4120.0, 8, 515.0),
             (1, 'api', 'cuDeviceGetPCIBusId', 15433.0, 4, 3860.0),
             (1, 'unified-memory', 'Host To Device', 4352.0, 1, None),
             (1, 'unified-memory', 'Gpu page fault groups', 207712.0, 1, None),
         ],
         notes=[]),
    Case('pasted/oliatsm-rtx4070ti-managed-pad-acc-time-and-nsys-gui-tab-table.md.log',
         tools=('nvhpc-acc', 'nsys'), rows=11, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'openacc'): 4, (2, 'gpu'): 5},
         tops=[(1, 'gpu', 'conv_forward@layers.c:72 kernel', 1), (2, 'gpu', 'conv_forward_72_gpu', 2)],
         checks=[
             (1, 'gpu', 'conv_forward@layers.c:72 kernel', 87463639000.0, 150000, 583000.0),
             (1, 'openacc', 'pad_input@layers.c:52 data region', None, 300000, None),
             (2, 'gpu', 'conv_forward_72_gpu', 87.524e9, 150000, 583496.0),
             (2, 'gpu', '[CUDA memcpy Unified Device-to-Host]', 2.878e9, 2011510, 1430.0),
             (2, 'gpu', '[CUDA memset]', 300065.0, 3, 100021.0),
         ],
         notes=[]),
    Case('nvprof-trace/andrewxu22-hotspot-gputrace-um-page-faults-pc-column-v100.log',
         tools=('nvprof',), rows=11, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'gpu-trace'): 6, (1, 'unified-memory'): 4},
         tops=[(1, 'gpu', 'calculate_temp(int', 1)],
         checks=[
             (1, 'gpu-trace', 22, '[Unified Memory CPU page faults]', 552780000.0, None),
             (1, 'gpu-trace', 23, 'calculate_temp(int', 558760000.0, 389790.0),
             (1, 'gpu-trace', 27, '[Unified Memory Memcpy DtoH]', 562590000.0, 3104.0),
             (1, 'gpu', 'calculate_temp(int', 389790.0, 1, 389790.0),
             (1, 'unified-memory', '[Unified Memory GPU page faults]', 380700.0, 1, 380700.0),
             (1, 'unified-memory', '[Unified Memory CPU page faults]', None, 2, None),
         ],
         notes=[]),
    Case('nvprof-metrics/sankarmanoj-thrust2d-gradient-metrics-text-valued-utilization.log',
         tools=('nvprof',), rows=15, unplaced=0,
         sections={(1, 'metric'): 15},
         tops=[],
         checks=[
             (1, 'metric', 'getError(int', 'shared_utilization', None, 0.0, 'Idle (0)'),
             (1, 'metric', 'void better_reduce_kernel<unsigned int=1024>', 'shared_utilization', None, 1.0, 'Low (1)'),
             (1, 'metric', 'void better_reduce_kernel<unsigned int=1024>', 'shared_efficiency', '%', 99.74, None),
             (1, 'metric', 'multiply(int', 'gld_efficiency', '%', 82.56, None),
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [
    ("foreign/vipul-olcf-hw4-report-ncu-commands-no-results-windows.md.log",
     "a course report with ncu command lines and prose, no results"),
    ("ncu-text/hacheng-ece408sp25-op1-ncu-report-file-op-times-only.log",
     "ncu saved a report file; program output with Op Times only"),
    ("foreign/oliatsm-rtx4070ti-if-full-program-timings-no-profiler.md.log",
     "a program's own per-layer timings in a fence, no profiler"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_corpus3_file(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_corpus3_no_profile(path, why, cli):
    check_no_profile(path, cli)


def test_corpus3_files_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes




API_TRACE = """==84665== Profiling application: ./vector-add
==84665== Profiling result:
   Start  Duration  Name
17.181ms  6.7400us  cuDeviceGetPCIBusId
66.252ms     218ns  cuDeviceGetAttribute
.
.
66.712ms     169ns  cuDeviceGetUuid
66.721ms  219.40ms  cudaMalloc
286.21ms  40.939us  cudaLaunchKernel (vector_add(float*, 
                            float*, float*, int) [112])
286.25ms  31.490us  cudaMemcpy
286.29ms  10.939us  cudaLaunchKernel (vector_add(float*, float*, float*, int) [116])
"""


def test_api_trace_elided_rows_and_wrapped_launch_name(tmp_path):
    """An API trace pasted with '.' lines where rows were left out goes on after them; a launch whose
    kernel name wrapped onto the next line is one row over both lines; the summary counts launches per
    API call, as nvprof's own summary does (the kernel and its correlation id are the trace's detail)."""
    ps = parse_text_file(tmp_path, API_TRACE)
    f = ps.frame
    assert ps.unplaced == []
    trace = f[f["section"] == "api-trace"]
    assert list(trace["line_start"]) == [4, 5, 8, 9, 10, 12, 13]
    launch = trace[trace["line_start"] == 10].iloc[0]
    assert launch["name"] == "cudaLaunchKernel (vector_add(float*, float*, float*, int) [112])"
    assert launch["line_end"] == 11 and launch["total_ns"] == 40939.0 and launch["start_ns"] == 286210000.0
    api = f[f["section"] == "api"].set_index("name")
    assert api.loc["cudaLaunchKernel", "calls"] == 2
    assert api.loc["cudaLaunchKernel", "total_ns"] == 40939.0 + 10939.0
    assert api.loc["cudaLaunchKernel", "line_end"] == 13
    assert api.loc["cudaMalloc", "total_ns"] == 219.40e6
    assert len(api) == 6


@pytest.mark.parametrize("mark", [".", "..", "......", "⋮", "< snip >", "[...]"])
def test_elision_marks_do_not_end_a_trace(tmp_path, mark):
    text = API_TRACE.replace("\n.\n.\n", f"\n{mark}\n")
    ps = parse_text_file(tmp_path, text)
    assert ps.unplaced == []
    assert (ps.frame["section"] == "api-trace").sum() == 7


KERN_SUM_GRID = """[6/8] Executing 'cuda_gpu_kern_sum' stats report

 Time (%)  Total Time (ns)  Instances    Avg (ns)      Med (ns)     Min (ns)    Max (ns)   StdDev (ns)       GridXYZ          BlockXYZ                        Name                  
 --------  ---------------  ---------  ------------  ------------  ----------  ----------  -----------  -----------------  --------------  ------------------------------------
     54.4       49,482,541          1  49,482,541.0  49,482,541.0  49,482,541  49,482,541          0.0  722500    1    1     16   16    1  conv(const float *, float *, int)   
     45.6       41,443,384          1  41,443,384.0  41,443,384.0  41,443,384  41,443,384          0.0  4000000    1    1    16   16    1  conv(const float *, float *, int)   
"""

KERN_SUM_GRID_CSV = """Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),GridXYZ,BlockXYZ,Name
54.4,49482541,1,49482541.0,49482541.0,49482541,49482541,0.0,722500    1    1,16   16    1,"conv(const float *, float *, int)"
45.6,41443384,1,41443384.0,41443384.0,41443384,41443384,0.0,4000000    1    1,16   16    1,"conv(const float *, float *, int)"
"""


@pytest.mark.parametrize("text", [KERN_SUM_GRID, KERN_SUM_GRID_CSV], ids=["table", "csv"])
def test_kernel_summary_split_by_launch_configuration_keeps_it_in_the_name(tmp_path, text):
    """nsys (2024+) splits a kernel's summary rows by grid and block: two rows of one kernel are told
    apart by their launch configuration, never shown as two identical names (and the dims never read
    as times)."""
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    assert list(f["name"]) == ["conv(const float *, float *, int) [grid 722500x1x1, block 16x16x1]",
                               "conv(const float *, float *, int) [grid 4000000x1x1, block 16x16x1]"]
    assert list(f["short_name"]) == ["conv [grid 722500x1x1, block 16x16x1]", "conv [grid 4000000x1x1, block 16x16x1]"]
    assert list(f["total_ns"]) == [49482541.0, 41443384.0]
    assert list(f["calls"]) == [1, 1]


NB_OUTPUT = """==123== NVPROF is profiling process 123, command: ./a.out
==123== Profiling application: ./a.out
==123== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   89.00%  55.936us         1  55.936us  55.936us  55.936us  add_kernel(float*, float*, float*, int)
                    7.08%  4.4480us         2  2.2240us  2.1760us  2.2720us  [CUDA memcpy HtoD]
                    3.92%  2.4640us         1  2.4640us  2.4640us  2.4640us  [CUDA memcpy DtoH]
      API calls:   99.50%  200.10ms         3  66.700ms  4.1000us  200.09ms  cudaMalloc
                    0.50%  1.0000ms         1  1.0000ms  1.0000ms  1.0000ms  cudaLaunchKernel
"""


def _notebook(per_line: bool) -> str:
    import json

    text = [ln + "\n" for ln in NB_OUTPUT.splitlines()] if per_line else NB_OUTPUT
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Lab 3\n", "Profile the kernel\n"]},
        {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": ["!nvprof ./a.out 1.5 2.5"],
         "outputs": [{"name": "stdout", "output_type": "stream", "text": text}]},
        {"cell_type": "code", "execution_count": 4, "metadata": {}, "source": ["x = 1"],
         "outputs": [{"output_type": "execute_result", "execution_count": 4, "metadata": {},
                      "data": {"text/plain": ["12.5"], "text/html": ["<b>12.5</b>"]}}]},
    ], "metadata": {"colab": {"name": "lab3.ipynb"}}, "nbformat": 4, "nbformat_minor": 0}
    return json.dumps(nb, indent=1) if per_line else json.dumps(nb)


@pytest.mark.parametrize("per_line", [True, False], ids=["jupyter-layout", "one-line-json"])
def test_notebook_outputs_are_read(tmp_path, per_line, cli):
    """A Jupyter/Colab notebook is read for what its cells show: the profiler output in a cell's
    printed stream is parsed as if pasted (before: 'no row could be read', JSON-escaped lines)."""
    text = _notebook(per_line)
    ps = parse_text_file(tmp_path, text, "lab3.ipynb")
    f = ps.frame
    assert ps.unplaced == []
    assert ps.profiles[0].command == "./a.out"
    assert list(f["name"]) == ["add_kernel(float*, float*, float*, int)", "[CUDA memcpy HtoD]",
                               "[CUDA memcpy DtoH]", "cudaMalloc", "cudaLaunchKernel"]
    assert list(f["total_ns"]) == [55936.0, 4448.0, 2464.0, 200.10e6, 1.0e6]
    if per_line:  # the row's line is the notebook file's line holding it
        row_line = int(f.iloc[0]["line_start"])
        assert '55.936us  add_kernel' in text.split("\n")[row_line - 1]
    r = cli("parse", str(tmp_path / "lab3.ipynb"))
    assert r.returncode == 0 and "add_kernel" in r.stdout


def test_json_that_is_not_a_notebook_is_not_read_as_one(tmp_path):
    with pytest.raises(NoProfileFound):
        parse_text_file(tmp_path, '{"cells": 3, "text": ["==1== Profiling result:\\n"]}', "x.json")


PDF_CELLS = """Table 2: nvprof output for m3
Type
Time(%)
Time
Calls
Avg
Min
Max
Name
GPU activities:
72.32%
1.02030s
6
170.05ms
1.0240us
673.87ms
conv_forward_kernel
27.68%
390.53ms
14
27.895ms
1.1520us
222.43ms
[CUDA memcpy HtoD]
API calls:
55.10%
1.03271s
6
172.12ms
3.4560us
675.12ms
cudaDeviceSynchronize
44.90%
841.45ms
20
42.072ms
2.9530us
410.22ms
cudaMalloc

The kernel takes most of the time.
"""


def test_pdf_table_one_cell_per_line_is_read(tmp_path):
    """pdftotext of a report's table puts every cell on its own line, header included: each row is
    its numbers, then its name; the section labels stand alone (before: no row could be read, and the
    'API calls:' label dropped the API rows without a word)."""
    ps = parse_text_file(tmp_path, PDF_CELLS)
    f = ps.frame
    assert ps.unplaced == []
    assert list(zip(f["section"], f["name"], f["calls"])) == [
        ("gpu", "conv_forward_kernel", 6), ("gpu", "[CUDA memcpy HtoD]", 14),
        ("api", "cudaDeviceSynchronize", 6), ("api", "cudaMalloc", 20)]
    assert list(f["total_ns"]) == [1.02030e9, 390.53e6, 1.03271e9, 841.45e6]
    assert list(f["min_ns"]) == [1024.0, 1152.0, 3456.0, 2953.0]
    assert list(zip(f["line_start"], f["line_end"])) == [(11, 17), (18, 24), (26, 32), (33, 39)]


@pytest.mark.parametrize(("dropped", "lost"), [(15, [11, 12, 13, 14, 15, 16]),  # a Min cell lost (its name at 16)
                                               (17, [11, 12, 13, 14, 15, 16])])  # a name lost
def test_pdf_table_one_cell_per_line_with_a_cell_lost(tmp_path, dropped, lost):
    """A cell the extraction lost: that row is reported (its lines unplaced), never completed with a
    cell of the next row; the rows around it are still read."""
    lines = PDF_CELLS.split("\n")
    del lines[dropped - 1]
    ps = parse_text_file(tmp_path, "\n".join(lines))
    f = ps.frame
    assert [n for n, _ in ps.unplaced] == lost
    assert list(f["name"]) == ["[CUDA memcpy HtoD]", "cudaDeviceSynchronize", "cudaMalloc"]
    assert list(f["calls"]) == [14, 6, 20]
    assert ps.notes[0].endswith("Time(%) adds up to 27.68%, not 100% (rows missing or cut)")


@pytest.mark.parametrize(("text", "tool", "how"), [
    ("Op Time: 22922.1 ms\n==PROF== Disconnected from process 51856\n==PROF== Report: /u/h/analysis_file.ncu-rep\n",
     "Nsight Compute", "`ncu --import /u/h/analysis_file.ncu-rep` prints them"),
    ("Generating '/tmp/nsys-report-4a50.qdstrm'\n[1/1] [========================100%] r.nsys-rep\nGenerated:\n"
     "    /tmp/nsys-report-4a50.nsys-rep\n", "Nsight Systems", "`nsys stats /tmp/nsys-report-4a50.nsys-rep` prints them"),
    ("==31== NVPROF is profiling process 31, command: ./a.out\n==31== Generated result file: /h/prof.nvvp\n",
     "nvprof", "`nvprof -i /h/prof.nvvp` prints them"),
])
def test_a_run_that_saved_its_results_to_a_file_says_how_to_print_them(tmp_path, cli, text, tool, how):
    """The profiler ran, but wrote a report file instead of tables: the one-line error names the file
    and the command that prints it (before: only 'no profiler output found')."""
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    r = cli("parse", str(p))
    assert r.returncode == ExitStatus.BAD_INPUT and r.stdout == ""
    line = r.stderr.strip()
    assert "\n" not in line and "no profiler output found" in line
    assert f"{tool} saved its results in" in line and how in line


NSYS_SPACE_GROUPED = """[5/8] Executing 'cuda_api_sum' stats report

Time (%)  Total Time (ns)  Num Calls    Avg (ns)      Med (ns)    Min (ns)   Max (ns)    StdDev (ns)           Name
--------  ---------------  ---------  ------------  ------------  --------  -----------  ------------  ----------------------
53,8      308 807 930          6  51 467 988,3  21 054 696,0    25 638  159 147 694  66 147 813,0  cudaMemcpy
29,4      168 909 846          6  28 151 641,0     181 280,0   143 469  167 549 424  68 290 998,3  cudaMalloc
16,8       95 886 463      1 024      93 639,1       8 195,5     4 389   49 486 501  23 613 085,1  cudaDeviceSynchronize
"""


def test_space_grouped_numbers_in_rows_that_lost_their_alignment(tmp_path):
    """A locale that groups digits with spaces ('308 807 930'), in rows that no longer line up with
    the header's dashes (re-indented in a paste): the groups are cut the one way whose cells agree
    (total = calls x avg, min <= avg <= max, max <= total); before, every row was reported."""
    ps = parse_text_file(tmp_path, NSYS_SPACE_GROUPED)
    f = ps.frame.set_index("name")
    assert ps.unplaced == []
    assert f.loc["cudaMemcpy", "total_ns"] == 308807930.0
    assert f.loc["cudaMemcpy", "med_ns"] == 21054696.0 and f.loc["cudaMemcpy", "min_ns"] == 25638.0
    assert f.loc["cudaMemcpy", "max_ns"] == 159147694.0 and f.loc["cudaMemcpy", "std_ns"] == 66147813.0
    assert f.loc["cudaDeviceSynchronize", "calls"] == 1024
    assert f.loc["cudaDeviceSynchronize", "avg_ns"] == 93639.1
    assert f.loc["cudaMalloc", "time_pct"] == 29.4


def test_space_grouped_numbers_cut_two_ways_are_reported_not_guessed(tmp_path):
    """'1 234 567' with single spaces throughout: 1,234 ns in 567 ranges, or 1 ns in 234,567? Nothing
    in the row tells: reported. With the columns two spaces apart ('1 234  567') there is one reading."""
    text = """ Time (%)  Total Time (ns)  Instances  Name
 --------  ---------------  ---------  --------
60,0 1 234 567 range_a
40,0  822  3  range_b
"""
    ps = parse_text_file(tmp_path, text)
    assert [n for n, _ in ps.unplaced] == [3]
    assert list(ps.frame["name"]) == ["range_b"]
    ps = parse_text_file(tmp_path, text.replace("60,0 1 234 567 range_a", "60,0  1 234  567  range_a"), "two.txt")
    assert ps.unplaced == []
    assert list(zip(ps.frame["total_ns"], ps.frame["calls"])) == [(1234.0, 567), (822.0, 3)]


LATEX_TABLE = r"""\begin{table}[h]
\centering
\begin{tabular}{|l|r|r|r|r|r|r|l|}
\hline
Type & Time(\%) & Time & Calls & Avg & Min & Max & Name \\ \hline
GPU activities: & 72.32\% & 1.02030s & 6 & 170.05ms & 1.0240us & 673.87ms & conv\_forward\_kernel \\
 & 27.68\% & 390.53ms & 14 & 27.895ms & 1.1520$\mu$s & 222.43ms & [CUDA memcpy HtoD] \\ \hline
API calls: & 55.10\% & 1.03271s & 6 & 172.12ms & 3.4560us & 675.12ms & \texttt{cudaDeviceSynchronize} \\
 & 44.90\% & 841.45ms & 20 & 42.072ms & 2.9530us & 410.22ms & cudaMalloc \\ \midrule
\end{tabular}
\caption{nvprof summary of milestone 3}
\end{table}
"""


def test_latex_tabular_of_an_nvprof_summary(tmp_path):
    """A course report written in LaTeX: '&' between cells, '\\%', '\\_', '$\\mu$s', '\\texttt{}',
    rows ended by '\\\\' and rules (before: no row could be read)."""
    ps = parse_text_file(tmp_path, LATEX_TABLE, "report.tex")
    f = ps.frame
    assert ps.unplaced == []
    assert list(zip(f["section"], f["name"], f["calls"])) == [
        ("gpu", "conv_forward_kernel", 6), ("gpu", "[CUDA memcpy HtoD]", 14),
        ("api", "cudaDeviceSynchronize", 6), ("api", "cudaMalloc", 20)]
    assert list(f["min_ns"]) == [1024.0, 1152.0, 3456.0, 2953.0]
    assert list(f["time_pct"]) == [72.32, 27.68, 55.10, 44.90]


NCU_SUMMARY = """==PROF== Disconnected from process 11139
[11139] a.out@127.0.0.1
  Device 0, CC 9.0
    bitonic_merge(int *, int, int, int) (16384, 1, 1)x(512, 1, 1), Invocations 300
      Section: Command line profiler metrics
      ---------------------------------------------------------------- ----------- ------- ------- -------
      Metric Name                                                      Metric Unit Minimum Maximum Average
      ---------------------------------------------------------------- ----------- ------- ------- -------
      gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed           %   56.59   72.29   64.43
      gpu__time_duration.sum                                                    ms    1.02    1.31    1.12
      ---------------------------------------------------------------- ----------- ------- ------- -------

  transposeNaive(const float *, float *, int) (32, 32, 1)x(32, 32, 1), Device 0, CC 11.0, Invocations 14
    Section: Command line profiler metrics
    -------------------------------------------------------------- ----------- ------- ------- -------
    Metric Name                                                    Metric Unit Minimum Maximum Average
    -------------------------------------------------------------- ----------- ------- ------- -------
    l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum                      0.00    0.00    0.00
    gpu__time_duration.sum                                                  us   12.10   14.30   12.90
    -------------------------------------------------------------- ----------- ------- ------- -------
"""


@pytest.mark.parametrize("drop_prof_lines", [False, True], ids=["with-prof-lines", "pasted-without"])
def test_ncu_print_summary_per_kernel(tmp_path, drop_prof_lines):
    """`ncu --print-summary per-kernel` (or --import … --print-summary): one block per kernel with its
    launch count, Minimum/Maximum/Average columns. Every metric keeps all three values (the average as
    its value, value_min/value_max beside it); the duration gives the kernel's GPU row with its
    launches, average, min and max, and no total (ncu prints none: said next to the table). Before:
    'no profiler output found'."""
    text = NCU_SUMMARY if not drop_prof_lines else NCU_SUMMARY.split("\n", 2)[2]
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    gpu = f[f["section"] == "gpu"].set_index("short_name")
    assert list(gpu.index) == ["bitonic_merge", "transposeNaive"]
    assert list(gpu["calls"]) == [300, 14]
    assert list(gpu["avg_ns"]) == [1.12e6, 12900.0]
    assert list(gpu["min_ns"]) == [1.02e6, 12100.0] and list(gpu["max_ns"]) == [1.31e6, 14300.0]
    assert gpu["total_ns"].isna().all()
    m = f[f["section"] == "ncu-metric"].set_index("metric")
    assert len(m) == 4
    pct = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
    assert m.loc[pct, "value"] == 64.43 and m.loc[pct, "unit"] == "%"
    assert m.loc[pct, "value_min"] == 56.59 and m.loc[pct, "value_max"] == 72.29
    assert ps.notes[0].endswith("no total: the kernels are listed, not ranked by time")


PER_GPU = """==12917== NVPROF is profiling process 12917, command: ./simpleP2P
==12917== Profiling application: ./simpleP2P
==12917== Profiling result:
==12917== Device "Tesla P100-PCIE-16GB (0)"
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   54.07%  1.3417ms        50  26.833us  26.208us  27.361us  [CUDA memcpy PtoP]
                   45.93%  1.1398ms         1  1.1398ms  1.1398ms  1.1398ms  SimpleKernel(float*, float*)

==12917== Device "Tesla P100-PCIE-16GB (1)"
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
 GPU activities:   61.79%  1.3354ms        50  26.708us  26.112us  27.392us  [CUDA memcpy PtoP]
                   38.21%  825.77us         1  825.77us  825.77us  825.77us  [CUDA memcpy DtoH]
      API calls:   55.31%  321.96ms         2  160.98ms  158.95ms  163.01ms  cudaMallocHost
                   44.69%  260.10ms         4  65.025ms  3.1570us  260.09ms  cudaDeviceEnablePeerAccess
"""


def test_nvprof_summary_per_gpu_names_each_device(tmp_path):
    """`nvprof --print-summary-per-gpu`: a table per device, each a profile of the same run that
    says which device it is (before: the second profile had lost its command, pid and device)."""
    ps = parse_text_file(tmp_path, PER_GPU)
    assert ps.unplaced == []
    assert [(p.pid, p.command, p.device) for p in ps.profiles] == [
        (12917, "./simpleP2P", "Tesla P100-PCIE-16GB (0)"), (12917, "./simpleP2P", "Tesla P100-PCIE-16GB (1)")]
    f = ps.frame
    assert list(f[f["profile"] == 1]["name"]) == ["[CUDA memcpy PtoP]", "SimpleKernel(float*, float*)"]
    assert list(f[f["profile"] == 2]["total_ns"]) == pytest.approx([1.3354e6, 825770.0, 321.96e6, 260.10e6], rel=1e-12)


def test_summary_rows_glued_on_one_line_are_each_read(tmp_path):
    """Line breaks lost in a paste glue a row after the previous row's name: it was swallowed into
    that name ('cuInit   0.00%  2.0us … cuDriverGetVersion'); now each row is its own, on that line.
    The same inside a long table read in bulk."""
    text = """==1== Profiling result:
            Type  Time(%)      Time     Calls       Avg       Min       Max  Name
      API calls:   55.10%  1.03271s         6  172.12ms  3.4560us  675.12ms  cudaDeviceSynchronize
                   0.00%   1.0us           1  1.0us     1.0us     1.0us     cuInit                   0.00%   2.0us           2  1.0us     1.0us     1.0us     cuDriverGetVersion
"""
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    assert list(zip(f["name"], f["total_ns"], f["calls"], f["line_start"])) == [
        ("cudaDeviceSynchronize", 1.03271e9, 6, 3), ("cuInit", 1000.0, 1, 4), ("cuDriverGetVersion", 2000.0, 2, 4)]
    rows = ["==1== Profiling result:", "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"]
    for k in range(80):
        lab = " GPU activities:" if k == 0 else "                "
        rows.append(f"{lab}   1.00%  {k + 1}.0000us         1  {k + 1}.0000us  {k + 1}.0000us  {k + 1}.0000us  kern_{k}(int)")
    rows[40] += "   1.00%  7.0000us         1  7.0000us  7.0000us  7.0000us  glued_kern(int)"
    ps = parse_text_file(tmp_path, "\n".join(rows) + "\n", "bulk.txt")
    f = ps.frame
    assert ps.unplaced == [] and len(f) == 81
    assert list(f[f["line_start"] == 41]["name"]) == ["kern_38(int)", "glued_kern(int)"]
    assert list(f[f["line_start"] == 41]["total_ns"]) == [39000.0, 7000.0]


def test_stats_table_copied_from_the_nsys_gui(tmp_path):
    """A table copied from the Nsight Systems GUI (tab-separated, 'Time' is the share, times carry
    their units: '583.496 μs', '991 ns'); before, its rows were dropped without a word. A cell without
    a unit is never read in a guessed one: that row is reported."""
    text = ("Time\tTotal Time\tInstances\tAvg\tMed\tMin\tMax\tStdDev\tCategory\tOperation\n"
            "84.4%\t87.524 s\t150000\t583.496 μs\t596.580 μs\t181.153 μs\t1.079 ms\t323.180 μs\tCUDA_KERNEL\tconv_forward_72_gpu\n"
            "2.8%\t2.878 s\t2011510\t1.430 μs\t991 ns\t480 ns\t39.808 μs\t1.656 μs\tMEMORY_OPER\t[CUDA memcpy Unified Device-to-Host]\n"
            "0.0%\t300.065\t3\t100.021 μs\t95.904 μs\t28.768 μs\t175.393 μs\t73.399 μs\tMEMORY_OPER\t[CUDA memset]\n")
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert [n for n, _ in ps.unplaced] == [4]
    assert list(f["name"]) == ["conv_forward_72_gpu", "[CUDA memcpy Unified Device-to-Host]"]
    assert list(f["section"]) == ["gpu", "gpu"]
    assert list(f["total_ns"]) == [87.524e9, 2.878e9]
    assert list(f["med_ns"]) == [596580.0, 991.0]
    assert list(f["calls"]) == [150000, 2011510]


def test_gpu_trace_normalized_to_one_time_unit(tmp_path):
    """`nvprof --print-gpu-trace --normalized-time-unit ms`: a units row under the header and bare
    numbers below it (before: every row dropped without a word, 'no profiler output found')."""
    text = """==4411== Profiling application: ./a.out
==4411== Profiling result:
   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*      Size  Throughput  SrcMemType  DstMemType           Device   Context    Stream  Name
      ms        ms                                                         KB        KB        MB        GB/s
 195.317  0.004416                    -               -         -         -         -  0.039062  8.638514    Pageable      Device  Tesla V100-SXM2         1         7  [CUDA memcpy HtoD]
 195.402  0.021344          (4096 1 1)       (256 1 1)        16  0.000000  0.000000         -           -           -           -  Tesla V100-SXM2         1         7  vecAdd(float*, float*, float*, int) [113]
 195.430  0.003200                    -               -         -         -         -  0.039062  11.92093      Device    Pageable  Tesla V100-SXM2         1         7  [CUDA memcpy DtoH]
"""
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert ps.unplaced == []
    t = f[f["section"] == "gpu-trace"]
    assert list(t["start_ns"]) == [195317000.0, 195402000.0, 195430000.0]
    assert list(t["total_ns"]) == [4416.0, 21344.0, 3200.0]
    assert list(f[f["section"] == "gpu"]["name"]) == ["vecAdd(float*, float*, float*, int)", "[CUDA memcpy HtoD]",
                                                      "[CUDA memcpy DtoH]"]
    # without the units row the bare numbers are in no known unit: reported, never read in a guessed one
    with pytest.raises(NoProfileFound, match="no row could be read: line\\(s\\) 4, 5, 6"):
        parse_text_file(tmp_path, text.replace(text.split("\n")[3] + "\n", ""), "bare.txt")


@pytest.mark.parametrize("where", ["csv", "table"])
def test_carriage_return_inside_a_row_is_damage_not_a_digit_join(tmp_path, where):
    """A stray CR inside a number ('5\\r0.1', a terminal's overwrite) had been deleted, giving 50.1, a
    number the input never shows: the row is reported instead (found by the hypothesis fuzz)."""
    if where == "csv":
        text = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
                "5\r0.1,99385786,32,3105805.8,3041179.0,2987340,3777790,216832.4,flash_attention\n"
                "49.9,98990000,32,3093437.5,3041179.0,2987340,3777790,216832.4,gemm\n")
    else:
        text = ("[6/8] Executing 'cuda_gpu_kern_sum' stats report\n\n"
                " Time (%)  Total Time (ns)  Instances   Avg (ns)   Name\n"
                " --------  ---------------  ---------  ----------  ---------------\n"
                "     5\r0.1       99,385,786         32  3,105,805.8  flash_attention\n"
                "     49.9       98,990,000         32  3,093,437.5  gemm\n")
    p = tmp_path / "crlog.txt"
    p.write_bytes(text.encode())
    ps = profconv.parse(str(p))
    assert list(ps.frame["name"]) == ["gemm"]
    assert len(ps.unplaced) == 1 and "flash_attention" in ps.unplaced[0][1]


NSYS_GPU_TRACE = """nsys nvprof --print-gpu-trace ./cppintegration

Start (ns)   Duration (ns)  CorrId  GrdX  GrdY  GrdZ  BlkX  BlkY  BlkZ  Reg/Trd  StcSMem (MB)  DymSMem (MB)  Bytes (MB)  Throughput (MB/s)  SrcMemKd  DstMemKd            Device             Ctx  GreenCtx  Strm              Name            
 -----------  -------------  ------  ----  ----  ----  ----  ----  ----  -------  ------------  ------------  ----------  -----------------  --------  --------  ---------------------------  ---  --------  ----  ----------------------------
 288,824,971            672     128                                                                                0.000             23.810  Pageable  Device    NVIDIA GeForce RTX 3060 (0)    1               7  [CUDA memcpy Host-to-Device]
 291,473,497         65,025     131     1     1     1     4     1     1       32         0.000         0.000                                                     NVIDIA GeForce RTX 3060 (0)    1               7  kernel(int *)               
"""

NSYS_2020_GPU_TRACE = """Exporting [/soft/compilers/cuda/cuda-11.2.0/nsight-systems-2020.4.3/target-linux-x64/reports/gputrace.py report1.sqlite] to console... 

 Start(sec)  Duration(nsec)  CorrId  GrdX  GrdY  GrdZ  BlkX  BlkY  BlkZ  Reg/Trd  StcSMem  DymSMem    Bytes    Thru(MB/s)  SrcMemKd  DstMemKd        Device        Ctx  Strm                  Name                 
 ----------  --------------  ------  ----  ----  ----  ----  ----  ----  -------  -------  -------  ---------  ----------  --------  --------  ------------------  ---  ----  -------------------------------------
   0.355442           5,120      57                                                                         1       0.195  Device    Device    Tesla V100 (0)        1     7  [CUDA memset]
   0.355501          12,352      61   128     1     1   256     1     1       16        0        0                                             Tesla V100 (0)        1     7  vecAdd(float*, float*, float*, int)
"""


@pytest.mark.parametrize(("text", "starts"), [(NSYS_GPU_TRACE, [288824971.0, 291473497.0]),
                                              (NSYS_2020_GPU_TRACE, [355442000.0, 355501000.0])],
                         ids=["nsys-nvprof-2024", "stats-gputrace-2020-seconds"])
def test_nsys_gpu_trace_printed_as_a_table(tmp_path, text, starts):
    """`nsys nvprof --print-gpu-trace` / `nsys stats -r gputrace` printed as a console table: blank
    grid and memcpy cells, a header not indented like its dashes, 'Start(sec)' in seconds (2020).
    Before: 'no profiler output found' (or rows in the wrong section with no times)."""
    ps = parse_text_file(tmp_path, text)
    assert ps.unplaced == []
    assert set(ps.frame["section"]) == {"gpu-trace", "gpu"}  # the trace and its per-name summary
    f = ps.frame[ps.frame["section"] == "gpu-trace"]
    assert list(f["start_ns"]) == pytest.approx(starts, rel=1e-12)
    assert list(f["total_ns"])[1] in (65025.0, 12352.0)
    assert list(f["name"])[1] in ("kernel(int *)", "vecAdd(float*, float*, float*, int)")


def test_damaged_rows_found_by_mutating_these_classes_are_reported(tmp_path):
    """Mutations of the inputs above (a digit group lost, a line shifted) once gave numbers the input
    never shows: a grouped row whose only reading disagrees with itself, a space-grouped number cut
    by a header column, a --print-summary row shifted under its columns. Each is reported now."""
    damaged = NSYS_SPACE_GROUPED.replace("167 549 424  68 290", "167 549 42 68 290")  # cudaMalloc's max lost a digit
    ps = parse_text_file(tmp_path, damaged)
    assert [n for n, _ in ps.unplaced] == [6] and "cudaMalloc" not in list(ps.frame["name"])
    shifted = NCU_SUMMARY.replace("      gpu__compute_memory_throughput", "      __compute_memory_throughput")
    ps = parse_text_file(tmp_path, shifted, "ncu.txt")
    assert [n for n, _ in ps.unplaced] == [9]
    assert 6.59 not in list(ps.frame["value"])


def test_time_column_contradicting_time_pct_is_flagged_even_with_a_bound_row(tmp_path):
    """A Time column that contradicts the printed Time(%) (here one time lost a digit: '009.83 ms' for
    46.20%) is ranked by Time(%) and said next to the table, also when a row prints '<0.01' (no
    value): before, that one row kept the table ranked by its wrong times, unflagged (found by the
    suite's fuzz test on the ECE408 seed report)."""
    text = """Time (%)\tTime\tCalls\tName
46.20\t009.83 ms\t10000\tmxnet::op::unroll_Kernel
45.33\t205.89 ms\t10000\tmxnet::op::matrixMultiply
4.92\t22.367 ms\t14\t[CUDA memcpy HtoD]
3.22\t14.602 ms\t1\tmshadow::cuda::MapPlanLargeKernel
<0.01\t4.0320 us\t1\t[CUDA memcpy DtoD]
"""
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    assert set(f["share_basis"]) == {"time_pct"}
    assert f.sort_values("share", ascending=False).iloc[0]["name"] == "mxnet::op::unroll_Kernel"
    assert f[f["name"] == "[CUDA memcpy DtoD]"]["share"].iloc[0] == 0.0
    assert any("contradicts the printed Time(%)" in n for n in ps.notes)
