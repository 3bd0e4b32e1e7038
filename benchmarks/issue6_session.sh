#!/usr/bin/env bash
# One device call for issue 6: GPU tests of the fast variants, then `profconv bench` on the three models.
# Usage: bash benchmarks/issue6_session.sh [pytest -k expression] [bench options...]
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
K=${1:-}; shift || true
if [ -n "$K" ]; then
  timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 -k "$K" tests/test_gpu_variants.py > "$OUT/pytest-gpu.txt" 2>&1
  tail -15 "$OUT/pytest-gpu.txt"
fi
timeout 420 python3 -m profconv bench --out /tmp/bench --markdown "$OUT/bench.md" "$@" > "$OUT/bench-terminal.txt" 2>&1
echo "bench rc=$?"
cp /tmp/bench/bench.json "$OUT/" 2>/dev/null
tail -40 "$OUT/bench-terminal.txt"
