"""A user's kernel in a child process with a time limit (and, with --sanitize, under compute-sanitizer).

An illegal address, a hang, a segfault or a compile error ends or spoils only the child: the parent
turns it into that kernel's FAILED row with the reason, and every other variant runs in its own
healthy CUDA context. The child's result file keeps the layers that finished before a hang or crash.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from profconv.records import struct_from
from profconv.run.record import ConvResult, VariantResult
from profconv.run.user.manifest import Declaration
from profconv.run.user.worker import PROGRESS

DEFAULT_TIMEOUT_S = 600.0
SANITIZER_TOOLS = ("memcheck", "racecheck")
SANITIZER_IMAGES = 4  # compute-sanitizer slows kernels 10-100x: its pass runs on a small batch


@dataclass(frozen=True)
class KernelJob:
    kernel: str
    contract: str | None
    model: str
    images: int
    repeat: int
    warmup: int
    data: str | None = None
    weights: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    sanitize: bool = False  # this child runs under compute-sanitizer (no memory pool)


def worker_argv(job_file: Path) -> list[str]:
    return [sys.executable, "-m", "profconv.run.user.worker", str(job_file)]


def sanitizer_argv(tool_path: str, tool: str, argv: list[str]) -> list[str]:
    """compute-sanitizer around the worker (pure: tests check it without a GPU)."""
    extra = ["--racecheck-report", "all"] if tool == "racecheck" else ["--leak-check", "no"]
    return [tool_path, "--tool", tool, "--print-limit", "20", "--show-backtrace", "device", *extra, *argv]


def find_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and Path(home, "bin", "compute-sanitizer").is_file():
            return str(Path(home, "bin", "compute-sanitizer"))
    return None


def variant_from_dict(d: dict[str, Any]) -> VariantResult:
    """The child's result file, checked like any record part (a bad one is a bug: ValueError)."""
    return struct_from(VariantResult, d)


def last_progress(log: str) -> str | None:
    found = [ln[len(PROGRESS):] for ln in log.splitlines() if ln.startswith(PROGRESS)]
    return found[-1] if found else None


def last_error_line(log: str) -> str:
    """The most telling line of a child's output: a Python exception, a CUDA error, else the last line."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]
    for ln in reversed(lines):
        if re.match(r"[\w.]+(Error|Exception)\b", ln) or "CUDA" in ln or "cuda" in ln:
            return ln
    return lines[-1] if lines else ""


def signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _spawn(argv: list[str], log_path: Path, timeout: float, on_progress: Callable[[str], None]) -> tuple[int | None, str]:
    """Run argv in its own process group; (exit code, or None when killed at the time limit; its output)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + timeout
        seen = None
        rc: int | None
        while True:
            try:
                rc = proc.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                pass
            now = last_progress(log_path.read_text(errors="replace"))
            if now and now != seen:
                seen = now
                on_progress(now)
            if time.monotonic() > deadline:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                rc = None
                break
    return rc, log_path.read_text(errors="replace")


def outcome(job: KernelJob, decl: Declaration, provenance: dict, rc: int | None, log: str,
            partial: dict | None) -> VariantResult:
    """The child's result, or the FAILED row its death or time-out leaves (pure: tests feed it logs)."""
    if partial is not None and rc == 0:
        return variant_from_dict(partial)
    res = variant_from_dict(partial) if partial is not None else VariantResult(
        job.images, decl.name, f"user kernel ({decl.contract})", decl.precision, user=dict(provenance))
    during = last_progress(log)
    where = f" during {during}" if during else ""
    if rc is None:
        why = f"timed out after {job.timeout:g} s{where} (a hang, or slower than --kernel-timeout)"
    else:
        said = last_error_line(log)
        tail = f": {said}" if said else ""
        why = (f"crashed ({signal_name(rc)}){where}{tail}" if rc < 0 else
               f"the child process failed (exit {rc}){where}{tail}")
    res.status, res.error = "failed", why
    layer = during.split("/")[2].split(":")[0] if during and during.count("/") >= 2 else None
    done = {c.layer for c in res.conv}
    if layer and layer not in done:
        res.conv.append(ConvResult(layer=layer, shape="", status="failed", error=why))
    return res


