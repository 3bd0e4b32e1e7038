"""Bounded fuzz run of hostile inputs (tests/fuzz_hostile.py): N inputs over the classes log, stray,
notebook, record, manifest and listing, in worker processes; every input must end in a result or
profconv's own one-line error, within the time limit, keeping its class's promise (no row lost without a
word, no raw HTML, strict JSON, no student dropped).

    python scripts/fuzz.py --inputs 100000 --workers 2 --seed 1 --report fuzz-report.json
    python scripts/fuzz.py --replay log:12345          # one input again, its traceback shown

Exit 0 when nothing was found; 1 with the findings (class:seed, what, the exception's last line) in the
report and on stdout. `nox -s fuzz` runs it with 100,000 inputs (about 10-20 minutes on 2 cores)."""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def _init() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    signal.signal(signal.SIGPROF, _alarm)


def run_one(job: tuple[str, int, float]) -> tuple[str, int, str, str, float]:
    """(class, seed, outcome, detail, seconds): outcome ok | finding | traceback | hang."""
    from profconv.errors import ProfconvError
    from tests import fuzz_hostile

    cls, seed, limit = job
    t0 = time.perf_counter()
    # CPU seconds of this worker (user + system), not wall time: a machine shared with other jobs makes a
    # 1 s input take 10 s of wall time; a hang (a loop that never ends) burns CPU and is caught all the same
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        result = fuzz_hostile.CLASSES[cls](seed)
        outcome, detail = "ok", result
    except Hang:
        outcome, detail = "hang", f"over {limit:g} s of CPU"
    except fuzz_hostile.Finding as exc:
        outcome, detail = "finding", str(exc)
    except AssertionError as exc:  # an invariant of tests/parse_invariants
        outcome, detail = "finding", f"invariant: {str(exc).splitlines()[0] if str(exc) else 'assertion'}"
    except ProfconvError as exc:
        outcome, detail = "ok", f"refused: {exc}"
    except Exception as exc:  # noqa: BLE001 - a traceback is the finding
        last = traceback.format_exception(exc)[-2].strip().splitlines()[0] if exc.__traceback__ else ""
        outcome, detail = "traceback", f"{type(exc).__name__}: {str(exc)[:200]} ({last})"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return cls, seed, outcome, detail, time.perf_counter() - t0


def plan(n: int, seed: int) -> list[tuple[str, int]]:
    from tests.fuzz_hostile import WEIGHTS

    jobs = []
    for cls, w in WEIGHTS.items():
        jobs += [(cls, seed * 10_000_000 + i) for i in range(max(1, round(n * w)))]
    return jobs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2)))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="CPU seconds one input may take (a hang beyond)")
    ap.add_argument("--report", type=Path, default=None)
    ap.add_argument("--replay", metavar="CLASS:SEED")
    args = ap.parse_args(argv)
    if args.replay:
        from tests import fuzz_hostile

        cls, _, seed = args.replay.partition(":")
        print(fuzz_hostile.CLASSES[cls](int(seed)))
        return 0
    jobs = [(c, s, args.timeout) for c, s in plan(args.inputs, args.seed)]
    t0 = time.perf_counter()
    counts: Counter = Counter()
    findings: list[dict] = []
    slowest: list[tuple[float, str]] = []
    with mp.get_context("fork").Pool(args.workers, initializer=_init, maxtasksperchild=2000) as pool:
        for i, (cls, seed, outcome, detail, secs) in enumerate(pool.imap_unordered(run_one, jobs, chunksize=16), 1):
            counts[(cls, outcome)] += 1
            slowest = sorted([*slowest, (secs, f"{cls}:{seed}")], reverse=True)[:5]
            if outcome != "ok":
                findings.append({"input": f"{cls}:{seed}", "outcome": outcome, "detail": detail, "seconds": secs})
                print(f"{outcome}: {cls}:{seed}: {detail}", flush=True)
            if i % 5000 == 0:
                print(f"{i:,} of {len(jobs):,} inputs, {time.perf_counter() - t0:.0f} s, {len(findings)} finding(s)",
                      flush=True)
    summary = {"inputs": len(jobs), "seconds": round(time.perf_counter() - t0, 1), "workers": args.workers,
               "seed": args.seed, "timeout_s": args.timeout,
               "by_class": {f"{c}/{o}": n for (c, o), n in sorted(counts.items())},
               "slowest": [{"input": name, "seconds": round(s, 2)} for s, name in slowest], "findings": findings}
    if args.report is not None:
        args.report.write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    print(json.dumps({k: v for k, v in summary.items() if k != "findings"}, indent=1))
    print(f"{len(findings)} finding(s) in {len(jobs):,} inputs")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
