"""Noise calibration: how much noise a given (ε, δ) and sensitivity require.

Every function here is pure arithmetic on public parameters (never on data) and states the theorem
it implements. Calibrations that solve an equation numerically return a value on the *safe* side:
the privacy loss evaluated at the returned noise level is at most the target.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.exact import rational_at_least
from crowdsafe.privacy import loss


def check_epsilon(epsilon: float) -> float:
    """A mechanism's ε: a finite number > 0 (ε = 0 would need infinite noise)."""
    try:
        value = loss.check_epsilon(epsilon)
    except ParameterError:
        value = -1.0  # (negative, infinite or not a number: the one message below, not the loss's ">= 0")
    if value <= 0:
        raise ParameterError(f"epsilon must be a finite number > 0, got {epsilon!r}", parameter="epsilon")
    return value


def check_delta(delta: float, *, positive: bool = False) -> float:
    """A mechanism's δ: 0 ≤ δ < 1 (0 < δ < 1 when ``positive``)."""
    value = loss.check_delta(delta)
    if positive and value <= 0:
        raise ParameterError(f"delta must satisfy 0 < delta < 1, got {delta!r}")
    return value


def check_sensitivity(sensitivity: float, name: str = "sensitivity") -> float:
    """A sensitivity: a finite number > 0."""
    value = loss.check_epsilon(sensitivity, name)
    if value <= 0:
        raise ParameterError(f"{name} must be a finite number > 0, got {sensitivity!r}")
    return value


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------


def laplace_scale(epsilon: float, l1_sensitivity: float) -> float:
    """b = Δ₁/ε: Laplace noise of scale b makes a query of L1 sensitivity Δ₁ ε-DP (Dwork,
    McSherry, Nissim & Smith 2006)."""
    return check_sensitivity(l1_sensitivity) / check_epsilon(epsilon)


# ---------------------------------------------------------------------------------------------
# Continuous Gaussian: classic and analytic calibration
# ---------------------------------------------------------------------------------------------


def classic_gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Theorem A.1).

    The theorem is proven only for 0 < ε < 1; for larger ε this σ can be too small (Balle & Wang
    2018 show it fails), so ε ≥ 1 is refused with a pointer to the analytic calibration.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    l2 = check_sensitivity(l2_sensitivity, "L2 sensitivity")
    if epsilon >= 1:
        raise ParameterError(
            f"the classic Gaussian calibration σ = Δ₂·√(2 ln(1.25/δ))/ε is proven only for ε < 1 "
            f"(Dwork & Roth 2014, Thm A.1), got ε = {epsilon:g}; use the analytic calibration "
            "(the default), which is exact for every ε"
        )
    return l2 * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def gaussian_delta(epsilon: float, sigma: float, l2_sensitivity: float) -> float:
    """The smallest δ for which N(0, σ²) noise on a query of L2 sensitivity Δ is (ε, δ)-DP.

    Balle & Wang 2018, Theorem 8: δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ). Evaluated in log
    space (``log_ndtr``) so that values far below 1e-300 keep their relative precision.
    """
    a = l2_sensitivity / (2.0 * sigma) - epsilon * sigma / l2_sensitivity
    b = -l2_sensitivity / (2.0 * sigma) - epsilon * sigma / l2_sensitivity
    log_p1 = float(special.log_ndtr(a))
    log_p2 = float(special.log_ndtr(b)) + epsilon
    return _difference_of_exps(log_p1, log_p2)


def _difference_of_exps(log_a: float, log_b: float) -> float:
    """exp(log_a) − exp(log_b) ≥ 0 without cancellation; 0 when the difference is not positive."""
    if log_b >= log_a or math.isinf(log_a) and log_a < 0:
        return 0.0
    return math.exp(log_a) * -math.expm1(log_b - log_a)


