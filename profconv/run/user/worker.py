"""The child process that checks and times one user kernel: `python -m profconv.run.user.worker JOB.json`.

The job (written by isolate.py) names the model, image count, data, weights, settings and the kernel;
the result (a VariantResult as JSON) is rewritten after every layer, so a hang or a crash keeps the
layers that finished. Progress goes to stderr as `profconv-progress: <what>` lines.

`run_job(job, preloaded)` is the same work for a process forked by a long-lived grade worker
(profconv.grade.pool): `preloaded` holds what that worker made once per model -- the weights, the
inputs and the reference pass's per-layer (input, output) on the host -- and the child copies them
to its own device instead of making them again. Everything else (the checks, the timing, the
verdict) is the same code.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROGRESS = "profconv-progress: "
GPU_RELEASED = "GPU released"  # grade.zygote: the kernel's GPU work is over; the CUPTI records follow


_step = [""]  # the step being made (said again after a wait for the GPU)


def progress(msg: str | None) -> None:
    """A step of the child, on stderr (None: the step before a wait for the GPU goes on)."""
    from profconv.run.user.gpushare import WAIT_STEP

    if msg is None:
        msg = _step[0]
    elif msg != WAIT_STEP:
        _step[0] = msg
    if msg:
        print(PROGRESS + msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Preloaded:
    """A model's weights, inputs and reference pass on the host, made once by a grade worker."""

    params: dict[str, Any]
    images: Any  # float32 N x C x H x W
    labels: Any
    conv_io: dict[str, tuple[Any, Any]]  # conv layer -> (its input, the reference output), host arrays

    def on_device(self, cp: Any, x: Any) -> dict[str, tuple[Any, Any]]:
        """The reference pass on the device: the first layer's input is the images already copied (`x`)."""
        from profconv.run.user import hostcopy

        return {name: (x if a is self.images else hostcopy.to_device(cp, a), hostcopy.to_device(cp, ref))
                for name, (a, ref) in self.conv_io.items()}


def main(argv: list[str]) -> int:
    return run_job(json.loads(Path(argv[0]).read_text()))


def run_job(job: dict[str, Any], preloaded: Preloaded | None = None) -> int:
    from profconv.records import encode
    from profconv.run import gpu, runner
    from profconv.run import weights as weights_mod
    from profconv.run.models import get_model
    from profconv.run.record import VariantResult, write_atomic
    from profconv.run.user import checks, contracts, gpushare, manifest
    from profconv.run.user import facts as kernel_facts

    result_path = Path(job["result"])

    def write(res: VariantResult) -> None:
        write_atomic(result_path, encode(res))

    decl = manifest.load(job["kernel"], job.get("contract"))
    variant, kernel = contracts.user_variant(decl, contracts.UserKernel(decl, Path(job["build_dir"])))
    seed, secret = int(job.get("seed") or 0), bool(job.get("secret"))  # --secret-seed: kept out of the record
    try:
        cp = gpu.require_cupy()
        # a GPU shared with other graded children (grade --jobs-per-gpu): this child's steps shared, its timed
        # calls alone (gpushare); held from before the CUDA context is made
        # (`gpu_alone`: run again alone after running out of memory beside another job's child)
        gpushare.start(job.get("gpu_lock"), cp, progress, alone=bool(job.get("gpu_alone")), marks=job.get("gpu_steps"))
        if job.get("sanitize"):  # one cudaMalloc per array: memcheck sees each array's own bounds, not a pool's
            cp.cuda.set_allocator(None)
            cp.cuda.set_pinned_memory_allocator(None)
        model = get_model(job["model"])
        params = preloaded.params if preloaded is not None else weights_mod.load(model, job.get("weights"))
        rule = gpu.StopRule(job["ci_target"], job.get("time_budget", 2.0)) if job.get("ci_target") else None
        opts = runner.RunOptions(images=job["images"], repeat=job["repeat"], warmup=job["warmup"],
                                 data_dir=job.get("data"), rule=rule)
        run = runner.Runner(model, params, cp)
        gpushare.checkpoint()  # the CUDA context and the weights made: a turn waiting goes first
        if preloaded is not None:
            from profconv.run.user import hostcopy

            x, labels = hostcopy.to_device(cp, preloaded.images), preloaded.labels
        else:
            ds = runner.load_inputs(model, opts)
            x, labels = cp.asarray(ds.images), ds.labels
        gpushare.checkpoint()
        # the course's program first: one cold call per layer, before profconv's own reference pass warms cuBLAS
        course = None if job.get("layers_only") else checks.course_pass(run, variant, kernel, x, labels, progress)
        gpushare.checkpoint()
        if preloaded is not None:
            conv_io = preloaded.on_device(cp, x)
        else:
            progress(f"{model.name}: reference pass on {opts.images} images")
            conv_io = run.reference_pass(x)
        res = checks.run_user(run, variant, kernel, x, labels, conv_io, opts, gpu.environment(cp), progress, write,
                              layers_only=bool(job.get("layers_only")), seed=seed, secret=secret, course=course)
    except Exception as exc:  # anything before the first layer: one failed row with the reason (and the facts)
        res = VariantResult(job["images"], variant.name, variant.technique, variant.precision, status="failed",
                            error=contracts.first_line(exc), user=dict(variant.provenance),
                            facts=kernel_facts.start(kernel, job["images"], seed, secret))
        kernel_facts.settle(res, res.error)
    write(res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
