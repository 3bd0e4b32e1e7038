"""Regenerate profconv/data/weights.npz: train each model's last layer on the synthetic set.

Deterministic: same numbers on every machine (NumPy default_rng, closed-form ridge). Run
`python scripts/make_bundle.py` after changing a model, its seed or the synthetic data.
`ece408-low` is the same net trained on 40 images with a heavy penalty: weaker on purpose.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profconv.run import data, reference
from profconv.run.models import MODELS
from profconv.run.weights import last_fc, seeded

OUT = Path(__file__).resolve().parent.parent / "profconv" / "data" / "weights.npz"
TRAIN = {"ece408-low": (60, 0.05)}  # model: (training images, ridge penalty)


def features(model, params, x):
    """Activations feeding the last fc layer."""
    layers = model.layers
    cut = max(i for i, layer in enumerate(layers) if layer.kind == "fc")
    a = reference.forward(np, layers[:cut], x, params)
    return a.reshape(len(a), -1).astype(np.float64)


def main() -> None:
    arrays = {}
    for model in MODELS.values():
        n, penalty = TRAIN.get(model.name, (2000, 1e-3))
        params = seeded(model)
        train = data.synthetic(model, n, split="train")
        f = features(model, params, train.images)
        f1 = np.hstack([f, np.ones((len(f), 1))])
        target = np.eye(10)[train.labels] * 4.0 - 2.0
        w = np.linalg.solve(f1.T @ f1 + penalty * len(f) * np.eye(f1.shape[1]), f1.T @ target)
        fc = last_fc(model)
        arrays[f"{model.name}/{fc}.w"] = w[:-1].astype(np.float16)
        arrays[f"{model.name}/{fc}.b"] = w[-1].astype(np.float16)
        params[f"{fc}.w"] = arrays[f"{model.name}/{fc}.w"].astype(np.float32)
        params[f"{fc}.b"] = arrays[f"{model.name}/{fc}.b"].astype(np.float32)
        test = data.synthetic(model, 1000)
        acc = reference.accuracy(np, reference.forward(np, model.layers, test.images, params), test.labels)
        print(f"{model.name:12s} trained on {n:5d} images: accuracy on 1000 test images {acc:.4f}")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
