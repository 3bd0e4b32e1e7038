"""The fourth real corpus (issue 12, session 4): exact values for every file, and the classes they revealed.

Each file listed in SOURCES.md "Batch 4" was copied from the text the search tool's read_file returned for
a public repository (repository, path and commit there). Values were checked by hand against the lines
they come from (see test_parse_corpus_more.py for what a Case holds). Below the files: synthetic tests of
each class of failure a file revealed, so the fix holds for the class and not for the one file.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.test_parse_corpus_more import Case, check_case, check_listed_once, check_no_profile, parse_text_file

# fmt: off
CASES = [
    Case('ncu-text/alexisperry-kitsune-raytrace-cuda-ncu-print-summary-per-gpu-excerpt.log',
         tools=('ncu',), rows=89, unplaced=0,
         sections={(1, 'gpu'): 1, (1, 'ncu-metric'): 88},
         tops=[],
         checks=[
             (1, 'gpu', 'PathTracer(int, Pixel *, int)', None, 1, 11865617000.0),
             (1, 'ncu-metric', 'PathTracer', 'gpu__time_duration.sum', 'second', 11.865617, None),
             (1, 'ncu-metric', 'PathTracer', 'gpc__cycles_elapsed.max', 'cycle', 13009685195.0, None),
             (1, 'ncu-metric', 'PathTracer', 'launch__waves_per_multiprocessor', None, 25.283951, None),
             (1, 'ncu-metric', 'PathTracer', 'sm__cycles_active.avg', 'cycle', 12934628788.064816, None),
             (1, 'ncu-metric', 'PathTracer', 'dram__bytes.sum.per_second', 'Kbyte/second', 55.382875, None),
             (1, 'ncu-metric', 'PathTracer', 'sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active',
              '%', 13.043705, None),
         ],
         notes=['profile 1, gpu table, lines 7-64: ncu --print-summary prints']),
    Case('pasted/joeboh71-kisystem-performance-parser-py-nsys-decimal-comma-de-windows.py.log',
         tools=('nsys',), rows=3, unplaced=1,
         sections={(1, 'gpu'): 3},
         tops=[(1, 'gpu', '[CUDA memcpy Host-to-Device]', 3)],
         checks=[
             (1, 'gpu', 'firFilterKernel(const float *, const float *, float *)', 1888.0, 1, 1888.0),
             (1, 'gpu', '[CUDA memcpy Host-to-Device]', 3520.0, 2, 1760.0),
             (1, 'gpu', '[CUDA memcpy Device-to-Host]', 3328.0, 1, 3328.0),
         ],
         notes=['profile 1, gpu table, lines 548-555: merged from 2 source tables']),
    Case('pasted/tyler-hilbert-linreg-t4-nsys-markdown-pipe-tables-readme.md.log',
         tools=('nsys', 'nsys'), rows=35, unplaced=0,
         sections={(1, 'api'): 7, (1, 'gpu'): 7, (2, 'api'): 15, (2, 'gpu'): 6},
         tops=[(1, 'gpu', '[CUDA memcpy Host-to-Device]', 4), (1, 'api', 'cudaMalloc', 2),
               (2, 'gpu', '[CUDA memcpy Host-to-Device]', 2), (2, 'api', 'cudaMalloc', 2)],
         checks=[
             (1, 'api', 'cudaMalloc', 126094891.0, 8, 15761861.4),
             (1, 'api', 'cuModuleGetLoadingMode', 988.0, 1, 988.0),
             (1, 'gpu', 'calculatePartialCoefficients(const float *, const float *, float, float, float *, float *, int)',
              88766.0, 1, 88766.0),
             (1, 'gpu', '[CUDA memset]', 3840.0, 4, 960.0),
             (2, 'api', 'cuGetProcAddress_v2', 280738.0, 766, 366.5),
             (2, 'api', 'cudaStreamGetCaptureInfo_v2_v11030', 17083.0, 25, 683.3),
             (2, 'gpu', 'void dot_kernel<float, (int)128, (int)0, cublasDotParams<cublasGemvTensor<const float>, cublasGemvT…',
              53727.0, 3, 17909.0),
             (2, 'gpu', '[CUDA memcpy Device-to-Host]', 70143.0, 6, 11690.5),
         ],
         notes=['profile 1, gpu table, lines 24-34: merged from 2 source tables',
                'profile 2, gpu table, lines 59-68: merged from 2 source tables']),
    Case('nsys-text/mystous-vllm-hybrid-qwen7b-b200-nsys2025-format-table-grid-in-md.log',
         tools=('nsys',), rows=47, unplaced=0,
         sections={(1, 'api'): 18, (1, 'gpu'): 28, (1, 'nvtx'): 1},
         tops=[(1, 'gpu', 'fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP16VarSeqQ128Kv128PersistentContext', 8),
               (1, 'api', 'cudaLaunchKernel', 5)],
         checks=[
             (1, 'gpu', 'fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCausalP16VarSeqQ128Kv128PersistentContext',
              24038586640.0, 333648, 72047.7),
             (1, 'gpu', 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)',
              979257472.0, 12884, 76005.7),
             (1, 'gpu', 'void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_twoshot_sync<(flashinfer::trtllm_…',
              88744119.0, 912, 97307.1),
             (1, 'api', 'cudaLaunchKernel', 5261402681.0, 1116364, 4713.0),
             (1, 'api', 'cuTensorMapEncodeTiled', 359996165.0, 3041024, 118.4),
             (1, 'api', 'cudaHostAlloc', 27771765.0, 80, 347147.1),
             (1, 'nvtx', 'NCCL:ncclAllGather', 448485486.0, 12884, 34809.5),
         ],
         notes=[]),
    Case('pasted/reguly-laplace-vector-a100-h100-nsys-markdown-right-aligned-backticks.md.log',
         tools=('nsys',) * 8, rows=16, unplaced=0,
         sections={(p, 'gpu'): 2 for p in range(1, 9)},
         tops=[(1, 'gpu', 'stencil(int, int, float *, float *)', 2), (8, 'gpu', 'stencil_vector_half2', 2)],
         checks=[
             (1, 'gpu', 'stencil(int, int, float *, float *)', 919138.0, 2, 459569.0),
             (2, 'gpu', 'copy(int, int, __half *, __half *)', 755554.0, 2, 377777.0),
             (3, 'gpu', 'stencil_vector(int, int, float4 *, float4 *)', 761378.0, 2, 380689.0),
             (5, 'gpu', 'stencil(int, int, float *, float *)', 730788.0, 2, 365394.0),
             (7, 'gpu', 'stencil_vector(int, int, float4 *, float4 *)', 571363.0, 2, 285681.5),
             (8, 'gpu', 'copy_vector_half(int, int, __half2 *, __half2 *)', 342850.0, 2, 171425.0),
         ],
         notes=[]),
    Case('pasted/sovego-parallelism-labs-russian-report-nvprof-openacc-markdown-tables.md.log',
         tools=('nvprof', 'nvprof'), rows=8, unplaced=0,
         sections={(1, 'gpu'): 3, (2, 'gpu'): 3, (2, 'openacc'): 2},
         tops=[(1, 'gpu', 'main_16_gpu', 3), (2, 'openacc', 'acc_compute_construct@iostream:11', 1)],
         checks=[
             (1, 'gpu', 'main_16_gpu', 131710.0, 1, 131710.0),
             (1, 'gpu', 'main_16_gpu__red', 100190.0, 1, 100190.0),
             (2, 'gpu', 'main_9_gpu', 116990.0, 1, 116990.0),
             (2, 'gpu', 'main_16_gpu__red', 88543.0, 1, 88540.0),
             (2, 'openacc', 'acc_compute_construct@iostream:11', 21785000.0, 1, 21785000.0),
             (2, 'openacc', 'acc_compute_construct@iostream:18', 585870.0, 1, 585870.0),
         ],
         notes=[]),
    Case('pasted/kevinjordil-cnm-lab5-mlp-nvprof-latex-escaped-percent-no-eol.md.log',
         tools=('nvprof',), rows=16, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 3},
         tops=[(1, 'gpu', 'CUDA memcpy HtoH', 3), (1, 'api', 'cudaMemcpy', 3)],
         checks=[
             (1, 'gpu', 'CUDA memcpy HtoH', 15416300000.0, 410754, 37531.0),
             (1, 'gpu', 'backprop_kernel(float*, float*, float*, float*, float*, float*)', 11691700000.0, 68459, 170780.0),
             (1, 'gpu', 'CUDA memset', 5623530000.0, 136918, 41072.0),
             (1, 'api', 'cudaMemcpy', 145662000000.0, 410754, 354620.0),
             (1, 'api', 'cudaMallocManaged', 344800000.0, 7, 49257000.0),
             (1, 'api', 'cuDeviceGetUuid', 938.0, 1, 938.0),
         ],
         notes=[]),
    Case('nsys-text/mystous-vllm-hybrid-r1-671b-b200-nsys2025-format-table-osrt-excerpt.log',
         tools=('nsys',), rows=56, unplaced=0,
         sections={(1, 'api'): 18, (1, 'gpu'): 33, (1, 'nvtx'): 1, (1, 'os-runtime'): 4},
         tops=[(1, 'api', 'cudaMemcpyAsync', 5), (1, 'os-runtime', 'poll', 4)],
         checks=[
             (1, 'gpu', 'kernel_cutlass_kernel_vllmvllm_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__t…',
              6970246136.0, 169011, 41241.4),
             (1, 'gpu', 'void <unnamed>::multimem_all_reduce_kernel<c10::BFloat16, (int)16>(T1 *, unsigned long, unsigned in…',
              76652072.0, 123, 623187.6),
             (1, 'api', 'cudaMemcpyAsync', 3521583822.0, 14529, 242383.1),
             (1, 'api', 'cuTensorMapEncodeTiled', 143928791.0, 1034953, 139.1),
             (1, 'nvtx', 'NCCL:ncclAllGather', 49650381851.0, 3968, 12512697.0),
             (1, 'os-runtime', 'poll', 6532794715988.0, 94192, 69356152.5),
             (1, 'os-runtime', 'sem_clockwait', 2130023510261.0, 213, 10000110376.8),
         ],
         notes=[]),
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [
    ("foreign/abenich7-cpu-gpu-inference-pytorch-profiler-top-cuda-ops-no-profile.log",
     "PyTorch profiler key_averages tables (Self CUDA %, CUDA total, # of Calls): not a CUDA profiler's output"),
    ("foreign/muhammadkhan1040-pdc-julia-timeroutputs-no-eol-no-profile.log",
     "a Julia TimerOutputs table (ncalls, time, %tot under box-drawing rules), no final newline"),
    ("foreign/krzystekmatej-gpu-path-tracer-section-timings-no-profile-excerpt.log",
     "a renderer's own 'Section: …, Runs: …, Total Time: … ms, Percentage of Total Time' log lines"),
    ("foreign/josiprz-game-of-life-cprofile-windows-paths-no-profile.log",
     "Python cProfile output with Windows paths (ncalls tottime percall cumtime)"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_corpus4_file(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_corpus4_no_profile(path, why, cli):
    check_no_profile(path, cli)


def test_corpus4_files_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes




NCU_SUMMARY_2021 = """==PROF== Disconnected from process 4242
==PROF== Report: /tmp/r.ncu-rep
[4242] app@127.0.0.1
  Device 0
    Kokkos::<unnamed>::init_lock_array_kernel_atomic(), Block Size 256, Grid Size 512, 3 invocations |
      Section: GPU Speed Of Light Throughput
      Metric Name                          Metric Unit   Minimum     Maximum     Average    |
      ------------------------------------ ------------- ----------- ----------- -----------
      gpc__cycles_elapsed.max              cycle         4157.000000 4301.000000 4200.500000
      gpu__time_duration.sum               usecond       6.336000    7.100000    6.700000   |
      launch__waves_per_multiprocessor                   0.592593    0.592593    0.592593   |

    conv(float *, int), Block Size 128, Grid Size 64, 2 invocations |
      Section: GPU Speed Of Light Throughput
      Metric Name                          Metric Unit   Minimum     Maximum     Average    |
      ------------------------------------ ------------- ----------- ----------- -----------
      gpu__time_duration.sum               msecond       1.500000    2.500000    2.000000   |
      dram__bytes.sum.per_second           Gbyte/second  10.000000 12.000000     11.000000  |
