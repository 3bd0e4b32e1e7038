#!/usr/bin/env bash
# The GPU tests, then the profiling commands a user types (issue 4's done-when), logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=150
python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/ > "$OUT/pytest-gpu.txt" 2>&1; tail -2 "$OUT/pytest-gpu.txt"
python3 -m profconv run --model ece408-high --profile cupti --out /tmp/cupti > "$OUT/run-profile-cupti.txt" 2>&1
echo "cupti rc=$?"
python3 -m profconv run --model ece408-high --profile ncu --out /tmp/ncu > "$OUT/run-profile-ncu.txt" 2>&1
echo "ncu rc=$?"
python3 -m profconv run --model ece408-high --images 100 --profile nvprof --out /tmp/nvp > "$OUT/run-profile-nvprof.txt" 2>&1
echo "nvprof rc=$?"; tail -1 "$OUT/run-profile-nvprof.txt"
cp /tmp/cupti/run.json "$OUT/cupti-run.json"; cp /tmp/cupti/profile-rows.csv "$OUT/cupti-profile-rows.csv"
cp /tmp/ncu/run.json "$OUT/ncu-run.json"
grep -A12 "Nsight Compute" "$OUT/run-profile-ncu.txt"
