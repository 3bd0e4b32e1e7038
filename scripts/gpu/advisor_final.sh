#!/usr/bin/env bash
# counters, SASS and advice only: no wall times from this lane (it may share a GPU)
# advisor (issue 24), the final window: the closing note's GPU numbers on the landed code. The Fall 2020
# ladder with the TF32 rungs, explained live (`explain --collect yes`: the targeted ncu pass and the SASS
# on the GPU machine), the ladder validation on it, then the Fall 2017 ladder if time is left. Under $RES.
set -uo pipefail
set -x
RES=${RES:-/tmp/advisor-res}; mkdir -p "$RES"
exec > >(tee "$RES/trace.txt") 2>&1
export PYTHONUNBUFFERED=1 COLUMNS=100 PROFCONV_TRACEBACK=1
BUDGET=${BUDGET:-212}
left() { echo $(( BUDGET - SECONDS )); }
RUNGS=naive,shared,constant,unroll-gemm,fused,tuned,fp16,tf32-wmma,tensorcore,tensorcore-tf32
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1
for m in ece408-fa20 ece408-high; do
  [ "$(left)" -lt 70 ] && { echo "SKIP $m: $(left)s left"; continue; }
  timeout $(( $(left) - 50 )) python3 -m profconv run --model $m --images 4000 --variant $RUNGS --repeat 7 --warmup 1 \
    --ci-target 0 --out "$RES/$m" > "$RES/$m-run.txt" 2>&1
  echo "run $m rc=$? at ${SECONDS}s"; tail -14 "$RES/$m-run.txt"
  [ -f "$RES/$m/run.json" ] || continue
  timeout $(( $(left) - 8 )) python3 -m profconv explain "$RES/$m" --collect yes --json > "$RES/$m-explain.json" \
    2> "$RES/$m-explain.err"; echo "explain $m rc=$? at ${SECONDS}s"; tail -3 "$RES/$m-explain.err"
  python3 scripts/advice_validation.py "$RES/$m" > "$RES/$m-validation.md" 2>&1; tail -3 "$RES/$m-validation.md"
done
cd "$RES" && rm -rf */explain-child && tar czf runs.tgz ece408-* 2>/dev/null; rm -rf ece408-fa20 ece408-high; ls -la
