"""Real nvprof logs, value for value, and the classes of nvprof output they revealed.

The logs: tests/data/nvprof-{old,new,um,trace,csv,metrics,cpu}/, nvprof (CUDA 5 to 11) as its users
saved it: summaries in text and --csv (times in any unit, normalized units, Unified Memory tables),
--print-gpu-trace traces, --metrics/--events results, and a --cpu-profiling tree that holds no profile.
Each log was copied from a public repository; its row in tests/data/SOURCES.md gives repository, path
and commit (the first corpus in its "Table", later logs under the batch named in the comment above
their cases). Values were checked by hand against the lines they come from; tests/real_logs.py says
what a case holds.

Below the logs: synthetic tests of each class of nvprof output a log revealed (per-GPU summaries, traces
in one normalized unit, names cut mid-word by a streaming writer), so a fix holds for the class. nvprof
output pasted into documents is in test_parse_real_pasted.py.
"""

from __future__ import annotations

import pytest

from profconv.errors import NoProfileFound
from tests.real_logs import DATA, Case, check_case, check_listed_once, check_no_profile, check_top_row, parse_text_file

MXNET_REDUCE = ("void mshadow::cuda::MapPlanKernel<mshadow::sv::saveto, int=8, mshadow::expr::Plan<mshadow::Tensor"
                "<mshadow::gpu, int=2, float>, float>, mshadow::expr::Plan<mshadow::expr::ReduceWithAxisExp<"
                "mshadow::red::maximum, mshadow::Tensor<mshadow::gpu, int=3, float>, float, int=3, bool=1, int=2>, "
                "float>>(mshadow::gpu, unsigned int, mshadow::Shape<int=2>, int=2)")

# fmt: off
# (file, profiles, rows, ranked section of profile 1, its top row's name (prefix), total ns, calls,
#  rows in the >=90% set, unplaced lines): tests/real_logs.py check_top_row
TOP_ROWS = [
    # the first corpus: SOURCES.md "Table"
    ('nvprof-csv/dengxiaosys-fa2-gtx1060-metrics-trace-overflow.csv.log', 1, 23, 'metric', '_GLOBAL__N__c5035a89_14_fa2_forward_cu_26943507::fa2_forward', None, None, 0, 0),
    ('nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log', 1, 13, 'gpu', 'hysteresis_kernel(ImageView<bool>, ImageView<bool>, int, int', 1285081000.0, 13672, 5, 0),
    ('nvprof-csv/leimingyu-magus-sobolqrng-gputrace.csv.log', 1, 6, 'gpu', '[CUDA memcpy DtoH]', 95660029.0, 1, 1, 0),
    ('nvprof-csv/nanzifan-rodinia-cfd-gpusummary-um.csv.log', 1, 10, 'gpu', 'cuda_compute_flux(int, int*, float*, float*, float*)', 268352833.99999997, 6000, 2, 0),
    ('nvprof-new/marcotrambusti-kmeans-windows-timer-warning.log', 1, 23, 'gpu', 'assignClusters(float const *, int*, float*, int*, float*, fl', 13677300000.0, 16800, 1, 0),
    ('nvprof-new/nikikanaparthi-tiled-matmul.log', 1, 22, 'gpu', 'tiledMatrixMultiply(float const *, float const *, float*, in', 4324100.0, 2, 3, 0),
    ('nvprof-new/octaviodiazg-sumMatrixGPUManaged-um-warning.log', 1, 16, 'gpu', 'sumMatrixGPU(float*, float*, float*, int, int)', 12948000.0, 2, 1, 0),
    ('nvprof-new/oliatsm-cnn-cifar10-openacc-excl.log', 1, 205, 'gpu', '_8layers_c_conv_forward_85_gpu', 851750000.0, 3600, 2, 0),
    ('nvprof-new/samhachem99-vector-add-streams.log', 1, 21, 'gpu', '[CUDA memcpy HtoD]', 8025100.0, 60, 2, 0),
    ('nvprof-new/tyler-cs566-reductions.log', 1, 20, 'gpu', 'fill(void)', 2202700.0, 400, 5, 0),
    ('nvprof-old/howardjchen-sparse-cnn-coo.log', 1, 16, 'gpu', 'convLayerGPU(short*, short*, short*, short*, int*, int*)', 43111000.0, 1, 1, 0),
    ('nvprof-old/thrust2d-blend-thrust-templates.log', 1, 22, 'gpu', '[CUDA memcpy HtoD]', 205990.0, 2, 2, 0),
    ('nvprof-old/thrust2d-cudasample-bicubicTexture.log', 1, 45, 'gpu', 'void thrust::for_each_kernel<uchar4, d_render_functor>(thrus', 1064300.0, 20, 7, 0),
    ('nvprof-old/thrust2d-opencv-pyrup.log', 1, 20, 'gpu', '[CUDA memcpy DtoH]', 82878.0, 1, 3, 0),
    ('nvprof-trace/nanzifan-babelstream-cudastream-gputrace-truncated.log', 1, 75, 'gpu', 'void triad_kernel<double>(double*, double const *, double co', 20270200.0, 11, 5, 0),
    ('nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log', 1, 8, 'gpu', '[CUDA memcpy HtoD]', 69862.0, 3, 2, 0),
    ('nvprof-um/nanzifan-rodinia-bfs-um-thrashes.log', 1, 17, 'api', 'cudaMallocManaged', 221260000.0, 7, 1, 0),
    ('nvprof-um/nichitapavel-nbody-v100-multi.log', 7, 98, 'api', 'cudaMallocManaged', 159250000.0, 1, 1, 0),
]

