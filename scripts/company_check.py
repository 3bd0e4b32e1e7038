"""Does a ratio depend on the company it keeps? Compare two bench records of the same models, one with
many variants and one with two: each variant of the smaller record against the same cuDNN peer in
both (the peer the smaller record compares it with), for the headline figure (settings.l2), the cold
and the warm one; and the kernels each cuDNN peer ran (`profconv bench --cudnn-kernels`).

    python scripts/company_check.py FULL/bench.json TWO/bench.json [--target 0.03]

Exit 0 when every headline ratio agrees within the target, 1 otherwise.
"""

from __future__ import annotations

import json
import sys


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


def main(argv: list[str]) -> int:
    target = float(argv[argv.index("--target") + 1]) if "--target" in argv else 0.03
    full, two = (json.load(open(p)) for p in argv[:2])
    mf, mt = medians(full), medians(two)
    print(f"{full['environment'].get('gpu')}: {len(full['settings']['variants'])} variants vs "
          f"{len(two['settings']['variants'])} ({', '.join(two['settings']['variants'])}); headline L2 "
          f"{full['settings'].get('l2')}; target ±{target:.0%}")
    ok = True
    for key, t in mt.items():
        f = mf.get(key, {})
        for v, tv in t.items():
            ref = tv["reference"]
            if not ref or ref == v or v not in f or ref not in f:
                continue
            parts = []
            for fig in ("headline", "cold", "warm"):
                a, b = ratio(f, v, ref, fig), ratio(t, v, ref, fig)
                if a and b:
                    parts.append(f"{fig} {a:.3f}x / {b:.3f}x ({b / a - 1:+.1%})")
                    if fig == "headline":
                        ok &= abs(b / a - 1) <= target
            print(f"  {'/'.join(key)} {v} vs {ref}, full / two: " + "; ".join(parts))
            print(f"    {ref}: full cold {f[ref]['cold'] * 1e3:.3f} warm {f[ref]['warm'] * 1e3:.3f} ms, "
                  f"two cold {t[ref]['cold'] * 1e3:.3f} warm {t[ref]['warm'] * 1e3:.3f} ms")
            if f[ref]["kernels"] != t[ref]["kernels"]:
                print(f"    {ref} ran other kernels: full [{f[ref]['kernels']}] two [{t[ref]['kernels']}]")
    print("agree within the target" if ok else "DISAGREE beyond the target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
