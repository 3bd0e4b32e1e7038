"""The Variant record: one convolution implementation, built-in or the user's, as the runner sees it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from profconv.run.models import ConvShape

Launch = Callable[[Any, Any, Any, Any, Any, ConvShape], Any]
# timed(cp, x, w, bias, out, shape, repeat, warmup, rule=StopRule | None, tag=NVTX path of the timed op)
#   -> (Timing of the op, Timing of the whole call)
Timed = Callable[..., tuple[Any, Any]]


@dataclass(frozen=True)
class Variant:
    """A convolution implementation. `launch(cp, x, w, bias, out, shape)` returns B x M x H_out x W_out
    (`out`, written in place, or a library's own result); x, w, bias and out are C-contiguous in the
    variant's dtype, bias is None for a layer without one."""

    name: str
    description: str
    technique: str  # the optimisation it demonstrates
    precision: str  # fp32 | fp16 | tf32 (fp32 data, TF32 products)
    tolerance: float  # largest relative L2 error accepted against the float64 reference
    device: str  # cpu | gpu | cudnn
    source: str | None = None  # kernels/<source>
    launch: Launch | None = None
    params: Callable[[ConvShape], dict] | None = None  # what it chose for a shape (recorded in the run)
    host_io: bool = False  # x and out are pinned host arrays: the op includes the copies in and out
    baseline: str | None = None  # the variant it is measured against, when not cuDNN of its precision
    arithmetic: str = "fp32"  # fp32 | fp16 | tensor-fp16 | tensor-tf32 | tensor-3xtf32: which peak bounds it
    user: bool = False  # the user's kernel (--kernel): run in a child process, checked harder
    provenance: dict[str, Any] = field(default_factory=dict)  # contract, file, sha256, compile flags, sweep
    timed: Timed | None = None  # times the op itself when it is not the whole launch (the course's prolog/epilog)
    # (cp, x, w, bias, shape) -> (x, w, bias, out) in the form `launch` takes, converted untimed
    # (the cuDNN peers: torch tensors in their dtype and layout); None: CuPy arrays in `dtype`
    operands: Callable[[Any, Any, Any, Any, ConvShape], tuple[Any, Any, Any, Any]] | None = None
    # a declared sweep run outside the launch (a user kernel's): tune(cp, x, w, bias, shape, check, make_out)
    # checks and times each candidate (`check(result)`: why it is wrong, or None; `make_out()`: a poisoned
    # output), keeps the fastest correct one for the shape, returns {candidate: median s or why not}
    tune: Callable[..., dict[str, Any]] | None = None

    @property
    def dtype(self) -> str:
        """What inputs, filters, bias and output are stored as."""
        return "float16" if self.precision == "fp16" else "float64" if self.precision == "fp64" else "float32"

    @property
    def reference(self) -> str | None:
        """The variant this one is measured against: cuDNN of the same precision unless said otherwise."""
        if self.baseline is not None or self.device == "cudnn" or self.host_io:
            return self.baseline
        return {"fp32": "cudnn", "tf32": "cudnn-tf32", "fp16": "cudnn-fp16"}.get(self.precision)
