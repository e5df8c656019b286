"""Exact Binomial(n, p) for a float p and a trial count n of any size (a Python int).

The α-β algorithm inserts Binomial(m − |I|, β) tuples with m up to 2^64 and beyond; a sampler
whose output distribution is only close to the binomial would leave the certificate's (d, γ)
guarantee to an unstated approximation. Everything here is exact: it reads only fair bits from a
NumPy ``Generator`` (uint64 words; :mod:`crowdsafe.randomness` keys it with ChaCha20), and the
one step that uses real numbers decides a comparison with an enclosure that is refined until it
decides.

**Reduction to fair coins** (:func:`binomial`). A float p is a dyadic rational with a finite
binary expansion 0.b1 b2 … bL. Each trial is [U < p] with U uniform on [0, 1) given by its bits,
decided at the first bit where U and p differ. At bit i, of the r trials still undecided
(their first i − 1 bits equal p's), X ~ Binomial(r, 1/2) have bit 0 and r − X bit 1: if b_i = 1
the X trials with 0 have U < p (successes) and the others go on; if b_i = 0 the r − X trials with
1 have U > p (failures) and the X others go on. After bit L the trials left have U ≥ p (failures).
The loop stops as soon as none is left, after about log2 n + 2 fair binomials on average.

**Binomial(n, 1/2)** (:func:`fair_binomial`): the number of ones among n fair bits (popcount of
⌈n/64⌉ words) up to ``POPCOUNT_LIMIT`` trials; above, for n = 2M (+ one fair bit when n is odd),
M + I with I drawn by rejection (von Neumann; Devroye 1986, *Non-Uniform Random Variate
Generation*, II.3) from Pr[I = i] ∝ r(i) = C(2M, M + i)/C(2M, M), |i| ≤ M:

- proposal: a fair sign, a block k ~ Geometric(1/2) (Pr[k] = 2^−(k+1), k ≥ 0) and an offset u
  uniform on {0..w−1}, w = ⌊√⌈1.3864·M⌉⌋ + 1 (so w² > 2·0.6932·M > 2·ln 2·M); j = k·w + u and
  i = ±j ("−0" rejected). Every integer i is proposed with probability 2^−(k+2)/w, k = ⌊|i|/w⌋;
- acceptance with probability a(i) = r(i)·2^k (0 when |i| > M), so Pr[I = i] ∝ r(i)/(4w): the
  target. a(i) ≤ 1 is the envelope, from the bounds below: for 1 ≤ j ≤ M,
  r(j) = Π_{t=1..j} (M − t + 1)/(M + t) and, with log(1 − x) ≤ −x and log(1 + x) ≤ x,

      −j²/(M − j + 1)  ≤  log r(j)  ≤  −Σ_{t=1..j} (2t − 1)/(M + j)  =  −j²/(M + j)  ≤  −j²/(2M),

  so a(j) ≤ exp(k·ln 2 − k²w²/(2M)) < 2^(k − k²) ≤ 1 (j ≥ k·w, w²/(2M) > 0.6932 > ln 2);
- expected proposals per draw: 4w·C(2M, M)/4^M → 4·1.1775/√π ≈ 2.66.

The acceptance [V < a(j)], V uniform, reads V's bits 64 at a time. First the two float bounds
of log a(j) above decide most draws (they differ by about 2j³/M², tiny for large M): V's first
64 bits give log V within [log(v/2^64), log((v + 1)/2^64)], and each float value is widened by
1e-9·(1 + the magnitudes it sums), far more than the rounding of the few float operations (each
within 2^−52 relative; libm's log within a few ulp, as
:func:`crowdsafe.randomness.gumbel_enclosure` assumes; counts beyond 2^500, whose squares no
float holds, skip this step). Otherwise a(j) is compared exactly: as
the fraction 2^k·Π (M − t + 1)/(M + t) when j ≤ ``PRODUCT_LIMIT``, else as an enclosure of
exp(2·lgamma(M + 1) − lgamma(M + 1 + j) − lgamma(M + 1 − j) + k·ln 2) in ``mpmath`` interval
arithmetic (outward rounding; each loggamma widened by a further 2^16 ulps) at a precision that
grows with V's bits. V's interval [v/2^b, (v + 1)/2^b) is compared with a's; while they overlap,
64 more bits of V are drawn (and the enclosure narrowed), so the decision is the exact [V < a(j)].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from crowdsafe.errors import ParameterError

#: Up to this many trials Binomial(n, 1/2) is a popcount of n fair bits (⌈n/64⌉ words); above, rejection.
POPCOUNT_LIMIT = 1 << 16
_WORD = 1 << 64
_BUFFER = 64  # words drawn per generator call by _Words
_LN2 = math.log(2.0)
#: A decimal just above ln 2 = 0.693147…: the block width w satisfies w² > 2·_LN2_ABOVE·M.
_LN2_ABOVE = Fraction(6932, 10000)
_WIDTH_SQUARED = 2 * _LN2_ABOVE
#: Relative margin on the float bounds of log a and log V (their rounding is below 1e-15 relative).
_FLOAT_MARGIN = 1e-9
#: Counts of at most this many bits go through the float bounds (j ≤ m, so j² < 2^1000: finite).
_FLOAT_BITS = 500
#: Ulps of slack on each interval loggamma, and guard bits beyond V's bits in the enclosure.
_LOGGAMMA_SLACK_BITS = 16
_GUARD_BITS = 48
#: Undecided acceptances with j up to this compute a = r(j)·2^k as an exact fraction (j factors).
PRODUCT_LIMIT = 512


class _Words:
    """Fair 64-bit words (Python ints) from ``generator``, drawn ``_BUFFER`` at a time."""

    def __init__(self, generator: np.random.Generator) -> None:
        self._generator = generator
        self._buffer: list[int] = []

    def next(self) -> int:
        if not self._buffer:
            self._buffer = self._generator.integers(0, _WORD, size=_BUFFER, dtype=np.uint64).tolist()[::-1]
        return self._buffer.pop()

    def below(self, high: int) -> int:
        """A uniform integer on {0..high−1}: high's bit length of fair bits, redrawn when ≥ high."""
        bits = (high - 1).bit_length()
        while True:
            value, have = 0, 0
            while have < bits:
                value, have = (value << 64) | self.next(), have + 64
            value >>= have - bits
            if value < high:
                return value

    def ones(self, n: int) -> int:
        """The number of ones among n fresh fair bits (⌈n/64⌉ words): Binomial(n, 1/2)."""
        whole, tail = divmod(n, 64)
        drawn = self._generator.integers(0, _WORD, size=whole + (tail > 0), dtype=np.uint64)
        if tail:
            drawn[-1] &= np.uint64((1 << tail) - 1)
        return int(np.bitwise_count(drawn).sum())