CASES = [
    # SOURCES.md "Batch 2"
    Case('nvprof-csv/jakemdaly-pytorch-jetson-nano-metrics-mangled-excerpt.csv.log',
         tools=('nvprof',), rows=9, unplaced=0,
         sections={(1, 'metric'): 9},
         tops=[],
         checks=[
             (1, 'metric', '_ZN83_GLOBAL__N__59_tmpxft_00000286_0000', 'achieved_occupancy', None, 0.435306, None),
             (1, 'metric', '_ZN83_GLOBAL__N__59_tmpxft_00000286_0000', 'sm_efficiency', '%', 86.509837, None),
         ],
         notes=[]),
    Case('nvprof-csv/jakemdaly-tensorflow-gputrace-seconds-correlation-id-excerpt.csv.log',
         tools=('nvprof',), rows=26, unplaced=0,
         sections={(1, 'gpu'): 7, (1, 'gpu-trace'): 19},
         tops=[(1, 'gpu', 'redzone_checker', 1)],
         checks=[
             (1, 'gpu', 'redzone_checker', 47380441.0, 2, 23690220.5),
             (1, 'gpu', '[CUDA memcpy DtoH]', 6667.0, 1, 6667.0),
             (1, 'gpu-trace', 7, '[CUDA memset]', 10466675000.0, 10677.0),
             (1, 'gpu-trace', 25, '[CUDA memcpy DtoH]', 22874545000.0, 6667.0),
         ],
         notes=[]),
    Case('nvprof-csv/jazzthejackrabbit-epicflow-units-in-cells.csv.log',
         tools=('nvprof',), rows=4, unplaced=0,
         sections={(1, 'gpu'): 4},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 4)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 542360000.0, 45, 12052000.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 117720000.0, 10, 11772000.0),
         ],
         notes=[]),
    Case('nvprof-csv/nanzifan-rodinia-cfd-summary-csv-mixed-unit-row-um.csv.log',
         tools=('nvprof',), rows=29, unplaced=0,
         sections={(1, 'api'): 19, (1, 'gpu'): 7, (1, 'unified-memory'): 3},
         tops=[(1, 'gpu', 'cuda_compute_flux(int, int*, float*, float*, float', 2),
               (1, 'api', 'cudaMemcpyToSymbol', 2),
               (1, 'unified-memory', 'Total CPU Page faults', 0)],
         checks=[
             (1, 'gpu', 'cuda_compute_flux(int, int*, float*, float*, float', 302355298.0, 6000, 50392.0),
             (1, 'gpu', '[CUDA memset]', 1248.0, 1, 1248.0),
             (1, 'api', 'cudaMemcpyToSymbol', 1077558077.0, 5, 215511615.0),
             (1, 'api', 'cudaGetDevice', 1169.0, 1, 1169.0),
             (1, 'unified-memory', 'Total CPU Page faults', None, 49, None),
             (1, 'unified-memory', 'Gpu page fault groups', 0.0, None, None),
         ],
         notes=[]),
    Case('nvprof-metrics/ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log',
         tools=('nvprof',), rows=24, unplaced=0,
         sections={(1, 'metric'): 24},
         tops=[],
         checks=[
             (1, 'metric', 'changeCellState(char*, char*, int, int)', 'l1_cache_global_hit_rate', '%', 0.0, None),
             (1, 'metric', 'changeCellState(char*, char*, int, int)', 'gst_efficiency', '%', 98.67, None),
         ],
         notes=[]),
    Case('nvprof-metrics/hustzhaowei-darknet19-v100-metrics-app-table-excerpt.log',
         tools=('nvprof',), rows=17, unplaced=0,
         sections={(1, 'metric'): 17},
         tops=[],
         checks=[
             (1, 'metric', 'normalize_kernel(int, float*, float*, fl', 'inst_per_warp', None, 422.0, None),
             (1, 'metric', 'normalize_kernel(int, float*, float*, fl', 'gst_transactions', None, 40960.0, None),
         ],
         notes=[]),
    Case('nvprof-metrics/sarats-xgc-cabana-kokkos-metrics-fragment-sci-notation-excerpt.log',
         tools=('nvprof',), rows=21, unplaced=0,
         sections={(1, 'metric'): 21},
         tops=[],
         checks=[
             (1, 'metric', '__nv_static_59__46_tmpxft_0001a605_00000', 'warp_execution_efficiency', '%', 89.69, None),
             (1, 'metric', '__nv_static_59__46_tmpxft_0001a605_00000', 'tex_cache_throughput', 'GB/s', 2503.3, None),
         ],
         notes=[]),
    Case('nvprof-new/andrewxu22-rodinia-bfs-normalized-ms-units-row-v100.log',
         tools=('nvprof',), rows=22, unplaced=0,
         sections={(1, 'api'): 12, (1, 'gpu'): 2, (1, 'unified-memory'): 8},
         tops=[(1, 'gpu', 'Kernel(Node*, int*, bool*, bool*, bool*, int*, int', 1),
               (1, 'api', 'cudaMallocManaged', 1),
               (1, 'unified-memory', 'Gpu page fault groups', 2)],
         checks=[
             (1, 'gpu', 'Kernel(Node*, int*, bool*, bool*, bool*, int*, int', 12144490.0, 12, 1012041.0),
             (1, 'gpu', 'Kernel2(bool*, bool*, bool*, bool*, int)', 481726.0, 12, 40143.0),
             (1, 'api', 'cudaMallocManaged', 282345000.0, 7, 40335000.0),
             (1, 'api', 'cuDeviceGetUuid', 815.0, 4, 203.0),
             (1, 'unified-memory', 'Gpu page fault groups', 13327072.0, 68, None),
             (1, 'unified-memory', 'Total CPU throttles', None, 1, None),
         ],
         notes=[]),
    Case('nvprof-new/nanzifan-babelstream-cpu-thread-tracing-run-titanxp.log',
         tools=('nvprof',), rows=24, unplaced=0,
         sections={(1, 'api'): 17, (1, 'gpu'): 7},
         tops=[(1, 'gpu', '[CUDA memcpy DtoH]', 6),
               (1, 'api', 'cudaDeviceSynchronize', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy DtoH]', 217160000.0, 103, 2108300.0),
             (1, 'gpu', 'void init_kernel<double>(double*, double*, double*', 1678800.0, 1, 1678800.0),
             (1, 'api', 'cudaDeviceSynchronize', 620140000.0, 401, 1546500.0),
             (1, 'api', 'cudaDriverGetVersion', 368.0, 1, 368.0),
         ],
         notes=[]),
    Case('nvprof-new/sarats-xgc-cudafortran-nvprof-import-no-pid-excerpt.log',
         tools=('nvprof',), rows=41, unplaced=0,
         sections={(1, 'api'): 10, (1, 'gpu'): 31},
         tops=[(1, 'gpu', 'push_mod_gpu_pushe_kernel_gpu_', 1),
               (1, 'api', 'cudaEventSynchronize', 3)],
         checks=[
             (1, 'gpu', 'push_mod_gpu_pushe_kernel_gpu_', 122719000000.0, 210, 584380000.0),
             (1, 'gpu', '__pgi_dev_cumemset_4n', 24063.0, 4, 6015.0),
             (1, 'api', 'cudaEventSynchronize', 83698300000.0, 8, 10462300000.0),
             (1, 'api', 'cuMemAlloc', 641500000.0, 479, 1339300.0),
         ],
         notes=[]),
    Case('nvprof-new/whollybrewed-stego-gtx1060-gpu-summary-only.log',
         tools=('nvprof',), rows=5, unplaced=0,
         sections={(1, 'gpu'): 5},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 718410.0, 4, 179600.0),
             (1, 'gpu', 'grouping(subgroup*)', 1568.0, 1, 1568.0),
         ],
         notes=[]),
    Case('nvprof-trace/andrewxu22-rodinia-bfs-gputrace-unified-memory-columns-excerpt.log',
         tools=('nvprof',), rows=20, unplaced=0,
         sections={(1, 'gpu'): 4, (1, 'gpu-trace'): 13, (1, 'unified-memory'): 3},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 2),
               (1, 'unified-memory', '[Unified Memory GPU page faults]', 1)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 199108.0, 4, 49777.0),
             (1, 'gpu', '[CUDA memcpy DtoH]', 3968.0, 2, 1984.0),
             (1, 'unified-memory', '[Unified Memory GPU page faults]', 180450.0, 1, 180450.0),
             (1, 'unified-memory', '[Unified Memory CPU page faults]', None, 1, None),
             (1, 'gpu-trace', 26, '[Unified Memory CPU page faults]', 565070000.0, None),
             (1, 'gpu-trace', 38, '[CUDA memcpy DtoH]', 572950000.0, 1856.0),
         ],
         notes=[]),
    Case('nvprof-trace/whollybrewed-stego-gtx1060-gputrace-ms-then-s-starts.log',
         tools=('nvprof',), rows=15, unplaced=0,
         sections={(1, 'gpu'): 5, (1, 'gpu-trace'): 10},
         tops=[(1, 'gpu', '[CUDA memcpy HtoD]', 3)],
         checks=[
             (1, 'gpu', '[CUDA memcpy HtoD]', 720940.0, 4, 180235.0),
             (1, 'gpu', 'grouping(subgroup*)', 1856.0, 1, 1856.0),
             (1, 'gpu-trace', 5, 'grouping(subgroup*) [105]', 360750000.0, 1856.0),
             (1, 'gpu-trace', 14, '[CUDA memcpy DtoH]', 1016770000.0, 174760.0),
         ],
         notes=[]),
    # SOURCES.md "Batch 3"
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
    # SOURCES.md "Batch 5a"
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

