"""The optimisations a kernel really uses, from its SASS (analysis/sass.py) and its launches (CUPTI
attribution, profile/attribution.py), each with what showed it; and the placement records of its work.

From the SASS, per kernel: Tensor Cores (and their input type), fp16 arithmetic (`__half` or `__half2`
when PTX says), constant memory, shared-memory tiling, vector and read-only loads, atomics, local memory.
From the launches: streams (more than one stream in a phase), library kernels (cuBLAS, cuDNN), and the
shape of the timed call: one kernel per conv that is itself a tiled GEMM or uses Tensor Cores is
`fusion` (unroll, matmul and permute in one kernel); several kernels per conv with a GEMM among them
(a library GEMM, or a kernel tiling shared memory or using Tensor Cores, or named *gemm*/*matmul*) is
`unroll+matmul`. A single kernel with neither is a direct convolution: nothing named.
"""

from __future__ import annotations

import re

from profconv.analysis.sass import KernelSass, optimisations
from profconv.profile.attribution import Attribution, PhaseWork, merge
from profconv.records.verdict import Optimisation, Placement

GEMM_NAME = re.compile(r"gemm|matmul|matrix_?mul|mat_?mul|\bmm\b|_mm_|mm_kernel", re.I)
GEMM_FEATURES = {"shared-memory-tiling", "tensor-cores-tf32", "tensor-cores-fp16", "tensor-cores-bf16",
                 "tensor-cores-other"}


def _sass_evidence(k: KernelSass, feature: str) -> str:
    if feature.startswith("tensor-cores"):
        ops = [f"{op} x{n}" for op, n in k.opcodes.items() if op.split(".")[0].endswith("MMA")]
        return ", ".join(ops[:2])
    table = {
        "constant-memory": f"{k.constant_bank} reads of __constant__ (c[0x3])",
        "shared-memory-tiling": f"LDS x{k.shared_loads}, STS x{k.shared_stores}, BAR x{k.barriers}",
        "shared-memory": f"LDS x{k.shared_loads}, STS x{k.shared_stores}",
        "vector-loads": ", ".join(f"{b}-bit loads x{n}" for b, n in k.global_loads.items() if b >= 64),
        "read-only-loads": f"LDG.CONSTANT x{k.readonly_loads}",
        "atomics": ", ".join(f"{kind} x{n}" for kind, n in k.atomics.items()),
        "local-memory": f"LDL x{k.local_loads}, STL x{k.local_stores}" + (
            f", {k.resources.stack} B stack" if k.resources.stack else ""),
    }
    return table.get(feature, f"HFMA2/HADD2/HMUL2 x{k.fp16_arith}")


def from_sass(kernels: list[KernelSass], half_ops: dict[str, dict[str, int]] | None = None,
              only: set[str] | None = None) -> list[Optimisation]:
    """Each kernel's features (`only`: the short names of the kernels to look at, e.g. those the timed
    call launched; None: every kernel in the file)."""
    out = []
    for k in kernels:
        if only is not None and k.short_name not in only:
            continue
        ptx = half_ops.get(k.name) if half_ops else None
        for f in optimisations(k, ptx if half_ops else None):
            out.append(Optimisation(name=f, kernel=k.short_name, evidence=_sass_evidence(k, f)))
    return out


def _gemm_like(name: str, work: PhaseWork, sass: dict[str, KernelSass]) -> bool:
    k = sass.get(name)
    return name in work.library or bool(GEMM_NAME.search(name)) or (k is not None and bool(GEMM_FEATURES & set(k.features)))


def from_launches(att: Attribution, kernels: list[KernelSass]) -> list[Optimisation]:
    """Streams, libraries, fusion or unroll + matmul, from where the work ran."""
    sass = {k.short_name: k for k in kernels}
    out = []
    for phase in ("prolog", "timed", "epilog"):
        w = att.phases.get(phase)
        if w is not None and w.streams > 1:
            out.append(Optimisation(name="streams", evidence=f"{w.streams} streams in the {_phase_name(phase)}"))
    libs: dict[str, list[str]] = {}
    for phase, w in att.phases.items():
        if phase == "elsewhere":  # profconv's own reference (cuBLAS) and checks (CuPy's CUB reductions)
            continue
        for name, lib in w.library.items():
            libs.setdefault(lib, []).append(name)
    for lib, names in sorted(libs.items()):
        out.append(Optimisation(name=f"library-{lib.lower().replace('/', '-')}", evidence=", ".join(sorted(set(names))[:3])))
    timed = att.phases.get("timed")
    if timed is not None and timed.kernel_launches:
        names = list(timed.kernels)
        if timed.kernel_launches == 1 and len(names) == 1 and _gemm_like(names[0], timed, sass) \
                and names[0] not in timed.library:
            out.append(Optimisation(name="fusion", kernel=names[0], evidence="one kernel per conv, a tiled GEMM"))
        elif timed.kernel_launches >= 2 and any(_gemm_like(n, timed, sass) for n in names):
            out.append(Optimisation(name="unroll+matmul", evidence=f"{timed.kernel_launches} kernels per conv: "
                                    + ", ".join(names[:3])))
    return out


def _phase_name(phase: str) -> str:
    return {"timed": "timed call (conv_forward_gpu)"}.get(phase, phase)


def placements(att: Attribution) -> list[Placement]:
    """The prolog, timed and epilog phases of the timed calls as verdict records (seconds)."""
    default = default_streams(att)
    out = []
    for phase in ("prolog", "timed", "epilog"):
        w = att.phases.get(phase)
        check = att.phases.get(f"check-{phase}")
        if phase != "timed" and check is not None and check.kernel_launches:  # a kernel only in the first call's
            w = check if w is None else merge(phase, [w, check])  # prolog (the course pass) is prolog work too
        if w is None:
            continue
        out.append(Placement(phase=phase, kernels=sorted(w.kernels), kernel_launches=w.kernel_launches,
                             copies=w.copies, streams=w.streams, busy_s=w.busy_ns / 1e9,
                             library=sorted(f"{lib}: {name}" for name, lib in w.library.items()),
                             side_streams=None if default is None else min(len(w.stream_ids - default), w.streams)))
    return out


def default_streams(att: Attribution) -> frozenset[int] | None:
    """The stream(s) the course program's synchronous copies ran on in the prolog and epilog (cudaMemcpy:
    the legacy default stream); None when neither phase copied anything."""
    ids = [s for phase in ("prolog", "epilog") if (w := att.phases.get(phase)) is not None and w.copies
           for s in w.stream_ids]
    return frozenset(ids) if ids else None
