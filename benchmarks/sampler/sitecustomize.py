"""A wall-clock stack sampler for finding where a process's time goes when cProfile cannot say
(threads, C calls, child processes). Put this folder first on PYTHONPATH and set SAMPLE_DIR: every
Python process started with that environment (a `profconv run` and the children it spawns) writes
SAMPLE_DIR/<pid>.txt, every 0.1 s one line per Python thread: seconds since start, thread, its
innermost 7 frames. Used for reports/runs/grade/h100x2-s3-job-samples.txt:

    PYTHONPATH=benchmarks/sampler:$PYTHONPATH SAMPLE_DIR=/tmp/samples python3 -m profconv run ...
"""
import atexit
import os
import sys
import threading
import time
import traceback

_d = os.environ.get("SAMPLE_DIR")


def _where(frame) -> str:
    """The innermost 7 frames, innermost first, without reading source lines."""
    stack = traceback.StackSummary.extract(traceback.walk_stack(frame), limit=7, lookup_lines=False)
    return " <- ".join(f"{os.path.basename(s.filename)}:{s.lineno}:{s.name}" for s in stack)


if _d:
    os.makedirs(_d, exist_ok=True)
    _f = open(os.path.join(_d, f"{os.getpid()}.txt"), "w", buffering=1)
    _t0 = time.time()
    _f.write(f"argv {' '.join(sys.argv)} start {_t0:.3f}\n")

    def _loop() -> None:
        main = threading.main_thread().ident
        while True:
            time.sleep(0.1)
            t = time.time() - _t0
            for tid, frame in sys._current_frames().items():
                if tid == threading.get_ident():
                    continue
                name = "main" if tid == main else next(
                    (th.name for th in threading.enumerate() if th.ident == tid), str(tid))
                _f.write(f"{t:7.2f} {name}: {_where(frame)}\n")

    threading.Thread(target=_loop, daemon=True, name="sampler").start()
    atexit.register(lambda: _f.write(f"atexit {time.time() - _t0:.2f}\n"))
