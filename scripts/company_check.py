"""Does a ratio depend on the company it keeps? Compare two bench records of the same models, one with
every variant and one with two: the ratio of each variant present in both to cuDNN of its precision
(the peer named in the record), headline (settings.l2) and the other L2 figure, and the kernels each
cuDNN peer ran (recorded with `profconv bench --cudnn-kernels`).

    python scripts/company_check.py FULL/bench.json TWO/bench.json [--target 0.03]

Exit 0 when every ratio agrees within the target, 1 otherwise.
"""

from __future__ import annotations

import json
import sys


def ratios(doc: dict) -> dict[tuple[str, str, str], dict]:
    out = {}
    for layer in doc["layers"]:
        res = {r["variant"]: r for r in layer["results"] if r.get("op_time")}
        for r in res.values():
            ref = res.get(r.get("reference") or "")
            if ref is None or r["variant"] == ref["variant"]:
                continue
            cold = (r.get("op_time_cold") or {}).get("median_s"), (ref.get("op_time_cold") or {}).get("median_s")
            warm = (r.get("op_time_warm") or {}).get("median_s"), (ref.get("op_time_warm") or {}).get("median_s")
            out[(layer["model"], layer["layer"], r["variant"])] = {
                "reference": ref["variant"], "ratio": r["op_time"]["median_s"] / ref["op_time"]["median_s"],
                "cold": cold[0] / cold[1] if all(cold) else None, "warm": warm[0] / warm[1] if all(warm) else None,
                "ref_ms": ref["op_time"]["median_s"] * 1e3, "ref_ci": ref["op_time"].get("ci_rel"),
                "ref_kernels": (ref.get("params") or {}).get("kernels")}
    return out


def main(argv: list[str]) -> int:
    target = float(argv[argv.index("--target") + 1]) if "--target" in argv else 0.03
    full, two = (json.load(open(p)) for p in argv[:2])
    rf, rt = ratios(full), ratios(two)
    print(f"{full['environment'].get('gpu')}: {len(full['settings']['variants'])} variants vs "
          f"{len(two['settings']['variants'])} ({', '.join(two['settings']['variants'])}); headline L2 "
          f"{full['settings'].get('l2')}; target ±{target:.0%}")
    ok = True
    for key in [k for k in rf if k in rt]:
        a, b = rf[key], rt[key]
        d = b["ratio"] / a["ratio"] - 1
        ok &= abs(d) <= target
        print(f"  {'/'.join(key)} vs {a['reference']}: full {a['ratio']:.3f}x (cuDNN {a['ref_ms']:.3f} ms), "
              f"two {b['ratio']:.3f}x (cuDNN {b['ref_ms']:.3f} ms): {d:+.1%} {'ok' if abs(d) <= target else 'OFF'}"
              f"; warm {a['warm'] or 0:.3f}x vs {b['warm'] or 0:.3f}x")
        if a["ref_kernels"] != b["ref_kernels"]:
            print(f"    cuDNN kernels differ: full [{a['ref_kernels']}] two [{b['ref_kernels']}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
