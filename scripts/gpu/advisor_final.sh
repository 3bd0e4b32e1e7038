#!/usr/bin/env bash
# counters, SASS and advice only: no wall times from this lane (it may share a GPU)
# advisor (issue 24), the final window, on landed code: (1) the Fall 2020 ladder with the TF32 rungs,
# explained live (`explain --collect yes`: the targeted ncu pass and the SASS on the GPU machine) and the
# ladder validation on it; (2) real students' course files from $DATA (never committed), one run each,
# explained live (their own ncu child); (3) the Fall 2019 ladder if time is left. Compact results under $RES,
# written as each step ends (a lane killed at its timeout keeps what was written).
set -uo pipefail
set -x
RES=${RES:-/tmp/advisor-res}; mkdir -p "$RES"
exec > >(tee "$RES/trace.txt") 2>&1
export PYTHONUNBUFFERED=1 COLUMNS=100 PROFCONV_TRACEBACK=1
BUDGET=${BUDGET:-380}
left() { echo $(( BUDGET - SECONDS )); }
RUNGS=naive,shared,constant,unroll-gemm,fused,tuned,fp16,tf32-wmma,tensorcore,tensorcore-tf32
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1
keep() {  # the run directory without the child's scratch, packed beside the others
  rm -rf "$RES/$1/explain-child"; tar czf "$RES/$1.tgz" -C "$RES" "$1" && rm -rf "$RES/$1"
}
ladder() {  # $1 model
  timeout $(( $(left) - 60 )) python3 -m profconv run --model $1 --images 4000 --variant $RUNGS --repeat 7 --warmup 1 \
    --ci-target 0 --out "$RES/$1" > "$RES/$1-run.txt" 2>&1
  echo "run $1 rc=$? at ${SECONDS}s"; tail -24 "$RES/$1-run.txt"
  [ -f "$RES/$1/run.json" ] || return
  timeout $(( $(left) - 10 )) python3 -m profconv explain "$RES/$1" --collect yes --json > "$RES/$1-explain.json" \
    2> "$RES/$1-explain.err"; echo "explain $1 rc=$? at ${SECONDS}s"; tail -3 "$RES/$1-explain.err"
  python3 scripts/advice_validation.py "$RES/$1" > "$RES/$1-validation.md" 2>&1; tail -7 "$RES/$1-validation.md"
  keep $1
}
ladder ece408-fa20
for f in "${DATA:-/nonexistent}"/*.cu; do
  [ -f "$f" ] || continue
  [ "$(left)" -lt 70 ] && { echo "SKIP $f: $(left)s left"; continue; }
  n=student-$(basename "$f" .cu)
  timeout 75 python3 -m profconv run --model ece408-fa20 --images 2000 --variant none --kernel "$f" --repeat 5 \
    --warmup 1 --ci-target 0 --kernel-timeout 70 --out "$RES/$n" > "$RES/$n-run.txt" 2>&1
  echo "run $n rc=$? at ${SECONDS}s"; tail -6 "$RES/$n-run.txt"
  [ -f "$RES/$n/run.json" ] && timeout $(( $(left) > 100 ? 60 : $(left) - 20 )) python3 -m profconv explain "$RES/$n" \
    --collect yes --json > "$RES/$n-explain.json" 2> "$RES/$n-explain.err"
  echo "explain $n rc=$? at ${SECONDS}s"; tail -3 "$RES/$n-explain.err"
  [ -d "$RES/$n" ] && keep $n
done
[ "$(left)" -gt 150 ] && ladder ece408-fa19
ls -la "$RES"