""".replace("|\n", "\n")  # | marks the end of a line padded with spaces


@pytest.mark.parametrize("drop_prof_lines", [False, True], ids=["with-prof-lines", "pasted-without"])
def test_ncu_print_summary_2021_layout(tmp_path, drop_prof_lines):
    """ncu 2021-2022 `--print-summary per-gpu|per-kernel`: the kernel line says `Block Size N, Grid Size M,
    K invocations`, the device line has no CC, and the Minimum/Maximum/Average cells are flush LEFT in
    their columns (flush right since 2023). Before: 'no profiler output found' (the ==PROF== Report line
    taken for a run that saved a file). A row whose cell straddles two columns is reported."""
    text = NCU_SUMMARY_2021 if not drop_prof_lines else NCU_SUMMARY_2021.split("\n", 2)[2]
    ps = parse_text_file(tmp_path, text)
    f = ps.frame
    straddling = text.split("\n").index(next(x for x in text.split("\n") if "dram__bytes" in x)) + 1
    assert [n for n, _ in ps.unplaced] == [straddling]  # '10.000000 12.000000' straddles the Minimum and Maximum columns
    gpu = f[f["section"] == "gpu"].set_index("name")
    assert list(gpu.index) == ["Kokkos::<unnamed>::init_lock_array_kernel_atomic()", "conv(float *, int)"]
    assert list(gpu["calls"]) == [3, 2]
    assert list(gpu["avg_ns"]) == [6700.0, 2e6]
    assert list(gpu["min_ns"]) == [6336.0, 1.5e6] and list(gpu["max_ns"]) == [7100.0, 2.5e6]
    assert gpu["total_ns"].isna().all()
    m = f[f["section"] == "ncu-metric"].set_index("metric")
    assert len(m) == 4  # one row per metric: Minimum and Maximum beside the Average
    assert m.loc["gpc__cycles_elapsed.max", "value"] == 4200.5
    assert m.loc["gpc__cycles_elapsed.max", "value_min"] == 4157.0
    assert m.loc["gpc__cycles_elapsed.max", "value_max"] == 4301.0
    assert pd.isna(m.loc["launch__waves_per_multiprocessor", "unit"])  # no unit printed


MD_TABLES = """#### Table 1: CUDA 'cuda_gpu_kern_sum'
| Time (%) | Total Time (ns) | Instances | Avg (ns)   | Name                                  |
|----------|-----------------|-----------|------------|---------------------------------------|
| 60.0     | 25’056          | 2         | 12’528.0   | `vectorAdd(const float *, float *)`   |
| 40.0     | 16’704          | 1         | 16’704.0   | **scale(float *)**                    |

