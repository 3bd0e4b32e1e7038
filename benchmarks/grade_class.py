"""Build a class of >= 20 submissions for the GPU validation of `profconv grade`, and check its leaderboard.

usage:
  python benchmarks/grade_class.py build DIR [GPU_TYPE]  # DIR/<name>/ per submission + DIR/class.csv
  python benchmarks/grade_class.py check OUT DIR/class.csv   # expected vs got, where and how long each job ran
  python benchmarks/grade_class.py compare GRADE.tsv RUN.tsv  # grade's verdicts against `profconv run --kernel`'s

With GPU_TYPE (e.g. H100) every submission asks for that GPU type (the listing's `gpu` column: the
local executor matches it against the GPU names, Ray places the task by accelerator type), and one
more submission asks for a type this machine lacks: it must come back `unplaced`.

The submissions come from examples/ (one per contract: correct) and tests/data/kernels/ (course-format
files as they are; bad/ holds deliberately broken kernels: FAILED), plus mutations of the examples that are wrong, crash (illegal
address, a segfault in host code, an exception), hang, do not compile, or are slow. A mutation
whose anchor text is gone from its example stops the build with its name (never a silent skip).
The listing's extra column `expect` says what the leaderboard must show:
  ok        verdict ok
  FAILED    verdict FAILED (the kernel's own row: wrong, crashed, hung or failed to build in
            profconv run's isolated child) -- or the job itself ended in error/crashed/timeout
  slow      verdict ok and at least 1.5x the class median
  sanitize  a kernel whose only fault is a read past its input or a race, which the output check cannot
            see: FAILED when the grade ran with --sanitize (compute-sanitizer), else any verdict
  unplaced  asks for a GPU type this machine lacks: verdict unplaced
  any       a student file: whatever it is, it must get its row
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
STUDENTS = ROOT / "tests" / "data" / "kernels"

TILED = "device-tiled/conv_tiled.cu"
MINIDNN = "course-minidnn/new-forward.cu"
PYTHON = "python-cupy/conv_cupy.py"
TILED_STORE = "if (h < Ho && wo < Wo) y[(((size_t)b * M + m) * Ho + h) * Wo + wo] = acc + bias[m];"
TILED_TOP = "extern __shared__ float smem[];"
MINIDNN_MAC = "acc += in_4d(b, c, h * S + p, w * S + q) * mask_4d(m, c, p, q);"
MINIDNN_PROLOG = "cudaMalloc((void **)device_input_ptr"

# name -> (example file, expect, [(anchor, replacement)])
MUTANTS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "tiled-tile8": (TILED, "ok", [("TILE = [8, 16, 32]", "TILE = [8]"), ("TILE = 16", "TILE = 8")]),
    "tiled-tile32": (TILED, "ok", [("TILE = [8, 16, 32]", "TILE = [32]"), ("TILE = 16", "TILE = 32")]),
    "tiled-slow": (TILED, "slow", [("TILE = [8, 16, 32]", "TILE = [2]"), ("TILE = 16", "TILE = 2")]),
    "tiled-wrong-scale": (TILED, "FAILED", [(TILED_STORE, TILED_STORE.replace("= acc + bias[m]", "= 1.01f * acc + bias[m]"))]),
    "tiled-wrong-halo": (TILED, "FAILED", [("const int ih = h0 + i - pad, iw = w0 + j - pad;",
                                            "const int ih = h0 + i - pad, iw = w0 + j - pad + 1;")]),
    "tiled-nan": (TILED, "FAILED", [(TILED_STORE, TILED_STORE.replace(
        "= acc + bias[m]", "= (h == 0 && wo == 0) ? __int_as_float(0x7fc00000) : acc + bias[m]"))]),
    "tiled-skip-last-column": (TILED, "FAILED", [(TILED_STORE, TILED_STORE.replace("wo < Wo)", "wo < Wo - 1)"))]),
    "tiled-illegal-address": (TILED, "FAILED", [(TILED_TOP, TILED_TOP + " if (threadIdx.x == 0) y[(size_t)1 << 40] = 0.0f;")]),
    "tiled-hang": (TILED, "FAILED", [(TILED_TOP, TILED_TOP + " { volatile int spin = 1; while (spin) {} }")]),
    "tiled-no-compile": (TILED, "FAILED", [(TILED_TOP, TILED_TOP + " this is not CUDA;")]),
    "minidnn-wrong-transpose": (MINIDNN, "FAILED", [
        (MINIDNN_MAC, MINIDNN_MAC.replace("mask_4d(m, c, p, q)", "mask_4d(m, c, q, p)"))]),
    "minidnn-host-segfault": (MINIDNN, "FAILED", [(MINIDNN_PROLOG, "*(volatile int *)0 = 1;\n    " + MINIDNN_PROLOG)]),
    "python-raises": (PYTHON, "FAILED", [
        ("import cupy as cp\n", "import cupy as cp\n\nraise RuntimeError('a student bug at import')\n")]),
}


# mutations left out when tests/data/kernels/ already holds a kernel failing the same way
COVERED = {"tiled-hang": "bad/hang.cu", "tiled-no-compile": "bad/compile_error.cu",
           "tiled-illegal-address": "bad/oob.cu", "tiled-wrong-halo": "bad/wrong.cu"}


def _holds_a_kernel(example_dir: Path) -> bool:
    """An example a class can hand in (examples/notebook shows the library from Python: not a submission)."""
    return (example_dir / "profconv.toml").is_file() or any(
        p.suffix in (".cu", ".cuh", ".py") for p in example_dir.iterdir() if p.is_file())


def _copy_example(example_dir: Path, dst: Path) -> None:
    shutil.copytree(example_dir, dst)


# bad/ kernels whose fault only compute-sanitizer sees (the output is right)
SANITIZE_ONLY = ("reads_past_end", "racy", "race")


def _other_type(gpu_type: str) -> str:
    return "A100" if gpu_type.upper() != "A100" else "H100"


def build(out: Path, gpu_type: str | None = None) -> list[dict[str, str]]:
    if not EX.is_dir():
        sys.exit(f"error: {EX} is missing: the examples of `profconv run --kernel` (issue 11) are needed")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows = []
    for example in sorted(p for p in EX.iterdir() if p.is_dir() and _holds_a_kernel(p)):
        _copy_example(example, out / f"ex-{example.name}")
        rows.append({"submission": f"ex-{example.name}", "expect": "ok"})
    for name, (rel, expect, edits) in MUTANTS.items():
        covered = COVERED.get(name)
        if covered and (STUDENTS / covered).is_file():
            print(f"{name}: left out, {STUDENTS.name}/{covered} is the same kind of failure")
            continue
        src = EX / rel
        if not src.is_file():
            sys.exit(f"error: mutation {name}: {src} is missing")
        dst = out / name
        _copy_example(src.parent, dst)
        text = (dst / src.name).read_text()
        for anchor, repl in edits:
            if anchor not in text:
                sys.exit(f"error: mutation {name}: anchor not found in {rel}: {anchor!r}")
            text = text.replace(anchor, repl, 1)
        (dst / src.name).write_text(text)
        rows.append({"submission": name, "expect": expect})
    if STUDENTS.is_dir():  # a folder with a manifest is one submission; any other kernel file is one
        folders = sorted(p.parent for p in STUDENTS.rglob("profconv.toml"))
        files = sorted(p for p in STUDENTS.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file()
                       and not any(d in p.parents for d in folders))
        for src in [*folders, *files]:
            rel = src.relative_to(STUDENTS)
            name = "-".join((rel.with_suffix("") if src.is_file() else rel).parts)
            if src.is_dir():
                shutil.copytree(src, out / name)
            else:
                (out / name).mkdir()
                shutil.copy2(src, out / name / src.name)
            # bad/: profconv's deliberately broken kernels (wrong, out of bounds, hang, ...)
            bad = rel.parts[0] == "bad"
            expect = "any" if not bad else "sanitize" if any(k in name for k in SANITIZE_ONLY) else "FAILED"
            rows.append({"submission": name, "expect": expect})
    fields = ["submission", "expect"]
    if gpu_type:
        for row in rows:
            row["gpu"] = gpu_type
        _copy_example(EX / "device-tiled", out / "wrong-gpu-type")
        rows.append({"submission": "wrong-gpu-type", "expect": "unplaced", "gpu": _other_type(gpu_type)})
        fields.append("gpu")
    with (out / "class.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} submissions in {out} ({out / 'class.csv'})")
    return rows


def _t(text: str | None) -> float | None:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp() if text else None


def _board(grade_out: Path, doc: dict) -> dict[str, dict[str, str]]:
    """The leaderboard's rows; from the manifest when the grade was cut short before writing it."""
    path = grade_out / "leaderboard.csv"
    if path.is_file():
        text = path.read_text()
    else:
        from profconv.grade import leaderboard, manifest

        print("(no leaderboard.csv: the grade was cut short; the board below is made from its manifest)")
        text = leaderboard.board(leaderboard.layers(manifest.results(doc, grade_out))).to_csv(index=False)
    return {r["submission"]: r for r in csv.DictReader(io.StringIO(text))}


