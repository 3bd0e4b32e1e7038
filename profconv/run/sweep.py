"""Autotuned kernels: a parameter sweep per layer shape, then a cached launch plan.

A swept variant describes its search space (`candidates`) and how to turn one candidate into a
ready-to-call operation (`build`: compile, fetch functions, work out grids). The first call for a
shape times every candidate on the real input and keeps the fastest operation; later calls only
launch kernels. Keeping module lookups, symbol copies through elementwise kernels and argument
building out of the call matters on small layers, where a few tens of microseconds of Python per
launch would otherwise be what the CUDA events measure.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from profconv.run import gpu
from profconv.run.models import ConvShape

Op = Callable[[Any, Any, Any, Any], None]  # (x, w, bias, out) -> None, writes out
FINALISTS = 3
PLAN_ENV = "PROFCONV_SWEEP_PLAN"
"""A JSON file of sweep choices ({swept name: {"B,M,C,H,W,K,P": params}}, `export_plan`): a process
started with it builds those configurations instead of sweeping again. `run --profile ncu|nsys|nvprof`
gives its child run the parent's choices, so the profiler measures the configuration Op Time measured
(a new sweep in the child can choose another: on an H100 the child's `tuned` ran 2 launches per call
where the parent's ran 5). A choice that no longer builds falls back to the sweep."""
META = ("swept", "planned")  # keys of a chosen dict that are not the candidate's parameters
_REGISTRY: dict[str, Swept] = {}
SMEM_LIMIT = 200 * 1024  # Hopper allows 227 KB of dynamic shared memory per block (opt-in above 48 KB)


def shape_key(s: ConvShape) -> tuple[int, ...]:
    return (s.B, s.M, s.C, s.H, s.W, s.K, s.P)


@dataclass
class Swept:
    """One autotuned variant: its candidates, how to build one, and what the sweep chose per shape.

    `trial` (optional) builds a cheaper stand-in for timing a candidate, with the factor its time
    is divided by (the constant-filter design times one channel group per candidate: compiling
    every group of every candidate would cost minutes of NVRTC).
    """

    candidates: Callable[[ConvShape], list[dict]]
    build: Callable[[Any, dict, ConvShape], Op]
    trial: Callable[[Any, dict, ConvShape], tuple[Op, float]] | None = None
    name: str = ""  # the name its choices go by in a sweep plan ("" = not exported)

    def __post_init__(self) -> None:
        self._chosen: dict[tuple[int, ...], tuple[dict, Op]] = {}
        if self.name:
            _REGISTRY[self.name] = self

    def params(self, s: ConvShape) -> dict:
        found = self._chosen.get(shape_key(s))
        return dict(found[0]) if found else {}

    def launch(self, cp, x, w, bias, out, s: ConvShape):
        key = shape_key(s)
        if key not in self._chosen:
            with gpu.nvtx_range("tune"):  # nested in the caller's range: '…/conv1/check/tune'
                self._chosen[key] = self._planned(cp, s) or self._sweep(cp, x, w, bias, out, s)
        self._chosen[key][1](x, w, bias, out)
        return out

    def _planned(self, cp, s: ConvShape) -> tuple[dict, Op] | None:
        """The configuration the sweep plan (PLAN_ENV) names for this shape, built; None without one."""
        params = planned_params(self.name, shape_key(s))
        if params is None:
            return None
        try:
            return dict(params, planned=True), self.build(cp, {k: v for k, v in params.items() if k not in META}, s)
        except Exception:  # a plan from other code or another GPU: sweep as usual
            return None

    def _sweep(self, cp, x, w, bias, out, s: ConvShape) -> tuple[dict, Op]:
        """A quick pass (min of 3 calls each), then the FINALISTS best re-timed in interleaved rounds
        (median of 5): neighbouring candidates are often within run-to-run noise of each other."""
        candidates = self.candidates(s)
        if not candidates:
            raise ValueError(f"no kernel configuration fits {s.text()}")
        trials = []
        for p in candidates:
            op, per = self.trial(cp, p, s) if self.trial else (self.build(cp, p, s), 1.0)
            call = functools.partial(op, x, w, bias, out)
            trials.append((gpu.time_gpu(cp, call, repeat=3, warmup=1).min / per, p, call, per))
        finalists = sorted(trials, key=lambda t: t[0])[:FINALISTS]
        samples: list[list[float]] = [[] for _ in finalists]
        for _ in range(5):
            for i, (_, _, call, per) in enumerate(finalists):
                samples[i].append(gpu.time_gpu(cp, call, repeat=1, warmup=0).min / per)
        best = min(range(len(finalists)), key=lambda i: statistics.median(samples[i]))
        chosen = dict(finalists[best][1], swept=len(candidates))
        return chosen, self.build(cp, finalists[best][1], s)


def export_plan() -> dict[str, dict[str, dict]]:
    """The choices this process's named sweeps made: {name: {"B,M,C,H,W,K,P": params}}."""
    return {name: {",".join(map(str, key)): dict(params) for key, (params, _) in sw._chosen.items()}
            for name, sw in _REGISTRY.items() if sw._chosen}


@functools.cache
def _read_plan(path: str) -> dict:
    try:
        plan = json.loads(open(path).read())
    except (OSError, ValueError):
        return {}
    return plan if isinstance(plan, dict) else {}


def planned_params(name: str, key: tuple[int, ...]) -> dict | None:
    path = os.environ.get(PLAN_ENV)
    if not path or not name:
        return None
    found = _read_plan(path).get(name, {}).get(",".join(map(str, key)))
    return dict(found) if isinstance(found, dict) else None


def device_limits(cp) -> tuple[int, int]:
    """(multiprocessors, shared memory per multiprocessor in bytes) of the current device."""
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    return int(props["multiProcessorCount"]), int(props.get("sharedMemPerMultiprocessor", 228 * 1024))


def resident_blocks(cp, fn, threads: int, smem: int) -> int:
    """Blocks of `fn` one multiprocessor holds at once (threads, registers, shared memory)."""
    _, smem_per_sm = device_limits(cp)
    regs = max(1, -(-int(fn.num_regs) // 8) * 8) * threads
    limits = [2048 // threads, 65536 // regs, 32]
    if smem:
        limits.append(smem_per_sm // (smem + 1024))  # 1 KB per block is reserved by the driver
    return max(1, min(limits))


def kernel(cp, filename: str, name: str, defines: dict[str, int], smem: int):
    fn = gpu.module(filename, tuple(defines.items())).get_function(name)
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem
    return fn
