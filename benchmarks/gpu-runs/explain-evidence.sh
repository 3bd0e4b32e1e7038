#!/usr/bin/env bash
# advisor (issue 24), one GPU window: every rung of the ladder on the course shapes, timed, then the
# evidence `profconv explain` diagnoses from: the targeted ncu pass and the SASS of each kernel; and
# the cost of the targeted pass against `ncu --set full` on the same op. Writes under $RES.
set -uo pipefail
set -x
RES=${RES:-/tmp/advisor-res}; mkdir -p "$RES"
exec > >(tee "$RES/trace.txt") 2>&1
export PYTHONUNBUFFERED=1 COLUMNS=100 PROFCONV_TRACEBACK=1
IMAGES=${IMAGES:-4000}
RUNGS=naive,shared,constant,unroll-gemm,fused,tuned,fp16,tensorcore
MODELS=${MODELS:-ece408-fa20 ece408-high ece408-fa19}
BUDGET=${BUDGET:-210}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
ncu --version | tail -1
which cuobjdump nvcc
git log --oneline -1 2>/dev/null || true
left() { echo $(( BUDGET - SECONDS )); }
# fill CuPy's kernel cache in parallel (16 cores): the sweeps then compile nothing
timeout 60 python3 scripts/warm_kernels.py --models "$(echo $MODELS | tr ' ' ',')" --images "$IMAGES" --workers 12 \
  > "$RES/warm.txt" 2>&1; echo "warm rc=$? at ${SECONDS}s"
collect() {  # $1 run dir, $2 seconds, $3 what: ncu | sass
  timeout "$2" python3 - "$1" "$3" <<'PY'
import sys, time
from pathlib import Path
from profconv.records import load
from profconv.io import write_atomic
from profconv.report import evidence
d, what = Path(sys.argv[1]), sys.argv[2]; rec = load(d / "run.json")
t0 = time.perf_counter()
rec.evidence = evidence.collect(rec, d, ncu=what == "ncu", sass=what == "sass", say=print)
write_atomic(d / "run.json", rec.to_json())
n = rec.evidence.ncu
print(f"{what} {time.perf_counter()-t0:.1f}s notes={rec.evidence.notes}")
if what == "ncu":
    print(f"wall={n.wall_s:.1f}s launches={len(n.launches)} dropped={n.dropped} passes={n.passes}")
PY
  echo "collect $3 $1 rc=$? at ${SECONDS}s"
}
first=1
done_models=""
for m in $MODELS; do
  [ "$(left)" -lt 45 ] && { echo "SKIP $m: $(left)s left"; continue; }
  timeout $(( $(left) - 25 )) python3 -m profconv run --model "$m" --images "$IMAGES" --variant "$RUNGS" \
    --repeat 7 --warmup 1 --ci-target 0 --out "$RES/runs/$m" > "$RES/runs-$m.txt" 2>&1
  echo "run $m rc=$? at ${SECONDS}s"; tail -25 "$RES/runs-$m.txt"
  [ -f "$RES/runs/$m/run.json" ] || continue
  collect "$RES/runs/$m" $(( $(left) > 100 ? 100 : $(left) - 5 )) ncu
  done_models="$done_models $m"
  if [ $first = 1 ] && [ "$(left)" -gt 45 ]; then
    first=0  # the cost of `--set full` on one op against the targeted pass (log passes and wall time)
    child="python3 -m profconv run --model $m --images $IMAGES --variant naive --repeat 1 --warmup 0 --ci-target 0 --out /tmp/full-child"
    /usr/bin/time -f "full wall %e s" timeout 40 ncu --set full --clock-control none --cache-control none --nvtx \
      --nvtx-include "profconv@$m/naive/conv2/" --nvtx-exclude "profconv@$m/naive/conv2/check/" --csv --page raw \
      $child > "$RES/ncu-full-naive-conv2.csv" 2> "$RES/ncu-full-naive-conv2.err"
    echo "full rc=$? at ${SECONDS}s"; grep -h "passes\|full wall" "$RES/ncu-full-naive-conv2.err" "$RES/ncu-full-naive-conv2.csv" | head
  fi
done
# a user's kernel (the course's mini-dnn example) explained live: its own ncu child and its SASS
if [ "$(left)" -gt 60 ]; then
  timeout 40 python3 -m profconv run --model ece408-fa20 --images "$IMAGES" --variant none \
    --kernel examples/course-minidnn/new-forward.cu --repeat 5 --warmup 1 --ci-target 0 --out "$RES/runs/user-fa20" \
    > "$RES/runs-user-fa20.txt" 2>&1; echo "user run rc=$? at ${SECONDS}s"; tail -5 "$RES/runs-user-fa20.txt"
  timeout $(( $(left) > 80 ? 60 : $(left) - 15 )) python3 -m profconv explain "$RES/runs/user-fa20" --collect yes --json \
    > "$RES/explain-user-fa20.json" 2> "$RES/explain-user-fa20.err"; echo "user explain rc=$? at ${SECONDS}s"
  tail -5 "$RES/explain-user-fa20.err"
fi
for m in $done_models; do  # SASS last (no GPU needed: nvcc + cuobjdump), then the live diagnosis
  [ "$(left)" -lt 8 ] && break
  timeout $(( $(left) - 3 )) python3 -m profconv explain "$RES/runs/$m" --collect auto --json > "$RES/explain-$m.json" 2> "$RES/explain-$m.err"
  echo "explain $m rc=$? at ${SECONDS}s"; tail -3 "$RES/explain-$m.err"
  COLUMNS=80 timeout 20 python3 -m profconv explain "$RES/runs/$m" --collect no > "$RES/explain-$m.md" 2>&1
done
# keep the big listings small: the raw CSVs and SASS compress well
cd "$RES" && rm -rf runs/*/explain-child runs/*/ncu-child && du -sh runs && tar czf runs.tgz runs && rm -rf runs; ls -la "$RES"