| Time (%) | Total Time (ns) | Num Calls | Avg (ns) | Name |
| :--- | ---: | :---: | --- | :--- |
| **98.8** | 220’092’864 | 3 | 73’364’288.0 | `cudaMalloc` |
| 1.2 | 2’268’608 | 3 | 756’202.7 | cudaMemcpy | 17 |
| 0.0 | 76’256 | 1 | 76’256.0 | `cudaLaunchKernel` |

| Name | Count | Total |
|------|-------|-------|
| apples | 3 | 12 |

 ** CUDA API Summary (cuda_api_sum):

+----------+-----------------+-----------+----------+--------------+
| Time (%) | Total Time (ns) | Num Calls | Avg (ns) |     Name     |
+----------+-----------------+-----------+----------+--------------+
|     80.0 |           80000 |         4 |  20000.0 | cudaMemcpy   |
|     20.0 |           20000 |         1 |  20000.0 | cudaFree     |
+----------+-----------------+-----------+----------+--------------+
"""


def test_nsys_markdown_pipe_tables(tmp_path):
    """nsys stats tables written as markdown pipe tables (course reports, READMEs) or printed by
    `nsys stats --format table` (a +---+ grid): a header with
    Time (%) and Total Time, the `|---|` rule (any alignment colons), `| … |` rows; bold cells and
    backticked names kept as the text inside; a heading that names the report says which; a row with
    more cells than the header is reported. Thousands joined by a typographic apostrophe (25’056, a
    word processor's autocorrect of the Swiss 25'056) read as grouping. A markdown table that is no
    profiler's is left alone. Before: 'no profiler output found' (every table ignored)."""
    ps = parse_text_file(tmp_path, MD_TABLES, "report.md")
    f = ps.frame
    assert [n for n, _ in ps.unplaced] == [10]  # the row with an extra cell
    assert list(zip(f["section"], f["name"], f["total_ns"], f["calls"], f["avg_ns"])) == [
        ("gpu", "vectorAdd(const float *, float *)", 25056.0, 2, 12528.0),
        ("gpu", "scale(float *)", 16704.0, 1, 16704.0),
        ("api", "cudaMalloc", 220092864.0, 3, 73364288.0),
        ("api", "cudaLaunchKernel", 76256.0, 1, 76256.0),
        ("api", "cudaMemcpy", 80000.0, 4, 20000.0),  # `nsys stats --format table`: a +---+ grid
        ("api", "cudaFree", 20000.0, 1, 20000.0)]
    assert list(f["time_pct"]) == [60.0, 40.0, 98.8, 0.0, 80.0, 20.0]
    assert list(f["profile"]) == [1, 1, 1, 1, 2, 2]
    assert all("apples" not in n for n in f["name"])


