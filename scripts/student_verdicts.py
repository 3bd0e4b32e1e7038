"""One line per judged course file: `python scripts/student_verdicts.py INDEX.tsv RUNS_DIR > verdicts.tsv`.

INDEX.tsv names each file's folder, form, model and source (the real students' files are kept out of git:
/work/notes/student-files/index.tsv); RUNS_DIR holds one `profconv run` output folder per file (named as the
file's folder). Each line: the verdict, its first reason, and the facts that decided it."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path


def _fmt(x: float | None, spec: str = ".3g") -> str:
    return "" if x is None else format(x, spec)


def line(row: dict[str, str], runs: Path) -> dict[str, str]:
    out = {"folder": row["folder"], "form": row["form"], "model": row["model"], "source": f"{row['repository']}:{row['path']}"}
    run = runs / row["folder"] / "run.json"
    if not run.is_file():
        log = runs / f"{row['folder']}.log"
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.is_file() else ["not run"]
        return {**out, "status": "no record", "reason": tail[0][:200] if tail else ""}
    results = [r for r in json.loads(run.read_text())["results"] if r.get("user")]
    if not results:
        return {**out, "status": "no result", "reason": ""}
    r = results[0]
    f = r.get("facts") or {}
    layers = f.get("layers", [])
    edges = f.get("edges", [])
    tol = (f.get("harness") or {}).get("tolerance") or 1e-5
    verdict = r.get("verdict") or {}
    return {**out, "status": r["status"], "reason": (r.get("error") or "")[:300],
            "rule_set": str(verdict.get("course") or ""), "rule": str((verdict.get("rule") or {}).get("id") or ""),
            "legacy_status": f.get("legacy_status") or "", "legacy_reason": (f.get("legacy_error") or "")[:300],
            "api_errors": " | ".join(e for lf in layers for e in lf.get("api_errors", []))[:200],
            "detected": (f.get("form") or {}).get("form") or "",
            "rel_error": " ".join(_fmt((lf.get("check") or {}).get("rel_error")) for lf in layers),
            "timed_wrong": " ".join(str((lf.get("timed") or {}).get("wrong", "")) for lf in layers),
            "ghost_matched": " ".join(_fmt((lf.get("ghost") or {}).get("matched"), ".2f") for lf in layers),
            "op_ms": " ".join(_fmt(((lf.get("timing") or {}).get("op_median_s") or 0) * 1e3) for lf in layers),
            "cold_ms": " ".join(_fmt(((lf.get("timing") or {}).get("cold_s") or 0) * 1e3) for lf in layers),
            "edges_wrong": str(sum(1 for e in edges if e.get("error") or (e.get("output") or {}).get("nonfinite") or
                                   ((e.get("output") or {}).get("rel_error") or 0) > tol)) + f"/{len(edges)}",
            "correctness": _fmt(f.get("correctness"), ".4f")}


def main(index: Path, runs: Path) -> None:
    with index.open() as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    lines = [line(r, runs) for r in rows if (runs / r["folder"]).exists() or (runs / f"{r['folder']}.log").exists()]
    keys = ["folder", "form", "detected", "model", "status", "reason", "rule_set", "rule", "legacy_status", "legacy_reason",
            "api_errors", "rel_error", "timed_wrong", "ghost_matched",
            "op_ms", "cold_ms", "edges_wrong", "correctness", "source"]
    w = csv.DictWriter(sys.stdout, keys, delimiter="\t", extrasaction="ignore")
    w.writeheader()
    for x in lines:
        w.writerow({k: x.get(k, "") for k in keys})


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
