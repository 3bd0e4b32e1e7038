"""Does a ratio depend on the company it keeps? Compare a bench record of many variants with benches of
two (a variant and its cuDNN peer): each variant of a two-variant record against the same cuDNN peer in
both (the peer the smaller record compares it with), for the headline figure (settings.l2), the cold
and the warm one; and the kernels each cuDNN peer ran (`profconv bench --cudnn-kernels`).

    python scripts/company_check.py FULL/bench.json TWO/bench.json [TWO2/bench.json ...]
        [--target 0.03] [--layers ece408-high/conv1,ece408/conv2] [--markdown FILE]

Exit 0 when every headline ratio agrees within the target, 1 otherwise (2 when the records share no
layer and variant to compare).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def medians(doc: dict) -> dict[tuple[str, str], dict[str, dict]]:
    """(model, layer) -> variant -> {headline, cold, warm, reference, kernels}."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for layer in doc["layers"]:
        for r in layer["results"]:
            if not r.get("op_time"):
                continue
            out.setdefault((layer["model"], layer["layer"]), {})[r["variant"]] = {
                "headline": r["op_time"]["median_s"], "cold": (r.get("op_time_cold") or {}).get("median_s"),
                "warm": (r.get("op_time_warm") or {}).get("median_s"), "reference": r.get("reference"),
                "kernels": (r.get("params") or {}).get("kernels")}
    return out


def ratio(m: dict[str, dict], v: str, ref: str, figure: str) -> float | None:
    a, b = m.get(v, {}).get(figure), m.get(ref, {}).get(figure)
    return a / b if a and b else None


def compare(full: dict, two: dict, target: float, layers: set[str] | None = None) -> list[dict]:
    """One row per (layer, variant of `two` measured against a cuDNN peer also in `full`)."""
    mf, mt = medians(full), medians(two)
    rows = []
    for key, t in mt.items():
        if layers and "/".join(key) not in layers:
            continue
        f = mf.get(key, {})
        for v, tv in t.items():
            ref = tv["reference"]
            if not ref or ref == v or v not in f or ref not in f:
                continue
            row = {"model": key[0], "layer": key[1], "variant": v, "reference": ref,
                   "full_variants": len(full["settings"]["variants"]), "two_variants": len(two["settings"]["variants"]),
                   "l2": full["settings"].get("l2"), "ref_full": f[ref], "ref_two": t[ref],
                   "same_kernels": f[ref]["kernels"] == t[ref]["kernels"]}
            for fig in ("headline", "cold", "warm"):
                a, b = ratio(f, v, ref, fig), ratio(t, v, ref, fig)
                row[fig] = (a, b, b / a - 1 if a and b else None)
            d = row["headline"][2]
            row["within"] = d is not None and abs(d) <= target
            rows.append(row)
    return rows


def text_lines(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        parts = [f"{fig} {a:.3f}x / {b:.3f}x ({d:+.1%})" for fig in ("headline", "cold", "warm")
                 for a, b, d in [r[fig]] if a and b]
        out.append(f"  {r['model']}/{r['layer']} {r['variant']} vs {r['reference']}, full / two: " + "; ".join(parts))
        f, t = r["ref_full"], r["ref_two"]

        def ms(x):
            return f"{x * 1e3:.3f}" if x else "—"

        out.append(f"    {r['reference']}: full cold {ms(f['cold'])} warm {ms(f['warm'])} ms, "
                   f"two cold {ms(t['cold'])} warm {ms(t['warm'])} ms")
        if not r["same_kernels"]:
            out.append(f"    {r['reference']} ran other kernels: full [{f['kernels']}] two [{t['kernels']}]")
    return out


def markdown(rows: list[dict], gpu: str, target: float) -> str:
    """The check as a markdown table: one row per layer and variant."""
    def x(v):
        return f"{v:.3f}×" if v else "—"

    def pct(v):
        return f"{v:+.1%}" if v is not None else "—"

    n = rows[0]["full_variants"] if rows else 0
    lines = [f"Ratio of each variant to its cuDNN peer in a bench of all {n} variants and in a bench of only the "
             f"two ({gpu}; headline figure: {rows[0]['l2'] if rows else '—'} L2; target ±{target:.0%}).", "",
             "| layer | variant | vs | full bench | two-variant bench | difference | cold: full / two | "
             "cuDNN kernels | within |",
             "|---|---|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        (a, b, d), (ca, cb, cd) = r["headline"], r["cold"]
        lines.append(f"| {r['model']}/{r['layer']} | {r['variant']} | {r['reference']} | {x(a)} | {x(b)} | {pct(d)} | "
                     f"{x(ca)} / {x(cb)} ({pct(cd)}) | {'same' if r['same_kernels'] else 'differ'} | "
                     f"{'yes' if r['within'] else '**no**'} |")
    ok = sum(r["within"] for r in rows)
    lines += ["", f"{ok} of {len(rows)} ratios within ±{target:.0%}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    opts = {k: argv[i + 1] for i, k in enumerate(argv) if k in ("--target", "--layers", "--markdown")}
    paths = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] not in opts)]
    target = float(opts.get("--target", 0.03))
    layers = set(opts["--layers"].split(",")) if opts.get("--layers") else None
    if len(paths) < 2:
        print(__doc__)
        return 2
    full = json.loads(Path(paths[0]).read_text())
    rows = []
    for p in paths[1:]:
        two = json.loads(Path(p).read_text())
        print(f"{full['environment'].get('gpu')}: {len(full['settings']['variants'])} variants vs "
              f"{len(two['settings']['variants'])} ({', '.join(two['settings']['variants'])}); headline L2 "
              f"{full['settings'].get('l2')}; target ±{target:.0%}")
        part = compare(full, two, target, layers)
        print("\n".join(text_lines(part)))
        rows += part
    if not rows:
        print("no layer and variant in common to compare")
        return 2
    ok = all(r["within"] for r in rows)
    print("agree within the target" if ok else "DISAGREE beyond the target")
    if opts.get("--markdown"):
        Path(opts["--markdown"]).write_text(markdown(rows, str(full["environment"].get("gpu")), target))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
