"""`profconv run --profile TOOL`: collect, store in the run directory, return rows to show and record."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from profconv.errors import ProfilerFailed, ProfilerUnavailable
from profconv.io import write_atomic
from profconv.parse import parse_text
from profconv.parse.core import ProfileSet
from profconv.parse.names import short_name
from profconv.parse.schema import ProfileInfo
from profconv.profile import external
from profconv.profile.activity import profiles
from profconv.profile.cupti_collector import CuptiCollector
from profconv.profile.nvprof_writer import write

TOOLS = ("cupti", "ncu", "nsys", "nvprof")


def check_available(tool: str, compute_capability: str | None) -> str | None:
    """Fail before the long run if the profiler cannot work here; returns the tool's path."""
    if tool == "cupti":
        from profconv.profile.cupti_collector import load_cupti

        load_cupti()
        return None
    if tool == "nvprof" and not external.nvprof_supported(compute_capability):
        raise ProfilerUnavailable(f"nvprof does not support this GPU (compute capability {compute_capability} >= 8.0); "
                                  f"{external.SUGGEST}")
    return external.find_tool(tool)


def cupti_results(col: CuptiCollector, run_dir: Path, command: str) -> tuple[ProfileSet, dict]:
    """Per-variant profiles from CUPTI records: nvprof-style logs, rows CSV and a timeline JSON."""
    pid = os.getpid()
    ranges = col.ranges()
    frame, labels = profiles(col.api, col.gpu, ranges)
    files = {}
    for number, label in enumerate(labels, start=1):
        rows = frame[frame["profile"] == number].reset_index(drop=True)
        path = run_dir / f"profile-{label}.log"
        write_atomic(path, write(rows, pid, f"{command} [{label}]"))
        files[label] = path.name
    write_atomic(run_dir / "profile-rows.csv", frame.to_csv(index=False))
    from profconv.profile.activity import chrome_trace

    write_atomic(run_dir / "timeline.json", json.dumps(chrome_trace(col.api, col.gpu, ranges, pid)))
    infos = [ProfileInfo(profile=i, tool="cupti", line_start=0, line_end=0, pid=pid,
                         command=f"{command} [{label}]") for i, label in enumerate(labels, start=1)]
    summary = {"tool": "cupti", "profiles": labels, "logs": files, "rows": "profile-rows.csv",
               "timeline": "timeline.json", "records": {"api": len(col.api), "gpu": len(col.gpu),
                                                          "nvtx_ranges": len(ranges)}}
    return ProfileSet(frame, infos, f"{run_dir}/profile-*.log"), summary


def external_results(tool: str, path: str, child: external.ChildRun, run_dir: Path, timeout: float
                     ) -> tuple[ProfileSet, dict]:
    """Re-run the variants under `tool`, keep its raw output, parse it with `profconv parse`."""
    log = run_dir / f"{tool}.log"
    if tool == "ncu":
        out = external.run_tool(external.ncu_argv(path, child.argv(), child.ranges()), log, timeout)
        if not any(ln.startswith('"') for ln in out.splitlines()):
            raise ProfilerFailed(f"ncu profiled no kernel inside the profconv NVTX ranges {', '.join(child.ranges())} "
                                 f"(log: {log})")
        raw = run_dir / "ncu-raw.csv"
        write_atomic(raw, out)
        launches = external.ncu_launches(out)
        ps = parse_text(out, label=str(raw), format="ncu")
        summary = {"tool": "ncu", "raw": raw.name, "log": log.name, "metrics": external.NCU_METRICS,
                   "launches": [{"range": k.range, "kernel": k.kernel, "metrics": k.metrics, "units": k.units}
                                for k in launches]}
        return ps, summary
    if tool == "nsys":
        base = run_dir / "nsys-report"
        external.run_tool(external.nsys_profile_argv(path, child.argv(), base), log, timeout)
        stats = external.run_tool(external.nsys_stats_argv(path, base.with_suffix(".nsys-rep")),
                                  run_dir / "nsys-stats.log", timeout)
        write_atomic(run_dir / "nsys-stats.csv", stats)
        ps = parse_text(stats, label=str(run_dir / "nsys-stats.csv"), format="nsys")
        return ps, {"tool": "nsys", "report": base.name + ".nsys-rep", "stats": "nsys-stats.csv", "log": log.name}
    nvlog = run_dir / "nvprof-summary.log"
    external.run_tool(external.nvprof_argv(path, child.argv(), nvlog), log, timeout)
    ps = parse_text(nvlog.read_text(), label=str(nvlog), format="nvprof")
    return ps, {"tool": "nvprof", "log": nvlog.name}


def metrics_frame(summary: dict) -> pd.DataFrame:
    """ncu launches of the timed ops (not the '/check' launches) averaged per range and kernel."""
    rows = [{"range": k["range"], "kernel": k["kernel"], **k["metrics"]} for k in summary.get("launches", [])
            if not k["range"].endswith("/check")]
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    return df.groupby(["range", "kernel"], sort=False).mean(numeric_only=True).reset_index()


NCU_COLUMNS = [("gpu__time_duration.sum", "duration"), ("dram__bytes_read.sum", "DRAM read"),
               ("dram__bytes_write.sum", "DRAM write"), ("sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy %"),
               ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM %"),
               ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory %"),
               ("launch__registers_per_thread", "regs"), ("launch__shared_mem_per_block_static", "smem static"),
               ("launch__shared_mem_per_block_dynamic", "smem dynamic")]


def ncu_table(summary: dict):
    """The kernel tuner's view: one row per conv op and kernel, ncu's units in the headers."""
    from rich.table import Table

    df = metrics_frame(summary)
    units = {}
    for k in summary.get("launches", []):
        units.update(k.get("units", {}))
    table = Table(title="Nsight Compute: conv kernels (mean over launches)", title_justify="left")
    table.add_column("op")
    table.add_column("kernel", overflow="fold", max_width=40)
    shown = [(m, t) for m, t in NCU_COLUMNS if m in df.columns]
    for m, t in shown:
        table.add_column(f"{t} ({units[m]})" if units.get(m) else t, justify="right")
    for r in df.to_dict("records"):
        table.add_row(r["range"], short_name(r["kernel"]), *[metric_text(r[m]) for m, _ in shown])
    return table


def metric_text(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
