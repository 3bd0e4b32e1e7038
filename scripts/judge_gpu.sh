#!/usr/bin/env bash
# judge-rules' GPU window: CUPTI activity of our course-form attribution files (per file, one process each),
# library kernel names (cuDNN/cuBLAS through PyTorch), the real harness child under cupti_child, SASS
# through the GPU machine's cuobjdump, and the GPU tests of the judge. Results under $RES.
set -x
cd "$(dirname "$0")/.."
RES=${RES:-/tmp/judge-res}
mkdir -p "$RES/activity" "$RES/worker"
exec > >(tee "$RES/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv
python3 -c "import cupti, nvtx, cupy; print('cupti ok', cupy.__version__)"
which cuobjdump nvdisasm nvcc; nvcc --version | tail -2
ls /usr/local/cuda/include/cublas_v2.h 2>&1
for f in tests/data/attribution/src/*.cu; do
    timeout 90 python3 scripts/capture_activity.py "$RES/activity" "$f" 2>&1 | tail -20
done
timeout 60 python3 scripts/capture_activity.py "$RES/activity" --library 2>&1 | tail -20
# the real harness child (profconv.run.user.worker) under cupti_child, for an honest and a cheating file
for k in honest prolog_work; do
    job="$RES/worker/$k-job.json"
    python3 - "$job" "$k" <<'PY'
import json, sys
job, k = sys.argv[1], sys.argv[2]
json.dump({"kernel": f"tests/data/attribution/src/{k}.cu", "contract": "course", "model": "ece408-fa20",
           "images": 100, "repeat": 3, "warmup": 1, "data": None, "weights": None, "timeout": 120,
           "sanitize": False, "ci_target": None, "time_budget": 2.0, "layers_only": False,
           "result": job.replace("-job.json", "-result.json"), "build_dir": f"/tmp/profconv-worker/{k}"},
          open(job, "w"))
PY
    timeout 150 python3 -m profconv.profile.cupti_child "$RES/worker/$k.json" profconv.run.user.worker "$job" 2>&1 | tail -15
done
gzip -f "$RES"/activity/*.json "$RES"/worker/*.json
ls -la "$RES"/activity "$RES"/worker
du -sh "$RES"
