"""The run record (schema "profconv.run"): one JSON file per `profconv run`, written after every
variant (atomically), read by `profconv report`. Published as schemas/run.schema.json."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from profconv.records.base import Count, Positive, Record, Seconds, check_keys
from profconv.records.common import Dims, Environment, OpTime, Params, Status
from profconv.records.evidence import Evidence
from profconv.records.facts import KernelFacts
from profconv.records.provenance import Provenance
from profconv.records.verdict import Verdict

SCHEMA = "profconv.run"
SCHEMA_VERSION = 2
"""2: `profile` is null when not profiled (1 wrote {}); typed throughout."""


class ConvLayerShape(msgspec.Struct, kw_only=True):
    layer: str
    shape: str


class ModelInfo(msgspec.Struct, kw_only=True):
    name: str
    semester: str | None = None
    input_shape: list[Positive] = msgspec.field(default_factory=list)
    spec: str | None = None
    reference_accuracy: str | None = None
    conv_layers: list[ConvLayerShape] = msgspec.field(default_factory=list)


class DataInfo(msgspec.Struct, kw_only=True):
    source: str = "synthetic"
    synthetic: bool = True
    weights: str = "bundled"


class RunSettings(msgspec.Struct, kw_only=True):
    repeat: Positive | None = None
    warmup: Count | None = None
    cpu_repeat: Positive | None = None
    images: list[Positive] = msgspec.field(default_factory=list)
    variants: list[str] = msgspec.field(default_factory=list)
    ci_target: float | None = None  # stop-when-stable: the median's 95% interval within ±this (null: fixed repeats)
    time_budget_s: float | None = None  # seconds of timed repeats per conv op at most
    l2: str | None = None  # what the L2 holds before a sample (run: warm, the same call repeated)
    kernels: list[str] = msgspec.field(default_factory=list)  # --kernel paths (the user's kernels)
    kernel_timeout: Seconds | None = None
    sanitize: bool = False


class ConvResult(msgspec.Struct, kw_only=True):
    """One conv layer of one variant: its Op Time and its error against the float64 reference."""

    layer: str
    shape: str
    dims: Dims | None = None  # absent in the oldest records: derived from the model table
    params: Params = msgspec.field(default_factory=dict)
    op_time: OpTime | None = None
    rel_error: float | None = None
    max_abs_error: float | None = None
    tolerance: float | None = None
    status: Status = "ok"
    error: str | None = None
    # user kernels: nan_poisoned, inputs_unchanged, timed_output_rechecked, floor_s, floor_bound,
    # end_to_end (course: prolog + forward + epilog timed), sweep (candidate -> median s or why rejected)
    checks: dict[str, Any] = msgspec.field(default_factory=dict)


CHECK_KEYS: dict[str, Any] = {"nan_poisoned": bool, "inputs_unchanged": bool, "timed_output_rechecked": bool,
                              "floor_s": (int, float), "floor_bound": str, "sweep": dict, "end_to_end": dict}
USER_KEYS: dict[str, Any] = {"contract": str, "flavour": str, "path": str, "manifest": str, "function": str,
                             "source_sha256": str, "defines": dict, "sweep": dict, "compile": dict,
                             "edge_checks": list, "sanitizer": dict, "notes": list}
COMPILE_KEYS: dict[str, Any] = {"compiler": str}  # flags: a list, or one list per sweep point (compared whole)
SETTINGS_KEYS: dict[str, Any] = {"tool": str, "collector": str, "scope": str, "argv": list, "activities": list,
                                 "clock_control": str, "cache_control": str, "ncu_defaults": dict}


class VariantResult(msgspec.Struct):
    """One variant at one image count: its conv layers, the whole forward pass, Correctness."""

    images: Positive
    variant: str
    technique: str = ""
    precision: str = ""
    status: Status = "ok"
    error: str | None = None
    correctness: float | None = None
    forward_s: Seconds | None = None
    layer_times: dict[str, Seconds] = msgspec.field(default_factory=dict)
    type_totals: dict[str, Seconds] = msgspec.field(default_factory=dict)
    conv: list[ConvResult] = msgspec.field(default_factory=list)
    # a user's kernel (--kernel), None for the built-in ladder: {user: true, contract, flavour, path, manifest,
    # function, source_sha256, defines, sweep, compile: {compiler, flags}, edge_checks: [{layer, shape, seed,
    # rel_error, status, error}], sanitizer: {memcheck|racecheck: {errors, warnings, findings, complete, report,
    # run_error}}, notes: [what a profiler or the sanitizer could not do, racecheck warnings]}
    user: dict[str, Any] | None = None
    # a user's kernel: the verdict of the course's rules (or profconv's own) on it, naming the rule (judge/)
    verdict: Verdict | None = None
    # a user's kernel: what the harness measured (records/facts.py), what the course's rules judge
    facts: KernelFacts | None = None

    @property
    def notes(self) -> list[str]:
        """A user kernel's notes (a profiler that could not cover it, a racecheck warning)."""
        return list((self.user or {}).get("notes") or [])


class NcuLaunch(msgspec.Struct, kw_only=True):
    range: str
    kernel: str
    metrics: dict[str, float | None] = msgspec.field(default_factory=dict)
    units: dict[str, str] = msgspec.field(default_factory=dict)
    role: str | None = None  # timed | tune | check | forward | reference | untagged (profile/activity.py)