def test_typographic_apostrophe_groups_only_between_digit_groups():
    from profconv.parse.text import normalize

    assert normalize("25’056 and 1’234’567.5\n") == "25'056 and 1'234'567.5\n"
    assert normalize("l’hôte, O’Neil, 3’14, 12’3456\n") == "l’hôte, O’Neil, 3’14, 12’3456\n"


C_COMMENT_EVENTS = """#include <stdio.h>

/*
 * Tempo, warps_launched e warp_execution_efficiency GPU OpenMP:
 *
 * real    0m5.384s
 *
 * ==21740== NVPROF is profiling process 21740, command: ./mmGPU
 * ==21740== Profiling application: ./mmGPU
 * ==21740== Profiling result:
 * ==21740== Event result:
 * Invocations                                Event Name         Min         Max         Avg       Total
 * Device "GeForce GT 1030 (0)"
 *     Kernel: mm$_omp_fn$0
 *               1                            warps_launched          72          72          72          72
 *
 *               ==21740== Metric result:
 *               Invocations                  Metric Name           Metric Description         Min         Max         Avg
 *               Device "GeForce GT 1030 (0)"
 *                   Kernel: mm$_omp_fn$0
 *                             1    warp_execution_efficiency    Warp Execution Efficiency      86.81%      86.81%      86.81%
 */

* Running nvprof ./mmGPU
* Running nvprof ./mmGPU 2
"""


