"""Where a user kernel's GPU work ran, from its process's own CUPTI records: every kernel, copy and
memset placed in the phase of the course's call that launched it — prolog, the timed call
(conv_forward_gpu), epilog — or elsewhere (set-up, profconv's reference and checks), streams counted,
library kernels (cuBLAS, cuDNN, ...) named. Pure: tested on recorded activity (tests/data/attribution/).

The phases are the harness's NVTX ranges (run/user/calls.py), per layer:
  MODEL/VARIANT/LAYER/prolog, MODEL/VARIANT/LAYER (the timed call), MODEL/VARIANT/LAYER/epilog,
  MODEL/VARIANT/LAYER/check/{prolog,conv_forward_gpu,epilog} (the checking calls: cold, determinism, ghost).
A GPU activity belongs to the innermost range around the API call that launched it (correlation id), so
work launched in the prolog and still running during the timed call is the prolog's. Work still running
when its phase's range ended is measured (`left_running_ns`).
"""

from __future__ import annotations

import bisect
import functools
import re
import statistics
from dataclasses import dataclass, field

from profconv.analysis.sass import demangle
from profconv.parse.names import short_name
from profconv.profile.activity import GpuActivity, Range, Records, attribute_instances, nested_paths

PHASES = ("prolog", "timed", "epilog")
CALL_PHASES = {"prolog": "prolog", "conv_forward_gpu": "timed", "epilog": "epilog"}

# library kernels by name (CUDA 11-13 spellings seen in CUPTI records: tests/data/attribution/library.json)
LIBRARIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuDNN", re.compile(r"cudnn|implicit_convolve|xmma_fprop|fprop_implicit|convolve_sgemm|conv2d_|winograd|"
                         r"nchwToNhwc|nhwcToNchw|fft2d_|precomputed_convolve|scudnn|generateWinograd", re.I)),
    ("cuBLAS", re.compile(r"gemm|gemv|cublas|splitKreduce|dot_kernel|trsm|axpy", re.I)),
    ("cuFFT", re.compile(r"^(vector_)?fft|regular_fft|cufft", re.I)),
    ("Thrust/CUB", re.compile(r"\bcub::|thrust::|DeviceReduce|DeviceScan|DeviceRadixSort", re.I)),
)


# library_of, kernel_name and phase_of are asked once a GPU record: a file launching a kernel an image makes
# ~424,000 of them and a few distinct names (24 of 34 s of a grade job's judge on the VM, uncached)
@functools.lru_cache(maxsize=4096)
def library_of(kernel: str) -> str | None:
    """'cuBLAS' for 'sm90_xmma_gemm_f32f32_...', 'cuDNN' for 'cudnn::...', None for a student's kernel.
    (A student's kernel named *gemm* is taken for cuBLAS only when it also has a library's prefix.)"""
    for lib, pattern in LIBRARIES:
        if pattern.search(kernel) and (lib != "cuBLAS" or _library_gemm(kernel)):
            return lib
    return None


LIBRARY_GEMM = re.compile(r"^(void )?(sm\d+_|ampere_|volta_|turing_|maxwell_|kepler_|hopper_|cutlass|cublas|"
                          r"gemm(SN|SM|k|v2)|gemv|splitKreduce|Kernel2|internal::gemvx|xmma_|magma)", re.I)


def _library_gemm(kernel: str) -> bool:
    return bool(LIBRARY_GEMM.search(kernel)) or "cublas" in kernel.lower()


@functools.lru_cache(maxsize=4096)
def kernel_name(name: str) -> str:
    """The name a kernel is shown and matched by: CUPTI's mangled name demangled to the function's own
    ('_Z19conv_forward_kernelPfPKfS1_iiiiii' -> 'conv_forward_kernel'), a C++ one shortened ('ns::k<…>')."""
    return short_name(demangle(name))


@functools.lru_cache(maxsize=4096)
def phase_of(path: str) -> tuple[str, str | None, bool]:
    """(phase, op, is a checking call) of a range path: 'm/v/conv1/prolog' -> ('prolog', 'm/v/conv1', False),
    'm/v/conv1' -> ('timed', 'm/v/conv1', False), 'm/v/conv1/check/epilog' -> ('epilog', 'm/v/conv1', True);
    anything else ('m/reference', 'm/v/forward/conv1', untagged) -> ('elsewhere', None, False)."""
    parts = path.split("/")
    if len(parts) == 3 and parts[1] not in ("reference", "forward") and parts[0] != "bench":
        return "timed", path, False
    if len(parts) >= 4 and parts[-1] in CALL_PHASES and parts[2] != "forward":
        checking = "check" in parts[3:]
        return CALL_PHASES[parts[-1]], "/".join(parts[:3]), checking
    return "elsewhere", None, False


@dataclass(frozen=True)
class PhaseWork:
    """One phase's GPU work over the calls of the timed ops (a layer's call = one range instance)."""

    phase: str
    kernels: dict[str, int] = field(default_factory=dict)  # short name -> launches (all calls)
    library: dict[str, str] = field(default_factory=dict)  # short name -> library
    calls: int = 0  # range instances
    kernel_launches: int = 0  # per call, median (max over layers)
    copies: int = 0  # memcpy + memset per call, median (max over layers)
    streams: int = 0  # distinct streams per call, max
    busy_ns: float = 0.0  # kernel time per call, median, summed over layers
    left_running_ns: float = 0.0  # the most any call's work ran past the end of its range
    stream_ids: frozenset[int] = frozenset()  # CUPTI's ids of the streams its work ran on (all calls)


