# timing
#!/usr/bin/env bash
# Issue 25's closing GPU run (window 4, ~400 s lane, one GPU of its own), everything under $RES:
#   1. CuPy's kernel cache filled by parallel sweeps (scripts/warm_kernels.py, 32 workers). The layers
#      window 3 swept on this same kernel code (Fall 2020/2019/2018, Spring 2019) build that sweep's
#      choices for the Tensor Core and fp16 rungs (benchmarks/plans/h200-w3.json, PROFCONV_SWEEP_PLAN);
#      `tuned` (new 4-wide candidates since) and the other layers are swept here.
#   2. `profconv bench` of every course model and cifar10: the top rungs of each precision against the
#      cuDNN peers of fp32, TF32 and fp16 in both layouts (each with its plain-loop check and kernels),
#      the fused conv + activation + pool beside the separate ops; the record is kept layer by layer.
#   3. the GPU tests of the rungs against the float64 reference (-v, written as they run), the
#      measured errors in accuracy.jsonl; 4. the compact tables (benchmarks/ladder_table.py).
set -u
RES=${RES:-/tmp/ladder-res}
mkdir -p "$RES"
exec > >(tee -a "$RES/session.log") 2>&1
set -x
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 )) s: $*" | tee -a "$RES/timings.txt"; }
export COLUMNS=180 PROFCONV_SWEEP_PLAN=$PWD/benchmarks/plans/h200-w3.json
MODELS=ece408-fa20,ece408-fa19,ece408-fa18,ece408-sp19,ece408-high,ece408,cifar10
VARIANTS=tuned,fp16,tensorcore,tf32-wmma,tensorcore-tf32,tensorcore-3xtf32
PEERS=cudnn,cudnn-nhwc,cudnn-tf32,cudnn-tf32-nhwc,cudnn-fp16,cudnn-fp16-nhwc
WORKERS=$(( $(nproc) > 36 ? 32 : $(nproc) - 2 ))

nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,memory.used \
  --format=csv > "$RES/gpu.txt" 2>&1
nproc >> "$RES/gpu.txt"

stamp "warm kernels ($WORKERS workers)"
timeout 90 python3 scripts/warm_kernels.py --models "$MODELS" --variants "$VARIANTS" --workers "$WORKERS" --fuse 1 \
  > "$RES/warm.txt" 2>&1
stamp "warm: exit $?"

stamp "bench"
timeout -s INT 190 python3 -m profconv bench --model "$MODELS" --variant "$VARIANTS,$PEERS" --sets 2 --repeat 5 \
  --warmup 2 --time-budget 1.5 --fuse --out "$RES/bench" > "$RES/bench.log" 2>&1
stamp "bench: exit $?"
python3 benchmarks/ladder_table.py "$RES/bench/bench.json" > "$RES/table.md" 2>&1

stamp "gpu tests: the TF32 rungs against float64, the peer check"
PROFCONV_ACCURACY_OUT="$RES/accuracy.jsonl" timeout 42 python3 -m pytest -m gpu -p no:cacheprovider -n 16 -v -rfE \
  tests/test_gpu_tensorcore_tf32.py tests/test_gpu_numbers.py::test_every_peer_is_checked_against_a_plain_loop \
  > "$RES/pytest.txt" 2>&1
stamp "gpu tests: exit $?"
stamp "gpu tests: tuned and the fp16 tensorcore on every model shape, odd sizes, no bias, 10,000 images"
timeout 33 python3 -m pytest -m gpu -p no:cacheprovider -n 16 -v -rfE -k "tuned or (tensorcore and not tf32)" \
  tests/test_gpu_variants.py > "$RES/pytest-variants.txt" 2>&1
stamp "gpu tests: exit $?"
for f in "$RES"/pytest*.txt; do echo "$f: $(grep -c ' PASSED' "$f") passed, $(grep -c ' FAILED' "$f") failed"; done
grep -hE "^FAILED|^ERROR" "$RES"/pytest*.txt | head -20
python3 benchmarks/ladder_table.py "$RES/bench/bench.json" "$RES/accuracy.jsonl" > "$RES/table.md" 2>&1
find "$RES" -size +3M -exec rm -f {} +
stamp "done"
head -60 "$RES/table.md"
