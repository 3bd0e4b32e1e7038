#!/usr/bin/env bash
# One device call: install the wheels the GPU machine lacks, run the GPU tests, then the
# commands a user types. Full logs go to $OUT (the device tool brings them back).
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/ 2>&1 | tee "$OUT/pytest-gpu.log" | tail -15
for args in "$@"; do
  name=$(echo "$args" | tr ' /' '__' | tr -cd 'A-Za-z0-9_.-')
  echo "=== profconv $args"
  python3 -m profconv $args --out "/tmp/runs/$name" 2>&1 | tee "$OUT/run-$name.log"
  cp "/tmp/runs/$name/run.json" "$OUT/run-$name.json" 2>/dev/null
done
