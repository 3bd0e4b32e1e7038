"""`RunSession`: the variant ladder, and the user's kernels, on a model's forward pass, as a library call.

    from profconv.session import RunRequest, RunSession
    outcome = RunSession(RunRequest(model="ece408", images=[100], variants=["cpu"])).run()
    outcome.record      # a profconv.records.RunRecord, also written to outcome.path (run.json)

The request is checked before any work (a bad one costs nothing and leaves no directory); the
session then times every variant at every image count, runs each user kernel in its child process,
profiles with the tools asked for, and writes the record after every result (one `Recording`).
What the CLI prints is drawn from the outcome by `profconv.commands.run`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profconv import provenance
from profconv.errors import GpuUnavailable, InputError, Interrupted, ProfilerFailed, ProfilerUnavailable
from profconv.io import write_atomic
from profconv.records import DataInfo, Environment, ModelInfo, ProfileInfo, RunRecord, RunSettings, VariantResult, struct_from
from profconv.records.provenance import Provenance
from profconv.run import gpu
from profconv.run.models import Model, get_model
from profconv.run.user import isolate
from profconv.run.user import manifest as user_manifest
from profconv.session.events import Callbacks, Note
from profconv.session.recording import Recording, check_out

if TYPE_CHECKING:
    from profconv.parse.core import ProfileSet
    from profconv.profile.activity import Records
    from profconv.profile.external import NcuSettings

MAX_IMAGES = 1_000_000
RECORD = "run.json"


@dataclass
class RunRequest:
    """What `profconv run` does, as data. `variants`: None for every built-in variant, [] for none
    (only `kernels`); `profile`: tools among cupti, ncu, nsys, nvprof (cupti plus one external)."""

    model: str = "ece408-high"
    images: list[int] = field(default_factory=lambda: [10000])
    variants: list[str] | None = None
    repeat: int = 5
    warmup: int = 2
    cpu_repeat: int = 5  # 5 vs 5 samples can reach p < 0.05 in report --compare (3 vs 3 cannot: p >= 0.1)
    data: str | None = None
    weights: str | None = None
    out: Path | None = None
    replace: bool = False  # --force: an existing record in `out` may be replaced
    profile: list[str] = field(default_factory=list)
    profile_timeout: float = 1800.0
    show_all: bool = False
    ci_target: float = 0.01
    time_budget: float = 2.0
    ncu_clock_control: str = "none"
    ncu_cache_control: str = "none"
    kernels: list[str] = field(default_factory=list)
    contract: str | None = None
    kernel_timeout: float = isolate.DEFAULT_TIMEOUT_S
    sanitize: bool = False
    course: str | None = None  # the course term whose rules judge the kernels (None: what the model implies)
    secret_seed: str | None = None  # the kernels' fresh inputs and edge data drawn from it, kept out of the record
    argv: list[str] | None = None  # the command line recorded (default: this process's)

    def __post_init__(self) -> None:
        if isinstance(self.images, int):
            self.images = [self.images]
        if isinstance(self.out, str):
            self.out = Path(self.out)
        if isinstance(self.kernels, str):
            self.kernels = [self.kernels]

    def check(self) -> None:
        """Every value checked before any work: one InputError line naming the option."""
        counts = self.images
        if not counts or any(type(c) is not int or c <= 0 for c in counts):
            raise InputError("--images must be positive")
        if any(c > MAX_IMAGES for c in counts):
            raise InputError(f"--images takes at most {MAX_IMAGES:,} images per run, not {max(counts):,}")
        if len(set(counts)) != len(counts):
            raise InputError(f"--images lists {next(c for c in counts if counts.count(c) > 1)} twice")
        if self.repeat < 1 or self.warmup < 0 or self.cpu_repeat < 1:
            raise InputError("--repeat and --cpu-repeat must be at least 1, --warmup at least 0")
        if self.kernel_timeout <= 0:
            raise InputError("--kernel-timeout must be positive")
        if (self.contract or self.sanitize) and not self.kernels:  # a secret seed without kernels: nothing to draw
            raise InputError("--contract and --sanitize apply to --kernel files: name one with --kernel PATH")
        if self.data is not None and not Path(self.data).is_dir():
            from profconv.errors import DataFileError

            raise DataFileError(f"{self.data}: not a directory")
        self._check_profile()

    def _check_profile(self) -> None:
        from profconv.profile import session

        bad = [t for t in self.profile if t not in session.TOOLS]
        if bad:
            raise InputError(f"--profile takes one of {', '.join(session.TOOLS)} (or cupti,ncu), "
                             f"not {','.join(self.profile)!r}")
        external = [t for t in self.profile if t != "cupti"]
        if len(external) > 1:
            raise InputError(f"--profile: one external profiler per run, not {', '.join(external)}")
        ext = session.external
        if self.ncu_clock_control not in ext.CLOCK_CONTROLS or self.ncu_cache_control not in ext.CACHE_CONTROLS:
            raise InputError(f"--ncu-clock-control takes {' or '.join(ext.CLOCK_CONTROLS)}, "
                             f"--ncu-cache-control {' or '.join(ext.CACHE_CONTROLS)}")


@dataclass
class RunOutcome:
    """What a finished run returns: its record (also at `path`), the profiles to show, and a failure
    of the external profiler that the CUPTI part or the user kernels' own runs survived."""

    record: RunRecord
    path: Path
    profiles: list[ProfileSet] = field(default_factory=list)
    profiler_failure: ProfilerFailed | None = None

    @property
    def failed(self) -> list[VariantResult]:
        return [r for r in self.record.results if r.status == "failed"]

    @property
    def summary(self) -> dict:
        """The profile part of the record as plain data ({} when not profiled)."""
        from profconv.records import to_builtins

        return to_builtins(self.record.profile) if self.record.profile is not None else {}


