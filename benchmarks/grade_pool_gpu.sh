#!/usr/bin/env bash
# timing
# GPU validation of grade's pool (issue 22), one GPU, one call: bash benchmarks/grade_pool_gpu.sh
#   $DATA: real course files, one folder per submission (new-forward.cu), never committed (SOURCES.csv lists
#          their repositories and commits); $RES: what comes back. Settings (environment): MODEL=ece408-fa20
#          IMAGES=10000 BUDGET=400 (seconds for the whole script) POOL_CAP=230 (the pool pass at most)
#          BASE_SLOTS=6 (baseline `profconv run` processes at once on the one GPU: verdicts only, not times).
# Steps:
#   1. the zygote's imports: is the CUDA driver mapped after importing CuPy and PyTorch (fork safety)?
#   2. the class: benchmarks/grade_class.py (examples, mutants that are wrong/crash/hang/do not compile/are
#      slow, tests/data/kernels) + the real files in $DATA, one listing;
#   3. the pool pass: `profconv grade` (local, one GPU, the pool), a cold cache: the model bundle and every
#      nvcc build made during the pass; its cost split (benchmarks/grade_throughput.py measure);
#   4. the baseline: the same listing with --no-pool (a `profconv run --kernel` process per job, as before),
#      BASE_SLOTS at once on the GPU, cut at the budget; the verdicts compared with the pool's.
set -uo pipefail
set -x
MODEL=${MODEL:-ece408-fa20}
IMAGES=${IMAGES:-10000}
BUDGET=${BUDGET:-400}
POOL_CAP=${POOL_CAP:-230}
BASE_SLOTS=${BASE_SLOTS:-6}
RES=${RES:-/tmp/res}
WORK=${WORK:-/tmp/grade-pool}
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
say() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$RES/summary.txt"; }
mkdir -p "$RES" "$WORK"
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=140
nvidia-smi --query-gpu=index,name,uuid,driver_version,compute_cap --format=csv > "$RES/gpu.txt" 2>&1
cat "$RES/gpu.txt"
nproc
# this lane's GPU as nvidia-smi numbers it (CUDA_VISIBLE_DEVICES may be an index or a UUID; nvidia-smi
# lists every GPU of the host whatever CUDA_VISIBLE_DEVICES says, so grade gets --gpus explicitly)
GPU=${CUDA_VISIBLE_DEVICES:-0}; GPU=${GPU%%,*}
case "$GPU" in
  *[!0-9]*) GPU=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader | awk -F', ' -v u="$GPU" '$2 == u { print $1 }') ;;
esac
echo "lane GPU: ${GPU:-?} (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset})" | tee -a "$RES/summary.txt"
unset CUDA_VISIBLE_DEVICES  # grade sets each job's own, by nvidia-smi's index (CUDA_DEVICE_ORDER=PCI_BUS_ID)

say "1. zygote imports"
python3 - > "$RES/zygote.txt" 2>&1 <<'EOF'
import time
t = time.monotonic()
from profconv.grade import zygote
zygote.preload_imports()
print("imports_s", round(time.monotonic() - t, 2), "cuda_loaded", zygote.cuda_loaded(), "threads", zygote.threads())
import os, re
print("mapped CUDA libraries:", sorted({m.group(0) for m in re.finditer(r"lib(cuda|cudart|nvrtc|cupti|nvidia-ml)[\w.-]*\.so[\d.]*", open("/proc/self/maps").read())}))
EOF
cat "$RES/zygote.txt"

say "2. the class"
python3 benchmarks/grade_class.py build "$WORK/class" > "$RES/class-build.txt" 2>&1
if [ -f "${DATA:-}/students.csv" ]; then
  # a collection with its own listing (submission = folder/file under $DATA, a name per file): merged
  python3 - "$DATA" "$WORK/class/class.csv" <<'EOF'
