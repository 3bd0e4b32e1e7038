"""The registry of checks a rule can name: small pure functions of (evidence, rule, rule set).

Each returns one or more `Result`s: 'pass', 'broken' (the rule does not hold: the engine turns it into
the rule's severity), 'warn' (held by the course, not by the letter), 'partial', 'info' or 'skip'
(nothing measured, or not this file's business),
with a one-line reason in the course's terms and, when it is about one layer, the layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from profconv.judge.evidence import Evidence, LayerEvidence
from profconv.judge.rules import Rule, RuleSet


@dataclass(frozen=True)
class Result:
    outcome: str  # pass | broken | partial | info | skip
    reason: str
    layer: str | None = None


Check = Callable[[Evidence, Rule, RuleSet], list[Result]]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn

    return register


def _skip(why: str) -> list[Result]:
    return [Result("skip", why)]


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.2g}"


# -- the file itself

@check("recognised")
def recognised(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    if ev.form_error:
        return [Result("broken", ev.form_error)]
    return [Result("pass", f"recognised as the {ev.form} form" if ev.form else "recognised")]


@check("compiled")
def compiled(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    if ev.compiled is None:
        return _skip("not compiled (the file was not recognised)" if ev.form_error else "not recorded")
    if not ev.compiled:
        return [Result("broken", f"compile error: {ev.compile_error or 'see the log'}")]
    return [Result("pass", "compiled")]


@check("ran")
def ran(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """The kernel ran on every layer (no CUDA error, crash or time-out)."""
    if ev.error and not ev.layers:
        return [Result("broken", ev.error)]
    broken = [Result("broken", lay.error, lay.layer) for lay in ev.layers if lay.error]
    if broken:
        return broken
    if not ev.layers:  # never ok without a measurement; an unrecognised or uncompiled file says so above
        return _skip("not run") if ev.form_error or ev.compiled is False else [Result("broken", "no layer ran")]
    return [Result("pass", f"ran on {len(ev.layers)} layer(s)")]


# -- correctness

def tolerance(ev: Evidence, rs: RuleSet) -> tuple[float, str]:
    """The relative error the set accepts for the precision the code computes in."""
    p = ev.precision
    return rs.tolerance.get(p, rs.tolerance.get("fp32", 1e-5)), p


@check("output_correct")
def output_correct(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    tol, prec = tolerance(ev, rs)
    out = []
    for lay in ev.layers:
        if lay.error or (lay.rel_error is None and not lay.nonfinite):
            continue
        if lay.nonfinite:
            out.append(Result("broken", f"{lay.nonfinite:,} output elements unwritten or non-finite", lay.layer))
        elif lay.rel_error is not None and lay.rel_error > tol:
            out.append(Result("broken", f"relative error {lay.rel_error:.2g} above the {prec} tolerance {tol:g}",
                              lay.layer))
    if out:
        return out
    seen = [lay.rel_error for lay in ev.layers if lay.rel_error is not None]
    if not seen:
        return _skip("no output was checked")
    return [Result("pass", f"relative error at most {max(seen):.2g} (the {prec} tolerance is {tol:g})")]


@check("precision")
def precision(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """params: accepted (precisions), partial (precisions accepted with partial credit), note."""
    p = ev.precision
    seen = "from its SASS" if ev.sass_read else "as declared (its SASS was not read)"
    if p in rule.params.get("accepted", ("fp32",)):
        return [Result("pass", f"computes in {p} ({seen})")]
    if p in rule.params.get("partial", ()):
        return [Result("partial", f"computes in {p} ({seen}): {rule.params.get('note', 'partial credit')}")]
    return [Result("broken", f"computes in {p} ({seen}); the rule asks for "
                   f"{' or '.join(rule.params.get('accepted', ('fp32',)))}")]


@check("inputs_unchanged")
def inputs_unchanged(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    bad = [Result("broken", "the kernel modified its input (x or the filters)", lay.layer)
           for lay in ev.layers if lay.inputs_modified]
    known = [lay for lay in ev.layers if lay.inputs_modified is not None]
    return bad or ([Result("pass", "inputs unchanged")] if known else _skip("not measured"))


def _timed_wrong(lay: LayerEvidence, tol: float) -> bool:
    """Wrong by the rule's tolerance when the worst error is known (a TF32 kernel's 3e-4 is not wrong where
    TF32 is accepted, whatever the harness's own fp32 tolerance counted), else by the harness's count."""
    if lay.timed_nonfinite:
        return True
    if lay.timed_worst_rel_error is not None:
        return lay.timed_worst_rel_error > tol
    return bool(lay.timed_wrong)


@check("timed_outputs")
def timed_outputs(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """Every timed call, on fresh inputs, computed its own output (no output cached or replayed)."""
    tol, prec = tolerance(ev, rs)
    bad = [Result("broken", (f"{lay.timed_wrong} of {lay.timed_calls} timed calls" if lay.timed_wrong else "timed calls")
                  + " on fresh inputs gave a wrong output (an output cached or replayed, or work skipped)"
                  + (f": relative error up to {lay.timed_worst_rel_error:.2g} above the {prec} tolerance {tol:g}"
                     if lay.timed_worst_rel_error is not None and not lay.timed_nonfinite else ""), lay.layer)
           for lay in ev.layers if _timed_wrong(lay, tol)]
    known = [lay for lay in ev.layers if lay.timed_wrong is not None or lay.timed_worst_rel_error is not None]
    if bad or not known:
        return bad or _skip("not measured")
    fresh = all(lay.fresh_inputs for lay in known)
    return [Result("pass", f"{sum(lay.timed_calls or 0 for lay in known)} timed calls checked"
                   + (" on fresh inputs" if fresh else ""))]


@check("deterministic")
def deterministic(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """The same inputs twice give the same output, up to the precision's tolerance (atomics reorder sums)."""
    tol, prec = tolerance(ev, rs)
    out = []
    for lay in ev.layers:
        if lay.identical_twice is False and (lay.twice_rel_diff is None or lay.twice_rel_diff > tol):
            out.append(Result("broken", f"two calls on the same inputs differ (relative {_g(lay.twice_rel_diff)}, "
                              f"above the {prec} tolerance {tol:g}): it reads memory it does not own, or races",
                              lay.layer))
    known = [lay for lay in ev.layers if lay.identical_twice is not None]
    return out or ([Result("pass", "the same output twice")] if known else _skip("not measured"))


