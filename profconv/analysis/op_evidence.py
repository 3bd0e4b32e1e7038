"""Everything a run recorded about one timed conv op, gathered for the diagnosis. Pure: the SASS
listings come in as text (the caller reads the run directory).

Per (variant, layer) at the run's largest image count: the layer's shape and arithmetic, Op Time and
its interval, the ncu metrics of each kernel the op launched (the targeted pass of `profconv explain`
when there is one, else the metrics of `run --profile ncu`), the SASS of its kernels, CUPTI's view
of the op (launches, kernel time), the forward pass's activation and pooling time, and the Op Time
of every other rung on the same layer (to point at the rung that applies a technique)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from profconv.analysis import sass as sass_mod
from profconv.records import RunRecord, to_builtins
from profconv.run.models import ConvShape


@dataclass(frozen=True)
class KernelEvidence:
    """One kernel of an op: its metrics averaged over the op's timed launches in the ncu pass."""

    name: str
    launches_per_call: float
    duration_s: float | None  # per call, all its launches (ncu)
    metrics: dict[str, float]

    def m(self, key: str) -> float | None:
        v = self.metrics.get(key)
        return None if v is None or v != v else float(v)


@dataclass(frozen=True)
class OpEvidence:
    variant: str
    layer: str
    technique: str
    precision: str
    arithmetic: str  # fp32 | fp16 | tensor-fp16: which peak bounds it
    shape: ConvShape
    op_time_s: float | None
    ci: tuple[float, float] | None
    kernels: list[KernelEvidence] = field(default_factory=list)  # longest first
    ncu_images: int | None = None
    ncu_source: str | None = None  # "targeted" (explain) | "run" (run --profile ncu) | None
    sass: list[sass_mod.KernelSass] = field(default_factory=list)
    sass_file: str | None = None
    cupti: dict | None = None  # TimedOp: calls, launches, busy_s, span_s, kernels, kernel_busy_s
    epilogue_s: float | None = None  # the variant's activation + pooling time in the forward pass
    rung_times: dict[str, float] = field(default_factory=dict)  # variant -> Op Time on this layer
    user: bool = False
    host_io: bool = False  # the timed call includes its host<->device copies (our e2e and streams variants)
    half_ops: dict[str, dict[str, int]] = field(default_factory=dict)  # PTX: kernel -> {f16, f16x2} counts
    # a course-form kernel under CUPTI attribution (VariantResult.verdict.placement): phase -> (kernel launches,
    # kernel seconds per layer call, kernel names); phases prolog | timed | epilog | elsewhere
    placement: dict[str, tuple[int, float, list[str]]] = field(default_factory=dict)

    @property
    def main(self) -> KernelEvidence | None:
        return self.kernels[0] if self.kernels else None

    @property
    def key(self) -> str:
        return f"{self.variant}/{self.layer}"


def _launches(record: RunRecord) -> tuple[list[dict], int | None, str | None, int]:
    """The ncu launches to read: the targeted pass if any, else run --profile ncu's; calls per op."""
    ev = record.evidence
    if ev is not None and ev.ncu is not None and ev.ncu.launches:
        return to_builtins(ev.ncu.launches), ev.ncu.images, "targeted", 1
    prof = record.profile
    part = (prof.ncu or prof) if prof is not None else None
    if part is not None and part.launches:
        images = max((r.images for r in record.results), default=None)
        launches = to_builtins(part.launches)
        return launches, images, "run", int(part.calls_per_op or _fewest_launches(launches))
    return [], None, None, 1


def _fewest_launches(launches: list[dict]) -> int:
    """Calls per op when an old record did not say: the fewest timed launches of one kernel in one op."""
    from collections import Counter

    from profconv.profile.activity import role_of

    counts = Counter((ln["range"], ln["kernel"]) for ln in launches if role_of(ln["range"]) == "timed")
    return min(counts.values(), default=1)