def parse_sanitizer(text: str, source: str | None = None, limit: int = 8) -> dict[str, Any]:
    """compute-sanitizer's report as {errors, findings: ["Invalid __global__ read ... at kernel.cu:17", ...]}.
    Build-copy or NVRTC file names are replaced by the user's `source`."""
    errors = None
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    if m:
        errors = int(m.group(1))
    m = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?", text)
    if m:
        errors = int(m.group(1))
    findings: list[str] = []
    lines = [ln.removeprefix("=========").strip() for ln in text.splitlines() if ln.startswith("=========")]
    for i, ln in enumerate(lines):
        if re.match(r"(Invalid |Error: |Race reported|Misaligned|Out-of-range|Program hit|Barrier error|Malloc/Free)", ln):
            at = next((nx for nx in lines[i + 1:i + 4] if nx.startswith("at ")), "")
            item = f"{ln} {at}".strip()
            if source:
                item = re.sub(r"(?:\S*/)?[\w.-]+\.cuh?:(\d+)", lambda mm: f"{source}:{mm.group(1)}", item)
            if item not in findings:
                findings.append(item)
    return {"errors": errors if errors is not None else len(findings), "findings": findings[:limit],
            "complete": errors is not None}


def run_isolated(decl: Declaration, provenance: dict, job: KernelJob, on_progress: Callable[[str], None],
                 sanitize: bool = False) -> VariantResult:
    """One user kernel, checked and timed in a child process; FAILED rows for whatever killed it."""
    with tempfile.TemporaryDirectory(prefix=f"profconv-{decl.name}-") as tmp:
        res = _child(decl, provenance, job, Path(tmp), on_progress, "run")
        if sanitize:
            res.user = dict(res.user or provenance)
            res.user["sanitizer"] = sanitizer_pass(decl, provenance, job, Path(tmp), on_progress)
            bad = {t: r for t, r in res.user["sanitizer"].items() if r.get("errors")}
            if bad and res.status != "skipped":
                first = next(iter(bad.items()))
                res.status = "failed"
                found = first[1]["findings"][0] if first[1]["findings"] else ""
                note = f"compute-sanitizer {first[0]}: {first[1]['errors']} error(s)" + (f": {found}" if found else "")
                res.error = f"{res.error}; {note}" if res.error else note
    return res


def _child(decl: Declaration, provenance: dict, job: KernelJob, tmp: Path, on_progress: Callable[[str], None],
           tag: str, wrap: Callable[[list[str]], list[str]] | None = None) -> VariantResult:
    result = tmp / f"{tag}-result.json"
    job_file = tmp / f"{tag}-job.json"
    job_file.write_text(json.dumps({**asdict(job), "result": str(result), "build_dir": str(tmp / "build")}))
    argv = worker_argv(job_file)
    rc, log = _spawn(wrap(argv) if wrap else argv, tmp / f"{tag}.log", job.timeout, on_progress)
    partial = None
    if result.is_file():
        try:
            partial = json.loads(result.read_text())
            variant_from_dict(partial)
        except (json.JSONDecodeError, ValueError):
            partial = None  # half a file cannot happen (atomic writes); a malformed one is treated as none
    res = outcome(job, decl, provenance, rc, log, partial)
    res.user = res.user or dict(provenance)
    if tag != "run":
        res.user["log_tail"] = log[-20000:]
    return res


def sanitizer_pass(decl: Declaration, provenance: dict, job: KernelJob, tmp: Path,
                   on_progress: Callable[[str], None]) -> dict[str, Any]:
    tool_path = find_sanitizer()
    if tool_path is None:
        return {"error": "compute-sanitizer not found (it ships with the CUDA toolkit)"}
    out: dict[str, Any] = {}
    small = replace(job, images=min(job.images, SANITIZER_IMAGES), repeat=1, warmup=0, timeout=job.timeout * 4,
                    sanitize=True)
    for tool in SANITIZER_TOOLS:
        on_progress(f"{decl.name}: compute-sanitizer {tool}")
        def wrap(argv: list[str], tool: str = tool) -> list[str]:
            return sanitizer_argv(tool_path, tool, argv)

        res = _child(decl, provenance, small, tmp, on_progress, tool, wrap=wrap)
        log = (res.user or {}).get("log_tail", "")
        out[tool] = parse_sanitizer(log, str(decl.source) if decl.source else None)
        if res.status == "failed" and not out[tool]["errors"]:
            out[tool]["run_error"] = res.error
    return out
