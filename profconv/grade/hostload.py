"""How busy this host's CPUs and GPUs were while a grade's jobs ran: the part of a class's cost that no
job's own steps show (a GPU idle while its jobs wait on host copies, nvcc builds, verdicts and reports).

Sampled every `interval_s` in a thread of the grade process, for the local executor only (Slurm's and Ray's
jobs run on other hosts):
- the CPUs: Linux's /proc/stat, the aggregate `cpu` line; an interval's busy share is 1 - (idle + iowait) /
  all of its jiffies (`busy_share`, pure);
- the GPUs: `nvidia-smi --query-gpu=index,utilization.gpu -lms` (the share of the interval a kernel ran,
  as nvidia-smi reports it), where nvidia-smi is on the PATH and the grade is not a dry run.

`Load.to_dict()` is the manifest's "load": {interval_s, samples, cpu_cores, cpu_busy_mean, cpu_busy_p90,
cpu_busy_max, gpu_busy_mean: {index: share} (absent without nvidia-smi), note (what was not sampled)}.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROC_STAT = Path("/proc/stat")
INTERVAL_S = 0.5


def cpu_times(text: str) -> tuple[int, int] | None:
    """(busy, all) jiffies of /proc/stat's aggregate `cpu` line; None where there is none."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            values = [int(v) for v in parts[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle, iowait
            every = sum(values[:8])  # user nice system idle iowait irq softirq steal (guests are in user)
            return every - idle, every
    return None


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The CPUs' busy share between two samples (None: no time passed)."""
    spent = after[1] - before[1]
    return None if spent <= 0 else max(0.0, min(1.0, (after[0] - before[0]) / spent))


def gpu_samples(text: str) -> dict[str, list[float]]:
    """nvidia-smi's `index, utilization.gpu` lines as shares per GPU index (lines that are not are passed over)."""
    out: dict[str, list[float]] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit():
            with contextlib.suppress(ValueError):
                out.setdefault(parts[0], []).append(float(parts[1]) / 100.0)
    return out


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


@dataclass
class Load:
    interval_s: float
    cpu: list[float] = field(default_factory=list)
    gpu: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"interval_s": self.interval_s, "samples": len(self.cpu), "cpu_cores": os.cpu_count()}
        if self.cpu:
            doc.update(cpu_busy_mean=round(sum(self.cpu) / len(self.cpu), 3), cpu_busy_p90=round(_p90(self.cpu), 3),
                       cpu_busy_max=round(max(self.cpu), 3))
        if self.gpu:
            doc["gpu_busy_mean"] = {k: round(sum(v) / len(v), 3) for k, v in sorted(self.gpu.items()) if v}
        if self.notes:
            doc["note"] = "; ".join(self.notes)
        return doc


class Sampler:
    """`with Sampler(gpus=True) as s: ...` then `s.load`: the host's CPU (and GPU) busy shares meanwhile."""

    def __init__(self, gpus: bool, interval_s: float = INTERVAL_S, stat: Path = PROC_STAT) -> None:
        self.load = Load(interval_s)
        self._gpus, self._stat = gpus, stat
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._smi: subprocess.Popen | None = None
        self._smi_reader: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        if cpu_times(self._read()) is None:
            self.load.notes.append(f"CPU not sampled: no {self._stat}")
        else:
            self._thread = threading.Thread(target=self._cpu, daemon=True, name="grade-hostload")
            self._thread.start()
        if self._gpus:
            self._start_smi()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._smi is not None:
            self._smi.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._smi.wait(timeout=5)
            if self._smi_reader is not None:
                self._smi_reader.join(timeout=5)

    def _read(self) -> str:
        try:
            return self._stat.read_text()
        except OSError:
            return ""

    def _cpu(self) -> None:
        last = cpu_times(self._read())
        while not self._stop.wait(self.load.interval_s):
            now = cpu_times(self._read())
            if last is not None and now is not None and (share := busy_share(last, now)) is not None:
                self.load.cpu.append(share)
            last = now

    def _start_smi(self) -> None:
        smi = shutil.which("nvidia-smi")
        if smi is None:
            self.load.notes.append("GPUs not sampled: no nvidia-smi")
            return
        try:
            self._smi = subprocess.Popen(
                [smi, "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits",
                 f"--loop-ms={int(self.load.interval_s * 1000)}"], stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, start_new_session=True)  # Ctrl-C is grade's, not nvidia-smi's
        except OSError as exc:
            self.load.notes.append(f"GPUs not sampled: {exc}")
            return
        self._smi_reader = threading.Thread(target=self._gpu, daemon=True, name="grade-hostload-gpu")
        self._smi_reader.start()

    def _gpu(self) -> None:
        """nvidia-smi's lines as they come (a pipe left unread would stop it once full: a long grade)."""
        assert self._smi is not None and self._smi.stdout is not None
        for line in self._smi.stdout:
            for index, shares in gpu_samples(line).items():
                self.load.gpu.setdefault(index, []).extend(shares)
