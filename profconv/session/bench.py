"""`BenchSession`: every GPU variant against cuDNN of its precision on every layer shape, as a library call.

    from profconv.session import BenchRequest, BenchSession
    outcome = BenchSession(BenchRequest(models=["ece408"], images=1000)).run()   # needs a CUDA GPU
    outcome.record      # a profconv.records.BenchRecord, also written to outcome.path (bench.json)

Each layer is handed to `Callbacks.result` (a BenchLayer) as soon as it is measured and the record is
rewritten then; user kernels are checked first in child processes, then benched in this process.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from profconv import provenance
from profconv.errors import GpuUnavailable, InputError, Interrupted
from profconv.records import BenchRecord, BenchSettings, Environment, struct_from
from profconv.records.provenance import Provenance
from profconv.run import gpu
from profconv.run.models import get_model
from profconv.run.user import manifest as user_manifest
from profconv.session.events import Callbacks, Note
from profconv.session.recording import Recording, check_out

COURSE_MODELS = ["ece408-high", "ece408", "ece408-fa18", "ece408-sp19", "ece408-fa19", "ece408-fa20"]
MODEL_SETS = {"course": COURSE_MODELS}  # `--model course`: every ECE408 term's network
DEFAULT_MODELS = [*COURSE_MODELS, "cifar10"]
RECORD = "bench.json"


@dataclass
class BenchRequest:
    """What `profconv bench` does, as data. `variants` None: every GPU variant and both cuDNN references."""

    models: list[str] = field(default_factory=lambda: list(DEFAULT_MODELS))
    variants: list[str] | None = None
    images: int = 10000
    sets: int = 3
    repeat: int = 10
    warmup: int = 3
    out: Path | None = None
    replace: bool = False  # --force: an existing bench.json in `out` may be replaced
    fuse: bool = True
    l2: str = "warm"
    ci_target: float = 0.01
    time_budget: float = 15.0
    layers: list[str] = field(default_factory=list)  # MODEL/LAYER; [] for every conv layer
    cudnn_kernels: bool = True
    kernels: list[str] = field(default_factory=list)
    contract: str | None = None
    kernel_timeout: float = 600.0
    argv: list[str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.out, str):
            self.out = Path(self.out)
        if isinstance(self.models, str):
            self.models = [self.models]

    def check(self) -> None:
        from profconv.run import bench

        if self.images < 1 or self.sets < 1 or self.repeat < 1 or self.warmup < 0:
            raise InputError("--images, --sets and --repeat must be at least 1, --warmup at least 0")
        if self.l2 not in bench.L2_MODES:
            raise InputError(f"--l2 takes cold or warm, not {self.l2!r}")
        if self.kernel_timeout <= 0:
            raise InputError("--kernel-timeout must be positive")


def expand_models(names: list[str]) -> list[str]:
    """Model names with each set name (`course`) replaced by its models, first occurrence kept; an
    unknown name is one InputError line naming the models and the sets."""
    from profconv.errors import did_you_mean
    from profconv.run.models import MODELS

    for n in names:
        if n not in MODELS and n not in MODEL_SETS:
            raise InputError(f"unknown model {n!r}{did_you_mean(n, [*MODELS, *MODEL_SETS])}: choose one of "
                             f"{', '.join(MODELS)}, or course ({', '.join(COURSE_MODELS)})")
    return list(dict.fromkeys(m for n in names for m in MODEL_SETS.get(n, [n])))


@dataclass
class BenchOutcome:
    record: BenchRecord
    path: Path
    kernel_failures: dict[str, str] = field(default_factory=dict)  # user kernel -> why it was not benched


def checked_user_variants(decls: list, models: list, timeout: float, cb: Callbacks) -> tuple[list, dict[str, str]]:
    """Each user kernel checked in a child process on every chosen model (a crash or hang there costs
    nothing here); those that pass are benched in this process, where all variants share one GPU
    context and interleaved rounds (fairness needs one process). (variants, name -> why not benched)"""
    from profconv.run.user import contracts, isolate

    passed, failures = [], {}
    for d in decls:
        prov = contracts.UserKernel(d).provenance()
        for m in models:
            cb.note(Note(f"checking your kernel {d.name} on {m.name} in a child process"))
            job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract, model=m.name,
                                    images=100, repeat=1, warmup=0, timeout=d.timeout or timeout)
            res = isolate.run_isolated(d, prov, job, lambda msg: None)
            if res.status != "ok":
                failures[d.name] = f"{m.name}: {res.error}"
                cb.note(Note(res.error or "", "warning", f"{d.name} FAILED its check on {m.name}, not benched"))
                break
        else:
            passed.append(contracts.user_variant(d)[0])
    return passed, failures


class BenchSession:
    """One `profconv bench`: `BenchSession(request, callbacks).run()` -> BenchOutcome."""

    def __init__(self, request: BenchRequest, callbacks: Callbacks | None = None) -> None:
        self.request = request
        self.cb = callbacks or Callbacks()
        self.recording = Recording(request.out, RECORD, "", replace=request.replace)
        self.record: BenchRecord | None = None

    def prepare(self) -> None:
        """The request checked, the models, layers, variants and kernels resolved; a GPU required."""
        from profconv.run.variants import VARIANTS, get_variants

        req = self.request
        req.check()
        check_out(req.out, RECORD, req.replace)
        models = [get_model(m) for m in expand_models(req.models or DEFAULT_MODELS)]
        known = {f"{m.name}/{la.name}" for m in models for la, _ in m.conv_shapes(1)}
        if bad := [x for x in req.layers if x not in known]:
            raise InputError(f"--layer {bad[0]}: not a conv layer of {', '.join(m.name for m in models)} "
                             f"(one of {', '.join(sorted(known))})")
        self.models = [m for m in models if not req.layers or any(x.startswith(m.name + "/") for x in req.layers)]
        self.chosen = [v for v in get_variants(req.variants or None) if v.device != "cpu"]
        self.kernels = user_manifest.load_many(req.kernels, req.contract, {v.name for v in VARIANTS})
        if not self.chosen and not self.kernels:
            raise InputError("bench times GPU variants: the CPU reference is not one (see `profconv run`)")
        self.cp = gpu.cupy_or_none()
        if self.cp is None:
            raise GpuUnavailable(f"bench needs a CUDA GPU and CuPy: {gpu.why_no_gpu()}")

    def _choose(self) -> dict[str, str]:
        from profconv.run.variants import cudnn_unavailable

        failures: dict[str, str] = {}
        if self.kernels:
            passed, failures = checked_user_variants(self.kernels, self.models, self.request.kernel_timeout, self.cb)
            self.chosen += passed
        if (why := cudnn_unavailable()) and any(v.device == "cudnn" for v in self.chosen):
            skipped = [v.name for v in self.chosen if v.device == "cudnn"]
            self.chosen = [v for v in self.chosen if v.device != "cudnn"]
            self.cb.note(Note(f"cuDNN needs PyTorch with CUDA ({why}); ratios to cuDNN will be missing", "warning",
                              f"{', '.join(skipped)} skipped"))
        return failures

    def _new_record(self, failures: dict[str, str]) -> BenchRecord:
        req = self.request
        stamp = datetime.now(timezone.utc)
        self.recording.stem = f"bench-{stamp.strftime('%Y%m%d-%H%M%S')}"
        self.env = gpu.environment(self.cp)
        return BenchRecord(
            argv=list(req.argv) if req.argv is not None else ["profconv", *sys.argv[1:]], created=stamp.isoformat(),
            environment=struct_from(Environment, self.env),
            settings=BenchSettings(models=[m.name for m in self.models], variants=[v.name for v in self.chosen],
                                   images=req.images, sets=req.sets, repeat=req.repeat, warmup=req.warmup, fuse=req.fuse,
                                   l2=req.l2, ci_target=req.ci_target or None,
                                   time_budget_s=req.time_budget if req.ci_target else None,
                                   cudnn_kernels=req.cudnn_kernels, layers=list(req.layers),
                                   kernels=[str(d.source or d.where) for d in self.kernels],
                                   kernel_failures=failures))

    def run(self) -> BenchOutcome:
        """Every layer of every model timed; the record after each. Interrupted raises
        profconv.errors.Interrupted with the partial record."""
        self.prepare()
        failures = self._choose()
        self.record = record = self._new_record(failures)
        self.recording.open()
        recorder = provenance.Recorder(self.cp)
        record.provenance = struct_from(Provenance, recorder.start())
        req = self.request
        self.cb.note(Note(f"GPU: {self.env['gpu']} (compute capability {self.env['compute_capability']}); "
                          f"{len(self.chosen)} variants, {req.sets} input sets of {req.images} images, {req.repeat} "
                          f"rounds after {req.warmup} warm-up"))
        try:
            self._measure(record)
        except KeyboardInterrupt:
            record.interrupted = True
            record.provenance = struct_from(Provenance, recorder.finish(None))
            kept = self.recording.save(record)  # what finished, marked interrupted
            raise Interrupted(f"interrupted: partial record in {kept}", record, kept) from None
        except BaseException:
            if not record.layers:
                self.recording.withdraw()
            raise
        record.provenance = struct_from(Provenance, recorder.finish(None))
        path = self.recording.save(record)
        return BenchOutcome(record, path, failures)

    def _measure(self, record: BenchRecord) -> None:
        from profconv.run import bench
        from profconv.run import weights as weights_mod

        req = self.request
        opts = bench.BenchOptions(images=req.images, sets=req.sets, repeat=req.repeat, warmup=req.warmup, l2=req.l2,
                                  target=req.ci_target or None, budget_s=req.time_budget,
                                  max_rounds=req.repeat if not req.ci_target else max(req.repeat, 100),
                                  cudnn_kernels=req.cudnn_kernels, layers=tuple(req.layers))
        total = sum(1 for m in self.models for la, _ in m.conv_shapes(1)
                    if not req.layers or f"{m.name}/{la.name}" in req.layers)
        done = 0
        self.cb.progress("measuring device bandwidth", done, total)
        record.device = bench.device_facts(self.cp, self.env)
        seen: dict[tuple, str] = {}
        def measured(layer) -> None:  # each layer kept as soon as it is measured (Ctrl-C keeps it)
            nonlocal done
            done += 1
            record.layers.append(layer)
            self.recording.save(record)
            self.cb.result(layer)

        for m in self.models:
            bench.bench_model(self.cp, m, weights_mod.load(m, None), self.chosen, opts, record.device, seen,
                              lambda msg: self._progress(msg, done, total), fuse=req.fuse, on_layer=measured)
            self.cb.progress(f"{m.name} done", done, total)
            self.cb.check_stop()

    def _progress(self, message: str, done: int, total: int) -> None:
        self.cb.progress(message, done, total)
        self.cb.check_stop()
