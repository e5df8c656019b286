"""Exact samplers for integer noise, vectorised over NumPy arrays.

Canonne, Kamath and Steinke (2020, "The Discrete Gaussian for Differential Privacy", Algorithms 1-3)
give samplers for the discrete Laplace and the discrete Gaussian that use only integer arithmetic
and uniform random integers, so their output distribution is *exactly* the stated one: no
floating-point rounding can bias it or leave holes in its support (the failure Mironov 2012 found in
textbook floating-point Laplace samplers). This module implements them over arrays: every loop of
the paper runs once per round for all pending draws, so a round costs a few NumPy calls whatever the
number of draws, and the expected number of rounds is a small constant (a maximum over the draws
grows only like the logarithm of their number).

The one source of randomness is :meth:`numpy.random.Generator.integers`, which draws a uniform
integer from the bits of the bit generator by Lemire's unbiased method; with the default
:class:`~crowdsafe.randomness.Randomness` those bits come from ChaCha20 keyed by the OS CSPRNG.

Parameters are exact rationals (numerator, denominator as Python integers). Arithmetic uses int64
while the values provably fit, and Python integers (object arrays) otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.words import words as raw_words

SCALAR_DRAWS = 3  # a round of at most this many uniform draws is drawn by scalar calls (uniform_below)
LIST_DRAWS = 512  # discrete_laplace: up to this many draws over Python lists, more over arrays
_CHUNK_BITS = 62
_CHUNK = 1 << _CHUNK_BITS
_INT64_SAFE = 1 << 62


def _as_int_array(values: np.ndarray) -> np.ndarray:
    """``values`` as int64 when every entry fits comfortably, else as Python integers."""
    if values.dtype == object:
        if values.size == 0 or max(abs(int(v)) for v in values) < _INT64_SAFE:
            return values.astype(np.int64)
        return values
    return values.astype(np.int64, copy=False)


def uniform_below(generator: np.random.Generator, high: int, n: int) -> np.ndarray:
    """``n`` uniform integers on {0..high-1} (int64, 1 ≤ high < 2**63): the very values and bits
    of ``generator.integers(0, high, size=n, dtype=np.int64)``, the one way the samplers here draw.

    NumPy draws each bounded integer from the bit stream on its own (Lemire's method entry by
    entry, a bound of 1 reading nothing), so one call for n entries and n calls for one entry
    read the same bits and return the same values; only the cost differs: an array call costs
    about as much as four scalar calls. Fast path :func:`_uniform_by_scalars` for at most
    :data:`SCALAR_DRAWS` entries or a bound of 1, else its reference twin
    :func:`_uniform_by_array`.
    """
    if n <= SCALAR_DRAWS or high == 1:
        return np.array(_uniform_by_scalars(generator, high, n), dtype=np.int64)
    return _uniform_by_array(generator, high, n)


def uniform_list(generator: np.random.Generator, high: int, n: int) -> list[int]:
    """:func:`uniform_below` as a list of Python integers (the same rule, the same draws)."""
    if n <= SCALAR_DRAWS or high == 1:
        return _uniform_by_scalars(generator, high, n)
    drawn: list[int] = _uniform_by_array(generator, high, n).tolist()
    return drawn


def _uniform_by_scalars(generator: np.random.Generator, high: int, n: int) -> list[int]:
    """:func:`uniform_below` one scalar call per entry (none for a bound of 1: all zeros)."""
    if high == 1:
        return [0] * n
    draw = generator.integers
    return [int(draw(0, high)) for _ in range(n)]


def _uniform_by_array(generator: np.random.Generator, high: int, n: int) -> np.ndarray:
    """:func:`uniform_below` in one call."""
    drawn: np.ndarray = generator.integers(0, high, size=n, dtype=np.int64)
    return drawn


def bernoulli_fraction(generator: np.random.Generator, numerators: np.ndarray, denominator: int) -> np.ndarray:
    """One exact Bernoulli(numerator / denominator) draw per entry (0 ≤ numerator ≤ denominator).

    With a denominator below 2**62 this is ``uniform{0..denominator-1} < numerator``. Larger
    denominators compare a uniform real in [0, 1) with the fraction one 62-bit digit at a time,
    drawing a further digit only on a tie (probability 2**-62 per digit): still exact.
    """
    if denominator <= 0:
        raise ParameterError("a Bernoulli denominator must be positive")
    numerators = _as_int_array(np.asarray(numerators))
    n = numerators.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    if denominator < _INT64_SAFE and numerators.dtype != object:
        return _bernoulli_fraction_int64(generator, numerators, denominator)
    return _bernoulli_fraction_by_digits(generator, numerators, denominator)


def _bernoulli_fraction_int64(generator: np.random.Generator, numerators: np.ndarray, denominator: int
                              ) -> np.ndarray:
    """:func:`bernoulli_fraction` as ``uniform{0..denominator-1} < numerator`` (int64
    ``numerators``, ``denominator`` below 2**62)."""
    drawn: np.ndarray = uniform_below(generator, denominator, len(numerators)) < numerators
    return drawn


def _bernoulli_fraction_by_digits(generator: np.random.Generator, numerators: np.ndarray, denominator: int
                                  ) -> np.ndarray:
    """:func:`bernoulli_fraction` for any sizes: a uniform real compared with the fraction one
    62-bit digit at a time (the reference twin of :func:`_bernoulli_fraction_int64`; the same
    distribution, other draws)."""
    n = numerators.shape[0]
    result = np.zeros(n, dtype=bool)
    remainders = np.array([int(v) for v in numerators], dtype=object)
    certain = remainders >= denominator
    result[certain] = True
    pending = np.flatnonzero(~certain)
    while pending.size:
        scaled = remainders[pending] * _CHUNK
        digits = scaled // denominator
        uniform = uniform_below(generator, _CHUNK, pending.size)
        digits64 = digits.astype(np.int64)
        below = uniform < digits64
        tie = uniform == digits64
        result[pending[below]] = True
        remainders[pending[tie]] = scaled[tie] - digits[tie] * denominator
        pending = pending[tie]
    return result


#: Bits of the words :func:`bernoulli_float` compares at a time.
WORD_BITS = 64


def bernoulli_float(words: np.random.Generator, ties: Callable[[], np.random.Generator], n: int, p: float
                    ) -> np.ndarray:
    """``n`` exact Bernoulli(p) draws for a float p in [0, 1], vectorised.

    A float is a dyadic rational p = c/2^e (``Fraction(p)``), so Bernoulli(p) is [U < p] for U
    uniform on [0, 1) given by infinitely many fair bits, decided by the first bit where U and p
    differ. Each row's first 64 bits are one uint64 word W from ``words`` (NumPy's
    ``integers(0, 2^64, dtype=uint64)``: one raw 64-bit output per row); with P = ⌊p·2^64⌋,
    W < P means U < p and W > P means U > p. When W = P (probability 2^-64) and p·2^64 is an
    integer, U ≥ p: the row fails, and most floats (every p ≥ 2^-11) are decided by the one word.
    Otherwise U < p iff the rest of U, itself uniform, is below the rest of p,
    (c mod 2^(e−64))/2^(e−64): an exact :func:`bernoulli_fraction` draw from the stream
    ``ties()``, one tied row after the other in row order.

    Why two streams: the words of n rows are the words of any split of the rows into batches
    drawn in order (one output each), and the tied rows read ``ties()`` in row order whatever the
    batches, so drawing n rows in batches gives the one draw's mask and leaves both streams where
    the one draw leaves them (:mod:`crowdsafe.engines.streamed_publish` relies on it). A float
    comparison ``random() < p`` (53 bits of U) has probability ⌈p·2^53⌉/2^53 instead: it is p only
    when p has at most 53 binary places, which 0.3 and every p below 2^-53 do not.
    """
    if not 0.0 <= p <= 1.0:
        raise ParameterError(f"a probability must lie in [0, 1], got {p}")
    if p == 1.0:
        return np.ones(n, dtype=bool)
    numerator, denominator = float(p).as_integer_ratio()
    excess = denominator.bit_length() - 1 - WORD_BITS  # p = numerator / 2^(64 + excess)
    if excess <= 0:
        head, rest = numerator << -excess, 0
    else:
        head, rest = numerator >> excess, numerator & ((1 << excess) - 1)
    drawn = raw_words(words, n)  # one raw output per row (in two threads for many rows: the same words)
    word = np.uint64(head)
    below: np.ndarray = drawn < word
    if rest:
        for row in np.flatnonzero(drawn == word).tolist():  # each with probability 2^-64
            below[row] = bool(bernoulli_fraction(ties(), np.array([rest], dtype=object), 1 << excess)[0])
    return below


def bernoulli_exp_minus_one(generator: np.random.Generator, n: int) -> np.ndarray:
    """``n`` exact Bernoulli(exp(-1)) draws (CKS 2020, Algorithm 1 with γ = 1)."""
    return bernoulli_exp_neg(generator, np.ones(n, dtype=np.int64), 1)


def bernoulli_exp_neg(generator: np.random.Generator, numerators: np.ndarray, denominator: int) -> np.ndarray:
    """One exact Bernoulli(exp(-γ)) draw per entry, γ = numerator / denominator ≥ 0.

    CKS 2020, Algorithm 1: for γ ≤ 1, draw A_k ~ Bernoulli(γ/k) for k = 1, 2, ... until the first
    failure at K; K is odd with probability exactly exp(-γ). For γ > 1, exp(-γ) is the product of
    ⌊γ⌋ factors exp(-1) and one factor exp(-(γ - ⌊γ⌋)), each an independent draw.
    """
    numerators = _as_int_array(np.asarray(numerators))
    if denominator >= _INT64_SAFE and numerators.dtype != object:
        numerators = numerators.astype(object)  # γ's parts in Python integers: no int64 overflow
    n = numerators.shape[0]
    result = np.ones(n, dtype=bool)
    if n == 0:
        return result
    if np.any(numerators < 0):
        raise ParameterError("Bernoulli(exp(-γ)) needs γ ≥ 0")
    whole = numerators // denominator
    fraction = numerators - whole * denominator

    # Integer part: ⌊γ⌋ independent exp(-1) trials must all succeed. Entries leave the loop at
    # their first failure, so the loop ends quickly even when ⌊γ⌋ is large.
    active = np.flatnonzero(whole > 0)
    trial = 0
    while active.size:
        ok = _bernoulli_exp_minus_one_unit(generator, active.size)
        result[active[~ok]] = False
        trial += 1
        survivors = active[ok]
        active = survivors[whole[survivors] > trial]

    # Fractional part f < 1: the K-loop of Algorithm 1, shared K for all entries still running.
    alive = np.flatnonzero(result & (fraction > 0))
    k = 1
    while alive.size:
        success = bernoulli_fraction(generator, fraction[alive], denominator * k)
        stopped = alive[~success]
        if k % 2 == 0:  # stopped at an even K: the draw is 0
            result[stopped] = False
        alive = alive[success]
        k += 1
    return result


def _bernoulli_exp_minus_one_unit(generator: np.random.Generator, n: int) -> np.ndarray:
    """Bernoulli(exp(-1)): the K-loop with A_k ~ Bernoulli(1/k); the draw is 1 iff K is odd.
    (A_1 ~ Bernoulli(1) always succeeds and reads no bits, so the loop starts at k = 2.)"""
    result = np.zeros(n, dtype=bool)
    alive = np.arange(n)
    k = 2
    while alive.size:
        success = uniform_below(generator, k, alive.size) == 0
        stopped = alive[~success]
        if k % 2 == 1:
            result[stopped] = True
        alive = alive[success]
        k += 1
    return result


_COLUMNS = 12  # trials drawn at once by the batched sampler; all succeed with probability ≤ 1/12!


def _first_failure(generator: np.random.Generator, numerators: np.ndarray, denominator: int) -> np.ndarray:
    """K of CKS 2020 Algorithm 1 for each entry: the first k ≥ 1 at which a Bernoulli(γ/k) trial
    fails, γ = numerator/denominator ∈ [0, 1]. The first 12 trials of every entry come from one
    call (uniform integers on {0..k·denominator − 1}, success when below the numerator); the
    rare entries whose 12 trials all succeed continue one k at a time. Needs 12·denominator < 2^62.
    """
    n = numerators.shape[0]
    ks = np.arange(1, _COLUMNS + 1, dtype=np.int64)
    draws = generator.integers(0, ks * denominator, size=(n, _COLUMNS), dtype=np.int64)
    success = draws < numerators[:, None]
    failed = ~success
    first = np.where(failed.any(axis=1), failed.argmax(axis=1) + 1, 0)
    pending = np.flatnonzero(first == 0)
    k = _COLUMNS + 1
    while pending.size:
        ok = bernoulli_fraction(generator, numerators[pending], denominator * k)
        first[pending[~ok]] = k
        pending = pending[ok]
        k += 1
    return first


def bernoulli_exp_neg_batched(generator: np.random.Generator, numerators: np.ndarray, denominator: int) -> np.ndarray:
    """One exact Bernoulli(exp(−γ)) draw per entry, γ = numerator / denominator ≥ 0: the same
    distribution as :func:`bernoulli_exp_neg` (CKS 2020, Algorithm 1, with exp(−⌊γ⌋) as ⌊γ⌋
    independent exp(−1) factors), with the trials of each K-loop drawn 12 at a time, so a batch
    costs a few NumPy calls per factor instead of one per trial. Used by the exact exponential
    mechanism; int64 numerators and a denominator below 2^58."""
    numerators = np.asarray(numerators, dtype=np.int64)
    if denominator <= 0 or denominator * _COLUMNS >= _INT64_SAFE:
        raise ParameterError("the batched Bernoulli(exp(-γ)) needs 0 < denominator < 2^58")
    if np.any(numerators < 0):
        raise ParameterError("Bernoulli(exp(-γ)) needs γ ≥ 0")
    n = numerators.shape[0]
    result = np.ones(n, dtype=bool)
    whole = numerators // denominator
    fraction = numerators - whole * denominator
    active = np.flatnonzero(whole > 0)
    trial = 0
    while active.size:  # ⌊γ⌋ factors exp(−1): leave at the first failure
        ok = _first_failure(generator, np.ones(active.size, dtype=np.int64), 1) % 2 == 1
        result[active[~ok]] = False
        trial += 1
        survivors = active[ok]
        active = survivors[whole[survivors] > trial]
    alive = np.flatnonzero(result & (fraction > 0))
    if alive.size:
        result[alive] = _first_failure(generator, fraction[alive], denominator) % 2 == 1
    return result


def discrete_laplace(generator: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """``size`` exact draws from the discrete Laplace with Pr[x] ∝ exp(-|x|·s/t) on the integers.

    CKS 2020, Algorithm 2: U uniform on {0..t-1} accepted with probability exp(-U/t), plus t·V with
    V geometric (successes of exp(-1) trials), gives X with Pr[X] ∝ exp(-X/t); Y = ⌊X/s⌋ is then
    geometric with ratio exp(-s/t); a fair sign, rejecting "-0", makes it two-sided.
    """
    if s <= 0 or t <= 0:
        raise ParameterError("the discrete Laplace needs positive integers s and t")
    if t >= 1 << 56:
        raise ParameterError("discrete Laplace scale too large to sample exactly (t >= 2**56)")
    s, t = int(s), int(t)
    if size <= LIST_DRAWS:
        return _discrete_laplace_by_lists(generator, s, t, size)
    return _discrete_laplace_by_arrays(generator, s, t, size)


def _discrete_laplace_by_arrays(generator: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """:func:`discrete_laplace` with every round of the algorithm as array operations over the
    draws still pending (the reference twin of :func:`_discrete_laplace_by_lists`)."""
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        m = todo.size
        u = uniform_below(generator, t, m)
        keep = bernoulli_exp_neg(generator, u, t)
        v = np.zeros(m, dtype=np.int64)
        alive = np.arange(m)
        while alive.size:
            success = _bernoulli_exp_minus_one_unit(generator, alive.size)
            alive = alive[success]
            v[alive] += 1
        y = (u + t * v) // s
        negative = uniform_below(generator, 2, m).astype(bool)
        accept = keep & ~(negative & (y == 0))
        out[todo[accept]] = np.where(negative, -y, y)[accept]
        todo = todo[~accept]
    return out


def _discrete_laplace_by_lists(generator: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """:func:`discrete_laplace` for a few draws, in plain Python over lists: the same rounds as
    :func:`_discrete_laplace_by_arrays`, each drawing for the entries still pending in their
    order, so the same uniform integers are read from the stream in the same order (one scalar
    call each; NumPy reads the same bits for one entry as within an array call) and the output
    is the same. An array operation costs several times a list step on a few entries."""
    out = [0] * size
    todo = list(range(size))
    while todo:
        m = len(todo)
        u = uniform_list(generator, t, m)
        keep = _exp_neg_fractions_by_lists(generator, u, t)
        v = [0] * m
        alive = list(range(m))
        while alive:  # V: the successes of Bernoulli(exp(-1)) trials before the first failure
            k_of = _exp_minus_one_by_lists(generator, len(alive))
            alive = [i for i, k in zip(alive, k_of) if k % 2 == 1]
            for i in alive:
                v[i] += 1
        negative = [w == 1 for w in uniform_list(generator, 2, m)]
        pending = []
        for i, entry in enumerate(todo):
            y = (u[i] + t * v[i]) // s
            if keep[i] and not (negative[i] and y == 0):
                out[entry] = -y if negative[i] else y
            else:
                pending.append(entry)
        todo = pending
    return np.array(out, dtype=np.int64)


def _exp_minus_one_by_lists(generator: np.random.Generator, n: int) -> list[int]:
    """K of :func:`_bernoulli_exp_minus_one_unit` for ``n`` entries (the trial is a success iff K
    is odd), its rounds over lists: round k draws uniform{0..k-1} for each entry still running."""
    first = [0] * n
    alive = list(range(n))
    k = 2  # A_1 ~ Bernoulli(1) succeeds and reads no bits
    while alive:
        running = []
        for i, w in zip(alive, uniform_list(generator, k, len(alive))):
            if w == 0:
                running.append(i)
            else:
                first[i] = k
        alive = running
        k += 1
    return first


def _exp_neg_fractions_by_lists(generator: np.random.Generator, numerators: list[int], denominator: int
                                ) -> list[bool]:
    """:func:`bernoulli_exp_neg` for numerators below the denominator (γ < 1: the K-loop of
    CKS 2020 Algorithm 1 alone), its rounds over lists, drawing as :func:`bernoulli_fraction`."""
    result = [True] * len(numerators)
    alive = [i for i, x in enumerate(numerators) if x > 0]
    k = 1
    while alive:
        success = _fraction_by_lists(generator, [numerators[i] for i in alive], denominator * k)
        running = []
        for i, ok in zip(alive, success):
            if ok:
                running.append(i)
            elif k % 2 == 0:  # stopped at an even K: the draw is 0
                result[i] = False
        alive = running
        k += 1
    return result


def _fraction_by_lists(generator: np.random.Generator, numerators: list[int], denominator: int) -> list[bool]:
    """:func:`bernoulli_fraction` over a list (numerators below 2**62), drawing as it does: one
    uniform{0..denominator-1} each below 2**62, else 62-bit digits, a further one on a tie."""
    if denominator < _INT64_SAFE:
        return [w < x for w, x in zip(uniform_list(generator, denominator, len(numerators)), numerators)]
    result = [x >= denominator for x in numerators]
    remainders = list(numerators)
    pending = [i for i, certain in enumerate(result) if not certain]
    while pending:
        uniform = uniform_list(generator, _CHUNK, len(pending))
        tied = []
        for i, w in zip(pending, uniform):
            scaled = remainders[i] * _CHUNK
            digit = scaled // denominator
            if w < digit:
                result[i] = True
            elif w == digit:
                remainders[i] = scaled - digit * denominator
                tied.append(i)
        pending = tied
    return result


def discrete_gaussian(generator: np.random.Generator, sigma2: Fraction, size: int) -> np.ndarray:
    """``size`` exact draws from the discrete Gaussian N_Z(0, σ²): Pr[x] ∝ exp(-x²/(2σ²)), x ∈ Z.

    CKS 2020, Algorithm 3: a discrete Laplace candidate Y with scale t = ⌊σ⌋ + 1 is accepted with
    probability exp(-(|Y| - σ²/t)² / (2σ²)), computed exactly as a ratio of integers.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ParameterError("the discrete Gaussian needs σ² > 0")
    num, den = sigma2.numerator, sigma2.denominator
    t = math.isqrt(num // den) + 1
    acceptance_den = 2 * num * den * t * t
    out = np.empty(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        y = discrete_laplace(generator, 1, t, todo.size)
        magnitude = np.abs(y)
        if int(magnitude.max(initial=0)) * t * den + num < 1 << 31:
            offset = magnitude * (t * den) - num
        else:
            offset = magnitude.astype(object) * (t * den) - num
        accept = bernoulli_exp_neg(generator, offset * offset, acceptance_den)
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out


def rational_at_most(x: float | Fraction, significant_bits: int = 30) -> Fraction:
    """A fraction p/2^j ≤ x with about ``significant_bits`` bits of precision (x > 0).

    Used to turn a real noise parameter into the exact rational a sampler needs, always rounding
    towards *more* privacy (a smaller ε/Δ ratio means more noise).
    """
    x = Fraction(x)
    if x <= 0:
        raise ParameterError("expected a positive number")
    shift = significant_bits - math.floor(math.log2(x))
    scale = Fraction(2) ** shift
    return Fraction(math.floor(x * scale)) / scale


def rational_at_least(x: float | Fraction, significant_bits: int = 40) -> Fraction:
    """A fraction p/2^j ≥ x with about ``significant_bits`` bits of precision (x > 0)."""
    x = Fraction(x)
    if x <= 0:
        raise ParameterError("expected a positive number")
    shift = max(0, significant_bits - math.floor(math.log2(x)))
    scale = Fraction(2) ** shift
    return Fraction(math.ceil(x * scale)) / scale