@check("correctness")
def correctness(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """The dataset's Correctness as the course expects it. params: tolerance (absolute)."""
    if ev.correctness is None:
        return _skip("no forward pass")
    if ev.expected_correctness is None:
        return [Result("info", f"Correctness {ev.correctness:.4f} (no course figure for this data)")]
    tol = float(rule.params.get("tolerance", 0.0))
    if abs(ev.correctness - ev.expected_correctness) > tol + 1e-12:
        return [Result("broken", f"Correctness {ev.correctness:.4f}, the course expects {ev.expected_correctness:.4f}")]
    return [Result("pass", f"Correctness {ev.correctness:.4f} as expected")]


@check("edge_shapes")
def edge_shapes(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """Shapes the course never ran (B = 1; B = 3 at odd sizes): in the course, a warning."""
    if not ev.edges:
        return _skip("no edge shape was run")
    tol, prec = tolerance(ev, rs)
    wrong = [e for e in ev.edges if e.error or e.nonfinite or (e.rel_error is not None and e.rel_error > tol)]
    if not wrong:
        return [Result("pass", f"right at {len(ev.edges)} edge shapes")]
    shapes = sorted({e.shape for e in wrong}, key=lambda s: (not s.startswith("B=3"), s))
    return [Result("broken", f"not general: wrong at {', '.join(shapes[:3])}" + (" …" if len(shapes) > 3 else "")
                   + f" ({len(wrong)} of {len(ev.edges)} edge checks)")]


@check("sanitizer")
def sanitizer(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    if not ev.sanitizer_errors:
        return _skip("not run under compute-sanitizer (--sanitize)")
    n = sum(ev.sanitizer_errors.values())
    if n:
        tools = ", ".join(f"{t} {k}" for t, k in ev.sanitizer_errors.items() if k)
        return [Result("broken", f"compute-sanitizer: {tools} error(s)" + (f": {ev.sanitizer_first}" if ev.sanitizer_first
                                                                         else ""))]
    return [Result("pass", "compute-sanitizer found no error")]


# -- the timed call

@check("above_floor")
def above_floor(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    bad = [Result("broken", f"{lay.op_s:.3g} s is below the least time this GPU needs ({lay.floor_s:.3g} s): the "
                  "work was not done in the timed call", lay.layer)
           for lay in ev.layers if lay.below_floor and lay.op_s is not None and lay.floor_s is not None]
    known = [lay for lay in ev.layers if lay.below_floor is not None]
    return bad or ([Result("pass", "above this GPU's floor")] if known else _skip("no floor known"))


@check("work_in_timed_call")
def work_in_timed_call(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """Every kernel launched inside conv_forward_gpu: kernels in the prolog or epilog (CUPTI), or an output
    made without conv_forward_gpu (the ghost run), break it. params: phases (default prolog, epilog)."""
    out = []
    for phase in rule.params.get("phases", ("prolog", "epilog")):
        p = ev.phase(phase)
        if p is not None and p.kernel_launches:
            out.append(Result("broken", f"{p.kernel_launches} kernel launch(es) in the {phase}: "
                              f"{', '.join(p.kernels[:3])}" + (" …" if len(p.kernels) > 3 else "")))
    for lay in ev.layers:
        if lay.ghost_matched is not None and lay.ghost_matched >= float(rule.params.get("ghost_matched", 0.10)):
            out.append(Result("broken", f"prolog and epilog alone, without conv_forward_gpu, give {lay.ghost_matched:.0%} "
                              "of the output right: that work was done outside the timed call", lay.layer))
        elif lay.ghost_rel_error is not None and lay.ghost_rel_error < float(rule.params.get("ghost_below", 0.5)):
            out.append(Result("broken", f"prolog and epilog alone, without conv_forward_gpu, give an output within "
                              f"{lay.ghost_rel_error:.2g} of the right one", lay.layer))
    if out:
        return out
    if not ev.placement and all(lay.ghost_rel_error is None and lay.ghost_matched is None for lay in ev.layers):
        return _skip("no CUPTI attribution nor ghost run recorded")
    return [Result("pass", "every kernel ran inside conv_forward_gpu")]


@check("nothing_left_running")
def nothing_left_running(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """No work left on another stream when the call returned: more than params.min_s (100 us) and a
    twentieth of the call (the harness's own mark). When the GPU's records show every kernel of the call on
    the stream its copies used (no other stream to leave work on), the time is the measurement's (a GPU
    shared with other processes), a warning."""
    timed = ev.phase("timed")
    alone = timed is not None and timed.side_streams == 0
    out = []
    for lay in ev.layers:
        left = lay.left_running_s or 0.0
        if left <= max(float(rule.params.get("min_s", 1e-4)), (lay.op_s or 0.0) * float(rule.params.get("fraction", 0.05))):
            continue
        what = f"{left:.3g} s between the call's own stream finishing and the whole device idle"
        out.append(Result("warn", f"{what}, but the GPU's records show all its work on one stream (a shared GPU?)",
                          lay.layer) if alone else
                   Result("broken", f"work left running on another stream for {left:.3g} s after the timed call "
                          "returned", lay.layer))
    known = [lay for lay in ev.layers if lay.left_running_s is not None]
    return out or ([Result("pass", "nothing left running after the call")] if known else _skip("not measured"))


@check("single_stream")
def single_stream(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    p = ev.phase("timed")
    if p is None:
        return _skip("no CUPTI attribution recorded")
    if p.streams > 1:
        return [Result("broken", f"{p.streams} streams in conv_forward_gpu")]
    return [Result("pass", "one stream in conv_forward_gpu")]


@check("library")
def library(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """Library kernels (cuBLAS, cuDNN, ...) in the student's process. params: counts (true: the library use is
    the optimisation asked for), libraries (the ones this rule is about)."""
    names = sorted({k for p in ev.placement for k in p.library})
    wanted = rule.params.get("libraries")
    if wanted:
        names = [n for n in names if any(w in n for w in wanted)]
    if not ev.placement:
        return _skip("no CUPTI attribution recorded")
    if not names:
        return [Result("pass", "no library kernel")]
    if rule.params.get("counts"):
        return [Result("pass", f"library kernels: {', '.join(names[:3])}")]
    return [Result("broken", f"library kernels {', '.join(names[:3])}: {rule.params.get('note', 'library code')}")]


# -- what the code is made of

@check("tensor_cores")
def tensor_cores(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """Tensor Cores through the student's own MMA code (SASS HMMA). params: required (input type),
    partial (types accepted with partial credit), note."""
    if not ev.sass_read:
        return _skip(ev.sass_note or "the SASS was not read")
    required = rule.params.get("required", "tf32")
    seen = sorted(ev.tensor_types)
    if required in ev.tensor_types:
        return [Result("pass", f"Tensor Core MMA with {required} inputs in the SASS")]
    partial = [t for t in seen if t in rule.params.get("partial", ())]
    if partial:
        return [Result("partial", f"Tensor Core MMA with {', '.join(partial)} inputs, not {required}: "
                       f"{rule.params.get('note', 'partial credit')}")]
    libs = sorted({k for p in ev.placement for k in p.library})
    why = f" (library kernels {', '.join(libs[:2])} do not count)" if libs else ""
    return [Result("broken", f"no Tensor Core MMA in the kernel's SASS{why}")]


@check("optimisation_shown")
def optimisation_shown(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """A per-optimisation folder (op_0, req_1, ...) shows the optimisation it is named for, in its SASS or
    launches (the set's `optimisations` table: folder -> the features that show it)."""
    wanted = rs.optimisations.get(ev.role)
    if not wanted:
        return _skip(f"no optimisation is named for {ev.role}")
    have = {o.name for o in ev.optimisations}
    if not ev.sass_read and not ev.placement:
        return _skip(ev.sass_note or "neither SASS nor CUPTI attribution recorded")
    hit = [w for w in wanted if w in have]
    if hit:
        return [Result("pass", f"{ev.role}: {hit[0]} seen")]
    return [Result("broken", f"{ev.role}: none of {', '.join(wanted)} seen in the SASS or the launches")]


@check("performance")
def performance(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """The summed Op Time against the set's threshold: the credit it implies (info, or broken at zero credit)."""
    from profconv.judge.credit import credit

    c = credit(ev, rs)
    if c is None:
        return _skip("no performance threshold, or no Op Time")
    scaled = f" (scaled from {c.scaled_from:,} images)" if c.scaled_from else ""
    points = f", {c.points:.3g} points" if c.points is not None else ""
    how = " as the course timed it (one cold call)" if c.basis == "cold" else ""
    beside = (f"; warm median {c.other_s * 1e3:.1f} ms" if c.basis == "cold" and c.other_s is not None else
              f"; one cold call {c.other_s * 1e3:.1f} ms at {c.scaled_from or c.images:,} images"
              if c.other_s is not None else "")
    text = (f"summed Op Time {c.op_time_s * 1e3:.1f} ms{how} at {c.images:,} images{scaled}: {c.fraction:.0%} of the "
            f"performance credit{points}{beside}")
    return [Result("broken" if c.fraction <= 0 else "info", text)]


@check("optimisation_points")
def optimisation_points(ev: Evidence, rule: Rule, rs: RuleSet) -> list[Result]:
    """The points the features seen are worth (params.points: feature -> points; the most is full credit)."""
    points: dict[str, float] = rule.params.get("points", {})
    have = {o.name for o in ev.optimisations}
    seen = [(points[f], f) for f in points if f in have]
    if not seen:
        return _skip("none of " + ", ".join(points) + " seen")
    best, feature = max(seen)
    top = max(points.values())
    if best >= top:
        return [Result("pass", f"{feature}: up to {best:g} points")]
    return [Result("partial", f"{feature}: up to {best:g} of {top:g} points")]
