"""What the harness measured about one user kernel (`VariantResult.facts`): the facts a judge rules on.

The child process that runs a `--kernel` (profconv/run/user/worker.py) fills one `KernelFacts` per
kernel; the course's rule sets (profconv/judge/) turn them into a verdict naming the rule. The facts
are measurements, never verdicts: a relative error, not "passed"; a count of non-finite elements, not
"unwritten"; the time of the one cold call and the warm median side by side. `None` means "not
measured" (the kernel stopped earlier, or the form has no such phase), never zero.

Kept in run.json (schemas/run.schema.json, `$defs/KernelFacts`); `FACTS_VERSION` counts changes of
this shape alone (the run record's own version is unchanged by additions here).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from profconv.records.base import Count, Seconds

FACTS_VERSION = 1

Form = Literal["device", "host", "python", "mxnet", "mxnet-generic", "minidnn", "minidnn-stride", "minidnn-single"]
"""The kernel's form, detected from its source (never from its file name):
- mxnet: the MXNet-era `new-forward.cuh` with `template<> void forward<gpu, float>(y, x, w)` (2017-2019);
- mxnet-generic: the Fall 2017 form, `template<typename gpu, typename DType> void forward(y, x, w)` only;
- minidnn: mini-dnn `new-forward.cu`, GPUInterface prolog / conv_forward_gpu / epilog, 6 sizes (Fall 2020-);
- minidnn-stride: the same with a trailing stride `S` (later terms, `m3-forward.cu` in `req_N/`, `op_N/`);
- minidnn-single: the first Fall 2020 form, `conv_forward_gpu` alone on host pointers;
- device, host, python: profconv's own contracts (a manifest says how to launch)."""


class FormFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Which form the source is in and what in it decided so."""

    contract: str  # device | host | course | python
    form: Form | None = None  # None: the source could not be recognised (see `error`)
    era: str | None = None  # the course terms that used this form ("MXNet, Fall 2017", "mini-dnn, Fall 2020 to Spring 2025")
    evidence: str | None = None  # the declaration that decided it, as written (one line)
    folder: str | None = None  # the course's per-optimisation folder the file sits in (req_1, op_2, m3), if any
    error: str | None = None  # why the file is not a kernel profconv can run


class CompileFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    ok: bool
    compiler: str | None = None  # nvcc | nvrtc | python
    error: str | None = None  # the compiler's error lines (the user's file and line)
    include_map: dict[str, str] = msgspec.field(default_factory=dict)  # course image path -> the installed header


class OutputFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One output compared with the float64 reference of the same inputs."""

    rel_error: float | None = None  # ‖y − ref‖ / ‖ref‖ over the finite elements; None when none is finite
    max_abs_error: float | None = None
    nonfinite: Count = 0  # NaN or ±inf elements (the output is poisoned with NaN first, unless `y_initial` is zero)
    elements: Count = 0


class TimedCallFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Every timed call got fresh inputs (new buffers, new values) and each output was checked."""

    calls: Count  # timed calls made (warm-up included) and checked
    fresh_inputs: bool  # new input/output buffers with new values for each call
    wrong: Count = 0  # calls whose output was not within tolerance of its own reference
    first_wrong: int | None = None  # index of the first such call (0: the first call after the check)
    worst_rel_error: float | None = None  # the largest relative error over the calls (None: a non-finite output)
    nonfinite: Count = 0  # non-finite elements over all calls
    inputs_modified: bool = False  # a call changed its input (x or w)


class DeterminismFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The same inputs twice: identical outputs, or how far apart (atomics reorder sums legitimately)."""

    identical: bool
    max_abs_diff: float | None = None  # None when an output is not finite
    rel_diff: float | None = None  # ‖y1 − y2‖ / ‖y1‖


class TimingFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Seconds. `op_*`: the timed call (conv_forward_gpu; MXNet `forward`; the whole call for a single-call
    file), ended only when the whole device is idle (every stream). `cold_s`: the layer's first call in the
    process, as the course timed it (one run of its program: module loading, a cuBLAS handle, allocations)."""

    op_median_s: Seconds | None = None
    op_min_s: Seconds | None = None
    samples: Count = 0
    cold_s: Seconds | None = None
    end_to_end_median_s: Seconds | None = None  # prolog + conv_forward_gpu + epilog
    end_to_end_cold_s: Seconds | None = None
    prolog_median_s: Seconds | None = None
    epilog_median_s: Seconds | None = None
    left_running_s: Seconds | None = None  # the most any call left running on other streams after it returned
    floor_s: Seconds | None = None  # the least time this GPU can do the layer in (datasheet peaks)
    floor_bound: str | None = None  # compute | memory | compute (the working set fits in L2)
    below_floor: bool | None = None


class GhostFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """prolog + epilog with conv_forward_gpu skipped, on fresh inputs: an output near the right one means the
    work was done outside the timed call."""

    rel_error: float | None = None  # of the ghost output against the reference (≥ 1 for an honest kernel)
    cosine: float | None = None  # cosine similarity with the reference (≈ 0 for an honest kernel)
    matched: float | None = None  # fraction of the elements within 0.1% of the right value (≈ 0 for an honest kernel)
    nonfinite: Count = 0
    error: str | None = None  # the call failed with conv_forward_gpu skipped (not a verdict: the course never skips it)


class LayerFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    layer: str
    shape: str
    check: OutputFacts | None = None  # the first call, on the dataset's layer input
    inputs_modified: bool | None = None  # the first call changed x or w
    timed: TimedCallFacts | None = None
    determinism: DeterminismFacts | None = None
    ghost: GhostFacts | None = None  # mini-dnn prolog/epilog forms only
    timing: TimingFacts | None = None
    # CUDA errors the course file's calls returned and the file ignored, as the course's program did
    # ('prolog: cudaErrorHostMemoryAlreadyRegistered: ...'): not a verdict, the output checks decide
    api_errors: list[str] = msgspec.field(default_factory=list)
    error: str | None = None  # why the layer's measurements stopped (a CUDA error, a crash, a compile error)


class EdgeFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A shape the course never ran (B = 1; B = 3 at odd sizes), random data of one seed."""

    layer: str
    shape: str
    seed_index: Count  # which of the seeds (their values stay secret under --secret-seed)
    output: OutputFacts | None = None
    error: str | None = None  # a CUDA error or a refusal at this shape


class SanitizerFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    tool: str  # memcheck | racecheck
    errors: Count = 0
    warnings: Count = 0
    findings: list[str] = msgspec.field(default_factory=list)
    complete: bool = False  # the tool printed its summary
    run_error: str | None = None


class HarnessFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How the kernel was called (what the facts above are relative to)."""

    host_memory: str | None = None  # pageable (the course's program) | device (MXNet, profconv's contracts)
    y_initial: str | None = None  # nan (poisoned) | zero (MXNet hands `forward` a zeroed y)
    phases: list[str] = msgspec.field(default_factory=list)  # NVTX names of the phases (run/user/phases.py)
    secret_seed: bool = False  # the fresh inputs and edge data came from a seed not recorded here
    seed: int | None = None  # that seed when it is not secret
    tolerance: float | None = None  # the harness's own fp32/fp16 tolerance (the rules may use their own)
    images: Count | None = None


class KernelFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Everything measured about one user kernel at one image count."""

    version: int = FACTS_VERSION
    form: FormFacts
    compiled: CompileFacts | None = None  # None: not tried (the form was not recognised)
    harness: HarnessFacts = msgspec.field(default_factory=HarnessFacts)
    layers: list[LayerFacts] = msgspec.field(default_factory=list)
    edges: list[EdgeFacts] = msgspec.field(default_factory=list)
    correctness: float | None = None  # the dataset's accuracy with this kernel's conv layers
    sanitizer: list[SanitizerFacts] = msgspec.field(default_factory=list)
    # the verdict profconv's built-in checks gave before the course's rules (status, first reason)
    legacy_status: str | None = None
    legacy_error: str | None = None

    def layer(self, name: str) -> LayerFacts | None:
        return next((f for f in self.layers if f.layer == name), None)
