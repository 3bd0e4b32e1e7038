"""Parts shared by run and bench records: the environment, an Op Time, a conv shape's dimensions."""

from __future__ import annotations

from typing import Literal

import msgspec

from profconv.records.base import Count, Positive, Seconds

Status = Literal["ok", "failed", "skipped"]


class Environment(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Where the run happened (profconv.run.gpu.environment); gpu is None without CUDA."""

    profconv_version: str | None = None
    python: str | None = None
    numpy_version: str | None = None
    platform: str | None = None
    hostname: str | None = None
    gpu: str | None = None
    gpu_unavailable: str | None = None  # why no GPU was used
    compute_capability: str | None = None
    multiprocessors: Count | None = None
    memory_bytes: Count | None = None
    driver_version: int | None = None
    runtime_version: int | None = None
    cupy_version: str | None = None
    torch_version: str | None = None
    cudnn_version: int | None = None


class OpTime(msgspec.Struct, kw_only=True):
    """Seconds of the timed repeats after warm-up (CUDA events around one call, device idle before)."""

    median_s: Seconds
    min_s: Seconds
    max_s: Seconds
    samples_s: list[Seconds] = msgspec.field(default_factory=list)
    # the median's 95% interval (order statistics; null under 6 samples), its half-width over the median,
    # and why the repeats stopped: repeats (fixed count) | stable (within target) | budget | max-repeats
    ci_low_s: Seconds | None = None
    ci_high_s: Seconds | None = None
    ci_rel: float | None = None
    confidence: float | None = None
    stopped: str | None = None
    target: float | None = None


class Dims(msgspec.Struct, kw_only=True):
    """A conv layer: B images, M output and C input channels, H x W input, K x K filter, P padding."""

    B: Positive
    M: Positive
    C: Positive
    H: Positive
    W: Positive
    K: Positive
    P: Count = 0

    def as_tuple(self) -> tuple[int, ...]:
        return (self.B, self.M, self.C, self.H, self.W, self.K, self.P)


Params = dict[str, int | float | str | bool]
"""What a tuned variant chose for a shape (tile sizes, design, whether it was swept)."""
