"""GPU: record the CUPTI activity of course-form files called as the course's program calls them, for the
attribution tests (tests/data/attribution/). `python3 scripts/capture_activity.py OUT_DIR FILE.cu` or
`... OUT_DIR --library` (benchmarks/gpu-runs/judge-rules-and-real-files.sh runs it per file: one CUPTI collection per process).

Each file (tests/data/attribution/src/*.cu) is built as profconv builds a mini-dnn file, then
called per layer of ece408-fa20 (100 images): prolog, conv_forward_gpu, a device-wide synchronize, epilog
— one cold call and three more — each phase in its NVTX range (`judge/<file>/<layer>/prolog`, the timed
call `judge/<file>/<layer>`, `.../epilog`), all under profconv's CUPTI collector. The records go to
OUT_DIR/<file>.json (activity.Records.to_dict). `library.json`: cuDNN and cuBLAS through PyTorch, for
the names of library kernels.
"""

from __future__ import annotations

import ctypes
import json
import sys
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"conv1": (100, 4, 1, 86, 86, 7), "conv2": (100, 16, 4, 40, 40, 7)}
CALLS = 4


def cublas_options() -> tuple[str, ...]:
    """-I/-L for cuBLAS from the CUDA toolkit, else from the nvidia-cublas wheel PyTorch brings."""
    for inc in (Path("/usr/local/cuda/include"), Path("/usr/include")):
        if (inc / "cublas_v2.h").is_file():
            return ("-lcublas",)
    try:
        import nvidia.cublas as nc  # type: ignore[import-not-found]

        base = Path(list(nc.__path__)[0])
        lib = next((base / "lib").glob("libcublas.so*"))
        return (f"-I{base / 'include'}", f"-L{base / 'lib'}", f"-Xlinker=-rpath={base / 'lib'}", f"-l:{lib.name}")
    except Exception:
        return ("-lcublas",)


def call_layers(lib: ctypes.CDLL, tag: str) -> None:
    from profconv.run.gpu import nvtx_range

    rng = np.random.default_rng(0)
    for layer, (b, m, c, h, w, k) in LAYERS.items():
        x = rng.standard_normal(b * c * h * w).astype(np.float32)
        f = rng.standard_normal(m * c * k * k).astype(np.float32)
        y = np.zeros(b * m * (h - k + 1) * (w - k + 1), dtype=np.float32)
        dims = [ctypes.c_int(v) for v in (b, m, c, h, w, k)]
        path = f"judge/{tag}/{layer}"
        for _ in range(CALLS):
            ptrs = [ctypes.c_void_p() for _ in range(3)]
            with nvtx_range(path + "/prolog"):
                lib.profconv_course_prolog(y.ctypes.data_as(ctypes.c_void_p), x.ctypes.data_as(ctypes.c_void_p),
                                           f.ctypes.data_as(ctypes.c_void_p), *(ctypes.byref(p) for p in ptrs), *dims)
            with nvtx_range(path):
                lib.profconv_course_forward(*ptrs, *dims)
                lib.profconv_sync()  # cudaDeviceSynchronize: the timed call ends when the device is idle
            with nvtx_range(path + "/epilog"):
                lib.profconv_course_epilog(y.ctypes.data_as(ctypes.c_void_p), *ptrs, *dims)
            lib.profconv_sync()


def record(out: Path, fn) -> None:
    from profconv.profile.activity import Records
    from profconv.profile.cupti_collector import CuptiCollector

    collector = CuptiCollector()
    error = None
    with collector:
        try:
            fn()
        except Exception:
            error = traceback.format_exc()
    d = Records(collector.api, collector.gpu, collector.ranges()).to_dict()
    if error:
        d["error"] = error
        print(error, file=sys.stderr)
    out.write_text(json.dumps(d))
    print(f"{out.name}: {len(d['api'])} API calls, {len(d['gpu'])} GPU activities, {len(d['ranges'])} ranges")


def library_calls() -> None:
    import torch

    from profconv.run.gpu import nvtx_range

    x = torch.randn(100, 4, 40, 40, device="cuda")
    w = torch.randn(16, 4, 7, 7, device="cuda")
    a = torch.randn(512, 512, device="cuda")
    for _ in range(2):
        with nvtx_range("judge/library/cudnn"):
            torch.nn.functional.conv2d(x, w)
            torch.cuda.synchronize()
        with nvtx_range("judge/library/cublas"):
            a @ a
            torch.cuda.synchronize()


def main(argv: list[str]) -> int:
    """OUT_DIR FILE.cu (one file per process: one CUPTI collection per process) or OUT_DIR --library."""
    from profconv.run.user import build

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    if argv[1] == "--library":
        record(out / "library.json", library_calls)
        return 0
    f = Path(argv[1])
    opts = cublas_options() if "cublas" in f.read_text() else ()
    path = build.build_course(f, "minidnn", Path("/tmp/profconv-capture") / f.stem, "sm_90", {}, opts).path
    print(f"built {f.stem} ({' '.join(opts)})")

    def run() -> None:
        lib = ctypes.CDLL(str(path))
        lib.profconv_sync.restype = ctypes.c_int
        call_layers(lib, f.stem)

    record(out / f"{f.stem}.json", run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
