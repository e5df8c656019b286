"""DP quantiles (the median included) by the exponential mechanism (Smith 2011).

The candidates are a fixed grid of points in the public range [L, U] (every integer in it for an
integer column of moderate range, else 4096 equal steps): the set of possible outputs never depends
on the data, and every output is an exact grid point, so no floating-point artefact can leak.
Each candidate y is scored u(y) = −|(1 − q)·#{x < y} − q·#{x > y}|: zero at an exact q-quantile,
falling by about one per row of rank error. Its sensitivity is derived in
:func:`crowdsafe.mechanisms.sensitivity.quantile_sensitivity`, and the choice is ε-DP.

Utility: with probability ≥ 95% the chosen point's score is within (2Δu/ε)(ln m + ln 20) of the
best score, m the number of candidates, i.e. its rank is off by about that many rows.

Exact scores: q is taken on the grid of 2⁻²⁰ (q' = round(q·2²⁰)/2²⁰, equal to q for 0.5, 0.25,
0.75, ...; within 5e-7 of it otherwise, and the answer says so), and the score is computed in
integers as 2²⁰·u(y) = −|2²⁰·#{x < y} − m'·(#{x < y} + #{x > y})| with m' = 2²⁰·q', since
(1 − q)·b − q·a = b − q·(a + b). No floating-point rounding enters a score, so the sensitivity
c·max(m', 2²⁰ − m') (add/remove) or c·2²⁰ (change), in units of 2⁻²⁰, holds exactly, and the
exponential mechanism samples on these integer scores exactly
(:mod:`crowdsafe.mechanisms.exponential`). Exact in int64 for fewer than 2⁴² values.
"""

from __future__ import annotations

import math

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.additive import ERROR_LEVEL, NoisyValue
from crowdsafe.mechanisms.exponential import exponential_mechanism
from crowdsafe.mechanisms.sensitivity import Sensitivity, check_bounds
from crowdsafe.randomness import Randomness, as_randomness

DEFAULT_STEPS = 4096
MAX_INTEGER_CANDIDATES = 1 << 20


def quantile_candidates(lower: float, upper: float, *, integer: bool = False, steps: int | None = None) -> np.ndarray:
    """The public grid of candidate answers in [lower, upper]."""
    low, high = check_bounds(lower, upper, "a quantile")
    if integer and steps is None:
        first, last = math.ceil(low), math.floor(high)
        if last >= first and last - first < MAX_INTEGER_CANDIDATES:
            return np.arange(first, last + 1, dtype=np.float64)
    count = DEFAULT_STEPS if steps is None else int(steps)
    if count < 1:
        raise ParameterError(f"a quantile needs at least one step between its bounds, got {steps}")
    return low + (high - low) * (np.arange(count + 1, dtype=np.float64) / count)


def quantile_scores(sorted_values: np.ndarray, candidates: np.ndarray, q: float) -> np.ndarray:
    """u(y) = −|(1 − q)·#{x < y} − q·#{x > y}| for every candidate y (values sorted)."""
    n = sorted_values.size
    below = np.searchsorted(sorted_values, candidates, side="left")
    above = n - np.searchsorted(sorted_values, candidates, side="right")
    return -np.abs((1.0 - q) * below - q * above)


Q_BITS = 20


def quantile_scores_exact(sorted_values: np.ndarray, candidates: np.ndarray, q_units: int) -> np.ndarray:
    """2²⁰·u(y) in int64 for q = q_units/2²⁰: −|2²⁰·#{x < y} − q_units·(#{x < y} + #{x > y})|."""
    n = sorted_values.size
    below = np.searchsorted(sorted_values, candidates, side="left").astype(np.int64)
    above = n - np.searchsorted(sorted_values, candidates, side="right").astype(np.int64)
    return -np.abs((below << Q_BITS) - q_units * (below + above))


def quantile_mechanism(
    values: np.ndarray,
    q: float,
    *,
    lower: float,
    upper: float,
    epsilon: float,
    sensitivity: Sensitivity,
    randomness: Randomness | int | None = None,
    integer: bool = False,
    steps: int | None = None,
) -> NoisyValue:
    """An ε-DP q-quantile of ``values`` (clamped to [lower, upper]).

    ``sensitivity``: from :func:`~crowdsafe.mechanisms.sensitivity.quantile_sensitivity` (it
    carries the rows-per-person bound). ``integer``: the column holds integers, so every integer
    in the range is a candidate.
    """
    if not 0.0 <= q <= 1.0:
        raise ParameterError(f"a quantile must lie in [0, 1], got {q!r}")
    low, high = check_bounds(lower, upper, "a quantile")
    candidates = quantile_candidates(low, high, integer=integer, steps=steps)
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), low, high))
    if np.any(np.isnan(x)):
        raise ParameterError("a quantile's values contain NaN; drop missing values first")
    randomness = as_randomness(randomness)
    one = 1 << Q_BITS
    q_units = int(round(q * one))
    per_row = max(q_units, one - q_units) if sensitivity.neighbours == "add-remove" else one
    units_sensitivity = sensitivity.rows_per_person * per_row
    choice = exponential_mechanism(
        quantile_scores_exact(x, candidates, q_units),
        epsilon=epsilon,
        sensitivity=units_sensitivity,
        randomness=randomness,
    )
    exact_sensitivity = units_sensitivity / one
    rounded = "" if q_units == q * one else f" at q = {q_units}/2^{Q_BITS} (q on a 2^-{Q_BITS} grid)"
    return NoisyValue(
        value=float(candidates[choice.index]),
        epsilon=choice.epsilon,
        delta=0.0,
        mechanism=f"exponential mechanism over {candidates.size} grid points (Smith 2011), exact sampling{rounded}",
        noise_scale=2.0 * exact_sensitivity / choice.epsilon,
        noise_std=math.nan,
        error_half_width=float(choice.utility_loss_bound(ERROR_LEVEL)) / one,
        sensitivity=exact_sensitivity,
        calibration="probability ∝ exp(ε·u/(2Δu)); Δu from the quantile score (integer scores, exact)",
        grid_step=float(candidates[1] - candidates[0]) if candidates.size > 1 else None,
        randomness=randomness.describe(),
        noise={"distribution": "exponential mechanism (exact)", "candidates": int(candidates.size)},
        error_unit="rank",
    )
