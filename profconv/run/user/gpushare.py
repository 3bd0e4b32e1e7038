"""One GPU shared by several graded kernels' children, its timed calls always alone on it.

A grade worker may run two children on one GPU at once (`profconv grade --jobs-per-gpu`): most of a
job is checking (fresh inputs, the check calls, comparing outputs, the ghost and edge checks), and
only the timed calls -- the course's pass over the net and each layer's timed calls -- are measured.
The children share the GPU through two lock files (flock, released by the kernel when a child dies):

- **shared**: what is not timed. A child holds the shared lock from its start to the moment it gives
  the GPU back, and lets go of it at a `checkpoint()` (between two steps of its checking) when another
  child waits to time, so that child never waits longer than one step of the others;
- **exclusive**: what is timed (`exclusive()`): the course's pass over the net, whole, and the timed
  phase of each timed call (`calls.call`'s `alone`: from the device idle before its start event to its
  device-wide end; the call's prolog and epilog run shared and are not timed). The child waits until
  every other child is between two steps, so no other process's GPU work runs while it times -- the
  measurement is the same as when a job has the GPU to itself. Readers take the `gate` first, and a
  child waiting to time holds it: no new step starts while a timed call waits (no starvation).

Every step ends with the device synchronised before the lock is let go: a child's work never runs
under another's timed call. Waiting is said on stderr (`GPU wait`, as a progress step), so the worker
counts it out of the child's time limit. Without a lock path (`profconv run`) every function is a no-op.

Each lock event is noted with the time and the code that made it (`GpuShare.marks`; `write_marks` puts them
in the job's `<child>.gpusteps.json`): a step between two marks held shared is what another child's turn
waits for, so the long ones and where they start and end tell what drains the turns
(`benchmarks/grade_throughput.py measure` sums them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

WAIT_STEP = "GPU wait"  # the progress step of a child waiting for its turn (grade.pool counts it out of the limit)
MAX_MARKS = 20_000  # a child's lock events kept (a few hundred a job; a runaway loop does not grow without end)


def _site() -> str:
    """The code outside this module that made a lock event: 'module.function:line'."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename in (__file__, contextlib.__file__):
        f = f.f_back
    if f is None:
        return "?"
    return f"{Path(f.f_code.co_filename).stem}.{f.f_code.co_name}:{f.f_lineno}"


