#!/usr/bin/env bash
# Device call for profiling: --profile cupti and ncu through the CLI, plus raw ncu probes.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
which ncu nsys nvprof 2>&1 | tee "$OUT/tools.txt"
python3 -m profconv run --model ece408-high --images 10000 --variant naive,fused,tuned,cudnn --profile cupti \
  --out /tmp/cupti 2>&1 | tee "$OUT/run-cupti.txt" | tail -80
cp /tmp/cupti/profile-all.log /tmp/cupti/profile-tuned.log "$OUT/" 2>/dev/null
python3 -m profconv run --model ece408-high --images 10000 --variant naive,fused,tuned,cudnn \
  --out /tmp/plain > "$OUT/run-plain.txt" 2>&1
python3 -m profconv run --model ece408-high --images 1000 --variant naive,tuned --profile ncu \
  --out /tmp/ncu 2>&1 | tee "$OUT/run-ncu.txt" | tail -40
ls /tmp/ncu >> "$OUT/run-ncu.txt"
head -c 20000 /tmp/ncu/ncu.log > "$OUT/ncu-log-head.txt" 2>/dev/null