def analytic_gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """The smallest σ for which N(0, σ²) noise is (ε, δ)-DP: the analytic Gaussian mechanism
    (Balle & Wang 2018), valid for every ε > 0.

    Solves :func:`gaussian_delta` (σ) = δ by bisection on log σ; δ falls as σ grows, and the
    returned σ is the upper end of the final bracket, so ``gaussian_delta(ε, σ, Δ) ≤ δ`` holds.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    l2 = check_sensitivity(l2_sensitivity, "L2 sensitivity")
    return _smallest_scale(lambda s: gaussian_delta(epsilon, s, l2) <= delta, start=l2 / epsilon)


def _smallest_scale(
    ok: Callable[[float], bool], start: float, rel_tol: float = 1e-12, step: float = 2.0
) -> float:
    """The smallest positive x with ok(x), for a predicate that is monotone in x (false then true).

    Brackets the answer by multiplying or dividing ``start`` by ``step``, then bisects on log x.
    """
    high = start
    while not ok(high):
        high *= step
        if high > 1e300:
            raise ParameterError("no noise scale satisfies the requested privacy parameters")
    low = high / step
    while ok(low):
        high, low = low, low / step
        if low < 1e-300:
            return high
    while high / low - 1.0 > rel_tol:
        mid = math.sqrt(low * high)
        if ok(mid):
            high = mid
        else:
            low = mid
    return high


# ---------------------------------------------------------------------------------------------
# Discrete Gaussian (Canonne, Kamath & Steinke 2020)
# ---------------------------------------------------------------------------------------------

# Direct summation drops terms below exp(-50) of the first one: the dropped mass is below 1e-20
# of the sum, which is added to the error bound. From σ = 2^12 on, summation would need too many
# terms, and the Euler–Maclaurin formula with its remainder bound is used instead.
_UNDERFLOW_SPAN = 100.0
_DIRECT_SUM_LIMIT = float(1 << 24)  # σ² below which tails are summed term by term
_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
# ∫_0^∞ v^j exp(−v²/2) dv for j = 0..4
_HALF_GAUSSIAN_MOMENTS = (_SQRT_HALF_PI, 1.0, _SQRT_HALF_PI, 2.0, 3.0 * _SQRT_HALF_PI)


def _log_sum_from(x0: int, sigma2: float) -> tuple[float, float]:
    """(log S, log E) with S − E ≤ Σ_{x ≥ x0} exp(−x²/(2σ²)) ≤ S + E, for an integer x0 ≥ 0:
    term by term (:func:`_log_sum_by_terms`) for σ² below :data:`_DIRECT_SUM_LIMIT`, else by
    Euler–Maclaurin (:func:`_log_sum_by_euler_maclaurin`); the two enclosures overlap."""
    if sigma2 < _DIRECT_SUM_LIMIT:
        return _log_sum_by_terms(x0, sigma2)
    return _log_sum_by_euler_maclaurin(x0, sigma2)


def _log_sum_by_terms(x0: int, sigma2: float) -> tuple[float, float]:
    """:func:`_log_sum_from` summed term by term up to 100σ² past x0² (the rest underflows),
    with a relative error bound of 1e-20."""
    log_first = -(x0 * x0) / (2.0 * sigma2)
    end = math.isqrt(int(x0 * x0 + _UNDERFLOW_SPAN * sigma2)) + 2
    total = 0.0
    chunk = 1 << 20
    for start in range(x0, end, chunk):
        xs = np.arange(start, min(end, start + chunk), dtype=np.float64)
        total += float(np.exp(-((xs - x0) * (xs + x0)) / (2.0 * sigma2)).sum())
    log_total = log_first + math.log(total)
    return log_total, log_total + math.log(1e-20)


def _log_sum_by_euler_maclaurin(x0: int, sigma2: float) -> tuple[float, float]:
    """:func:`_log_sum_from` by the Euler–Maclaurin formula with its remainder bound (few
    operations whatever σ)."""
    log_first = -(x0 * x0) / (2.0 * sigma2)
    # Euler–Maclaurin to the third derivative, everything relative to f(x0) = exp(−u0²/2):
    #   Σ_{x≥x0} f(x) = ∫_{x0}^∞ f + f(x0)/2 − f'(x0)/12 + f'''(x0)/720 + R,
    #   |R| ≤ (2ζ(4)/(2π)^4)·∫_{x0}^∞ |f''''| = (1/720)·σ^-3·∫_{u0}^∞ |He_4(u)| e^{−u²/2} du,
    # with f^(n)(x) = (−1/σ)^n He_n(x/σ) f(x). The last integral, relative to f(x0), is at most
    # ∫_0^∞ ((u0+v)^4 + 6(u0+v)^2 + 3) e^{−v²/2} dv, since (u0+v)² − u0² ≥ v².
    sigma = math.sqrt(sigma2)
    u0 = x0 / sigma
    integral = sigma * _SQRT_HALF_PI * float(special.erfcx(u0 / math.sqrt(2.0)))
    estimate = integral + 0.5 + u0 / (12.0 * sigma) - (u0**3 - 3.0 * u0) / (720.0 * sigma**3)
    m = _HALF_GAUSSIAN_MOMENTS
    quartic = sum(math.comb(4, j) * u0 ** (4 - j) * m[j] for j in range(5))
    quadratic = sum(math.comb(2, j) * u0 ** (2 - j) * m[j] for j in range(3))
    remainder = (quartic + 6.0 * quadratic + 3.0 * m[0]) / (720.0 * sigma**3)
    return log_first + math.log(estimate), log_first + math.log(remainder)


def _log_normaliser(sigma2: float) -> float:
    """log Σ_{x∈Z} exp(−x²/(2σ²)). For σ² ≥ 4 Poisson summation gives √(2πσ²)·(1 + 2Σ_k
    exp(−2π²σ²k²)), whose correction is below 1e-34; smaller σ² are summed directly."""
    if sigma2 >= 4.0:
        return 0.5 * math.log(2.0 * math.pi * sigma2)
    log_sum, _ = _log_sum_from(0, sigma2)
    return math.log(2.0 * math.exp(log_sum) - 1.0)


def _tail_bounds(sigma2: float, threshold: float) -> tuple[float, float]:
    """Lower and upper bounds on log Pr[Y > threshold], Y ~ N_Z(0, σ²)."""
    x0 = math.floor(threshold) + 1
    log_z = _log_normaliser(sigma2)
    if x0 >= 0:
        log_s, log_e = _log_sum_from(x0, sigma2)
        spread = math.exp(log_e - log_s)
        low = log_s - log_z + (math.log1p(-spread) if spread < 1 else -math.inf)
        return low, log_s - log_z + math.log1p(spread)
    # Pr[Y > threshold] = 1 − Pr[Y ≥ 1 − x0] by symmetry.
    log_s, log_e = _log_sum_from(1 - x0, sigma2)
    complement_high = math.exp(log_s - log_z) + math.exp(log_e - log_z)
    complement_low = max(0.0, math.exp(log_s - log_z) - math.exp(log_e - log_z))
    low = math.log(max(1e-300, 1.0 - complement_high))
    return low, math.log1p(-min(complement_low, 1.0 - 1e-16))


def discrete_gaussian_tail(sigma2: float, threshold: float) -> float:
    """An upper bound on Pr[Y > threshold] for Y ~ N_Z(0, σ²), tight to about 1e-12 relative."""
    return math.exp(_tail_bounds(float(sigma2), threshold)[1])


def discrete_gaussian_delta(epsilon: float, sigma2: float | Fraction, sensitivity: int) -> float:
    """The δ of N_Z(0, σ²) noise on an integer query of sensitivity Δ, at ε (an upper bound
    within about 1e-12 relative of the exact value).

    Canonne, Kamath & Steinke 2020, Theorem 7: δ = Pr[Y > εσ²/Δ − Δ/2] − e^ε·Pr[Y > εσ²/Δ + Δ/2],
    Y ~ N_Z(0, σ²), and this δ is optimal for integer Δ. The first probability is bounded from
    above and the second from below, with the summation or Euler–Maclaurin error included.
    """
    sigma2 = float(sigma2)
    centre = epsilon * sigma2 / sensitivity
    _, log_p1 = _tail_bounds(sigma2, centre - sensitivity / 2.0)
    log_p2, _ = _tail_bounds(sigma2, centre + sensitivity / 2.0)
    delta = _difference_of_exps(log_p1, log_p2 + epsilon)
    return min(1.0, delta + 1e-12 * math.exp(log_p1))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ such that a ρ-zCDP mechanism is (ε, δ)-DP.

    Canonne, Kamath & Steinke 2020, Corollary 13: δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α.
    Every α gives a valid δ, so an inexact minimisation only makes the bound looser, never wrong.
    """
    if rho <= 0:
        return 0.0

    def log_delta(log_alpha_minus_one: float) -> float:
        am1 = math.exp(log_alpha_minus_one)
        alpha = 1.0 + am1
        return am1 * (alpha * rho - epsilon) - math.log(am1) + alpha * math.log1p(-1.0 / alpha)

    guess = math.log(max((epsilon + rho) / (2.0 * rho) - 1.0, 1e-6))
    best = optimize.minimize_scalar(log_delta, bracket=(guess - 1.0, guess + 1.0))
    candidates = [log_delta(guess), float(best.fun) if np.isfinite(best.fun) else math.inf]
    return min(1.0, math.exp(min(candidates)))


