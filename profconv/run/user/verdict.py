"""profconv's own verdict on a user kernel's facts (pure): the first reason it FAILED, or None.

This is profconv's strict default, the verdict `run` printed before the course's rule sets
(profconv/judge/) existed: the harness's tolerance (fp32 1e-5, fp16 1e-2, or the manifest's), every
timed output right, the same output twice, no work outside the timed call, none left running, no time
below the GPU's floor, every edge shape right. The rules read the same facts and may judge otherwise
(a TF32 kernel's 3e-4 in a term that requires TF32; an edge shape as a warning); this verdict is kept
beside theirs in the record (`facts.legacy_status`, `facts.legacy_error`).
"""

from __future__ import annotations

from profconv.records.facts import EdgeFacts, LayerFacts, TimedCallFacts

GHOST_MATCHED = 0.10  # a tenth of the output right with conv_forward_gpu skipped: its work was done elsewhere
LEFT_RUNNING_FAIL_S = 100e-6  # ... and a twentieth of the call: work left running on another stream


def _timed(t: TimedCallFacts, tolerance: float) -> str | None:
    if t.wrong:
        worst = (f"relative error up to {t.worst_rel_error:.3g} above tolerance {tolerance:g}"
                 if t.worst_rel_error is not None and t.worst_rel_error > tolerance else "unwritten or non-finite elements")
        return (f"the output of the timed calls is wrong ({t.wrong} of {t.calls} calls on fresh inputs, "
                f"first: call {t.first_wrong}; {worst})")
    if t.inputs_modified:
        return "the kernel modified its input during the timed calls"
    return None


def layer_verdict(f: LayerFacts, tolerance: float) -> str | None:
    """Why this layer FAILED profconv's checks, or None (the first reason, in the order they were made)."""
    if f.error:
        return f.error
    c = f.check
    if c is not None and c.nonfinite:
        return f"output has unwritten or non-finite elements ({c.nonfinite:,} of {c.elements:,})"
    if f.inputs_modified:
        return "the kernel modified its input (x, w or bias differ after the call)"
    if c is not None and c.rel_error is not None and c.rel_error > tolerance:
        return f"relative error {c.rel_error:.3g} above tolerance {tolerance:g}"
    g = f.ghost
    if g is not None and g.matched is not None and g.matched >= GHOST_MATCHED:
        return (f"work done outside conv_forward_gpu: with conv_forward_gpu skipped, the prolog and epilog alone "
                f"leave {g.matched:.0%} of the output right")
    if f.timed is not None and (why := _timed(f.timed, tolerance)):
        return why
    d = f.determinism
    if d is not None and not d.identical and (d.rel_diff is None or d.rel_diff > tolerance):
        diff = f"differ by {d.rel_diff:.3g} (relative)" if d.rel_diff is not None else "differ in which elements are finite"
        return f"not deterministic: two calls on the same inputs {diff}"
    t = f.timing
    if t is not None and t.left_running_s and t.op_median_s and \
            t.left_running_s > max(LEFT_RUNNING_FAIL_S, t.op_median_s / 20):
        return (f"work left running on another stream after the call returned ({t.left_running_s * 1e3:.3g} ms past "
                "its own stream; counted in Op Time, but the call must finish its work)")
    if t is not None and t.below_floor and t.floor_s is not None and t.op_min_s is not None:
        bound = (t.floor_bound or "compute").split(" ")[0]
        return (f"impossible: {t.op_min_s:.3g} s is below the {bound} floor {t.floor_s:.3g} s of this GPU "
                "(the work was not done in the timed call)")
    return None


def edge_verdict(edges: list[EdgeFacts], tolerance: float) -> str | None:
    """'not general: 2 of 8 edge-shape checks failed, first: conv1 B=3 ... seed 1: ...', or None."""
    bad = [e for e in edges if e.error or e.output is None or e.output.nonfinite or
           (e.output.rel_error or 0.0) > tolerance]
    if not bad:
        return None
    first = bad[0]
    if first.error:
        why = first.error
    elif first.output is not None and first.output.nonfinite:
        why = "unwritten or non-finite elements"
    else:
        why = f"relative error {first.output.rel_error:.3g} above {tolerance:g}" if first.output else "not run"
    return (f"not general: {len(bad)} of {len(edges)} edge-shape checks failed, first: {first.layer} {first.shape} "
            f"seed {first.seed_index + 1}: {why}")
