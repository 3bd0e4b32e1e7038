"""Labelled images: the bundled synthetic set, Fashion-MNIST IDX files and CIFAR-10 batches.

All loaders return (images float32 N x C x H x W in the model's input scale, labels int64 N).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from profconv.errors import DataFileError
from profconv.io import gunzip
from profconv.run.models import Model

SYNTHETIC_NOTE = (
    "synthetic data: a deterministic 10-class image set made by profconv (not Fashion-MNIST or "
    "CIFAR-10); its Correctness cannot be compared with the course's published accuracy"
)


@dataclass(frozen=True)
class Dataset:
    images: np.ndarray
    labels: np.ndarray
    source: str  # "synthetic" or the files read
    synthetic: bool


# ------------------------------------------------------------------ synthetic


def _templates(channels: int, size: int, seed: int) -> np.ndarray:
    """10 class templates in [0, 1]: a few Gaussian blobs and a bar per class."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) / size
    out = np.zeros((10, channels, size, size))
    for c in range(10):
        for ch in range(channels):
            img = np.zeros((size, size))
            for _ in range(3):
                cy, cx = rng.uniform(0.2, 0.8, 2)
                s = rng.uniform(0.06, 0.16)
                img += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
            angle = rng.uniform(0, np.pi)
            d = np.abs((yy - 0.5) * np.cos(angle) - (xx - 0.5) * np.sin(angle))
            img += 0.8 * np.exp(-(d**2) / (2 * 0.04**2))
            out[c, ch] = img / img.max()
    return out


