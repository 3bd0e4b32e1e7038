#!/usr/bin/env bash
# Issue 13's evidence on a GPU machine, in one go, every step under a timeout. Compact results at the
# top of $OUT, the records of each step in $OUT/<step>/:
#   run-prof     `profconv run --model ece408-high --profile cupti,ncu` (RUN_VARIANTS): per-variant
#                CUPTI and ncu tables of the timed op only, the agreement table (run-prof.md,
#                agreement.txt, ncu-scope.txt: which NVTX roles ncu profiled, how long it took);
#   bench-full   `profconv bench` of every GPU variant on ece408-high and ece408 (Spring 2018), with the
#                best cuDNN per precision and layout (bench-full.md);
#   bench-<pair> the same bench with only a variant and its cuDNN peer, for each of PAIRS;
#   company-check.md / .txt: each pair's ratio in the full bench against the two-variant one (±3%).
# With two GPUs visible the profiled run goes to the second and the benches to the first, at once
# (the benches that are compared always share one card). Environment: RUN_VARIANTS, PAIRS ("a,b c,d"),
# BENCH_MODELS, BUDGET (s per layer), REPEAT, RUN_S, NCU_S, BENCH_S, TWO_S, PROBE (1: a small ncu
# run first, to see the NVTX filter at work quickly). MODE=company: only the 3% check — CuPy's
# kernel cache filled by parallel sweeps first (scripts/warm_kernels.py), then the full bench on LAYERS
# on one card while the two-variant benches run on the other.
set -u
OUT=${OUT:-/tmp/numbers-evidence}
mkdir -p "$OUT"
P="python3 -m profconv"
export COLUMNS=${COLUMNS:-100}
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 )) s: $*" | tee -a "$OUT/timings.txt"; }

nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv >> "$OUT/gpu.txt" 2>&1
(ncu --version 2>&1 | tail -1) >> "$OUT/gpu.txt"
env | grep -E '^(PROFCONV_|CUDA_VISIBLE)' >> "$OUT/gpu.txt"
NGPU=$(timeout 60 python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 1)
IFS=, read -r -a DEVS <<< "${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $(( NGPU > 0 ? NGPU - 1 : 0 )))}"
LANE_A=${DEVS[0]:-0}
LANE_B=${DEVS[1]:-${DEVS[0]:-0}}
echo "GPUs visible: $NGPU; benches on device $LANE_A, profiled run on device $LANE_B" | tee -a "$OUT/gpu.txt"
cat "$OUT/gpu.txt"

RUN_VARIANTS=${RUN_VARIANTS:-naive,shared,tuned,tensorcore,streams,cudnn,cudnn-nhwc,cudnn-fp16-nhwc}
PAIRS=${PAIRS:-"tuned,cudnn tensorcore,cudnn-fp16-nhwc"}
BENCH_MODELS=${BENCH_MODELS:-ece408-high,ece408}
LAYERS=${LAYERS:-ece408-high/conv1,ece408/conv2}
BENCH_ARGS="--model $BENCH_MODELS --no-fuse --cudnn-kernels --time-budget ${BUDGET:-4} --repeat ${REPEAT:-6} --warmup 2"
[ "${MODE:-all}" = company ] && BENCH_ARGS="$BENCH_ARGS --layer $LAYERS"

keep_run() {  # the compact parts of a run directory (not the timeline)
  mkdir -p "$OUT/$2"
  for f in run.json ncu-raw.csv ncu.log profile-rows.csv; do [ -f "$1/$f" ] && cp "$1/$f" "$OUT/$2/"; done
  cp "$1"/profile-*.log "$OUT/$2/" 2>/dev/null
  find "$OUT/$2" -size +4M -delete
}

lane_prof() {
  export CUDA_VISIBLE_DEVICES=$LANE_B
  if [ "${PROBE:-1}" = 1 ]; then
    stamp "probe: ncu on 200 images of tuned and cudnn"
    timeout 75 $P run --model ece408-high --images 200 --variant tuned,cudnn --profile ncu --profile-timeout 60 \
      --out /tmp/numbers-w/probe > "$OUT/probe.log" 2>&1
    stamp "probe: exit $?"
    keep_run /tmp/numbers-w/probe probe
  fi
  stamp "run-prof: $RUN_VARIANTS"
  timeout "${RUN_S:-200}" $P run --model ece408-high --variant "$RUN_VARIANTS" --profile cupti,ncu \
    --profile-timeout "${NCU_S:-150}" --out /tmp/numbers-w/run-prof > "$OUT/run-prof.log" 2>&1
  stamp "run-prof: exit $?"
  keep_run /tmp/numbers-w/run-prof run-prof
  $P report /tmp/numbers-w/run-prof --markdown "$OUT/run-prof.md" > /dev/null 2>&1
  python3 - /tmp/numbers-w/run-prof/run.json > "$OUT/ncu-scope.txt" 2>&1 <<'EOF'
import collections, json, sys
rec = json.load(open(sys.argv[1]))
prof = rec.get("profile") or {}
ncu = prof.get("ncu") or (prof if prof.get("tool") == "ncu" else {})
roles = collections.Counter(k["role"] for k in ncu.get("launches", []))
print("ncu argv:", " ".join(ncu.get("settings", {}).get("argv", [])))
print("ncu launches by NVTX role:", dict(roles), "set aside:", ncu.get("set_aside"))
per_op = collections.Counter(k["range"] for k in ncu.get("launches", []))
for op, n in per_op.items():
    print(f"  {op}: {n} launch(es)")
for a in prof.get("agreement", []):
    print(f"{a['variant']:>16}/{a['layer']}: Op {a['op_time_s']} CUPTI {a['cupti_busy_s']} ncu {a['ncu_s']} "
          f"within {a['within']} {a['why']}")
print("provenance code:", json.dumps(rec.get("provenance", {}).get("code")))
EOF
  grep -B2 -A24 "Profilers vs Op Time" "$OUT/run-prof.log" > "$OUT/agreement.txt"
}

