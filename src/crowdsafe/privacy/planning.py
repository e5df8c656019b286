"""Planning a safe k-anonymization release: solve d(k, β, ε − ε1) ≤ δ for one unknown.

- :func:`smallest_k` — given (ε, δ, β): the least k. d falls as k grows (n_m grows, so the
  maximum is over fewer n), so a doubling-then-bisection search is exact (:func:`least_k`: the
  k alone, for planners that search over many rates).
- :func:`largest_beta` — given (ε, δ, k): the largest rate, at most 1 − e^−(ε − ε1) (the
  sampling floor read the other way); d is not monotone in β at fine scale (see the function
  for what its search guarantees).
- :func:`smallest_epsilon` — given (k, β, δ): the least ε, at least −ln(1 − β) + ε1.
- :func:`plan` — the planner of ``crowdsafe publish``: fills in whatever the user left open.

The sampling floor. The theorems (Li, Qardaji, Su 2012, Theorems 5 and 6) hold only for
ε ≥ −ln(1 − β) + ε1. When the answer is pinned by that condition rather than by δ, the result
says so (``floor_binds``) and explains it: e.g. the smallest ε may be the floor even though δ
would allow less, and the largest β may be 1 − e^−(ε − ε1) even though δ would allow more.

Every answer is re-evaluated before it is returned: the δ it reports is d at the answer, which
never exceeds the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from crowdsafe.defaults import EPSILON1_SHARE_RANGE
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import rounded_down as rate_text  # an upper bound on beta: typed back, it is taken
from crowdsafe.number_text import rounded_up as loss_text
from crowdsafe.privacy.amplification import (
    admits,
    check_dps_delta,
    check_rate,
    largest_rate_for_epsilon,
    sampling_floor,
)
from crowdsafe.privacy.dps import check_k, delta_bound, dps_delta, dps_delta_at_most
from crowdsafe.privacy.loss import check_delta, check_epsilon

Unknown = Literal["k", "beta", "epsilon", "check"]

MAX_K = _MAX_K = 10_000_000  # the largest k the planner searches (a larger k is refused)
_BETA_SCAN = 64  # grid used to look for feasible rates above a bisection's boundary
_BETA_GRID = 65  # logarithmic grid of rates above δ that largest_beta scans when halving reaches δ


@dataclass(frozen=True)
class Plan:
    """A solved release plan: every parameter, the δ it achieves, and why it stopped where it did."""

    solved_for: Unknown
    k: int
    beta: float
    epsilon: float
    epsilon1: float
    delta: float
    delta_target: float
    floor: float
    floor_binds: bool
    explanation: str

    @property
    def epsilon_anon(self) -> float:
        return self.epsilon - self.epsilon1

    def as_dict(self) -> dict[str, object]:
        return {
            "solved_for": self.solved_for,
            "k": self.k,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "epsilon1": self.epsilon1,
            "epsilon_anon": self.epsilon_anon,
            "delta": self.delta,
            "delta_target": self.delta_target,
            "sampling_floor": self.floor,
            "floor_binds": self.floor_binds,
            "explanation": self.explanation,
        }


def _floor_message(epsilon: float, beta: float, epsilon1: float) -> str:
    floor = sampling_floor(beta, epsilon1)
    extra = f" + epsilon1 ({epsilon1:g})" if epsilon1 else ""
    fix = ""
    if epsilon > epsilon1:
        largest = rate_text(largest_rate_for_epsilon(epsilon, epsilon1))
        fix = f"; lower beta to at most 1 - e^-(epsilon - epsilon1) = {largest}"
    return (
        f"epsilon = {epsilon:g} is below the sampling floor -ln(1 - beta){extra} = {loss_text(floor)} "
        f"at beta = {beta:g}: the theorem gives no guarantee for any k{fix}, or raise epsilon"
    )


def _check_common(epsilon1: float, delta: float) -> tuple[float, float]:
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    delta = check_delta(delta)
    if delta == 0.0:
        raise ParameterError(
            "delta must be > 0: k-anonymization after sampling is (epsilon, delta)-DP with delta > 0"
        )
    return epsilon1, delta


def sampling_rate_below_one(epsilon: float, epsilon1: float = 0.0) -> bool:
    """Whether β = 1 − e^−(ε − ε1) is below 1 in double precision (beyond ε − ε1 ≈ 37.43 it
    rounds to 1: a sample of every row, which Theorems 5–6 do not cover)."""
    return -math.expm1(-(epsilon - epsilon1)) < 1.0


def largest_sampled_epsilon(*, epsilon1: float = 0.0, epsilon1_share: float = 0.0) -> float:
    """The largest ε (a double) for which β = 1 − e^−(ε − ε1) stays below 1 in double precision,
    where ε1 = ``epsilon1`` + ``epsilon1_share``·ε (a fixed ε1, or a share of ε as
    :func:`crowdsafe.anonymize.plan.plan_publication` takes by default). Decided from the
    parameters alone; bisection over doubles."""
    if not 0.0 <= epsilon1_share < 1.0:
        raise ParameterError(f"epsilon1_share must lie in [0, 1), got {epsilon1_share!r}")

    def ok(eps: float) -> bool:
        return sampling_rate_below_one(eps, epsilon1 + epsilon1_share * eps)

    return _bisected(ok, epsilon1, (epsilon1 + 64.0) / (1.0 - epsilon1_share), below=True)[0]


def _bisected(holds: Callable[[float], bool], lo: float, hi: float, *, below: bool) -> tuple[float, float]:
    """``(lo, hi)`` halved over the doubles down to neighbours (or as near as halving gets), keeping
    ``holds`` equal to ``below`` at the points taken as ``lo`` and unequal at those taken as ``hi``
    (one boundary between them; the ends themselves are never evaluated)."""
    while math.nextafter(lo, math.inf) < hi:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            break
        lo, hi = (mid, hi) if holds(mid) == below else (lo, mid)
    return lo, hi


def rate_above_delta(epsilon: float, delta: float, epsilon1: float = 0.0) -> bool:
    """Whether some sampling rate β > δ is admitted at ε: 1 − e^−(ε − ε1) > δ. (β, ε, δ)-DPS needs
    β > δ (Li, Qardaji, Su 2012, Definition 3) and the sampling floor β ≤ 1 − e^−(ε − ε1): without
    such a β no plan exists (ε − ε1 ≤ −ln(1 − δ), about δ)."""
    return -math.expm1(-(epsilon - epsilon1)) > delta


def smallest_sampled_epsilon(delta: float, *, epsilon1: float = 0.0, epsilon1_share: float = 0.0) -> float:
    """The smallest ε (a double) at which a rate β > δ is admitted (:func:`rate_above_delta`), where
    ε1 = ``epsilon1`` + ``epsilon1_share``·ε, as for :func:`largest_sampled_epsilon`; bisection over doubles."""
    if not 0.0 <= epsilon1_share < 1.0:
        raise ParameterError(f"epsilon1_share must lie in [0, 1), got {epsilon1_share!r}")

    def ok(eps: float) -> bool:
        return rate_above_delta(eps, delta, epsilon1 + epsilon1_share * eps)

    # from β = 0 to β ≈ 1 > δ: the first ε that admits a rate above δ
    return _bisected(ok, epsilon1, (epsilon1 + 64.0) / (1.0 - epsilon1_share), below=False)[1]


def check_rate_above_delta(epsilon: float, delta: float, epsilon1: float = 0.0,
                           epsilon1_share: float | None = None) -> None:
    """Refuse δ outside (0, 1), and an ε at which no rate β > δ is admitted (:func:`rate_above_delta`),
    naming the range of ε the planner accepts (``epsilon1_share``: ε1 is that share of ε)."""
    epsilon1, delta = _check_common(epsilon1, delta)
    if rate_above_delta(epsilon, delta, epsilon1):
        return
    if epsilon1_share is not None:
        smallest = smallest_sampled_epsilon(delta, epsilon1_share=epsilon1_share)
        largest = largest_sampled_epsilon(epsilon1_share=epsilon1_share)
        how = _share_words(epsilon1_share)
    else:
        smallest = smallest_sampled_epsilon(delta, epsilon1=epsilon1)
        largest = largest_sampled_epsilon(epsilon1=epsilon1)
        how = f"epsilon1 = {epsilon1:g}"
    accepted = (f"the planner accepts epsilon from {rounded_up(smallest):g} to {rounded_down(largest):g} with {how}"
                if smallest <= largest else f"no epsilon is accepted at this delta with {how}; lower delta")
    raise ParameterError(
        f"epsilon = {epsilon:g} is too small: the sampling rate beta must exceed delta = {delta:g} ((beta, epsilon, "
        f"delta)-DPS) and be at most 1 - e^-(epsilon - epsilon1) = "
        f"{rate_text(-math.expm1(-(epsilon - epsilon1)), 3)} (the sampling floor); {accepted}"
    )


def rounded_up(value: float, digits: int = 4) -> float:
    """``value`` raised to ``digits`` significant digits (never below it): a lower limit printed
    this way still holds."""
    text = f"{value:.{digits - 1}e}"
    up = float(text)
    if up < value:
        mantissa, exponent = text.split("e")
        up = float(f"{float(mantissa) + 10.0 ** (1 - digits):.{digits - 1}f}e{exponent}")
    return up


def rounded_down(value: float, digits: int = 4) -> float:
    """``value`` cut (not rounded) to ``digits`` decimals: a limit printed this way still holds."""
    cut: float = math.floor(value * 10**digits) / 10**digits
    return cut


def _share_words(share: float) -> str:
    """How a limit on ε is checked while ε1 is left to the planner: with ε1 taken as ``share`` of ε,
    before the plan sizes ε1 itself (within EPSILON1_SHARE_RANGE of ε: a plan just inside the
    limit may spend another share)."""
    low, high = EPSILON1_SHARE_RANGE
    return (f"epsilon1 = {share:.0%} of epsilon (this check takes that share while epsilon1 is left to the planner, "
            f"which then sizes it within {low:.0%}-{high:.0%} of epsilon; give epsilon1 or beta to be checked with "
            "yours)")


def check_sampled_epsilon(epsilon: float, epsilon1: float = 0.0, epsilon1_share: float | None = None) -> None:
    """Refuse an ε for which β = 1 − e^−(ε − ε1) rounds to 1 (:func:`sampling_rate_below_one`),
    naming the largest ε that keeps β below 1 (``epsilon1_share``: ε1 is that share of ε)."""
    if sampling_rate_below_one(epsilon, epsilon1):
        return
    if epsilon1_share is not None:
        largest = largest_sampled_epsilon(epsilon1_share=epsilon1_share)
        how = _share_words(epsilon1_share)
    else:
        largest = largest_sampled_epsilon(epsilon1=epsilon1)
        how = f"epsilon1 = {epsilon1:g}"
    raise ParameterError(
        f"epsilon = {epsilon:g} is too large: the sampling rate beta = 1 - e^-(epsilon - epsilon1) rounds to 1 "
        f"in double precision (every row sampled, which the theorem does not cover); epsilon can be at most "
        f"{rounded_down(largest):g} with {how}"
    )


def smallest_k(epsilon: float, delta: float, beta: float, epsilon1: float = 0.0, *, near: int | None = None) -> Plan:
    """The least k with d(k, β, ε − ε1) ≤ δ (Li, Qardaji, Su 2012, Theorems 5–6), and the δ it
    achieves: :func:`least_k`, then d evaluated at that k.

    d falls as k grows (a larger k only shrinks the set of n the maximum runs over), so a
    bracket and a bisection find it. ``near``: a guess (the k of a nearby rate, say); the bracket
    then grows outward from it, and a good guess costs a few evaluations of d instead of about
    2·log2(k). The answer does not depend on the guess."""
    k = least_k(epsilon, delta, beta, epsilon1, near=near)
    epsilon, beta = check_epsilon(epsilon), check_rate(beta, allow_one=False)
    epsilon1, delta = _check_common(epsilon1, delta)
    achieved = dps_delta(k, beta, epsilon, epsilon1)
    return Plan(
        "k", k, beta, epsilon, epsilon1, achieved, delta, sampling_floor(beta, epsilon1), False,
        f"k = {k} is the least k with d(k, beta, epsilon - epsilon1) = {loss_text(achieved, 3)} <= {delta:g}",
    )


def least_k(epsilon: float, delta: float, beta: float, epsilon1: float = 0.0, *, near: int | None = None) -> int:
    """The k of :func:`smallest_k` (the same checks, refusals and search), without evaluating d
    once more at the answer: for a planner that needs k alone (the rate grid of
    :func:`crowdsafe.anonymize.plan.best_rate` asks for k at 64 rates)."""
    epsilon = check_epsilon(epsilon)
    beta = check_rate(beta, allow_one=False)
    epsilon1, delta = _check_common(epsilon1, delta)
    check_dps_delta(delta, beta)
    if not admits(beta, epsilon, epsilon1):
        raise ParameterError(_floor_message(epsilon, beta, epsilon1))

    decided: dict[int, bool] = {}

    def ok(k: int) -> bool:
        if k not in decided:
            decided[k] = dps_delta_at_most(k, beta, epsilon, delta, epsilon1)
        return decided[k]

    def too_large() -> ParameterError:
        return ParameterError(
            f"no k up to {_MAX_K} reaches delta = {delta:g} at beta = {beta:g}, "
            f"epsilon = {epsilon:g}; raise epsilon or lower beta"
        )

    start = 1 if near is None else min(max(int(near), 1), _MAX_K)
    step = 1
    if ok(start):  # lo: infeasible (or 0), hi: feasible
        lo, hi = start - 1, start
        while lo >= 1 and ok(lo):
            hi, step = lo, step * 2
            lo = max(hi - step, 0)
    else:
        lo, hi = start, start + 1
        while not ok(hi):
            lo, step = hi, step * 2
            hi = lo + step
            if hi > _MAX_K:
                if lo >= _MAX_K or not ok(_MAX_K):
                    raise too_large()
                hi = _MAX_K
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def largest_beta(epsilon: float, delta: float, k: int, epsilon1: float = 0.0) -> Plan:
    """The largest rate β with d(k, β, ε − ε1) ≤ δ and ε ≥ −ln(1 − β) + ε1.

    The rate is halved from 1 − e^−(ε − ε1) until it is feasible, then bisected against the
    infeasible rate above it. When halving reaches δ first, the rates between δ and the last
    infeasible one are scanned from the top on a logarithmic grid (:func:`_scan_below`), since
    the feasible ones may span less than a factor of 2; a refusal means no rate of that grid is
    feasible. d is not monotone in β at fine scale (n_m and ⌊γn⌋ jump; it grows with β in
    trend), so after bisecting to a boundary the rates above it are scanned on a linear grid and
    any feasible stretch found there is refined the same way. Not guaranteed: a feasible stretch
    lying wholly between two infeasible rates tried (narrower than a grid step) is missed; the
    answer is then smaller than the largest feasible rate (or, if every feasible rate lies in
    such a stretch, a refusal), never infeasible. The returned β is always verified: d at β is
    at most δ.
    """
    epsilon = check_epsilon(epsilon)
    k = check_k(k)
    epsilon1, delta = _check_common(epsilon1, delta)
    check_sampled_epsilon(epsilon, epsilon1)
    beta_max = largest_rate_for_epsilon(epsilon, epsilon1)

    def ok(beta: float) -> bool:
        return beta > delta and dps_delta_at_most(k, beta, epsilon, delta, epsilon1)

    floor_note = (
        f"the sampling floor binds: beta = {rate_text(beta_max)} = 1 - e^-(epsilon - epsilon1) is the "
        "largest rate the theorem admits at this epsilon, although delta would allow more"
    )
    if ok(beta_max):
        achieved = dps_delta(k, beta_max, epsilon, epsilon1)
        return Plan("beta", k, beta_max, epsilon, epsilon1, achieved, delta,
                    sampling_floor(beta_max, epsilon1), True, floor_note)
    lo = hi = beta_max
    while not ok(lo):
        hi, lo = lo, lo / 2.0  # hi: the last rate found infeasible
        if lo < 1e-12 or lo <= delta:
            # The feasible rates above δ, if any, lie below hi and may span less than the factor
            # of 2 the halving steps by (ε = 0.5, δ = 0.05, k = 2: (0.05, 0.0976]): scan them.
            lo, hi = _scan_below(ok, max(delta, 1e-12), hi, (
                f"no sampling rate above delta = {delta:g} reaches it with k = {k} at "
                f"epsilon = {epsilon:g}; raise k or epsilon"))
            break
    lo = _bisect_beta(ok, lo, hi)
    # Look above the boundary for feasible rates the sawtooth may hide.
    grid = np.linspace(lo, beta_max, _BETA_SCAN + 2)[1:-1]
    feasible = [b for b in grid if ok(float(b))]
    if feasible:
        start = float(feasible[-1])
        above = float(grid[np.searchsorted(grid, start, side="right")]) if start < grid[-1] else beta_max
        lo = _bisect_beta(ok, start, above)
    achieved = dps_delta(k, lo, epsilon, epsilon1)
    return Plan(
        "beta", k, lo, epsilon, epsilon1, achieved, delta, sampling_floor(lo, epsilon1), False,
        f"beta = {rate_text(lo)} is the largest rate with d(k, beta, epsilon - epsilon1) = "
        f"{loss_text(achieved, 3)} <= {delta:g} (the floor would allow up to {rate_text(beta_max)})",
    )


def _scan_below(ok: Callable[[float], bool], low: float, hi: float, refusal: str) -> tuple[float, float]:
    """The largest feasible rate of a logarithmic grid of :data:`_BETA_GRID` rates in (low, hi),
    scanned from the top, and the infeasible grid rate above it (hi: infeasible); ``refusal`` if
    none is feasible."""
    start = low * (1.0 + 1e-9)  # just above low (δ): a rate must exceed δ
    if not start < hi:
        raise ParameterError(refusal)
    grid = np.geomspace(start, hi, _BETA_GRID)[::-1]
    for i in range(1, len(grid)):
        if ok(float(grid[i])):
            return float(grid[i]), float(grid[i - 1])
    raise ParameterError(refusal)


def _bisect_beta(ok: Callable[[float], bool], lo: float, hi: float) -> float:
    """Shrink [lo, hi] (lo feasible, hi not) to relative width 1e-9; return the feasible end."""
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def smallest_epsilon(k: int, beta: float, delta: float, epsilon1: float = 0.0) -> Plan:
    """The least ε with d(k, β, ε − ε1) ≤ δ and ε ≥ −ln(1 − β) + ε1."""
    k = check_k(k)
    beta = check_rate(beta, allow_one=False)
    epsilon1, delta = _check_common(epsilon1, delta)
    check_dps_delta(delta, beta)
    floor = sampling_floor(beta, epsilon1)
    # As ε → ∞, γ → 1, n_m → k and d falls towards β^k (the chance that all k rows of a group
    # are sampled) without reaching it: no ε goes to or below that.
    limit = beta**k
    if delta <= limit:
        raise ParameterError(
            f"no epsilon reaches delta = {delta:g} with k = {k} at beta = {beta:g}: d(k, beta, "
            f"epsilon) only falls towards beta^k = {limit:.3g} as epsilon grows; raise k or lower beta"
        )

    def ok(eps: float) -> bool:
        return dps_delta_at_most(k, beta, eps, delta, epsilon1)

    if ok(floor):
        achieved = dps_delta(k, beta, floor, epsilon1)
        return Plan(
            "epsilon", k, beta, floor, epsilon1, achieved, delta, floor, True,
            f"the sampling floor binds: epsilon = -ln(1 - beta) + epsilon1 = {loss_text(floor)} is the "
            f"least epsilon the theorem admits at beta = {beta:g}; delta alone would allow less "
            f"(d = {loss_text(achieved, 3)} there)",
        )
    lo, step = floor, 1.0
    hi = floor + step
    while not ok(hi):
        lo, step = hi, step * 2.0
        hi = floor + step
        if step > 1e4:  # pragma: no cover - excluded by the limit check above
            raise ParameterError(f"no epsilon reaches delta = {delta:g} with k = {k}, beta = {beta:g}")
    hi = _least_feasible_epsilon(k, beta, delta, epsilon1, lo, hi)
    achieved = dps_delta(k, beta, hi, epsilon1)
    return Plan(
        "epsilon", k, beta, hi, epsilon1, achieved, delta, floor, False,
        f"epsilon = {loss_text(hi)} is the least epsilon with d(k, beta, epsilon - epsilon1) = "
        f"{loss_text(achieved, 3)} <= {delta:g} (the sampling floor is {loss_text(floor)})",
    )


def _least_feasible_epsilon(
    k: int, beta: float, delta: float, epsilon1: float, lo: float, hi: float
) -> float:
    """The least ε in (lo, hi] with d ≤ δ (lo infeasible, hi feasible), to 1e-9 relative.

    log d falls with ε, smoothly between jumps, so Brent's method on log d − log δ finds the
    crossing in a few evaluations; the bracket is then closed by bisection so that the answer
    returned is a verified-feasible point within 1e-9 (relative) of an infeasible one.
    """
    from scipy.optimize import brentq

    log_target = math.log(delta)

    def gap(eps: float) -> float:
        return delta_bound(k, beta, eps, epsilon1).log_delta - log_target

    guess = float(brentq(gap, lo, hi, xtol=1e-12, rtol=1e-10))
    width = 1e-9 * guess
    below, above = max(lo, guess - width), min(hi, guess + width)
    if gap(above) > 0.0:
        below, above = above, hi
    if gap(below) <= 0.0:
        below, above = lo, below
    while above - below > 1e-9 * above:
        mid = 0.5 * (below + above)
        if gap(mid) <= 0.0:
            above = mid
        else:
            below = mid
    return above


def plan(
    epsilon: float,
    delta: float,
    *,
    beta: float | None = None,
    k: int | None = None,
    epsilon1: float = 0.0,
) -> Plan:
    """Fill in a release plan for a target (ε, δ): what ``crowdsafe publish`` runs first.

    - neither β nor k given: β = 1 − e^−(ε − ε1), the largest rate the theorem admits (more rows
      kept), then the smallest k;
    - β given: the smallest k; k given: the largest β;
    - both given: check that d(k, β, ε − ε1) ≤ δ and report it (``solved_for == "check"``).
    """
    if beta is None and k is None:
        epsilon = check_epsilon(epsilon)
        epsilon1 = check_epsilon(epsilon1, "epsilon1")
        check_sampled_epsilon(epsilon, epsilon1)
        chosen = largest_rate_for_epsilon(epsilon, epsilon1)
        try:
            result = smallest_k(epsilon, delta, chosen, epsilon1)
        except ParameterError:
            if chosen < 0.999:
                raise
            # At large epsilon the largest admitted rate keeps almost every row, so sampling
            # hides almost nothing and no practical k (or, as 1 - beta nears the float
            # resolution, no representable floor) remains: say so, and what to do instead.
            raise ParameterError(
                f"at epsilon = {epsilon:g} the default sampling rate beta = 1 - e^-(epsilon - epsilon1) "
                f"leaves out only {1.0 - chosen:.3g} of the rows, and no k up to {MAX_K:,} reaches "
                f"delta = {delta:g} with it; give the sampling rate yourself (beta, e.g. 0.5), which "
                "needs a far smaller k"
            ) from None
        return Plan(
            "k", result.k, chosen, result.epsilon, epsilon1, result.delta, result.delta_target,
            result.floor, True,
            f"beta = {rate_text(chosen)} = 1 - e^-(epsilon - epsilon1), the largest rate the theorem "
            f"admits; then {result.explanation}",
        )
    if k is None:
        assert beta is not None
        return smallest_k(epsilon, delta, beta, epsilon1)
    if beta is None:
        return largest_beta(epsilon, delta, k, epsilon1)
    epsilon = check_epsilon(epsilon)
    beta = check_rate(beta, allow_one=False)
    epsilon1, delta = _check_common(epsilon1, delta)
    check_dps_delta(delta, beta)
    k = check_k(k)
    if not admits(beta, epsilon, epsilon1):
        raise ParameterError(_floor_message(epsilon, beta, epsilon1))
    achieved = dps_delta(k, beta, epsilon, epsilon1)
    if achieved > delta:
        better = smallest_k(epsilon, delta, beta, epsilon1).k
        at = (f"epsilon - epsilon1 = {epsilon:g} - {epsilon1:g} = {epsilon - epsilon1:.4g}" if epsilon1
              else f"epsilon = {epsilon:g}")  # d is evaluated at epsilon - epsilon1
        raise ParameterError(
            f"k = {k}, beta = {beta:g}, {at} give delta = {achieved:.3g} > "
            f"{delta:g}; use k >= {better}, a smaller beta, or a larger epsilon"
        )
    return Plan(
        "check", k, beta, epsilon, epsilon1, achieved, delta, sampling_floor(beta, epsilon1), False,
        f"d(k, beta, epsilon - epsilon1) = {loss_text(achieved, 3)} <= {delta:g}",
    )


__all__ = [
    "Plan",
    "check_rate_above_delta",
    "check_sampled_epsilon",
    "largest_beta",
    "largest_sampled_epsilon",
    "least_k",
    "plan",
    "rate_above_delta",
    "sampling_rate_below_one",
    "smallest_epsilon",
    "smallest_k",
    "smallest_sampled_epsilon",
]
