"""Write canonical rows as an nvprof summary log (new layout), which `profconv parse` reads back exactly."""

from __future__ import annotations

import pandas as pd

LABELS = {"gpu": "GPU activities", "api": "API calls"}


def _ns(v: float) -> str:
    """Times in ns with every digit kept: nvprof's syntax, no rounding to its 5 significant digits."""
    return f"{v:.3f}ns".replace(".000ns", "ns")


def write(rows: pd.DataFrame, pid: int, command: str) -> str:
    lines = [f"=={pid}== NVPROF is profiling process {pid}, command: {command}",
             f"=={pid}== (written by profconv from CUPTI activity records, in nvprof's summary layout)",
             f"=={pid}== Profiling application: {command}", f"=={pid}== Profiling result:",
             "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name"]
    for section in ("gpu", "api"):
        part = rows[rows["section"] == section]
        for k, r in enumerate(part.to_dict("records")):
            label = f"{LABELS[section]}:" if k == 0 else ""
            lines.append(f"{label:>16}  {r['time_pct']:6.2f}%  {_ns(r['total_ns'])}  {int(r['calls'])}  "
                         f"{_ns(r['avg_ns'])}  {_ns(r['min_ns'])}  {_ns(r['max_ns'])}  {r['name']}")
    return "\n".join(lines) + "\n"
