"""Re-judge the user kernels of run records under other course terms' rules, from the records alone
(the facts, and the placement and optimisations the run read from CUPTI and the SASS):

    python scripts/rejudge.py RUN.json [RUN.json ...] [--course implied,sp25,minidnn,profconv] [--markdown]

`implied`: the set a plain `profconv run` picks (the kernel's form's era, else the record's model).

One line per kernel and rule set: the file, the verdict, the deciding rule and its reason (or the
warnings of an ok one). --markdown: a table for a closing note.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from profconv import judge
from profconv.judge.assemble import form_of, rejudge
from profconv.judge.text import optimisations
from profconv.records import RunRecord, read


def read_any(p: Path) -> RunRecord:
    """A run.json, or a gzipped one."""
    if p.suffix == ".gz":
        import gzip

        from profconv.records import decode_json
        from profconv.records.base import convert

        return convert(decode_json(gzip.decompress(p.read_bytes()), p), RunRecord, p)
    return read(p, RunRecord)


def rows(paths: list[Path], courses: list[str]) -> list[dict[str, str]]:
    out = []
    for p in paths:
        rec = read_any(p)
        for r in rec.results:
            if r.verdict is None:
                continue
            src = (r.user or {}).get("path") or r.variant
            for c in courses:
                rs = judge.choose(None, rec.model.name, form_of(r)) if c == "implied" else judge.load(c)
                v = rejudge(r, rs)
                if v is None:
                    continue
                why = (f"{v.reason}" if v.status == "failed" else "; ".join(v.warnings)) or ""
                out.append({"file": str(src), "images": str(r.images), "course": rs.id, "role": v.role or "final",
                            "verdict": "FAILED" if v.status == "failed" else "ok", "rule": v.rule.id if v.rule else "—",
                            "reason": why, "optimisations": optimisations(v)})
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--course", default="sp25,minidnn,profconv")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    found = rows(args.records, [c for c in args.course.split(",") if c])
    if args.markdown:
        print("| file | course | role | verdict | rule | reason / warnings | optimisations |")
        print("|---|---|---|---|---|---|---|")
        for r in found:
            cells = [r["file"], r["course"], r["role"], r["verdict"], r["rule"], r["reason"], r["optimisations"]]
            print("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    else:
        for r in found:
            print(f"{r['file']} [{r['course']} {r['role']}]: {r['verdict']} {r['rule']}: {r['reason']} "
                  f"(optimisations: {r['optimisations']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
