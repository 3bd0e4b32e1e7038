"""The canonical row schema every profiler dialect is turned into.

One row per (profile, section, name), or per trace event / metric. Times are in
nanoseconds (float64); a value the input did not print is NaN (never invented).

| column      | dtype   | meaning                                                           |
|-------------|---------|-------------------------------------------------------------------|
| profile     | int64   | 1-based profile id within the parsed input                        |
| tool        | string  | nvprof, nsys, ncu, nvhpc-acc, cupti                               |
| section     | string  | gpu, api, openacc, unified-memory, nvtx, os-runtime, gpu-memory-size, ncu-metric, metric (nvprof --metrics and --events), gpu-trace, api-trace |
| name        | string  | full name as printed, wrapped lines re-joined                     |
| short_name  | string  | readable name: return type dropped, template/argument lists folded |
| time_pct    | float64 | time share as printed (percent), NaN when absent or printed "<0.01" |
| total_ns    | float64 | total time                                                        |
| calls       | Int64   | calls / instances / launches / count (metric rows: invocations)   |
| avg_ns, min_ns, max_ns, med_ns, std_ns | float64 | per-call statistics            |
| start_ns    | float64 | start timestamp (trace rows only)                                 |
| bytes       | float64 | bytes moved (memory-size and unified-memory rows)                 |
| metric      | string  | metric (or event) name (ncu-metric and metric rows)               |
| description | string  | the metric's description as printed (nvprof: Metric Description)  |
| unit        | string  | metric unit as printed ('%', 'GB/s', 'MB/s', ncu's 'Kbyte'...)    |
| value       | float64 | metric value (the Avg column where the tool prints Min/Max/Avg), NaN when the tool printed n/a, nan or text |
| value_min, value_max | float64 | the Min and Max columns, in `unit` (nvprof --metrics/--events, ncu --print-summary) |
| value_total | float64 | the Total column (nvprof --events)                                |
| value_text  | string  | the value as printed when it is not a number (CachePreferNone, a level 'Low (1)', n/a) |
| value_text_min, value_text_max | string | likewise for Min and Max; also a Min/Max printed in another unit than `unit` ('0.00000B/s' beside an Avg in GB/s: its scale is not assumed, value_min is NaN) |
| share       | float64 | 0-1 share of its profile section's time (timed sections only)     |
| cumulative  | float64 | running share in rank order, this row included                    |
| in_top      | boolean | in the smallest set of rows reaching 90% (the CLI's --threshold)  |
| share_basis | string  | total_ns, or time_pct where the Time column contradicts Time(%)   |
| table       | Int64   | first line of the source table the row came from (merged tables)  |
| line_start, line_end | Int64 | 1-based source lines the row came from                   |

Numbers: every number emitted was printed in the input (after unit conversion); NaN/inf,
negative and underscore-separated numbers are refused; the decimal mark is decided per table.
Ranked sections (share, cumulative, in_top) are gpu, api, openacc, nvtx, os-runtime,
unified-memory; JSON writes NaN as null. A trace (gpu-trace, api-trace) also gives its per-name
summary as gpu / api rows (profconv/parse/traces.py), unless its profile holds the tool's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: dict[str, str] = {
    "profile": "int64",
    "tool": "string",
    "section": "string",
    "name": "string",
    "short_name": "string",
    "time_pct": "float64",
    "total_ns": "float64",
    "calls": "Int64",
    "avg_ns": "float64",
    "min_ns": "float64",
    "max_ns": "float64",
    "med_ns": "float64",
    "std_ns": "float64",
    "start_ns": "float64",
    "bytes": "float64",
    "metric": "string",
    "description": "string",
    "unit": "string",
    "value": "float64",
    "value_min": "float64",
    "value_max": "float64",
    "value_total": "float64",
    "value_text": "string",
    "value_text_min": "string",
    "value_text_max": "string",
    "share": "float64",
    "cumulative": "float64",
    "in_top": "boolean",
    "share_basis": "string",
    "table": "Int64",
    "line_start": "Int64",
    "line_end": "Int64",
}

SECTIONS = (
    "gpu",
    "api",
    "openacc",
    "unified-memory",
    "nvtx",
    "os-runtime",
    "gpu-memory-size",
    "ncu-metric",
    "metric",
    "gpu-trace",
    "api-trace",
)

SECTION_TITLES = {
    "gpu": "GPU activities",
    "api": "API calls",
    "openacc": "OpenACC regions",
    "unified-memory": "Unified Memory",
    "nvtx": "NVTX ranges",
    "os-runtime": "OS runtime calls",
    "gpu-memory-size": "GPU memory operations (bytes)",
    "ncu-metric": "Nsight Compute metrics",
    "metric": "nvprof metrics",
    "gpu-trace": "GPU trace",
    "api-trace": "API trace",
}

# Sections whose rows are ranked by time; the others are listings.
TIMED_SECTIONS = ("gpu", "api", "openacc", "nvtx", "os-runtime", "unified-memory")

NAN = float("nan")


@dataclass(slots=True)
class Row:
    """One canonical row before it is placed in a profile (profile id is set later)."""

    section: str
    name: str
    line_start: int
    line_end: int
    time_pct: float = NAN
    total_ns: float = NAN
    calls: int | None = None
    avg_ns: float = NAN
    min_ns: float = NAN
    max_ns: float = NAN
    med_ns: float = NAN
    std_ns: float = NAN
    start_ns: float = NAN
    bytes: float = NAN
    metric: str | None = None
    description: str | None = None
    unit: str | None = None
    value: float = NAN
    value_min: float = NAN
    value_max: float = NAN
    value_total: float = NAN
    value_text: str | None = None
    value_text_min: str | None = None
    value_text_max: str | None = None


ROW_FIELDS = [
    "section", "name", "line_start", "line_end", "time_pct", "total_ns", "calls", "avg_ns",
    "min_ns", "max_ns", "med_ns", "std_ns", "start_ns", "bytes", "metric", "description", "unit", "value",
    "value_min", "value_max", "value_total", "value_text", "value_text_min", "value_text_max",
]


@dataclass
class ProfileInfo:
    """What surrounds one profile in the input: the run it measured."""

    profile: int
    tool: str
    line_start: int
    line_end: int
    pid: int | None = None
    command: str | None = None
    model: str | None = None
    correctness: float | None = None
    op_times_s: list[float] = field(default_factory=list)
    device: str | None = None


def context_facts(info: ProfileInfo) -> list[str]:
    """What surrounds a profile, as short lines for any renderer: command, pid, Op Time, Correctness."""
    facts = []
    if info.command:
        facts.append(f"command: {info.command}")
    if info.pid is not None:
        facts.append(f"pid {info.pid}")
    if info.device:
        facts.append(f"device: {info.device}")
    if info.op_times_s:
        facts.append("Op Time: " + ", ".join(f"{t:.6f} s" for t in info.op_times_s))
    if info.correctness is not None:
        facts.append(f"Correctness: {info.correctness:g}" + (f" Model: {info.model}" if info.model else ""))
    return facts


def empty_frame() -> pd.DataFrame:
    """A frame with no rows but every column and dtype, so callers never special-case empty."""
    import pandas as pd

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in COLUMNS.items()})


def frame_from_records(records: list[tuple], columns: list[str], fixed: dict) -> pd.DataFrame:
    """Build a canonical frame from tuples in `columns` order plus constant columns."""
    import pandas as pd

    if not records:
        return empty_frame()
    df = pd.DataFrame.from_records(records, columns=columns)
    for k, v in fixed.items():
        df[k] = v
    return conform(df)


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """Add missing columns, order them and cast to the schema's dtypes."""
    import numpy as np
    import pandas as pd

    n = len(df)
    out = {}
    for col, dtype in COLUMNS.items():
        if col in df.columns:
            s = df[col]
        elif dtype == "int64":
            s = pd.Series(np.zeros(n, dtype="int64"))
        elif dtype in ("string", "Int64", "boolean"):
            s = pd.Series([None] * n, dtype="object")
        else:
            s = pd.Series(np.full(n, np.nan))
        if not n:
            out[col] = pd.Series(dtype=dtype)
        elif str(s.dtype) == dtype or (dtype == "string" and str(s.dtype).startswith("string")):
            out[col] = s.reset_index(drop=True) if not isinstance(s.index, pd.RangeIndex) else s
        else:
            out[col] = pd.Series(s.to_numpy(), dtype=None).astype(dtype)
    return pd.DataFrame(out, index=pd.RangeIndex(n), copy=False)


def validate(df: pd.DataFrame) -> None:
    """Raise ValueError if `df` does not follow the schema (used by tests and writers)."""
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"missing columns: {missing}")
    for c, t in COLUMNS.items():
        if str(df[c].dtype) != t and not (t == "string" and str(df[c].dtype).startswith("string")):
            raise ValueError(f"column {c} has dtype {df[c].dtype}, expected {t}")
    bad = set(df["section"].dropna()) - set(SECTIONS)
    if bad:
        raise ValueError(f"unknown sections: {sorted(bad)}")
