#!/usr/bin/env bash
# GPU tests of the fp16 variants, the bench on the three models, and the constant-cache stall probe.
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -n 8 -k "tensorcore or fp16" tests/ > "$OUT/pytest-gpu.txt" 2>&1
tail -3 "$OUT/pytest-gpu.txt"
timeout 90 ncu --section WarpStateStats --page raw --csv -k regex:conv_tuned python3 benchmarks/imc_probe.py > "$OUT/imc.csv" 2> "$OUT/imc.err"
echo "ncu rc=$?"
timeout 240 python3 -m profconv bench --out "$OUT/bench" --markdown "$OUT/bench-h200.md" > "$OUT/bench-terminal.txt" 2>&1
echo "bench rc=$?"
grep -A16 "Best variant" "$OUT/bench-terminal.txt"
