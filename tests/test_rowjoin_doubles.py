"""The C writer's shortest text of a double (profconv/parse/_rowjoin.c: DOUBLES pieces, format_double)
against float.__repr__ (CSV) and msgspec (JSON), in bulk: random bit patterns of every exponent
(subnormals, NaN and infinities among them), powers of ten and their neighbours, integers near 2^53
and 1e16, decimals of 1 to 17 digits and the doubles next to them (the ends of the interval that
reads back as a double, the halfway cases), the quick path's decimals of 1 to 3 places below 2^40
and past it, as profilers print them. About two million doubles (each
with both signs), in a few seconds.

The long check by hand (hundreds of millions; its result goes in docs/performance.md):
    PYTHONPATH=$PWD python tests/test_rowjoin_doubles.py --millions 200 --seed 1
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import msgspec
import numpy as np
import pytest

from profconv.parse import native
from profconv.render import rowjoin

C = native.load("_rowjoin")
pytestmark = pytest.mark.skipif(C is None, reason="the C accelerator _rowjoin is not built")


def check(values: np.ndarray) -> int:
    """Every double of `values` (and its negation) written by the C writer as repr and msgspec write
    it; the number checked. On a difference: AssertionError naming the first double that differs."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    for v in (values, -values):
        got_csv = C.join(len(v), [(rowjoin.DOUBLES, v, 0, rowjoin.CSV)], b"\n")
        floats = v.tolist()
        want_csv = "\n".join(["" if x != x else float.__repr__(x) for x in floats]).encode()
        got_json = C.join(len(v), [(rowjoin.DOUBLES, v, 0, rowjoin.JSON)], b",")
        want_json = msgspec.json.encode(floats)[1:-1]
        if got_csv != want_csv or got_json != want_json:
            _first_difference(floats)
    return 2 * len(values)


def _first_difference(floats: list[float]) -> None:
    for x in floats:
        csv, js = C.format_double(x, rowjoin.CSV), C.format_double(x, rowjoin.JSON)
        assert csv == (b"" if x != x else float.__repr__(x).encode()), (x, x.hex(), csv)
        assert js == msgspec.json.encode(x), (x, x.hex(), js)
    raise AssertionError("the rows differ, but no one double does")


