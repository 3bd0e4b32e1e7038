#!/usr/bin/env bash
# Grade's class with several jobs a GPU against one (issue 22, sixth session, windows s6a-s6c): the same class
# (real course files in $DATA first, then ours) graded by grade-pool.sh with --jobs-per-gpu $JPG_A, then $JPG_B
# on a warm cache, on one host; the jobs both graded compared (verdict, rule, Correctness, Op Times' ratio).
#   bash benchmarks/gpu-runs/grade-jobs-per-gpu.sh   (DATA, RES as grade-pool.sh; JPG_A=2 JPG_B=1 CAP_A=250 CAP_B=130)
set -uo pipefail
RES=${RES:-/tmp/res}; mkdir -p "$RES"
( POOL_CAP=${CAP_A:-250} BUDGET=$(( ${CAP_A:-250} + 15 )) JPG=${JPG_A:-2} WORK=/tmp/gA CACHE=/tmp/gcache RES=$RES/A \
  bash benchmarks/gpu-runs/grade-pool.sh ) > "$RES/A.log" 2>&1
( POOL_CAP=${CAP_B:-130} BUDGET=$(( ${CAP_B:-130} + 10 )) JPG=${JPG_B:-1} WORK=/tmp/gB CACHE=/tmp/gcache RES=$RES/B \
  bash benchmarks/gpu-runs/grade-pool.sh ) > "$RES/B.log" 2>&1
python3 - <<'PY' | tee "$RES/ab.tsv" | tail -1
import glob, json
def rows(w):
    out = {}
    for f in sorted(glob.glob(f"/tmp/{w}/pool/jobs/*/*/run.json")):
        d = json.load(open(f))
        for r in d.get("results", []):
            if r.get("variant") in ("cudnn", "reference"):
                continue
            v = r.get("verdict") or {}
            rule = v.get("rule"); rule = rule.get("id") if isinstance(rule, dict) else rule
            ops = [(c.get("op_time") or {}).get("median_s", 0) for c in r.get("conv") or []]
            out[d["settings"]["kernels"][0]] = (v.get("status"), rule, r.get("correctness"), ops)
    return out
a, b = rows("gA"), rows("gB")
same = 0
for k in sorted(set(a) & set(b)):
    ok = a[k][:3] == b[k][:3]
    same += ok
    print("SAME" if ok else "DIFF", k, *a[k][:3], *b[k][:3], [round(x / y, 3) if y else None for x, y in zip(a[k][3], b[k][3])], sep="\t")
print(f"# common {len(set(a) & set(b))}: same verdict {same}")
PY
