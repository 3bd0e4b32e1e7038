"""Where a graded job's time goes, and how long a class takes (issue 22).

usage:
  python benchmarks/grade_throughput.py measure OUT [OUT ...]     # a grade directory's cost split
  python benchmarks/grade_throughput.py compare A B               # verdicts of two grades of the same files
  python benchmarks/grade_throughput.py dry N [--engine E] [--no-pool] [--keep DIR] [-- GRADE OPTIONS]
      # a class of N submissions (copies of examples/ and tests/data/kernels/) graded with --dry-run on
      # this machine (E: local, slurm -- a real Slurm, see scripts/slurm_single_node.sh -- or ray), then measured

`measure` prints, per job (median, 90th percentile, sum over the jobs):
  wall       the job's time on its GPU (or CPU slot): what the next job waits for
  startup    the grade worker's start (its imports; the first job of a worker pays it)
  bundle     the model's reference and cuDNN times, made once per model and GPU (then 0)
  build      waiting for the submission's nvcc build (made ahead on the CPU cores)
  child      the kernel's child: fork to the moment it gives its GPU back (checks, sweep, timing)
  tail       its CUPTI records flushed and written after that, while the next job's child runs
  judge      the verdict by the course's rules (CUPTI records, the build's SASS)
  record     assembling and writing run.json
  report     the submission's report.md, written after the GPU was given back
and the class: jobs, first start to last finish (wall), jobs per minute, statuses, and a GPU's seconds a
job once the class runs (first to last end of a job's GPU work, times the devices: with two jobs a GPU at
once, `--jobs-per-gpu`, a job's own wall is its latency, not what it costs the GPU). Jobs run as
`profconv run` processes (--no-pool, Slurm, Ray) have only wall and report.
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("startup_s", "bundle_s", "build_s", "child_s", "tail_s", "judge_s", "record_s")  # tail: after the GPU


def _t(text: str | None) -> float | None:
    return datetime.fromisoformat(text).timestamp() if text else None


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def summary(out: Path) -> dict:
    """The cost split and class wall of one grade directory (its manifest.json)."""
    doc = json.loads((out / "manifest.json").read_text())
    jobs = doc["jobs"]
    rows: dict[str, list[float]] = collections.defaultdict(list)
    for j in jobs:
        if j.get("wall_s") is not None:
            rows["wall_s"].append(j["wall_s"])
        for part in PARTS:
            if j.get("cost") and part in j["cost"]:
                rows[part].append(j["cost"][part])
        if j.get("report_s") is not None:
            rows["report_s"].append(j["report_s"])
    starts = [t for j in jobs if (t := _t(j.get("started")))]
    ends = sorted(t for j in jobs if (t := _t(j.get("finished") or j.get("ended"))))
    span = (ends[-1] - min(starts)) if starts and ends else None
    # the first 100 jobs' wall (start of the first to the end of the 100th), or the pace over what ran, x 100
    first100 = (ends[99] - min(starts)) if len(ends) >= 100 and starts else None
    steady = [j["wall_s"] for j in jobs if j.get("wall_s") is not None and not (j.get("cost") or {}).get("bundle_s")]
    # the pace once running: first job's end of GPU work to the last one's, a GPU's seconds a job (several jobs
    # may share a GPU at once: --jobs-per-gpu; a job's own wall then says its latency, not the GPU's cost)
    gpu_ends = sorted(t for j in jobs if (t := _t(j.get("ended"))))
    devices = {j.get("visible_devices") for j in jobs if j.get("visible_devices") is not None} or {None}
    pace = (gpu_ends[-1] - gpu_ends[0]) / (len(gpu_ends) - 1) if len(gpu_ends) > 1 else None
    return {"out": str(out), "jobs": len(jobs), "engine": doc.get("engine", {}).get("name"),
            "runners": dict(collections.Counter(j.get("runner", "process") for j in jobs)),
            "statuses": dict(collections.Counter(j["status"] for j in jobs)),
            "class_wall_s": round(span, 2) if span is not None else None,
            "jobs_per_min": round(60 * len(jobs) / span, 1) if span else None,
            "first_100_s": round(first100, 1) if first100 is not None else None,
            "per_100_s": round(100 * span / len(jobs), 1) if span and jobs else None,
            "steady_wall_median_s": round(statistics.median(steady), 3) if steady else None,
            "gpu_s_per_job": round(pace * len(devices), 3) if pace is not None else None, "devices": len(devices),
            "parts": {k: {"median": round(statistics.median(v), 3), "p90": round(_pct(v, 0.9), 3),
                          "sum": round(sum(v), 2), "n": len(v)} for k, v in rows.items()},
            "child_steps": child_steps(out), "gpu_steps": gpu_steps(out), "load": doc.get("load")}


def load_line(load: dict | None) -> str | None:
    """The host's CPU and GPU busy shares while the jobs ran (the manifest's "load": the local executor)."""
    if not load or not load.get("samples"):
        return None
    text = (f"  this host while the jobs ran: CPUs busy {load['cpu_busy_mean']:.0%} (p90 {load['cpu_busy_p90']:.0%}) "
            f"of {load['cpu_cores']} cores")
    gpus = load.get("gpu_busy_mean") or {}
    if gpus:
        text += "; GPU busy " + ", ".join(f"{k}: {v:.0%}" for k, v in gpus.items())
    return text + (f" ({load['note']})" if load.get("note") else "")


def _step_name(step: str) -> str:
    """'ece408-fa20/tiled/conv1: sweep of 3 candidates' -> 'conv1: sweep'; 'ece408-fa20/tiled/forward' -> 'forward'."""
    head, _, tail = step.partition(": ")
    parts = head.split("/")
    if tail:
        kind = tail.split(" of ")[0].split(" on ")[0]
        return f"{parts[-1]}: {kind}" if len(parts) >= 3 else kind
    return parts[-1]


def child_steps(out: Path) -> dict[str, dict[str, float]]:
    """Where the kernels' children spent their time, by step (their timelines, grade.pool.Timeline): per step
    the median and the sum over the jobs, seconds; 'start' is fork to the first step (CUDA context, inputs)."""
    per: dict[str, list[float]] = collections.defaultdict(list)
    for f in (out / "jobs").rglob("*.timeline.json"):
        steps = json.loads(f.read_text())
        marks = [[0.0, "start"], *steps]
        for (t0, name), (t1, _) in zip(marks, marks[1:]):
            per[_step_name(name) if name != "start" else "start"].append(t1 - t0)
    return {k: {"median": round(statistics.median(v), 3), "sum": round(sum(v), 2), "n": len(v)}
            for k, v in sorted(per.items(), key=lambda kv: -sum(kv[1]))}


def _holds(marks: list[list]) -> tuple[list[tuple[float, str]], list[float]]:
    """A child's lock events (run.user.gpushare marks) as its steps held shared, (seconds, 'from -> to'), and
    its holds alone, seconds."""
    shared: list[tuple[float, str]] = []
    alone: list[float] = []
    marks = [m for m in marks if not m[1].startswith("note ")]
    for (t0, e0, w0), (t1, e1, w1) in zip(marks, marks[1:]):
        if e0 in ("shared", "step") and e1 in ("step", "release"):
            shared.append((t1 - t0, f"{w0.split(':')[0]} -> {w1.split(':')[0]}"))
        elif e0 == "alone" and e1 == "release":
            alone.append(t1 - t0)
    return shared, alone


def gpu_steps(out: Path, top: int = 8) -> dict | None:
    """What another child's turn waits for (the children's `<child>.gpusteps.json`): the steps held shared
    between two lock events -- their spread, and the code pairs whose steps add up to the most -- and the
    holds alone (turns), a job. None without those files (a class graded before the tenth session)."""
    steps: list[tuple[float, str]] = []
    alone: list[float] = []
    files = list((out / "jobs").rglob("*.gpusteps.json"))
    for f in files:
        s, a = _holds(json.loads(f.read_text()))
        steps += s
        alone += a
    if not steps:
        return None
    by: dict[str, list[float]] = collections.defaultdict(list)
    for d, pair in steps:
        by[pair].append(d)
    d = [x for x, _ in steps]
    return {"children": len(files), "steps": len(d), "median": round(statistics.median(d), 3),
            "p90": round(_pct(d, 0.9), 3), "p99": round(_pct(d, 0.99), 3),
            "alone_per_job": round(len(alone) / len(files), 1), "alone_s_per_job": round(sum(alone) / len(files), 3),
            "pairs": [{"pair": k, "n": len(v), "sum": round(sum(v), 2), "p90": round(_pct(v, 0.9), 3),
                       "max": round(max(v), 3)} for k, v in sorted(by.items(), key=lambda kv: -sum(kv[1]))[:top]]}


AFTER_RELEASE = ("flush", "write", "GPU released", "(exit)")  # a child's steps after it gave the GPU back


def waits_line(steps: dict[str, dict[str, float]], jobs: int) -> str | None:
    """A child's time a job split into its work on the GPU and its waits for a turn (the jobs a GPU trade one for
    the other: ninth session), from `child_steps`; None without timelines."""
    if not steps or jobs <= 0:
        return None
    wait = steps.get("GPU wait", {"sum": 0.0, "n": 0})
    work = sum(p["sum"] for k, p in steps.items() if k != "GPU wait" and k not in AFTER_RELEASE)
    return (f"  a child, a job: works {work / jobs:.2f} s holding the GPU, waits for a turn {wait['sum'] / jobs:.2f} s "
            f"({wait['n'] / jobs:.1f} waits)")


def print_summary(s: dict) -> None:
    print(f"{s['out']}: {s['jobs']} jobs ({s['engine']}, {s['runners']}), {s['statuses']}")
    print(f"  class wall {s['class_wall_s']} s, {s['jobs_per_min']} jobs/min; 100 jobs: "
          + (f"{s['first_100_s']} s (the first 100)" if s.get("first_100_s") is not None
             else f"{s.get('per_100_s')} s at this pace")
          + f"; per job without the model bundle: median {s.get('steady_wall_median_s')} s")
    if s.get("gpu_s_per_job") is not None:
        print(f"  a GPU's seconds a job once running (first to last job's end, x {s['devices']} device(s)): "
              f"{s['gpu_s_per_job']} s")
    if (said := load_line(s.get("load"))) is not None:
        print(said)
    print(f"  {'part':10} {'median s':>9} {'p90 s':>8} {'sum s':>9} {'jobs':>5}")
    for part in ("wall_s", *PARTS, "report_s"):
        if part in s["parts"]:
            p = s["parts"][part]
            print(f"  {part[:-2]:10} {p['median']:>9.3f} {p['p90']:>8.3f} {p['sum']:>9.2f} {p['n']:>5}")
    if s.get("child_steps"):
        timelines = max(p["n"] for k, p in s["child_steps"].items() if k == "start") if "start" in s["child_steps"] else 0
        if (said := waits_line(s["child_steps"], timelines)) is not None:
            print(said)
        print("  the kernels' children, by step (median s, sum s, jobs):")
        for name, p in list(s["child_steps"].items())[:14]:
            print(f"    {name[:40]:40} {p['median']:>8.3f} {p['sum']:>9.2f} {p['n']:>5}")
    if g := s.get("gpu_steps"):
        print(f"  steps held shared (what a turn waits for): {g['steps']} in {g['children']} children, median "
              f"{g['median']} s, p90 {g['p90']}, p99 {g['p99']}; turns alone a job {g['alone_per_job']}, "
              f"{g['alone_s_per_job']} s")
        for p in g["pairs"]:
            print(f"    {p['pair'][:62]:62} {p['n']:>6} {p['sum']:>8.2f} p90 {p['p90']:.3f} max {p['max']:.2f}")


def verdicts(out: Path) -> dict[str, str]:
    text = (out / "leaderboard.csv").read_text()
    return {r["submission"]: r["verdict"] for r in csv.DictReader(io.StringIO(text))}


def compare(a: Path, b: Path) -> int:
    va, vb = verdicts(a), verdicts(b)
    gone = ("lost", "unplaced")  # never run (cut short, no GPU of its type): nothing to compare
    both = sorted(n for n in set(va) & set(vb) if va[n] not in gone and vb[n] not in gone)
    differ = [n for n in both if va[n] != vb[n]]
    print(f"{len(both)} submissions in both; {len(both) - len(differ)} same verdict, {len(differ)} differ")
    for n in differ:
        print(f"  {n}: {va[n]} ({a.name}) vs {vb[n]} ({b.name})")
    counts = collections.Counter(va[n] for n in both)
    print(f"  verdicts: {dict(counts)}")
    return 1 if differ else 0


def build_class(where: Path, n: int) -> Path:
    """N submissions: the examples and profconv's course/bad kernels, copied round-robin under new names."""
    def kernel_dir(p: Path) -> bool:
        return p.is_dir() and any(f.suffix in (".cu", ".cuh", ".py") or f.name == "profconv.toml" for f in p.iterdir())

    sources = sorted(p for p in (ROOT / "examples").iterdir() if kernel_dir(p))
    kernels = ROOT / "tests" / "data" / "kernels"
    sources += sorted(p for p in (kernels / "course").iterdir() if p.is_dir())
    for i in range(n):
        src = sources[i % len(sources)]
        shutil.copytree(src, where / f"s{i:03d}-{src.name}")
    return where


