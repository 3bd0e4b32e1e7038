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
from profconv.parse.schema import ProfileInfo
from profconv.profile import external
from profconv.profile.activity import Records, merge, profiles, role_of, timed_ops
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


def cupti_results(col: CuptiCollector, run_dir: Path, command: str, everything: bool = False,
                  children: list[Records] | None = None) -> tuple[ProfileSet, dict]:
    """Per-variant profiles from CUPTI records: nvprof-style logs, rows CSV and a timeline JSON.
    Each variant's profile holds its timed op only; with `everything`, the sweeps, checks, forward
    passes, profconv's reference and untagged activity follow as labelled profiles ('tuned:tune').
    `children`: the records of the user kernels' child processes (`cupti_child`), profiled with ours."""
    pid = os.getpid()
    rec = merge(Records(col.api, col.gpu, col.ranges()), children or [])
    api, gpu, ranges = rec.api, rec.gpu, rec.ranges
    frame, labels = profiles(api, gpu, ranges, everything=everything)
    ops = [{"op": o.op, "calls": o.calls, "launches": o.launches, "busy_s": o.busy_ns / 1e9, "span_s": o.span_ns / 1e9,
            "kernels": o.kernels, "kernel_busy_s": o.kernel_busy_ns / 1e9}
           for o in timed_ops(api, gpu, ranges)]
    files = {}
    for number, label in enumerate(labels, start=1):
        rows = frame[frame["profile"] == number].reset_index(drop=True)
        path = run_dir / f"profile-{label.replace(':', '-')}.log"
        write_atomic(path, write(rows, pid, f"{command} [{label}]"))
        files[label] = path.name
    write_atomic(run_dir / "profile-rows.csv", frame.to_csv(index=False))
    from profconv.profile.activity import chrome_trace

    write_atomic(run_dir / "timeline.json", json.dumps(chrome_trace(api, gpu, ranges, pid)))
    infos = [ProfileInfo(profile=i, tool="cupti", line_start=0, line_end=0, pid=pid,
                         command=f"{command} [{label}]") for i, label in enumerate(labels, start=1)]
    summary = {"tool": "cupti", "tools": ["cupti"], "profiles": labels, "logs": files, "rows": "profile-rows.csv",
               "timeline": "timeline.json", "scope": "all" if everything else "timed", "ops": ops,
               "records": {"api": len(api), "gpu": len(gpu), "nvtx_ranges": len(ranges)},
               "settings": {"tool": "cupti", "collector": "cupti-python activity API in-process",
                            "activities": ["CONCURRENT_KERNEL", "RUNTIME", "DRIVER", "MEMCPY", "MEMSET", "MARKER"],
                            "scope": "all" if everything else "timed"}}
    return ProfileSet(frame, infos, f"{run_dir}/profile-*.log"), summary


def external_results(tool: str, path: str, child: external.ChildRun, run_dir: Path, timeout: float,
                     everything: bool = False, ncu_settings: external.NcuSettings | None = None
                     ) -> tuple[ProfileSet, dict]:
    """Re-run the variants under `tool`, keep its raw output, parse it with `profconv parse`.
    ncu: the parsed tables hold the timed ops' launches only (the check, sweep and cuDNN's
    algorithm search are set aside) unless `everything`; every launch stays in `launches` with its role."""
    log = run_dir / f"{tool}.log"
    if tool == "ncu":
        settings = ncu_settings or external.NcuSettings()
        out = external.run_tool(external.ncu_argv(path, child.argv(), child.ranges(), settings=settings,
                                                   everything=everything), log, timeout)
        if not any(ln.startswith('"') for ln in out.splitlines()):
            raise ProfilerFailed(f"ncu profiled no kernel inside the profconv NVTX ranges {', '.join(child.ranges())} "
                                 f"(log: {log})")
        raw = run_dir / "ncu-raw.csv"
        return ncu_part(out, raw, log, child.repeat + child.warmup,
                        {"tool": "ncu", "argv": external.ncu_argv(path, [], child.ranges(), settings=settings,
                                                                 everything=everything),
                         **settings.as_dict()}, everything)
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


