"""A stand-in for `profconv run --kernel` in CPU tests of `profconv grade` (no GPU, no compiler).

usage: python fake_run.py KERNEL MODEL OUT

KERNEL is a submission (a file, or a directory whose first .cu/.cuh/.py file is read); a line
`fake: WHAT` in it says what to do:
  fake: ok T1 T2      write a run record: the kernel correct, Op Times T1, T2 s on conv1, conv2
  fake: wrong         a record whose kernel row FAILED its check (exit 1, like profconv run)
  fake: crash         die by SIGSEGV before writing anything
  fake: hang          sleep forever (the grade time limit kills it)
  fake: exit N        print an error line and exit N without a record
cuDNN takes 0.002 s and 0.004 s on conv1 and conv2 in every record. With FAKE_SLEEP=S in the
environment the job takes S seconds more; the record's environment keeps CUDA_VISIBLE_DEVICES and
the job's start and end times (time.time()), so tests can check that no two jobs shared a GPU, and
OMP_NUM_THREADS (the host's cores split between the jobs at once), and whether $PROFCONV_SECRET_SEED
reached it (never its value).
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

start = time.time()
kernel, model, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
src = kernel if kernel.is_file() else sorted(p for p in kernel.iterdir() if p.suffix in (".cu", ".cuh", ".py"))[0]
what = next(line.split("fake:", 1)[1].split() for line in src.read_text().splitlines() if "fake:" in line)
if what[0] == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
if what[0] == "hang":
    time.sleep(3600)
if what[0] == "exit":
    print(f"error: {src.name}: cannot build the kernel")
    sys.exit(int(what[1]))


def conv(layer, t, status="ok", error=None):
    op = {"median_s": t, "min_s": t, "max_s": t, "samples_s": [t]} if t is not None else None
    return {"layer": layer, "shape": "", "dims": None, "params": {}, "op_time": op, "rel_error": 0.0 if t else None,
            "max_abs_error": None, "tolerance": 1e-5, "status": status, "error": error}


def row(variant, times, status="ok", error=None, user=False):
    r = {"images": 100, "variant": variant, "technique": "", "precision": "fp32", "status": status, "error": error,
         "correctness": 0.86 if status == "ok" else None, "forward_s": None, "layer_times": {}, "type_totals": {},
         "conv": [conv(f"conv{i + 1}", t, "ok" if status == "ok" else "failed", error) for i, t in enumerate(times)]}
    if user:
        r["user"] = {"user": True, "contract": "course", "flavour": "minidnn"}  # as `profconv run --kernel` writes it
    return r


time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
name = kernel.stem if kernel.is_file() else kernel.name
results = [row("cudnn", [0.002, 0.004])]
if what[0] == "ok":
    results.append(row(name, [float(what[1]), float(what[2])], user=True))
else:
    results.append(row(name, [None, None], "failed", "wrong output on conv1: rel. error 0.31 > 1e-05", user=True))
record = {"schema": "profconv.run", "schema_version": 2, "created": "2026-11-26T00:00:00+00:00",
          "argv": sys.argv, "environment": {"gpu": "Fake GPU", "driver_version": 13000, "profconv_version": "0.1.0",
                          "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "start": start, "end": time.time(),
                          "threads": os.environ.get("OMP_NUM_THREADS"),
                          "secret_seed_given": bool(os.environ.get("PROFCONV_SECRET_SEED"))},
          "model": {"name": model}, "data": {}, "settings": {}, "results": results, "interrupted": False, "profile": None}
out.mkdir(parents=True, exist_ok=True)
(out / "run.json").write_text(json.dumps(record))
print("fake run done")
sys.exit(0 if what[0] == "ok" else 1)