def binomial(generator: np.random.Generator, n: int, p: float, *, popcount_limit: int = POPCOUNT_LIMIT) -> int:
    """One exact draw of Binomial(n, p): n a Python int ≥ 0 of any size, p a float in [0, 1]
    taken as its exact value. p's binary places one at a time, each a :func:`fair_binomial`
    split of the trials still undecided (module docstring); p = 0 and p = 1 draw nothing."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ParameterError(f"a number of trials must be a whole number >= 0, got {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ParameterError(f"a probability must lie in [0, 1], got {p}")
    remaining = int(n)
    if p == 1.0:
        return remaining
    numerator, denominator = float(p).as_integer_ratio()
    places = denominator.bit_length() - 1  # p = numerator / 2^places
    words = _Words(generator)
    successes = 0
    for place in range(places - 1, -1, -1):
        if remaining == 0:
            break
        zeros = _fair(words, remaining, popcount_limit)  # trials whose bit here is 0
        if (numerator >> place) & 1:
            successes += zeros
            remaining -= zeros
        else:
            remaining = zeros
    return successes


def fair_binomial(generator: np.random.Generator, n: int, *, popcount_limit: int = POPCOUNT_LIMIT) -> int:
    """One exact draw of Binomial(n, 1/2) (n a Python int ≥ 0): a popcount of n fair bits up to
    ``popcount_limit`` trials, else rejection (module docstring)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ParameterError(f"a number of trials must be a whole number >= 0, got {n!r}")
    return _fair(_Words(generator), int(n), popcount_limit)


def _fair(words: _Words, n: int, popcount_limit: int) -> int:
    if n <= popcount_limit:
        return words.ones(n)
    half, odd = divmod(n, 2)
    return half + _centred(words, half) + (words.next() & 1 if odd else 0)