def ncu_part(out: str, raw: Path, log: Path, calls_per_op: int, settings: dict, everything: bool = False
             ) -> tuple[ProfileSet, dict]:
    """ncu's CSV output (`out`) kept as `raw`, parsed, and summarised: tables of the timed ops' launches
    only unless `everything`; every launch in `launches` with its role."""
    write_atomic(raw, out)
    launches = external.ncu_launches(out)
    shown, set_aside = (out, 0) if everything else external.split_ncu_csv(out, lambda r: role_of(r) == "timed")
    ps = parse_text(shown, label=str(raw), format="ncu")
    summary = {"tool": "ncu", "tools": ["ncu"], "raw": raw.name, "log": log.name, "metrics": external.NCU_METRICS,
               "scope": "all" if everything else "timed", "set_aside": set_aside, "calls_per_op": calls_per_op,
               "settings": settings,
               "launches": [{"range": k.range, "role": role_of(k.range), "kernel": k.kernel, "metrics": k.metrics,
                             "units": k.units} for k in launches]}
    return ps, summary


def ncu_csv(output: str) -> str:
    """The CSV report in the output of a command run under `ncu --csv` (the program's own lines, its
    progress messages and ncu's ==PROF== lines left out)."""
    return "".join(ln + "\n" for ln in output.splitlines() if ln.startswith('"'))


def with_user_ncu(summary: dict, part: dict, name: str) -> dict:
    """The run's profile summary with a user kernel's ncu part (from its own ncu run) added: its launches
    join the run's ncu launches (the same ranges, roles and agreement), its raw CSV is listed under
    `kernels_raw`. Works whether the run has CUPTI, ncu of the built-in variants, both or neither yet."""
    ncu = summary.get("ncu") if "ncu" in summary else (summary if summary.get("tool") == "ncu" else None)
    if ncu is None:
        new = {**part, "raw": None, "log": None, "kernels_raw": {name: part["raw"]}}
    else:
        new = {**ncu, "launches": [*ncu.get("launches", []), *part["launches"]],
               "set_aside": (ncu.get("set_aside") or 0) + (part.get("set_aside") or 0),
               "kernels_raw": {**ncu.get("kernels_raw", {}), name: part["raw"]}}
    if not summary or summary.get("tool") == "ncu":
        return new
    return {**summary, "tools": [*[t for t in summary.get("tools", []) if t != "ncu"], "ncu"], "ncu": new}


def metrics_frame(summary: dict) -> pd.DataFrame:
    """ncu launches of the timed ops (not the '/check' launches) averaged per range and kernel."""
    rows = [{"range": k["range"], "kernel": k["kernel"], **k["metrics"]} for k in summary.get("launches", [])
            if role_of(k["range"]) == "timed"]
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


def metric_text(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def agreement_frame(record_profile: dict, op_times: dict[str, float]):
    """CUPTI vs Op Time vs ncu per timed op, from what the run stored (see analysis/agreement.py)."""
    from profconv.analysis import agreement

    ncu_part = record_profile.get("ncu") if "ncu" in record_profile else (
        record_profile if record_profile.get("tool") == "ncu" else None)
    ncu = None
    if ncu_part and ncu_part.get("launches"):
        ncu = agreement.ncu_per_op(ncu_part["launches"], int(ncu_part.get("calls_per_op", 1)),
                                   lambda r: role_of(r) == "timed")
    return agreement.agreement(op_times, record_profile.get("ops", []), ncu,
                               (ncu_part or {}).get("settings"))


def agreement_records(df) -> list[dict]:
    """The agreement frame as plain JSON values (NaN -> None, NumPy scalars -> Python)."""
    out = []
    for r in df.to_dict("records"):
        row = {}
        for k, v in r.items():
            v = v.item() if hasattr(v, "item") else v
            row[k] = None if isinstance(v, float) and v != v else v
        out.append(row)
    return out
