"""Provenance of a measurement (written by profconv/provenance.py into run and bench records)."""

from __future__ import annotations

from typing import Any

import msgspec


class CodeState(msgspec.Struct, kw_only=True):
    commit: str | None = None  # git HEAD of the source tree profconv ran from, only when it is that tree's
    dirty: bool | None = None  # tracked files changed, or untracked files under profconv/ or kernels/
    describe: str | None = None
    why: str | None = None  # why commit/dirty are unknown (not a git checkout, a copy inside another, no git)
    source: str | None = None  # how the commit was learnt: git | env (PROFCONV_GIT_COMMIT, the caller's word)
    changed: list[str] = msgspec.field(default_factory=list)  # the changed paths behind dirty (first 20)
    tree_sha256: str | None = None  # sha256 of `sha256sum` over profconv/ and kernels/ as they ran (always)
    tree_files: int | None = None  # how many files that hash covers


class CompiledModule(msgspec.Struct, kw_only=True):
    file: str  # kernels/<file>
    options: list[str] = msgspec.field(default_factory=list)  # NVRTC options (-D defines)
    sha256: str  # of the source as compiled (headers expanded)


class KernelState(msgspec.Struct, kw_only=True):
    sources: dict[str, str] = msgspec.field(default_factory=dict)  # kernels/*.cu -> sha256
    compiled: list[CompiledModule] = msgspec.field(default_factory=list)


class GpuState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """nvidia-smi's reading at one moment; `why` when it could not be read (never invented)."""

    source: str | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    max_sm_clock_mhz: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    pstate: str | None = None
    throttle_reasons: str | None = None
    why: str | None = None


class GpuStates(msgspec.Struct, kw_only=True):
    start: GpuState | None = None
    end: GpuState | None = None


class Provenance(msgspec.Struct, kw_only=True):
    code: CodeState = msgspec.field(default_factory=CodeState)
    kernels: KernelState = msgspec.field(default_factory=KernelState)
    gpu: GpuStates = msgspec.field(default_factory=GpuStates)
    profiler: dict[str, Any] | None = None  # per tool: every setting it ran with


def summary_line(prov: dict[str, Any]) -> str:
    """One line for a terminal or report header: commit, kernels compiled, GPU clocks/temperature."""
    code = prov.get("code") or {}
    commit = code.get("commit")
    given = " given by the caller" if code.get("source") == "env" else ""
    parts = [f"commit {commit[:10]}{given}{' (dirty)' if code.get('dirty') else ''}" if commit
             else f"commit unknown ({code.get('why')})"]
    if code.get("tree_sha256"):
        parts.append(f"source tree {code['tree_sha256'][:12]} ({code.get('tree_files')} files)")
    compiled = (prov.get("kernels") or {}).get("compiled") or []
    parts.append(f"{len(compiled)} kernel module(s) compiled")
    g = prov.get("gpu") or {}
    for when in ("start", "end"):
        s = g.get(when) or {}
        if s.get("sm_clock_mhz") is not None:
            parts.append(f"{when}: SM {s['sm_clock_mhz']:.0f} MHz, {s.get('temperature_c') or 0:.0f} °C, "
                         f"{s.get('power_w') or 0:.0f} W")
    return "; ".join(parts)
