"""Every real profiler log in tests/data parses to concrete, checked values.

Columns: file, profiles, rows, ranked section of profile 1, its top row's name (prefix),
total ns, calls, rows in the >=90% set, unplaced lines. Values were checked against the logs.
"""

import pytest

import profconv
from profconv.analysis.ranking import rank_profile
from profconv.parse import validate

DATA = "tests/data/"

# fmt: off
CASES = [
    ('acc-time/denismihailapov-lab1-sin-float-pgi-minfo.log', 1, 8, 'gpu', 'main@calc_sin.c:26 kernel', 278000.0, 1, 2, 0),
    ('acc-time/denismihailapov-lab2-heat-n128-multifunc.log', 1, 20, 'gpu', 'main@term_cond_acc.c:103 kernel', 50627000.0, 746, 4, 0),
    ('acc-time/mrprajesh-openacc-cmake-hello-nvhpc22.7.log', 1, 7, 'gpu', 'main@hello.cpp:33 kernel', 44613000.0, 1, 3, 0),
    ('acc-time/oliatsm-cnn-cifar10-nvhpc-acc-time.log', 1, 80, 'gpu', 'relu_forward@layers.c:118 kernel', 2041325000.0, 150000, 7, 0),
    ('ncu-csv/andrewxu22-rodinia-cfd-v100-ncu2020.csv.log', 1, 106, 'gpu', 'cuda_compute_flux', 39200.0, 1, 2, 0),
    ('ncu-csv/yktian-paddle-demo-nvtx-metrics.csv.log', 1, 22, 'gpu', 'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x', 8192.0, 1, 2, 0),
    ('ncu-text/eduardo4jesus-hw8-smem-transpose-metrics.log', 1, 13, 'ncu-metric', 'smem_cuda_transpose(int, const double *, double *)', None, None, 0, 0),
    ('ncu-text/fluuuegel-dd2360-raytracer-ncu2023.2-launchfailed.log', 1, 58, 'ncu-metric', 'render(vec3 *, int, int, int, camera **, hitable **, curandS', None, None, 0, 0),
    ('ncu-text/liqiangxl-pytorch-layernorm-ncu2022-first-kernel.log', 1, 29, 'gpu', 'void at::native::<unnamed>::distribution_elementwise_grid_st', 29380.0, 1, 1, 0),
    ('ncu-text/md-info-fused-rmsnorm-t4-colab.log', 1, 44, 'gpu', 'void fused<float, 256>(const T1 *, const T1 *, const T1 *, T', 5660.0, 1, 1, 0),
    ('nsys-csv/chukonu-mineru-nsys-stats-csv-osrt-only.log', 1, 61, 'os-runtime', 'pthread_cond_wait', 4467639532177.0, 316, 3, 0),
    ('nsys-csv/comp-physics-rosenna-cuda-api-sum-quiet.log', 1, 2, 'api', 'cudaLaunchKernel', 88330.0, 1, 1, 0),
    ('nsys-csv/littlelittlecloud-dotllm-kern-sum-rtx4090-win.log', 1, 15, 'gpu', 'flash_attention_prefill_f16', 99385786.0, 32, 4, 0),
    ('nsys-text/ayush-os-a100-vectoradd-stats.log', 1, 40, 'gpu', 'vectorAdd(const float *, const float *, float *, int)', 1830493.0, 1010, 1, 0),
    ('nsys-text/comp-physics-rosenna-nvhpc25.11-nvtx-capture.log', 1, 3, 'nvtx', ':rosenna_timed', 143045.0, 1, 1, 0),
    ('nsys-text/f64081169-jetson-trt-yolo-4digit-grouping.log', 1, 160, 'gpu', '[CUDA memcpy HtoD]', 2218247417.0, 12981, 18, 0),
    ('nsys-text/iidyc-gpu-mvr-stats-cuvs-cub.log', 1, 92, 'gpu', '[CUDA memcpy Host-to-Device]', 3727343921.0, 20523, 9, 0),
    ('nsys-text/lukas-ruettgers-dphpc-cutlass-gemm-progressbars.log', 1, 13, 'gpu', '[CUDA memcpy Host-to-Device]', 10427581.0, 3, 2, 0),
    ('nsys-text/moomoohorse-ece408-nsys2019.5.2-rai.log', 1, 37, 'gpu', '[CUDA memcpy DtoH]', 972281014.0, 6, 2, 0),
    ('nsys-text/oliatsm-cnn-cifar10-openacc-stats.log', 1, 193, 'gpu', '[CUDA memcpy Host-to-Device]', 810433825.0, 150038, 9, 0),
    ('nsys-text/samhachem99-legacy-stats-vector-add.log', 4, 220, 'os-runtime', 'epoll_wait', 5511756619.0, 461, 4, 0),
    ('nsys-text/zx3xyy-nsys2024.6.2-stats-pytorch-2.7B.log', 1, 97, 'gpu', '[CUDA memcpy Host-to-Device]', 4460346194.0, 294, 2, 0),
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
    ('seeds/001_f908eb42489cd140.log', 4, 176, 'gpu', 'void cudnn::detail::implicit_convolve_sgemm<float, int=1024,', 49974000.0, 1, 4, 0),
    ('seeds/002_b0bcac5cefbf4480.log', 6, 222, 'gpu', 'void fermiPlusCgemmLDS128_batched<...>', 118460000.0, None, 6, 0),
    ('seeds/004_2bdc63d5feab4c65.log', 6, 210, 'gpu', 'conv_forward@layers.c:50 kernel', 7078597000.0, 3600, 1, 0),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_corpus_file(case):
    path, n_profiles, n_rows, section, top_name, total_ns, calls, top_count, unplaced = case
    ps = profconv.parse(DATA + path)
    validate(ps.frame)
    assert len(ps.profiles) == n_profiles
    assert len(ps.frame) == n_rows
    ranked = rank_profile(ps.frame, 1, [section])[0]
    top = ranked.rows.iloc[0]
    assert top["name"].startswith(top_name)
    if total_ns is None:
        assert top["total_ns"] != top["total_ns"]
    else:
        assert top["total_ns"] == pytest.approx(total_ns, rel=1e-9)
    if calls is not None:
        assert top["calls"] == calls
    assert ranked.top_count == top_count
    assert len(ps.unplaced) == unplaced
