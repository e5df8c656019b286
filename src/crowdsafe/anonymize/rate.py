"""The planner's sampling rate (:func:`best_rate`) and the planning module's plan at the
parameters a publication fixes (:func:`solve_plan`): from (ε, δ, ε1) alone, no data
(:mod:`crowdsafe.anonymize.plan` uses them)."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from crowdsafe.defaults import EPSILON1_SHARE_RANGE, RATE_TOLERANCE
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.privacy import plan
from crowdsafe.privacy.amplification import largest_rate_for_epsilon
from crowdsafe.privacy.planning import MAX_K, least_k

BETA_RULE = (f"the largest beta whose beta/k is within {RATE_TOLERANCE:.0%} of the best: about the most classes "
             "of k rows the sample can fill, with as many rows as that allows (k grows with beta)")
#: Rates tried first by :func:`best_rate` (a geometric grid, to find where the best k lies).
_RATE_GRID = 64


@functools.lru_cache(maxsize=256)
def best_rate(epsilon: float, delta: float, epsilon1: float) -> float:
    """The planner's sampling rate, from (ε, δ, ε1) alone: the expected sample n·β fills about
    n·β/k classes of k rows (the finest resolution a release can reach), where k is the least k
    with d(k, β, ε − ε1) ≤ δ. For each k, β(k) is the largest rate k covers (≤ 1 − e^−(ε − ε1)),
    and β(k)/k is the best ratio with that k; the rate returned is β(k) for the largest k whose
    ratio is within 10% of the best: near the resolution optimum, more rows mean smaller
    sampling error. (At small ε this is the largest admitted rate; at large ε, where that rate is
    near 1 and k explodes, far smaller.) A geometric grid of rates gives each k it meets a rate
    it covers; the three best ks and the chosen one are solved exactly (β(k))."""
    low, top = _rate_range(epsilon, delta, epsilon1)
    seen: dict[int, float] = {}  # k -> the largest grid rate it covers (a lower bound on β(k))
    near = None  # the last rate's k: the next rate's is close
    # No rate above δ (least_k refuses β ≤ δ) or no positive grid (top/2 rounds to 0): nothing to try
    for r in np.geomspace(low, top, _RATE_GRID) if 0.0 < low and delta < top else []:
        try:
            near = least_k(epsilon, delta, float(r), epsilon1, near=near)
        except ParameterError:  # no k up to the planner's limit at this rate
            continue
        k = max(near, 2)
        seen[k] = max(seen.get(k, 0.0), float(r))
    if not seen:
        raise ParameterError(f"no sampling rate reaches delta = {delta:g} at epsilon = {epsilon:g} with k up to "
                             f"{MAX_K:,}; raise epsilon or delta")
    def peak(k: int) -> float:  # the largest rate k covers: the top of k's tooth of the sawtooth
        try:
            return min(plan(epsilon, delta, k=k, epsilon1=epsilon1).beta, top)
        except ParameterError:
            return seen[k]

    # the few best ks by their grid ratio, solved exactly, set the best ratio
    leaders = sorted(seen, key=lambda k: seen[k] / k, reverse=True)[:3]
    exact = {k: max(peak(k), seen[k]) for k in leaders}
    best = max(max(r / k for k, r in exact.items()), max(r / k for k, r in seen.items()))
    threshold = (1.0 - RATE_TOLERANCE) * best
    chosen = max([k for k, r in seen.items() if r / k >= threshold]
                 + [k for k, r in exact.items() if r / k >= threshold])
    return exact[chosen] if chosen in exact else max(peak(chosen), seen[chosen])


def _rate_range(epsilon: float, delta: float, epsilon1: float) -> tuple[float, float]:
    """The lowest and the highest rate of :func:`best_rate`'s grid: from 2δ (at least 1e-4, at
    most half the top) to the largest admitted rate 1 − e^−(ε − ε1), at most 1 − 1e-9."""
    top = min(largest_rate_for_epsilon(epsilon, epsilon1), 1.0 - 1e-9)
    return min(max(2.0 * delta, 1e-4), top / 2), top


def solve_plan(epsilon: float, delta: float, beta: float | None, k: int | None, epsilon1: float,
               largest_rate: bool = False) -> Any:
    """The planning module's Plan for these parameters: β and k as given; when neither is, β
    from :func:`best_rate` (or the largest admitted rate with ``largest_rate``); k at least 2."""
    if beta is None and k is None and not largest_rate:
        beta = best_rate(epsilon, delta, epsilon1)
    solved = plan(epsilon, delta, beta=beta, k=None if k is None else int(k), epsilon1=epsilon1)
    if solved.k < 2:
        solved = plan(epsilon, delta, beta=solved.beta, k=2, epsilon1=epsilon1)
    return solved


def check_beta_leaves_epsilon1(epsilon: float, beta: float) -> None:
    """Refuse a given β that leaves less than the planner's least ε1 (1% of ε): Theorem 6 needs
    ε ≥ −ln(1 − β) + ε1, so no ε1 the planner gives the choice of the scheme fits. Public: ε, β."""
    least = EPSILON1_SHARE_RANGE[0] * epsilon
    if -math.log1p(-beta) + least > epsilon:
        raise ParameterError(
            f"beta = {beta:g} needs epsilon >= -ln(1 - beta) + epsilon1 = {rounded_up(-math.log1p(-beta))} + "
            f"epsilon1, which leaves epsilon = {epsilon:g} less than the least epsilon1 the planner gives the choice "
            f"of the scheme ({EPSILON1_SHARE_RANGE[0]:.0%} of epsilon = {rounded_up(least)}); lower beta to at most "
            f"1 - e^-(epsilon - {rounded_up(least)}) = {rounded_down(-math.expm1(-(epsilon - least)))}, give a "
            "smaller epsilon1, fix the scheme, or raise epsilon", parameter=("beta", "epsilon"))
