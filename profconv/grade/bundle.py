"""What a grade worker makes once per model and GPU, and keeps on disk: the model bundle.

Every job of a class on one model runs the same inputs through the same reference and compares
with the same reference variant (cuDNN). `profconv run --kernel` makes them again in each job (the
float64 reference pass, the cuDNN variant's sweep and timing: seconds per job); a grade worker makes
them once, in a process of its own (`python -m profconv.grade.bundle KEY.json DIR`: it holds the
only CUDA context that ever touches them), and every job's child reads them from here.

A bundle directory (`<cache>/bundles/<key digest>/`):
  bundle.json      {"key": BundleKey, "created", "seconds": what making it took, "parts": its split
                    (start_s: imports, CUDA context, GPU state; inputs_s; reference_s; variant_s; check_kernels_s:
                    the checks' CuPy kernels compiled, checks.warm_kernels; save_s),
                    "environment": the run record's environment (GPU, driver, CuPy, PyTorch, cuDNN),
                    "provenance": GPU clocks before and after, code state,
                    "reference": the reference variant's result (a VariantResult as in run.json)}
  images.npy       the inputs (float32 N x C x H x W)        } GPU bundles only: the jobs' children
  labels.npy       their labels                               } copy them to their own device
  in-<layer>.npy   a conv layer's input from the reference pass (not for the first layer: the images)
  ref-<layer>.npy  its exact output (float64 accumulation, float32, as `run` checks against)

The key holds everything that determines the contents (`BundleKey`): the model, image count, data
and weights files (by content hash), the timing settings of the reference variant, the GPU (its
UUID: times belong to one card), and the versions of profconv and the libraries. (A secret seed
changes only the fresh inputs each kernel's child draws for itself, not the bundle.) Two workers
that need the same bundle make it once (a lock file), the second waits.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from profconv.errors import ProfconvError

META = "bundle.json"
VERSION = 1


class BundleError(ProfconvError):
    """The bundle could not be made (no GPU, the reference variant failed, ...): every job of its model says why."""


@dataclass(frozen=True)
class BundleKey:
    model: str
    images: int
    variant: str  # the reference variant: cudnn, or cpu in a dry run
    repeat: int = 5
    warmup: int = 2
    ci_target: float | None = 0.01
    time_budget: float = 2.0
    data: str | None = None  # the dataset directory
    data_digest: str | None = None
    weights: str | None = None
    weights_digest: str | None = None
    device: str = "cpu"  # the GPU's UUID (or name and index when nvidia-smi has no UUID), "cpu" in a dry run
    versions: str = ""  # profconv and library versions

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:24]


def file_digest(path: str | None) -> str | None:
    """sha256 of a file, or of a directory's files (names and bytes, read in chunks); None for None."""
    if path is None:
        return None
    p = Path(path)
    files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file() and not f.is_symlink())
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(p if p.is_dir() else p.parent).as_posix().encode() + b"\0")
        with f.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def versions() -> str:
    """What else the bundle's numbers depend on: profconv's version and its source tree's hash."""
    from profconv import __version__
    from profconv.provenance import tree_hash

    tree = tree_hash().get("sha256") or ""
    return f"profconv {__version__} tree {str(tree)[:16]} python {sys.version_info[0]}.{sys.version_info[1]}"


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (a file beside the bundle): other workers wait for the one making it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def directory(root: Path, key: BundleKey) -> Path:
    return root / "bundles" / key.digest()


