"""Instructions per parse, profconv against read_csv: a yardstick that a shared machine does not move.

`parse_throughput.py` times CPU seconds, and on this shared 2-core VM the same code's ratio to
`pandas.read_csv` moves by +-20% from run to run (what the other tenants do to the caches, the page
faults of fresh memory). To tell whether a change made the parser do less work, this counts the
instructions it runs under valgrind's callgrind, which are the same on every run: a child process
runs the call once and a child runs it three times (each after the same imports: pandas, pyarrow,
profconv), and the difference halved is one call's instructions, imports and warm-up left out.
The same is done for `pandas.read_csv` of the same rows (parse_throughput's plain CSV), in one
thread as parse_throughput times it, so the ratio is like its speed ratio: read_csv's instructions
over profconv's.

What instructions do not count: memory stalls and page faults (a copy counts as about one
instruction a byte: glibc copies with `rep movsb`, which callgrind counts once a byte). So it is
for comparing two versions of profconv's code on one input, not a replacement for the CPU
seconds that the issue's targets are measured in. Needs valgrind; takes ~25 s a child at 20 MB.

    python benchmarks/parse_instructions.py --only nsys-reports
    python benchmarks/parse_instructions.py --only nsys-reports --tree /tmp/old   # another checkout
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_throughput import INPUTS  # noqa: E402  (the same generated inputs)

_CALL = """
import sys
import pandas, pyarrow
import profconv
try:  # read_csv in one thread, as parse_throughput times it (pandas 3.1 parses in several by default)
    pandas.set_option("mode.max_threads", 1)
except (KeyError, ValueError):  # pandas 3.0: no such option, one thread anyway
    pass
call = (lambda: pandas.read_csv(sys.argv[3])) if sys.argv[1] == "read_csv" else (lambda: profconv.parse(sys.argv[3]))
for _ in range(int(sys.argv[2])):
    call()
"""


def instructions(what: str, times: int, path: Path, tree: Path) -> int:
    """The instructions a child that runs `what` (profconv or read_csv) on `path` `times` times runs."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", sys.executable,
                              "-c", _CALL, what, str(times), str(path)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tmp)
    got = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or got is None:
        raise SystemExit(f"valgrind {what} {path}: {out.stderr[-500:]}")
    return int(got.group(1))


def per_call(what: str, path: Path, tree: Path) -> float:
    """One call's instructions: (three calls - one call) / 2."""
    return (instructions(what, 3, path, tree) - instructions(what, 1, path, tree)) / 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=20.0, help="size of each generated input (MB)")
    ap.add_argument("--only", default="nsys-reports", help="comma-separated inputs: " + ", ".join(INPUTS))
    ap.add_argument("--tree", type=Path, default=ROOT, help="the profconv checkout to count (default: this one)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: it counts the instructions")
    print(f"profconv from {args.tree}; millions of instructions per call (callgrind: 3 calls - 1 call, halved)")
    with tempfile.TemporaryDirectory(prefix="profconv-instr-") as tmp:
        for key in (k for k in args.only.split(",") if k):
            path, plain = Path(tmp) / f"{key}.log", Path(tmp) / f"{key}.plain.csv"
            INPUTS[key][1](path, plain, int(args.mb * 1e6))
            ours, theirs = per_call("profconv", path, args.tree), per_call("read_csv", plain, args.tree)
            print(f"{key:13s} {path.stat().st_size / 1e6:6.1f} MB  profconv.parse {ours / 1e6:8.1f} M  "
                  f"read_csv {theirs / 1e6:8.1f} M  read_csv / profconv {theirs / ours:5.2f}x")


if __name__ == "__main__":
    main()
