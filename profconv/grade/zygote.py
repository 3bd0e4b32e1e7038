"""The fork server behind a grade worker: `python -m profconv.grade.zygote` (one per GPU slot).

It imports what a kernel's child needs (NumPy, CuPy, PyTorch, profconv's checks) once, never opens
a CUDA context itself, loads the model bundles it is told to (memory-mapped), and forks one child
per job: the child starts a session of its own (its process group is what the worker kills at the
time limit), sends its output to the job's log, creates its own CUDA context and runs
`profconv.run.user.worker.run_job` with the bundle's inputs and reference already in memory. A
crash, a hang or a corrupted CUDA context ends with that child; the next job is a new child, forked
from the same clean state. What a child writes to memory it inherited is copied on write: it can
never reach the zygote's bundles or the next child.

Protocol: JSON lines. In on stdin:
  {"op": "load", "bundle": DIR}                          -> {"loaded": DIR, "seconds": s} or {"error": why}
  {"op": "fork", "id": N, "job": JOB.json, "log": LOG, "bundle": DIR or null}
                                                         -> {"forked": N, "pid": PID}
Out on stdout, whenever a child ends: {"exit": N, "pid": PID, "rc": code (negative: killed by that signal)}.
At start: {"ready": PID, "imports_s": s, "cuda_loaded": bool, "threads": n}; `cuda_loaded` true means
the CUDA driver was initialised in this process (a device file is open: something imported called
it): forking is then unsafe and the worker starts each child as a new process instead.
End of stdin: every child still running is killed (its process group), then the zygote exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profconv.grade.bundle import preloaded

POLL_S = 0.01


def preload_imports() -> None:
    """What every child needs, imported once here (a child forked later finds them in memory)."""
    import numpy  # noqa: F401

    for name in ("cupy", "torch"):
        try:
            __import__(name)
        except Exception:  # no CuPy or PyTorch: a dry run, or the child says why it cannot run
            pass
    import profconv.records  # noqa: F401
    import profconv.run.runner  # noqa: F401
    import profconv.run.user.checks  # noqa: F401
    import profconv.run.user.contracts  # noqa: F401
    import profconv.run.user.manifest  # noqa: F401
    import profconv.run.user.worker  # noqa: F401
    import profconv.run.variants  # noqa: F401


def threads() -> int:
    """Threads of this process when it forks (a lock another thread holds would stay held in the child)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def cuda_loaded() -> bool:
    """Whether the CUDA driver was initialised in this process (cuInit opens /dev/nvidiactl and the device
    files): forking is then unsafe. Importing CuPy maps libcuda without initialising it (seen on an H200:
    libcuda mapped after the imports, no /dev/nvidia* open), which is safe to fork."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/nvidia"):
                return True
        except OSError:
            continue
    return False


def run_job(job: dict[str, Any], held: Any) -> int:
    from profconv.run.user import worker

    return worker.run_job(job, held)


def under_cupti(records: str | None, work: Callable[[], int]) -> int:
    """`work()` with CUPTI collecting from before its first CUDA call, the records written to `records`
    whatever happens (as profconv.profile.cupti_child does for a `profconv run` child): the course's
    rules place the kernel's GPU work in prolog / timed call / epilog from them."""
    if not records:
        return work()
    from profconv.io import write_atomic

    try:
        from profconv.profile.cupti_collector import CuptiCollector

        # only the calls that launch GPU work (no windows), read at the flush, after the GPU is given back
        collector: Any = CuptiCollector(work_apis=True, buffer_bytes=CuptiCollector.CHILD_BUFFER_BYTES)
    except Exception as exc:  # no cupti-python, a CUDA mismatch: the kernel still runs, without attribution
        write_atomic(Path(records), json.dumps({"error": f"CUPTI could not start in the child process: {exc}"}))
        return work()
    from profconv.run.user.worker import progress

    try:
        with collector:
            rc = work()
            give_back_gpu()
            progress("CUPTI records: flush")
        return rc
    finally:
        print(f"CUPTI records: {len(collector.api)} API calls, {len(collector.gpu)} GPU activities", file=sys.stderr)
        progress("CUPTI records: write")
        write_atomic(Path(records), collector.to_json())


