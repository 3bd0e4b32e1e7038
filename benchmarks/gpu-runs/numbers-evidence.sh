#!/usr/bin/env bash
# The GPU call for issue 13 (run by the lead from the copy's root, OUT set): wheels, the caller's
# commit for provenance (the copy has no .git of its own), then benchmarks/gpu-runs/numbers-evidence-steps.sh.
set -u
OUT=${OUT:-/tmp/numbers-evidence}
mkdir -p "$OUT"
timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-numbers ../../.whl/*.whl \
  > "$OUT/pip.log" 2>&1
export PYTHONPATH=/tmp/site-numbers:$PWD PYTHONUNBUFFERED=1
if [ -f benchmarks/gpu-runs/numbers-evidence.commit ]; then  # written by the copy step: "<commit> <dirty 0|1>"
  read -r PROFCONV_GIT_COMMIT PROFCONV_GIT_DIRTY < benchmarks/gpu-runs/numbers-evidence.commit
  export PROFCONV_GIT_COMMIT PROFCONV_GIT_DIRTY
fi
exec bash benchmarks/gpu-runs/numbers-evidence-steps.sh
