"""Model weights: seeded layers regenerated on load plus the trained last layer from the bundle.

Only the last fully connected layer of each model is trained (closed-form ridge regression on
the features of the seeded layers, see scripts/make_bundle.py); everything else is drawn from
a fixed seed. That keeps the bundle a few kilobytes and bit-for-bit reproducible. A user's
`--weights FILE.npz` gives any of `conv1.w`, `conv1.b`, `fc1.w`, `fc1.b`, … and overrides.
"""

from __future__ import annotations

import zipfile
from importlib import resources
from pathlib import Path

import numpy as np

from profconv.errors import DataFileError
from profconv.run.models import Model

BUNDLE = "weights.npz"


def seeded(model: Model) -> dict[str, np.ndarray]:
    """Every layer's parameters drawn from the model's seed (the last fc is replaced by training)."""
    rng = np.random.default_rng(model.seed)
    params: dict[str, np.ndarray] = {}
    c = model.input_shape[0]
    first = True
    in_scale = 128.0 if model.input_scale == "raw" else 0.3
    fan = model.feature_sizes()
    for layer in model.layers:
        if layer.kind == "conv":
            fan_in = c * layer.k * layer.k
            std = 1.0 / ((in_scale if first else 1.0) * np.sqrt(fan_in))
            params[f"{layer.name}.w"] = (rng.standard_normal((layer.out, c, layer.k, layer.k)) * std).astype(np.float32)
            if layer.bias:
                params[f"{layer.name}.b"] = (rng.standard_normal(layer.out) * 0.1).astype(np.float32)
            c = layer.out
            first = False
        elif layer.kind == "fc":
            n_in = fan[layer.name]
            params[f"{layer.name}.w"] = (rng.standard_normal((n_in, layer.out)) * (2.0 / np.sqrt(n_in))).astype(np.float32)
            params[f"{layer.name}.b"] = (rng.standard_normal(layer.out) * 0.1).astype(np.float32)
    return params


def last_fc(model: Model) -> str:
    return [layer.name for layer in model.layers if layer.kind == "fc"][-1]


def load(model: Model, path: str | None = None) -> dict[str, np.ndarray]:
    params = seeded(model)
    fc = last_fc(model)
    if path is None:
        with resources.files("profconv.data").joinpath(BUNDLE).open("rb") as fh:
            bundle = np.load(fh)
            params[f"{fc}.w"] = bundle[f"{model.name}/{fc}.w"].astype(np.float32)
            params[f"{fc}.b"] = bundle[f"{model.name}/{fc}.b"].astype(np.float32)
        return params
    try:
        user = np.load(Path(path))  # allow_pickle stays False: a weights file never runs code
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such weights file") from None
    except IsADirectoryError:
        raise DataFileError(f"{path}: is a directory, not a .npz weights file") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        raise DataFileError(f"{path}: not a NumPy .npz weights file (write one with numpy.savez)") from None
    if not hasattr(user, "files"):
        raise DataFileError(f"{path}: a single .npy array, not a .npz of named arrays (write one with numpy.savez)")
    for key in user.files:
        if key not in params:
            raise DataFileError(f"{path}: unknown array {key!r} for {model.name} (expected some of {', '.join(params)})")
        try:
            array = user[key]
        except (ValueError, OSError, EOFError, zipfile.BadZipFile):  # object arrays (pickles), a bad CRC, a cut file
            raise DataFileError(f"{path}: {key} is not a plain numeric array (pickled objects are never loaded)") from None
        if array.shape != params[key].shape:
            raise DataFileError(f"{path}: {key} has shape {array.shape}, {model.name} needs {params[key].shape}")
        if array.dtype.kind not in "fiu":
            raise DataFileError(f"{path}: {key} holds {array.dtype} values, not real numbers")
        if not np.isfinite(array).all():
            raise DataFileError(f"{path}: {key} holds NaN or infinite values")
        params[key] = array.astype(np.float32)
    return params
