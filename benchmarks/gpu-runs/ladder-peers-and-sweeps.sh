#!/usr/bin/env bash
# Issue 25's GPU window (one lane, one GPU): everything under $RES, compact tables last.
#   1. cuDNN in a plain loop vs the bench's pair figure, with and without bias (benchmarks/cudnn_plain.py)
#   2. CuPy's kernel cache filled by parallel sweeps (scripts/warm_kernels.py) for $VARIANTS on $MODELS
#   3. the GPU tests of the TF32 / 3xTF32 rungs (+ $TESTS), measured errors in $RES/accuracy.jsonl
#   4. `profconv bench` of $MODELS with $VARIANTS and the cuDNN peers (SIGINT at its time limit: the
#      record keeps every layer measured), then its report as markdown
#   5. with NCU_LAYERS (model/layer,...) and NCU_VARIANTS: ncu sections of the configurations the bench chose
# Environment (defaults below): MODELS VARIANTS PEERS TESTS WORKERS SETS BUDGET CUDNN_S WARM_S TESTS_S BENCH_S
#   NCU_LAYERS NCU_VARIANTS NCU_S CUDNN (0: skip step 1)
set -u
RES=${RES:-/tmp/ladder-res}
mkdir -p "$RES"
exec > >(tee -a "$RES/session.log") 2>&1
set -x
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 )) s: $*" | tee -a "$RES/timings.txt"; }
export COLUMNS=${COLUMNS:-180}
MODELS=${MODELS:-ece408-fa20,ece408-fa19,ece408-fa18,ece408-sp19,ece408-high,ece408,cifar10}
VARIANTS=${VARIANTS:-tuned,fp16,tensorcore,tf32-wmma,tensorcore-tf32,tensorcore-3xtf32}
PEERS=${PEERS:-cudnn,cudnn-nhwc,cudnn-tf32,cudnn-tf32-nhwc,cudnn-fp16,cudnn-fp16-nhwc}
TESTS=${TESTS:-tests/test_gpu_tensorcore_tf32.py}
WORKERS=${WORKERS:-$(( $(nproc) > 36 ? 32 : $(nproc) > 16 ? $(nproc) - 4 : $(nproc) - 2 ))}  # 60 workers timed out (W3)

nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used \
  --format=csv > "$RES/gpu.txt" 2>&1
nproc >> "$RES/gpu.txt"
python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())" \
  >> "$RES/gpu.txt" 2>&1
cat "$RES/gpu.txt"

if [ "${CUDNN:-1}" = 1 ]; then
  stamp "cudnn plain loops"
  timeout "${CUDNN_S:-45}" python3 benchmarks/cudnn_plain.py --images 10000 --calls 10 --rounds 5 > "$RES/cudnn_plain.txt" 2>&1
  stamp "cudnn plain loops: exit $?"
fi

stamp "warm kernels ($WORKERS workers)"
timeout "${WARM_S:-100}" python3 scripts/warm_kernels.py --models "$MODELS" --variants "$VARIANTS" --workers "$WORKERS" \
  --fuse "$([ "${FUSE:-}" = --fuse ] && echo 1 || echo 0)" \
  > "$RES/warm.txt" 2>&1
stamp "warm: exit $?"

if [ -n "$TESTS" ]; then
  stamp "gpu tests: $TESTS"
  PROFCONV_ACCURACY_OUT="$RES/accuracy.jsonl" timeout "${TESTS_S:-75}" python3 -m pytest -m gpu -q -p no:cacheprovider \
    -n "${TEST_WORKERS:-8}" -rfE -k "${TEST_K:-}" $TESTS > "$RES/pytest.txt" 2>&1
  stamp "gpu tests: exit $?"
  tail -5 "$RES/pytest.txt"
fi

stamp "bench"
timeout -s INT "${BENCH_S:-150}" python3 -m profconv bench --model "$MODELS" --variant "$VARIANTS,$PEERS" \
  --sets "${SETS:-2}" --repeat 5 --warmup 2 --time-budget "${BUDGET:-3}" ${FUSE:---no-fuse} --out "$RES/bench" \
  > "$RES/bench.log" 2>&1
stamp "bench: exit $?"
if [ -n "${NCU_LAYERS:-}" ] && [ -f "$RES/bench/bench.json" ]; then
  stamp "ncu: $NCU_LAYERS / $NCU_VARIANTS"
  timeout "${NCU_S:-60}" ncu --nvtx --nvtx-include 'profconv@ladder/' --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --csv --page details python3 benchmarks/ladder_ncu.py "$RES/bench/bench.json" "$NCU_LAYERS" "$NCU_VARIANTS" \
    --plan-out "$RES/plan.json" > "$RES/ncu.csv" 2> "$RES/ncu.err"
  stamp "ncu: exit $?"
fi
python3 -m profconv report "$RES/bench/bench.json" --markdown "$RES/bench.md" > "$RES/report.log" 2>&1
python3 benchmarks/ladder_table.py "$RES/bench/bench.json" "$RES/accuracy.jsonl" > "$RES/table.md" 2>&1
rm -rf "$RES"/bench.md-plots "$RES"/*-plots 2>/dev/null
find "$RES" -size +3M -exec rm -f {} +
stamp "done"
cat "$RES/table.md"