def dry(n: int, engine: str, pool: bool, keep: Path | None, extra: list[str]) -> int:
    base = keep or Path(tempfile.mkdtemp(prefix="grade-throughput-"))
    klass = build_class(base / "class", n)
    out = base / "out"
    argv = [sys.executable, "-m", "profconv", "grade", str(klass), "--dry-run", "--model", "ece408-fa20",
            "--images", "2", "--out", str(out), "--executor", engine, "--cache", str(base / "cache"),
            *(["--no-pool"] if not pool else []), *extra]
    print("$", " ".join(argv))
    t0 = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    print(done.stdout[-2000:], done.stderr[-2000:])
    s = summary(out)
    s["command_wall_s"] = round(wall, 2)
    print_summary(s)
    print(f"  command wall {wall:.1f} s for {n} jobs: {wall / n:.2f} s per job")
    (base / "throughput.json").write_text(json.dumps(s, indent=1))
    if keep is None:
        shutil.rmtree(base, ignore_errors=True)
    return done.returncode


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("measure")
    m.add_argument("outs", nargs="+", type=Path)
    m.add_argument("--json", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    d = sub.add_parser("dry")
    d.add_argument("n", type=int)
    d.add_argument("--engine", default="local")
    d.add_argument("--no-pool", action="store_true")
    d.add_argument("--keep", type=Path)
    args, extra = ap.parse_known_args(argv)  # dry: what follows goes to `profconv grade` (e.g. --cpus-per-task 1)
    if extra and args.what != "dry":
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    missing = [d for d in (args.outs if args.what == "measure" else [args.a, args.b] if args.what == "compare" else [])
               if not (d / "manifest.json").is_file()]
    if missing:
        print(f"error: {missing[0]} is not a grade directory (no manifest.json)", file=sys.stderr)
        return 2
    if args.what == "measure":
        for out in args.outs:
            s = summary(out)
            print(json.dumps(s, indent=1)) if args.json else print_summary(s)
        return 0
    if args.what == "compare":
        return compare(args.a, args.b)
    return dry(args.n, args.engine, not args.no_pool, args.keep, [a for a in extra if a != "--"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