def random_bits(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random 64-bit patterns: every exponent as often, subnormals, NaNs and infinities among them."""
    return rng.integers(0, 2**64, size=n, dtype=np.uint64).view(np.float64)


def random_bits_near_one(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random mantissas of the exponents from 2^-130 to 2^60, where the C writer works the digits
    out itself (the others it has from PyOS_double_to_string, repr's own)."""
    exps = rng.integers(1023 - 130, 1023 + 61, size=n, dtype=np.uint64)
    return ((exps << np.uint64(52)) | rng.integers(0, 2**52, size=n, dtype=np.uint64)).view(np.float64)


def every_exponent(rng: np.random.Generator, per: int) -> np.ndarray:
    """Each of the 2047 biased exponents (0: the subnormals) with the least, the greatest and `per`
    random mantissas, and the least mantissa's lower neighbour (a power of two's narrower interval)."""
    exps = np.repeat(np.arange(0, 2047, dtype=np.uint64), per + 3)
    mant = rng.integers(0, 2**52, size=exps.size, dtype=np.uint64)
    mant[0::per + 3], mant[1::per + 3], mant[2::per + 3] = 0, 2**52 - 1, 1
    bits = (exps << np.uint64(52)) | mant
    x = bits.view(np.float64)
    return np.concatenate([x, np.nextafter(x[0::per + 3], 0.0)])


def neighbours(x: np.ndarray, k: int = 2) -> np.ndarray:
    """x and the k doubles on each side of each."""
    out, lo, hi = [x], x, x
    for _ in range(k):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
        out += [lo, hi]
    return np.concatenate(out)


def powers_and_integers() -> np.ndarray:
    """Powers of ten 1e-323 to 1e308, powers of two, 5 * 10^p, 9.999 * 10^p, integers near 2^53,
    1e16 and 2^40 (where the paths change) and small integers: each with its neighbours."""
    tens = np.array([float(f"1e{p}") for p in range(-323, 309)] + [float(f"5e{p}") for p in range(-323, 308)]
                    + [float(f"9.999e{p}") for p in range(-320, 308)])
    twos = np.ldexp(1.0, np.arange(-1074, 1024))
    ints = np.concatenate([np.arange(2**53 - 3000, 2**53 + 3000, dtype=np.float64),
                           np.arange(10**16 - 3000, 10**16 + 3000, dtype=np.float64),
                           np.arange(2**54 - 100, 2**54 + 100, dtype=np.float64),
                           np.arange(0, 20000, dtype=np.float64), np.arange(2**40 - 1000, 2**40 + 1000, dtype=np.float64)])
    return neighbours(np.concatenate([tens, twos, ints]), 3)


def decimals(rng: np.random.Generator, n: int) -> np.ndarray:
    """Decimals of 1 to 17 significant digits at every decimal exponent, as float() reads them,
    with their neighbours: the doubles at the ends of the interval that reads back as a short
    decimal, and those whose shortest decimals tie (the halfway cases)."""
    digits = rng.integers(1, 18, size=n)
    mant = (rng.random(n) * 10.0 ** digits).astype(np.int64)
    exp = rng.integers(-340, 310, size=n)
    text = [f"{m}e{e}" for m, e in zip(mant.tolist(), exp.tolist())]
    x = np.array([float(t) for t in text])
    half = np.array([float(f"{m}5e{e - 1}") for m, e in zip(mant[: n // 4].tolist(), exp[: n // 4].tolist())])
    return neighbours(np.concatenate([x, half]), 1)


def places(rng: np.random.Generator, n: int) -> np.ndarray:
    """The quick path's decimals: k / 10^p (p 1 to 6) below and past 2^40, values rounded to 0 to 6
    places as profilers print them, shares (a / b), with their neighbours."""
    k = rng.integers(1, 2**rng.integers(1, 51, size=n), dtype=np.int64)
    p = rng.integers(1, 7, size=n)
    x = k / 10.0 ** p
    printed = np.array([round(v, d) for v, d in zip((rng.random(n) * 10.0 ** rng.integers(0, 12, size=n)).tolist(),
                                                      rng.integers(0, 7, size=n).tolist())])
    shares = rng.integers(1, 10**6, size=n) / rng.integers(10**6, 10**12, size=n)
    return neighbours(np.concatenate([x, printed, shares]), 1)


def suite(seed: int, scale: int = 1) -> int:
    """One round of every kind of double (scale: how many times more random ones); the count checked."""
    rng = np.random.default_rng(seed)
    done = 0
    done += check(random_bits(rng, 10_000 * scale))
    done += check(random_bits_near_one(rng, 100_000 * scale))
    done += check(every_exponent(rng, 8 * scale))
    if seed == 0:
        done += check(powers_and_integers())
    done += check(decimals(rng, 15_000 * scale))
    done += check(places(rng, 20_000 * scale))
    return done


@pytest.mark.parametrize("seed", [0, 1])
def test_shortest_doubles_in_bulk_are_reprs_and_msgspecs(seed):
    assert suite(seed) > 600_000


def test_special_doubles_in_bulk():
    special = np.array([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 2.2250738585072014e-308,
                        1.7976931348623157e308, 0.1, 0.2, 0.3, 1e-4, 1e-5, 1e15, 1e16, 1e17, 123.0, 2.675])
    check(special)
    assert C.join(3, [(rowjoin.DOUBLES, special, 2, rowjoin.CSV)], b"|") == b"|inf|-inf"
    assert C.join(3, [(rowjoin.DOUBLES, special, 2, rowjoin.JSON)], b"|") == b"null|null|null"


def main() -> int:
    ap = argparse.ArgumentParser(description="the long check of the C writer's doubles (see the module docstring)")
    ap.add_argument("--millions", type=float, default=100.0, help="about how many million doubles to check")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t0, done, seed = time.time(), 0, args.seed
    while done < args.millions * 1e6:
        done += suite(seed, scale=10)
        seed += 1
        print(f"{done / 1e6:8.1f} M doubles, seeds {args.seed}..{seed - 1}, {time.time() - t0:6.0f} s: all equal",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
