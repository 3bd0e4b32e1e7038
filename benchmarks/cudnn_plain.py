"""Why a plain PyTorch loop can beat the bench's cuDNN peer (issue 25): one layer, every peer form.

For each shape and precision/layout it times, in one process, on the same tensors:
  loop+bias   `for _ in range(N): conv2d(x, w, b, padding=P)` between two CUDA events (per call)
  loop        the same without bias (what a hand-written loop often does)
  pair        the bench's warm figure: a call right behind a call of the same op (median)
and lists the kernels one call launches (torch.profiler), so a separate bias-add pass shows.
Prints one line per case; writes nothing else. Needs PyTorch with CUDA.

    python benchmarks/cudnn_plain.py [--images 10000] [--calls 20] [--rounds 7]
"""

from __future__ import annotations

import statistics
import sys

SHAPES = {  # name: (M, C, H, W, K, P, bias)
    "cifar10/conv1": (16, 3, 32, 32, 5, 2, True),
    "cifar10/conv2": (20, 16, 16, 16, 5, 2, True),
    "cifar10/conv3": (20, 20, 8, 8, 5, 2, True),
    "ece408-fa20/conv2": (16, 4, 40, 40, 7, 0, False),
    "ece408-fa19/conv2": (24, 12, 33, 33, 5, 0, False),
}
FORMS = [("fp32", "NCHW"), ("fp32", "NHWC"), ("tf32", "NCHW"), ("tf32", "NHWC"), ("fp16", "NHWC")]


def main(argv: list[str]) -> int:
    import torch
    import torch.nn.functional as F

    opts = {argv[i]: argv[i + 1] for i in range(0, len(argv) - 1, 2)}
    images, calls, rounds = int(opts.get("--images", 10000)), int(opts.get("--calls", 20)), int(opts.get("--rounds", 7))
    torch.backends.cudnn.benchmark = True
    start, end, mid = (torch.cuda.Event(enable_timing=True) for _ in range(3))

    def loop(fn) -> float:
        for _ in range(3):
            fn()
        per = []
        for _ in range(rounds):
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            per.append(start.elapsed_time(end) / calls)
        return statistics.median(per)

    def pair(fn) -> float:
        out = []
        for _ in range(rounds * 3):
            torch.cuda.synchronize()
            fn()
            mid.record()
            fn()
            end.record()
            end.synchronize()
            out.append(mid.elapsed_time(end))
        return statistics.median(out)

    def kernels(fn) -> str:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        return "; ".join(n[:70] for n in dict.fromkeys(names))

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()}; "
          f"{images} images, ms per call (loop: median of {rounds} x {calls} calls; pair: the second of two)")
    for name, (M, C, H, W, K, P, has_bias) in SHAPES.items():
        g = torch.Generator(device="cuda").manual_seed(0)
        x32 = torch.randn(images, C, H, W, device="cuda", generator=g)
        w32 = torch.randn(M, C, K, K, device="cuda", generator=g)
        b32 = torch.randn(M, device="cuda", generator=g)
        for prec, layout in FORMS:
            torch.backends.cudnn.allow_tf32 = prec == "tf32"
            dt = torch.float16 if prec == "fp16" else torch.float32
            fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
            x, w, b = (x32.to(dt).contiguous(memory_format=fmt), w32.to(dt).contiguous(memory_format=fmt), b32.to(dt))

            def with_bias(x=x, w=w, b=b):
                return F.conv2d(x, w, b, padding=P)

            def no_bias(x=x, w=w):
                return F.conv2d(x, w, None, padding=P)

            row = {"loop+bias": loop(with_bias), "pair+bias": pair(with_bias), "loop": loop(no_bias), "pair": pair(no_bias)}
            text = " ".join(f"{k} {v:.4f}" for k, v in row.items())
            print(f"{name} {prec} {layout} bias={has_bias}: {text}", flush=True)
            print(f"    kernels with bias: {kernels(with_bias)}", flush=True)
            del x, w, b
        del x32, w32, b32
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
