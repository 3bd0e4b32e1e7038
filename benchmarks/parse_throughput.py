"""Parse throughput and memory, whole process, from files: `profconv parse FILE --json` against
`pandas.read_csv` of the same rows from a file.

Generates (deterministically, into --dir) an nvprof --print-gpu-trace log, an `nsys stats --format
csv` cuda_gpu_trace report and the same rows as plain CSV for each; a summary-only nvprof log of
many profiles (a real corpus log repeated) and one of nvprof --csv profiles. Each command runs as
its own process (median of --repeat); the child's CPU time (user+sys) and wall time come from
os.wait4, its peak memory from ru_maxrss (which counts the parent's RSS at the spawn: the inputs are
written a piece at a time so that this process stays small). Memory per input byte is reported as the peak above
the same command's peak on a one-profile file (the interpreter, pandas and profconv themselves).

    python benchmarks/parse_throughput.py --mb 100 --profiles 2000,8000
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
SUMMARY_LOG = ROOT / "tests/data/nvprof-new/tyler-cs566-reductions.log"
CSV_PROFILE = ('==1== NVPROF is profiling process 1, command: ./a\n==1== Profiling result:\n'
               '"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"\n,%,ms,,ms,ms,ms,\n'
               '"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*)"\n'
               '"GPU activities",40.000000,0.800000,1,0.800000,0.800000,0.800000,"[CUDA memcpy HtoD]"\n'
               '"API calls",100.000000,3.000000,3,1.000000,0.500000,2.000000,"cudaMalloc"\n')


def _aligned(cells: list[str]) -> str:
    """nvprof right-aligns every column to its header width and left-aligns Name after two spaces."""
    return "".join(c.rjust(w) for c, (_, w) in zip(cells, TRACE_COLUMNS)) + "  " + cells[-1]


def nvprof_trace(path: Path, plain_path: Path, target_bytes: int) -> None:
    rng = random.Random(1)
    head = ["==2020== NVPROF is profiling process 2020, command: ./m3", "==2020== Profiling application: ./m3",
            "==2020== Profiling result:", _aligned([h for h, _ in TRACE_COLUMNS] + ["Name"])]
    with open(path, "w") as out, open(plain_path, "w") as plain:
        out.write("\n".join(head) + "\n")
        plain.write(",".join(h for h, _ in TRACE_COLUMNS) + ",Name\n")
        size, t, i = sum(len(x) + 1 for x in head), 100.0, 0
        while size < target_bytes:
            k = KERNELS[i % len(KERNELS)]
            dur = rng.uniform(1.0, 900.0)
            name = k.format(i + 100)
            if k.startswith("[CUDA"):
                cells = [f"{t:.5f}ms", f"{dur:.4f}us", "-", "-", "-", "-", "-", "1.0000MB", "1.2000GB/s",
                         "Pageable", "Device", "Tesla V100-SXM2 (0)", "1", "7", name]
            else:
                cells = [f"{t:.5f}ms", f"{dur:.4f}us", "(157 1 1)", "(256 1 1)", "32", "0B", "0B", "-", "-", "-",
                         "-", "Tesla V100-SXM2 (0)", "1", "7", name]
            line = _aligned(cells) + "\n"
            out.write(line)
            plain.write(",".join(cells[:-1]) + f',"{name}"\n')  # the same cells as plain CSV
            size += len(line)
            t += dur / 1000 + 0.002
            i += 1


def nsys_csv(path: Path, plain_path: Path, target_bytes: int) -> None:
    rng = random.Random(2)
    header = ("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
              "Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name")
    with open(path, "w") as out, open(plain_path, "w") as plain:
        out.write("Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]... \n\n" + header + "\n")
        plain.write(header + "\n")
        size, t, i = 0, 1_000_000, 0
        while size < target_bytes:
            dur = rng.randint(1000, 900000)
            name = KERNELS[i % len(KERNELS)].replace(" [{}]", "")  # nsys keeps the correlation id in CorrId
            quoted = f'"{name}"' if "," in name else name
            line = f"{t},{dur},{i},157,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA H200 (0),1,7,{quoted}\n"
            out.write(line)
            plain.write(line)
            size += len(line)
            t += dur + 2000
            i += 1


ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def compiled_modules(where: Path) -> None:
    """Children import profconv from bytecode compiled once (into `where`), as an installed package
    does: with PYTHONDONTWRITEBYTECODE set (the team's VM sets it) every run compiled ~25 of
    profconv's modules from source (~0.06 s), which pandas, installed, never pays."""
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    ENV["PYTHONPYCACHEPREFIX"] = str(where)


def run(argv: list[str], repeat: int) -> tuple[float, float, int]:
    """Median (cpu seconds, wall seconds) over `repeat` runs and the peak RSS in bytes (the largest).
    CPU time (user + sys of the child, from os.wait4) is what the process itself needed: on a
    machine shared with other jobs the wall time also holds the time it waited for a core."""
    cpus, walls = [], []
    peak = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
        _, status, ru = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - t0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err[-500:]}")
        cpus.append(ru.ru_utime + ru.ru_stime)
        peak = max(peak, ru.ru_maxrss * 1024)
    return statistics.median(cpus), statistics.median(walls), peak


