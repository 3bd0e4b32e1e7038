#!/usr/bin/env bash
# judge-rules' GPU window (runs from the snapshot's root, its cwd at start): `profconv run --kernel` on our
# course-form attribution files and on real course files at their course paths, judged by Spring 2025's
# rules (verdicts end to end: facts, CUPTI attribution, SASS from the machine's cuobjdump); a SASS
# diagnostic first. Results under $RES (run.json per run; scripts/rejudge.py re-judges them offline).
set -x
RES=${RES:-/tmp/judge-res}
mkdir -p "$RES/runs"
exec > >(tee "$RES/log.txt") 2>&1
pwd
git log --oneline -1 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version --format=csv
which cuobjdump nvcc; cuobjdump --version | tail -2
# the SASS path the judge takes, on one build (window 2's run read none: why)
timeout 60 python3 - <<'PY'
from pathlib import Path
from profconv.run.user import build
from profconv.judge.assemble import sass_of
from profconv.profile.disassemble import find_cuobjdump
lib = build.build_course(Path("tests/data/attribution/src/honest.cu"), "minidnn", Path("/tmp/jr-sass/honest/default"),
                         "sm_90", {}, ())
d = sass_of(Path("/tmp/jr-sass/honest"))
print("cuobjdump:", find_cuobjdump(), "| note:", d.note, "| kernels:", [(k.short_name, k.features) for k in d.kernels])
PY
# our attribution files, Spring 2025's rules
args=()
for f in tests/data/attribution/src/*.cu; do args+=(--kernel "$f"); done
timeout 110 python3 -m profconv run --model ece408-fa20 --images 1000 --variant none --repeat 3 --warmup 1 \
    --course sp25 --out "$RES/runs/attribution-sp25" "${args[@]}" 2>&1 | tail -60
# real course files (DATA: a copy of /work/notes/student-files, never committed), laid out at their course
# paths so the req_N/op_N folder is seen: Tensor Core (req_1), FP16 (op_5), streams (req_0), constant (op_0)
if [ -n "${DATA:-}" ] && [ -f "$DATA/index.tsv" ]; then
    real=/tmp/judge-real
    args=()
    for n in 017 019 018 043 047 049 082 084; do
        line=$(awk -F'\t' -v n="$n" 'substr($1,1,3)==n' "$DATA/index.tsv")
        folder=$(echo "$line" | cut -f1); path=$(echo "$line" | cut -f6)
        mkdir -p "$real/$n/$(dirname "$path")"
        cp "$DATA/$folder"/* "$real/$n/$(dirname "$path")/"
        args+=(--kernel "$real/$n/$path")
    done
    timeout 110 python3 -m profconv run --model ece408-fa20 --images 1000 --variant none --repeat 3 --warmup 1 \
        --course sp25 --out "$RES/runs/real-sp25" "${args[@]}" 2>&1 | tail -80
fi
for r in "$RES"/runs/*/run.json; do
    PYTHONPATH=. timeout 20 python3 scripts/rejudge.py "$r" --course sp25,minidnn,profconv 2>&1 | tail -60
done
ls -la "$RES"/runs/*
du -sh "$RES"
