"""An output of a user's kernel against the float64 reference, in chunks of images (pure: NumPy or CuPy).

The output may be a host array (the course's mini-dnn forms write pageable host memory) or a device
array, and may belong to a transformed input (fresh.py): each chunk is moved to the reference's device,
mapped back (exactly) and compared in float64, so a 1 GB output never needs more than a chunk's worth
of temporaries. Non-finite output elements (NaN poisoning left unwritten, or a kernel's inf) count as
zeros in the error, and are counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from profconv.records.facts import DeterminismFacts, GhostFacts, OutputFacts
from profconv.run.user import gpushare, hostcopy
from profconv.run.user.fresh import Transform

CHUNK_BYTES = 256 << 20
MATCH_RTOL = 1e-3  # an element "matches" the reference within 0.1% of |ref| + the output's rms (ghost check)


@dataclass
class Stats:
    sq_err: float = 0.0
    sq_ref: float = 0.0
    sq_y: float = 0.0
    dot: float = 0.0
    max_abs: float = 0.0
    nonfinite: int = 0
    elements: int = 0
    matched: int = 0

    @property
    def rel_error(self) -> float:
        return math.sqrt(self.sq_err) / (math.sqrt(self.sq_ref) or 1.0)

    @property
    def cosine(self) -> float | None:
        denom = math.sqrt(self.sq_y) * math.sqrt(self.sq_ref)
        return self.dot / denom if denom else None

    def output(self) -> OutputFacts:
        return OutputFacts(rel_error=self.rel_error, max_abs_error=self.max_abs, nonfinite=self.nonfinite,
                           elements=self.elements)

    def ghost(self) -> GhostFacts:
        return GhostFacts(rel_error=self.rel_error, cosine=self.cosine, nonfinite=self.nonfinite,
                          matched=self.matched / self.elements if self.elements else None)


def _on(xp: Any, a: Any) -> Any:
    """A chunk of an output on the reference's device (a host chunk through hostcopy's pinned staging)."""
    return hostcopy.to_device(xp, a) if isinstance(a, np.ndarray) and xp is not np else xp.asarray(a)


def _rows(shape: tuple[int, ...], itemsize: int = 8) -> int:
    per = int(np.prod(shape[1:])) * itemsize or 1
    return max(1, CHUNK_BYTES // per)


def compare(xp: Any, y: Any, ref: Any, t: Transform | None = None, ref_rms: float | None = None) -> Stats:
    """‖y − ref‖ and friends, y being the output of `t` applied to the reference's input (None: of the
    input itself). `xp` is the reference's array module; `ref_rms` (the reference's rms) enables `matched`."""
    st = Stats()
    batch = y.shape[0]
    scales = None if t is None else xp.asarray(np.array(t.scales, dtype=np.float64).reshape(-1, *[1] * (y.ndim - 1)))
    step = _rows(tuple(y.shape))
    for j0 in range(0, batch, step):
        gpushare.checkpoint()  # a chunk is a step: a child of another job waiting to time goes first
        j1 = min(batch, j0 + step)
        yc = _on(xp, y[j0:j1])
        gpushare.note("on device")
        yc = yc.astype(np.float64)
        if t is None or scales is None:
            rc = ref[j0:j1]
        else:  # output position j holds image (j - roll) % batch, scaled by scales[j]
            idx = (np.arange(j0, j1) - t.roll) % batch
            rc = ref[xp.asarray(idx)]
            yc = yc / scales[j0:j1]
        finite = xp.isfinite(yc)
        st.nonfinite += int((~finite).sum())
        yc = xp.where(finite, yc, 0.0)
        d = yc - rc
        st.sq_err += float((d * d).sum())
        st.sq_ref += float((rc * rc).sum())
        st.sq_y += float((yc * yc).sum())
        st.dot += float((yc * rc).sum())
        st.max_abs = max(st.max_abs, float(xp.abs(d).max()) if d.size else 0.0)
        if ref_rms is not None:
            st.matched += int((xp.abs(d) <= MATCH_RTOL * (xp.abs(rc) + ref_rms)).sum())
        st.elements += int(d.size)
        gpushare.note("compared")
    return st


def rms(xp: Any, ref: Any) -> float:
    n = int(ref.size)
    return float(xp.linalg.norm(ref.reshape(-1))) / math.sqrt(n) if n else 0.0


def determinism(xp: Any, y1: Any, y2: Any) -> DeterminismFacts:
    """Two outputs of the same inputs: identical bit for bit (NaN equal to NaN), or how far apart."""
    step = _rows(tuple(y1.shape))
    identical, max_abs, sq_d, sq_1, finite = True, 0.0, 0.0, 0.0, True
    for j0 in range(0, y1.shape[0], step):
        gpushare.checkpoint()
        a = _on(xp, y1[j0:j0 + step]).astype(np.float64)
        b = _on(xp, y2[j0:j0 + step]).astype(np.float64)
        gpushare.note("on device")
        identical = identical and bool(xp.array_equal(a, b, equal_nan=True))
        gpushare.note("equal")
        fa, fb = xp.isfinite(a), xp.isfinite(b)
        finite = finite and bool((fa == fb).all())  # non-finite in one run only: no distance to give
        d = xp.where(fa & fb, a - b, 0.0)
        max_abs = max(max_abs, float(xp.abs(d).max()) if d.size else 0.0)
        sq_d += float((d * d).sum())
        sq_1 += float(xp.where(fa, a * a, 0.0).sum())
    if identical:
        return DeterminismFacts(identical=True, max_abs_diff=0.0, rel_diff=0.0)
    if not finite:
        return DeterminismFacts(identical=False)
    return DeterminismFacts(identical=False, max_abs_diff=max_abs, rel_diff=math.sqrt(sq_d) / (math.sqrt(sq_1) or 1.0))