class GpuShare:
    """The two locks of one GPU (`path` and `path`.gate), held by this process as the module says."""

    def __init__(self, path: str | os.PathLike[str] | None, sync: Callable[[], None] = lambda: None,
                 say: Callable[[str | None], None] = lambda step: None) -> None:
        self.path = Path(path) if path else None
        self.sync, self.say = sync, say  # say(WAIT_STEP) before a wait, say(None) after it
        self._main = self._gate = -1
        self.held = ""  # "", "shared" or "exclusive"
        self.waits = 0
        self.t0 = time.monotonic()
        self.marks: list[tuple[float, str, str]] = []  # (seconds since start, event, where): see the module
        self.marks_path: str | os.PathLike[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._main = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            self._gate = os.open(str(self.path) + ".gate", os.O_RDWR | os.O_CREAT, 0o666)

    @property
    def active(self) -> bool:
        return self.path is not None

    def _mark(self, event: str) -> None:
        """A lock event: "wait" (about to block), "shared" / "alone" (taken), "release", "step" (a checkpoint
        that went on), with the time and the code that made it."""
        if self.path is not None and len(self.marks) < MAX_MARKS:
            self.marks.append((round(time.monotonic() - self.t0, 4), event, _site()))

    def write_marks(self, path: str | os.PathLike[str] | None) -> None:
        """The lock events as JSON [[seconds, event, where], ...] (nothing without a path or a lock)."""
        if path and self.marks:
            with contextlib.suppress(OSError):
                Path(path).write_text(json.dumps(self.marks))

    def _take(self, op: int) -> None:
        """The gate, then the main lock as `op` (shared or exclusive), then the gate let go: `GPU wait` said
        once before the first of them that would block, and the step said again once it is taken."""
        waited = False
        try:
            for fd, how in ((self._gate, fcntl.LOCK_EX), (self._main, op)):
                try:
                    fcntl.flock(fd, how | fcntl.LOCK_NB)
                except BlockingIOError:
                    if not waited:
                        waited = True
                        self.waits += 1
                        self._mark("wait")
                        self.say(WAIT_STEP)
                    fcntl.flock(fd, how)
        finally:
            fcntl.flock(self._gate, fcntl.LOCK_UN)
        self._mark("alone" if op == fcntl.LOCK_EX else "shared")
        if waited:
            self.say(None)

    def acquire_shared(self) -> None:
        if not self.active or self.held:
            return
        self._take(fcntl.LOCK_SH)
        self.held = "shared"

    def acquire_alone(self) -> None:
        """The GPU exclusively until `release` (a kernel run again alone: its checks too)."""
        if not self.active or self.held:
            return
        self._take(fcntl.LOCK_EX)
        self.held = "exclusive"

    def release(self) -> None:
        """The device synchronised, then the lock let go (shared or exclusive)."""
        if not self.active or not self.held:
            return
        try:
            self.sync()
        finally:  # a lost context cannot synchronise: its work is over, the lock goes all the same
            fcntl.flock(self._main, fcntl.LOCK_UN)
            self.held = ""
            self._mark("release")

    def checkpoint(self) -> bool:
        """Between two steps: a child waiting to time goes first. Nobody waits (the gate is free): the step
        goes on at the cost of two system calls, the device not synchronised. True: the GPU was let go
        and taken again (time passed here that was not this child's work)."""
        if self.held != "shared":
            return False
        try:
            fcntl.flock(self._gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a child waiting to time holds it (or another is taking its lock right now)
            self.release()
            self.acquire_shared()
            return True
        fcntl.flock(self._gate, fcntl.LOCK_UN)
        self._mark("step")
        return False

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """The GPU alone for the block (a timed call), then shared again if it was."""
        if not self.active or self.held == "exclusive":
            yield
            return
        was = self.held
        self.release()
        self._take(fcntl.LOCK_EX)
        self.held = "exclusive"
        try:
            yield
        finally:
            self.release()
            if was:
                self.acquire_shared()

    def close(self) -> None:
        if not self.active:
            return
        with contextlib.suppress(Exception):
            self.release()
        for fd in (self._main, self._gate):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.path, self._main, self._gate = None, -1, -1


_share = GpuShare(None)


def start(path: str | os.PathLike[str] | None, cp: Any = None,
          say: Callable[[str | None], None] = lambda step: None, alone: bool = False,
          marks: str | os.PathLike[str] | None = None) -> GpuShare:
    """This process's share of its GPU (`path`: the GPU's lock file; None: the GPU is the process's alone),
    held shared from now on (`alone`: exclusively, until `release`); `cp` (CuPy) synchronises the device
    before the lock is let go; `marks`: where `release` writes the lock events."""
    global _share
    _share.close()

    def sync() -> None:
        if cp is not None:
            cp.cuda.Device().synchronize()

    _share = GpuShare(path, sync, say)
    _share.marks_path = marks
    if alone:
        _share.acquire_alone()
    else:
        _share.acquire_shared()
    return _share


def current() -> GpuShare:
    return _share


def checkpoint() -> bool:
    return _share.checkpoint()


def note(what: str) -> None:
    """A mark inside a step ("note <what>"): where a long step spends its time (no lock taken or let go)."""
    _share._mark("note " + what)


def exclusive() -> contextlib.AbstractContextManager[None]:
    return _share.exclusive()


class Turns:
    """A pass that holds the GPU alone for what it times and lets go of it for its own preparation in between
    (the course's pass: each conv layer's host buffers are made beside other jobs' work, the layer's call and
    the net's layers up to the next conv layer are timed alone). `hold()` and `let_go()` may repeat; the
    block's end lets go."""

    def __init__(self) -> None:
        self._cm: contextlib.AbstractContextManager[None] | None = None

    def hold(self) -> None:
        if self._cm is None:
            cm = exclusive()
            cm.__enter__()
            self._cm = cm

    def let_go(self) -> None:
        if self._cm is not None:
            cm, self._cm = self._cm, None
            cm.__exit__(None, None, None)

    def __enter__(self) -> Turns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.let_go()


def release() -> None:
    """The GPU given back: no lock held any more (a child that then only writes its records), and the lock
    events written where `start` was told."""
    _share.release()
    _share.write_marks(_share.marks_path)
