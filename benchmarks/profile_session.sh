#!/usr/bin/env bash
# Device call for profiling: --profile cupti vs a plain run (overhead), and --profile ncu.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
V=naive,fused,tuned,cudnn
python3 -m profconv run --model ece408-high --images 10000 --variant $V --repeat 10 --out /tmp/plain > "$OUT/run-plain.txt" 2>&1
python3 -m profconv run --model ece408-high --images 10000 --variant $V --repeat 10 --profile cupti \
  --out /tmp/cupti > "$OUT/run-cupti.txt" 2>&1
python3 -m profconv report --compare /tmp/plain /tmp/cupti --regression-threshold 0.10 --markdown "$OUT/overhead.md"
cp /tmp/cupti/profile-tuned.log /tmp/cupti/run.json "$OUT/" 2>/dev/null
python3 -c "import json; t=json.load(open('/tmp/cupti/timeline.json')); print('timeline events', len(t['traceEvents']))"
python3 -m profconv run --model ece408 --images 1000 --variant naive,tuned,cudnn --profile ncu \
  --out /tmp/ncu > "$OUT/run-ncu.txt" 2>&1
head -c 6000 /tmp/ncu/ncu-raw.csv > "$OUT/ncu-raw-head.csv" 2>/dev/null
grep -E "==PROF==|==ERROR==|==WARNING==" /tmp/ncu/ncu.log | head -20
cat "$OUT/overhead.md"; tail -30 "$OUT/run-ncu.txt"