def load_kernels(paths: list[str], contract: str | None) -> list[user_manifest.Declaration]:
    from profconv.run.variants import VARIANTS

    return user_manifest.load_many(paths, contract, {v.name for v in VARIANTS})


def _user_result(d: user_manifest.Declaration, job: isolate.KernelJob, sanitize: bool, have_gpu: bool, progress,
                 cupti_records: Path | None = None, profiled: bool = True) -> tuple[VariantResult, Records | None]:
    """A user kernel checked and timed in its child process (with `cupti_records`, under CUPTI: the
    child's activity comes back to be profiled with ours; what keeps it from coming is the kernel's note)."""
    from profconv.profile import cupti_child
    from profconv.profile.activity import Records
    from profconv.run.user.contracts import UserKernel

    prov = UserKernel(d).provenance()
    if d.error:  # not recognised: its FAILED row, GPU or not, no child started
        return isolate.run_isolated(d, prov, job, progress), None
    if not have_gpu:
        return VariantResult(job.images, d.name, f"user kernel ({d.contract})", d.precision, status="skipped",
                             error="needs CUDA and CuPy", user=prov), None
    wrap = None if cupti_records is None else (lambda argv: cupti_child.wrap(cupti_records, argv, not profiled))
    res = isolate.run_isolated(d, prov, job, progress, sanitize=sanitize, wrap=wrap)
    res.variant = d.name  # the name made unique here, whatever the child read from the manifest
    records = None
    if cupti_records is not None:
        raw, why = cupti_child.read(cupti_records)
        try:
            records = Records.from_dict(raw) if raw is not None else None
        except ValueError as exc:
            why = str(exc)
        if records is None:
            isolate.note(res, f"CUPTI: {why}; its kernels are not in the CUPTI tables" if profiled else
                         f"CUPTI: {why}; the verdict has no attribution of its GPU work to the call's phases")
        cupti_records.unlink(missing_ok=True)
    return res, records


