"""External profilers (Nsight Compute, Nsight Systems, nvprof): profconv re-runs itself under them.

Command lines are built by pure functions (tested without a GPU); `run_tool` is the only place
a child process starts, and it turns a missing tool, a failure or a timeout into one message.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from profconv.errors import ProfilerFailed, ProfilerUnavailable

NCU_METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",  # achieved occupancy
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__block_size",
    "launch__grid_size",
]
SEARCH_DIRS = ["/usr/local/cuda/bin", "/opt/nvidia/nsight-compute", "/opt/nvidia/nsight-systems"]
SUGGEST = "use --profile cupti (in-process, any CUDA GPU) instead"


@dataclass(frozen=True)
class ChildRun:
    """The `profconv run` to repeat under a profiler."""

    model: str
    images: int
    variants: list[str]
    out: Path
    data: str | None = None
    weights: str | None = None
    repeat: int = 1
    warmup: int = 0

    layers: tuple[str, ...] = ("conv1",)

    def ranges(self) -> list[str]:
        """The NVTX paths of the timed conv ops of this run: model/variant/layer."""
        return [f"{self.model}/{v}/{layer}" for v in self.variants for layer in self.layers]

    def argv(self) -> list[str]:
        """The child runs exactly `repeat` timed calls after `warmup` (no stop-when-stable), so the
        profiler's launches per op are known: warmup + repeat."""
        cmd = [sys.executable, "-m", "profconv", "run", "--model", self.model, "--images", str(self.images),
               "--variant", ",".join(self.variants), "--repeat", str(self.repeat), "--warmup", str(self.warmup),
               "--ci-target", "0", "--out", str(self.out)]
        if self.data:
            cmd += ["--data", self.data]
        if self.weights:
            cmd += ["--weights", self.weights]
        return cmd


def find_tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for d in SEARCH_DIRS:
        for cand in sorted(Path(d).parent.glob(Path(d).name + "*"), reverse=True):
            exe = cand / name if cand.is_dir() else None
            if exe is not None and exe.exists():
                return str(exe)
    raise ProfilerUnavailable(f"{name} is not installed or not on PATH; {SUGGEST}")


@dataclass(frozen=True)
class NcuSettings:
    """How ncu replays each kernel. ncu's own defaults (clocks locked to base, caches flushed before
    every replay pass) make its durations ~30% longer than Op Time, which runs at the clocks the card
    chooses with whatever the previous call left in L2. profconv's defaults match Op Time's
    conditions: clocks as the card runs them (`none`), caches not flushed (`none`). Both are recorded
    with the run and stated in the report. GPU clocks are never changed by profconv itself."""

    clock_control: str = "none"  # none | base (ncu's default)
    cache_control: str = "none"  # none | all (ncu's default)

    def argv(self) -> list[str]:
        return ["--clock-control", self.clock_control, "--cache-control", self.cache_control]

    def as_dict(self) -> dict:
        return {"clock_control": self.clock_control, "cache_control": self.cache_control,
                "ncu_defaults": {"clock_control": "base", "cache_control": "all"}}


CLOCK_CONTROLS = ("none", "base")
CACHE_CONTROLS = ("none", "all")


def nvtx_filters(ranges: list[str], everything: bool = False) -> list[str]:
    """ncu's NVTX filter for the timed ops of a run, one pair of arguments per profconv push/pop path.

    An include 'profconv@ece408-high/fused/conv1/' (domain@range/range/…/, ncu's syntax for push/pop
    ranges) matches the launches made while that path is on the profconv domain's stack — including
    the ranges pushed inside it: the correctness call '…/conv1/check', the sweep and cuDNN's algorithm
    search '…/conv1/check/tune'. Unless `everything`, an exclude of '…/conv1/check/' (the same syntax,
    so it matches the same way) takes those out: ncu then replays only the timed op's launches, not
    the hundred sweep candidates and cuDNN's trial kernels (which made the child take minutes).
    The activation, pooling, fc, reference and forward-pass kernels are outside every include."""
    out = [arg for r in ranges for arg in ("--nvtx-include", f"profconv@{r}/")]
    if not everything:
        out += [arg for r in ranges for arg in ("--nvtx-exclude", f"profconv@{r}/check/")]
    return out


def ncu_argv(ncu: str, child: list[str], ranges: list[str], metrics: list[str] = NCU_METRICS,
             settings: NcuSettings | None = None, everything: bool = False) -> list[str]:
    """Nsight Compute on the timed conv ops only (`nvtx_filters`); with `everything` also on their
    checks, sweeps and cuDNN's algorithm search, which `split_ncu_csv` then labels apart."""
    return [ncu, "--csv", "--page", "raw", *(settings or NcuSettings()).argv(), "--metrics", ",".join(metrics),
            "--nvtx", *nvtx_filters(ranges, everything), "--target-processes", "all", *child]


