# timing
#!/usr/bin/env bash
# Issue 25's closing GPU run (windows 3 and 4): every course model and cifar10, the top rungs of each
# precision (tuned, fp16, tensorcore, tf32-wmma, tensorcore-tf32, tensorcore-3xtf32) against the cuDNN
# peers of fp32, TF32 and fp16 in both layouts, the fused conv + activation + pool beside the separate
# ops, the GPU tests of the rungs against the float64 reference, and ncu on the limits named in the notes.
export CUDNN=0 WARM_S=100 TESTS_S=70 BENCH_S=185 NCU_S=30 SETS=2 BUDGET=2 TEST_WORKERS=16 FUSE=--fuse
export VARIANTS=tuned,fp16,tensorcore,tf32-wmma,tensorcore-tf32,tensorcore-3xtf32
export PEERS=cudnn,cudnn-nhwc,cudnn-tf32,cudnn-tf32-nhwc,cudnn-fp16,cudnn-fp16-nhwc
export TESTS="tests/test_gpu_tensorcore_tf32.py tests/test_gpu_numbers.py::test_every_peer_is_checked_against_a_plain_loop tests/test_gpu_variants.py"
export TEST_K="tensorcore or wmma or peer or tuned or fp16 or fused"
export NCU_LAYERS=ece408-fa18/conv1,ece408/conv1,ece408-fa19/conv2 NCU_VARIANTS=tuned,tensorcore,tensorcore-tf32,tensorcore-3xtf32
exec bash benchmarks/ladder_session.sh  # the driver runs this from the snapshot root
