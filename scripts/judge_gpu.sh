#!/usr/bin/env bash
# judge-rules' GPU window (runs from the snapshot's root, its cwd at start): CUPTI activity of our
# course-form attribution files (one process each), library kernel names (cuDNN/cuBLAS through PyTorch),
# the real harness child with and without CUPTI (the collection's cost on Op Time), and `profconv run
# --kernel` on every attribution file under sp25 (verdicts end to end, SASS from the machine's
# cuobjdump). Results under $RES.
set -x
RES=${RES:-/tmp/judge-res}
mkdir -p "$RES/activity" "$RES/worker" "$RES/runs"
exec > >(tee "$RES/log.txt") 2>&1
pwd
nvidia-smi --query-gpu=name,driver_version --format=csv
python3 -c "import cupti, nvtx, cupy; print('cupti ok', cupy.__version__)"
which cuobjdump nvcc
for f in tests/data/attribution/src/*.cu; do
    timeout 90 python3 scripts/capture_activity.py "$RES/activity" "$f" 2>&1 | tail -8
done
timeout 60 python3 scripts/capture_activity.py "$RES/activity" --library 2>&1 | tail -8
# the real harness child: under cupti_child (as run now does) and alone, for the collection's cost
for k in honest prolog_work; do
    for mode in cupti plain; do
        job="$RES/worker/$k-$mode-job.json"
        python3 - "$job" "$k" "$mode" <<'PY'
import json, sys
job, k, mode = sys.argv[1:4]
json.dump({"kernel": f"tests/data/attribution/src/{k}.cu", "contract": "course", "model": "ece408-fa20",
           "images": 1000, "repeat": 7, "warmup": 2, "data": None, "weights": None, "timeout": 120,
           "sanitize": False, "ci_target": None, "time_budget": 2.0, "layers_only": False,
           "result": job.replace("-job.json", "-result.json"), "build_dir": f"/tmp/profconv-worker/{k}"},
          open(job, "w"))
PY
        if [ $mode = cupti ]; then
            timeout 150 python3 -m profconv.profile.cupti_child "$RES/worker/$k.json" profconv.run.user.worker "$job" 2>&1 | tail -5
        else
            timeout 150 python3 -m profconv.run.user.worker "$job" 2>&1 | tail -5
        fi
    done
done
python3 - "$RES/worker" <<'PY'
import json, sys, pathlib
d = pathlib.Path(sys.argv[1])
for f in sorted(d.glob("*-result.json")):
    r = json.loads(f.read_text())
    print(f.name, r.get("status"), r.get("error"), [(c["layer"], c.get("op_time", {}) and c["op_time"]["median_s"]) for c in r.get("conv", [])])
PY
# profconv run end to end on each attribution file under sp25 (other rule sets re-judge run.json offline)
for course in sp25; do
    args=()
    for f in tests/data/attribution/src/*.cu; do args+=(--kernel "$f"); done
    timeout 200 python3 -m profconv run --model ece408-fa20 --images 1000 --variant none --repeat 5 --warmup 1 \
        --course $course --out "$RES/runs/$course" "${args[@]}" 2>&1 | tail -80
done
# real course files (DATA: a copy of /work/notes/student-files, never committed), laid out at their course
# paths so the req_N/op_N folder is seen: Tensor Core (req_1), FP16 (op_5), streams (req_0), constant (op_0)
if [ -n "${DATA:-}" ] && [ -f "$DATA/index.tsv" ]; then
    real=/tmp/judge-real
    args=()
    for n in 017 019 018 043 047 049 082 084; do
        line=$(awk -F'\t' -v n="$n" 'substr($1,1,3)==n' "$DATA/index.tsv")
        folder=$(echo "$line" | cut -f1); file=$(echo "$line" | cut -f2); path=$(echo "$line" | cut -f6)
        mkdir -p "$real/$n/$(dirname "$path")"
        cp "$DATA/$folder"/* "$real/$n/$(dirname "$path")/"
        args+=(--kernel "$real/$n/$path")
    done
    timeout 240 python3 -m profconv run --model ece408-fa20 --images 1000 --variant none --repeat 3 --warmup 1 \
        --course sp25 --out "$RES/runs/real-sp25" "${args[@]}" 2>&1 | tail -120
fi
gzip -f "$RES"/activity/*.json "$RES"/worker/*.json
ls -la "$RES"/activity "$RES"/worker "$RES"/runs/*
du -sh "$RES"
