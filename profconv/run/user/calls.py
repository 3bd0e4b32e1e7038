"""One call of a user's kernel as the course's program makes it, timed phase by phase, device-wide.

A call is up to three phases — the course's `conv_forward_gpu_prolog` (copies in), the timed phase
(`conv_forward_gpu`; MXNet `forward`; the whole call for the single-call form; the launch for
profconv's own contracts) and `conv_forward_gpu_epilog` (copy out, free) — each in its own NVTX range,
so a profiler (CUPTI attribution, ncu) sees which phase launched what:

  MODEL/VARIANT/LAYER/prolog     the prolog of a timed call
  MODEL/VARIANT/LAYER            the timed phase itself (profconv's timed-op range)
  MODEL/VARIANT/LAYER/epilog     the epilog of a timed call
  MODEL/VARIANT/LAYER/check/{prolog,conv_forward_gpu,epilog}   the checking calls (cold, determinism, ghost)

The timed phase ends when the whole device is idle (every stream), as the course's own timing did
(`cudaDeviceSynchronize` before its end time): work a call leaves running on another stream is
counted, and how long it ran past the call's own stream is recorded (`left_running_s`). That time is
the lesser of two measurements: the GPU's, from the call's stream finishing to the device-wide end event
(which also holds the host's latency in recording that event: milliseconds on a loaded CPU), and the
host's, how long the device-wide synchronisation blocked once the call's own stream was done (about
zero when nothing was left). Only work really left running makes both large.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from profconv.run.user import callwindow

PROLOG, FORWARD, EPILOG = "prolog", "conv_forward_gpu", "epilog"
PHASES = (PROLOG, FORWARD, EPILOG)
# the host's own latency between the call's stream finishing and the device-wide end event (measured
# 5-30 µs on an H100); a gap above this (and above a twentieth of the call) is work left on another stream
LEFT_RUNNING_SLACK_S = 50e-6


def phase_of(range_path: str) -> str | None:
    """Which phase of a user kernel's call an NVTX range path is ('ece408/k/conv1/prolog' -> 'prolog',
    'ece408/k/conv1' -> 'conv_forward_gpu', 'ece408/k/conv1/check/epilog' -> 'epilog'); None for a
    range that is not a call's phase (the reference pass, the forward pass of the net, set-up)."""
    parts = range_path.split("/")
    if len(parts) == 3:
        return FORWARD
    if len(parts) >= 4 and parts[-1] in PHASES:
        return parts[-1]
    return None


@dataclass
class CallTimes:
    """Seconds of one call's phases (None: the form has no such phase)."""

    op_s: float
    end_to_end_s: float | None = None
    prolog_s: float | None = None
    epilog_s: float | None = None
    left_running_s: float = 0.0  # how long work ran on other streams after the call's own stream was done


@dataclass
class Phases:
    """A call split as the course's program calls it: `prolog()` returns what `forward(state)` and
    `epilog(state)` take; without a prolog/epilog the call is `forward(None)` alone."""

    forward: Callable[[Any], Any]
    prolog: Callable[[], Any] | None = None
    epilog: Callable[[Any], Any] | None = None
    check: Callable[[str], None] = lambda phase: None  # after each phase: raises a CUDA error that ends the context
    before: Callable[[], None] | None = None  # the harness's own set-up before the call, untimed


class Clock:
    """CUDA events on the current stream and device-wide synchronisation (CuPy). The host's clock is
    `time.perf_counter` (a stand-in CuPy whose device time is simulated brings its own `host_clock`)."""

    def __init__(self, cp: Any):
        self.cp = cp
        self.host_clock: Callable[[], float] = getattr(cp, "host_clock", time.perf_counter)

    def sync(self) -> None:
        self.cp.cuda.Device().synchronize()

    def blocked(self, own: Any) -> float:
        """Seconds the device-wide synchronisation blocks once the event `own` (the call's stream) is done:
        how long work on other streams still ran (about zero when nothing was left)."""
        own.synchronize()
        t = self.host_clock()
        self.sync()
        return self.host_clock() - t

    def mark(self) -> Any:
        e = self.cp.cuda.Event()
        e.record()
        return e

    def seconds(self, a: Any, b: Any) -> float:
        return float(self.cp.cuda.get_elapsed_time(a, b)) / 1e3


window = callwindow.window  # the span of one call of the user's code, for CUPTI's API records


@contextlib.contextmanager
def _range(path: str | None) -> Iterator[None]:
    if path is None:
        yield
        return
    from profconv.run import gpu

    with gpu.nvtx_range(path):
        yield


def call(clock: Clock, phases: Phases, tag: str | None, forward_tag: str | None = None, skip_forward: bool = False,
         alone: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
         between: Callable[[], bool] | None = None) -> tuple[Any, CallTimes]:
    """One call, every phase in its NVTX range (`tag`/prolog, `forward_tag` or `tag`, `tag`/epilog), the device
    idle before it starts; (what the timed phase returned, its times). `skip_forward`: prolog and epilog
    alone (the ghost check: is the output right without the timed phase?). `alone`: the GPU is shared with
    other processes (grade's jobs), and this context holds it alone around the timed phase -- from the
    moment the device is idle before it to the device-wide end; the prolog and epilog, which ran beside
    other work, are then not timed (their times and the end-to-end time are None). `between`: an untimed
    call on a shared GPU, a step boundary after its prolog and after its timed phase (gpushare.checkpoint:
    another job waiting to time goes first); where one let the GPU go, the call was not timed whole either."""
    with window():
        return _call(clock, phases, tag, forward_tag if forward_tag is not None else tag, skip_forward, alone,
                     between)


def _call(clock: Clock, phases: Phases, tag: str | None, fwd_tag: str | None, skip_forward: bool,
          alone: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
          between: Callable[[], bool] | None = None) -> tuple[Any, CallTimes]:
    if phases.before is not None:
        phases.before()
    clock.sync()
    e0 = clock.mark()
    state = None
    let_go = False  # the GPU let go between two phases: the call's end-to-end time holds others' work
    if phases.prolog is not None:
        with _range(f"{tag}/{PROLOG}" if tag else None):
            state = phases.prolog()
        phases.check(PROLOG)
        let_go = between is not None and between()
    with (alone or contextlib.nullcontext)():
        e1 = clock.mark()
        result = None
        if not skip_forward:
            with _range(fwd_tag):
                result = phases.forward(state)
        e_ret = clock.mark()  # the call's own (legacy default) stream is done here
        blocked = clock.blocked(e_ret)  # every stream
        e2 = clock.mark()
    phases.check(FORWARD)
    if phases.epilog is not None:
        let_go = (between is not None and between()) or let_go
        with _range(f"{tag}/{EPILOG}" if tag else None):
            phases.epilog(state)
        phases.check(EPILOG)
    e3 = clock.mark()
    e3.synchronize()
    own, whole = clock.seconds(e1, e_ret), clock.seconds(e1, e2)
    left = max(0.0, min(whole - own, blocked))
    times = CallTimes(op_s=whole if left > max(LEFT_RUNNING_SLACK_S, own / 20) else own,
                      left_running_s=left if left > LEFT_RUNNING_SLACK_S else 0.0)
    if (phases.prolog is not None or phases.epilog is not None) and alone is None and not let_go:
        times.end_to_end_s = clock.seconds(e0, e3)
        times.prolog_s = clock.seconds(e0, e1) if phases.prolog is not None else None
        times.epilog_s = clock.seconds(e2, e3) if phases.epilog is not None else None
    return result, times
