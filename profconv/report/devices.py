"""Datasheet peaks for the efficiency columns; a GPU not listed gets no peak (never a guess)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    fp32_tflops: float  # non-tensor FP32
    dram_tbps: float
    source: str


# Datasheet numbers (SXM parts). FIELD.md measured ~3.0 TB/s (H100) and ~4.3 TB/s (H200)
# device-to-device copies: the floors below are therefore optimistic by 10-15%.
PEAKS: dict[str, Peak] = {
    "H200": Peak(67.0, 4.8, "NVIDIA H200 SXM datasheet"),
    "H100 PCIe": Peak(51.0, 2.0, "NVIDIA H100 PCIe datasheet"),
    "H100": Peak(67.0, 3.35, "NVIDIA H100 SXM datasheet"),
    "A100": Peak(19.5, 2.039, "NVIDIA A100 80GB SXM datasheet"),
    "V100": Peak(15.7, 0.9, "NVIDIA V100 SXM2 datasheet"),
}


def peak_for(gpu: str | None) -> Peak | None:
    if not gpu:
        return None
    for key, peak in PEAKS.items():
        if key in gpu:
            return peak
    return None