def check(grade_out: Path, listing: Path) -> int:
    expect = {r["submission"]: r["expect"] for r in csv.DictReader(listing.open())}
    doc = json.loads((grade_out / "manifest.json").read_text())
    board = _board(grade_out, doc)
    if "schedule" not in doc:
        from profconv.grade import manifest
        from profconv.grade.schedule import schedule

        doc["schedule"] = schedule(manifest.results(doc, grade_out)).to_dict()
    sanitized = "--sanitize" in doc.get("argv", [])
    bad = 0
    print(f"{'submission':34} {'expect':8} {'verdict':9} {'GPU':>3} {'total ms':>9} {'x cuDNN':>13} {'x med':>5}  reason")
    for name, want in expect.items():
        row = board.get(name)
        if row is None:
            print(f"{name:34} {want:8} MISSING: no leaderboard row")
            bad += 1
            continue
        verdict = row["verdict"]
        ratio = float(row["vs_median"]) if row["vs_median"] else None
        failed = verdict in ("FAILED", "error", "crashed", "timeout")
        good = {"ok": verdict == "ok", "slow": verdict == "ok" and ratio is not None and ratio >= 1.5,
                "FAILED": failed, "sanitize": failed if sanitized else bool(verdict),
                "unplaced": verdict == "unplaced", "any": bool(verdict)}[want]
        bad += not good
        total = f"{float(row['total_s']) * 1e3:.3f}" if row["total_s"] else "—"
        xc = "—"
        if row["vs_cudnn"]:
            xc = f"{float(row['vs_cudnn']):.2f}"
            if row.get("vs_cudnn_low") and row.get("vs_cudnn_high"):
                xc += f" ({float(row['vs_cudnn_low']):.2f}-{float(row['vs_cudnn_high']):.2f})"
        med = "—" if ratio is None else f"{ratio:.2f}"
        print(f"{name:34} {want:8} {verdict:9} {row.get('device') or '—':>3} {total:>9} {xc:>13} {med:>5}  "
              f"{'' if good else 'UNEXPECTED '}{(row['reason'] or '')[:60]}")
    jobs = doc["jobs"]
    walls = [j["wall_s"] for j in jobs if j.get("wall_s") is not None]
    reps = [j["report_s"] for j in jobs if j.get("report_s") is not None]
    print(f"\n{len(jobs)} jobs, engine {doc['engine']['name']} {doc['engine'].get('version') or ''}; "
          f"options {json.dumps(doc['engine'].get('options', {}))}")
    if walls:
        print(f"job wall time on its GPU: median {statistics.median(walls):.1f} s, mean {statistics.mean(walls):.1f} s, "
              f"min {min(walls):.1f} s, max {max(walls):.1f} s, sum {sum(walls):.1f} s")
    if reps:
        print(f"report after the GPU was given back: median {statistics.median(reps):.1f} s, sum {sum(reps):.1f} s")
    sched = doc.get("schedule") or {}
    for g in sched.get("gpus", []):
        print(f"GPU {g['device']} ({g['gpu']}, {g['host']}): {g['jobs']} jobs, {g['busy_s']:.1f} s busy, "
              f"at most {g['max_at_once']} job(s) at once")
    if sched:
        print(f"span {sched['span_s']:.1f} s, two or more GPUs busy for {sched['parallel_s']:.1f} s, "
              f"at most {sched['max_gpus']} GPUs at once, at most {sched['max_per_gpu']} job(s) per GPU at once")
        if sched["max_per_gpu"] > 1:
            print("RULE BROKEN: two jobs at once on one GPU")
            bad += 1
    cud = [float(r["cudnn_total_s"]) for r in board.values() if r.get("cudnn_total_s")]
    if cud:
        print(f"cuDNN's total Op Time over the {len(cud)} ok jobs: median {statistics.median(cud) * 1e3:.4f} ms, "
              f"min {min(cud) * 1e3:.4f}, max {max(cud) * 1e3:.4f} (max/min {max(cud) / min(cud):.3f})")
    # per job: where and when (seconds from the first start)
    t0 = min((_t(j.get("started")) for j in jobs if j.get("started") and j.get("ended")), default=None)
    if t0 is not None:
        print(f"\n{'job':34} {'GPU':>3} {'start':>7} {'end':>7} {'wall':>6} {'report':>6}  status")
        for j in sorted(jobs, key=lambda j: (_t(j.get("started")) or 0)):
            a, b = _t(j.get("started")), _t(j.get("ended"))
            span = f"{a - t0:7.1f} {b - t0:7.1f}" if a is not None and b is not None else f"{'—':>7} {'—':>7}"
            wall = f"{j['wall_s']:.1f}" if j.get("wall_s") is not None else "—"
            rep = f"{j['report_s']:.1f}" if j.get("report_s") is not None else "—"
            print(f"{j['submission']:34} {j.get('visible_devices') or '—':>3} {span} {wall:>6} {rep:>6}  {j['status']}")
    print(f"{bad} unexpected verdict(s)")
    return 1 if bad else 0