def read_meta(where: Path) -> dict[str, Any] | None:
    """A finished bundle's bundle.json, or None (absent, half-written bundles are never renamed into place)."""
    try:
        doc = json.loads((where / META).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == VERSION else None


def preloaded(where: Path) -> Any:
    """A GPU bundle's weights, inputs and reference pass as the kernel child's Preloaded (arrays
    memory-mapped: every child and every worker on this host shares the page cache)."""
    import numpy as np

    from profconv.run import weights as weights_mod
    from profconv.run.models import get_model
    from profconv.run.user.worker import Preloaded

    meta = json.loads((where / META).read_text())
    key = meta["key"]
    model = get_model(key["model"])
    images = np.load(where / "images.npy", mmap_mode="r")
    conv_io = {}
    for layer, _ in model.conv_shapes(1):
        a = where / f"in-{layer.name}.npy"
        conv_io[layer.name] = (np.load(a, mmap_mode="r") if a.is_file() else images,
                               np.load(where / f"ref-{layer.name}.npy", mmap_mode="r"))
    return Preloaded(params=weights_mod.load(model, key.get("weights")), images=images,
                     labels=np.load(where / "labels.npy"), conv_io=conv_io)


# --- making one (in its own process: `python -m profconv.grade.bundle KEY.json DIR`) ----------------


def _save_arrays(where: Path, images: Any, labels: Any, conv_io: dict[str, tuple[Any, Any]], cp: Any) -> None:
    import numpy as np

    np.save(where / "images.npy", np.ascontiguousarray(images))
    np.save(where / "labels.npy", np.asarray(labels))
    for name, (a, ref) in conv_io.items():
        if a is not images:
            np.save(where / f"in-{name}.npy", cp.asnumpy(a))
        np.save(where / f"ref-{name}.npy", cp.asnumpy(ref))


def make(key: BundleKey, where: Path) -> dict[str, Any]:
    """Compute the bundle into `where` (a fresh directory): the reference pass and the reference variant,
    exactly as `profconv run` makes them. Returns bundle.json's content."""
    from profconv import provenance
    from profconv.grade import runrecord
    from profconv.records import encode
    from profconv.run import gpu, runner
    from profconv.run import weights as weights_mod
    from profconv.run.models import get_model
    from profconv.run.record import VariantResult
    from profconv.run.variants import cudnn_unavailable, get_variants

    t0 = time.monotonic()
    parts: dict[str, float] = {}

    def part(name: str, since: list[float] = [t0]) -> None:  # noqa: B006 - one clock for the whole bundle
        now = time.monotonic()
        parts[name] = round(now - since[0], 3)
        since[0] = now
        print(f"{name}: {parts[name]:.2f} s", flush=True)

    model = get_model(key.model)
    dry = key.variant == "cpu"
    cp = None if dry else gpu.require_cupy()
    params = weights_mod.load(model, key.weights)
    recorder = provenance.Recorder(cp)
    recorder.start()
    part("start_s")  # imports, the CUDA context, the GPU's state
    rule = gpu.StopRule(key.ci_target, key.time_budget) if key.ci_target else None
    opts = runner.RunOptions(images=key.images, repeat=key.repeat, warmup=key.warmup,
                             cpu_repeat=runrecord.RUN_CPU_REPEAT, data_dir=key.data, rule=rule)
    run = runner.Runner(model, params, cp)
    ds = runner.load_inputs(model, opts)
    x = run.xp.asarray(ds.images)
    part("inputs_s")
    conv_io = run.reference_pass(x)
    part("reference_s")
    (variant,) = get_variants([key.variant])
    if variant.device == "cudnn" and (why := cudnn_unavailable()):  # as `profconv run` skips it
        result = VariantResult(key.images, variant.name, variant.technique, variant.precision, status="skipped",
                               error=f"cuDNN reference needs PyTorch with CUDA ({why})")
    else:
        result = run.run_variant(variant, x, ds.labels, conv_io, opts, lambda *a, **k: None)
    part("variant_s")
    if cp is not None:  # the kernels' checks compiled here once, not by a class's first jobs all at once
        from profconv.run.user.checks import warm_kernels

        warm_kernels(cp, conv_io, {layer.name: s for layer, s in model.conv_shapes(key.images)}, run.params)
        part("check_kernels_s")
    if cp is not None:
        _save_arrays(where, ds.images, ds.labels, {n: (ds.images if a is x else a, r) for n, (a, r) in conv_io.items()}, cp)
    env, prov = gpu.environment(cp), recorder.finish(None)
    part("save_s")
    meta = {"version": VERSION, "key": asdict(key), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "seconds": round(time.monotonic() - t0, 3), "parts": parts, "environment": env,
            "provenance": prov, "reference": json.loads(encode(result)),
            "data": {"source": ds.source, "synthetic": ds.synthetic}}
    (where / META).write_text(json.dumps(meta, indent=1, default=str))
    return meta


def main(argv: list[str]) -> int:
    """`python -m profconv.grade.bundle KEY.json DIR`: make the bundle in DIR.partial, then rename it to DIR."""
    key = BundleKey(**json.loads(Path(argv[0]).read_text()))
    final = Path(argv[1])
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        make(key, partial)
    except ProfconvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        shutil.rmtree(partial, ignore_errors=True)
        return 2
    os.replace(partial, final)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