def kernels_by_op(launches: list[dict], calls: int) -> dict[str, list[KernelEvidence]]:
    """Timed launches grouped by op (model/variant/layer) and kernel name, metrics averaged, longest first."""
    from profconv.profile.activity import role_of

    grouped: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for ln in launches:
        if (ln.get("role") or role_of(ln["range"])) == "timed":
            grouped[ln["range"]][ln["kernel"]].append(ln["metrics"])
    out: dict[str, list[KernelEvidence]] = {}
    for rng, by_kernel in grouped.items():
        ks = []
        for name, rows in by_kernel.items():
            keys = {k for r in rows for k in r}
            mean = {k: sum(r[k] for r in rows if r.get(k) is not None) / max(1, sum(r.get(k) is not None for r in rows))
                    for k in keys}
            durs = [r.get("gpu__time_duration.sum") for r in rows]
            total = sum(d for d in durs if d is not None) / calls * 1e-9 if any(d is not None for d in durs) else None
            ks.append(KernelEvidence(name, len(rows) / calls, total, mean))
        out[rng] = sorted(ks, key=lambda k: -(k.duration_s or 0.0))
    return out


def _sass_for(record: RunRecord, texts: dict[str, str], variant: str, layer: str
              ) -> tuple[list[sass_mod.KernelSass], str | None, dict[str, dict[str, int]]]:
    ev = record.evidence
    if ev is None:
        return [], None, {}
    listing = next((s for s in ev.sass if s.variant == variant and s.layer == layer), None)
    if listing is None or listing.file not in texts:
        return [], None, {}
    return sass_mod.parse(texts[listing.file]), listing.file, dict(listing.half_ops)


def gather(record: RunRecord, sass_texts: dict[str, str] | None = None) -> list[OpEvidence]:
    """One OpEvidence per ok GPU conv op (our ladder and user kernels) at the largest image count."""
    from profconv.analysis.runs import END_TO_END, arithmetic_of

    texts = sass_texts or {}
    if not record.results:
        return []
    n = max(r.images for r in record.results)
    launches, ncu_images, source, calls = _launches(record)
    per_op = kernels_by_op(launches, calls)
    ops = {o.op: to_builtins(o) for o in (record.profile.ops if record.profile else [])}
    rung_times: dict[str, dict[str, float]] = defaultdict(dict)
    for r in record.results:
        for c in r.conv:
            if r.images == n and c.status == "ok" and c.op_time:
                rung_times[c.layer][r.variant] = c.op_time.median_s
    out = []
    for r in record.results:
        if r.images != n or r.status != "ok" or r.variant == "cpu" \
                or r.technique == "vendor library reference":
            continue
        epi = sum(v for k, v in r.type_totals.items() if k in ("tanh", "relu", "pool")) or None
        placed = {p.phase: (p.kernel_launches, p.busy_s, list(p.kernels))
                  for p in (r.verdict.placement if r.verdict is not None else [])}
        for c in r.conv:
            if c.status != "ok" or c.dims is None:
                continue
            key = f"{record.model.name}/{r.variant}/{c.layer}"
            t = c.op_time
            ci = (t.ci_low_s, t.ci_high_s) if t and t.ci_low_s is not None and t.ci_high_s is not None else None
            sass, sass_file, half_ops = _sass_for(record, texts, r.variant, c.layer)
            out.append(OpEvidence(
                variant=r.variant, layer=c.layer, technique=r.technique, precision=r.precision,
                arithmetic=arithmetic_of(r.variant, r.precision), shape=ConvShape(*c.dims.as_tuple()),
                op_time_s=t.median_s if t else None, ci=ci, kernels=per_op.get(key, []), ncu_images=ncu_images,
                ncu_source=source if key in per_op else None, sass=sass, sass_file=sass_file, cupti=ops.get(key),
                epilogue_s=epi, rung_times=dict(rung_times[c.layer]), user=r.user is not None,
                host_io=r.variant in END_TO_END, half_ops=half_ops,
                placement=placed))
    return out
