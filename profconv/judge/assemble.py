"""A user kernel's run result turned into the rules' Evidence, and the verdict applied to the result:
the one place a user kernel's status is decided (`apply`), for `run` and, through run's records,
`grade`.

The evidence comes from the result's per-layer and per-edge records (what the harness measured), the
child process's CUPTI records (attribution) and the SASS of the library the harness built (cuobjdump).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from profconv.analysis.sass import KernelSass
from profconv.judge.evidence import EdgeEvidence, Evidence, LayerEvidence
from profconv.judge.optimisations import from_launches, from_sass, placements
from profconv.judge.rules import RuleSet
from profconv.judge.verdict import judge
from profconv.profile.activity import Records
from profconv.profile.attribution import Attribution, attribute_calls
from profconv.profile.disassemble import Disassembly, disassemble
from profconv.records.run import ConvResult, VariantResult
from profconv.records.verdict import Verdict

NONFINITE = ("non-finite", "unwritten")


def _layer(c: ConvResult) -> LayerEvidence:
    """One layer's measurements from its record (the harness's checks dict says which checks held)."""
    err = c.error or ""
    floor = c.checks.get("floor_s")
    op_min = c.op_time.min_s if c.op_time else None
    measured = c.rel_error is not None or any(s in err for s in NONFINITE)
    return LayerEvidence(
        layer=c.layer, shape=c.shape, rel_error=c.rel_error,
        nonfinite=1 if c.rel_error is None and any(s in err for s in NONFINITE) else 0 if measured else None,
        inputs_modified=True if "modified its input" in err else (False if c.checks.get("inputs_unchanged") else None),
        timed_calls=len(c.op_time.samples_s) if c.op_time else None,
        timed_wrong=1 if "output of the timed calls is wrong" in err else (0 if c.checks.get("timed_output_rechecked")
                                                                            else None),
        op_s=c.op_time.median_s if c.op_time else None,
        below_floor=(op_min < floor) if floor is not None and op_min is not None else None, floor_s=floor,
        error=None if measured or c.status == "ok" or "modified its input" in err or "impossible" in err
        or "timed calls is wrong" in err else (c.error or "failed"))


def _edge(e: dict[str, Any]) -> EdgeEvidence:
    err = e.get("error") or ""
    nonfinite = 1 if e.get("rel_error") is None and any(s in err for s in NONFINITE) else 0
    return EdgeEvidence(layer=str(e.get("layer", "")), shape=str(e.get("shape", "")), rel_error=e.get("rel_error"),
                        nonfinite=nonfinite, error=None if nonfinite or e.get("rel_error") is not None else err or None)


def _sanitizer(user: dict[str, Any]) -> tuple[dict[str, int], str | None]:
    report = user.get("sanitizer") or {}
    counts = {t: int(r.get("errors") or 0) for t, r in report.items() if isinstance(r, dict)}
    first = next((r["findings"][0] for r in report.values() if isinstance(r, dict) and r.get("errors")
                  and r.get("findings")), None)
    return counts, first


FOLDER = re.compile(r"(?:^|/)((?:req|op)_\d+)/[^/]+$")


def folder_of(path: str | None) -> str | None:
    """The course's per-optimisation folder a file sits in: '.../m3/req_1/m3-forward.cu' -> 'req_1'."""
    m = FOLDER.search(path or "")
    return m.group(1) if m else None


def _code(att: Attribution | None, dis: Disassembly | None) -> dict[str, Any]:
    """The evidence of the code itself: its SASS (the kernels the timed call launched, when attributed)
    and where its work ran."""
    kernels: list[KernelSass] = dis.kernels if dis else []
    timed = set(att.phase("timed").kernels) if att is not None else None
    opts = from_sass(kernels, dis.half_ops if dis else None, only=timed or None) + (
        from_launches(att, kernels) if att is not None else [])
    used = [k for k in kernels if not timed or k.short_name in timed]
    return {"sass_read": bool(kernels), "sass_note": dis.note if dis else "the kernel's SASS was not read",
            "optimisations": tuple(opts), "placement": tuple(placements(att)) if att is not None else (),
            "tensor_types": frozenset(t for k in used for t in k.tensor),
            "fp16_arithmetic": any(k.fp16_arith for k in used)}


