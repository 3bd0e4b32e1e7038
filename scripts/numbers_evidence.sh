#!/usr/bin/env bash
# Issue 13's evidence on a GPU machine, in one go (logs and records under $OUT):
#   1. the bench of one model with every GPU variant and with two (tuned, cudnn): ratios within 3%?
#      and the best cuDNN per precision with its layout (bench-full.md);
#   2. `profconv run --model ece408-high --profile cupti,ncu`: per-variant tables of the timed op only,
#      ncu at the card's clocks, the agreement table (run-prof.md).
set -u
OUT=${OUT:-/tmp/numbers-evidence}
mkdir -p "$OUT/w"
P="python3 -m profconv"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"
M=${BENCH_MODEL:-ece408}
FULL=${BENCH_VARIANTS:+--variant $BENCH_VARIANTS}
timeout "${BENCH_S:-120}" $P bench --model "$M" --no-fuse --cudnn-kernels --time-budget "${BUDGET:-3}" $FULL \
  --out "$OUT/w/bench-full" --markdown "$OUT/bench-full.md" > "$OUT/bench-full.log" 2>&1; echo "bench full: exit $?"
timeout "${TWO_S:-60}" $P bench --model "$M" --no-fuse --cudnn-kernels --time-budget "${BUDGET:-3}" \
  --variant "${TWO_VARIANTS:-tuned,cudnn}" --out "$OUT/w/bench-two" > "$OUT/bench-two.log" 2>&1; echo "bench two: exit $?"
python3 scripts/company_check.py "$OUT/w/bench-full/bench.json" "$OUT/w/bench-two/bench.json" 2>&1 | tee -a "$OUT/bench-two.log"
timeout "${RUN_S:-120}" $P run --model ece408-high --variant "${RUN_VARIANTS:-naive,tuned,cudnn,cudnn-fp16-nhwc}" \
  --profile cupti,ncu --profile-timeout "${NCU_S:-80}" --out "$OUT/w/run-prof" > "$OUT/run-prof.log" 2>&1
echo "run --profile cupti,ncu: exit $?"
$P report "$OUT/w/run-prof" --markdown "$OUT/run-prof.md" > /dev/null 2>&1
grep -A12 "Profilers vs Op Time" "$OUT/run-prof.log" | head -16
tar czf "$OUT/runs.tgz" -C "$OUT/w" .
