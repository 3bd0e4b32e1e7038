"""The bench record (schema "profconv.bench"): every conv layer shape of the chosen models, every
variant, timed interleaved in one process (`profconv bench`). Published as schemas/bench.schema.json."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from profconv.records.base import Count, Fraction, Positive, Record
from profconv.records.common import Dims, Environment, OpTime, Params
from profconv.records.provenance import Provenance

SCHEMA = "profconv.bench"
SCHEMA_VERSION = 1

Bound = Literal["memory", "compute"]


class BenchSettings(msgspec.Struct, kw_only=True):
    models: list[str] = msgspec.field(default_factory=list)
    variants: list[str] = msgspec.field(default_factory=list)
    images: Positive | None = None
    sets: Positive | None = None
    repeat: Positive | None = None
    warmup: Count | None = None
    fuse: bool = True
    l2: str | None = None  # the headline figure: cold (L2 flushed before each sample) | warm
    ci_target: float | None = None  # rounds until every median's 95% interval is within ±this
    time_budget_s: float | None = None  # seconds of rounds per layer at most
    cudnn_kernels: bool = True  # each cuDNN peer's kernels (its algorithm) recorded in its peer_check
    layers: list[str] = msgspec.field(default_factory=list)  # --layer: only these model/layer (empty: every layer)
    kernels: list[str] = msgspec.field(default_factory=list)  # --kernel paths (the user's kernels)
    # a user's kernel that failed its isolated check (a child process, per model) is not benched: name -> why
    kernel_failures: dict[str, str] = msgspec.field(default_factory=dict)


class DeviceFacts(msgspec.Struct, kw_only=True):
    """The measured bandwidth and the datasheet peaks the floors were computed from."""

    bandwidth_Bps: Fraction | None = None
    bandwidth_method: str | None = None
    peaks: dict[str, Fraction] = msgspec.field(default_factory=dict)  # fp32 | fp16 | tensor-fp16 -> FLOP/s
    peak_source: str | None = None


class PeerRatio(msgspec.Struct, kw_only=True):
    peer: str  # e.g. cudnn-tf32-nhwc
    ratio: Fraction


class PeerCheck(msgspec.Struct, kw_only=True):
    """A cuDNN peer against a plain PyTorch loop of the same call in the same process: the loop must not
    beat the peer's median by more than the median's 95% interval (else the bench's peer is not cuDNN at
    its best, and every ratio to it flatters the variants)."""

    plain_loop_s: Fraction  # per call: median over rounds of (one CUDA-event pair around N back-to-back calls) / N
    calls: Count  # calls per round
    rounds: Count
    faster_by: float  # 1 - plain_loop_s / the peer's median (positive: the loop is faster)
    allowed: Fraction  # the peer median's 95% interval half-width over the median (at least 1%)
    ok: bool  # faster_by <= allowed
    kernels: list[str] = msgspec.field(default_factory=list)  # what one call launched (cuDNN's algorithm)


class BenchResult(msgspec.Struct):
    variant: str
    technique: str
    precision: str
    arithmetic: str
    reference: str | None
    tolerance: float
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None
    rel_error: float | None = None  # worst over the input sets
    op_time: OpTime | None = None
    params: Params = msgspec.field(default_factory=dict)
    floor_s: Fraction | None = None
    bound: Bound | None = None
    floor_share: Fraction | None = None
    ratio: Fraction | None = None
    op_time_cold: OpTime | None = None  # L2 flushed before each sample
    op_time_warm: OpTime | None = None  # the same call again right after the cold one
    peer_ratios: dict[str, PeerRatio] = msgspec.field(default_factory=dict)  # tf32 | bf16 -> best peer of it
    peer_check: PeerCheck | None = None  # a cuDNN peer only: the plain-loop check and the kernels it ran


class LayerTiming(msgspec.Struct, kw_only=True):
    rounds: Count = 0
    stopped: str | None = None  # repeats | stable | budget | max-repeats


class BenchLayer(msgspec.Struct):
    model: str
    layer: str
    shape: str
    dims: Dims
    images: Positive
    flops: Fraction
    same_as: str | None = None  # an earlier model's layer of identical shape: measured once, there
    results: list[BenchResult] = msgspec.field(default_factory=list)
    fused_ops: str | None = None  # e.g. "conv1 + tanh1 + pool1 2x2": the layer timed as one fused kernel
    fused: list[BenchResult] = msgspec.field(default_factory=list)  # separate ops, then fused-layer
    timing: LayerTiming | None = None  # how the interleaved rounds ended


class BenchRecord(Record, kw_only=True):
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION
    argv: list[str]
    created: str
    environment: Environment
    settings: BenchSettings = msgspec.field(default_factory=BenchSettings)
    device: DeviceFacts = msgspec.field(default_factory=DeviceFacts)
    layers: list[BenchLayer] = msgspec.field(default_factory=list)
    interrupted: bool = False
    provenance: Provenance | None = None

    SCHEMA: ClassVar[str] = SCHEMA
    VERSION: ClassVar[int] = SCHEMA_VERSION
    KIND: ClassVar[str] = "bench"