def give_back_gpu() -> None:
    """The kernel's work is over: every stream done, the memory pools' blocks back to the device, then the
    step that tells the worker (pool.Timeline) that the next job may start on this GPU while this child
    flushes and writes its CUPTI records (host work only). Said only when the device answered: a child
    whose context is lost keeps its GPU until it exits."""
    from profconv.run.user import gpushare
    from profconv.run.user.worker import GPU_RELEASED, progress

    try:
        import cupy as cp

        cp.cuda.Device().synchronize()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # a lost context, a stand-in CuPy: the GPU is given back at exit, as before
        return
    finally:  # a GPU shared with other jobs' children: this one no longer uses it (a lost context runs nothing,
        # and cannot synchronise: the lock goes all the same, and the kernel's record stays the one it wrote)
        with contextlib.suppress(Exception):
            gpushare.release()
    progress(GPU_RELEASED)


def _child(job_path: str, log_path: str, held: Any, pipes: tuple[int, ...]) -> None:
    """In the forked child: a session of its own, output to the log, the job, then _exit (never returns)."""
    rc = 1
    try:
        os.setsid()
        os.environ["PROFCONV_CHILD_JOB"] = job_path  # the job this process runs (its log says which)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        for fd in (log, null, *pipes):  # the zygote's protocol pipe: the worker never waits on a child for it
            os.close(fd)
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        job = json.loads(Path(job_path).read_text())
        rc = under_cupti(job.get("cupti"), lambda: run_job(job, held))
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


class Zygote:
    def __init__(self, out: Any) -> None:
        self.out = out
        self.bundles: dict[str, Any] = {}
        self.children: dict[int, int] = {}  # pid -> job id

    def say(self, doc: dict[str, Any]) -> None:
        self.out.write(json.dumps(doc) + "\n")
        self.out.flush()

    def handle(self, line: str) -> None:
        try:
            cmd = json.loads(line)
            if cmd.get("op") == "load":
                t0 = time.monotonic()
                self.bundles[cmd["bundle"]] = preloaded(Path(cmd["bundle"]))
                self.say({"loaded": cmd["bundle"], "seconds": round(time.monotonic() - t0, 3)})
            elif cmd.get("op") == "fork":
                self.fork(cmd)
            else:
                self.say({"error": f"unknown command {line.strip()[:100]!r}"})
        except Exception as exc:  # a bad bundle or command: said, the zygote goes on
            self.say({"error": f"{type(exc).__name__}: {exc}", "id": locals().get("cmd", {}).get("id")})

    def fork(self, cmd: dict[str, Any]) -> None:
        bundle = cmd.get("bundle")
        held = self.bundles.get(bundle) if bundle else None
        if bundle and held is None:
            self.bundles[bundle] = held = preloaded(Path(bundle))
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(cmd["job"], cmd["log"], held, (self.out.fileno(),))
        self.children[pid] = cmd["id"]
        self.say({"forked": cmd["id"], "pid": pid})

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            self.say({"exit": self.children.pop(pid, None), "pid": pid, "rc": rc})

    def shutdown(self) -> None:
        for pid in list(self.children):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker ends this process (end of stdin), not Ctrl-C
    t0 = time.monotonic()
    preload_imports()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # a stray print (an import's warning) goes to the log, never into the protocol
    z = Zygote(out)
    z.say({"ready": os.getpid(), "imports_s": round(time.monotonic() - t0, 3), "cuda_loaded": cuda_loaded(),
           "threads": threads()})
    stdin = sys.stdin.buffer
    buf = b""
    try:
        while True:
            ready, _, _ = select.select([stdin], [], [], POLL_S)
            if ready:
                chunk = os.read(stdin.fileno(), 65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        z.handle(line.decode())
            z.reap()
    finally:
        z.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
