#!/usr/bin/env bash
# Where a course-form call's time goes (issue 22): host copies at ece408-fa20 conv1's sizes, then one kernel's
# child (tests/data/kernels/course/minidnn-const, 10,000 images) without and with CUPTI as grade runs it, the
# last under cProfile. One device call, ~160 s on an H200. Numbers: benchmarks/NOTES.md ("grade: the cost of
# a course-form call"), docs/grade.md. Usage: RES=/tmp/res bash benchmarks/gpu-runs/course-call-cost.sh
set -uo pipefail
RES=${RES:-/tmp/res}; mkdir -p "$RES"
export PYTHONUNBUFFERED=1
echo "== 1. copies"
python3 - > "$RES/copies.txt" 2>&1 <<'PY'
import time, threading, numpy as np, cupy as cp
from concurrent.futures import ThreadPoolExecutor
def t(f, n=3):
    ts=[]
    for _ in range(n):
        cp.cuda.Device().synchronize(); a=time.perf_counter(); f(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter()-a)
    return round(min(ts)*1e3,1), round(np.median(ts)*1e3,1)
X=(10000,1,86,86); Y=(10000,4,80,80)
dx=cp.random.standard_normal(X,dtype=cp.float32); dy=cp.random.standard_normal(Y,dtype=cp.float32)
hx=np.empty(X,np.float32); hy=np.empty(Y,np.float32)
t0=time.perf_counter(); hy2=np.empty(Y,np.float32); hy2.fill(0); print("first touch+fill 1GB ms", round((time.perf_counter()-t0)*1e3,1))
print("fill nan 1GB (warm pages) ms", t(lambda: hy.fill(np.nan)))
print("D2H 296MB pageable (get out=) ms", t(lambda: dx.get(out=hx)))
print("D2H 1GB pageable ms", t(lambda: dy.get(out=hy)))
print("H2D 296MB pageable ms", t(lambda: cp.asarray(hx)))
print("H2D 1GB pageable ms", t(lambda: cp.asarray(hy)))
pool=ThreadPoolExecutor(8)
def par(fn, arrs, k=8):
    n=arrs[0].shape[0]; step=(n+k-1)//k
    list(pool.map(lambda i: fn(*[a[i*step:(i+1)*step] for a in arrs]), range(k)))
print("np.copyto 1GB 1 thread ms", t(lambda: np.copyto(hy2, hy)))
print("np.copyto 1GB 8 threads ms", t(lambda: par(np.copyto, [hy2, hy])))
print("fill nan 1GB 8 threads ms", t(lambda: par(lambda a: a.fill(np.nan), [hy])))
ph=cp.cuda.alloc_pinned_memory(hy.nbytes); py=np.frombuffer(ph, np.float32, hy.size).reshape(Y)
print("H2D 1GB pinned ms", t(lambda: dy.set(py)))
print("D2H 1GB pinned ms", t(lambda: dy.get(out=py)))
def staged_h2d():
    par(np.copyto, [py, hy]); dy.set(py)
print("H2D 1GB pageable->pinned(8 thr)->dev ms", t(staged_h2d))
def staged_chunks():  # pipelined: copy chunk i to pinned while chunk i-1 goes to device
    k=8; n=Y[0]; step=n//k; s=cp.cuda.Stream(non_blocking=True)
    for i in range(k):
        np.copyto(py[i*step:(i+1)*step], hy[i*step:(i+1)*step])
        with s: dy[i*step:(i+1)*step].set(py[i*step:(i+1)*step], stream=s)
    s.synchronize()
print("H2D 1GB pipelined 1 thr ms", t(staged_chunks))
r=cp.cuda.runtime
def reg():
    r.hostRegister(hy.ctypes.data, hy.nbytes, 0); cp.cuda.Device().synchronize()
def unreg(): r.hostUnregister(hy.ctypes.data)
print("hostRegister 1GB ms", t(lambda: (reg(), unreg())))
PY
cat "$RES/copies.txt"
W=/tmp/probe; mkdir -p $W/build
python3 - <<PY
import json
for n in ("a", "b", "c"):
    json.dump({"kernel": "$PWD/tests/data/kernels/course/minidnn-const/new-forward.cu", "contract": None, "model": "ece408-fa20",
     "images": 10000, "repeat": 5, "warmup": 2, "result": "$W/result-" + n + ".json", "build_dir": "$W/build", "timeout": 500,
     "cupti": "$W/cupti-" + n + ".json"}, open("$W/job-" + n + ".json", "w"))
PY
stamp() { while IFS= read -r l; do echo "$(date +%s.%N | cut -c7-14) $l"; done; }
cat > $W/run.py <<'PY'
import json, sys, cProfile, pstats, time
from profconv.grade import zygote
from profconv.run.user import worker
job = json.load(open(sys.argv[1])); mode = sys.argv[2]
t = time.perf_counter()
if mode == "cupti-prof":
    pr = cProfile.Profile(); pr.enable()
    zygote.under_cupti(job["cupti"], lambda: worker.run_job(job)); pr.disable()
    pstats.Stats(pr, stream=open(sys.argv[3], "w")).sort_stats("tottime").print_stats(45)
elif mode == "cupti":
    zygote.under_cupti(job["cupti"], lambda: worker.run_job(job))
else:
    worker.run_job(job)
print("total_s", round(time.perf_counter() - t, 2), file=sys.stderr)
PY
echo "== warm (compile caches)"; python3 $W/run.py $W/job-a.json plain 2>&1 | stamp | tail -3
echo "== plain"; python3 $W/run.py $W/job-b.json plain 2>&1 | stamp
echo "== cupti"; python3 $W/run.py $W/job-c.json cupti 2>&1 | stamp
echo "== cupti + cProfile"; python3 $W/run.py $W/job-c.json cupti-prof $RES/prof.txt 2>&1 | stamp
head -70 $RES/prof.txt
ls -la $W/cupti-c.json
