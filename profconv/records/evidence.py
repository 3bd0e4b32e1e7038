"""What `profconv explain` collects beside a run (the run record's `evidence`): the targeted Nsight
Compute pass and the SASS of each timed kernel. Files are relative to the run directory, so a run
directory copied to a CPU-only machine is diagnosed from what it holds."""

from __future__ import annotations

from typing import Any

import msgspec

from profconv.records.base import Count, Positive


class EvidenceLaunch(msgspec.Struct, kw_only=True):
    """One kernel launch of the targeted pass: its profconv NVTX range and the metrics read."""

    range: str  # model/variant/layer (a check or sweep launch carries its longer path)
    kernel: str
    metrics: dict[str, float] = msgspec.field(default_factory=dict)
    units: dict[str, str] = msgspec.field(default_factory=dict)
    role: str | None = None  # timed | tune | check | ... (profile/activity.py role_of)


class TargetedNcu(msgspec.Struct, kw_only=True):
    """The targeted ncu pass (profile/targeted_ncu.py): which metrics, what it cost, the launches."""

    raw: str  # the ncu CSV kept in the run directory
    log: str | None = None
    images: Positive | None = None  # images of the profiled child run
    metrics: list[str] = msgspec.field(default_factory=list)  # asked for and known to this ncu
    dropped: list[str] = msgspec.field(default_factory=list)  # asked for, unknown to this ncu or GPU
    passes: dict[str, list[Count]] = msgspec.field(default_factory=dict)  # kernel -> replay passes per launch
    wall_s: float | None = None  # the child run under ncu, start to end
    settings: dict[str, Any] = msgspec.field(default_factory=dict)  # clock/cache control, argv
    launches: list[EvidenceLaunch] = msgspec.field(default_factory=list)


class SassListing(msgspec.Struct, kw_only=True):
    """The SASS of one variant's kernels on one layer, as text in the run directory."""

    variant: str
    layer: str
    file: str  # e.g. sass/tuned-conv1.sass
    source: str  # kernels/tuned.cu, or the user's file
    options: list[str] = msgspec.field(default_factory=list)  # the -D defines it was compiled with
    arch: str | None = None  # sm_90
    how: str = ""  # 'nvcc -cubin … | cuobjdump -sass' (the same source and defines as the run compiled)
    kernels: list[str] = msgspec.field(default_factory=list)  # function names in the listing
    registers: dict[str, Count] = msgspec.field(default_factory=dict)  # ptxas: function -> registers
    spill_bytes: dict[str, Count] = msgspec.field(default_factory=dict)  # ptxas: function -> spill stores+loads
    half_ops: dict[str, dict[str, Count]] = msgspec.field(default_factory=dict)  # PTX: kernel -> f16 / f16x2 counts


class Evidence(msgspec.Struct, kw_only=True, omit_defaults=True):
    collected: str | None = None  # ISO time of the last collection
    ncu: TargetedNcu | None = None
    sass: list[SassListing] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)  # what could not be collected, and why