def block_width(m: int) -> int:
    """The proposal's block width w = ⌊√⌈1.3864·m⌉⌋ + 1, so w² > 2·0.6932·m > 2·ln 2·m."""
    return math.isqrt(-(-_WIDTH_SQUARED.numerator * m // _WIDTH_SQUARED.denominator)) + 1


def _centred(words: _Words, m: int) -> int:
    """I with Pr[I = i] = C(2m, m + i)/4^m (Binomial(2m, 1/2) − m), by rejection."""
    if m == 0:
        return 0
    w = block_width(m)
    while True:
        first = words.next()
        negative, bits, available, k = first & 1, first >> 1, 63, 0
        while bits == 0:  # k: the zero bits before the first one (Geometric(1/2))
            k, bits, available = k + available, words.next(), 64
        k += (bits & -bits).bit_length() - 1
        j = k * w + words.below(w)
        if j > m or (negative and j == 0):
            continue
        if _accepts(words, m, j, k):
            return -j if negative else j


def _accepts(words: _Words, m: int, j: int, k: int) -> bool:
    """[V < a] for V uniform (bits from ``words``) and a = r(j)·2^k = C(2m, m+j)/C(2m, m)·2^k,
    0 ≤ j ≤ m, a ≤ 1: float bounds on log a first; when they do not decide, a as an exact
    fraction (j ≤ ``PRODUCT_LIMIT``) or enclosed in interval arithmetic."""
    if j == 0:
        return True  # a = r(0)·2^0 = 1 (j = 0 only in block 0)
    v = words.next()
    if m.bit_length() <= _FLOAT_BITS:
        decided = _by_floats(v, m, j, k)
        if decided is not None:
            return decided
    if j <= PRODUCT_LIMIT:
        a = acceptance(m, j, k)
        return _below(words, v, lambda bits: (a, a))
    return _below(words, v, lambda bits: acceptance_enclosure(m, j, k, bits + _GUARD_BITS))


def _by_floats(v: int, m: int, j: int, k: int) -> bool | None:
    """[V < a] when the float bounds of log a and of log V (V ∈ [v/2^64, (v + 1)/2^64)), each
    widened by its margin, are apart; None when they overlap."""
    square = float(j) * float(j)
    upper = k * _LN2 - square / float(m + j)  # log a ≤ upper
    lower = k * _LN2 - square / float(m - j + 1)  # log a ≥ lower
    slack = _FLOAT_MARGIN * (1.0 + k * _LN2 + square / float(m - j + 1))
    log_high = math.log(float(v + 1)) - 64 * _LN2  # log of V's upper end (v + 1)/2^64
    if log_high + _FLOAT_MARGIN * (1.0 - log_high) < lower - slack:
        return True
    if v > 0:
        log_low = math.log(float(v)) - 64 * _LN2
        if log_low - _FLOAT_MARGIN * (1.0 - log_low) > upper + slack:
            return False
    return None


def _below(words: _Words, v: int, bounds: Callable[[int], tuple[Fraction, Fraction]]) -> bool:
    """[V < a] for V ∈ [v/2^b, (v + 1)/2^b) (b = 64 so far), a ∈ ``bounds(b)`` (which narrow
    as b grows): 64 more bits of V until V's interval lies on one side of a's."""
    bits = 64
    while True:
        low, high = bounds(bits)
        if Fraction(v + 1, 1 << bits) <= low:
            return True
        if Fraction(v, 1 << bits) >= high:
            return False
        v, bits = (v << 64) | words.next(), bits + 64


def acceptance(m: int, j: int, k: int) -> Fraction:
    """a = r(j)·2^k = 2^k·Π_{t=1..j} (m − t + 1)/(m + t), exactly (0 ≤ j ≤ m)."""
    return Fraction(math.prod(range(m - j + 1, m + 1)) << k, math.prod(range(m + 1, m + j + 1)))


def acceptance_enclosure(m: int, j: int, k: int, bits: int) -> tuple[Fraction, Fraction]:
    """Dyadic rationals low ≤ a ≤ high, a = r(j)·2^k, with high − low < 2^(20 − bits):
    exp(2·lgamma(m + 1) − lgamma(m + 1 + j) − lgamma(m + 1 − j) + k·ln 2) in ``mpmath`` interval
    arithmetic at ``bits`` bits beyond the loggammas' size, each loggamma widened by 2^16 ulps."""
    from mpmath.ctx_iv import MPIntervalContext  # imported only on this rare path

    iv = MPIntervalContext()  # a private context: its precision is not mpmath's global one
    top = 2 * m + 1
    magnitude = (top * top.bit_length()).bit_length()  # lgamma(x) ≤ x·log2(x) < 2^magnitude, x ≤ 2m + 1
    iv.prec = magnitude + bits
    slack = iv.mpf(2) ** (magnitude - iv.prec + _LOGGAMMA_SLACK_BITS)
    widen = iv.mpf([-slack.b, slack.b])

    def lgamma(x: int) -> Any:
        return iv.loggamma(iv.mpf(x)) + widen

    log_a = 2 * lgamma(m + 1) - lgamma(m + 1 + j) - lgamma(m + 1 - j) + k * iv.log(2)
    low, high = iv.exp(log_a)._mpi_
    return _dyadic(low), _dyadic(high)


def _dyadic(raw: tuple[int, Any, int, int]) -> Fraction:
    """The exact value of an mpmath raw float (sign, mantissa, exponent, bit count); infinities
    and NaN (bit count −1, or zero mantissa with a nonzero exponent) are refused."""
    sign, mantissa, exponent, bit_count = raw
    mantissa = int(mantissa)
    if bit_count < 0 or (mantissa == 0 and exponent != 0):
        raise ArithmeticError("the binomial acceptance enclosure is not finite")
    value = Fraction(mantissa) * Fraction(2) ** exponent
    return -value if sign else value
