"""A stand-in for CuPy in CPU tests of grade's pool (tests/test_grade_pool.py): no CUDA device.

`cuda.runtime.getDeviceCount()` -- the first thing a kernel's child asks -- reads the child's job
(the file named by PROFCONV_CHILD_JOB, set by grade.zygote) and the `fake:` line of its kernel file:
  fake: hang    sleep until killed (the child's time limit)
  fake: crash   die by SIGSEGV
  fake: cuda    print a CUDA error line and exit 1 without a result (a context lost)
  fake: fork-broken  in a child forked by the zygote: CUDA's initialisation error (spawned: as ok)
  fake: oom-shared  on a shared GPU (the job has a GPU lock, not `gpu_alone`): CuPy's out-of-memory error and
                exit 1 without a result; alone: as ok
  fake: tail    as ok, with a stand-in CUPTI (../cupti) whose flush takes 2 s: the child gives its GPU back
                (grade.zygote.give_back_gpu, through the device and memory pools below) and ends 2 s later
anything else: 0 devices, so the child writes its row "GPU variants need CUDA and CuPy: no CUDA device".
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

__version__ = "0.0-fake"


def _job() -> dict:
    job = os.environ.get("PROFCONV_CHILD_JOB")
    return json.loads(Path(job).read_text()) if job else {}


def _directive() -> str:
    job = os.environ.get("PROFCONV_CHILD_JOB")
    if not job:
        return ""
    kernel = Path(json.loads(Path(job).read_text())["kernel"])
    files = [kernel] if kernel.is_file() else sorted(p for p in kernel.iterdir() if p.suffix in (".cu", ".py"))
    for line in files[0].read_text().splitlines():
        if "fake:" in line:
            return line.split("fake:", 1)[1].strip()
    return ""


class _Runtime:
    @staticmethod
    def getDeviceCount() -> int:
        what = _directive()
        if what == "hang":
            time.sleep(3600)
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if what == "fork-broken" and os.environ.get("PROFCONV_CHILD_JOB"):  # forked by the zygote, not spawned
            print("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInitializationError: "
                  "initialization error", file=sys.stderr)
            os._exit(1)
        if what == "oom-shared" and _job().get("gpu_lock") and not _job().get("gpu_alone"):
            print("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes "
                  "(allocated so far: 0 bytes).", file=sys.stderr)
            os._exit(1)
        if what == "cuda":
            print("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory "
                  "access was encountered", file=sys.stderr)
            os._exit(1)
        return 0


class cuda:  # noqa: N801 - CuPy's module name
    runtime = _Runtime


class _Device:
    def synchronize(self) -> None:
        pass


cuda.Device = _Device  # type: ignore[attr-defined]


class _Pool:
    def free_all_blocks(self) -> None:
        pass


def get_default_memory_pool() -> _Pool:
    return _Pool()


def get_default_pinned_memory_pool() -> _Pool:
    return _Pool()
