"""Real profiler output pasted into documents, value for value, and the classes of damage a document does.

The logs: tests/data/pasted/, nvprof, nsys, ncu, OpenACC and CUDA-profiler output kept in course
reports, READMEs, issue threads, slides, an e-mail reply and source-file comments (markdown fences and
pipe tables, LaTeX, reStructuredText, tab-separated copies, prose in several languages around them).
Each was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path and
commit, under the batch named in the comment above its case. TOP_ROWS holds tests/data/seeds/, three
course reports (profiler output kept, prose dropped; tests/test_parse_seeds.py checks their damage line
by line). Values were checked by hand against the lines they come from; tests/real_logs.py says what a
case holds.

Below the logs: synthetic tests of each class a document revealed (markdown pipe tables with and
without outer bars, LaTeX tabulars, PDF text one cell a line, Jupyter notebooks, C block comments,
HTML line breaks, rows glued or split, rows without their header, elisions, comments after rows), so a
fix holds for the class.
"""

from __future__ import annotations

import pytest

from profconv.errors import NoProfileFound
from tests.real_logs import Case, check_case, check_listed_once, check_no_profile, check_top_row, parse_text_file

# fmt: off
# (file, profiles, rows, ranked section of profile 1, its top row's name (prefix), total ns, calls,
#  rows in the >=90% set, unplaced lines): tests/real_logs.py check_top_row
TOP_ROWS = [
    # the course reports of tests/data/seeds/ (see the docstring)
    ('seeds/001_f908eb42489cd140.log', 4, 176, 'gpu', 'void cudnn::detail::implicit_convolve_sgemm<float, int=1024,', 49974000.0, 1, 4, 0),
    ('seeds/002_b0bcac5cefbf4480.log', 6, 222, 'gpu', 'void fermiPlusCgemmLDS128_batched<...>', 118460000.0, None, 6, 0),
    ('seeds/004_2bdc63d5feab4c65.log', 6, 210, 'gpu', 'conv_forward@layers.c:50 kernel', 7078597000.0, 3600, 1, 0),
]