def test_output_pasted_in_a_c_block_comment(tmp_path):
    """Results pasted into a C block comment whose lines start with ' * ' (as course exercises keep
    them, PUC Minas' mm.c/mm.cu): the prefix is removed inside /* … */ only (rai's '* Running'
    lines outside a comment stay commands). Before: 'no profiler output found'."""
    from profconv.parse.text import normalize

    ps = parse_text_file(tmp_path, C_COMMENT_EVENTS, "mm.c")
    f = ps.frame
    assert list(zip(f["metric"], f["value"], f["calls"], f["line_start"])) == [
        ("warps_launched", 72.0, 1, 15), ("warp_execution_efficiency", 86.81, 1, 21)]
    lines = normalize(C_COMMENT_EVENTS).split("\n")
    assert lines[23:25] == ["* Running nvprof ./mmGPU", "* Running nvprof ./mmGPU 2"]
    assert lines[3] == "Tempo, warps_launched e warp_execution_efficiency GPU OpenMP:"


BR_MARKDOWN = """  nvprof ./add <br>
  ==3023== NVPROF is profiling process 3023, command: ./add <br>
Max error: 0 <br>
==3023== Profiling application: ./add <br>
==3023== Profiling result:  <br>

       |Type           |Time(%) |Time     |Calls  |Avg     |Min     |  Max   |Name                     |
       |---------------|------- |-------- |-------|--------|--------|--------|------------------------ |
       |GPU activities:|100.00% |68.815ms |    1  |68.815ms|68.815ms|68.815ms|add(int, float*, float*) |
       |               |  0.00% | 1.1us   |    1  | 1.1us  | 1.1us  | 1.1us  |k<br>                    |
"""


