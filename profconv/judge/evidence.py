"""What the rules judge, flat and typed: the harness's measured facts, the GPU's own records (CUPTI
attribution) and the kernel's SASS, gathered per user kernel. The rules (`checks.py`) read only this;
`from_facts` builds it from a run record's parts, so the storage schema can change without the rules.

`None` is "not measured" throughout (a rule then skips, saying so), never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from profconv.records.verdict import Optimisation, Placement

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


@dataclass(frozen=True)
class LayerEvidence:
    layer: str
    shape: str = ""
    rel_error: float | None = None  # first call against the float64 reference
    nonfinite: int | None = None
    inputs_modified: bool | None = None
    timed_calls: int | None = None  # timed calls checked
    timed_wrong: int | None = None  # of them, wrong by the harness's own tolerance
    timed_worst_rel_error: float | None = None  # the worst timed call's error (judged by the rule's tolerance)
    timed_nonfinite: int | None = None  # non-finite elements over the timed calls
    fresh_inputs: bool | None = None
    identical_twice: bool | None = None  # determinism: same inputs, same output
    twice_rel_diff: float | None = None
    ghost_rel_error: float | None = None  # prolog + epilog alone: ~1 for an honest kernel, ~0 when they did the work
    ghost_matched: float | None = None  # ... the fraction of its elements right (~0 honest; 0.5: half the work)
    op_s: float | None = None  # warm median of the timed call
    cold_s: float | None = None  # the first call, as the course timed it
    prolog_s: float | None = None
    epilog_s: float | None = None
    left_running_s: float | None = None  # work still running on other streams when the call returned
    below_floor: bool | None = None
    floor_s: float | None = None
    error: str | None = None  # the layer could not be measured (a CUDA error, a crash, a time-out)


@dataclass(frozen=True)
class EdgeEvidence:
    layer: str
    shape: str  # 'B=3 M=4 C=1 87x89 K=7'
    rel_error: float | None = None
    nonfinite: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Evidence:
    """One user kernel at one image count."""

    name: str
    form: str | None = None  # mxnet, minidnn, minidnn-stride, ... (None: not recognised)
    form_error: str | None = None
    folder: str | None = None  # the course's per-optimisation folder: req_1, op_5, m3 (None: the final file)
    compiled: bool | None = None
    compile_error: str | None = None
    error: str | None = None  # the run as a whole failed before any layer (a crash, a time-out)
    images: int | None = None
    declared_precision: str = "fp32"  # what the manifest or the harness says (fp32 | fp16)
    layers: tuple[LayerEvidence, ...] = ()
    edges: tuple[EdgeEvidence, ...] = ()
    correctness: float | None = None
    expected_correctness: float | None = None  # the course's figure for this data and image count
    sanitizer_errors: dict[str, int] = field(default_factory=dict)  # tool -> errors
    sanitizer_first: str | None = None
    sass_read: bool = False  # the kernel's SASS was read (cuobjdump present)
    sass_note: str | None = None  # why not
    optimisations: tuple[Optimisation, ...] = ()
    placement: tuple[Placement, ...] = ()  # empty: CUPTI attribution not recorded
    tensor_types: frozenset[str] = frozenset()  # MMA input types in the SASS: tf32, fp16, bf16, ...
    fp16_arithmetic: bool = False  # HFMA2/HADD2/HMUL2 that compute

    @property
    def role(self) -> str:
        """final (the file the course times) or the folder's name (req_N / op_N)."""
        return self.folder if self.folder and self.folder[:3] in ("req", "op_") else "final"

    @property
    def precision(self) -> str:
        """The lowest precision the code computes in: from the SASS when read, else as declared."""
        if not self.sass_read:
            return self.declared_precision
        if "fp16" in self.tensor_types or self.fp16_arithmetic:
            return "fp16"
        for p in ("bf16", "tf32"):
            if p in self.tensor_types:
                return p
        return "fp32"

    def phase(self, name: str) -> Placement | None:
        return next((p for p in self.placement if p.phase == name), None)