def _user_ncu(d: user_manifest.Declaration, job: isolate.KernelJob, res: VariantResult, tool_path: str,
              ranges: list[str], settings: NcuSettings, run_dir: Path, everything: bool,
              progress) -> tuple[object | None, dict | None]:
    """A user kernel's child re-run under ncu (`job`: one timed call, no warm-up), replaying only the
    kernels in its NVTX ranges: (ProfileSet, ncu part) or (None, None) with the reason as its note."""
    if res.status != "ok":
        isolate.note(res, "ncu: not profiled (the kernel FAILED its checks)")
        return None, None
    from profconv.profile import session
    from profconv.run.user.contracts import UserKernel

    log = run_dir / f"ncu-{d.name}.log"
    under, output = isolate.run_under(
        d, UserKernel(d).provenance(), job, progress, tag="ncu",
        wrap=lambda argv: session.external.ncu_argv(tool_path, argv, ranges, settings=settings, everything=everything))
    write_atomic(log, output)
    csv = session.ncu_csv(output)
    if not csv:
        why = (f"its run under ncu failed: {under.error}" if under.status != "ok" else
               f"ncu profiled no kernel inside {', '.join(ranges)}")
        isolate.note(res, f"ncu: {why} (log: {log.name})")
        return None, None
    if under.status != "ok":  # the child's own strict checks (fp32 tolerance): the kernel ran, its counters hold
        isolate.note(res, f"ncu: under ncu its strict checks said: {under.error} (the verdict is the run's; the "
                          "counters are kept)")
    return session.ncu_part(csv, run_dir / f"ncu-{d.name}.csv", log, job.repeat + job.warmup,
                            {"tool": "ncu", "argv": session.external.ncu_argv(tool_path, [], ranges, settings=settings,
                                                                             everything=everything),
                             **settings.as_dict()}, everything)


def _sweep_plan(run_dir: Path) -> dict[str, str]:
    """Write this process's sweep choices to the run directory; the environment that hands them to a
    child run (run/sweep.py PLAN_ENV), or {} when nothing was swept."""
    from profconv.run import sweep

    plan = sweep.export_plan()
    if not plan:
        return {}
    path = run_dir / "sweep-plan.json"
    write_atomic(path, json.dumps(plan, indent=1, sort_keys=True))
    return {sweep.PLAN_ENV: str(path.resolve())}


