#!/usr/bin/env bash
# Where a grade child's time goes, step by step (issue 22): one kernel's child (ece408-fa20, 10,000 images,
# 3 timed calls a layer) with each step wrapped by a wall clock, without and with CUPTI as grade runs it.
# One device call, ~60 s on an H200. Numbers: benchmarks/NOTES.md ("grade: the fourth session").
# Usage: RES=/tmp/res [KERN=path/to/new-forward.cu] bash benchmarks/gpu-runs/grade-child-steps.sh
set -uo pipefail
mkdir -p "$RES"; export PYTHONUNBUFFERED=1
W=/tmp/probe; mkdir -p $W/build
KERN=${KERN:-$PWD/tests/data/kernels/course/minidnn-const/new-forward.cu}
python3 - <<PY
import json
for n in ("a", "c"):
    json.dump({"kernel": "$KERN", "contract": None, "model": "ece408-fa20",
     "images": 10000, "repeat": 3, "warmup": 2, "ci_target": 0.02, "time_budget": 1.0, "result": "$W/result-" + n + ".json", "build_dir": "$W/build", "timeout": 500,
     "cupti": "$W/cupti-" + n + ".json"}, open("$W/job-" + n + ".json", "w"))
PY
cat > $W/run.py <<'PY'
import json, sys, time, threading, collections
from profconv.grade import zygote
zygote.preload_imports()
from profconv.run.user import worker, checks, compare, hostcopy, contracts, calls, fresh
from profconv.run import runner
from profconv.profile import cupti_collector
tot = collections.defaultdict(float); cnt = collections.Counter()
main = threading.main_thread()
def wrap(mod, name, label=None):
    f = getattr(mod, name); label = label or f"{getattr(mod, '__name__', mod)}.{name}"
    def g(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally:
            tot[label] += time.perf_counter() - t; cnt[label] += 1
    setattr(mod, name, g)
for mod, names in ((compare, ["compare", "determinism"]), (hostcopy, ["to_device", "fill", "copy_into", "equal"]),
                   (checks, ["prepare"]), (calls, ["call"]), (cupti_collector.CuptiCollector, ["_completed", "api_window"]),
                   (checks.UserCheck, ["_call", "_timed", "_measure", "_ghost", "edges", "layer"]),
                   (contracts.UserKernel, ["operands", "phases"]), (contracts.CourseLibrary, ["prolog", "forward", "epilog", "release"]),
                   (checks, ["course_pass", "run_user"])):
    for n in names: wrap(mod, n)
job = json.load(open(sys.argv[1])); mode = sys.argv[2]
t = time.perf_counter()
if mode == "cupti":
    zygote.under_cupti(job["cupti"], lambda: worker.run_job(job))
else:
    worker.run_job(job)
print("total_s", round(time.perf_counter() - t, 2))
for k in sorted(tot, key=lambda k: -tot[k]):
    print(f"{tot[k]*1e3:10.1f} ms {cnt[k]:5d}x {tot[k]/cnt[k]*1e3:8.2f} ms/call  {k}")
r = json.load(open(job["result"]))
for c in r.get("conv") or []:
    print(c["layer"], c["op_time"]["samples_s"], c["op_time"].get("stopped"), c.get("status"))
print(r.get("status"), r.get("error"))
PY
echo "== warm (compile caches)"; timeout 120 python3 $W/run.py $W/job-a.json plain 2>&1 | grep -v progress | head -40
echo "== cupti"; timeout 120 python3 $W/run.py $W/job-c.json cupti 2>&1 | grep -v "^profconv-progress" | head -45
