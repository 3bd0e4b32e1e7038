"""The facts record of a user kernel (records/facts.py) started, completed and settled (pure).

`start` describes the kernel and how the harness calls it; checks.py appends what each layer and edge
shape measured; `compiled` notes the build; `settle` sets the strict verdict (status and first reason)
on the result and keeps it in the facts (`legacy_*`), so the course's rules can judge the same facts
and the old verdict stays readable beside theirs. `unrecognised` is the FAILED row of a --kernel that
could not be recognised (no child process runs for it).
"""

from __future__ import annotations

from typing import Any

from profconv.records.facts import CompileFacts, FormFacts, HarnessFacts, KernelFacts
from profconv.records.run import VariantResult
from profconv.run.user import calls, forms
from profconv.run.user.manifest import Declaration

COMPILERS = {"device": "nvrtc", "host": "nvcc", "course": "nvcc", "python": "python"}


def form_facts(decl: Declaration) -> FormFacts:
    """What the kernel's source is (the detection's evidence re-read from the file) and where it sits."""
    text = ""
    if decl.source is not None and decl.source.suffix in (".cu", ".cuh") and decl.source.is_file():
        text = decl.source.read_text(errors="replace")
    found = forms.detect(text) if text else forms.Form(None)
    form = decl.flavour if decl.contract == "course" else (decl.contract if decl.contract in COMPILERS else None)
    return FormFacts(contract=decl.contract, form=form,  # type: ignore[arg-type]
                     era=forms.ERAS.get(decl.flavour or "") if decl.contract == "course" else None,
                     evidence=found.evidence or None,
                     folder=forms.course_folder(decl.source) if decl.source is not None else None,
                     error=decl.error)


def start(kernel: Any, images: int, seed: int, secret: bool) -> KernelFacts:
    """The facts of a kernel about to be run (kernel: contracts.UserKernel)."""
    decl: Declaration = kernel.decl
    phases = list(calls.PHASES) if decl.flavour in ("minidnn", "minidnn-stride") else [calls.FORWARD]
    course_host = decl.contract == "course" and decl.flavour not in ("mxnet", "mxnet-generic")
    harness = HarnessFacts(host_memory="pageable" if course_host else "device", y_initial=kernel.y_initial,
                           phases=phases, secret_seed=secret, seed=None if secret else seed,
                           tolerance=decl.tolerance, images=images)
    return KernelFacts(form=form_facts(decl), harness=harness)


def compiled(facts: KernelFacts, kernel: Any, layer_error: str | None) -> None:
    """The build's outcome, once a layer has tried to use it."""
    decl: Declaration = kernel.decl
    if layer_error and layer_error.startswith("compile error: "):
        facts.compiled = CompileFacts(ok=False, compiler=COMPILERS.get(decl.contract),
                                      error=layer_error.removeprefix("compile error: "))
    elif facts.compiled is None or not facts.compiled.ok:
        facts.compiled = CompileFacts(ok=True, compiler=COMPILERS.get(decl.contract),
                                      include_map=dict(getattr(kernel, "include_map", {}) or {}))


def settle(res: VariantResult, why: str | None) -> VariantResult:
    """profconv's strict verdict on the result (FAILED with the first reason, or ok), kept in its facts."""
    if why:
        res.status, res.error = "failed", why
    if res.facts is not None:
        res.facts.legacy_status, res.facts.legacy_error = res.status, res.error
    return res


def unrecognised(decl: Declaration, images: int, provenance: dict[str, Any]) -> VariantResult:
    """The FAILED row of a --kernel that exists but is not a kernel profconv can run (its reason, its facts)."""
    why = decl.error or "not recognised"
    where = str(decl.source or decl.where)
    reason = why if why.startswith(where) else f"{where}: {why}"
    facts = KernelFacts(form=form_facts(decl), harness=HarnessFacts(images=images))
    res = VariantResult(images, decl.name, f"user kernel ({decl.contract})", decl.precision, status="failed",
                        error=f"not recognised: {reason}", user=dict(provenance), facts=facts)
    return settle(res, res.error)