@contextlib.contextmanager
def _environ(extra: dict[str, str]):
    """os.environ with `extra` set for the duration (a child process started inside inherits it)."""
    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class RunSession:
    """One `profconv run`: `RunSession(request, callbacks).run()` -> RunOutcome (see the module doc)."""

    def __init__(self, request: RunRequest, callbacks: Callbacks | None = None) -> None:
        self.request = request
        self.cb = callbacks or Callbacks()
        self.recording = Recording(request.out, RECORD, "", replace=request.replace)
        self.record: RunRecord | None = None
        self.skip: dict[str, str] = {}

    # --- before any work -------------------------------------------------------------------------
    def prepare(self) -> None:
        """Check the request, load the model, weights and kernels, decide what runs on this machine."""
        from profconv.profile import session
        from profconv.run import weights as weights_mod
        from profconv.run.variants import get_variants

        req = self.request
        self.model: Model = get_model(req.model)
        req.check()
        check_out(req.out, RECORD, req.replace)
        self.chosen = get_variants(req.variants) if req.variants is None or req.variants else []
        self.kernels = load_kernels(req.kernels, req.contract)
        from profconv import judge

        judge.choose(req.course, self.model.name)  # an unknown --course: one line, before any work
        if not self.chosen and not self.kernels:
            raise InputError("--variant none leaves nothing to run: add --kernel PATH")
        self.external = next((t for t in req.profile if t != "cupti"), None)
        self.ncu_settings = session.external.NcuSettings(req.ncu_clock_control, req.ncu_cache_control)
        self.params = weights_mod.load(self.model, req.weights)
        self.cp = gpu.cupy_or_none()
        self._decide_skips()

    def _decide_skips(self) -> None:
        """What this machine cannot run: one GpuUnavailable when nothing could, else notes and `skip`."""
        from profconv.run.variants import cudnn_unavailable

        req, cb = self.request, self.cb
        if req.profile and self.cp is None:
            raise GpuUnavailable(f"--profile {','.join(req.profile)} needs a CUDA GPU and CuPy: {gpu.why_no_gpu()}")
        if self.cp is None:
            self._skip_without_gpu()
        elif any(v.device == "cudnn" for v in self.chosen) and (why := cudnn_unavailable()):
            for v in self.chosen:
                if v.device == "cudnn":
                    self.skip[v.name] = f"cuDNN reference needs PyTorch with CUDA ({why})"
                    cb.note(Note(self.skip[v.name], "warning", f"{v.name} skipped"))
        if self.kernels and self.external in ("nsys", "nvprof"):
            cb.note(Note(f"--profile {self.external} covers the built-in variants; your kernels are profiled with "
                         "--profile cupti or ncu", "warning"))
        if req.data is None:
            from profconv.run.data import SYNTHETIC_NOTE

            cb.note(Note(SYNTHETIC_NOTE, "detail"))

    def _skip_without_gpu(self) -> None:
        """No CUDA: the GPU variants and the runnable kernels are skipped (said once each), or, when nothing
        else would run, one GpuUnavailable naming them (a kernel refused by its manifest still gets its row)."""
        cb, reason = self.cb, gpu.why_no_gpu()
        gpu_variants = [v for v in self.chosen if v.device != "cpu"]
        runnable = [d for d in self.kernels if not getattr(d, "error", None)]  # others: a FAILED row, no GPU needed
        if not any(v.device == "cpu" for v in self.chosen) and len(runnable) == len(self.kernels):
            names = [*(v.name for v in gpu_variants), *(f"your kernel {d.name}" for d in runnable)]
            checked = "; ".join(f"your kernel {d.name}: its manifest and contract ({d.contract}) were checked: OK"
                                for d in runnable)
            raise GpuUnavailable(f"{', '.join(names)} need{'s' if len(names) == 1 else ''} CUDA and CuPy "
                                 f"— {reason}; `--variant cpu` runs the CPU reference" + (f"; {checked}" if checked else ""))
        for v in gpu_variants:
            self.skip[v.name] = "needs CUDA and CuPy"
        if gpu_variants:
            cb.note(Note(f"they need CUDA and CuPy — {reason}; running the CPU reference only.", "warning",
                         "GPU variants skipped"))
        if runnable:
            many = len(runnable) > 1
            cb.note(Note(f"{', '.join(d.name for d in runnable)} need{'' if many else 's'} CUDA and CuPy; recorded as "
                         "skipped.", "warning", f"your kernel{'s' if many else ''} skipped"))

    def _new_record(self) -> RunRecord:
        req, m = self.request, self.model
        stamp = datetime.now(timezone.utc)
        self.recording.stem = f"{m.name}-{stamp.strftime('%Y%m%d-%H%M%S')}"
        self.env = gpu.environment(self.cp)
        return RunRecord(
            argv=isolate.redact_secret(list(req.argv) if req.argv is not None else ["profconv", *sys.argv[1:]]),
            created=stamp.isoformat(), environment=struct_from(Environment, self.env),
            model=struct_from(ModelInfo, {
                "name": m.name, "semester": m.semester, "input_shape": list(m.input_shape), "spec": m.spec,
                "reference_accuracy": m.reference_accuracy,
                "conv_layers": [{"layer": layer.name, "shape": s.text()} for layer, s in m.conv_shapes(1)]}),
            data=DataInfo(source=req.data or "synthetic", synthetic=req.data is None, weights=req.weights or "bundled"),
            settings=RunSettings(repeat=req.repeat, warmup=req.warmup, cpu_repeat=req.cpu_repeat, images=list(req.images),
                                 variants=[v.name for v in self.chosen], ci_target=req.ci_target or None,
                                 time_budget_s=req.time_budget if req.ci_target else None,
                                 l2="warm (the same call repeated)",
                                 kernels=[str(d.source or d.where) for d in self.kernels],
                                 kernel_timeout=req.kernel_timeout if self.kernels else None, sanitize=req.sanitize),
        )

    # --- the work ----------------------------------------------------------------------------------
    def run(self) -> RunOutcome:
        """Prepare, time, profile; the record at every step. Interrupted (Ctrl-C, SIGTERM, `stop`)
        raises profconv.errors.Interrupted with the partial record."""
        self.prepare()
        self.record = record = self._new_record()
        run_dir = self.recording.open()
        try:
            return self._run(record, run_dir)
        except KeyboardInterrupt:
            record.interrupted = True
            kept = self.recording.save(record)  # what finished, marked interrupted (no result: the settings)
            raise Interrupted(f"interrupted: partial record in {kept}", record, kept) from None
        except BaseException:
            if not record.results:
                self.recording.withdraw()
            raise

    def _save(self) -> None:
        assert self.record is not None
        self.recording.save(self.record)

    def _on_result(self, res: VariantResult) -> None:
        assert self.record is not None
        self.record.results.append(res)
        self._save()
        self.cb.result(res)
        self.cb.check_stop()

    def _on_progress(self, message: str, done: int | None = None, total: int | None = None) -> None:
        self.cb.progress(message, done, total)
        self.cb.check_stop()

    def _run(self, record: RunRecord, run_dir: Path) -> RunOutcome:
        from profconv.profile import session

        req = self.request
        self.recorder = provenance.Recorder(self.cp)
        record.provenance = struct_from(Provenance, self.recorder.start())
        env = self.env
        if env.get("gpu"):
            self.cb.note(Note(f"GPU: {env['gpu']} (compute capability {env['compute_capability']}), "
                              f"CuPy {env['cupy_version']}"))
        if "cupti" in req.profile:
            session.check_available("cupti", env.get("compute_capability"))
            if gpu.nvtx_started_without_tool():
                raise ProfilerUnavailable(
                    "--profile cupti: this Python process made NVTX calls before CUPTI was loaded (an earlier run in "
                    "it), so CUPTI would not see profconv's ranges; profile in a new process (the profconv command, "
                    "or a fresh notebook kernel)")
        self.tool_path = (session.check_available(self.external, env.get("compute_capability"))
                          if self.external else None)
        collector = session.CuptiCollector() if "cupti" in req.profile else None
        builds = tempfile.TemporaryDirectory(prefix="profconv-builds-")  # each kernel's, shared by its children
        with builds:
            child_records = self._time(collector, builds.name, run_dir)
            outcome = RunOutcome(record, self.recording.path)
            summary: dict = {}
            if collector is not None:
                profiled, summary = session.cupti_results(collector, run_dir, " ".join(record.argv), req.show_all,
                                                          children=child_records)
                outcome.profiles.append(profiled)
            prov = self.recorder.finish(None)  # the GPU state at the end of the timed run, before any re-run
            summary = self._external(summary, run_dir, outcome)
            summary = self._user_kernels_ncu(summary, builds.name, run_dir, outcome)
        self._finish(summary, prov)
        return outcome

    def _time(self, collector, builds: str, run_dir: Path) -> list[Records]:
        """Every built-in variant, then every user kernel (judged by the course's rules), at every image count."""
        from profconv.judge.assemble import apply as judge_result
        from profconv.run import runner

        req, m = self.request, self.model
        rule = gpu.StopRule(req.ci_target, req.time_budget) if req.ci_target > 0 else None
        child_records: list[Records] = []  # the user kernels' child processes' CUPTI activity
        with collector if collector is not None else contextlib.nullcontext():
            runner.execute(m, self.params, self.chosen, list(req.images),
                           runner.RunOptions(images=req.images[0], repeat=req.repeat, warmup=req.warmup,
                                             cpu_repeat=req.cpu_repeat, data_dir=req.data, rule=rule),
                           self.cp, self._on_progress, self._on_result, self.skip)
        if self.cp is not None:  # nvcc for every host and course kernel at once, before they run in turn
            cc = self.cp.cuda.Device().compute_capability
            isolate.prebuild(self.kernels, Path(builds), f"sm_{cc}")
        for count in req.images:
            for d in self.kernels:
                job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract,
                                        model=m.name, images=count, repeat=req.repeat, warmup=req.warmup,
                                        data=req.data, weights=req.weights, timeout=d.timeout or req.kernel_timeout,
                                        ci_target=req.ci_target or None, time_budget=req.time_budget,
                                        build_dir=str(Path(builds) / d.name), **isolate.seed_fields(req.secret_seed))
                # the child always runs under CUPTI: its GPU work is placed in prolog / timed call / epilog
                res, recs = _user_result(d, job, req.sanitize, self.cp is not None, self._on_progress,
                                         run_dir / f".cupti-{d.name}-{count}.json", profiled=collector is not None)
                if recs is not None and collector is not None:
                    child_records.append(recs)
                self._on_result(judge_result(res, None, recs, Path(builds) / d.name, course=req.course, model=m.name))
        return child_records

    def _external(self, summary: dict, run_dir: Path, outcome: RunOutcome) -> dict:
        """The GPU variants re-run in a child process under nsys, nvprof or ncu."""
        from profconv.profile import session

        req, m, ext = self.request, self.model, self.external
        gpu_variants = [v.name for v in self.chosen if v.device != "cpu" and v.name not in self.skip]
        if ext is None or self.tool_path is None or not gpu_variants:
            return summary
        child = session.external.ChildRun(m.name, req.images[-1], gpu_variants, run_dir / f"{ext}-child", req.data,
                                          req.weights, layers=tuple(layer.name for layer, _ in m.conv_shapes(1)))
        self.cb.note(Note(f"re-running the GPU variants under {ext} ({' '.join(child.argv()[2:])})"))
        self.cb.progress(f"re-running the GPU variants under {ext}", None, None)
        plan_env = _sweep_plan(run_dir)  # the child builds the configurations this run's sweeps chose
        try:
            with _environ(plan_env):
                profiled, ext_summary = session.external_results(ext, self.tool_path, child, run_dir,
                                                                 req.profile_timeout, everything=req.show_all,
                                                                 ncu_settings=self.ncu_settings)
        except ProfilerFailed as exc:
            if not summary and not (ext == "ncu" and self.kernels):
                raise
            outcome.profiler_failure = exc  # the CUPTI part and your kernels' own ncu runs are kept
            return summary
        outcome.profiles.append(profiled)
        return ({**summary, "tools": [*summary.get("tools", []), ext], ext: ext_summary} if summary else ext_summary)

    def _user_kernels_ncu(self, summary: dict, builds: str, run_dir: Path, outcome: RunOutcome) -> dict:
        """Each user kernel's timed op re-run under ncu in a child process of its own."""
        from profconv.profile import session

        req, m, record = self.request, self.model, self.record
        assert record is not None
        if self.external != "ncu" or self.tool_path is None:
            return summary
        layers = [layer.name for layer, _ in m.conv_shapes(1)]
        for d in self.kernels:
            res = next(r for r in record.results if r.variant == d.name and r.images == req.images[-1])
            if res.status == "skipped":
                continue
            self.cb.note(Note(f"re-running your kernel {d.name} under ncu (its timed op only)"))
            job = isolate.KernelJob(kernel=str(user_manifest.reload_path(d)), contract=d.contract, model=m.name,
                                    images=req.images[-1], repeat=1, warmup=0, data=req.data, weights=req.weights,
                                    timeout=req.profile_timeout, build_dir=str(Path(builds) / d.name),
                                    layers_only=True, **isolate.seed_fields(req.secret_seed))
            ps_user, part = _user_ncu(d, job, res, self.tool_path, [f"{m.name}/{d.name}/{lay}" for lay in layers],
                                      self.ncu_settings, run_dir, req.show_all, lambda msg: None)
            if part is not None:
                summary = session.with_user_ncu(summary, part, d.name)
                outcome.profiles.append(ps_user)  # type: ignore[arg-type]
        self._save()  # the notes of kernels ncu could not cover
        return summary

    def _finish(self, summary: dict, prov: dict[str, Any]) -> None:
        """The profile part, the agreement table and the provenance into the record; the last write."""
        from profconv.profile import session

        record, m = self.record, self.model
        assert record is not None
        if summary:
            prov["profiler"] = {t: (summary.get(t) or summary).get("settings")
                                for t in summary.get("tools", [summary.get("tool")])}
            op_times = {f"{m.name}/{r.variant}/{c.layer}": c.op_time.median_s for r in record.results
                        if r.images == self.request.images[-1] for c in r.conv if c.status == "ok" and c.op_time}
            agree = session.agreement_frame(summary, op_times)
            if not agree.empty and (summary.get("ops") or summary.get("tool") == "ncu"):
                summary["agreement"] = session.agreement_records(agree)
            record.profile = struct_from(ProfileInfo, summary)
        record.provenance = struct_from(Provenance, prov)
        self._save()
