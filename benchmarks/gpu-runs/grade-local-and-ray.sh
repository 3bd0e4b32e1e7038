#!/usr/bin/env bash
# GPU validation of `profconv grade` (issue 15) on one multi-GPU host:
#   bash benchmarks/gpu-runs/grade-local-and-ray.sh both             # probe,local,ray: everything but sanitize, in one call
#   bash benchmarks/gpu-runs/grade-local-and-ray.sh ray,probe        # any comma list of the steps, run in that order:
#     probe     where one job's time goes (below)
#     local     the class with the local executor (a process per job, one job per GPU)
#     ray       the class on a local Ray instance (num_gpus=1 tasks)
#     sanitize  grade --sanitize over the over-reading kernel (and any racy one) and a correct one
# Builds >= 20 submissions (benchmarks/grade_class.py: examples/ correct, wrong, crashing, hanging,
# not compiling and slow mutations of them, the student files of tests/data/kernels/), every one asking
# for this machine's GPU type (Ray places by accelerator type) and one asking for a type it lacks
# (must come back unplaced). Then:
#  - probe: where one job's time goes (one whole job with each of its Python processes under
#    cProfile: imports, CUDA contexts, cuDNN's search, NVRTC, checks, timing; then the report), GPU 0;
#  - each pass: `profconv grade` over the class, its leaderboard checked against what each submission
#    is, where and when every job ran (which GPU; both GPUs at once; never two jobs on one GPU), and a
#    second run that must keep every job (resume).
# Everything that comes back is at $OUT's top level: per pass grade-<pass>.log, check-<pass>.txt (the
# verdict check, the per-job GPU/start/end/wall table, the schedule, cuDNN's spread),
# leaderboard-<pass>.md/.csv, manifest-<pass>.json, records-<pass>.tgz (job.json, run.json, job.log of
# every job; no plots); probe.txt; ray-logs.tgz when the Ray pass failed; summary.txt.
#
# Wheels: WHL (default .whl) as for every device call; Ray from WHL_RAY (default .whl-ray: `bash
# benchmarks/gpu-runs/ray-wheels.sh` fills it, Ray trimmed to 40 MB). Settings (environment): MODEL=ece408-high
# IMAGES=10000 (cuDNN's conv at 100 images is ~10 us of kernel behind ~50 us of PyTorch host time:
# its ratio means nothing there) TIMEOUT=120 KERNEL_TIMEOUT=15 BUDGET=460 (seconds for the whole
# script; each pass gets what is left, less a margin, at most PASS_CAP=230, and is killed past it: its logs
# still come back). KERNEL_TIMEOUT covers an nvcc build: under 2 concurrent jobs a course (minidnn) submission
# needs more than 12 s (2026-11-26 H100 run), so 30 for a class with course kernels.
set -uo pipefail
WHAT=${1:-both}
[ "$WHAT" = both ] && WHAT=probe,local,ray
has() { case ",$WHAT," in *,$1,*) return 0;; esac; return 1; }
OUT=${OUT:-/tmp/profconv-out}
MODEL=${MODEL:-ece408-high}
IMAGES=${IMAGES:-10000}
TIMEOUT=${TIMEOUT:-120}
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-15}
BUDGET=${BUDGET:-460}
RESERVE=${RESERVE:-0}  # seconds a pass leaves for the steps after it (e.g. 35 for a probe)
PASS_CAP=${PASS_CAP:-230}  # seconds one pass may take at most
DROP=${DROP:-}  # submissions left out of the class (space-separated names), to fit a short call
WHL=${WHL:-.whl}
WHL_RAY=${WHL_RAY:-.whl-ray}
SITE=${SITE:-/tmp/site-grade}
WORK=${WORK:-/tmp/grade-work}
CLASS=$WORK/class
LISTING=$CLASS/class.csv
T0=$(date +%s)
mkdir -p "$OUT" "$WORK"
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
say() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$OUT/summary.txt"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }

python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$WHL"/*.whl > "$OUT/pip.log" 2>&1
export PYTHONPATH=$SITE:$PWD PYTHONUNBUFFERED=1 COLUMNS=120 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
if has ray; then
  if ! python3 -c "import ray" 2>/dev/null && ls "$WHL_RAY"/*.whl >/dev/null 2>&1; then
    # ray, and only those of its dependencies this python lacks (never shadow the machine's click,
    # which its typer uses)
    wheels=$(WHL_RAY=$WHL_RAY python3 - <<'PY'
import importlib.metadata, os, pathlib
for whl in sorted(pathlib.Path(os.environ["WHL_RAY"]).glob("*.whl")):
    dist = whl.name.split("-")[0]
    try:
        importlib.metadata.version(dist)
        have = dist != "ray"
    except importlib.metadata.PackageNotFoundError:
        have = False
    if not have:
        print(whl)
PY
)
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE-ray" $wheels >> "$OUT/pip.log" 2>&1
    export PYTHONPATH=$PYTHONPATH:$SITE-ray
  fi
  python3 -c "import ray; print('ray', ray.__version__)" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
fi
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv | tee "$OUT/gpu.txt"
# the GPU type as Ray names it (its accelerator_type), else the model token of nvidia-smi's name
TYPE=$(python3 -c "
from ray._private.accelerators import NvidiaGPUAcceleratorManager as M
print(M.get_current_node_accelerator_type() or '')" 2>/dev/null)
[ -n "$TYPE" ] || TYPE=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | awk '{print $2}')
python3 benchmarks/grade_class.py build "$CLASS" "$TYPE" > "$OUT/class.txt" 2>&1 || { cat "$OUT/class.txt"; exit 1; }
for name in $DROP; do grep -v "^$name," "$CLASS/class.csv" > "$CLASS/class.tmp" && mv "$CLASS/class.tmp" "$CLASS/class.csv"; done
cp "$CLASS/class.csv" "$OUT/class.csv"
say "class: $(tail -1 "$OUT/class.txt"); GPU type $TYPE"

timed() {  # $1: label, then the command; its wall time goes to probe.txt
  local label=$1; shift
  local a b
  a=$(now)
  timeout 120 "$@" > "$WORK/probe-$label.log" 2>&1
  local rc=$?
  b=$(now)
  printf '%-34s %6s s  (exit %s)\n' "$label" "$(secs "$a" "$b")" "$rc" | tee -a "$OUT/probe.txt"
}

probe() {  # one job with every Python process in it under cProfile (a sitecustomize of this probe only)
  local need=22
  if [ "$(left)" -lt "$need" ]; then say "probe: not run, only $(left) s of the budget left"; return; fi
  say "probe: one job's parts, on GPU 0 alone"
  local K="$CLASS/ex-device-tiled" site="$WORK/probe-site" prof="$WORK/prof"
  mkdir -p "$site" "$prof"
  cat > "$site/sitecustomize.py" <<'PY'
import os
if os.environ.get("PROBE_PROFILE_DIR"):
    import atexit, cProfile, sys, time
    _t0 = time.time()
    _p = cProfile.Profile()
    _p.enable()

    def _dump():
        _p.disable()
        name = os.path.join(os.environ["PROBE_PROFILE_DIR"], f"{os.getpid()}")
        _p.dump_stats(name + ".prof")
        with open(name + ".argv", "w") as fh:
            fh.write(f"{time.time() - _t0:.3f} {' '.join(sys.argv)[:200]}\n")

    atexit.register(_dump)
PY
  echo "images $IMAGES, model $MODEL, kernel examples/device-tiled; the NVRTC cache of CuPy is warm from the pass before" >> "$OUT/probe.txt"
  timed python-start python3 -c "pass"
  CUDA_VISIBLE_DEVICES=0 PROBE_PROFILE_DIR="$prof" PYTHONPATH="$site:$PYTHONPATH" timed "job (cProfile in each process)" \
    python3 -m profconv run --model "$MODEL" --images "$IMAGES" --variant cudnn --kernel "$K" \
    --kernel-timeout "$KERNEL_TIMEOUT" --out "$WORK/probe-job"
  CUDA_VISIBLE_DEVICES= timed report python3 -m profconv report "$WORK/probe-job/run.json" --markdown "$WORK/probe-job/report.md"
  python3 - "$prof" >> "$OUT/probe.txt" 2>&1 <<'PY'
import glob, io, os, pstats, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.prof"))):
    wall, _, argv = open(f[:-5] + ".argv").read().partition(" ")
    print(f"\n=== {argv.strip()}\nwall from interpreter start to exit: {float(wall):.2f} s")
    buf = io.StringIO()
    st = pstats.Stats(f, stream=buf)
    st.sort_stats("cumulative").print_stats(
        r"\(_find_and_load\)|profconv/|subprocess\.py.*\((wait|run|communicate)\)|cupy/cuda/(device|compiler)|"
        r"cupy/_core/|torch/cuda/__init__|torch/nn/functional|nvrtc|_spawn", 32)
    print("\n".join(ln for ln in buf.getvalue().splitlines()[6:] if ln.strip()))
PY
  cp "$WORK/probe-job/run.json" "$OUT/probe-job-run.json" 2>/dev/null
}

grade() {  # $1: pass name, then the engine's options
  local name=$1; shift
  local dir="$WORK/grade-$name" limit
  limit=$(( $(left) - 12 - RESERVE ))
  [ "$limit" -gt "$PASS_CAP" ] && limit=$PASS_CAP
  if [ "$limit" -lt 60 ]; then say "grade $name: not run, only $(left) s of the budget left"; return; fi
  say "grade ($name), at most $limit s"
  local a b
  a=$(now)
  # SIGINT at the limit: grade ends its running jobs' process groups (no orphan left on a GPU) and
  # keeps its manifest; the check then builds the board from it
  timeout -s INT -k 20 "$limit" python3 -m profconv grade "$LISTING" --model "$MODEL" --images "$IMAGES" \
    --timeout "$TIMEOUT" --kernel-timeout "$KERNEL_TIMEOUT" --out "$dir" "$@" > "$OUT/grade-$name.log" 2>&1
  local rc=$?
  b=$(now)
  say "grade $name: exit $rc, wall $(secs "$a" "$b") s"
  [ -f "$dir/leaderboard.md" ] && cp "$dir/leaderboard.md" "$OUT/leaderboard-$name.md"
  [ -f "$dir/leaderboard.csv" ] && cp "$dir/leaderboard.csv" "$OUT/leaderboard-$name.csv"
  [ -f "$dir/manifest.json" ] && cp "$dir/manifest.json" "$OUT/manifest-$name.json"
  if [ -f "$dir/manifest.json" ]; then
    python3 benchmarks/grade_class.py check "$dir" "$LISTING" > "$OUT/check-$name.txt" 2>&1
    say "check $name: $(tail -1 "$OUT/check-$name.txt")"
  fi
  if [ -f "$dir/leaderboard.csv" ]; then
    a=$(now)
    timeout 60 python3 -m profconv grade "$LISTING" --model "$MODEL" --images "$IMAGES" \
      --timeout "$TIMEOUT" --kernel-timeout "$KERNEL_TIMEOUT" --out "$dir" "$@" > "$WORK/grade-$name-resume.log" 2>&1
    b=$(now)
    say "resume $name: $(grep -E 'finished before' "$WORK/grade-$name-resume.log" | head -1) (wall $(secs "$a" "$b") s)"
  fi
  (cd "$dir" 2>/dev/null && find jobs -name job.json -o -name run.json -o -name job.log | tar czf "$OUT/records-$name.tgz" -T -)
}

ray_pass() {
  if ! python3 -c "import ray" 2>/dev/null; then
    say "ray: not installed and no $WHL_RAY/ wheels: the Ray pass did not run"
    return
  fi
  grade ray --executor ray
  if ! grep -q "^0 unexpected verdict" "$OUT/check-ray.txt" 2>/dev/null; then
    (cd /tmp/ray/session_latest/logs 2>/dev/null && tar czf "$OUT/ray-logs.tgz" --exclude='*.out' . 2>/dev/null)
  fi
}

sanitize_pass() {
  LISTING=$CLASS/sanitize.csv
  head -1 "$CLASS/class.csv" > "$LISTING"
  grep -E '^(bad-reads_past_end|ex-device-tiled|bad-rac[^,]*),' "$CLASS/class.csv" >> "$LISTING"
  grade sanitize --executor local --sanitize
  LISTING=$CLASS/class.csv
}

for step in ${WHAT//,/ }; do  # in the order given
  case $step in
    probe) probe;;
    local) grade local --executor local;;
    ray) ray_pass;;
    sanitize) sanitize_pass;;
    *) say "unknown step $step";;
  esac
done
say "done"