@functools.lru_cache(maxsize=256)
def discrete_gaussian_sigma2(
    epsilon: float, delta: float, sensitivity: int, *, l2_sensitivity: float | None = None
) -> Fraction:
    """The (near) smallest σ², as an exact rational, for which discrete Gaussian noise is (ε, δ)-DP.

    For a scalar integer query (or a vector query whose neighbours differ in one coordinate by at
    most ``sensitivity``), the exact δ of :func:`discrete_gaussian_delta` (CKS 2020, Theorem 7) is
    used. For a vector query whose neighbours may differ in several coordinates
    (``l2_sensitivity`` given), independent discrete Gaussians are ½(Δ₂/σ)²-zCDP (CKS 2020,
    Theorem 14) and :func:`zcdp_delta` converts. The returned σ² is re-checked against the target.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, positive=True)
    if l2_sensitivity is None:
        if int(sensitivity) != sensitivity or sensitivity < 1:
            raise ParameterError(f"the discrete Gaussian needs an integer sensitivity ≥ 1, got {sensitivity}")

        def delta_at(s2: float) -> float:
            return discrete_gaussian_delta(epsilon, s2, int(sensitivity))

        start = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    else:
        l2 = check_sensitivity(l2_sensitivity, "L2 sensitivity")

        def delta_at(s2: float) -> float:
            return zcdp_delta(l2 * l2 / (2.0 * s2), epsilon)

        start = analytic_gaussian_sigma(epsilon, delta, l2)
    sigma = _smallest_scale(lambda s: delta_at(s * s) <= delta, start=start, rel_tol=1e-7, step=1.05)
    sigma2 = rational_at_least(sigma * sigma)
    if delta_at(float(sigma2)) > delta:  # cannot happen for a monotone δ(σ); checked regardless
        raise ParameterError("could not calibrate the discrete Gaussian for these parameters")
    return sigma2


def discrete_gaussian_half_width(sigma2: float, level: float = 0.95) -> int:
    """The smallest m with Pr[|Y| ≤ m] ≥ level for Y ~ N_Z(0, σ²)."""
    tail = (1.0 - level) / 2.0
    low, high = 0, max(1, int(math.ceil(10 * math.sqrt(sigma2))))
    while discrete_gaussian_tail(sigma2, high) > tail:
        high *= 2
    while low < high:
        mid = (low + high) // 2
        if discrete_gaussian_tail(sigma2, mid) <= tail:
            high = mid
        else:
            low = mid + 1
    return low


def discrete_gaussian_variance(sigma2: float) -> float:
    """Var[Y] for Y ~ N_Z(0, σ²) (slightly below σ² for σ < 1, equal to it to double precision
    for σ ≥ 2)."""
    if sigma2 >= 4.0:
        return sigma2
    xs = np.arange(-200, 201, dtype=np.float64)
    weights = np.exp(-xs * xs / (2.0 * sigma2))
    return float((weights * xs * xs).sum() / weights.sum())
