"""The per-optimisation write-up: one step per pair of consecutive versions of a kernel. Pure.

A version is one kernel (one of our rungs, or a user's kernel) as one run measured it: its Op Time
per layer, its evidence (OpEvidence per layer), its source text and compile settings when known. A
step says what changed (the source diff in lines, defines and flags, and the techniques that
appeared or went away in the SASS), the Op Time per layer before and after with their 95% intervals
and whether they separate, the counters that moved most, the diagnosis of the version before and
whether the numbers confirm it: the technique applied was among its advice and the layer got faster.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from profconv.analysis.advice import Advice
from profconv.analysis.diagnosis import Diagnosis
from profconv.analysis.op_evidence import OpEvidence

MOVED_MIN = 0.25  # a counter moved when it changed by at least this fraction (or 10 percentage points)


@dataclass(frozen=True)
class Version:
    label: str  # what the user calls it: the variant, or the run directory
    variant: str
    source: str | None = None  # the kernel's text when known
    defines: dict[str, str] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    layers: dict[str, OpEvidence] = field(default_factory=dict)
    diagnoses: dict[str, Diagnosis] = field(default_factory=dict)
    advice: dict[str, list[Advice]] = field(default_factory=dict)


@dataclass(frozen=True)
class LayerStep:
    layer: str
    before_s: float | None
    after_s: float | None
    before_ci: tuple[float, float] | None
    after_ci: tuple[float, float] | None
    speedup: float | None
    separated: bool | None  # the two 95% intervals do not overlap (None: an interval is missing)
    moved: list[tuple[str, float, float]]  # metric, before, after
    bound_before: str | None
    bound_after: str | None
    advised: list[str]  # the techniques the diagnosis of `before` advised, in rank order
    applied_rank: int | None  # where the applied technique(s) stood in that list (1 = first)
    verdict: str


@dataclass(frozen=True)
class Step:
    before: str
    after: str
    diff: str  # '+12 −5 lines' or why unknown
    defines: list[str]  # 'TILE 16 → 32', '+KMAX 7'
    flags: list[str]
    appeared: list[str]  # techniques the SASS of `after` shows and `before`'s does not
    went: list[str]
    sass_known: bool  # both versions have SASS (else appeared/went are empty, not "nothing changed")
    layers: list[LayerStep]


def diff_summary(a: str | None, b: str | None) -> str:
    if a is None or b is None:
        return "source not recorded"
    if a == b:
        return "same source"
    plus = minus = 0
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return f"+{plus} −{minus} lines"


def dict_changes(a: dict[str, str], b: dict[str, str]) -> list[str]:
    out = []
    for k in sorted(a.keys() | b.keys()):
        if k not in a:
            out.append(f"+{k} {b[k]}")
        elif k not in b:
            out.append(f"−{k}")
        elif a[k] != b[k]:
            out.append(f"{k} {a[k]} → {b[k]}")
    return out


def techniques_shown(ev: OpEvidence) -> set[str]:
    """The advice techniques (analysis/advice.py) a version's SASS and launches show it uses."""
    from profconv.analysis.advice import Context, is_gemm, register_blocked
    from profconv.analysis.conv_work import LayerWork
    from profconv.analysis.diagnosis import Diagnosis

    if not ev.sass:
        return set()
    blank = Diagnosis(ev.variant, ev.layer, "unknown", "", ev.op_time_s, None, None, None)
    c = Context(ev, blank, LayerWork(ev.shape, 4), None, None, None)
    shown = {"shared-tiling": c.has("lds"), "constant-weights": c.has("const"), "half2": c.has("hfma2"),
             "tensor-cores": c.has("hmma"), "register-blocking": register_blocked(c), "gemm": is_gemm(c),
             "implicit-gemm": is_gemm(c) and not any("unroll" in n.lower() or "im2col" in n.lower()
                                                     for n in [k.name for k in ev.kernels] + [k.name for k in ev.sass])}
    return {t for t, yes in shown.items() if yes}


def moved_metrics(a: OpEvidence, b: OpEvidence, names: dict[str, str]) -> list[tuple[str, float, float]]:
    """The counters of the main kernel that changed most (relative), each at most once."""
    if a.main is None or b.main is None:
        return []
    out = []
    for key, label in names.items():
        x, y = a.main.m(key), b.main.m(key)
        if x is None or y is None:
            continue
        rel = abs(y - x) / max(abs(x), 1e-12)
        pct_points = key.endswith(("pct_of_peak_sustained_elapsed", "pct_of_peak_sustained_active", ".pct"))
        if (pct_points and abs(y - x) >= 10) or (not pct_points and rel >= MOVED_MIN):
            out.append((label, x, y, rel))
    return [(label, x, y) for label, x, y, _ in sorted(out, key=lambda t: -t[3])[:5]]


def _verdict(speedup: float | None, separated: bool | None, rank: int | None, applied: set[str]) -> str:
    if speedup is None:
        return "no Op Time to compare"
    faster = speedup > 1 and separated is not False
    if not applied:
        return ("faster" if faster else "not faster") + "; the SASS shows no technique change"
    if rank is None:
        return ("faster" if faster else "not faster") + ", but the diagnosis before did not advise it"
    if faster:
        return f"confirmed: advised #{rank} and {speedup:.2f}× faster"
    return f"advised #{rank}, but not faster ({speedup:.2f}×)"


def layer_step(layer: str, a: Version, b: Version, applied: set[str], names: dict[str, str]) -> LayerStep:
    ea, eb = a.layers.get(layer), b.layers.get(layer)
    ta, tb = (ea.op_time_s if ea else None), (eb.op_time_s if eb else None)
    ca, cb = (ea.ci if ea else None), (eb.ci if eb else None)
    separated = None if ca is None or cb is None else (ca[1] < cb[0] or cb[1] < ca[0])
    advised = [x.technique for x in a.advice.get(layer, [])]
    ranks = [advised.index(t) + 1 for t in applied if t in advised]
    speedup = ta / tb if ta and tb else None
    da, db = a.diagnoses.get(layer), b.diagnoses.get(layer)
    return LayerStep(layer, ta, tb, ca, cb, speedup, separated,
                     moved_metrics(ea, eb, names) if ea and eb else [], da.bound if da else None,
                     db.bound if db else None, advised, min(ranks) if ranks else None,
                     _verdict(speedup, separated, min(ranks) if ranks else None, applied))


def steps(versions: list[Version], names: dict[str, str]) -> list[Step]:
    """One Step per consecutive pair; `names`: metric -> label of the counters worth showing."""
    out = []
    for a, b in zip(versions, versions[1:], strict=False):
        shown_a = set().union(*(techniques_shown(e) for e in a.layers.values())) if a.layers else set()
        shown_b = set().union(*(techniques_shown(e) for e in b.layers.values())) if b.layers else set()
        applied = shown_b - shown_a
        layers = list(dict.fromkeys([*a.layers, *b.layers]))
        out.append(Step(a.label, b.label, diff_summary(a.source, b.source), dict_changes(a.defines, b.defines),
                        [f"+{f}" for f in b.flags if f not in a.flags] + [f"−{f}" for f in a.flags if f not in b.flags],
                        sorted(applied), sorted(shown_a - shown_b),
                        any(e.sass for e in a.layers.values()) and any(e.sass for e in b.layers.values()),
                        [layer_step(lay, a, b, applied, names) for lay in layers]))
    return out
