#!/usr/bin/env bash
# Issue 11, second GPU call (150 s): the fixes of the first call checked. GPU 0: every kernel's timed op in
# CUPTI (child processes), ncu and the agreement table at 10,000 images; GPU 1: the GPU tests of profiling
# and --sanitize (memcheck line numbers, racecheck).
set -uo pipefail
OUT=${OUT:-/tmp/byok-out}; mkdir -p "$OUT"
LIMIT=${BYOK_LIMIT:-138}
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-byok ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site-byok:$PWD PYTHONUNBUFFERED=1 COLUMNS=120
left() { local l=$((LIMIT - SECONDS)); [ "$l" -gt "$1" ] && echo "$1" || echo $((l > 5 ? l - 5 : 1)); }
EX=examples
keep() {
  mkdir -p "$OUT/$2"
  for f in "$1"/run.json "$1"/profile-*.log "$1"/ncu-*.csv "$1"/ncu-raw.csv; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 3000000 ] && cp "$f" "$OUT/$2/"
  done
}
gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  timeout "$(left 118)" python3 -m profconv run --model ece408 --images 10000 --variant naive \
    --kernel $EX/device-tiled --kernel $EX/course-minidnn --kernel $EX/python-cupy/conv_cupy.py \
    --profile cupti,ncu --profile-timeout 50 --time-budget 1 --out /tmp/byok-prof > "$OUT/profiled-terminal.txt" 2>&1
  echo "rc=$?" >> "$OUT/profiled-terminal.txt"; keep /tmp/byok-prof profiled
  timeout "$(left 15)" python3 -m profconv report /tmp/byok-prof/run.json > "$OUT/profiled-report.txt" 2>&1
}
gpu1() {
  export CUDA_VISIBLE_DEVICES=1
  timeout "$(left 128)" python3 -m pytest -q -m gpu -p no:cacheprovider -n 3 --basetemp /tmp/pt2 -rA \
    tests/test_user_kernels_gpu.py -k "profiled or invalid_reads or shared_memory_race" > "$OUT/pytest-gpu.txt" 2>&1
  echo "rc=$?" >> "$OUT/pytest-gpu.txt"
}
gpu0 > "$OUT/steps-0.txt" 2>&1 &
gpu1 > "$OUT/steps-1.txt" 2>&1 &
wait
for f in /tmp/pt2/*/*/run.json; do
  [ -f "$f" ] || continue
  d=$(basename "$(dirname "$f")"); mkdir -p "$OUT/pytest/$d" && cp "$f" "$OUT/pytest/$d/"
done
tail -5 "$OUT"/pytest-gpu.txt
echo "done in $SECONDS s"
