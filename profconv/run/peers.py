"""cuDNN peers at their best: every precision in both layouts, as a PyTorch user would run them.

A kernel is only as fast as the best thing a user could call instead. Through PyTorch that is
cuDNN in benchmark mode, and its speed depends on the layout and the precision:

| peer               | precision | layout                  | what it is                                      |
|--------------------|-----------|-------------------------|-------------------------------------------------|
| cudnn              | fp32      | NCHW                    | strict fp32 (TF32 off)                          |
| cudnn-nhwc         | fp32      | channels-last (NHWC)    | strict fp32                                     |
| cudnn-tf32         | tf32      | NCHW                    | PyTorch's default for fp32 convolutions         |
| cudnn-tf32-nhwc    | tf32      | channels-last           |                                                 |
| cudnn-fp16         | fp16      | NCHW                    |                                                 |
| cudnn-fp16-nhwc    | fp16      | channels-last           | what a performance-minded user picks            |
| cudnn-bf16         | bf16      | NCHW                    | shown next to fp16                              |
| cudnn-bf16-nhwc    | bf16      | channels-last           |                                                 |

The operands are converted to the peer's dtype and memory format *before* timing (`operands`):
the timed call is `torch.nn.functional.conv2d` alone, on tensors already in that layout. The
result stays in the peer's layout; `to_cupy` turns it into a float CuPy array for the check.
cuDNN's algorithm search (benchmark mode) runs on the first call of a shape inside an NVTX range
'tune', so profiles show it apart from the timed op.

A variant is compared with the fastest peer of its own precision (`best_peer`), the layout named:
fp32 variants with the faster of cudnn and cudnn-nhwc, fp16 ones with the faster fp16 peer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profconv.run import gpu
from profconv.run.models import ConvShape


@dataclass(frozen=True)
class Peer:
    name: str
    precision: str  # fp32 | tf32 | fp16 | bf16
    layout: str  # NCHW | NHWC
    tf32: bool = False

    @property
    def torch_dtype(self) -> str:
        return {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}[self.precision]


PEERS = [Peer("cudnn", "fp32", "NCHW"), Peer("cudnn-nhwc", "fp32", "NHWC"),
         Peer("cudnn-tf32", "tf32", "NCHW", tf32=True), Peer("cudnn-tf32-nhwc", "tf32", "NHWC", tf32=True),
         Peer("cudnn-fp16", "fp16", "NCHW"), Peer("cudnn-fp16-nhwc", "fp16", "NHWC"),
         Peer("cudnn-bf16", "bf16", "NCHW"), Peer("cudnn-bf16-nhwc", "bf16", "NHWC")]
BY_NAME = {p.name: p for p in PEERS}
TOLERANCE = {"fp32": 1e-5, "tf32": 5e-3, "fp16": 5e-3, "bf16": 3e-2}
"""Largest relative L2 error accepted: TF32 keeps 10 mantissa bits (like fp16) and bf16 7."""
ARITHMETIC = {"fp32": "fp32", "tf32": "tensor-tf32", "fp16": "tensor-fp16", "bf16": "tensor-fp16"}
"""Which datasheet peak bounds each peer (TF32 and bf16 run on the tensor cores; bf16 has the fp16 rate)."""
COMPARED_WITH = {"fp32": ("fp32",), "tf32": ("tf32",), "fp16": ("fp16",)}
"""A variant's precision -> the peer precisions its ratio is taken against (best of them)."""


def peer_of(name: str) -> Peer | None:
    return BY_NAME.get(name)


def _torch_tensor(cp: Any, a: Any, peer: Peer):
    import torch

    t = torch.as_tensor(cp.ascontiguousarray(a), device="cuda").to(getattr(torch, peer.torch_dtype))
    if peer.layout == "NHWC" and t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    return t.contiguous()


def operands(cp: Any, peer: Peer, a: Any, w: Any, bias: Any | None) -> tuple[Any, Any, Any | None]:
    """Input, filters and bias as torch tensors in the peer's dtype and layout (untimed)."""
    x = _torch_tensor(cp, a, peer)
    wt = _torch_tensor(cp, w, peer)
    bt = None if bias is None else _torch_tensor(cp, bias, Peer(peer.name, peer.precision, "NCHW"))
    return x, wt, bt


_searched: set[tuple] = set()


def launch(peer: Peer, x: Any, w: Any, bias: Any | None, s: ConvShape) -> Any:
    """One cuDNN convolution through PyTorch; the first call of a shape (cuDNN's algorithm search in
    benchmark mode) inside an NVTX range 'tune'."""
    import torch

    cudnn = torch.backends.cudnn
    if cudnn.allow_tf32 != peer.tf32:  # a cheap flag; part of cuDNN's benchmark cache key
        cudnn.allow_tf32 = peer.tf32
    key = (peer.name, s.B, s.M, s.C, s.H, s.W, s.K, s.P, x.device.index)
    if key not in _searched:
        with gpu.nvtx_range("tune"):
            y = torch.nn.functional.conv2d(x, w, bias, padding=s.P)
            torch.cuda.synchronize()
        _searched.add(key)
        return y
    return torch.nn.functional.conv2d(x, w, bias, padding=s.P)


def plain_loop(peer: Peer, x: Any, w: Any, bias: Any | None, s: ConvShape, calls: int = 20,
               rounds: int = 5) -> list[float]:
    """What a user's own timing loop measures: `for _ in range(calls): conv2d(x, w, bias, padding=P)`
    between two CUDA events, per call, once per round (after 3 untimed calls), on the peer's own
    operands and flags. The bench's peer must not be slower than this (`PeerCheck`)."""
    import torch

    torch.backends.cudnn.allow_tf32 = peer.tf32
    conv = torch.nn.functional.conv2d
    for _ in range(3):
        conv(x, w, bias, padding=s.P)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            conv(x, w, bias, padding=s.P)
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) / 1e3 / calls)
    return per_call


def to_cupy(cp: Any, y: Any) -> Any:
    """A launch's result as a CuPy array for the check: torch tensors (any layout) become a float32
    or float16 NCHW-indexed view or copy (bf16 has no CuPy dtype: converted to float32, untimed)."""
    if type(y).__module__.startswith("torch"):
        import torch

        if y.dtype == torch.bfloat16:
            y = y.float()
        return cp.asarray(y)
    return cp.asarray(y)


def best_peer(times: dict[str, float], precision: str) -> str | None:
    """The fastest measured peer whose precision is compared with `precision` (None when none ran)."""
    allowed = COMPARED_WITH.get(precision, (precision,))
    cands = [(t, n) for n, t in times.items() if n in BY_NAME and BY_NAME[n].precision in allowed and t]
    return min(cands)[1] if cands else None


def best_per_precision(times: dict[str, float]) -> dict[str, str]:
    """precision -> the fastest peer of it among `times` (name -> median seconds)."""
    out: dict[str, str] = {}
    for prec in ("fp32", "tf32", "fp16", "bf16"):
        cands = [(t, n) for n, t in times.items() if n in BY_NAME and BY_NAME[n].precision == prec and t]
        if cands:
            out[prec] = min(cands)[1]
    return out


def kernels_of(fn) -> list[str]:
    """Short names of the GPU kernels one call of `fn` launches (torch.profiler): which algorithm
    cuDNN's search chose. The profiler hooks CUPTI into the process, so benches call this only when
    asked (`profconv bench --cudnn-kernels`), after a layer's timing."""
    import torch

    from profconv.parse.names import short_name

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return sorted(short_name(n) for n in names)
