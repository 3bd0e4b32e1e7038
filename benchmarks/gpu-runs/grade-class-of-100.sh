#!/usr/bin/env bash
# A class of 100 jobs on one GPU (issue 22, eighth session, windows s8a-s8c): the real course files listed in
# $DATA/students.csv (never committed; 93 ece408-fa20 files then), then our typical examples up to 100; one
# other job makes the model bundle first (a nightly run finds it cached); every nvcc build of the 100 cold
# (BUILD=0), or made first by `grade --build-only` on the host's cores (BUILD=1, the ninth session: a class
# re-graded nightly, or built on a login node before its GPU jobs). WARM=ex-course-minidnn: the warm-up job a
# course-form file (CuPy's kernels of the course form's checks compiled too, as a nightly run finds them; s9c's
# first six jobs spent ~17 s each in their first checks, later ones ~1 s).
# PREV=DIR: an earlier grade of the class (its manifest.json at least): `--previous`, the longest jobs first.
#   DATA=... N=100 JPG=0 (the default jobs a GPU; 6: six) BUILD=1 CACHE=... WARM=tiled-wrong-scale WARM_T=120 CLASS_T=420 RES=/tmp/res bash benchmarks/gpu-runs/grade-class-of-100.sh
set -uo pipefail
ROOT=$PWD; WORK=/tmp/g8; rm -rf "$WORK"; CACHE=${CACHE:-/tmp/g8cache}; DATA=${DATA:-$ROOT/.gpu/data/grade}; RES=${RES:-/tmp/res}; mkdir -p "$RES"
export PYTHONPATH=$PWD:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COLUMNS=140
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader > "$RES/gpus.txt"; nproc >> "$RES/gpus.txt"
GPU=${CUDA_VISIBLE_DEVICES:-0}; GPU=${GPU%%,*}
case "$GPU" in *[!0-9]*) GPU=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader | awk -F', ' -v u="$GPU" '$2 == u { print $1 }') ;; esac
unset CUDA_VISIBLE_DEVICES
python3 benchmarks/grade_class.py build "$WORK/ours" > "$RES/class-build.txt" 2>&1
python3 - "$DATA" "$WORK/ours/class.csv" "$WORK" <<'PY'
import csv, os, sys
from pathlib import Path
data, ours, work = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
real = [{"submission": str(data / r["submission"]), "name": r["name"], "expect": "any"}
        for r in csv.DictReader((data / "students.csv").open())]
mine = [{"submission": str(ours.parent / r["submission"]), "name": "", "expect": r["expect"]} for r in csv.DictReader(ours.open())]
n = int(os.environ.get("N", "100"))  # the class's size: the real files first
for name, rows in (("class100.csv", (real + mine[:max(0, 100 - len(real))])[:n]), ("warm.csv", [r for r in mine if r["submission"].endswith(os.environ.get("WARM", "tiled-wrong-scale"))])):
    with (work / name).open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["submission", "name", "expect"]); w.writeheader(); w.writerows(rows)
PY
wc -l "$WORK/class100.csv" "$WORK/warm.csv"
if [ "${BUILD:-0}" = 1 ]; then
  TB=$(date +%s.%N)
  timeout -s INT 150 python3 -m profconv grade "$WORK/class100.csv" -m ece408-fa20 --out "$WORK/pool" --cache "$CACHE" \
    --build-only --gpus "$GPU" > "$RES/build-only.log" 2>&1
  echo "build-only rc $? in $(python3 -c "import time; print(round(time.time() - $TB, 1))") s"; head -c 600 "$RES/build-only.log"; echo
fi
T0=$(date +%s.%N)
timeout -s INT "${WARM_T:-120}" python3 -m profconv grade "$WORK/warm.csv" -m ece408-fa20 --images 10000 --out "$WORK/warm" --cache "$CACHE" \
  --timeout 300 --kernel-timeout 45 --gpus "$GPU" > "$RES/warm.log" 2>&1
echo "warm rc $? in $(python3 -c "import time; print(round(time.time() - $T0, 1))") s"; tail -3 "$RES/warm.log"
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader,nounits -lms 500 > "$RES/mem.txt" 2>&1 & MEM=$!
T1=$(date +%s.%N)
timeout -s INT "${CLASS_T:-420}" python3 -m profconv grade "$WORK/class100.csv" -m ece408-fa20 --images 10000 --out "$WORK/pool" --cache "$CACHE" \
  --timeout 300 --kernel-timeout 45 --gpus "$GPU" --jobs-per-gpu "${JPG:-0}" ${PREV:+--previous "$PREV"} > "$RES/pool.log" 2>&1
RC=$?
echo "class of 100: rc $RC, wall $(python3 -c "import time; print(round(time.time() - $T1, 1))") s (the command, from its start to its exit)"
kill $MEM
tail -8 "$RES/pool.log"
python3 benchmarks/grade_throughput.py measure "$WORK/pool" | tee "$RES/throughput.txt"
python3 benchmarks/grade_throughput.py measure --json "$WORK/pool" > "$RES/throughput.json"
cp "$WORK/pool/manifest.json" "$WORK/pool/leaderboard.csv" "$RES/" 2>/dev/null; cp "$WORK"/pool/workers/*.log "$RES/" 2>/dev/null
echo "GPU memory used, max MiB: $(cut -d, -f1 "$RES/mem.txt" | sort -n | tail -1); utilization mean %: $(awk -F", " '{s+=$2; n++} END {print s/n}' "$RES/mem.txt")"
python3 - <<'PY' > "$RES/verdicts.tsv"
import json, glob
for f in sorted(glob.glob('/tmp/g8/pool/jobs/*/*/run.json')):
    d = json.load(open(f))
    for r in d.get('results', []):
        if r.get('variant') in ('cudnn', 'reference'): continue
        v = r.get('verdict') or {}
        rule = v.get('rule'); rule = rule.get('id') if isinstance(rule, dict) else rule
        ops = [round((c.get('op_time') or {}).get('median_s', 0) * 1e3, 3) for c in r.get('conv') or []]
        print(d['settings']['kernels'][0], v.get('status'), rule, (v.get('reason') or r.get('error') or '')[:80], r.get('correctness'), ops, sep='\t')
PY
wc -l < "$RES/verdicts.tsv"; cut -f2,3 "$RES/verdicts.tsv" | sort | uniq -c
tar czf "$RES/pool-jobs.tgz" -C "$WORK/pool" --exclude='*.png' --exclude='*-plots' jobs 2>/dev/null