def test_html_line_breaks_end_lines_not_names(tmp_path):
    """A README that ended each line with '<br>' (a line break in markdown): the tag is not part of
    the command line; a template argument written the same way ('k<br>', no blank before) stays in
    the kernel's name. The nvprof table is an indented markdown table."""
    ps = parse_text_file(tmp_path, BR_MARKDOWN, "README.md")
    assert [(p.command, p.pid) for p in ps.profiles] == [("./add", 3023)]
    f = ps.frame
    assert list(zip(f["name"], f["total_ns"], f["calls"])) == [
        ("add(int, float*, float*)", 68815000.0, 1), ("k<br>", 1100.0, 1)]


def test_latex_escaped_percent_signs(tmp_path):
    """An nvprof summary that went through a LaTeX round trip ('Time(\\%)', '47.10\\%'; the brackets
    of '[CUDA memcpy HtoH]' lost on the way): the escapes are undone after a digit or '(' only.
    Before: 'no row could be read'."""
    from profconv.parse.text import normalize

    text = ("==1== Profiling result:\n"
            "            Type  Time(\\%)      Time     Calls       Avg       Min       Max  Name\n"
            " GPU activities:   60.00\\%  6.0000ms         2  3.0000ms  2.0000ms  4.0000ms  CUDA memcpy HtoH\n"
            "                   40.00\\%  4.0000ms         1  4.0000ms  4.0000ms  4.0000ms  k(float*)\n")
    f = parse_text_file(tmp_path, text).frame
    assert list(zip(f["name"], f["time_pct"], f["total_ns"])) == [
        ("CUDA memcpy HtoH", 60.0, 6e6), ("k(float*)", 40.0, 4e6)]
    assert normalize("50\\% and a\\%b\n") == "50% and a\\%b\n"


MD_VARIANTS = """1. **Kernel Execution Time**
```
| Time (%) | Total Time (ns) | Instances | Avg (ns) |
| -------- | --------------- | --------- | -------- |
| 100.0    | 169,979         | 3         | 56,659.7 |
```
2. **Memory Transfer Time**
```
| Time (%) | Total Time (ns) | Operation     |
| -------- | --------------- | ------------- |
| 99.7     | 2,306,159       | Host → Device |
| 0.3      | 7,648           | Device → Host |
```

| Kernel Name                                 | Time (%) | Total Time (ns) | Avg (ns) | Calls |
|---------------------------------------------|----------|-----------------|----------|-------|
| `conv2D(float*, float*, float*, int, int)`  | 91.8     | 6,941,948       | 34,537   | 201   |
| `he_normal(float*, unsigned int)`           | 8.2      | 617,125         | 77,140   | 8     |
"""


