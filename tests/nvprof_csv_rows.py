"""The rows of an `nvprof --csv` summary table that the nvprof --csv tests generate
(tests/test_parse_nvprof_csv_batch.py, tests/test_parse_nvprof_sweep.py): a kernel, a copy and an API
call, each total calls x average, in milliseconds to six decimals."""

from __future__ import annotations

import random

ROWS = (("GPU activities", "conv_forward_kernel(float*, float const *, int)"),
        ("GPU activities", "[CUDA memcpy HtoD]"), ("API calls", "cudaMalloc"))


def summary_rows(rng: random.Random) -> list[str]:
    """Three rows (no line ends), their numbers drawn from `rng`."""
    out = []
    for label, name in ROWS:
        calls = rng.randint(1, 400)
        avg = rng.randint(1000, 999999) / 1e6
        out.append(f'"{label}",{rng.uniform(0, 100):.6f},{avg * calls:.6f},{calls},{avg:.6f},'
                   f'{avg * 0.5:.6f},{avg * 1.5:.6f},"{name}"')
    return out
