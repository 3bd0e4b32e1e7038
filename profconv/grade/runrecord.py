"""The run record of a pool job: what `profconv run --model M --kernel K --variant V` would write.

The header (model, data, settings) is made here from the job's spec with `profconv run`'s defaults;
the environment and provenance are the model bundle's (the same GPU, measured when the bundle was
made); the results are the bundle's reference row and the kernel child's row(s). Pure: the caller
writes the record.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from profconv.records import DataInfo, Environment, ModelInfo, RunRecord, RunSettings, VariantResult, struct_from
from profconv.records.provenance import Provenance
from profconv.run.models import get_model

# `profconv run`'s defaults (session.run.RunRequest; tests/test_grade_pool.py checks them), which a grade job
# does not override
RUN_REPEAT = 5
RUN_WARMUP = 2
RUN_CPU_REPEAT = 5
RUN_CI_TARGET = 0.01
RUN_TIME_BUDGET_S = 2.0
L2 = "warm (the same call repeated)"


def model_info(name: str) -> ModelInfo:
    m = get_model(name)
    return struct_from(ModelInfo, {
        "name": m.name, "semester": m.semester, "input_shape": list(m.input_shape), "spec": m.spec,
        "reference_accuracy": m.reference_accuracy,
        "conv_layers": [{"layer": layer.name, "shape": s.text()} for layer, s in m.conv_shapes(1)]})


def build(argv: list[str], model: str, images: int, variant: str, repeat: int, data: str | None,
          weights: str | None, kernels: list[str], kernel_timeout: float, meta: dict[str, Any],
          results: list[VariantResult], dry_run: bool, ci_target: float | None = RUN_CI_TARGET,
          time_budget_s: float = RUN_TIME_BUDGET_S) -> RunRecord:
    """The record of one pool job (`meta`: the bundle's bundle.json); `repeat`, `ci_target`, `time_budget_s`:
    the kernels' timed calls (grade's), as `profconv run` records its own."""
    env = dict(meta.get("environment") or {})
    prov = meta.get("provenance")
    record = RunRecord(
        argv=argv, created=datetime.now(timezone.utc).isoformat(), environment=struct_from(Environment, env),
        model=model_info(model),
        data=DataInfo(source=data or "synthetic", synthetic=data is None, weights=weights or "bundled"),
        settings=RunSettings(repeat=repeat, warmup=RUN_WARMUP, cpu_repeat=RUN_CPU_REPEAT, images=[images],
                             variants=["cpu" if dry_run else variant], ci_target=ci_target or None,
                             time_budget_s=time_budget_s if ci_target else None, l2=L2, kernels=kernels,
                             kernel_timeout=kernel_timeout if kernels else None, sanitize=False),
        results=list(results))
    if isinstance(prov, dict):
        record.provenance = struct_from(Provenance, prov)
    return record


def reference_row(meta: dict[str, Any]) -> VariantResult:
    """The bundle's reference variant result, as a record part."""
    return struct_from(VariantResult, meta["reference"])
