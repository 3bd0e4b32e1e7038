"""Do the profilers agree with Op Time? One row per timed conv op (model/variant/layer).

Three views of the same op:
- Op Time: CUDA events around the call (median), launch overheads and gaps between launches included;
- CUPTI: the op's GPU activities in its NVTX range, per call (median over calls): `busy` is the sum
  of their durations, `span` first start to last end;
- ncu: the sum of `gpu__time_duration.sum` over the op's launches in the child run, per call, under
  the recorded clock and cache control.

Target: within 2% of Op Time. Larger gaps get a stated reason, derived from the numbers, never left
unexplained: host-side time between launches (Op Time − CUPTI span), idle gaps between the op's own
kernels (span − busy), ncu's clock or cache control, replay of a multi-kernel op.

Rows (AGREEMENT_COLUMNS): op, variant, layer, op_time_s, cupti_busy_s, cupti_span_s, launches,
ncu_s, ncu_launches, cupti_kernel_s and cupti_kernels (the op's kernels alone per call: ncu times
kernels only, not copies), cupti_vs_op (busy / Op Time - 1), ncu_vs_op, ncu_vs_cupti (against
CUPTI's kernels where recorded), within (bool: every available figure within the target), why
(text; '' when within). A different kernel count under ncu means the child run chose another
configuration (its own sweep or cuDNN search): said so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

TARGET = 0.02
AGREEMENT_COLUMNS = ["op", "variant", "layer", "op_time_s", "cupti_busy_s", "cupti_span_s", "launches", "ncu_s",
                     "ncu_launches", "cupti_kernel_s", "cupti_kernels", "cupti_vs_op", "ncu_vs_op", "ncu_vs_cupti",
                     "within", "why"]
UNIT_SECONDS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
                "second": 1.0, "s": 1.0}


@dataclass(frozen=True)
class NcuOp:
    seconds: float  # per call
    launches: int  # per call


def ncu_per_op(launches: Iterable[dict], calls: int, timed) -> dict[str, NcuOp]:
    """Per timed op: ncu's summed duration and launch count per call, from the record's `launches`
    ({range, kernel, metrics, units}); `timed(range)` picks the timed op's ranges; `calls` is how many
    times the child ran each op (its warm-up + repeats)."""
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for k in launches:
        rng = k.get("range", "")
        d = (k.get("metrics") or {}).get("gpu__time_duration.sum")
        unit = (k.get("units") or {}).get("gpu__time_duration.sum", "nsecond")
        if not timed(rng) or d is None or unit not in UNIT_SECONDS:
            continue
        total[rng] = total.get(rng, 0.0) + d * UNIT_SECONDS[unit]
        count[rng] = count.get(rng, 0) + 1
    calls = max(1, calls)
    return {op: NcuOp(t / calls, round(count[op] / calls)) for op, t in total.items()}


def _rel(a: float | None, b: float | None) -> float | None:
    return a / b - 1.0 if a is not None and b else None


def explain(r: dict, ncu_settings: dict | None, target: float = TARGET) -> str:
    """Why a row misses the target, from its own numbers."""
    why = []
    op, busy, span = r.get("op_time_s"), r.get("cupti_busy_s"), r.get("cupti_span_s")
    cv = r.get("cupti_vs_op")
    if cv is not None and abs(cv) > target and op and busy is not None and span is not None:
        host = op - span
        gaps = span - busy
        if host > target * op:
            why.append(f"Op Time includes {host * 1e6:.1f} µs outside the GPU work (launch and host time, "
                       f"{r.get('launches') or '?'} launch(es) per call)")
        if gaps > target * op:
            why.append(f"{gaps * 1e6:.1f} µs idle between the op's own launches")
        if busy > span * (1 + target):
            why.append("the op's launches overlap (streams): busy time exceeds the span")
        if not why:
            why.append(f"CUPTI {cv:+.1%} against Op Time")
    nv, nc = r.get("ncu_vs_op"), r.get("ncu_vs_cupti")
    if nv is not None and abs(nv) > target:
        settings = ncu_settings or {}
        if settings.get("clock_control", "base") != "none":
            why.append("ncu locked the clocks to base (--clock-control base)")
        if settings.get("cache_control", "all") != "none":
            why.append("ncu flushed the caches before each replay (--cache-control all)")
        kernels, n_ncu = r.get("cupti_kernels"), r.get("ncu_launches")
        kernel_s = r.get("cupti_kernel_s")
        copies = busy - kernel_s if busy is not None and kernel_s is not None else None
        other_config = bool(kernels and n_ncu and round(n_ncu) != round(kernels))
        with_copies = copies is not None and op is not None and op != 0 and copies > target * op
        if other_config:
            why.append(f"the child run chose another configuration (its sweep or cuDNN's search): {n_ncu:g} kernel "
                       f"launch(es) per call under ncu against {kernels:g} here")
        if with_copies and copies is not None:
            why.append(f"ncu times kernels only: the op's copies and memsets ({copies * 1e6:.1f} µs per call) are "
                       f"not in its figure" + (f"; against CUPTI's kernels ncu is {nc:+.1%}" if nc is not None else ""))
        if other_config or with_copies:
            pass
        elif nc is not None and abs(nc) <= target and cv is not None and abs(cv) > target:
            why.append(f"ncu agrees with CUPTI ({nc:+.1%}): the gap to Op Time is host time, not kernel time")
        elif nc is not None and abs(nc) <= target:
            why.append(f"ncu {nc:+.1%} from CUPTI's kernels: its one call ran in a separate child process (the "
                       f"card's clock and L2 state of that moment)")
        elif (n_ncu or 0) > 1 and kernel_s is None:
            why.append(f"ncu serialises and replays each of the op's {n_ncu:g} launches")
        else:
            why.append(f"ncu {nv:+.1%} against Op Time in a separate child run (one call, other clocks/L2 state)")
    return "; ".join(why)


def agreement(op_times: dict[str, float], cupti_ops: Iterable[dict], ncu: dict[str, NcuOp] | None,
              ncu_settings: dict | None = None, target: float = TARGET) -> pd.DataFrame:
    """The agreement table. `op_times`: op -> Op Time median (s); `cupti_ops`: the record's
    profile["ops"] ({op, calls, launches, busy_s, span_s}); `ncu`: from `ncu_per_op`."""
    cupti = {o["op"]: o for o in cupti_ops}
    ops = list(dict.fromkeys([*op_times, *cupti, *(ncu or {})]))
    rows = []
    for op in ops:
        parts = op.split("/")
        c, n, t = cupti.get(op), (ncu or {}).get(op), op_times.get(op)
        r = {"op": op, "variant": parts[1] if len(parts) > 1 else "", "layer": parts[-1], "op_time_s": t,
             "cupti_busy_s": c["busy_s"] if c else None, "cupti_span_s": c["span_s"] if c else None,
             "launches": c["launches"] if c else None, "ncu_s": n.seconds if n else None,
             "ncu_launches": n.launches if n else None,
             "cupti_kernel_s": c.get("kernel_busy_s") if c else None, "cupti_kernels": c.get("kernels") if c else None}
        r["cupti_vs_op"] = _rel(r["cupti_busy_s"], t)
        r["ncu_vs_op"] = _rel(r["ncu_s"], t)
        # ncu times kernels only: compared with CUPTI's kernels where the record has them
        r["ncu_vs_cupti"] = _rel(r["ncu_s"], r["cupti_kernel_s"] if r["cupti_kernel_s"] else r["cupti_busy_s"])
        checks = [x for x in (r["cupti_vs_op"], r["ncu_vs_op"]) if x is not None]
        r["within"] = bool(checks) and all(abs(x) <= target for x in checks)
        r["why"] = "" if r["within"] else (explain(r, ncu_settings, target) if checks
                                           else "no profiler figure for this op")
        rows.append(r)
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def markdown(df: pd.DataFrame, ncu_settings: dict | None, target: float = TARGET) -> str:
    """The report's agreement section (GitHub markdown)."""
    def ms(v):
        return "—" if v is None or v != v else f"{v * 1e3:.3f}"

    def pct(v):
        return "—" if v is None or v != v else f"{v:+.1%}"

    lines = ["| op | Op Time (ms) | CUPTI busy (ms) | CUPTI span (ms) | ncu (ms) | CUPTI vs Op | ncu vs Op | |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in df.to_dict("records"):
        lines.append(f"| {r['variant']}/{r['layer']} | {ms(r['op_time_s'])} | {ms(r['cupti_busy_s'])} | "
                     f"{ms(r['cupti_span_s'])} | {ms(r['ncu_s'])} | {pct(r['cupti_vs_op'])} | {pct(r['ncu_vs_op'])} | "
                     f"{'within' if r['within'] else r['why']} |")
    s = ncu_settings or {}
    setting = (f"ncu ran with --clock-control {s['clock_control']} --cache-control {s['cache_control']}"
               if s.get("clock_control") else "no ncu figures in this run")
    within = int(df["within"].sum()) if not df.empty else 0
    head = (f"Target: every profiler figure within {target:.0%} of Op Time; {within} of {len(df)} op(s) within. "
            f"CUPTI busy = the op's GPU activity per call (median over calls), span = first start to last end; "
            f"{setting}.")
    return head + "\n\n" + "\n".join(lines) + "\n"
