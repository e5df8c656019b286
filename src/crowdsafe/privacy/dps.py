"""δ of k-anonymization after sampling: d(k, β, ε), exact and conservative.

Theorem (Li, Qardaji, Su 2012, Theorem 5): a *strongly-safe* k-anonymization (its recoding does
not depend on the data) preceded by Bernoulli sampling with rate β is (β, ε, δ)-DPS for every
0 < β < 1 and ε ≥ −ln(1 − β), with

    δ = d(k, β, ε) = max_{n ≥ n_m} Σ_{j > γn}^{n} f(j; n, β),
    γ = (e^ε − 1 + β)/e^ε,   n_m = ⌈k/γ − 1⌉,

f(j; n, β) the binomial pmf. Theorem 6: when the recoding is chosen by an ε1-DP mechanism
(*ε1-safe*), the same holds for ε ≥ −ln(1 − β) + ε1 with δ = d(k, β, ε − ε1).

How the maximum over n is found. The tail T(n) = Pr[Bin(n, β) > γn] is not monotone in n (it
jumps each time ⌊γn⌋ steps), so the maximum is not at n_m in general. Since γ > β
(γ − β = (1 − β)(1 − e^−ε)), the Chernoff–Hoeffding bound gives T(n) ≤ exp(−n·D(γ‖β)) with D
the Kullback–Leibler divergence between Bernoulli(γ) and Bernoulli(β). n is searched upward from
n_m, in blocks, until exp(−n·D) falls below the largest T found: no later n can exceed it, so the
maximum found is the true maximum.

Numerics. Values reach 1e-25 and far below, so everything is in log space: each tail is a
log-sum-exp of log pmf terms (log-gamma), truncated where the remaining terms are provably below
1e-18 of the sum (they decay at least geometrically with ratio (1−γ)β/(γ(1−β)) < 1/2) and the
geometric bound of the remainder is *added*, never dropped. The result is then rounded up by a
margin covering floating-point error (relative < 1e-6): it is exact to far better than 3
significant digits and never smaller than the true value.

Ties, decided exactly. The two integer decisions of the formula, which j is the first with
j > γn and where n_m = ⌈k/γ − 1⌉ lies, are taken at the *exact* values of the arguments (each
double is a rational; ε − ε1 is their exact difference), never by floating point alone: where
γn (or k/γ) falls within 1e-9 of an integer, the sign of γn − m is decided in decimal arithmetic
whose precision grows until the error bound separates it from 0 (:class:`_ExactGamma`). So a tie
j = γn is *not* counted, as the theorem's strict j > γn says, and n_m is exactly the paper's. Since
γ = 1 − (1 − β)e^−ε is irrational for every rational ε > 0 (Lindemann), an exact tie γn ∈ ℤ never
occurs for double arguments: the decision is only which side of the integer γn lies on. At the
sampling floor ε = −ln(1 − β), where γ = 1 − (1 − β)² is rational and ties are real, the floor
itself is decided exactly too (:func:`~crowdsafe.privacy.amplification.admits`): a double below
the true floor is refused, so every ε admitted lies strictly above it, and γn lies just above
the integer, where j = γn is not counted. (Until 2026-11-30 a double within 1e-12 below the
floor was admitted, with d continued from the left; until 2026-11 a near-tie was always counted,
which is conservative; the exact decision can only lower
the value, and only where γn lies within 1e-9 of an integer.)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.privacy.amplification import admits, check_rate, largest_rate_for_epsilon, sampling_floor
from crowdsafe.privacy.logspace import log_gamma, logsumexp_rows
from crowdsafe.privacy.loss import check_epsilon

_BLOCK = 2048
_TIE = 1e-9  # γn this close to an integer: decide its side exactly (_ExactGamma)
_TAIL_REL = 1e-18  # truncate a tail sum when the rest is provably below this fraction
_MAX_N = 10**9
_TINIEST = math.ulp(0.0)  # 5e-324


@dataclass(frozen=True)
class DeltaBound:
    """d(k, β, ε) with where the maximum is and how far the search went."""

    delta: float
    log_delta: float
    k: int
    beta: float
    epsilon: float
    gamma: float
    n_min: int
    n_at_max: int
    n_searched_to: int

    def as_dict(self) -> dict[str, object]:
        return {
            "delta": self.delta,
            "log10_delta": float(self.log_delta / math.log(10.0)),
            "k": self.k,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "gamma": self.gamma,
            "n_min": self.n_min,
            "n_at_max": self.n_at_max,
            "n_searched_to": self.n_searched_to,
        }


def check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a whole number >= 1, got {k!r}")
    return int(k)


def _check_above_floor(beta: float, epsilon: float, epsilon1: float) -> None:
    if not admits(beta, epsilon, epsilon1):  # decided exactly: no hair of tolerance below the floor
        floor = sampling_floor(beta, epsilon1)
        extra = f" + epsilon1 ({epsilon1:g})" if epsilon1 else ""
        largest = largest_rate_for_epsilon(epsilon, epsilon1) if epsilon > epsilon1 else 0.0
        fix = (
            f"lower beta to at most 1 - e^-(epsilon - epsilon1) = {rounded_down(largest)}"
            if largest > 0
            else "raise epsilon"
        )
        raise ParameterError(
            f"epsilon = {epsilon:g} is below the sampling floor -ln(1 - beta){extra} = "
            f"{rounded_up(floor)} for beta = {beta:g}: no k gives a guarantee; {fix} or raise epsilon"
        )


def _divergence(gamma: float, beta: float, eps_anon: float) -> float:
    """D(γ‖β) between Bernoulli(γ) and Bernoulli(β), using 1 − γ = (1 − β)e^−ε exactly."""
    return gamma * math.log(gamma / beta) - (1.0 - beta) * math.exp(-eps_anon) * eps_anon


class _ExactGamma:
    """Exact sign of γn − m for γ = 1 − (1 − β)e^−ε at the exact rational values of β and ε.

    γn − m = (n − m) − c·n with c = (1 − β)e^−ε. c is computed in decimal arithmetic at precision
    P, every step correctly rounded (``decimal``'s exp is), so its relative error is below
    (|ε| + 8)·10^(1 − P); the sign is taken when |(n − m) − c̃n| exceeds twice that error times c̃n,
    else P is doubled. c is irrational for ε > 0, so the loop ends; ε = 0 (c = 1 − β) is exact.
    """

    def __init__(self, beta: float, epsilon: float, epsilon1: float) -> None:
        self._floats = (beta, epsilon, epsilon1)
        self._c: dict[int, Decimal] = {}

    @functools.cached_property
    def beta(self) -> Fraction:
        return Fraction(self._floats[0])

    @functools.cached_property
    def epsilon(self) -> Fraction:
        """ε − ε1, their exact difference (built only where a near-tie asks: most searches have none)."""
        return Fraction(self._floats[1]) - Fraction(self._floats[2])

    def _c_at(self, precision: int) -> Decimal:
        if precision not in self._c:
            with localcontext() as context:
                context.prec = precision
                one_minus_beta = Decimal((1 - self.beta).numerator) / Decimal((1 - self.beta).denominator)
                epsilon = Decimal(self.epsilon.numerator) / Decimal(self.epsilon.denominator)
                self._c[precision] = one_minus_beta * (-epsilon).exp()
        return self._c[precision]

    def sign(self, n: int, m: int) -> int:
        """The sign of γn − m (−1, 0 or 1), exactly.

        At n = m it is −1 with no arithmetic: γn − m = −c·n and c > 0 (β < 1, ε finite). That case
        must not reach the loop: for ε beyond about 2.3e6, c < 10^−999999 underflows to 0 in decimal
        arithmetic and the error bound never separates 0 from 0. Elsewhere |n − m| ≥ 1 exceeds c·n
        by far whenever c underflows (n < 10^9), so the computed sign is then that of n − m, right.
        """
        if self.epsilon == 0:
            exact = (n - m) - (1 - self.beta) * n
            return (exact > 0) - (exact < 0)
        if n == m:
            return -1
        precision = 40
        while True:
            c = self._c_at(precision)
            with localcontext() as context:
                context.prec = precision + 20
                value = Decimal(n - m) - c * n
                error = 2 * c * n * (abs(Decimal(self.epsilon.numerator) / Decimal(self.epsilon.denominator)) + 8) \
                    * Decimal(10) ** (1 - precision)
            if abs(value) > error:
                return 1 if value > 0 else -1
            precision *= 2

    def first_counted(self, n: int, nearest: int) -> int:
        """The smallest j > γn, given the integer ``nearest`` within a hair of γn."""
        return nearest if self.sign(n, nearest) < 0 else nearest + 1

    def n_min(self, k: int, estimate: int) -> int:
        """n_m = ⌈k/γ − 1⌉: the least n with γ(n + 1) ≥ k, searched from ``estimate``."""
        n = max(estimate, k)
        while n > k and self.sign(n, k) >= 0:  # γ·n ≥ k: n − 1 also qualifies
            n -= 1
        while self.sign(n + 1, k) < 0:
            n += 1
        return n


def _first_counted(n: np.ndarray, gamma: float, exact: _ExactGamma) -> np.ndarray:
    """The smallest j counted in the tail j > γn; where γn is within a hair of an integer the
    side is decided exactly (a true tie j = γn is not counted)."""
    scaled = gamma * n
    nearest = np.rint(scaled)
    first = np.floor(scaled) + 1.0
    near = np.flatnonzero(np.abs(scaled - nearest) <= _TIE * np.maximum(1.0, scaled))
    for i in near.tolist():
        first[i] = float(exact.first_counted(int(n[i]), int(nearest[i])))
    return first


def _log_pmf(n: np.ndarray, j: np.ndarray, beta: float) -> np.ndarray:
    """log f(j; n, β) for 0 ≤ j ≤ n (broadcasting)."""
    log_f: np.ndarray = (log_gamma(n + 1.0) - log_gamma(j + 1.0) - log_gamma(n - j + 1.0)
                         + j * math.log(beta) + (n - j) * math.log1p(-beta))
    return log_f


def _ratio_bound(gamma: float, beta: float, eps_anon: float) -> float:
    """Bound on f(j+1)/f(j) for every j ≥ γn: (1 − γ)β / (γ(1 − β)) = β e^−ε / γ.

    Below 1/2 above the floor; clamped into [1e-300, 0.75] to keep the arithmetic finite.
    """
    return min(max(beta * math.exp(-eps_anon) / gamma, 1e-300), 0.75)


def _log_tail_upper(n: np.ndarray, gamma: float, beta: float, eps_anon: float, exact: _ExactGamma) -> np.ndarray:
    """A cheap upper bound on log T(n): the first term over (1 − r), r the ratio bound."""
    first = _first_counted(n, gamma, exact)
    log_first = np.where(first <= n, _log_pmf(n, np.minimum(first, n), beta), -np.inf)
    return log_first - math.log1p(-_ratio_bound(gamma, beta, eps_anon))


def _log_tails(n: np.ndarray, gamma: float, beta: float, eps_anon: float, exact: _ExactGamma) -> np.ndarray:
    """log Pr[Bin(n, β) > γn] for each n (an upper bound within 1e-18 relative)."""
    ratio_bound = _ratio_bound(gamma, beta, eps_anon)
    terms = int(math.ceil(math.log(_TAIL_REL * (1.0 - ratio_bound)) / math.log(ratio_bound))) + 1
    j = _first_counted(n, gamma, exact)[:, None] + np.arange(terms, dtype=np.float64)[None, :]
    nn = n[:, None]
    valid = j <= nn
    log_pmf = np.where(valid, _log_pmf(nn, np.where(valid, j, nn), beta), -np.inf)
    log_sum = logsumexp_rows(log_pmf)
    # The rest after the kept terms is at most last·r/(1 − r); add it (it is 0 when j ran past n).
    remainder = log_pmf[:, -1] + math.log(ratio_bound / (1.0 - ratio_bound))
    total: np.ndarray = np.logaddexp(log_sum, remainder)
    return total


def _log_tail_one(n: int, gamma: float, beta: float, eps_anon: float, exact: _ExactGamma) -> float:
    """:func:`_log_tails` of one n, in plain floats: the same terms, the same truncation and the same
    remainder, summed in another order (equal within a few units in the last place, far inside the
    1e-9 margin that d carries). Every search starts with one such tail, and NumPy's cost per call
    on a one-element array was half of a search's time."""
    ratio_bound = _ratio_bound(gamma, beta, eps_anon)
    terms = int(math.ceil(math.log(_TAIL_REL * (1.0 - ratio_bound)) / math.log(ratio_bound))) + 1
    scaled = gamma * n
    nearest = round(scaled)
    first = math.floor(scaled) + 1
    if abs(scaled - nearest) <= _TIE * max(1.0, scaled):
        first = exact.first_counted(n, nearest)
    # γ < 1, so j = n is always counted: at least one term
    log_beta, log_rest, log_whole = math.log(beta), math.log1p(-beta), math.lgamma(n + 1.0)
    last_j = min(first + terms - 1, n)
    log_pmf = [log_whole - math.lgamma(j + 1.0) - math.lgamma(n - j + 1.0) + j * log_beta + (n - j) * log_rest
               for j in range(first, last_j + 1)]
    top = max(log_pmf)
    log_sum = top + math.log(math.fsum(math.exp(value - top) for value in log_pmf))
    if first + terms - 1 > n:  # the terms ran past n: nothing remains
        return log_sum
    remainder = log_pmf[-1] + math.log(ratio_bound / (1.0 - ratio_bound))
    high, low = max(log_sum, remainder), min(log_sum, remainder)
    return high + math.log1p(math.exp(low - high))


def delta_bound(k: int, beta: float, epsilon: float, epsilon1: float = 0.0) -> DeltaBound:
    """d(k, β, ε − ε1) with the location of the maximum; see the module docstring.

    Raises ParameterError for k < 1, β ∉ (0, 1), ε < 0 or ε below the sampling floor
    −ln(1 − β) + ε1.
    """
    search = _search(k, beta, epsilon, epsilon1)
    log_delta = search.log_delta
    return DeltaBound(
        # Below the smallest positive double the true value cannot be shown; report that double.
        delta=max(math.exp(log_delta), _TINIEST),
        log_delta=float(log_delta),
        k=search.k,
        beta=search.beta,
        epsilon=search.epsilon,
        gamma=search.gamma,
        n_min=search.n_min,
        n_at_max=search.n_best,
        n_searched_to=search.n_searched_to,
    )


@functools.lru_cache(maxsize=4096)
def dps_delta_at_most(k: int, beta: float, epsilon: float, delta: float, epsilon1: float = 0.0) -> bool:
    """Whether d(k, β, ε − ε1) ≤ δ: the same answer as ``dps_delta(k, β, ε, ε1) <= delta``,
    found sooner when it is no. The search keeps the largest tail found so far, a lower bound on
    the maximum; once it exceeds log δ − 1e-9 (1e-9 is the least rounding margin d carries, with
    1e-12 to spare) the answer is no and the rest of the search is skipped. Planners ask this
    many times, mostly of parameters far from the boundary, and about one call in five repeats an
    earlier one (one plan at ε = 1 asks 728 times, 594 of them distinct): the answers, a pure
    function of the arguments, are kept."""
    if not delta > 0:
        return False
    search = _search(k, beta, epsilon, epsilon1, give_up_above=math.log(delta) - 1e-9 + 1e-12)
    return not search.gave_up and max(math.exp(search.log_delta), _TINIEST) <= delta


@dataclass(frozen=True)
class _Search:
    """The state of the search for max_n T(n) (:func:`_search`)."""

    k: int
    beta: float
    epsilon: float
    gamma: float
    n_min: int
    best: float  # the largest log T(n) found
    n_best: int
    n_searched_to: int
    gave_up: bool  # stopped early: ``best`` exceeded the caller's threshold

    @property
    def log_delta(self) -> float:
        """log d: the maximum rounded up by a margin covering floating-point error (≥ 1e-9)."""
        return self.best + 1e-9 + 64 * np.finfo(float).eps * (self.n_best * math.log(self.n_best + 1.0) + 1.0)


def _search(k: int, beta: float, epsilon: float, epsilon1: float, give_up_above: float | None = None) -> _Search:
    """The maximum over n ≥ n_m of log T(n) (module docstring); with ``give_up_above``, stops as
    soon as the largest found exceeds it (``gave_up``)."""
    k = check_k(k)
    beta = check_rate(beta, allow_one=False)
    epsilon = check_epsilon(epsilon)
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    _check_above_floor(beta, epsilon, epsilon1)
    eps_anon = max(epsilon - epsilon1, -math.log1p(-beta))
    gamma = -math.expm1(math.log1p(-beta) - eps_anon)  # 1 − (1 − β)e^−ε
    # n_m = ⌈k/γ − 1⌉ = k − 1 + ⌈k(1 − γ)/γ⌉, with 1 − γ = (1 − β)e^−ε taken exactly so that
    # n_m ≥ k holds even where γ rounds to 1; near an integer, the exact n_m (_ExactGamma).
    exact = _ExactGamma(beta, epsilon, epsilon1)
    excess = k * (1.0 - beta) * math.exp(-eps_anon) / gamma
    # n_m ≥ _MAX_N (tiny β and ε): a full search ends in _too_large anyway, so refuse at once; only a
    # search that may give up looks at T(n_m), from the float n_m (the exact one steps 1 by 1 from it).
    if not excess < _MAX_N and (give_up_above is None or not math.isfinite(excess)):
        raise _too_large(k, beta, eps_anon)
    n_min = k - 1 + max(1, math.ceil(excess))
    if excess < _MAX_N and abs(excess - round(excess)) <= _TIE * max(1.0, excess):  # near an integer: decide exactly
        n_min = exact.n_min(k, n_min)
    divergence = _divergence(gamma, beta, eps_anon)
    # Seed with n_m itself, then scan upward in blocks. Within a block only the n whose cheap
    # upper bound (first term / (1 − r)) beats the best so far get the exact tail sum.
    best = _log_tail_one(n_min, gamma, beta, eps_anon, exact)
    n_best = n_min
    start = n_min + 1

    def state(gave_up: bool) -> _Search:
        return _Search(k, beta, epsilon, gamma, n_min, best, n_best, max(n_min, start - 1), gave_up)

    if give_up_above is not None and best > give_up_above:
        return state(True)
    stop = max(n_min, math.ceil(-best / divergence))
    while start <= stop:
        n = np.arange(start, min(start + _BLOCK, stop + 1), dtype=np.float64)
        candidates = n[_log_tail_upper(n, gamma, beta, eps_anon, exact) > best]
        if candidates.size:
            tails = _log_tails(candidates, gamma, beta, eps_anon, exact)
            i = int(np.argmax(tails))
            if tails[i] > best:
                best, n_best = float(tails[i]), int(candidates[i])
                if give_up_above is not None and best > give_up_above:
                    start = int(n[-1]) + 1
                    return state(True)
        # For every n ≥ N, T(n) ≤ exp(−N·D) ≤ exp(best) once N ≥ −best/D: search stops there.
        stop = min(_MAX_N, max(n_min, math.ceil(-best / divergence)))
        start = int(n[-1]) + 1
    if stop >= _MAX_N:  # pragma: no cover - needs k around 1e8
        raise _too_large(k, beta, eps_anon)
    return state(False)


def _too_large(k: int, beta: float, eps_anon: float) -> ParameterError:
    """The refusal of a d whose maximum runs over n beyond _MAX_N (n_m ≈ k/γ, γ ≈ β + ε for small β, ε)."""
    return ParameterError(f"k = {k} is too large to evaluate d(k, beta, epsilon) at beta = {beta:g}, "
                          f"epsilon - epsilon1 = {eps_anon:g}: the maximum runs over n beyond {_MAX_N:,}; "
                          "lower k or raise beta or epsilon")


def dps_delta(k: int, beta: float, epsilon: float, epsilon1: float = 0.0) -> float:
    """δ = d(k, β, ε − ε1) for k-anonymization after sampling (Li, Qardaji, Su 2012, Thms 5–6).

    ``epsilon1 = 0`` (default) is the strongly-safe case; ``epsilon1 > 0`` is the ε1-safe case,
    where the recoding was chosen by an ε1-DP mechanism. Exact to 3 significant digits and never
    below the true value; the maximum over n is searched until a Chernoff bound proves the rest
    smaller (see the module docstring).
    """
    return delta_bound(k, beta, epsilon, epsilon1).delta