def _key(path: str) -> str:
    """A submission's name in a verdicts file, the same on every machine: from the data or class folder on."""
    for mark in ("/.gpu/data/", "/ours/"):
        if mark in path:
            return ("ours/" if mark == "/ours/" else "") + path.split(mark, 1)[1]
    return path


def _verdicts(tsv: Path) -> dict[str, list[str]]:
    """A verdicts file (file, status, rule, reason, Correctness[, Op Times]) by submission."""
    rows = [line.split("\t") for line in tsv.read_text().splitlines() if line.strip()]
    short = [n for n, r in enumerate(rows, 1) if len(r) < 5]
    if short:
        sys.exit(f"{tsv}: line(s) {', '.join(map(str, short[:5]))} hold fewer than five columns: not a verdicts file")
    return {_key(r[0]): r[1:5] for r in rows}


def compare(grade_tsv: Path, run_tsv: Path) -> int:
    """Grade's verdict, rule and Correctness against `profconv run --kernel`'s, file by file."""
    graded, ran = _verdicts(grade_tsv), _verdicts(run_tsv)
    both = sorted(set(graded) & set(ran))
    differ = [k for k in both if [graded[k][i] for i in (0, 1, 3)] != [ran[k][i] for i in (0, 1, 3)]]
    for k in differ:
        print(f"DIFFERS {k}\n  grade: {' | '.join(graded[k])}\n  run:   {' | '.join(ran[k])}")
    for k in sorted(set(graded) - set(ran)):
        print(f"not run: {k}")
    real = sum(not k.startswith("ours/") for k in both)
    same = len(both) - len(differ)
    print(f"{same} of {len(both)} identical (verdict, rule, Correctness; {real} real course files among the "
          f"{len(both)}), {len(differ)} differ, {len(set(graded) - set(ran))} graded but not run")
    return 1 if differ or not both else 0


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "build":
        build(Path(sys.argv[2]), sys.argv[3] if len(sys.argv) == 4 else None)
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(Path(sys.argv[2]), Path(sys.argv[3])))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