NO_PROFILE: list[tuple[str, str]] = [  # (file, why it holds no profile)
    # SOURCES.md "Batch 2"
    ("nvprof-cpu/nanzifan-babelstream-cpu-profiling-tree.log", "nvprof --cpu-profiling tree: CPU samples, no GPU table"),
]


@pytest.mark.parametrize("case", TOP_ROWS, ids=lambda c: c[0])
def test_nvprof_log_top_row(case):
    check_top_row(case)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.path)
def test_nvprof_log(case):
    check_case(case)


@pytest.mark.parametrize(("path", "why"), NO_PROFILE, ids=[p for p, _ in NO_PROFILE])
def test_nvprof_log_holds_no_profile(path, why, cli):
    line = check_no_profile(path, cli)
    assert "no profiler output" in line or "nothing to rank" in line


def test_nvprof_logs_are_listed_once():
    check_listed_once([c.path for c in CASES] + [p for p, _ in NO_PROFILE])


# ---------------------------------------------------------------- classes


def test_cli_says_when_a_table_has_no_time_to_rank(cli):
    """A Unified Memory table printed with 0 times and OpenACC regions without times are shown, and the
    line under them says there is nothing to rank instead of '0 of 3 take 0.0%'."""
    r = cli("parse", "--width", "100", DATA + "nvprof-csv/nanzifan-rodinia-cfd-summary-csv-mixed-unit-row-um.csv.log")
    assert r.returncode == 0
    assert "none of these 3 rows has a time above zero: nothing to rank" in r.stdout
    assert "0 of 3" not in r.stdout
    assert "2 of 7 GPU activities take 91.5% of GPU time" in r.stdout
    r = cli("parse", "--width", "100", "--profile", "5", DATA + "acc-time/essentialsofpc-ch11-streamtriad-7-programs.log")
    assert r.returncode == 0
    assert "none of these 5 rows has a time above zero: nothing to rank" in r.stdout
    assert "contradicts" not in r.stdout + r.stderr


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
