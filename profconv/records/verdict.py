"""A user kernel's verdict under a course's rules (`VariantResult.verdict`): what `profconv/judge/` made
of the harness's facts, the GPU's own records (CUPTI attribution) and the kernel's SASS.

Every finding names the rule it follows (id, text, source); the verdict's `rule` is the one that
decided it (the first failed rule, in the rule set's order), None when every rule passed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from profconv.records.base import Count, Seconds

Outcome = Literal["pass", "fail", "warn", "partial", "info", "skip"]
"""pass: the rule holds; fail: it does not, and the kernel FAILS; warn: it does not, and the course would
still accept the kernel (an edge shape the course never runs); partial: accepted with partial credit
(FP16 where TF32 is asked); info: a fact the rule reports without judging; skip: nothing to judge (the
evidence was not measured, or the rule does not apply to this file)."""


class RuleRef(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: str  # 'sp25.tensor-cores-tf32'
    text: str  # the rule in the course's words, short
    source: str  # where the course says so (page and section)


class Finding(msgspec.Struct, kw_only=True, omit_defaults=True):
    rule: RuleRef
    outcome: Outcome
    reason: str  # what was seen, one line ('relative error 3.1e-04 within the TF32 tolerance 2e-03')
    layer: str | None = None


class Optimisation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One optimisation seen in a kernel's code or launches, and what showed it."""

    name: str  # 'tensor-cores-tf32', 'fp16-half2', 'constant-memory', 'fusion', 'unroll+matmul', 'streams', ...
    kernel: str | None = None  # the kernel whose SASS shows it (None: seen in the launches)
    evidence: str | None = None  # 'HMMA.1684.F32.TF32 x12', '4 streams in conv_forward_gpu'


class Placement(msgspec.Struct, kw_only=True, omit_defaults=True):
    """GPU work of the student's process in one phase (CUPTI attribution), per layer call, median."""

    phase: str  # prolog | timed | epilog | elsewhere
    kernels: list[str] = msgspec.field(default_factory=list)  # kernel names (short), each once
    kernel_launches: Count = 0
    copies: Count = 0  # memcpy + memset
    streams: Count = 0
    busy_s: Seconds = 0.0  # kernel time
    library: list[str] = msgspec.field(default_factory=list)  # cuBLAS / cuDNN / ... kernels among them
    # streams other than the one the prolog's and epilog's synchronous copies ran on (the legacy default
    # stream); None when the call has no prolog or epilog copy to tell it by
    side_streams: Count | None = None


class Credit(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The performance credit the course's threshold implies (an estimate: the course's GPU was not this one)."""

    op_time_s: Seconds  # the summed Op Time the threshold applies to
    images: Count  # at this many images (scaled linearly from the run's count when it differs)
    fraction: float  # of the performance points: 1 at or below full_s, 0 past zero_s, linear between
    points: float | None = None  # fraction x the points the course gives performance
    full_s: Seconds | None = None
    zero_s: Seconds | None = None
    scaled_from: Count | None = None  # the run's image count when the time was scaled
    # cold: the course's own way (one first call per layer, as its program timed it; used when the run had the
    # threshold's image count: a cold call's fixed costs do not scale with the batch); warm: profconv's median
    basis: str = "warm"
    other_s: Seconds | None = None  # the other basis's summed time (warm beside cold, cold beside warm), unscaled


class Verdict(msgspec.Struct, kw_only=True, omit_defaults=True):
    course: str  # the rule set's id ('sp25', 'profconv')
    course_name: str  # 'ECE 408 Spring 2025'
    status: Literal["ok", "failed"]
    reason: str | None = None  # the deciding finding's reason (None when ok)
    rule: RuleRef | None = None  # the deciding rule
    warnings: list[str] = msgspec.field(default_factory=list)  # warn / partial findings, one line each
    findings: list[Finding] = msgspec.field(default_factory=list)
    optimisations: list[Optimisation] = msgspec.field(default_factory=list)
    placement: list[Placement] = msgspec.field(default_factory=list)
    credit: Credit | None = None
    role: str | None = None  # final | req_1 | op_5 ...: which of the course's submissions the file is
    sass_read: bool = False  # the optimisations and precision were read from the kernel's SASS
    sass_note: str | None = None  # why they were not (no cuobjdump, no library built, PTX only)
    precision: str | None = None  # what the code computes in (fp32, tf32, bf16, fp16: from the SASS when read)