def profconv_cmd(path: Path, out: str = "--json") -> list[str]:
    return [sys.executable, "-m", "profconv", "parse", str(path), out]


def read_csv_cmd(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import pandas; pandas.read_csv({str(path)!r})"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100.0, help="size of each generated trace (0: no traces)")
    ap.add_argument("--profiles", default="2000,8000", help="profile counts of the summary-only logs")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--summary-outputs", default="json",
                    help="outputs timed on the summary-only logs: json, csv, table (the terminal tables: run once)")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the inputs (default: a temp dir)")
    ap.add_argument("--source-only", action="store_true",
                    help="keep the environment's PYTHONDONTWRITEBYTECODE (profconv compiled from source every run)")
    args = ap.parse_args()
    tmp = args.dir or Path(tempfile.mkdtemp(prefix="profconv-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    target = int(args.mb * 1e6)

    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start")
    tiny = tmp / "tiny.log"
    tiny.write_text(SUMMARY_LOG.read_text())
    if not args.source_only:
        compiled_modules(tmp / "pycache")
        for out in ("--json", "--csv", ""):  # compiles what each output path imports
            run(profconv_cmd(tiny, out) if out else profconv_cmd(tiny)[:-1], 1)
    print("profconv's modules: " + ("compiled from source when PYTHONDONTWRITEBYTECODE is set" if args.source_only
                                    else "bytecode compiled once, as an install has it"))
    base_cpu, base_wall, base_peak = run(profconv_cmd(tiny), args.repeat)
    print(f"baseline: profconv parse of a {tiny.stat().st_size / 1e3:.1f} kB log: cpu {base_cpu:.2f} s, "
          f"wall {base_wall:.2f} s, peak {base_peak / 2**20:.0f} MiB")
    print(f"{'input':32s} {'MB':>6s} {'cpu s':>7s} {'MB/s':>6s} {'read_csv cpu s':>14s} {'ratio':>6s}"
          f" {'peak MiB':>8s} {'B/B':>5s}")

    def line(label, path, cpu, peak, csv_cpu=None):
        mb = path.stat().st_size / 1e6
        ratio = f"{csv_cpu / cpu:6.2f}" if csv_cpu else "      "
        csv_s = f"{csv_cpu:14.2f}" if csv_cpu else " " * 14
        per_byte = max(peak - base_peak, 0) / path.stat().st_size
        print(f"{label:32s} {mb:6.1f} {cpu:7.2f} {mb / cpu:6.1f} {csv_s} {ratio} {peak / 2**20:8.0f} {per_byte:5.2f}")

    traces = (("nvprof --print-gpu-trace", nvprof_trace, "nvprof-trace"),
              ("nsys stats --format csv (trace)", nsys_csv, "nsys-trace"))
    for label, gen, stem in traces if target > 0 else ():
        path, plain = tmp / f"{stem}.log", tmp / f"{stem}.plain.csv"
        gen(path, plain, target)
        csv_cpu, _, _ = run(read_csv_cmd(plain), args.repeat)
        for out in ("--json", "--csv"):
            cpu, _, peak = run(profconv_cmd(path, out), args.repeat)
            line(f"{label} {out}", path, cpu, peak, csv_cpu)
    block = SUMMARY_LOG.read_text()
    outputs = [o for o in args.summary_outputs.split(",") if o]
    for n in (int(x) for x in args.profiles.split(",") if x):
        for label, piece in ((f"summary-only, {n} profiles", block), (f"nvprof --csv, {n} profiles", CSV_PROFILE)):
            path = tmp / f"summary-{n}-{'csv' if 'csv' in label else 'text'}.log"
            with open(path, "w") as f:  # a profile at a time: this process stays small (a child's peak
                for _ in range(n):  # RSS counts what its parent held when it was spawned)
                    f.write(piece)
            for out in outputs if "csv" not in label else ["json"]:
                argv = profconv_cmd(path, f"--{out}") if out != "table" else profconv_cmd(path)[:-1]
                cpu, _, peak = run(argv, args.repeat if out != "table" else 1)
                line(f"{label} {out}" if len(outputs) > 1 else label, path, cpu, peak)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print("ratio: read_csv CPU time / profconv CPU time for the same rows (>= 0.5 is the target); "
          "B/B: peak memory above the baseline per input byte")


if __name__ == "__main__":
    main()