CASES = [
    # SOURCES.md "Batch 2"
    Case('pasted/alvarobishop-examen-spanish-nvprof-tilde-fences-prose-excerpt.md.log',
         tools=('nvprof', 'nvprof'), rows=40, unplaced=0,
         sections={(1, 'api'): 16, (1, 'gpu'): 4, (2, 'api'): 16, (2, 'gpu'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 2),
               (1, 'api', 'cudaMalloc', 2),
               (2, 'gpu', '[CUDA memcpy DtoH]', 2),
               (2, 'api', 'cudaMalloc', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 23304000.0, 2, 11652000.0),
             (1, 'gpu', 'testInnerStruct(innerStruct*, innerStruct*, int)', 255850.0, 1, 255850.0),
             (1, 'api', 'cudaMalloc', 566380000.0, 2, 283190000.0),
             (1, 'api', 'cuDeviceGetUuid', 200.0, 1, 200.0),
             (2, 'gpu', '[CUDA memcpy DtoH]', 12215000.0, 2, 6107600.0),
             (2, 'gpu', 'testInnerArray(InnerArray*, InnerArray*, int)', 256030.0, 1, 256030.0),
             (2, 'api', 'cudaMalloc', 584890000.0, 2, 292450000.0),
             (2, 'api', 'cuDeviceGetUuid', 200.0, 1, 200.0),
         ],
         notes=[]),
    Case('pasted/csc-openacc-profiling-gpus-nsys-2020-glued-rows-ncu-slides-excerpt.md.log',
         tools=('nsys', 'ncu'), rows=41, unplaced=0,
         sections={(1, 'api'): 6, (1, 'gpu'): 5, (1, 'gpu-memory-size'): 2, (2, 'gpu'): 1,
                   (2, 'ncu-metric'): 27},
         tops=[(1, 'gpu', 'update_65_gpu', 3),
               (1, 'api', 'cuStreamSynchronize', 2),
               (2, 'gpu', 'update_65_gpu', 1)],
         checks=[
             (1, 'gpu', 'update_65_gpu', 43864453.0, 361, 121508.2),
             (1, 'gpu', '[CUDA memset]', 517209.0, 361, 1432.7),
             (1, 'api', 'cuStreamSynchronize', 108005341.0, 1450, 74486.4),
             (1, 'api', 'cuMemAllocHost_v2', 813341.0, 1, 813341.0),
             (2, 'gpu', 'update_65_gpu', 121630.0, 1, 121630.0),
             (2, 'ncu-metric', 'update_65_gpu', 'DRAM Frequency', 'cycle/usecond', 849.78, None),
             (2, 'ncu-metric', 'update_65_gpu', 'Achieved Active Warps Per SM', 'warp', 53.58, None),
         ],
         notes=['profile 1, gpu table, lines 54-60: merged from 2 source tables (starting at lines 54, 59);']),
    Case('pasted/cscfi-user-guide-nvprof-dct8x8-single-spaced.md.log',
         tools=('nvprof',), rows=12, unplaced=0,
         sections={(1, 'gpu'): 12},
         tops=[(1, 'gpu', 'CUDAkernel2DCT(float*, float*, int)', 3)],
         checks=[
             (1, 'gpu', 'CUDAkernel2DCT(float*, float*, int)', 9360000.0, 101, 92680.0),
             (1, 'gpu', '[CUDA memcpy DtoA]', 22590.0, 1, 22590.0),
         ],
         notes=[]),
    Case('pasted/gustavolr548-cpguacamole-mm-cu-comment-nvprof-events-ptbr-times-excerpt.log',
         tools=('nvprof',), rows=2, unplaced=0,
         sections={(1, 'metric'): 2},
         tops=[],
         checks=[
             (1, 'metric', 'mm(double*, double*, double*, int)', 'warps_launched', None, 277699.0, None),
             (1, 'metric', 'mm(double*, double*, double*, int)', 'warp_execution_efficiency', '%', 99.21, None),
         ],
         notes=[]),
    Case('pasted/gustavolr548-cpguacamole-sum-cuda-comment-two-nvprof-runs-excerpt.log',
         tools=('nvprof', 'nvprof'), rows=4, unplaced=0,
         sections={(1, 'gpu'): 2, (2, 'gpu'): 2},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 2),
               (2, 'gpu', '[CUDA memcpy HtoD]', 2)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 41041000.0, 1, 41041000.0),
             (1, 'gpu', 'sum_cuda(double*, double*, int)', 8773500.0, 1, 8773500.0),
             (2, 'gpu', '[CUDA memcpy HtoD]', 49618000.0, 1, 49618000.0),
             (2, 'gpu', 'sum_cuda(double*, double*, int)', 9962600.0, 1, 9962600.0),
         ],
         notes=[]),
    Case('pasted/shishishu-olcf-hw3-nvprof-5-runs-fences.md.log',
         tools=('nvprof', 'nvprof', 'nvprof', 'nvprof', 'nvprof'), rows=75, unplaced=0,
         sections={(1, 'api'): 12, (1, 'gpu'): 3, (2, 'api'): 12, (2, 'gpu'): 3,
                   (3, 'api'): 12, (3, 'gpu'): 3, (4, 'api'): 12, (4, 'gpu'): 3,
                   (5, 'api'): 12, (5, 'gpu'): 3},
         tops=[(1, 'gpu', 'vadd(float const *, float const *, float*, int)', 1),
               (1, 'api', 'cudaMemcpy', 1),
               (2, 'gpu', '[CUDA memcpy HtoD]', 3),
               (2, 'api', 'cudaMalloc', 2),
               (3, 'gpu', '[CUDA memcpy HtoD]', 2),
               (3, 'api', 'cudaMalloc', 2),
               (4, 'gpu', '[CUDA memcpy HtoD]', 2),
               (4, 'api', 'cudaMalloc', 2),
               (5, 'gpu', '[CUDA memcpy HtoD]', 2),
               (5, 'api', 'cudaMalloc', 2)],
         checks=[
             (1, 'gpu', 'vadd(float const *, float const *, float*, int)', 2384920000.0, 1, 2384920000.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 29757000.0, 1, 29757000.0),
             (1, 'api', 'cudaMemcpy', 2473010000.0, 3, 824340000.0),
             (1, 'api', 'cuModuleGetLoadingMode', 381.0, 1, 381.0),
             (2, 'gpu', '[CUDA memcpy HtoD]', 60084000.0, 2, 30042000.0),
             (2, 'gpu', '[CUDA memcpy DtoH]', 14919000.0, 1, 14919000.0),
             (2, 'api', 'cudaMalloc', 152310000.0, 3, 50770000.0),
             (2, 'api', 'cuModuleGetLoadingMode', 356.0, 1, 356.0),
             (3, 'gpu', '[CUDA memcpy HtoD]', 59993000.0, 2, 29997000.0),
             (3, 'gpu', 'vadd(float const *, float const *, float*, int)', 6571300.0, 1, 6571300.0),
             (3, 'api', 'cudaMalloc', 149850000.0, 3, 49950000.0),
             (3, 'api', 'cuModuleGetLoadingMode', 359.0, 1, 359.0),
             (4, 'gpu', '[CUDA memcpy HtoD]', 59962000.0, 2, 29981000.0),
             (4, 'gpu', 'vadd(float const *, float const *, float*, int)', 1032800.0, 1, 1032800.0),
             (4, 'api', 'cudaMalloc', 157620000.0, 3, 52539000.0),
             (4, 'api', 'cuModuleGetLoadingMode', 445.0, 1, 445.0),
             (5, 'gpu', '[CUDA memcpy HtoD]', 56173000.0, 2, 28087000.0),
             (5, 'gpu', 'vadd(float const *, float const *, float*, int)', 587320.0, 1, 587320.0),
             (5, 'api', 'cudaMalloc', 148540000.0, 3, 49514000.0),
             (5, 'api', 'cuModuleGetLoadingMode', 348.0, 1, 348.0),
         ],
         notes=[]),
    Case('pasted/shishishu-olcf-hw4-nvprof-then-ncu2025-fences-excerpt.md.log',
         tools=('nvprof', 'ncu'), rows=39, unplaced=0,
         sections={(1, 'api'): 13, (1, 'gpu'): 5, (2, 'gpu'): 1, (2, 'ncu-metric'): 20},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 1),
               (1, 'api', 'cudaMemcpy', 2),
               (2, 'gpu', 'row_sums(const float *, float *, unsigned long)', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 225830000.0, 1, 225830000.0),
             (1, 'gpu', '[CUDA memset]', 3264.0, 1, 3264.0),
             (1, 'api', 'cudaMemcpy', 232140000.0, 3, 77382000.0),
             (1, 'api', 'cuModuleGetLoadingMode', 362.0, 1, 362.0),
             (2, 'gpu', 'row_sums(const float *, float *, unsigned long)', 3420000.0, 1, 3420000.0),
             (2, 'ncu-metric', 'row_sums(const float *, float *, unsigne', 'DRAM Frequency', 'cycle/usecond', 872.95, None),
             (2, 'ncu-metric', 'row_sums(const float *, float *, unsigne', 'Waves Per SM', None, 0.1, None),
         ],
         notes=[]),
    Case('pasted/simoncblyth-opticks-cuda-profiler-numbered-lines-rst-excerpt.log',
         tools=('cudaprof', 'cudaprof'), rows=49, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-trace'): 36, (2, 'gpu'): 4, (2, 'gpu-trace'): 5},
         tops=[(1, 'gpu', 'render', 1),
               (2, 'gpu', 'render', 1)],
         checks=[
             (1, 'gpu', 'render', 5259416500.0, 1, 5259416500.0),
             (1, 'gpu', 'fill', 50048.0, 2, 25024.0),
             (2, 'gpu', 'render', 5259416500.0, 1, 5259416500.0),
             (2, 'gpu', 'fill', 50048.0, 2, 25024.0),
             (1, 'gpu-trace', 52, 'memcpyHtoD', None, 1312.0),
             (2, 'gpu-trace', 119, 'memcpyDtoH', None, 194016.0),
         ],
         notes=[]),
    Case('pasted/taufique71-olcf-hw4-report-ncu2020-glued-progress.md.log',
         tools=('ncu', 'ncu'), rows=58, unplaced=0,
         sections={(1, 'gpu'): 2, (1, 'ncu-metric'): 52, (2, 'ncu-metric'): 4},
         tops=[(1, 'gpu', 'row_sums(float const *,float*,unsigned long)', 2)],
         checks=[
             (1, 'gpu', 'row_sums(float const *,float*,unsigned long)', 3320000.0, 1, 3320000.0),
             (1, 'gpu', 'column_sums(float const *,float*,unsigned long)', 1420000.0, 1, 1420000.0),
             (1, 'ncu-metric', 'row_sums(float const *,float*,unsigned l', 'Memory Frequency', 'cycle/usecond', 874.41, None),
             (1, 'ncu-metric', 'column_sums(float const *,float*,unsigne', 'Theoretical Occupancy', '%', 100.0, None),
             (2, 'ncu-metric', 'row_sums(float const *,float*,unsigned l', 'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum', 'request', 8388608.0, None),
             (2, 'ncu-metric', 'column_sums(float const *,float*,unsigne', 'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum', 'sector', 33554432.0, None),
         ],
         notes=[]),
    # SOURCES.md "Batch 3"
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
    # SOURCES.md "Batch 4"
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
    # SOURCES.md "Batch 5a"
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
    # SOURCES.md "Batch 5b"
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
]
# fmt: on

NO_PROFILE: list[tuple[str, str]] = [  # (file, why it holds no profile)
    # SOURCES.md "Batch 2"
    ("pasted/oliatsm-rtx4070ti-nsys-fatal-ncu-error-no-profile.md.log",
     "nsys FATAL ERROR and two ncu runs that profiled no kernel"),
]


@pytest.mark.parametrize("case", TOP_ROWS, ids=lambda c: c[0])
def test_pasted_log_top_row(case):
    check_top_row(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_pasted_log(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_pasted_log_holds_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line or "nothing to rank" in line


def test_pasted_logs_are_listed_once():
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
