"""The CUPTI flush of a child that launched many kernels: columns (profile/cupti_buffers) against cupti-python's
record objects (PROFCONV_CUPTI_OBJECTS=1), and a check of every record of the columnar read against the object
cupti-python makes from the same bytes.

    python benchmarks/cupti_flush.py --launches 400000            # the columnar read (default)
    python benchmarks/cupti_flush.py --launches 400000 --objects  # cupti-python's objects (before)
    python benchmarks/cupti_flush.py --launches 20000 --verify    # every record compared field by field

Needs a GPU, CuPy and cupti-python. Prints one JSON line: records by kind, launch / flush / write seconds.
The collector is a grade child's (`work_apis`, one 256 MB buffer), the case whose flush ended a class late.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from typing import Any

import numpy as np

KERNEL = r'extern "C" __global__ void tick(int* x) { if (threadIdx.x == 0) atomicAdd(x, 1); }'
KEEP: list = []
CLASSES = {"kernel": "ActivityKernel10", "memcpy": "ActivityMemcpy6", "memset": "ActivityMemset4",
           "runtime": "ActivityAPI", "driver": "ActivityAPI", "marker": "ActivityMarker2"}


def _obj_fields(what: str, o: Any, cupti: Any, api_name: Any) -> tuple:
    """The fields the columnar read gives, as read from cupti-python's object of the same record."""
    if what == "kernel":
        return (o.name, o.start, o.end, o.correlation_id, o.stream_id)
    if what in ("memcpy", "memset"):
        return (o.start, o.end, o.correlation_id, o.stream_id, o.bytes)
    if what in ("runtime", "driver"):
        return (api_name(what, o.cbid), o.start, o.end, o.correlation_id, o.thread_id)
    thread = o.object_id.pt.thread_id if o.object_kind == cupti.ActivityObjectKind.THREAD else 0
    return (o.id, o.timestamp, o.name or "", o.domain or "", thread)


def _ours(what: str, r: Any) -> tuple:
    if what == "kernel":
        return (r.name, r.start, r.end, r.correlation_id, r.stream_id)
    if what in ("memcpy", "memset"):
        return (r.start, r.end, r.correlation_id, r.stream_id, r.bytes)
    if what in ("runtime", "driver"):
        return (r.name, r.start, r.end, r.correlation_id, r.thread_id)
    return r


def verify(buf: np.ndarray, offsets: np.ndarray, decoded: Any, layouts: Any, cupti: Any, api_name: Any) -> int:
    """Every record of `decoded` equal to cupti-python's object made from its bytes (`from_ptr`); the count."""
    kinds = buf[(offsets[:, None] + np.arange(4))].view("<i4").ravel()
    queues = {"gpu": iter(decoded.gpu), "api": iter(decoded.api), "marker": iter(decoded.markers)}
    checked = 0
    for off, kind in zip(offsets.tolist(), kinds.tolist(), strict=True):
        what = layouts.kinds[kind]
        o = getattr(cupti, CLASSES[what]).from_ptr(buf.ctypes.data + off, readonly=True)
        KEEP.append(o)  # (cupti-python's objects say at their end that no buffer of its own held them)
        queue = queues["gpu" if what in ("kernel", "memcpy", "memset") else
                       "api" if what in ("runtime", "driver") else "marker"]
        mine = _ours(what, next(queue))
        theirs = _obj_fields(what, o, cupti, api_name)
        if mine != theirs:
            raise SystemExit(f"record at {off} ({what}): columns {mine} != cupti-python {theirs}")
        checked += 1
    return checked


def _launch(n: int) -> float:
    import cupy as cp
    import nvtx

    tick = cp.RawKernel(KERNEL, "tick")
    x = cp.zeros(1, cp.int32)
    host = np.arange(1 << 16, dtype=np.float32)
    t = time.perf_counter()
    with nvtx.annotate("bench/cupti-flush/launches", domain="profconv"):
        for i in range(n):
            tick((1,), (32,), (x,))
            if i % 10_000 == 0:
                cp.asarray(host).sum()  # a copy and a reduction now and then
                x.fill(0)
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=400_000)
    ap.add_argument("--objects", action="store_true", help="cupti-python's objects (the path before)")
    ap.add_argument("--verify", action="store_true", help="every record against cupti-python's object")
    args = ap.parse_args(argv)
    if args.objects:
        os.environ["PROFCONV_CUPTI_OBJECTS"] = "1"
    from profconv.profile import cupti_buffers
    from profconv.profile.cupti_collector import CuptiCollector

    checked = [0]
    col = CuptiCollector(work_apis=True, buffer_bytes=CuptiCollector.CHILD_BUFFER_BYTES)
    if args.verify:
        real = cupti_buffers.decode

        def checking(buf, offsets, layouts, api_name, thread_kind, read=cupti_buffers.c_string):
            d = real(buf, offsets, layouts, api_name, thread_kind, read)
            checked[0] += verify(buf, offsets, d, layouts, col.cupti, api_name)
            return d

        cupti_buffers.decode = checking
    with col:
        launch_s = _launch(args.launches)
        t = time.perf_counter()
    flush_s = time.perf_counter() - t
    t = time.perf_counter()
    text = col.to_json()
    write_s = time.perf_counter() - t
    kinds = Counter(g.kind for g in col.gpu) + Counter(a.layer for a in col.api)
    print(json.dumps({"path": "objects" if col.raw is None else "columns", "launches": args.launches,
                      "records": dict(kinds), "ranges": len(col.ranges()), "launch_s": round(launch_s, 3),
                      "flush_s": round(flush_s, 3), "to_json_s": round(write_s, 3), "json_mb": round(len(text) / 1e6, 1),
                      "verified": checked[0] if args.verify else None, "failed": col.failed}))
    sys.stdout.flush()
    os._exit(0 if col.failed is None else 1)  # KEEP's objects not let go one by one


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
