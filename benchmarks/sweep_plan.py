"""A sweep plan (profconv.run.sweep.PLAN_ENV) from the choices of one or more bench records.

    python benchmarks/sweep_plan.py BENCH.json [BENCH.json ...] > plan.json

Later records override earlier ones per variant and shape. A bench started with
PROFCONV_SWEEP_PLAN=plan.json builds those configurations instead of sweeping again (a fresh GPU
machine then compiles one configuration per variant and layer, not every candidate).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder_ncu import plan_from_bench  # noqa: E402


def main(argv: list[str]) -> int:
    plan: dict[str, dict[str, dict]] = {}
    for path in argv:
        for name, shapes in plan_from_bench(json.loads(Path(path).read_text())).items():
            plan.setdefault(name, {}).update(shapes)
    print(json.dumps(plan, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
