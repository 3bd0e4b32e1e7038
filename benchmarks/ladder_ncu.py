"""Launch the configurations a bench chose, once each, for a profiler (issue 25: profile before you guess).

    python benchmarks/ladder_ncu.py BENCH.json MODEL/LAYER[,MODEL/LAYER...] VARIANT[,VARIANT...] [--plan-out FILE]

Writes the bench's sweep choices as a sweep plan (profconv.run.sweep.PLAN_ENV) so no candidate sweep
runs, then per layer and variant: one untimed launch (module load) and one launch inside an NVTX range
`ladder/MODEL/LAYER/VARIANT`, on random data of the bench's batch. Under ncu:

    ncu --nvtx --nvtx-include 'profconv@ladder/' --section SpeedOfLight --section WarpStateStats ... \
        python benchmarks/ladder_ncu.py ...
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

SWEPT = {"tuned": "tuned", "fp16": "fp16", "tensorcore": "tensorcore", "tf32-wmma": "tf32-wmma",
         "tensorcore-tf32": "tensorcore-tf32", "tensorcore-3xtf32": "tensorcore-3xtf32"}


def plan_from_bench(doc: dict) -> dict[str, dict[str, dict]]:
    """{swept name: {"B,M,C,H,W,K,P": params}} from a bench record's chosen parameters."""
    plan: dict[str, dict[str, dict]] = {}
    for layer in doc["layers"]:
        d = layer["dims"]
        key = ",".join(str(d[k]) for k in ("B", "M", "C", "H", "W", "K", "P"))
        for r in layer["results"]:
            if r["variant"] in SWEPT and r["status"] == "ok" and r.get("params"):
                plan.setdefault(SWEPT[r["variant"]], {})[key] = {k: v for k, v in r["params"].items() if k != "sweep"}
    return plan


def main(argv: list[str]) -> int:
    doc = json.loads(Path(argv[0]).read_text())
    layers, names = argv[1].split(","), argv[2].split(",")
    out = argv[argv.index("--plan-out") + 1] if "--plan-out" in argv else tempfile.mktemp(suffix=".json")
    Path(out).write_text(json.dumps(plan_from_bench(doc)))
    os.environ["PROFCONV_SWEEP_PLAN"] = out

    import cupy as cp

    from profconv.run import gpu
    from profconv.run.models import get_model
    from profconv.run.runner import prepare
    from profconv.run.variants import get_variants

    for tag in layers:
        model, lname = tag.split("/")
        (s,) = [s for la, s in get_model(model).conv_shapes(int(doc["settings"]["images"])) if la.name == lname]
        x = cp.random.standard_normal((s.B, s.C, s.H, s.W), dtype=cp.float32)
        w = cp.random.standard_normal((s.M, s.C, s.K, s.K), dtype=cp.float32)
        for v in get_variants(names):
            args = prepare(cp, v, x, w, None, s)
            v.launch(cp, *args, s)  # module load, plan built
            cp.cuda.Device().synchronize()
            with gpu.nvtx_range(f"ladder/{model}/{lname}/{v.name}"):
                v.launch(cp, *args, s)
                cp.cuda.Device().synchronize()
            print(f"{tag} {v.name}: {v.params(s) if v.params else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
