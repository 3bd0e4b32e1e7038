"""Whole-process CLI latency and the CPU-only run, measured the way a user meets them.

Each command runs as its own process (`python -m profconv …`, output to /dev/null), N times; the
table gives the median and min wall time, the median minus `python -c pass` measured in the same run
(the interpreter's own start-up), and the peak resident memory of the process (wait4's ru_maxrss).

    python benchmarks/cli_latency.py                 # latency, median of 5
    python benchmarks/cli_latency.py --cpu-run       # also `profconv run --model ece408-high` (10,000 images)
    python benchmarks/cli_latency.py -n 10 --json out.json

Also the shell completion of an option's value (what a TAB costs). Targets (issue 10): `--help`
<= 0.3 s, `parse` of a 1 MB nvprof log <= 0.5 s, the CPU run <= 30 s and 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL_LOG = ROOT / "tests/data/nvprof-new/samhachem99-vector-add-streams.log"
TRACE_LOG = ROOT / "tests/data/nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log"


def one_mb_nvprof_log(directory: Path) -> Path:
    """An nvprof GPU trace of about 1 MB: the header of a real trace, its rows repeated with new start times."""
    lines = TRACE_LOG.read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Start"))
    header, rows = lines[: head + 2], [line for line in lines[head + 2 :] if line.strip() and not line.startswith("==")]
    out, size, k = list(header), sum(len(line) + 1 for line in header), 0
    while size < 1_000_000:
        row = rows[k % len(rows)]
        out.append(row)
        size += len(row) + 1
        k += 1
    path = directory / "nvprof-trace-1MB.log"
    path.write_text("\n".join(out) + "\n")
    return path


def completion_env(env: dict[str, str], line: str) -> dict[str, str]:
    """The environment bash's completion gives `profconv` when TAB is pressed after `line`."""
    return {**env, "_PROFCONV_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(line.split()) - 1)}


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS in bytes, exit status) of one process.
    CPU time is what the process itself needed: on a machine shared with other jobs the wall time
    also holds the time it waited for a core."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, proc.returncode


def bench(name: str, argv: list[str], n: int, env: dict[str, str]) -> dict:
    walls, cpus, peaks = [], [], []
    for _ in range(n):
        wall, cpu, peak, rc = measure(argv, env)
        if rc != 0:
            raise SystemExit(f"{name}: exit status {rc} ({' '.join(argv)})")
        walls.append(wall)
        cpus.append(cpu)
        peaks.append(peak)
    return {"command": name, "runs": n, "median_s": statistics.median(walls), "min_s": min(walls),
            "cpu_s": statistics.median(cpus), "peak_mb": max(peaks) / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5, help="runs per command (median reported)")
    ap.add_argument("--cpu-run", action="store_true", help="also time `profconv run --model ece408-high` on the CPU")
    ap.add_argument("--cpu-runs", type=int, default=1, help="runs of the CPU run (default 1)")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    args = ap.parse_args()

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        big = one_mb_nvprof_log(Path(tmp))
        cases = [
            ("python -c pass", [py, "-c", "pass"]),
            ("profconv --help", [py, "-m", "profconv", "--help"]),
            ("profconv models", [py, "-m", "profconv", "models"]),
            (f"profconv parse {SMALL_LOG.name} ({SMALL_LOG.stat().st_size:,} B)",
             [py, "-m", "profconv", "parse", str(SMALL_LOG)]),
            (f"profconv parse 1 MB nvprof trace ({big.stat().st_size:,} B)", [py, "-m", "profconv", "parse", str(big)]),
            ("profconv parse 1 MB nvprof trace --json", [py, "-m", "profconv", "parse", str(big), "--json"]),
        ]
        results = [bench(name, argv, args.n, env) for name, argv in cases]
        results.append(bench("TAB after `profconv run --variant cpu,na`", [py, "-m", "profconv"], args.n,
                             completion_env(env, "profconv run --variant cpu,na")))
        if args.cpu_run:
            results.append(bench("profconv run --model ece408-high --variant cpu (10,000 images)",
                                 [py, "-m", "profconv", "run", "--model", "ece408-high", "--variant", "cpu",
                                  "--out", str(Path(tmp) / "run")], args.cpu_runs, env))
    base = results[0]["median_s"]
    for r in results:
        r["minus_python_s"] = r["median_s"] - base
    print(f"{platform.node()} · {os.cpu_count()} CPUs · load {os.getloadavg()[0]:.2f} · Python {platform.python_version()}")
    print()
    print("| command | runs | wall, median | wall, min | median − python | CPU time | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['command']} | {r['runs']} | {r['median_s']:.3f} s | {r['min_s']:.3f} s | "
              f"{r['minus_python_s']:.3f} s | {r['cpu_s']:.3f} s | {r['peak_mb']:.0f} MB |")
    if args.json:
        args.json.write_text(json.dumps({"load": os.getloadavg(), "results": results}, indent=1))


if __name__ == "__main__":
    main()
