"""The built-in variants' declarations (kernels/*.toml), read without NumPy or CuPy: the ladder's
names for shell completion and the source of `profconv.run.variants`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from profconv.run.user import manifest

NONE = "none"  # `--variant none`: no built-in variant, only the user's kernels


def kernels_dir() -> Path:
    try:
        return Path(str(resources.files("profconv.kernels")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "kernels"


def builtin_declarations() -> list[manifest.Declaration]:
    """kernels/*.toml in ladder order."""
    base = kernels_dir()
    decls = [manifest.parse(manifest._toml(p.read_text(), p), p, None, builtin=True, base=base)
             for p in sorted(base.glob("*.toml"))]
    return sorted(decls, key=lambda d: (d.order, d.name))
