"""The targeted Nsight Compute pass behind `profconv explain`: the few metrics a diagnosis reads.

`--set full` replays every kernel some 40 times to fill every section; a diagnosis of a convolution
needs far less: how long the kernel ran, how busy each unit was against its peak (DRAM, L2, L1 and
shared memory, the FMA / FP16 / Tensor pipes, the issue slots), the traffic and its coalescing, the
occupancy and what limits it, the stall reasons, and the FMAs executed. Each metric below is named
with what it shows; `DIAGNOSIS_METRICS` is the list handed to `ncu --metrics`.

ncu's raw page carries the replay passes of each launch (profiler__replayer_passes): recorded per
kernel, so the cost of the pass is measured, never guessed. On an H200 with ncu 2025.3 this set
replays each kernel 15 times; `--set full` replays it 38 times. Command lines are built by pure functions; the one
child process starts in `profile.external.run_tool`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

METRIC_GROUPS: dict[str, list[str]] = {
    "time": ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second"],
    "launch": ["launch__grid_size", "launch__block_size", "launch__registers_per_thread",
               "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
               "launch__waves_per_multiprocessor", "launch__occupancy_limit_registers",
               "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_blocks", "launch__occupancy_limit_warps"],
    "occupancy": ["sm__maximum_warps_per_active_cycle_pct", "sm__warps_active.avg.pct_of_peak_sustained_active"],
    "speed of light": ["sm__throughput.avg.pct_of_peak_sustained_elapsed",
                       "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                       "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                       "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                       "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"],
    "traffic": ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum"],
    "pipes": ["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
              "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
              "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"],
    "issue": ["sm__inst_issued.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
              "smsp__average_warp_latency_per_inst_issued.ratio"],
    "work": ["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
             "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum",
             "smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum"],
    "coalescing": ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
    "shared memory": ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                      "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
    "stalls": [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in
               ("long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "math_pipe_throttle",
                "wait", "not_selected", "imc_miss", "no_instruction")],
}
DIAGNOSIS_METRICS: list[str] = [m for group in METRIC_GROUPS.values() for m in group]

PASSES_METRIC = "profiler__replayer_passes"  # ncu adds it to every raw page: the replay passes of that launch
_PASSES = re.compile(r'==PROF== Profiling "([^"]+)".*?(\d+) passes?')
_UNKNOWN = re.compile(r"Failed to find metric\s+'?\"?([\w.]+)")


def passes_from(launches) -> dict[str, list[int]]:
    """Replay passes per kernel name, one entry per launch, from the raw page's profiler__replayer_passes."""
    out: dict[str, list[int]] = {}
    for k in launches:
        n = k.metrics.get(PASSES_METRIC)
        if n is not None:
            out.setdefault(k.kernel, []).append(int(n))
    return out


def passes_of(log: str) -> dict[str, list[int]]:
    """ncu's replay passes per kernel name from its ==PROF== progress lines (printed on a terminal only)."""
    out: dict[str, list[int]] = {}
    for name, n in _PASSES.findall(log):
        out.setdefault(name, []).append(int(n))
    return out


def unknown_metrics(log: str) -> list[str]:
    """The metrics this ncu (or this GPU) does not know, named in its error lines."""
    return list(dict.fromkeys(_UNKNOWN.findall(log)))


@dataclass(frozen=True)
class PassCost:
    """What the targeted pass cost: replay passes per launch (min..max over the profiled launches)."""

    launches: int
    passes_min: int | None
    passes_max: int | None

    @classmethod
    def of(cls, log: str) -> PassCost:
        every = [n for ns in passes_of(log).values() for n in ns]
        return cls(len(every), min(every) if every else None, max(every) if every else None)


def collect(ncu: str, child, run_dir, timeout: float, settings=None) -> dict:
    """Run the child (`external.ChildRun`) under ncu with DIAGNOSIS_METRICS on its timed ops only and
    keep the CSV as `ncu-diagnosis.csv`. A metric this ncu does not know is dropped and the pass
    run once more without it (the dropped names are recorded). Returns the `TargetedNcu` fields."""
    import time
    from pathlib import Path

    from profconv.errors import ProfilerFailed
    from profconv.io import write_atomic
    from profconv.profile import external
    from profconv.profile.activity import role_of

    settings = settings or external.NcuSettings()
    run_dir = Path(run_dir)
    log = run_dir / "ncu-diagnosis.log"
    wanted, dropped = list(DIAGNOSIS_METRICS), []
    for _ in range(3):
        argv = external.ncu_argv(ncu, child.argv(), child.ranges(), metrics=wanted, settings=settings)
        t0 = time.perf_counter()
        try:
            out = external.run_tool(argv, log, timeout)
            break
        except ProfilerFailed:
            unknown = [m for m in unknown_metrics(log.read_text(errors="replace")) if m in wanted]
            if not unknown:
                raise
            dropped += unknown
            wanted = [m for m in wanted if m not in unknown]
    else:
        raise ProfilerFailed(f"ncu refused the targeted metric set three times (log: {log})")
    wall = time.perf_counter() - t0
    csv_text = "".join(ln + "\n" for ln in out.splitlines() if ln.startswith('"'))
    if not csv_text:
        raise ProfilerFailed(f"ncu profiled no kernel inside {', '.join(child.ranges())} (log: {log})")
    write_atomic(run_dir / "ncu-diagnosis.csv", csv_text)
    launches = external.ncu_launches(csv_text, [*wanted, PASSES_METRIC])
    passes = passes_from(launches) or passes_of(log.read_text(errors="replace"))
    return {"raw": "ncu-diagnosis.csv", "log": log.name, "images": child.images, "metrics": wanted,
            "dropped": dropped, "passes": passes, "wall_s": wall,
            "settings": {**settings.as_dict(), "argv": external.ncu_argv(ncu, [], child.ranges(), metrics=wanted,
                                                                          settings=settings)},
            "launches": [{"range": k.range, "kernel": k.kernel, "metrics": k.metrics, "units": k.units,
                          "role": role_of(k.range)} for k in launches]}


def part_from_output(output: str, wanted: list[str], images: int, settings_dict: dict) -> dict:
    """The TargetedNcu fields of one ncu run's whole output (a user kernel's child: CSV and ==PROF== lines)."""
    from profconv.profile import external
    from profconv.profile.activity import role_of

    csv_text = "".join(ln + "\n" for ln in output.splitlines() if ln.startswith('"'))
    launches = external.ncu_launches(csv_text, [*wanted, PASSES_METRIC])
    return {"images": images, "metrics": wanted, "passes": passes_from(launches) or passes_of(output),
            "settings": settings_dict,
            "launches": [{"range": k.range, "kernel": k.kernel, "metrics": k.metrics, "units": k.units,
                          "role": role_of(k.range)} for k in launches], "csv": csv_text}
