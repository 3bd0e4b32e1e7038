#!/usr/bin/env bash
# The baseline for grade's verdicts (issue 22, windows s4f, s6d, s13a): the files of $FILES (one path a line,
# relative to the repository root or absolute) through `profconv run --kernel` -- grade's model, images and timing,
# --variant none: the kernels' own verdicts -- $PER files a process (one `run` with a --kernel each: each kernel
# still runs in its own child; the process's start, reference and cuDNN paid once a group), $SLOTS processes at
# once (verdicts, not times), cut at $CAP seconds. Writes $RES/base-verdicts.tsv (file, status, rule, reason,
# Correctness: grade-class-of-100.sh's verdicts.tsv's first five columns); GRADE_TSV=that file compares the two.
#   FILES=list.txt PER=12 SLOTS=8 CAP=480 KT=120 RES=/tmp/res GRADE_TSV=verdicts.tsv bash benchmarks/gpu-runs/grade-verdicts-baseline.sh
set -uo pipefail
RES=${RES:-/tmp/res}; W=${WORK:-/tmp/base}; mkdir -p "$RES" "$W" "$W/groups"
export PYTHONUNBUFFERED=1 COLUMNS=140 ROOT=$PWD W RES
split -l "${PER:-1}" -d -a 3 "$FILES" "$W/groups/g"
one() {
  g=$1; n=$(basename "$g"); args=()
  while IFS= read -r f; do case "$f" in /*) args+=(--kernel "$f") ;; *) args+=(--kernel "$ROOT/$f") ;; esac; done < "$g"
  t0=$SECONDS
  python3 -m profconv run --model ece408-fa20 --images 10000 "${args[@]}" --variant none --repeat 3 \
    --ci-target 0 --kernel-timeout "${KT:-120}" --out "$W/$n" > "$W/$n.log" 2>&1
  printf '%s rc %s in %s s: %s files\n' "$n" "$?" "$((SECONDS - t0))" "$(wc -l < "$g")" >> "$RES/done.txt"
}
export -f one
ls "$W"/groups/g* | timeout -s INT "${CAP:-215}" xargs -d '\n' -P "${SLOTS:-4}" -n 1 bash -c 'one "$1"' _
cat "$RES/done.txt"
python3 - "$W" <<'PY' | tee "$RES/base-verdicts.tsv"
import glob, json, sys
for f in sorted(glob.glob(f"{sys.argv[1]}/g*/run.json")):
    d = json.load(open(f))
    for r in d.get("results", []):
        if r.get("variant") in ("cudnn", "reference", "none"):
            continue
        v = r.get("verdict") or {}
        rule = v.get("rule"); rule = rule.get("id") if isinstance(rule, dict) else rule
        kernels = d["settings"]["kernels"]
        path = (r.get("user") or {}).get("path") or (kernels[0] if len(kernels) == 1 else "?" + r["variant"])
        print(path, v.get("status"), rule, (v.get("reason") or r.get("error") or "")[:90], r.get("correctness"), sep="\t")
PY
[ -n "${GRADE_TSV:-}" ] && python3 benchmarks/grade_class.py compare "$GRADE_TSV" "$RES/base-verdicts.tsv" | tee "$RES/compare.txt"
exit 0
