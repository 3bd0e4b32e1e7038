#!/usr/bin/env bash
# What CUPTI costs a verdict (issue 22): the API kinds switched on and off (a call window), the runtime and
# driver call ids switched off one by one, and the records of 50 CuPy array operations with every API call
# or only those that launch GPU work. ~5 s on an H200. Numbers: benchmarks/NOTES.md ("grade: the fourth
# session"). Usage: RES=/tmp/res bash benchmarks/gpu-runs/cupti-api-costs.sh
set -uo pipefail
mkdir -p "$RES"; export PYTHONUNBUFFERED=1
timeout 150 python3 - <<'PY' 2>&1 | tee "$RES/cupti-costs.txt"
import re, time, collections
import cupy as cp
from cupti import cupti as c
cp.cuda.Device().synchronize()
recs = []
def req(): return (8 << 20, 0)
def done(acts):
    for a in acts:
        recs.append((int(a.kind), getattr(a, "cbid", None), getattr(a, "name", None) if int(a.kind) == int(c.ActivityKind.CONCURRENT_KERNEL) else None))
c.activity_register_callbacks(req, done)
K = c.ActivityKind
for k in (K.CONCURRENT_KERNEL, K.MEMCPY, K.MEMSET):
    c.activity_enable(k)
def toggles(n=20):
    t = time.perf_counter()
    for _ in range(n):
        c.activity_enable(K.RUNTIME); c.activity_enable(K.DRIVER)
        c.activity_disable(K.RUNTIME); c.activity_disable(K.DRIVER)
    return (time.perf_counter() - t) / n * 1e3
print("window (2 kinds on + off) ms", round(toggles(), 2))
x = cp.random.standard_normal((8 << 20,), dtype=cp.float32); cp.cuda.Device().synchronize()
print("window with a context and arrays ms", round(toggles(), 2))
def names(domain):
    out = {}
    t = time.perf_counter()
    for cb in range(1, 1200):
        try:
            n = c.get_callback_name(domain, cb)
        except Exception:
            continue
        n = n.decode() if isinstance(n, bytes) else str(n)
        if n and "INVALID" not in n.upper():
            out[cb] = n
    return out, (time.perf_counter() - t) * 1e3
rt, trt = names(c.CallbackDomain.RUNTIME_API)
dr, tdr = names(c.CallbackDomain.DRIVER_API)
print("runtime names", len(rt), "in ms", round(trt, 1), "driver names", len(dr), "in ms", round(tdr, 1))
WORK = re.compile(r"Launch|Memcpy|Memset|MemPrefetch|GraphExec|GraphUpload", re.I)
def workload():
    y = x
    s = 0.0
    for i in range(50):
        y = (y * 1.0001 + 0.5).astype(cp.float64)
        s += float((y * y).sum())
        y = cp.where(cp.isfinite(y), y, 0.0).astype(cp.float32)
    h = cp.asnumpy(y); cp.asarray(h)
    cp.cuda.Device().synchronize()
def run(label):
    recs.clear(); c.activity_flush_all(1); recs.clear()
    t = time.perf_counter(); workload(); w = time.perf_counter() - t
    t = time.perf_counter(); c.activity_flush_all(1); f = time.perf_counter() - t
    by = collections.Counter(r[0] for r in recs)
    api = collections.Counter((r[0], r[1]) for r in recs if r[1] is not None)
    top = [(rt.get(cb) if k == int(K.RUNTIME) else dr.get(cb), n) for (k, cb), n in api.most_common(12)]
    print(label, "workload ms", round(w * 1e3, 1), "flush ms", round(f * 1e3, 1), "records", dict(by), top)
run("no API kinds")
c.activity_enable(K.RUNTIME); c.activity_enable(K.DRIVER)
run("API kinds on, all APIs")
t = time.perf_counter(); n = 0
for cb, name in rt.items():
    if not WORK.search(name):
        c.activity_enable_runtime_api(cb, 0); n += 1
for cb, name in dr.items():
    if not WORK.search(name):
        c.activity_enable_driver_api(cb, 0); n += 1
print("switched off", n, "APIs in ms", round((time.perf_counter() - t) * 1e3, 1))
run("API kinds on, work APIs only")
print("kept:", sorted({n for n in list(rt.values()) + list(dr.values()) if WORK.search(n)})[:80])
PY