def test_nsys_markdown_tables_cut_or_reordered_by_hand(tmp_path):
    """Course reports keep only some of nsys's columns, or reorder them: a table without a column
    naming its rows is reported (never dropped); an `Operation` column names memory operations; a
    `Kernel Name` column first, with `Calls` instead of `Instances`, is a kernel table (and kernels
    named by their signatures rank as GPU activities, not OS runtime calls)."""
    ps = parse_text_file(tmp_path, MD_VARIANTS, "report.md")
    f = ps.frame
    assert [n for n, _ in ps.unplaced] == [5]
    assert list(zip(f["section"], f["name"], f["total_ns"])) == [
        ("gpu", "Host → Device", 2306159.0), ("gpu", "Device → Host", 7648.0),
        ("gpu", "conv2D(float*, float*, float*, int, int)", 6941948.0),
        ("gpu", "he_normal(float*, unsigned int)", 617125.0)]
    assert f["calls"].isna().tolist() == [True, True, False, False] and list(f["calls"].dropna()) == [201, 8]


GLUED_DEVICE_KERNEL = """/*
Tempo sequencial: 1m7.160s
==30228== Event result:
Invocations                                Event Name         Min         Max      Avg       Total
Device "GeForce GT 1030 (0)"    Kernel: mm$_omp_fn$0
          1                            warps_launched      154224      154224   154224      154224

==30228== Metric result:
Invocations                               Metric Name                       Metric Description         Min         Max         Avg
Device "GeForce GT 1030 (0)"    Kernel: mm$_omp_fn$0
          1                 warp_execution_efficiency                Warp Execution Efficiency      98.32%      98.32%      98.32%
*/
"""


def test_nvprof_events_with_the_device_line_joined_to_the_kernel_line(tmp_path):
    """nvprof --events/--metrics results pasted into a course exercise's comment (PUC Minas mm.c) with
    the device and kernel lines joined ('Device "GeForce GT 1030 (0)"    Kernel: mm$_omp_fn$0') and
    no 'Profiling result:' line above. Before: 'no profiler output found'."""
    f = parse_text_file(tmp_path, GLUED_DEVICE_KERNEL, "mm.c").frame
    assert list(zip(f["name"], f["metric"], f["value"], f["calls"], f["line_start"])) == [
        ("mm$_omp_fn$0", "warps_launched", 154224.0, 1, 6),
        ("mm$_omp_fn$0", "warp_execution_efficiency", 98.32, 1, 11)]


SPLIT_TIMES = """======== Profiling result:
Time (%) Time Calls Avg Min Max Name
31.11% 1.15312s 18 64.062ms 64.039ms 64.083ms calc3_273_gpu
23.35% 865 0.68ms 20 43.284ms 43.244ms 43.325ms calc1_142_gpu
...
======== API calls:
Time (%) Time Calls Avg Min Max Name
92.65% 3.49314s 62 56.341ms 1.8850us 70.771ms cuStreamSynchronize
3.78% 142 0.36ms 1 142.36ms 142.36ms 142.36ms cuDevicePrimaryCtxRetain
"""


def test_times_split_by_a_document_converter_are_reported(tmp_path):
    """An OpenACC tutorial's nvprof summary after a document conversion split '865.68ms' into
    '865 0.68ms' (and '142.36ms' into '142 0.36ms'): such a row has a cell too many and is reported,
    never read with its columns shifted (865 calls, 0.68 ms)."""
    ps = parse_text_file(tmp_path, SPLIT_TIMES)
    assert list(ps.frame["name"]) == ["calc3_273_gpu", "cuStreamSynchronize"]
    assert [n for n, _ in ps.unplaced] == [4, 9]
