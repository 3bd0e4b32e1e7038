"""The hardware facts in one place: datasheet peaks (a GPU not listed gets no peak, never a guess)
and the roofline floor every part of profconv computes floors with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    fp32_tflops: float  # non-tensor FP32
    dram_tbps: float
    source: str
    fp16_tflops: float | None = None  # non-tensor FP16 (half2)
    tensor_fp16_tflops: float | None = None  # dense FP16 Tensor Core, FP32 accumulate
    tensor_tf32_tflops: float | None = None  # dense TF32 Tensor Core

    def tflops(self, arithmetic: str) -> float | None:
        """The compute peak for `arithmetic` (fp32 | fp16 | tensor-fp16 | tensor-tf32 | tensor-3xtf32),
        None where not published. tensor-3xtf32 (an fp32-accurate product from three TF32 MMAs per
        tile) is a third of the TF32 rate: its floor counts the useful FLOPs at that rate."""
        tf32 = self.tensor_tf32_tflops
        return {"fp32": self.fp32_tflops, "fp16": self.fp16_tflops, "tensor-fp16": self.tensor_fp16_tflops,
                "tensor-tf32": tf32, "tensor-3xtf32": tf32 / 3 if tf32 else None}.get(arithmetic)


# Datasheet numbers (SXM parts); FP16 figures from the architecture whitepapers (dense, no sparsity).
# FIELD.md measured ~3.0 TB/s (H100) and ~4.3 TB/s (H200) device-to-device copies: the memory
# floors from these numbers are optimistic by 10-15% (`profconv bench` measures the bandwidth).
PEAKS: dict[str, Peak] = {
    "H200": Peak(67.0, 4.8, "NVIDIA H200 SXM datasheet; H100 whitepaper (same SM count and clocks)", 133.8, 989.4,
                 494.7),
    "H100 PCIe": Peak(51.0, 2.0, "NVIDIA H100 PCIe datasheet and whitepaper", 102.4, 756.0, 378.0),
    "H100": Peak(67.0, 3.35, "NVIDIA H100 SXM datasheet and whitepaper", 133.8, 989.4, 494.7),
    "A100": Peak(19.5, 2.039, "NVIDIA A100 80GB SXM datasheet and whitepaper", 78.0, 312.0, 156.0),
    "V100": Peak(15.7, 0.9, "NVIDIA V100 SXM2 datasheet and whitepaper", 31.4, 125.0),
}


def peak_for(gpu: str | None) -> Peak | None:
    if not gpu:
        return None
    for key, peak in PEAKS.items():
        if key in gpu:
            return peak
    return None


def roofline_floor(flops: float, nbytes: float, bandwidth_Bps: float | None,
                   peak_flops: float | None) -> tuple[float | None, str | None]:
    """The least time the work can take: max(bytes / bandwidth, FLOPs / peak) in seconds, and which
    bound it is ("memory" or "compute"); (None, None) when either rate is unknown (never a guess)."""
    if not bandwidth_Bps or not peak_flops or bandwidth_Bps != bandwidth_Bps or peak_flops != peak_flops:
        return None, None
    mem, comp = nbytes / bandwidth_Bps, flops / peak_flops
    return max(mem, comp), ("memory" if mem >= comp else "compute")
