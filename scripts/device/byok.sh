#!/usr/bin/env bash
# Issue 11 on the GPU machine (2 GPUs): user kernels profiled (CUPTI, ncu) and sampled like the built-ins,
# --sanitize on racy and out-of-bounds kernels, bench --kernel with the declared sweep, every contract's
# example (incl. the single-call course form) at 10,000 images, the GPU tests of the user-kernel files.
# GPU 0: the measured run (every example, profiled); GPU 1: the GPU tests (-n 6), bench, the sanitizer runs.
# Writes compact results to $OUT (records, terminal text, pytest output); every step has a timeout.
set -uo pipefail
OUT=${OUT:-/tmp/byok-out}; mkdir -p "$OUT"
LIMIT=${BYOK_LIMIT:-320}  # seconds for the whole script (the request's cap minus a margin)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-byok ../../.whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site-byok:$PWD PYTHONUNBUFFERED=1 COLUMNS=120
left() { local l=$((LIMIT - SECONDS)); [ "$l" -gt "$1" ] && echo "$1" || echo $((l > 5 ? l - 5 : 1)); }
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
(ncu --version | tail -1; compute-sanitizer --version | tail -1; nvcc --version | tail -1) >> "$OUT/gpu.txt" 2>&1
EX=examples; BAD=tests/data/kernels/bad; CO=tests/data/kernels/course
keep() {  # keep the small files of a run directory under $OUT/$2
  mkdir -p "$OUT/$2"
  for f in "$1"/run.json "$1"/bench.json "$1"/profile-*.log "$1"/ncu-*.csv "$1"/ncu-*.log "$1"/ncu-raw.csv; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 3000000 ] && cp "$f" "$OUT/$2/"
  done
}

gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  echo "== examples $(date -u +%T)"
  timeout "$(left 260)" python3 -m profconv run --model ece408 --images 10000 --variant naive,cudnn \
    --kernel $EX/device-tiled --kernel $EX/host-constant --kernel $EX/python-cupy/conv_cupy.py \
    --kernel $EX/course-minidnn --kernel $EX/course-mxnet --kernel $CO/minidnn-single \
    --profile cupti,ncu --profile-timeout 90 --time-budget 1 --out /tmp/byok-ex > "$OUT/examples-terminal.txt" 2>&1
  echo "rc=$?" >> "$OUT/examples-terminal.txt"; keep /tmp/byok-ex examples
  timeout "$(left 30)" python3 -m profconv report /tmp/byok-ex/run.json > "$OUT/examples-report.txt" 2>&1
}

gpu1() {
  export CUDA_VISIBLE_DEVICES=1
  echo "== pytest $(date -u +%T)"  # the GPU tests of the user-kernel files, 6 at a time (correctness, not timing)
  timeout "$(left 200)" python3 -m pytest -q -m gpu -p no:cacheprovider -n 6 --basetemp /tmp/pt1 -rA \
    tests/test_user_kernels_gpu.py ${BYOK_PYTEST:+-k "$BYOK_PYTEST"} > "$OUT/pytest-gpu.txt" 2>&1
  echo "rc=$?" >> "$OUT/pytest-gpu.txt"
  echo "== bench $(date -u +%T)"
  timeout "$(left 70)" python3 -m profconv bench --model ece408 --images 10000 --variant naive,cudnn --no-fuse \
    --kernel $EX/device-tiled --kernel $EX/course-minidnn --time-budget 5 --out /tmp/byok-bench \
    > "$OUT/bench-terminal.txt" 2>&1
  echo "rc=$?" >> "$OUT/bench-terminal.txt"; keep /tmp/byok-bench bench
  echo "== sanitize $(date -u +%T)"
  timeout "$(left 150)" python3 -m profconv run --model ece408 --images 100 --variant none --sanitize \
    --kernel $BAD/racy.cu --kernel $BAD/reads_past_end.cu --kernel $BAD/oob.cu \
    --kernel-timeout 40 --out /tmp/byok-san > "$OUT/sanitize-terminal.txt" 2>&1
  echo "rc=$?" >> "$OUT/sanitize-terminal.txt"; keep /tmp/byok-san sanitize
}

gpu0 > "$OUT/steps-0.txt" 2>&1 &
gpu1 > "$OUT/steps-1.txt" 2>&1 &
wait
for f in /tmp/pt1/*/*/run.json /tmp/pt1/*/run.json; do  # the GPU tests' run records (sanitizer lines in them)
  [ -f "$f" ] || continue
  d=$(basename "$(dirname "$f")"); mkdir -p "$OUT/pytest/$d" && cp "$f" "$OUT/pytest/$d/"
done
tail -5 "$OUT"/pytest-gpu.txt
echo "done in $SECONDS s"
