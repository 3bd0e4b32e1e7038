"""A stand-in for CuPy backed by NumPy, for CPU tests of the user-kernel harness (checks.py, calls.py).

Arrays are NumPy arrays; the device is the host; events read time.perf_counter (elapsed in ms, as
CuPy's); `synchronize` runs the callbacks registered with `on_sync` (a test's "work left on another
stream"). Only what the harness uses is here.
"""

from __future__ import annotations

import time
import types
from typing import Any

import numpy as np


class Event:
    def __init__(self, clock: FakeCupy):
        self.clock, self.t = clock, None

    def record(self, stream: Any = None) -> None:
        self.t = self.clock.now()

    def synchronize(self) -> None:
        pass


class FakeCupy(types.SimpleNamespace):
    """`cp` for the harness: NumPy's functions, a `cuda` namespace with events and a device."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list = []  # work "on another stream": done (and its time passed) at the next synchronize
        self.offset = 0.0
        fake = self

        class Device:
            id = 0
            compute_capability = "90"

            def synchronize(self) -> None:
                fake.sync()

        self.cuda = types.SimpleNamespace(
            Device=Device, Event=lambda: Event(fake), get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3,
            runtime=types.SimpleNamespace(getDeviceProperties=lambda i: {"l2CacheSize": 50 << 20}))

    def __getattr__(self, name: str) -> Any:  # everything else is NumPy's
        return getattr(np, name)

    def array(self, a: Any, copy: bool = True, dtype: Any = None) -> np.ndarray:
        return np.array(a, copy=copy, dtype=dtype)

    def now(self) -> float:
        return time.perf_counter() + self.offset

    host_clock = now  # the harness's host clock sees the simulated time pass in `synchronize` too

    def sync(self) -> None:
        while self.pending:
            seconds, work = self.pending.pop(0)
            work()
            self.offset += seconds

    def asnumpy(self, a: Any) -> np.ndarray:
        return np.asarray(a)