class TimedOp(msgspec.Struct, kw_only=True):
    """CUPTI's view of one timed op (model/variant/layer) per call, median over its calls."""

    op: str
    calls: Count
    launches: Count
    busy_s: Seconds  # sum of the op's GPU activity durations
    span_s: Seconds  # first start to last end on the GPU
    kernels: Count | None = None  # kernel launches per call (copies and memsets not counted)
    kernel_busy_s: Seconds | None = None  # sum of the op's kernel durations alone (what ncu times)


class Agreement(msgspec.Struct, kw_only=True):
    """One row of the agreement table (profconv/analysis/agreement.py)."""

    op: str
    variant: str
    layer: str
    op_time_s: float | None = None
    cupti_busy_s: float | None = None
    cupti_span_s: float | None = None
    launches: float | None = None
    ncu_s: float | None = None
    ncu_launches: float | None = None
    cupti_kernel_s: float | None = None  # the op's kernels alone per call (CUPTI), what ncu is compared with
    cupti_kernels: float | None = None  # kernel launches per call (CUPTI)
    cupti_vs_op: float | None = None
    ncu_vs_op: float | None = None
    ncu_vs_cupti: float | None = None
    within: bool = False
    why: str = ""


class ProfileInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What `run --profile TOOL` stored (files relative to the run directory)."""

    tool: str
    # cupti
    profiles: list[str] = msgspec.field(default_factory=list)  # NVTX labels, "all" first
    logs: dict[str, str] = msgspec.field(default_factory=dict)  # label -> nvprof-style log
    rows: str | None = None  # profile-rows.csv
    timeline: str | None = None
    records: dict[str, int] = msgspec.field(default_factory=dict)
    # ncu, nsys, nvprof
    raw: str | None = None
    log: str | None = None
    report: str | None = None
    stats: str | None = None
    metrics: list[str] = msgspec.field(default_factory=list)
    launches: list[NcuLaunch] = msgspec.field(default_factory=list)
    # issue 13: what the tables hold, how the profiler ran, the timed ops and the agreement table
    tools: list[str] = msgspec.field(default_factory=list)  # cupti, ncu, or both (the ncu part under `ncu`)
    scope: str | None = None  # timed (each variant's timed op only) | all (everything, labelled)
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    ops: list[TimedOp] = msgspec.field(default_factory=list)
    set_aside: Count | None = None  # ncu rows outside the timed op, left out of the tables
    calls_per_op: Count | None = None  # ncu: calls of each op in the child run
    agreement: list[Agreement] = msgspec.field(default_factory=list)
    ncu: ProfileInfo | None = None
    kernels_raw: dict[str, str] = msgspec.field(default_factory=dict)  # ncu: user kernel -> its own run's CSV


class RunRecord(Record, kw_only=True):
    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION
    argv: list[str]
    created: str
    environment: Environment
    model: ModelInfo
    data: DataInfo = msgspec.field(default_factory=DataInfo)
    settings: RunSettings = msgspec.field(default_factory=RunSettings)
    results: list[VariantResult] = msgspec.field(default_factory=list)
    interrupted: bool = False
    profile: ProfileInfo | None = None
    provenance: Provenance | None = None  # commit, kernel hashes, GPU clocks at start/end, profiler settings
    evidence: Evidence | None = None  # `profconv explain`: the targeted ncu pass and the SASS (records/evidence.py)

    SCHEMA: ClassVar[str] = SCHEMA
    VERSION: ClassVar[int] = SCHEMA_VERSION
    KIND: ClassVar[str] = "run"

    def __post_init__(self) -> None:
        seen: dict[tuple[int, str], int] = {}
        for i, res in enumerate(self.results):
            first = seen.setdefault((res.images, res.variant), i)
            if first != i:
                raise ValueError(f"results[{i}] repeats {res.variant} at {res.images} images (results[{first}]): "
                                 "a run record holds one result per variant and image count")
            layers = [c.layer for c in res.conv]
            if len(set(layers)) != len(layers):
                raise ValueError(f"results[{i}] lists a conv layer twice")

    def check_read(self) -> None:
        """The free-form parts profconv reads (user, checks, settings) have the types it reads them as:
        checked when a record is read (never while a run writes one), ValueError naming the JSON path."""
        for i, res in enumerate(self.results):
            if res.user is not None:
                check_keys(res.user, USER_KEYS, f"$.results[{i}].user")
                check_keys(res.user.get("compile") or {}, COMPILE_KEYS, f"$.results[{i}].user.compile")
            for j, conv in enumerate(res.conv):
                check_keys(conv.checks, CHECK_KEYS, f"$.results[{i}].conv[{j}].checks")
        if self.profile is not None:
            check_keys(self.profile.settings, SETTINGS_KEYS, "$.profile.settings")
            if self.profile.ncu is not None:
                check_keys(self.profile.ncu.settings, SETTINGS_KEYS, "$.profile.ncu.settings")

    @classmethod
    def upgrade(cls, doc: dict[str, Any], version: int) -> dict[str, Any]:
        """Every older version is brought to the current shape here, and nowhere else."""
        if version < 2:
            if doc.get("profile") == {}:
                doc["profile"] = None  # version 1 wrote {} for "not profiled"
            doc.setdefault("interrupted", False)
        return doc
