#!/usr/bin/env bash
# timing
# GPU validation of grade's pool (issue 22), one GPU, one call: bash benchmarks/gpu-runs/grade-pool.sh
#   $DATA: real course files, one folder per submission (new-forward.cu), never committed (SOURCES.csv lists
#          their repositories and commits); $RES: what comes back. Settings (environment): MODEL=ece408-fa20
#          IMAGES=10000 BUDGET=390 (seconds for the whole script) POOL_CAP=245 (the pool pass at most)
#          KT=45 (--kernel-timeout) JPG=0 (--jobs-per-gpu) CACHE=$WORK/cache (--cache: one shared by passes)
#          TEST_CAP=60 (the GPU tests) BASE_SLOTS=3 (baseline `profconv run` processes
#          at once on the one GPU: verdicts only, not times; 6 ran the GPU out of memory at 10,000 images).
# Steps:
#   1. the zygote's imports: is the CUDA driver mapped after importing CuPy and PyTorch (fork safety)?
#   2. the class: benchmarks/grade_class.py (examples, mutants that are wrong/crash/hang/do not compile/are
#      slow, tests/data/kernels) + the real files in $DATA, one listing;
#   3. the pool pass: `profconv grade` (local, one GPU, the pool), a cold cache: the model bundle and every
#      nvcc build made during the pass; its cost split (benchmarks/grade_throughput.py measure);
#   4. the baseline: the submissions the pool pass graded, as `profconv run --kernel K --variant none`
#      processes (the kernel's own verdict, no cuDNN run), BASE_SLOTS at once, cut to leave TEST_CAP;
#      verdicts compared with the pool's;
#   5. the grade worker's GPU tests (tests/test_grade_pool_gpu.py: pool and process verdicts on our kernels).
set -uo pipefail
set -x
MODEL=${MODEL:-ece408-fa20}
IMAGES=${IMAGES:-10000}
BUDGET=${BUDGET:-390}
POOL_CAP=${POOL_CAP:-245}
KT=${KT:-45}
TEST_CAP=${TEST_CAP:-60}
BASE_SLOTS=${BASE_SLOTS:-3}
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
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 - > "$RES/zygote.txt" 2>&1 <<'EOF'
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
ours = [{"submission": r["submission"], "name": "", "expect": r["expect"]} for r in csv.DictReader(listing.open())]
rows = [{"submission": str(data / r["submission"]), "name": r["name"], "expect": r.get("expect") or "any"}
        for r in csv.DictReader((data / "students.csv").open())] + ours  # the real files first
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
  --out "$WORK/pool" --cache "${CACHE:-$WORK/cache}" --jobs-per-gpu "${JPG:-0}" --timeout 300 --kernel-timeout "$KT" \
  --gpus "$GPU" > "$RES/pool.log" 2>&1
echo "pool rc $?" | tee -a "$RES/summary.txt"
tail -5 "$RES/pool.log" | tee -a "$RES/summary.txt"
python3 benchmarks/grade_throughput.py measure "$WORK/pool" | tee -a "$RES/summary.txt"
python3 benchmarks/grade_throughput.py measure --json "$WORK/pool" > "$RES/pool-throughput.json"
cp "$WORK/pool/manifest.json" "$RES/pool-manifest.json"; cp "$WORK/pool/leaderboard.csv" "$RES/pool-leaderboard.csv" 2>/dev/null
ls "$WORK/pool/workers" "$WORK/cache/bundles" 2>&1 | head; cp "$WORK"/pool/workers/*.log "$RES/" 2>/dev/null
cp "$WORK"/cache/bundles/*.log "$RES/" 2>/dev/null
python3 benchmarks/grade_class.py check "$WORK/pool" "$WORK/class/class.csv" > "$RES/pool-check.txt" 2>&1
tar czf "$RES/pool-jobs.tgz" -C "$WORK/pool" --exclude='*.png' --exclude='*-plots' jobs 2>/dev/null

say "4. baseline (profconv run --kernel processes, $BASE_SLOTS at once), $(left) s left"
python3 - "$WORK/pool" "$WORK/class/class.csv" "$WORK/class/base.csv" <<'EOF'
import csv, json, sys
from pathlib import Path
from profconv.grade.submissions import safe_name
pool, listing, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
done = {j["submission"] for j in json.loads((pool / "manifest.json").read_text())["jobs"] if j["status"] != "lost"}
rows = list(csv.DictReader(listing.open()))
keep = [r for r in rows if safe_name(r["name"] or Path(r["submission"]).name) in done]
with out.open("w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(keep)
print(len(keep), "of", len(rows), "submissions to compare")
EOF
slots=$(python3 -c "print(','.join(['$GPU'] * $BASE_SLOTS))")
timeout -s INT $(( $(left) - 12 - TEST_CAP )) python3 -m profconv grade "$WORK/class/base.csv" -m "$MODEL" --images "$IMAGES" \
  --out "$WORK/base" --no-pool --gpus "$slots" --no-report --timeout 300 --no-warmup \
  --job-command "{python} -m profconv run --model {model} --kernel {kernel} --variant none --out {out} --images $IMAGES --kernel-timeout $KT" \
  > "$RES/base.log" 2>&1
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
cap=$(( $(left) - 5 )); [ "$cap" -gt "$TEST_CAP" ] && cap=$TEST_CAP
say "5. GPU tests of the grade worker, cap $cap s"
CUDA_VISIBLE_DEVICES=$GPU timeout -s INT "$cap" python3 -m pytest -m gpu -rfE -v -p no:cacheprovider \
  tests/test_grade_pool_gpu.py > "$RES/gpu-tests.txt" 2>&1
echo "gpu tests rc $?" | tee -a "$RES/summary.txt"; tail -3 "$RES/gpu-tests.txt" | tee -a "$RES/summary.txt"

say "done"
