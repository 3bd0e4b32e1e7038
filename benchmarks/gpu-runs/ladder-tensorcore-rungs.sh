#!/usr/bin/env bash
# Issue 25, second GPU window: the Tensor Core rungs after window 1 (cp.async staging, chunked 3xTF32
# accumulation, WMMA through PTX, fp16 row runs), their GPU tests, a bench of the Tensor Core variants
# and their cuDNN peers on every course layer, and ncu on the slowest shares.
export CUDNN=0 WARM_S=110 TESTS_S=90 BENCH_S=130 NCU_S=50 SETS=2 BUDGET=2 TEST_WORKERS=16
export VARIANTS=tensorcore,tf32-wmma,tensorcore-tf32,tensorcore-3xtf32
export PEERS=cudnn,cudnn-nhwc,cudnn-tf32,cudnn-tf32-nhwc,cudnn-fp16,cudnn-fp16-nhwc
export TESTS="tests/test_gpu_tensorcore_tf32.py tests/test_gpu_numbers.py::test_every_peer_is_checked_against_a_plain_loop tests/test_gpu_variants.py"
export TEST_K="tensorcore or wmma or peer"
export NCU_LAYERS=ece408-fa19/conv2,ece408-fa20/conv2 NCU_VARIANTS=tensorcore,tensorcore-tf32,tensorcore-3xtf32
exec bash benchmarks/gpu-runs/ladder-peers-and-sweeps.sh  # the driver runs this from the snapshot root
