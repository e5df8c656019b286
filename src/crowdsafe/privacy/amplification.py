"""Amplification by sampling: running a mechanism on a Bernoulli sample strengthens its guarantee.

Theorem (Li, Qardaji, Su 2012, Theorem 1; the unbounded-neighbour form of Chaudhuri & Mishra
2006 and Kasiviswanathan et al. 2008): an algorithm that is (β1, ε1, δ1)-DPS — (ε1, δ1)-DP when
preceded by Bernoulli sampling with rate β1 — is (β2, ε2, δ2)-DPS for every β2 < β1, with

    ε2 = ln(1 + (β2/β1)·(e^ε1 − 1)),   δ2 = (β2/β1)·δ1.

With β1 = 1 this says an (ε, δ)-DP algorithm run on a Bernoulli(β) sample is
(ln(1 + β(e^ε − 1)), βδ)-DP. Neighbours: one tuple added or removed. The amplified guarantee
relies on the sample staying secret and being used for nothing else (see
:mod:`crowdsafe.privacy.certificate`).

Also here: the *sampling floor* of the k-anonymization theorems, ε ≥ −ln(1 − β), and its inverse,
the largest rate 1 − e^(−ε) an ε admits.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

from crowdsafe.errors import ParameterError
from crowdsafe.privacy.loss import PrivacyLoss, check_delta, check_epsilon

#: Up to this ε, e^ε is a finite double (ln of the largest double is 709.78): the plain formulas apply.
_EXP_SAFE = 700.0


def _log_expm1(epsilon: float) -> float:
    """ln(e^ε − 1) for ε > 0, finite for every finite ε: ε + ln(1 − e^−ε) where e^ε would overflow."""
    if epsilon <= _EXP_SAFE:
        return math.log(math.expm1(epsilon))
    return epsilon + math.log1p(-math.exp(-epsilon))


def log1p_scaled_expm1(top: float, bottom: float, epsilon: float) -> float:
    """ln(1 + (top/bottom)·(e^ε − 1)) for rates top, bottom > 0 and a finite ε ≥ 0, never overflowing.

    Where (top/bottom)·(e^ε − 1) is a finite double, the plain log1p/expm1 formula (as before);
    beyond, the same value as softplus(x) = ln(1 + e^x), x = ln top − ln bottom + ln(e^ε − 1),
    taken as x + ln(1 + e^−x) (or ln(1 + e^x) for x ≤ 0): exact to rounding, and for a huge ε it
    is ε + ln(top/bottom) plus terms below the rounding of ε, a finite answer.
    """
    if epsilon == 0.0:
        return 0.0
    ratio = top / bottom
    if epsilon <= _EXP_SAFE:
        product = ratio * math.expm1(epsilon)
        if math.isfinite(product):
            return math.log1p(product)
    x = math.log(top) - math.log(bottom) + _log_expm1(epsilon)
    return x + math.log1p(math.exp(-x)) if x > 0.0 else math.log1p(math.exp(x))


def _expm1_ratio(top: float, bottom: float) -> float:
    """min((e^top − 1)/(e^bottom − 1), 1) for top ≥ 0, bottom > 0, without overflow."""
    if top <= _EXP_SAFE and bottom <= _EXP_SAFE:
        return min(math.expm1(top) / math.expm1(bottom), 1.0)
    if top == 0.0:
        return 0.0
    return math.exp(min(_log_expm1(top) - _log_expm1(bottom), 0.0))


def check_rate(beta: float, name: str = "beta", *, allow_one: bool = True) -> float:
    """Return ``beta`` as a float if it is a sampling rate in (0, 1] (or (0, 1)), else raise."""
    try:
        value = float(beta)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {beta!r}") from None
    upper_ok = value <= 1.0 if allow_one else value < 1.0
    if isinstance(beta, bool) or not (value > 0.0 and upper_ok):
        interval = "(0, 1]" if allow_one else "(0, 1)"
        raise ParameterError(f"the sampling rate {name} must lie in {interval}, got {beta!r}")
    return value


def amplify(loss: PrivacyLoss, rate: float, base_rate: float = 1.0) -> PrivacyLoss:
    """The guarantee of a (base_rate, ε, δ)-DPS algorithm when the sampling rate drops to ``rate``.

    ε2 = ln(1 + (β2/β1)(e^ε1 − 1)), δ2 = (β2/β1)δ1 (Li, Qardaji, Su 2012, Theorem 1). With
    ``base_rate`` 1 (the default) ``loss`` is a plain (ε, δ)-DP guarantee. The identity at
    ``rate == base_rate``. Finite for every finite ε (:func:`log1p_scaled_expm1`): ε = 1e308
    amplifies to 1e308 + ln(β2/β1), i.e. 1e308 in double precision.
    """
    beta1 = check_rate(base_rate, "base_rate")
    beta2 = check_rate(rate, "rate")
    if beta2 > beta1:
        raise ParameterError(
            f"amplification only lowers the sampling rate: rate {beta2} exceeds base_rate {beta1}"
        )
    ratio = beta2 / beta1
    return PrivacyLoss(log1p_scaled_expm1(beta2, beta1, loss.epsilon), ratio * loss.delta)


def largest_rate(inner: PrivacyLoss, target: PrivacyLoss, base_rate: float = 1.0) -> float:
    """The largest sampling rate at which a (base_rate, ε1, δ1)-DPS algorithm meets ``target``.

    Inverts :func:`amplify`: β2 = β1·min((e^ε2 − 1)/(e^ε1 − 1), δ2/δ1, 1). Raises when no
    positive rate suffices (target ε = 0 with inner ε > 0, or target δ = 0 with inner δ > 0), or
    when the largest is below the smallest positive double (ε1 far above ε2). The ratio of the
    e^ε − 1 is taken in log space where e^ε would overflow (ε > 700).
    """
    beta1 = check_rate(base_rate, "base_rate")
    ratios = [1.0]
    if inner.epsilon > 0.0:
        ratios.append(_expm1_ratio(target.epsilon, inner.epsilon))
    if inner.delta > 0.0:
        ratios.append(target.delta / inner.delta)
    rate = beta1 * min(ratios)
    # the formula's rounding may miss the target by an ulp: step down until the amplified loss meets
    # it (ulp by ulp, then, should the rounding be coarser, by a relative 1e-12 per step)
    steps = 0
    while rate > 0.0 and not _meets(amplify(inner, rate, beta1), target):
        rate = math.nextafter(rate, 0.0) if steps < 64 else rate * (1.0 - 1e-12)
        steps += 1
    if rate <= 0.0:
        if (inner.epsilon > 0.0 and target.epsilon == 0.0) or (inner.delta > 0.0 and target.delta == 0.0):
            raise ParameterError(
                f"no sampling rate makes {inner} meet {target}: sampling cannot reach "
                "epsilon = 0 or delta = 0 from a positive value"
            )
        raise ParameterError(
            f"the largest sampling rate that makes {inner} meet {target} is below the smallest positive "
            f"double ({math.ulp(0.0):g}): lower the inner loss or raise the target"
        )
    return rate


def _meets(loss: PrivacyLoss, target: PrivacyLoss) -> bool:
    return loss.epsilon <= target.epsilon and loss.delta <= target.delta


def largest_inner_loss(target: PrivacyLoss, rate: float, base_rate: float = 1.0) -> PrivacyLoss:
    """The weakest (base_rate, ε1, δ1)-DPS guarantee that, sampled at ``rate``, still meets ``target``.

    ε1 = ln(1 + (β1/β2)(e^ε2 − 1)), δ1 = min(δ2·β1/β2, just below 1); finite for every finite ε2
    (:func:`log1p_scaled_expm1`).
    """
    beta1 = check_rate(base_rate, "base_rate")
    beta2 = check_rate(rate, "rate")
    if beta2 > beta1:
        raise ParameterError(f"rate {beta2} exceeds base_rate {beta1}")
    delta = target.delta * (beta1 / beta2) if target.delta > 0.0 else 0.0  # β1/β2 may overflow: 0·inf
    if delta >= 1.0:
        delta = math.nextafter(1.0, 0.0)
    return PrivacyLoss(log1p_scaled_expm1(beta1, beta2, target.epsilon), delta)


def admits(beta: float, epsilon: float, epsilon1: float = 0.0) -> bool:
    """Whether ε − ε1 ≥ −ln(1 − β), the sampling floor of Theorems 5 and 6, at the *exact* values
    of the three doubles (ε − ε1 their exact difference), never by floating point alone.

    Far from the floor the doubles decide it. Within 1e-12 relative, e^−(ε − ε1) is compared with
    1 − β in decimal arithmetic whose precision doubles until the error bound separates them:
    e^−x is irrational for every rational x ≠ 0 (Lindemann), so they are never equal, and the
    loop ends (x = 0 is decided at once: e^0 = 1 > 1 − β for β > 0).
    """
    beta = check_rate(beta)
    if beta == 1.0:
        return False
    room = float(Fraction(epsilon) - Fraction(epsilon1))  # correctly rounded
    floor = -math.log1p(-beta)
    if room > floor * (1.0 + 1e-12):
        return True
    if room < floor * (1.0 - 1e-12):
        return False
    x = Fraction(epsilon) - Fraction(epsilon1)
    if x <= 0:
        return False
    keep = 1 - Fraction(beta)
    precision = 40
    while True:
        with localcontext() as context:
            context.prec = precision
            exp_minus_x = (-(Decimal(x.numerator) / Decimal(x.denominator))).exp()
            kept = Decimal(keep.numerator) / Decimal(keep.denominator)
            context.prec = precision + 20
            gap = kept - exp_minus_x
            error = 2 * max(kept, exp_minus_x) * (Decimal(float(x)) + 8) * Decimal(10) ** (1 - precision)
        if abs(gap) > error:
            return gap > 0
        precision *= 2


def sampling_floor(beta: float, epsilon1: float = 0.0) -> float:
    """The least ε (a double) the k-anonymization theorems admit at rate β: −ln(1 − β) (+ ε1),
    rounded up to the least double :func:`admits` (the nearest double may lie just below).

    Below it no k gives a guarantee (Li, Qardaji, Su 2012, Theorems 5 and 6). At β = 1 the floor
    is infinite: k-anonymization without sampling is not differentially private.
    """
    beta = check_rate(beta)
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    if beta == 1.0:
        return math.inf
    floor = -math.log1p(-beta) + epsilon1
    while not admits(beta, floor, epsilon1):
        floor = math.nextafter(floor, math.inf)
    while floor > epsilon1 and admits(beta, below := math.nextafter(floor, 0.0), epsilon1):
        floor = below
    return floor


def largest_rate_for_epsilon(epsilon: float, epsilon1: float = 0.0) -> float:
    """The largest β whose sampling floor admits ε: 1 − e^(−(ε − ε1)), rounded down to the
    largest double :func:`admits` (the nearest double may lie just above)."""
    epsilon = check_epsilon(epsilon)
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    if epsilon <= epsilon1:
        raise ParameterError(
            f"epsilon ({epsilon}) must exceed the selection budget epsilon1 ({epsilon1})"
        )
    rate = -math.expm1(-(epsilon - epsilon1))
    while rate > 0.0 and not admits(rate, epsilon, epsilon1):
        rate = math.nextafter(rate, 0.0)
    while (above := math.nextafter(rate, 1.0)) < 1.0 and admits(above, epsilon, epsilon1):
        rate = above
    return rate


def check_dps_delta(delta: float, beta: float) -> float:
    """DPS is defined only for β > δ (Li, Qardaji, Su 2012, Definition 3)."""
    delta = check_delta(delta)
    if not beta > delta:
        raise ParameterError(
            f"(beta, epsilon, delta)-DPS needs beta > delta, got beta = {beta}, delta = {delta}"
        )
    return delta
