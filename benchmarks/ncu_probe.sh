#!/usr/bin/env bash
# Which NVTX filter expressions does this ncu accept for profconv's domain ranges?
set -uo pipefail
OUT=${OUT:-/tmp/profconv-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=160
ncu --version | tail -1 > "$OUT/probe.txt"
child="python3 -m profconv run --model ece408-high --images 100 --variant naive --repeat 1 --warmup 0 --out /tmp/c"
for f in "" "profconv@*" "regex:profconv@.*" "profconv@ece408-high/naive/conv1/" "regex:profconv@ece408-high/.*/conv[0-9]+/" "profconv@ece408-high/naive/conv1"; do
  echo "=== filter: [$f]" >> "$OUT/probe.txt"
  if [ -z "$f" ]; then args=(); else args=(--nvtx-include "$f"); fi
  ncu --csv --page raw --metrics gpu__time_duration.sum --nvtx "${args[@]}" -c 4 $child 2>&1 \
    | grep -E '^"|==PROF==|==ERROR==|==WARNING==' | cut -c1-400 | head -8 >> "$OUT/probe.txt"
done
python3 -m profconv run --model ece408-high --images 10000 --variant naive,fused,tuned,cudnn --profile cupti \
  --out /tmp/cupti 2>&1 | grep -E "Profile|of .* take|error" | tee "$OUT/cupti.txt"
cp /tmp/cupti/profile-tuned.log /tmp/cupti/profile-naive.log "$OUT/" 2>/dev/null
cat "$OUT/probe.txt"
