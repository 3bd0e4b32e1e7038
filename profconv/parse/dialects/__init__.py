"""The dialect registry: a new profiler dialect is one module here plus one line below.

Each module offers `detect(Document) -> bool` and `parse(Document) -> DialectResult`.
"""

from __future__ import annotations

from types import ModuleType

from profconv.parse.dialects import acc, cudaprof, ncu, nsys, nvprof

DIALECTS: dict[str, ModuleType] = {
    "nvprof": nvprof,
    "nsys": nsys,
    "ncu": ncu,
    "acc": acc,
    "cudaprof": cudaprof,  # the pre-nvprof command-line profiler (COMPUTE_PROFILE=1)
}