def nsys_profile_argv(nsys: str, child: list[str], report_base: Path) -> list[str]:
    return [nsys, "profile", "--trace=cuda,nvtx", "--force-overwrite=true", "--output", str(report_base), *child]


def nsys_stats_argv(nsys: str, report: Path) -> list[str]:
    return [nsys, "stats", "--format", "csv", "--report", "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum",
            "--force-export=true", str(report)]


def nvprof_argv(nvprof: str, child: list[str], log: Path) -> list[str]:
    return [nvprof, "--log-file", str(log), "--profile-child-processes", *child]


def nvprof_supported(compute_capability: str | None) -> bool:
    """nvprof refuses GPUs of compute capability 8.0 and newer."""
    if not compute_capability:
        return True
    return float(compute_capability) < 8.0


def run_tool(argv: list[str], log: Path, timeout: float) -> str:
    """Run a profiler; its stdout is returned and, with stderr, kept in `log`. The profiler runs in
    its own process group: at the timeout the whole group goes (the profiled child profconv too, which
    would otherwise go on holding the GPU), and what it had printed is kept in the log."""
    import os
    import signal

    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)
    except FileNotFoundError:
        raise ProfilerUnavailable(f"{argv[0]} is not installed or not on PATH; {SUGGEST}") from None
    except PermissionError:  # a file of that name without execute permission, or a PATH directory we may not search
        where = shutil.which(argv[0])
        if where is None:
            raise ProfilerUnavailable(f"{argv[0]} is not installed or not on PATH (none found that this user may "
                                      f"run); {SUGGEST}") from None
        raise ProfilerUnavailable(f"{where}: permission denied; {SUGGEST}") from None
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stdout, stderr = child.communicate()
        log.write_text(stdout + ("\n--- stderr ---\n" + stderr if stderr else ""))
        raise ProfilerFailed(f"{Path(argv[0]).name} timed out after {timeout:.0f} s (log: {log})") from None
    except BaseException:  # Ctrl-C: the profiler and its child go with us
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    proc = subprocess.CompletedProcess(argv, child.returncode, stdout, stderr)
    log.write_text(proc.stdout + ("\n--- stderr ---\n" + proc.stderr if proc.stderr else ""))
    errors = [ln for ln in (proc.stdout + "\n" + proc.stderr).splitlines() if "==ERROR==" in ln]
    if proc.returncode != 0 or errors:
        first = errors[0].strip() if errors else f"exit code {proc.returncode}"
        raise ProfilerFailed(f"{Path(argv[0]).name} failed: {first} (log: {log})")
    return proc.stdout


@dataclass(frozen=True)
class KernelMetrics:
    range: str  # the profconv NVTX range the launch ran in (model/variant/layer)
    kernel: str
    metrics: dict[str, float]
    units: dict[str, str]


def _range_of(header: list[str], row: list[str]) -> str:
    """The profconv push/pop path of one ncu CSV row ('m/tuned/conv1/check/tune'); '' outside."""
    rng = ""
    for k, h in enumerate(header):
        if "Range" in h or "NVTX" in h.upper():
            parts = re.findall(r"profconv:([^:\"]+)", row[k])  # one entry per pushed range
            if parts:
                rng = "/".join(parts)
    return rng


def split_ncu_csv(csv_text: str, keep) -> tuple[str, int]:
    """The ncu CSV with only the launch rows whose profconv range satisfies `keep(range)` (every
    other line as it was), and how many launch rows were set aside."""
    lines = csv_text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return csv_text, 0
    header = next(csv.reader([lines[start]]))
    out, dropped = lines[: start + 2], 0
    for ln in lines[start + 2:]:
        if ln.startswith('"'):
            row = next(csv.reader([ln]))
            if len(row) == len(header) and not keep(_range_of(header, row)):
                dropped += 1
                continue
        out.append(ln)
    return "\n".join(out) + ("\n" if csv_text.endswith("\n") else ""), dropped


def ncu_launches(csv_text: str, wanted: list[str] = NCU_METRICS) -> list[KernelMetrics]:
    """Per launch of an `ncu --csv --page raw --nvtx` output: its profconv range and the `wanted` metrics."""
    lines = csv_text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(ln for ln in lines[start:] if ln.startswith('"')))))
    header, units = rows[0], rows[1]
    kname = header.index("Kernel Name")
    out = []
    for r in rows[2:]:
        if len(r) != len(header):
            continue
        rng = _range_of(header, r)
        metrics, unit_of = {}, {}
        for k, h in enumerate(header):
            if h in wanted:
                try:
                    metrics[h] = float(r[k].replace(",", ""))
                except ValueError:
                    continue
                unit_of[h] = units[k]
        out.append(KernelMetrics(rng, r[kname], metrics, unit_of))
    return out
