#!/usr/bin/env bash
# Issue 6's final device call: every GPU test, `profconv bench` on the three models (the table in
# reports/bench-h200.md), and `profconv run --model ece408-high` with the whole ladder.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 tests/ > "$OUT/pytest-gpu-h200.txt" 2>&1
tail -1 "$OUT/pytest-gpu-h200.txt"
if [ "${BENCH:-1}" = 1 ]; then  # BENCH=0: tests and the run only
  timeout 280 python3 -m profconv bench --out "$OUT/bench" --markdown "$OUT/bench-h200.md" > "$OUT/bench-terminal.txt" 2>&1
  echo "bench rc=$?"
fi
timeout 120 python3 -m profconv run --model ece408-high --out "$OUT/run-ece408-high" > "$OUT/run-ece408-high.txt" 2>&1
echo "run rc=$?"
grep -A16 "Best variant" "$OUT/bench-terminal.txt" 2>/dev/null
grep -E "│ +10,?000 │ " "$OUT/run-ece408-high.txt" | cut -c1-120
grep -B2 -A6 "fused layer" "$OUT/bench-terminal.txt" 2>/dev/null | grep -E "fused layer|separate|fused-layer" | cut -c1-150