import csv, sys
from pathlib import Path
data, listing = Path(sys.argv[1]), Path(sys.argv[2])
rows = [{"submission": r["submission"], "name": "", "expect": r["expect"]} for r in csv.DictReader(listing.open())]
rows += [{"submission": str(data / r["submission"]), "name": r["name"], "expect": r.get("expect") or "any"}
         for r in csv.DictReader((data / "students.csv").open())]
with listing.open("w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=["submission", "name", "expect"])
    w.writeheader()
    w.writerows(rows)
EOF
  cp "$DATA/index.tsv" "$RES/students-index.tsv" 2>/dev/null
elif [ -d "${DATA:-}" ]; then
  for d in "$DATA"/*/; do
    n=$(basename "$d"); cp -r "$d" "$WORK/class/student-$n"; echo "student-$n,any" >> "$WORK/class/class.csv"
  done
  cp "$DATA/SOURCES.csv" "$RES/" 2>/dev/null
fi
wc -l "$WORK/class/class.csv" | tee -a "$RES/summary.txt"

say "3. pool pass (cold cache), cap $POOL_CAP s"
timeout -s INT "$POOL_CAP" python3 -m profconv grade "$WORK/class/class.csv" -m "$MODEL" --images "$IMAGES" \
  --out "$WORK/pool" --cache "$WORK/cache" --timeout 300 --kernel-timeout 30 --gpus "$GPU" > "$RES/pool.log" 2>&1
echo "pool rc $?" | tee -a "$RES/summary.txt"
tail -5 "$RES/pool.log" | tee -a "$RES/summary.txt"
python3 benchmarks/grade_throughput.py measure "$WORK/pool" | tee -a "$RES/summary.txt"
python3 benchmarks/grade_throughput.py measure --json "$WORK/pool" > "$RES/pool-throughput.json"
cp "$WORK/pool/manifest.json" "$RES/pool-manifest.json"; cp "$WORK/pool/leaderboard.csv" "$RES/pool-leaderboard.csv" 2>/dev/null
ls "$WORK/pool/workers" "$WORK/cache/bundles" 2>&1 | head; cp "$WORK"/pool/workers/*.log "$RES/" 2>/dev/null
cp "$WORK"/cache/bundles/*.log "$RES/" 2>/dev/null
python3 benchmarks/grade_class.py check "$WORK/pool" "$WORK/class/class.csv" > "$RES/pool-check.txt" 2>&1
tar czf "$RES/pool-jobs.tgz" -C "$WORK/pool" --exclude='*.png' --exclude='*-plots' jobs 2>/dev/null

say "4. baseline (--no-pool, $BASE_SLOTS at once), $(left) s left"
slots=$(python3 -c "print(','.join(['$GPU'] * $BASE_SLOTS))")
timeout -s INT $(( $(left) - 15 )) python3 -m profconv grade "$WORK/class/class.csv" -m "$MODEL" --images "$IMAGES" \
  --out "$WORK/base" --no-pool --gpus "$slots" --no-report --timeout 300 --kernel-timeout 30 > "$RES/base.log" 2>&1
echo "baseline rc $?" | tee -a "$RES/summary.txt"
if [ ! -f "$WORK/base/leaderboard.csv" ] && [ -f "$WORK/base/manifest.json" ]; then
  python3 - "$WORK/base" <<'EOF'
import sys
from pathlib import Path
from profconv.grade import leaderboard, manifest
out = Path(sys.argv[1])
res = manifest.results(manifest.read(out), out)
(out / "leaderboard.csv").write_text(leaderboard.board(leaderboard.layers(res)).to_csv(index=False))
EOF
fi
cp "$WORK/base/manifest.json" "$RES/base-manifest.json" 2>/dev/null; cp "$WORK/base/leaderboard.csv" "$RES/base-leaderboard.csv" 2>/dev/null
python3 benchmarks/grade_throughput.py compare "$WORK/pool" "$WORK/base" | tee -a "$RES/summary.txt"
python3 benchmarks/grade_throughput.py measure "$WORK/base" | tee -a "$RES/summary.txt"
say "done"
