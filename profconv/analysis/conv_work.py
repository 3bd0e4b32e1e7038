"""A conv layer's arithmetic, the facts a diagnosis compares a kernel with. Pure.

- FLOPs: 2 * B * M * C * K^2 * Ho * Wo (one multiply-add per filter tap per output).
- compulsory bytes: each input, weight and output moved once, in the kernel's storage precision.
- reuse the loop nest allows: each input value feeds up to M * K^2 multiply-adds (every output
  channel, every filter tap that covers it); each weight feeds B * Ho * Wo (every output position of
  every image); a kernel that loads an operand once per multiply-add (the naive loop) reuses nothing.
- floors on this GPU: the least time each resource needs for that work (hardware.py peaks).
"""

from __future__ import annotations

from dataclasses import dataclass

from profconv.hardware import Peak
from profconv.run.models import ConvShape


@dataclass(frozen=True)
class LayerWork:
    shape: ConvShape
    itemsize: int  # bytes per stored value: 4 (fp32) or 2 (fp16)

    @property
    def flops(self) -> float:
        return self.shape.flops

    @property
    def fmas(self) -> float:
        return self.shape.flops / 2

    @property
    def input_values(self) -> int:
        s = self.shape
        return s.B * s.C * s.H * s.W

    @property
    def weight_values(self) -> int:
        s = self.shape
        return s.M * s.C * s.K * s.K

    @property
    def output_values(self) -> int:
        s = self.shape
        return s.B * s.M * s.Ho * s.Wo

    @property
    def compulsory_bytes(self) -> float:
        return float(self.itemsize * (self.input_values + self.weight_values + self.output_values))

    @property
    def intensity(self) -> float:
        """FLOPs per compulsory byte: the most reuse the layer allows."""
        return self.flops / self.compulsory_bytes

    @property
    def input_reuse(self) -> int:
        """Multiply-adds each input value can feed (M * K^2, fewer at the borders)."""
        return self.shape.M * self.shape.K * self.shape.K

    @property
    def weight_reuse(self) -> int:
        """Multiply-adds each weight feeds (B * Ho * Wo)."""
        s = self.shape
        return s.B * s.Ho * s.Wo

    @property
    def weight_bytes(self) -> int:
        return 4 * self.weight_values  # as the kernels hold them before any conversion


@dataclass(frozen=True)
class Floors:
    """Seconds each resource needs at its datasheet peak for the layer's work (None: peak unknown):
    DRAM for the compulsory bytes, and the compute floor per arithmetic (fp32, fp16, tensor-fp16,
    tensor-tf32, tensor-3xtf32: hardware.Peak.tflops)."""

    dram_s: float | None
    compute: dict[str, float | None]

    @property
    def fp32_s(self) -> float | None:
        return self.compute.get("fp32")

    @property
    def fp16_s(self) -> float | None:
        return self.compute.get("fp16")

    @property
    def tensor_s(self) -> float | None:
        return self.compute.get("tensor-fp16")

    def compute_s(self, arithmetic: str) -> float | None:
        return self.compute.get(arithmetic, self.fp32_s)

    def roofline_s(self, arithmetic: str) -> float | None:
        c = self.compute_s(arithmetic)
        return None if c is None or self.dram_s is None else max(c, self.dram_s)


ARITHMETICS = ("fp32", "fp16", "tensor-fp16", "tensor-tf32", "tensor-3xtf32")


def floors(work: LayerWork, peak: Peak | None) -> Floors:
    if peak is None:
        return Floors(None, {})

    def at(tflops: float | None) -> float | None:
        return work.flops / (tflops * 1e12) if tflops else None

    return Floors(work.compulsory_bytes / (peak.dram_tbps * 1e12), {a: at(peak.tflops(a)) for a in ARITHMETICS})
