#!/usr/bin/env bash
# timing (the targeted ncu pass against --set full on one op: wall times)
# advisor (issue 24), window 2: real students' course files (from $DATA, never committed) run and
# explained live on the GPU (their own ncu child each); the Fall 2019 ladder with its targeted pass;
# the targeted pass and `--set full` on the same op, with the child alone as the baseline. Under $RES.
set -uo pipefail
set -x
RES=${RES:-/tmp/advisor-res}; mkdir -p "$RES"
exec > >(tee "$RES/trace.txt") 2>&1
export PYTHONUNBUFFERED=1 COLUMNS=100 PROFCONV_TRACEBACK=1
BUDGET=${BUDGET:-212}
left() { echo $(( BUDGET - SECONDS )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -la "${DATA:-/nonexistent}"
kernels=()
for f in "${DATA:-/nonexistent}"/*.cu; do [ -f "$f" ] && kernels+=(--kernel "$f"); done
if [ ${#kernels[@]} -gt 0 ]; then
  timeout 100 python3 -m profconv run --model ece408-fa20 --images 2000 --variant none "${kernels[@]}" \
    --repeat 5 --warmup 1 --ci-target 0 --kernel-timeout 80 --out "$RES/students" > "$RES/students-run.txt" 2>&1
  echo "students run rc=$? at ${SECONDS}s"; tail -20 "$RES/students-run.txt"
  timeout $(( $(left) > 120 ? 70 : $(left) - 40 )) python3 -m profconv explain "$RES/students" --collect ncu --json \
    > "$RES/students-explain.json" 2> "$RES/students-explain.err"
  echo "students explain rc=$? at ${SECONDS}s"; tail -5 "$RES/students-explain.err"
fi
# the cost of the targeted pass against --set full on one op (fa20 naive conv2, 2,000 images), the child alone first
child="python3 -m profconv run --model ece408-fa20 --images 2000 --variant naive --repeat 1 --warmup 0 --ci-target 0"
if [ "$(left)" -gt 60 ]; then
  /usr/bin/time -f "plain wall %e s" $child --out /tmp/c0 > /dev/null 2> "$RES/cost-plain.err"; tail -1 "$RES/cost-plain.err"
  METRICS=$(python3 -c "from profconv.profile.targeted_ncu import DIAGNOSIS_METRICS as m; print(','.join(m))")
  for what in targeted full; do
    if [ $what = targeted ]; then sel=(--metrics "$METRICS"); else sel=(--set full); fi
    /usr/bin/time -f "$what wall %e s" timeout 45 ncu --csv --page raw --clock-control none --cache-control none "${sel[@]}" \
      --nvtx --nvtx-include "profconv@ece408-fa20/naive/conv2/" --nvtx-exclude "profconv@ece408-fa20/naive/conv2/check/" \
      $child --out /tmp/c-$what > "$RES/cost-$what.csv" 2> "$RES/cost-$what.err"
    echo "$what rc=$? at ${SECONDS}s"; tail -1 "$RES/cost-$what.err"
  done
fi
# the Fall 2019 ladder, its targeted pass
if [ "$(left)" -gt 75 ]; then
  timeout $(( $(left) - 45 )) python3 -m profconv run --model ece408-fa19 --images 4000 \
    --variant naive,shared,constant,unroll-gemm,fused,tuned,fp16,tensorcore,tensorcore-tf32 --repeat 7 --warmup 1 --ci-target 0 \
    --out "$RES/fa19" > "$RES/fa19-run.txt" 2>&1
  echo "fa19 run rc=$? at ${SECONDS}s"; tail -12 "$RES/fa19-run.txt"
  [ -f "$RES/fa19/run.json" ] && timeout $(( $(left) - 4 )) python3 -m profconv explain "$RES/fa19" --collect ncu \
    --json > "$RES/fa19-explain.json" 2> "$RES/fa19-explain.err"
  echo "fa19 explain rc=$? at ${SECONDS}s"; tail -3 "$RES/fa19-explain.err"
fi
cd "$RES" && rm -rf students/explain-child fa19/explain-child && tar czf runs.tgz students fa19 2>/dev/null; rm -rf students fa19; ls -la