lane_bench() {
  export CUDA_VISIBLE_DEVICES=$LANE_A
  stamp "bench-full: every GPU variant on $BENCH_MODELS"
  timeout "${BENCH_S:-110}" $P bench $BENCH_ARGS --out /tmp/numbers-w/bench-full --markdown "$OUT/bench-full.md" \
    > "$OUT/bench-full.log" 2>&1
  stamp "bench-full: exit $?"
  mkdir -p "$OUT/bench-full" && cp /tmp/numbers-w/bench-full/bench.json "$OUT/bench-full/" 2>/dev/null
  twos=()
  for pair in $PAIRS; do
    name="bench-${pair//,/-}"
    stamp "$name"
    timeout "${TWO_S:-60}" $P bench $BENCH_ARGS --variant "$pair" --out "/tmp/numbers-w/$name" \
      --markdown "$OUT/$name.md" > "$OUT/$name.log" 2>&1
    stamp "$name: exit $?"
    mkdir -p "$OUT/$name" && cp "/tmp/numbers-w/$name/bench.json" "$OUT/$name/" 2>/dev/null && twos+=("$OUT/$name/bench.json")
  done
  python3 scripts/company_check.py "$OUT/bench-full/bench.json" "${twos[@]}" \
    --layers ece408-high/conv1,ece408/conv2 --markdown "$OUT/company-check.md" > "$OUT/company-check.txt" 2>&1
  stamp "company check (ece408-high/conv1, ece408/conv2): exit $?"
  python3 scripts/company_check.py "$OUT/bench-full/bench.json" "${twos[@]}" \
    --markdown "$OUT/company-check-all-layers.md" > /dev/null 2>&1
}

company_only() {  # MODE=company: the 3% check alone, within ~150 s on a fresh machine
  stamp "warm CuPy's kernel cache (parallel sweeps)"
  CUDA_VISIBLE_DEVICES=$(printf '%s\n' "$LANE_A" "$LANE_B" | sort -u | paste -sd,) \
    timeout "${WARM_S:-40}" python3 scripts/warm_kernels.py --models "$BENCH_MODELS" --layers "$LAYERS" --workers "${WORKERS:-12}" \
    > "$OUT/warm.log" 2>&1
  stamp "warm: exit $?"
  pairs_lane() {
    export CUDA_VISIBLE_DEVICES=$LANE_B
    for pair in $PAIRS; do
      name="bench-${pair//,/-}"
      stamp "$name (device $LANE_B)"
      timeout "${TWO_S:-60}" $P bench $BENCH_ARGS --variant "$pair" --out "/tmp/numbers-w/$name" \
        --markdown "$OUT/$name.md" > "$OUT/$name.log" 2>&1
      stamp "$name: exit $?"
      mkdir -p "$OUT/$name" && cp "/tmp/numbers-w/$name/bench.json" "$OUT/$name/" 2>/dev/null
    done
  }
  PAIRS_PID=
  if [ "$LANE_A" != "$LANE_B" ]; then pairs_lane & PAIRS_PID=$!; fi
  export CUDA_VISIBLE_DEVICES=$LANE_A
  stamp "bench-full: every GPU variant on $LAYERS (device $LANE_A)"
  timeout "${BENCH_S:-95}" $P bench $BENCH_ARGS --out /tmp/numbers-w/bench-full --markdown "$OUT/bench-full.md" \
    > "$OUT/bench-full.log" 2>&1
  stamp "bench-full: exit $?"
  mkdir -p "$OUT/bench-full" && cp /tmp/numbers-w/bench-full/bench.json "$OUT/bench-full/" 2>/dev/null
  if [ -n "$PAIRS_PID" ]; then wait "$PAIRS_PID"; else ( pairs_lane ); fi
  twos=()
  for pair in $PAIRS; do twos+=("$OUT/bench-${pair//,/-}/bench.json"); done
  python3 scripts/company_check.py "$OUT/bench-full/bench.json" "${twos[@]}" --markdown "$OUT/company-check.md" \
    > "$OUT/company-check.txt" 2>&1
  stamp "company check: exit $?"
}

if [ "${MODE:-all}" = company ]; then
  company_only
elif [ "$LANE_A" != "$LANE_B" ]; then
  lane_prof & PROF_PID=$!
  lane_bench
  wait $PROF_PID
else  # one card: no probe, the first pair only, shorter limits (the whole call must fit ~300 s)
  PROBE=0 RUN_S=${RUN_S:-150} NCU_S=${NCU_S:-110} lane_prof
  PAIRS=${PAIRS%% *} lane_bench
fi
stamp "done"
cat "$OUT/company-check.txt" "$OUT/ncu-scope.txt" 2>/dev/null | head -60
