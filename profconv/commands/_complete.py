"""Shell completion of option values (`--model ece<TAB>`, `--variant cpu,na<TAB>`), read from the
same tables the commands use without importing NumPy, pandas or CuPy: a TAB answers at once."""

from __future__ import annotations


def _matching(names, incomplete: str) -> list[str]:
    """Names that complete the last item of a comma list, each with the items before it kept."""
    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    given = set(head.split(",")) if head else set()
    return [prefix + n for n in names if n.startswith(last) and n not in given]


def models(incomplete: str) -> list[str]:
    from profconv.run.models import MODELS

    return _matching(MODELS, incomplete)


def variant_names(gpu_only: bool = False) -> list[str]:
    """The ladder in order, then the cuDNN peers (as profconv.run.variants lists them), then `none`."""
    from profconv.run import peers
    from profconv.run.declarations import NONE, builtin_declarations

    ours = [d.name for d in builtin_declarations() if not (gpu_only and d.device == "cpu")]
    return [*ours, *(p.name for p in peers.PEERS), *([] if gpu_only else [NONE])]


def variants(incomplete: str) -> list[str]:
    return _matching(variant_names(), incomplete)


def gpu_variants(incomplete: str) -> list[str]:
    return _matching(variant_names(gpu_only=True), incomplete)


def contracts(incomplete: str) -> list[str]:
    from profconv.run.user.manifest import CONTRACTS

    return [c for c in CONTRACTS if c.startswith(incomplete)]
