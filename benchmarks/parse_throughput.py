"""Parse throughput: profconv.parse on large generated logs vs pandas.read_csv on the same rows.

Generates (deterministically) an nvprof --print-gpu-trace log and an `nsys stats --format csv`
cuda_gpu_trace report of at least --mb megabytes each, plus the same rows as plain CSV, then
times each reader (best of --repeat) in this process and prints MB/s and the ratio to
read_csv. Also reports peak Python memory (tracemalloc) for a summary-only log that grows.

    python benchmarks/parse_throughput.py --mb 100
"""

from __future__ import annotations

import argparse
import io
import random
import tracemalloc

import pandas as pd

import profconv
from profconv.run.gpu import time_cpu

KERNELS = [
    "void conv_forward_kernel<float, 16>(float const *, float const *, float*, int, int, int, int, int, int) [{}]",
    "[CUDA memcpy HtoD]",
    "[CUDA memcpy DtoH]",
    "void cudnn::detail::implicit_convolve_sgemm<float, int=1024, int=5, int=5, int=3>(int, int, float const *) [{}]",
    "sgemm_sm35_ldg_tn_128x8x256x16x32 [{}]",
]


TRACE_COLUMNS = [("Start", 14), ("Duration", 12), ("Grid Size", 15), ("Block Size", 16), ("Regs*", 10),
                 ("SSMem*", 10), ("DSMem*", 10), ("Size", 10), ("Throughput", 12), ("SrcMemType", 12),
                 ("DstMemType", 12), ("Device", 25), ("Context", 10), ("Stream", 10)]


def _aligned(cells: list[str]) -> str:
    """nvprof right-aligns every column to its header width and left-aligns Name after two spaces."""
    return "".join(c.rjust(w) for c, (_, w) in zip(cells, TRACE_COLUMNS)) + "  " + cells[-1]


def nvprof_trace(target_bytes: int) -> tuple[str, str]:
    rng = random.Random(1)
    head = ["==2020== NVPROF is profiling process 2020, command: ./m3", "==2020== Profiling application: ./m3",
            "==2020== Profiling result:", _aligned([h for h, _ in TRACE_COLUMNS] + ["Name"])]
    out, plain = head[:], [",".join(h for h, _ in TRACE_COLUMNS) + ",Name"]
    size, t, i = sum(len(x) + 1 for x in head), 100.0, 0
    while size < target_bytes:
        k = KERNELS[i % len(KERNELS)]
        dur = rng.uniform(1.0, 900.0)
        name = k.format(i + 100)
        if k.startswith("[CUDA"):
            cells = [f"{t:.5f}ms", f"{dur:.4f}us", "-", "-", "-", "-", "-", "1.0000MB", "1.2000GB/s", "Pageable",
                     "Device", "Tesla V100-SXM2 (0)", "1", "7", name]
        else:
            cells = [f"{t:.5f}ms", f"{dur:.4f}us", "(157 1 1)", "(256 1 1)", "32", "0B", "0B", "-", "-", "-", "-",
                     "Tesla V100-SXM2 (0)", "1", "7", name]
        line = _aligned(cells)
        out.append(line)
        plain.append(",".join(cells[:-1]) + f',"{name}"')  # the same cells as plain CSV
        size += len(line) + 1
        t += dur / 1000 + 0.002
        i += 1
    return "\n".join(out) + "\n", "\n".join(plain) + "\n"


def nsys_csv(target_bytes: int) -> tuple[str, str]:
    rng = random.Random(2)
    header = ("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
              "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name")
    out = ["Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... ", "", header]
    plain = [header]
    size, t, i = sum(len(x) + 1 for x in out), 1_000_000, 0
    while size < target_bytes:
        dur = rng.randint(1000, 900000)
        name = KERNELS[i % len(KERNELS)].replace(" [{}]", "")  # nsys keeps the correlation id in CorrId
        quoted = f'"{name}"' if "," in name else name
        line = f"{t},{dur},{i},157,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H200 (0),1,7,{quoted}"
        out.append(line)
        plain.append(line)
        size += len(line) + 1
        t += dur + 2000
        i += 1
    return "\n".join(out) + "\n", "\n".join(plain) + "\n"


def nvprof_summaries(profiles: int) -> str:
    block = open("tests/data/nvprof-new/tyler-cs566-reductions.log", encoding="utf-8").read()
    return block * profiles


def best_of(repeat: int, fn) -> float:
    return time_cpu(fn, repeat).min


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    target = int(args.mb * 1e6)
    print(f"{'input':34s} {'MB':>7s} {'rows':>9s} {'profconv MB/s':>14s} {'read_csv MB/s':>14s}"
          f" {'rows/s ratio':>12s}")
    for label, (text, plain) in (("nvprof --print-gpu-trace", nvprof_trace(target)),
                                 ("nsys stats --format csv (trace)", nsys_csv(target))):
        mb = len(text.encode()) / 1e6
        ps = profconv.parse_text(text)
        rows = int((ps.frame["section"].isin(["gpu-trace"])).sum())
        t_parse = best_of(args.repeat, lambda text=text: profconv.parse_text(text))
        t_csv = best_of(args.repeat, lambda plain=plain: pd.read_csv(io.StringIO(plain)))
        mb_plain = len(plain.encode()) / 1e6
        # same rows on both sides: the fair ratio is rows per second (read_csv's input is smaller)
        print(f"{label:34s} {mb:7.1f} {rows:9d} {mb / t_parse:14.1f} {mb_plain / t_csv:14.1f}"
              f" {t_csv / t_parse:12.2f}")
    for n in (100, 1000):
        text = nvprof_summaries(n)
        tracemalloc.start()
        profconv.parse_text(text)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"summary-only log, {n:5d} profiles ({len(text) / 1e6:5.1f} MB): peak Python memory "
              f"{peak / 1e6:7.1f} MB ({peak / len(text):.1f} bytes per input byte)")


if __name__ == "__main__":
    main()
