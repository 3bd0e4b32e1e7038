"""The child process that checks and times one user kernel: `python -m profconv.run.user.worker JOB.json`.

The job (written by isolate.py) names the model, image count, data, weights, settings and the kernel;
the result (a VariantResult as JSON) is rewritten after every layer, so a hang or a crash keeps the
layers that finished. Progress goes to stderr as `profconv-progress: <what>` lines.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROGRESS = "profconv-progress: "


def progress(msg: str) -> None:
    print(PROGRESS + msg, file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    from profconv.records import encode
    from profconv.run import gpu, runner
    from profconv.run import weights as weights_mod
    from profconv.run.models import get_model
    from profconv.run.record import VariantResult, write_atomic
    from profconv.run.user import checks, contracts, manifest

    result_path = Path(job["result"])

    def write(res: VariantResult) -> None:
        write_atomic(result_path, encode(res))

    decl = manifest.load(job["kernel"], job.get("contract"))
    variant, kernel = contracts.user_variant(decl, contracts.UserKernel(decl, Path(job["build_dir"])))
    try:
        cp = gpu.require_cupy()
        if job.get("sanitize"):  # one cudaMalloc per array: memcheck sees each array's own bounds, not a pool's
            cp.cuda.set_allocator(None)
            cp.cuda.set_pinned_memory_allocator(None)
        model = get_model(job["model"])
        params = weights_mod.load(model, job.get("weights"))
        rule = gpu.StopRule(job["ci_target"], job.get("time_budget", 2.0)) if job.get("ci_target") else None
        opts = runner.RunOptions(images=job["images"], repeat=job["repeat"], warmup=job["warmup"],
                                 data_dir=job.get("data"), rule=rule)
        run = runner.Runner(model, params, cp)
        ds = runner.load_inputs(model, opts)
        x = cp.asarray(ds.images)
        progress(f"{model.name}: reference pass on {opts.images} images")
        conv_io = run.reference_pass(x)
        res = checks.run_user(run, variant, kernel, x, ds.labels, conv_io, opts, gpu.environment(cp), progress, write,
                              layers_only=bool(job.get("layers_only")))
    except Exception as exc:  # anything before the first layer: one failed row with the reason
        res = VariantResult(job["images"], variant.name, variant.technique, variant.precision, status="failed",
                            error=contracts.first_line(exc), user=dict(variant.provenance))
    write(res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
