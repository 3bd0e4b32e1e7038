#!/usr/bin/env bash
# The second GPU call for issue 13: the 3% company check alone (MODE=company, see numbers-evidence-steps.sh).
export MODE=company
exec bash benchmarks/gpu-runs/numbers-evidence.sh
