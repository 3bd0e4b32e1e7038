#!/usr/bin/env bash
# GPU validation of `profconv grade` (issue 15), one device call per engine:
#   bash benchmarks/grade_gpu.sh local    # the local executor: a process per job, one job per GPU
#   bash benchmarks/grade_gpu.sh ray      # a local Ray instance on this host's GPUs
#   bash benchmarks/grade_gpu.sh both     # both in one call (needs ~2x the time)
# Builds >= 20 submissions (benchmarks/grade_class.py: examples/ correct, wrong, crashing, hanging,
# not compiling and slow mutations of them, the student files of tests/data/kernels/), times one
# plain `profconv run --kernel` (the per-job cost without grade), grades the class, checks every
# verdict against what the submission is, re-runs to show resuming (every job kept), and leaves
# the grade directories, logs and leaderboards under $OUT.
#
# Wheels: .whl/ as for every device call (msgspec, nvtx, cupti-python). Ray is not on the GPU
# machine and its cp312 wheel (79 MB) is over the 64 MiB a call carries: `bash
# benchmarks/ray_wheels.sh` (here, with a package index) fills .whl-ray/ with it trimmed to 40 MB
# (benchmarks/ray_wheel.py: no Java jars, RLlib, Data, Serve, Tune, Train) and its dependencies;
# carry [".whl", ".whl-ray"] (tree + both: about 55 MB). Without .whl-ray/ the Ray pass says so.
#
# Settings (environment): MODEL=ece408-high IMAGES=1000 TIMEOUT=300 KERNEL_TIMEOUT=60.
# Duration: 20+ jobs of ~10-30 s each on one GPU (a hanging kernel costs KERNEL_TIMEOUT), divided
# by the number of GPUs.
set -uo pipefail
ENGINE=${1:-local}
OUT=${OUT:-/tmp/profconv-out}
MODEL=${MODEL:-ece408-high}
IMAGES=${IMAGES:-1000}
TIMEOUT=${TIMEOUT:-300}
KERNEL_TIMEOUT=${KERNEL_TIMEOUT:-60}
CLASS=/tmp/grade-class
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=120
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 benchmarks/grade_class.py build "$CLASS" | tee "$OUT/class.txt" || exit 1
cp "$CLASS/class.csv" "$OUT/class.csv"

echo "=== one plain profconv run --kernel (the per-job cost without grade)"
/usr/bin/time -f "plain run wall %e s" python3 -m profconv run --model "$MODEL" --images "$IMAGES" \
  --kernel "$CLASS/ex-device-tiled" --variant cudnn --kernel-timeout "$KERNEL_TIMEOUT" --out /tmp/plain-run \
  > "$OUT/plain-run.log" 2>&1
tail -1 "$OUT/plain-run.log"

grade() {  # $1: name, then the engine's options
  local name=$1; shift
  echo "=== profconv grade ($name)"
  /usr/bin/time -f "grade $name wall %e s" python3 -m profconv grade "$CLASS/class.csv" --model "$MODEL" \
    --images "$IMAGES" --timeout "$TIMEOUT" --kernel-timeout "$KERNEL_TIMEOUT" --out "$OUT/grade-$name" "$@" \
    2>&1 | tee "$OUT/grade-$name.log" | tail -45
  python3 benchmarks/grade_class.py check "$OUT/grade-$name" "$CLASS/class.csv" | tee "$OUT/check-$name.txt"
  echo "=== again (resume: every job kept)"
  /usr/bin/time -f "grade $name resume wall %e s" python3 -m profconv grade "$CLASS/class.csv" --model "$MODEL" \
    --images "$IMAGES" --timeout "$TIMEOUT" --kernel-timeout "$KERNEL_TIMEOUT" --out "$OUT/grade-$name" "$@" \
    > "$OUT/grade-$name-resume.log" 2>&1
  grep -E "finished before|job\(s\) in|wall" "$OUT/grade-$name-resume.log"
  rm -rf "$OUT/grade-$name/slurm"
}

if [ "$ENGINE" = local ] || [ "$ENGINE" = both ]; then
  grade local --executor local
fi
if [ "$ENGINE" = ray ] || [ "$ENGINE" = both ]; then
  if ! python3 -c "import ray" 2>/dev/null; then
    if ls .whl-ray/*.whl >/dev/null 2>&1; then
      # ray, and only those of its dependencies this python lacks (never shadow the machine's click,
      # which its typer uses)
      wheels=$(python3 - <<'PY'
import importlib.metadata, pathlib
for whl in sorted(pathlib.Path(".whl-ray").glob("*.whl")):
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
      echo "installing from .whl-ray: $(echo $wheels | tr ' ' '\n' | sed 's|.whl-ray/||; s|-[0-9].*||' | tr '\n' ' ')"
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-ray $wheels 2>&1 | tail -2
      export PYTHONPATH=$PYTHONPATH:/tmp/site-ray
    fi
  fi
  if python3 -c "import ray; print('ray', ray.__version__)"; then
    export RAY_AUTH_MODE=disabled
    grade ray --executor ray
  else
    echo "ray: not installed on this machine and no .whl-ray/ wheels carried: the Ray pass did not run" | tee "$OUT/ray-skipped.txt"
  fi
fi
