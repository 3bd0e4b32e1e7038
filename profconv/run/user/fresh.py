"""Fresh inputs for every timed call, with a known right answer and no new reference pass.

Each call gets the layer's input with its images rotated by `roll` places and each image scaled by
its own power of two with a sign (±½, ±1, ±2): new values (and new buffers) every call, so an output
cached by pointer, replayed from a previous call or computed once is wrong, while the right output is
the reference's own transformed the same way — exactly, since a convolution is linear per image and
scaling by a power of two rounds the same in fp32, TF32 and fp16. `undo` maps an output back to the
reference's order and scale, so one float64 reference serves every call.

The transforms come from a seed (`--secret-seed`: one the student never sees) and never repeat the
previous call's, nor the identity (the check call's own inputs). Pure: NumPy or CuPy arrays (`xp`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

SCALES = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])


@dataclass(frozen=True)
class Transform:
    roll: int
    scales: tuple[float, ...]  # one per image

    @property
    def identity(self) -> bool:
        return self.roll == 0 and all(s == 1.0 for s in self.scales)

    def _s(self, xp: Any, dtype: Any) -> Any:
        return xp.asarray(np.array(self.scales, dtype=np.float64).reshape(-1, 1, 1, 1), dtype=dtype)

    def apply(self, xp: Any, a: Any, out: Any = None) -> Any:
        """The call's input: images rolled, each scaled (a new array, or written into `out`)."""
        y = xp.roll(a, self.roll, axis=0) * self._s(xp, a.dtype)
        if out is not None:
            out[...] = y
            return out
        return y

    def undo(self, xp: Any, y: Any) -> Any:
        """An output of the call's input mapped back to the untransformed input's output (exact)."""
        return xp.roll(y / self._s(xp, y.dtype), -self.roll, axis=0)


def seed_for(seed: int, *names: object) -> int:
    """A stable 63-bit seed for one use (layer, call) of the run's seed."""
    h = hashlib.sha256(repr((seed, *names)).encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def transforms(seed: int, batch: int, layer: str, previous: Transform | None = None, *, ghost: bool = False):
    """The calls' transforms for a layer of `batch` images, one after another (an endless generator).
    Never the identity, never the previous one; `ghost`: also rolled (batch > 1) so that no image lines up
    with the untransformed input's output a reused buffer may still hold."""
    i = 0
    while True:
        rng = np.random.default_rng(seed_for(seed, layer, i, ghost))
        i += 1
        roll = int(rng.integers(batch)) if batch > 1 else 0
        scales = tuple(float(s) for s in rng.choice(SCALES, size=batch))
        t = Transform(roll, scales)
        if t.identity or t == previous or (ghost and batch > 1 and roll == 0) or (batch == 1 and scales[0] == 1.0):
            continue
        previous = t
        yield t
