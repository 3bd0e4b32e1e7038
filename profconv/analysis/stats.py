"""Statistics on timing samples: the median's confidence interval, when to stop repeating, and the
two-sample decision behind `report --compare`. Pure functions of lists of seconds.

- `median_ci`: distribution-free interval for the median from order statistics (binomial, as in
  Conover's *Practical Nonparametric Statistics*): no normality assumed, which timing samples
  (skewed, with outliers) never satisfy.
- `stable`: the stopping rule of stop-when-stable repeats.
- `compare_samples`: Mann-Whitney U (two-sided, scipy) on the two sides' stored samples plus a
  minimum effect size: a difference is called only when it is both unlikely to be noise (p < alpha)
  and large enough to matter (|ratio of medians - 1| >= min_effect). When the samples are too few
  for any p below alpha (`min_p_value`: 3 vs 3 can give no p under 0.1) the verdict is `untestable`,
  never "same"; the ratio comes with a bootstrap interval (`ratio_interval`) either way.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95


def _binom_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(0, min(k, n) + 1)) / 2.0**n


def median_ci(samples: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """(low, high) order statistics bracketing the median with at least `confidence` coverage;
    None with fewer samples than any interval needs (n < 6 at 95%): min..max would cover less."""
    n = len(samples)
    if n == 0:
        return None
    xs = sorted(samples)
    alpha = 1.0 - confidence
    # the largest rank r with P(X <= r - 1) <= alpha / 2: the interval is [x_(r), x_(n - r + 1)] (1-based)
    rank = 0
    while _binom_cdf(rank, n) <= alpha / 2:
        rank += 1
    if rank < 1:
        return None
    return xs[rank - 1], xs[n - rank]


def ci_rel(samples: Sequence[float], confidence: float = CONFIDENCE) -> float | None:
    """Half the interval's width over the median (0.01 = the median is known within ±1%)."""
    ci = median_ci(samples, confidence)
    if ci is None:
        return None
    med = statistics.median(samples)
    return (ci[1] - ci[0]) / 2 / med if med > 0 else None


def stable(samples: Sequence[float], target: float, confidence: float = CONFIDENCE) -> bool:
    """True once the median's interval is within ±target of it."""
    r = ci_rel(samples, confidence)
    return r is not None and r <= target


@dataclass(frozen=True)
class Decision:
    """What `report --compare` concludes for one row."""

    ratio: float | None  # median(B) / median(A)
    p_value: float | None  # Mann-Whitney U, two-sided; None when not tested
    verdict: str  # regression | improvement | same | untestable | no-samples
    n_a: int
    n_b: int
    why: str
    ci_low: float | None = None  # the ratio's 95% interval (bootstrap percentile), None under 2 samples a side
    ci_high: float | None = None

    @property
    def testable(self) -> bool:
        return self.verdict in ("regression", "improvement", "same")


MIN_SAMPLES = 3
RESAMPLES = 2000


def min_p_value(n_a: int, n_b: int) -> float:
    """The smallest two-sided p the exact Mann-Whitney U test can give for n_a vs n_b samples (every B
    above every A, no ties): 2 / C(n_a + n_b, n_a). 3 vs 3 samples: 0.1, so p < 0.05 is out of reach."""
    if n_a < 1 or n_b < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def samples_needed(alpha: float) -> int:
    """The fewest samples per side (equal sides) whose smallest p is below `alpha` (4 at 0.05)."""
    n = 1
    while min_p_value(n, n) >= alpha:
        n += 1
    return n


def ratio_interval(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE,
                   resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, float] | None:
    """A bootstrap percentile interval of median(B) / median(A): both sides resampled with replacement,
    `resamples` times, with a fixed seed (the same samples give the same interval). None under 2 samples
    on a side or when a resampled median of A is 0."""
    if len(a) < 2 or len(b) < 2:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(all="ignore"):  # times near the float range (a damaged record): no interval, no warning
        ma = np.median(rng.choice(xa, size=(resamples, len(xa))), axis=1)
        mb = np.median(rng.choice(xb, size=(resamples, len(xb))), axis=1)
        if not (ma > 0).all():
            return None
        tail = (1.0 - confidence) / 2 * 100
        lo, hi = np.percentile(mb / ma, [tail, 100 - tail])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    return float(lo), float(hi)


def compare_samples(a: Sequence[float], b: Sequence[float], min_effect: float = 0.05, alpha: float = 0.05
                    ) -> Decision:
    """A regression is B slower than A by at least `min_effect` of A's median *and* significant at
    `alpha` (Mann-Whitney U on the samples); an improvement the same the other way; else same. With
    samples too few for any p below `alpha` the verdict is `untestable`, never `same`."""
    a, b = [x for x in a if x == x], [x for x in b if x == x]
    if not a or not b:
        return Decision(None, None, "no-samples", len(a), len(b), "a side has no samples")
    ma = statistics.median(a)
    ratio = statistics.median(b) / ma if ma > 0 else None
    ci = ratio_interval(a, b)
    lo, hi = ci if ci else (None, None)
    floor = min_p_value(len(a), len(b))
    if ratio is None:
        return Decision(None, None, "untestable", len(a), len(b), "A's median is 0: no ratio", lo, hi)
    if floor >= alpha:
        return Decision(ratio, None, "untestable", len(a), len(b),
                        f"{len(a)} vs {len(b)} samples cannot reach p < {alpha:g} (the smallest possible p is "
                        f"{floor:.2g}; {samples_needed(alpha)} a side can)", lo, hi)
    from scipy.stats import mannwhitneyu

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    big = abs(ratio - 1.0) >= min_effect
    if p < alpha and big:
        verdict = "regression" if ratio > 1.0 else "improvement"
        why = f"p = {p:.2g} < {alpha:g} and |ratio - 1| >= {min_effect:.0%}"
    elif big:
        verdict, why = "same", f"ratio beyond {min_effect:.0%} but p = {p:.2g} >= {alpha:g} (noise)"
    else:
        verdict, why = "same", f"|ratio - 1| < {min_effect:.0%}" + (f" (p = {p:.2g})" if p < alpha else "")
    return Decision(ratio, p, verdict, len(a), len(b), why, lo, hi)
