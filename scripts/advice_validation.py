"""Does the advice for rung k of our ladder name the technique rung k+1 applies? (issue 24)

    python scripts/advice_validation.py RUN_DIR [RUN_DIR ...] [--markdown FILE]

Each RUN_DIR is a `profconv run` of the ladder with `profconv explain`'s evidence (the targeted ncu
pass and the SASS). Per layer shape and rung k (of those that ran, in ladder order): where the
technique of rung k+1 stands in rung k's advice (1 = first), and whether the advice for rung k names
a technique its own SASS shows (it never should). Prints a markdown table and the totals.
"""

from __future__ import annotations

import sys
from pathlib import Path

from profconv.analysis.advice import TECHNIQUES
from profconv.analysis.steps import techniques_shown
from profconv.report.explain import explain_run
from profconv.report.inputs import RunInput, read_record

LADDER = ["naive", "shared", "constant", "unroll-gemm", "fused", "tuned", "fp16", "tf32-wmma", "tensorcore",
          "tensorcore-tf32", "tensorcore-3xtf32"]
RUNG_TECHNIQUE = {rung: t for t, (_, rungs) in TECHNIQUES.items() for rung in rungs}
RUNG_TECHNIQUE["fused"] = "implicit-gemm"  # unroll-gemm's own technique is "gemm"
RUNG_TECHNIQUE["unroll-gemm"] = "gemm"


def rows_of(run: Path) -> list[dict]:
    path = run / "run.json" if run.is_dir() else run
    inp = RunInput(path, read_record(path))
    xs = {(x.ev.variant, x.ev.layer): x for x in explain_run(inp)}
    out = []
    for layer in dict.fromkeys(lay for _, lay in xs):
        rungs = [r for r in LADDER if (r, layer) in xs]
        for here, nxt in zip(rungs, rungs[1:], strict=False):
            x = xs[(here, layer)]
            want = RUNG_TECHNIQUE.get(nxt)
            if want in techniques_shown(x.ev):
                continue  # rung k already shows rung k+1's technique (one Tensor Core rung after another)
            op = [a.technique for a in x.advice if a.scope == "op"]
            shown = techniques_shown(x.ev)
            top = next((a for a in x.advice if a.scope == "op"), None)
            t_next, t_top = x.ev.rung_times.get(nxt), (top.rung_time_s if top else None)
            named = next((a for a in x.advice if a.technique == want), None)
            out.append({"predicted_s": named.gain_s if named else None,
                        "measured_s": (x.ev.op_time_s - t_next) if x.ev.op_time_s and t_next else None,
                        "top_rung": top.rung if top else None, "top_vs_next": (t_next / t_top) if t_next and t_top else None,
                        "model": inp.record.model.name, "layer": layer, "shape": x.ev.shape.text(), "rung": here,
                        "next": nxt, "want": want, "rank": op.index(want) + 1 if want in op else None,
                        "advice": op, "bound": x.diagnosis.bound, "already": sorted(shown & set(op)),
                        "own_technique_advised": RUNG_TECHNIQUE.get(here) in op})
    return out


def table(rows: list[dict]) -> str:
    lines = ["| model | layer | rung → next | next's technique | rank in advice | bound | advice (in order) | "
             "first advice's rung: Op Time vs next's |", "|---|---|---|---|---:|---|---|---|"]
    for r in rows:
        vs = ("(rung k+1 itself)" if r["top_rung"] == r["next"] else
              f"`{r['top_rung']}` {r['top_vs_next']:.2f}× rung k+1's speed" if r["top_vs_next"] else "—")
        lines.append(f"| {r['model']} | {r['layer']} {r['shape']} | {r['rung']} → {r['next']} | {r['want']} | "
                     f"{r['rank'] or '—'} | {r['bound']} | {', '.join(r['advice']) or '—'} | {vs} |")
    n = len(rows)
    top1 = sum(r["rank"] == 1 for r in rows)
    top3 = sum(r["rank"] is not None and r["rank"] <= 3 for r in rows)
    anywhere = sum(r["rank"] is not None for r in rows)
    wrong = sum(bool(r["already"]) or r["own_technique_advised"] for r in rows)
    better = [r for r in rows if r["top_vs_next"] is not None and r["top_rung"] != r["next"]]
    faster = sum(r["top_vs_next"] > 1 for r in better)
    lines += ["", f"where the first advice points at another rung than k+1 ({len(better)} rows), that rung is faster "
              f"than rung k+1 on the layer in {faster}"]
    paired = [r for r in rows if r["predicted_s"] is not None and r["measured_s"] is not None]
    held = sum(r["measured_s"] <= r["predicted_s"] * 1.05 for r in paired)
    sign = sum(r["measured_s"] > 0 for r in paired)
    lines += ["", f"the gain advised for rung k+1's technique against the gain rung k+1 measured: an upper bound on "
              f"{held}/{len(paired)} steps; rung k+1 was faster on {sign}/{len(paired)}"]
    lines += ["", f"rung k+1's technique: first in rung k's advice {top1}/{n}, in the first three {top3}/{n}, "
              f"anywhere {anywhere}/{n}; advice naming what the kernel's SASS shows (or the rung's own technique): "
              f"{wrong}/{n}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    out = None
    if "--markdown" in argv:
        i = argv.index("--markdown")
        out, argv = Path(argv[i + 1]), argv[:i] + argv[i + 2:]
    rows = [r for a in argv for r in rows_of(Path(a))]
    text = table(rows)
    if out:
        out.write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
