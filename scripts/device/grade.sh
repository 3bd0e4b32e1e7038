#!/usr/bin/env bash
# The GPU call for issue 15 (run by the lead from the copy's root /work/main/.dev/grade, OUT set):
# the wheels of the repository root (.whl, .whl-ray), the caller's commit for provenance (the copy has
# no .git of its own), then benchmarks/grade_gpu.sh STEPS (default both: probe,local,ray; see there)
# within BUDGET seconds (second argument, default 460).
#   bash scripts/device/grade.sh probe,ray 280
set -u
OUT=${OUT:-/tmp/grade-out}
mkdir -p "$OUT"
export BUDGET=${2:-460}
export OUT WHL=${WHL:-../../.whl} WHL_RAY=${WHL_RAY:-../../.whl-ray} SITE=/tmp/site-grade
if [ -f scripts/device/grade.commit ]; then  # written by the copy step: "<commit> <dirty 0|1>"
  read -r PROFCONV_GIT_COMMIT PROFCONV_GIT_DIRTY < scripts/device/grade.commit
  export PROFCONV_GIT_COMMIT PROFCONV_GIT_DIRTY
fi
exec bash benchmarks/grade_gpu.sh "${1:-both}"