def facts_of(res: VariantResult) -> dict[str, Any] | None:
    """The harness's facts record of a result (records/facts.py KernelFacts) as plain data, if it has one."""
    import msgspec

    f = getattr(res, "facts", None)
    return None if f is None else f if isinstance(f, dict) else msgspec.to_builtins(f)


def _g(d: dict[str, Any] | None, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _layer_from_facts(f: dict[str, Any]) -> LayerEvidence:
    t = f.get("timing") or {}
    return LayerEvidence(
        layer=f["layer"], shape=f.get("shape", ""), rel_error=_g(f, "check", "rel_error"),
        nonfinite=_g(f, "check", "nonfinite") if f.get("check") else None,
        inputs_modified=bool(f.get("inputs_modified") or _g(f, "timed", "inputs_modified"))
        if f.get("inputs_modified") is not None or f.get("timed") else None,
        timed_calls=_g(f, "timed", "calls"), timed_wrong=_g(f, "timed", "wrong"),
        timed_worst_rel_error=_g(f, "timed", "worst_rel_error"), timed_nonfinite=_g(f, "timed", "nonfinite"),
        fresh_inputs=_g(f, "timed", "fresh_inputs"), identical_twice=_g(f, "determinism", "identical"),
        twice_rel_diff=_g(f, "determinism", "rel_diff"), ghost_rel_error=_g(f, "ghost", "rel_error"),
        ghost_matched=_g(f, "ghost", "matched"), op_s=t.get("op_median_s"), cold_s=t.get("cold_s"),
        prolog_s=t.get("prolog_median_s"), epilog_s=t.get("epilog_median_s"), left_running_s=t.get("left_running_s"),
        below_floor=t.get("below_floor"), floor_s=t.get("floor_s"), error=f.get("error"))


def from_facts(res: VariantResult, facts: dict[str, Any], att: Attribution | None = None,
               dis: Disassembly | None = None, expected_correctness: float | None = None) -> Evidence:
    """The rules' evidence from the harness's facts record (the measurements, never its verdicts)."""
    form = facts.get("form") or {}
    compiled = facts.get("compiled")
    san = facts.get("sanitizer") or []
    return Evidence(
        name=res.variant, form=form.get("form"), form_error=form.get("error"), folder=form.get("folder"),
        compiled=None if compiled is None else bool(compiled.get("ok")),
        compile_error=None if compiled is None else compiled.get("error"),
        error=res.error if res.status == "failed" and not facts.get("layers") and not form.get("error")
        and (compiled is None or compiled.get("ok")) else None,
        images=_g(facts, "harness", "images") or res.images,
        declared_precision="fp16" if res.precision == "fp16" else "fp32",
        layers=tuple(_layer_from_facts(f) for f in facts.get("layers") or []),
        edges=tuple(EdgeEvidence(layer=e["layer"], shape=e["shape"], rel_error=_g(e, "output", "rel_error"),
                                 nonfinite=_g(e, "output", "nonfinite"), error=e.get("error"))
                    for e in facts.get("edges") or []),
        correctness=facts.get("correctness", res.correctness), expected_correctness=expected_correctness,
        sanitizer_errors={s["tool"]: int(s.get("errors") or 0) for s in san},
        sanitizer_first=next((s["findings"][0] for s in san if s.get("errors") and s.get("findings")), None),
        **_code(att, dis))


def from_result(res: VariantResult, att: Attribution | None = None, dis: Disassembly | None = None,
                expected_correctness: float | None = None, facts: dict[str, Any] | None = None) -> Evidence:
    """The rules' evidence for one user kernel's result: from the harness's facts when the result has them
    (`facts` overrides), else from the result's rows (records written before the facts existed)."""
    facts = facts if facts is not None else facts_of(res)
    if facts is not None:
        return from_facts(res, facts, att, dis, expected_correctness)
    user = res.user or {}
    compile_failed = any((c.error or "").startswith("compile error") for c in res.conv)
    counts, first = _sanitizer(user)
    return Evidence(
        name=res.variant, form=user.get("flavour") or user.get("contract"),
        folder=user.get("folder") or folder_of(user.get("path")),
        compiled=False if compile_failed else (True if res.conv else None),
        compile_error=next(((c.error or "").removeprefix("compile error: ") for c in res.conv
                            if (c.error or "").startswith("compile error")), None),
        error=res.error if res.status == "failed" and not res.conv else None, images=res.images,
        declared_precision="fp16" if res.precision == "fp16" else "fp32",
        layers=tuple(_layer(c) for c in res.conv if not (c.error or "").startswith("compile error")),
        edges=tuple(_edge(e) for e in user.get("edge_checks", [])), correctness=res.correctness,
        expected_correctness=expected_correctness, sanitizer_errors=counts, sanitizer_first=first,
        **_code(att, dis))


def rejudge(res: VariantResult, rs: RuleSet) -> Verdict | None:
    """A judged result's verdict under another rule set, from its record alone: the facts (or rows) and what
    the first verdict read from the GPU's records and the SASS (placement, optimisations, precision)."""
    from dataclasses import replace

    prior = res.verdict
    if prior is None:
        return None
    ev = from_result(res)
    # a library is the kernel's only if the call's phases launched it (records judged before 2026-11-28 08:30
    # also listed profconv's own reference cuBLAS and CuPy's reductions)
    libs = {entry.split(":")[0].lower().replace("/", "-") for p in prior.placement for entry in p.library}
    opts = [o for o in prior.optimisations if not o.name.startswith("library-") or o.name[8:] in libs]
    names = {o.name for o in opts}
    ev = replace(ev, placement=tuple(prior.placement), optimisations=tuple(opts),
                 sass_read=prior.sass_read or any(o.kernel for o in opts),  # older verdicts kept no flag
                 folder=ev.folder if ev.folder is not None else (
                     prior.role if prior.role != "final" else None),
                 tensor_types=frozenset(n.removeprefix("tensor-cores-") for n in names if n.startswith("tensor-cores-")),
                 fp16_arithmetic=any(n.startswith("fp16-") for n in names))
    return judge(ev, rs)


def built_libraries(build_dir: Path | None) -> list[Path]:
    """The shared libraries the harness built for a kernel (course and host contracts), newest first."""
    if build_dir is None or not build_dir.is_dir():
        return []
    return sorted(build_dir.rglob("*.so"), key=lambda p: p.stat().st_mtime, reverse=True)


def sass_of(build_dir: Path | None) -> Disassembly:
    """The SASS of the library the harness built (no kernels, and why, when it built none: an NVRTC or
    Python kernel, or a build folder gone)."""
    libs = built_libraries(build_dir)
    if not libs:
        return Disassembly(str(build_dir), note=f"no library built in {build_dir} (an NVRTC or Python kernel)")
    return disassemble(libs[0])


def form_of(res: VariantResult) -> str | None:
    """The kernel's course form: the harness's fact, else the flavour its record names."""
    facts = facts_of(res)
    form = (facts or {}).get("form") or {}
    return form.get("form") or (res.user or {}).get("flavour")


def apply(res: VariantResult, rs: RuleSet | None = None, records: Records | None = None, build_dir: Path | None = None,
          expected_correctness: float | None = None, course: str | None = None, model: str | None = None
          ) -> VariantResult:
    """Judge a user kernel's result under `rs` (None: the set `course`, else the one its form's era or the
    `model` implies): the verdict is stored in the result and decides its status and error (a skipped run
    stays skipped: nothing was measured)."""
    if res.status == "skipped":
        return res
    if rs is None:
        from profconv.judge.rules import choose

        rs = choose(course, model, form_of(res))
    att = attribute_calls(records) if records is not None else None
    ev = from_result(res, att, sass_of(build_dir), expected_correctness)
    v = judge(ev, rs)
    res.verdict = v
    res.status = v.status
    res.error = (f"{v.reason} [{v.rule.id}]" if v.rule else v.reason) if v.status == "failed" else None
    for c in res.conv:  # each layer's row says what the verdict says of that layer
        bad = next((f for f in v.findings if f.outcome == "fail" and f.layer == c.layer), None)
        if bad is not None:
            c.status, c.error = "failed", f"{bad.reason} [{bad.rule.id}]"
        elif c.status == "failed" and c.rel_error is not None:  # judged by the harness's tolerance, not the rules
            c.status, c.error = "ok", None
    return res
