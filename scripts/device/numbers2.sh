#!/usr/bin/env bash
# The second GPU call for issue 13: the 3% company check alone (MODE=company, see numbers_evidence.sh).
export MODE=company
exec bash scripts/device/numbers.sh
