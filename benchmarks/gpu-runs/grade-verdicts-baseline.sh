#!/usr/bin/env bash
# The baseline for grade's verdicts (issue 22, windows s4f and s6d): each file of $FILES (one path a line, relative
# to the repository root) as `profconv run --kernel` -- grade's model, images and timing, --variant none: the
# kernel's own verdict -- $SLOTS processes at once (verdicts, not times), cut at $CAP seconds.
set -uo pipefail
RES=${RES:-/tmp/res}; W=${WORK:-/tmp/base}; mkdir -p "$RES" "$W"
export PYTHONUNBUFFERED=1 COLUMNS=140 ROOT=$PWD W RES
one() {
  f=$1; n=$(printf '%s' "$f" | md5sum | cut -c1-8)
  python3 -m profconv run --model ece408-fa20 --images 10000 --kernel "$ROOT/$f" --variant none --repeat 3 \
    --ci-target 0 --kernel-timeout "${KT:-120}" --out "$W/$n" > "$W/$n.log" 2>&1
  printf '%s %s %s\n' "$n" "$?" "$f" >> "$RES/done.txt"
}
export -f one
# one file name a line, passed as an argument (names with parentheses or '+' stay whole)
timeout -s INT "${CAP:-215}" xargs -d '\n' -P "${SLOTS:-4}" -n 1 bash -c 'one "$1"' _ < "$FILES"
python3 - "$W" <<'PY' | tee "$RES/base-verdicts.tsv"
import glob, json, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/*/run.json")):
    d = json.load(open(f))
    for r in d.get("results", []):
        if r.get("variant") in ("cudnn", "reference", "none"):
            continue
        v = r.get("verdict") or {}
        rule = v.get("rule"); rule = rule.get("id") if isinstance(rule, dict) else rule
        print(d["settings"]["kernels"][0], v.get("status"), rule, (v.get("reason") or r.get("error") or "")[:90],
              r.get("correctness"), sep="\t")
PY