@dataclass(frozen=True)
class Attribution:
    phases: dict[str, PhaseWork]  # prolog | timed | epilog | check-prolog | check-timed | check-epilog | elsewhere
    layers: dict[str, dict[str, PhaseWork]]  # op ('m/v/conv1') -> phase -> its work

    def phase(self, name: str) -> PhaseWork:
        return self.phases.get(name, PhaseWork(name))


@dataclass
class _Bucket:
    calls: dict[tuple[int, int], list[GpuActivity]] = field(default_factory=dict)  # (start, thread) -> work
    ends: dict[tuple[int, int], int] = field(default_factory=dict)


def _median_int(xs: list[int]) -> int:
    return int(statistics.median(xs)) if xs else 0


def _work(phase: str, b: _Bucket) -> PhaseWork:
    kernels: dict[str, int] = {}
    library: dict[str, str] = {}
    per_call = list(b.calls.values())
    for acts in per_call:
        for g in acts:
            if g.kind == "kernel":
                name = kernel_name(g.name)
                kernels[name] = kernels.get(name, 0) + 1
                if (lib := library_of(g.name)) is not None:
                    library[name] = lib
    late = [max((g.end for g in acts), default=0) - b.ends[key] for key, acts in b.calls.items()]
    return PhaseWork(
        phase=phase, kernels=kernels, library=library, calls=len(per_call),
        kernel_launches=_median_int([sum(g.kind == "kernel" for g in a) for a in per_call]),
        copies=_median_int([sum(g.kind != "kernel" for g in a) for a in per_call]),
        streams=max((len({g.stream_id for g in a}) for a in per_call), default=0),
        busy_ns=float(statistics.median([sum(g.end - g.start for g in a if g.kind == "kernel") for a in per_call]))
        if per_call else 0.0,
        left_running_ns=float(max([d for d in late if d > 0], default=0)),
        stream_ids=frozenset(g.stream_id for a in per_call for g in a))


def merge(phase: str, parts: list[PhaseWork]) -> PhaseWork:
    """Several PhaseWorks as one (layers, or a phase of the timed and of the checking calls)."""
    kernels: dict[str, int] = {}
    library: dict[str, str] = {}
    for p in parts:
        for k, n in p.kernels.items():
            kernels[k] = kernels.get(k, 0) + n
        library.update(p.library)
    return PhaseWork(phase, kernels, library, sum(p.calls for p in parts),
                     max((p.kernel_launches for p in parts), default=0), max((p.copies for p in parts), default=0),
                     max((p.streams for p in parts), default=0), sum(p.busy_ns for p in parts),
                     max((p.left_running_ns for p in parts), default=0.0),
                     frozenset().union(*(p.stream_ids for p in parts)))


def _call_ranges(ranges: list[Range]) -> list[Range]:
    """The ranges that are calls' phases: 'm/k/conv1' pushed around a 'prolog' range (gpu.nvtx_range pushes
    one range per part of the path) encloses that phase and is not a timed call of its own."""
    by_key: dict[tuple[str, int], list[Range]] = {}
    for r in ranges:
        by_key.setdefault((r.name, r.thread_id), []).append(r)
    for rs in by_key.values():
        rs.sort(key=lambda r: r.start)
    wrappers: set[tuple[str, int, int]] = set()
    for r in ranges:
        parent = r.name.rsplit("/", 1)[0] if "/" in r.name else None
        rs = by_key.get((parent, r.thread_id), []) if parent else []
        k = bisect.bisect_right([x.start for x in rs], r.start) - 1
        if k >= 0 and rs[k].end >= r.end:
            wrappers.add((rs[k].name, rs[k].thread_id, rs[k].start))
    return [r for r in ranges if (r.name, r.thread_id, r.start) not in wrappers]


def attribute_calls(records: Records, domain: str = "profconv") -> Attribution:
    """Every GPU activity of the process placed in its call phase (see the module's docstring)."""
    _, gpu_range = attribute_instances(records.ranges, records.api, records.gpu, domain)
    buckets: dict[tuple[str, str], _Bucket] = {}
    for inst in _call_ranges(nested_paths([x for x in records.ranges if x.domain == domain])):
        phase, op, checking = phase_of(inst.name)
        if op is not None:
            b = buckets.setdefault((op, f"check-{phase}" if checking else phase), _Bucket())
            b.calls.setdefault((inst.start, inst.thread_id), [])
            b.ends[(inst.start, inst.thread_id)] = inst.end
    elsewhere = _Bucket()
    for i, g in enumerate(records.gpu):
        r: Range | None = gpu_range.get(i)
        phase, op, checking = phase_of(r.name) if r is not None else ("elsewhere", None, False)
        if op is None or r is None:
            elsewhere.calls.setdefault((0, 0), []).append(g)
            elsewhere.ends[(0, 0)] = max(elsewhere.ends.get((0, 0), 0), g.end)
            continue
        b = buckets.setdefault((op, f"check-{phase}" if checking else phase), _Bucket())
        b.calls.setdefault((r.start, r.thread_id), []).append(g)
        b.ends[(r.start, r.thread_id)] = r.end
    layers: dict[str, dict[str, PhaseWork]] = {}
    for (op, phase), b in sorted(buckets.items()):
        layers.setdefault(op, {})[phase] = _work(phase, b)
    phases = {}
    for phase in sorted({p for d in layers.values() for p in d}):
        phases[phase] = merge(phase, [d[phase] for d in layers.values() if phase in d])
    if elsewhere.calls:
        phases["elsewhere"] = _work("elsewhere", elsewhere)
    return Attribution(phases, layers)
