#!/usr/bin/env bash
# One device call: GPU tests, the full ladder on three models, then --profile cupti and ncu.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=150
python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/ > "$OUT/pytest-gpu-h200.txt" 2>&1; tail -2 "$OUT/pytest-gpu-h200.txt"
python3 -m profconv run --model ece408-high --images 10000 --out /tmp/r/ece408-high > /tmp/r-ece408-high.txt 2>&1
python3 -m profconv run --model ece408 --images 10,100,10000 --out /tmp/r/ece408 > /tmp/r-ece408.txt 2>&1
python3 -m profconv run --model cifar10 --images 1200 --out /tmp/r/cifar10 > /tmp/r-cifar10.txt 2>&1
python3 -m profconv run --model ece408-high --profile cupti --out /tmp/r/cupti > /tmp/r-cupti.txt 2>&1
python3 -m profconv run --model ece408-high --profile ncu --out /tmp/r/ncu > /tmp/r-ncu.txt 2>&1
cp /tmp/r/cupti/profile-rows.csv /tmp/r/cupti/profile-all.log /tmp/r/cupti/profile-tuned.log /tmp/r/ 2>/dev/null
rm -rf /tmp/r/ncu/ncu-child /tmp/r/cupti/timeline.json
cd /tmp && tar czf "$OUT/runs.tgz" r r-*.txt && ls -la "$OUT"
grep -h -E "│ +[0-9,]+ │ (tuned|cudnn) " /tmp/r-ece408-high.txt /tmp/r-ece408.txt /tmp/r-cifar10.txt | cut -c1-110