def synthetic(model: Model, count: int, split: str = "test") -> Dataset:
    """The first `count` images of a deterministic set; image i is the same whatever `count` is."""
    channels = model.input_shape[0]
    native = 32 if model.data == "cifar" else 28
    templates = _templates(channels, native, seed=408 if model.data == "fashion" else 10)
    base = {"test": 1, "train": 2}[split]
    chunks = []
    for chunk in range((count + 999) // 1000):
        rng = np.random.default_rng([base, chunk, native])
        n = 1000  # whole chunks, then cut: image i never depends on `count`
        labels = rng.integers(0, 10, n)
        other = rng.integers(0, 10, n)
        mix = rng.uniform(0.0, 0.45, n)[:, None, None, None]
        imgs = (1 - mix) * templates[labels] + mix * templates[other]
        shifts = rng.integers(-3, 4, (n, 2))
        for i in range(n):
            imgs[i] = np.roll(imgs[i], tuple(shifts[i]), axis=(1, 2))
        imgs = imgs * rng.uniform(0.5, 1.0, (n, 1, 1, 1)) + rng.normal(0, 0.15, imgs.shape)
        chunks.append(((np.clip(imgs, 0, 1) * 255).astype(np.uint8), labels))
    pixels = np.concatenate([c[0] for c in chunks])[:count]
    labels = np.concatenate([c[1] for c in chunks]).astype(np.int64)[:count]
    pixels = upscale(pixels, model.input_shape[1])
    return Dataset(scale(model, pixels), labels, "synthetic", True)


def upscale(pixels: np.ndarray, size: int) -> np.ndarray:
    """Nearest-neighbour resize to size x size, as the course upscaled 28x28 Fashion-MNIST."""
    n, c, h, w = pixels.shape
    if h == size:
        return pixels
    idx = (np.arange(size) * h // size).astype(np.intp)
    return np.ascontiguousarray(pixels[:, :, idx][:, :, :, idx])


def scale(model: Model, pixels: np.ndarray) -> np.ndarray:
    x = pixels.astype(np.float32)
    x = x if model.input_scale == "raw" else x / np.float32(255.0) - np.float32(0.5)
    return np.ascontiguousarray(x)


# ------------------------------------------------------------------ IDX (Fashion-MNIST)


def _read_maybe_gz(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read ({exc.strerror})") from None
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, path, error=DataFileError)
    return data


def read_idx(path: Path, kind: str) -> np.ndarray:
    """IDX images (magic 2051) or labels (2049), big-endian; also the course's upscaled files
    (magic 0, little-endian header fields)."""
    data = _read_maybe_gz(path)
    header = 16 if kind == "images" else 8
    if len(data) < header:
        raise DataFileError(f"{path}: {len(data)} bytes, too short for an IDX {kind} header")
    magic_be = struct.unpack(">i", data[:4])[0]
    want = 2051 if kind == "images" else 2049
    if magic_be == want:
        fields = struct.unpack(">" + "i" * (header // 4 - 1), data[4:header])
    elif magic_be == 0:
        fields = struct.unpack("<" + "i" * (header // 4 - 1), data[4:header])
    else:
        raise DataFileError(f"{path}: not an IDX {kind} file (magic {magic_be}, expected {want})")
    count = fields[0]
    per_item = fields[1] * fields[2] if kind == "images" else 1
    if count <= 0 or per_item <= 0:
        raise DataFileError(f"{path}: bad IDX header (count {count})")
    body = np.frombuffer(data, dtype=np.uint8, offset=header)
    if body.size < count * per_item:
        raise DataFileError(f"{path}: truncated: header says {count} {kind}, data holds {body.size // per_item}")
    if kind == "images":
        return body[: count * per_item].reshape(count, 1, fields[1], fields[2])
    return body[:count].astype(np.int64)


def _find(directory: Path, names: list[str]) -> Path:
    for name in names:
        for cand in (directory / name, directory / (name + ".gz")):
            if cand.exists():
                return cand
    raise DataFileError(f"{directory}: none of {', '.join(names)} (or .gz) found")


def load_fashion(directory: Path, model: Model) -> Dataset:
    size = model.input_shape[1]
    stems = [f"t10k-{size}-images-idx3-ubyte", "t10k-images-idx3-ubyte"] if size != 28 else ["t10k-images-idx3-ubyte"]
    img_path = _find(directory, stems)
    lbl_path = _find(directory, [s.replace("images-idx3", "labels-idx1") for s in stems])
    images = read_idx(img_path, "images")
    labels = read_idx(lbl_path, "labels")
    if len(images) != len(labels):
        raise DataFileError(f"{img_path}: {len(images)} images but {lbl_path} holds {len(labels)} labels")
    if labels.max(initial=0) > 9:
        raise DataFileError(f"{lbl_path}: labels must be 0-9, found {labels.max()}")
    images = upscale(images, size) if images.shape[2] != size else images
    return Dataset(scale(model, images), labels, f"{img_path}, {lbl_path}", False)


# ------------------------------------------------------------------ CIFAR-10


def read_cifar(path: Path) -> tuple[np.ndarray, np.ndarray]:
    data = _read_maybe_gz(path)
    if len(data) == 0 or len(data) % 3073:
        raise DataFileError(f"{path}: {len(data)} bytes is not a whole number of 3,073-byte CIFAR-10 records")
    rec = np.frombuffer(data, dtype=np.uint8).reshape(-1, 3073)
    labels = rec[:, 0].astype(np.int64)
    if labels.max() > 9:
        raise DataFileError(f"{path}: label {labels.max()} out of range 0-9: not a CIFAR-10 batch")
    return rec[:, 1:].reshape(-1, 3, 32, 32), labels


def load_cifar(directory: Path, model: Model) -> Dataset:
    path = _find(directory, ["test_batch.bin", "data_batch_1.bin"])
    images, labels = read_cifar(path)
    return Dataset(scale(model, images), labels, str(path), False)


def load(model: Model, count: int, directory: str | None) -> Dataset:
    """The first `count` labelled images for `model`: from `directory`, else the synthetic set."""
    if directory is None:
        return synthetic(model, count)
    d = Path(directory)
    if not d.is_dir():
        raise DataFileError(f"{directory}: not a directory")
    ds = load_cifar(d, model) if model.data == "cifar" else load_fashion(d, model)
    if len(ds.labels) < count:
        raise DataFileError(f"{ds.source}: holds {len(ds.labels)} images, {count} requested")
    return Dataset(ds.images[:count], ds.labels[:count], ds.source, False)
