"""The exponential mechanism (McSherry & Talwar 2007), sampled exactly.

Given candidates r with a quality score q(D, r) whose sensitivity is Δq (one neighbour changes
any score by at most Δq), selecting r with probability ∝ exp(ε·q(D, r)/(2Δq)) is ε-DP. When every
score moves in the same direction between neighbours (a *monotone* quality, e.g. a count), the
factor 2 can be dropped: probability ∝ exp(ε·q/Δq) is then ε-DP (McSherry & Talwar 2007).

**Exact sampling.** No floating-point exponential, logarithm or Gumbel variate is used: the
distribution sampled is exactly the one the proof is about, so the guarantee needs no extra ε or
δ for sampling error.

1. *Scores on a grid.* Integer scores with a whole-number sensitivity are used as they are
   (K = Δq). Real scores are rounded to the nearest multiple of a power-of-two step
   h = 2^⌊log₂(Δq/2²⁰)⌋ (division by a power of two is exact; the rounding is a fixed monotone
   function of the score). Two neighbouring rounded scores differ by at most
   K = ⌊Δq/h⌋ + 1 steps: |rint(a/h) − rint(b/h)| ≤ |a − b|/h + 1 and is an integer (the proof in
   :mod:`crowdsafe.mechanisms.discretization`). Rounding is monotone, so a monotone quality
   stays monotone.
2. *A rational rate.* λ = s/t ≤ ε/(c·K) per step (c = 2, or 1 for a monotone quality), ε/(cK)
   rounded *down* to 20 significant bits. Selecting r with probability ∝ exp(λ·k_r) for rounded
   scores k_r is then (c·λ·K)-DP ≤ ε-DP by McSherry & Talwar's argument applied to the integer
   scores k_r of sensitivity K. The ε actually used is at least ε·(1 − 2⁻¹⁹) (the grid costs
   h/Δq ≤ 2⁻²⁰, the rate 2⁻²⁰).
3. *Rejection with exact Bernoulli(exp(−γ)).* With k* = max k_r, candidate r has weight
   exp(−γ_r), γ_r = λ·(k* − k_r) + ω_r ≥ 0 (ω_r: the base measure, below), a rational with
   denominator t. Propose r uniformly among the candidates of finite score, accept with
   probability exp(−γ_r) by the exact sampler of Canonne, Kamath & Steinke 2020 (Algorithm 1,
   :func:`crowdsafe.mechanisms.exact.bernoulli_exp_neg`), repeat: the first accepted proposal
   has probability exp(−γ_r)/Σ_j exp(−γ_j), exactly the target. The proposals are drawn in
   NumPy batches (a batch is a sequence of independent trials; the first accepted one in order
   is the output). Without a base measure the best candidate is accepted with probability 1, so
   the expected number of proposals is at most the number of candidates m (on 30,720 candidates
   a peaked distribution needs one or two batches); a base measure that gives the best-scoring
   candidates little weight can make it larger, never the distribution wrong.
   Numerators t·γ_r ≥ 2⁶⁰ (scores far below the best, or a tiny ε with a huge t) are handled in
   two independent stages, exp(−γ) = exp(−2⁶⁰/t)·exp(−(γ − 2⁶⁰/t)), the second (in Python
   integers) only for the proposals that pass the first: still exact. Small batches draw each
   K-loop's trials 12 at a time (:func:`crowdsafe.mechanisms.exact.bernoulli_exp_neg_batched`,
   the same distribution with fewer NumPy calls).

The output is an index, so the attack of Mironov 2012 on the low-order bits of real outputs does
not apply; the sampler's randomness is uniform integers only (:mod:`crowdsafe.mechanisms.exact`).

A data-independent *base measure* (``log_weights``, e.g. the log length of an interval)
multiplies each candidate's weight; it must not depend on the data unless the sensitivity
accounts for it. It is represented exactly as ω_r = rint((max w − w_r)·t)/t (a fixed,
data-independent rounding of the base measure, which cannot affect privacy).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy import special

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration, exact
from crowdsafe.randomness import Randomness, as_randomness

SCORE_STEPS_BITS = 20  # real scores: the grid step is at most Δq / 2^20
RATE_BITS = 20  # significant bits of the rate λ = s/t
_FAST = 1 << 60  # γ numerators at or above this are split in two stages
_INT64_SAFE = 1 << 62
_BATCH = 1 << 16
_MATRIX_BATCH = 1024


@dataclass(frozen=True)
class Choice:
    """The candidate the exponential mechanism selected, and the guarantee of the selection."""

    index: int
    epsilon: float
    sensitivity: float
    monotonic: bool
    candidates: int
    mechanism: str = "exponential mechanism (exact sampling)"
    randomness: dict[str, object] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        return 0.0

    def utility_loss_bound(self, level: float = 0.95) -> float:
        """With probability ≥ level the chosen score is within this of the best score.

        McSherry & Talwar 2007 (Theorem 8 in Dwork & Roth 2014): Pr[q(chosen) ≤ OPT − (2Δq/ε)
        (ln |R| + t)] ≤ e^(−t); t = ln(1/(1 − level)). Halved for a monotone quality. (The
        exact sampler runs at an ε at most 2⁻¹⁹ smaller and on scores rounded by at most
        Δq/2²¹; both are far below the bound's precision.)
        """
        factor = (1.0 if self.monotonic else 2.0) * self.sensitivity / self.epsilon
        return float(factor * (np.log(self.candidates) + np.log(1.0 / (1.0 - level))))

    def as_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "epsilon": self.epsilon,
            "delta": 0.0,
            "sensitivity": self.sensitivity,
            "monotonic": self.monotonic,
            "candidates": self.candidates,
            "mechanism": self.mechanism,
            "sampling": "exact (rejection with Bernoulli(exp(-γ)), Canonne, Kamath & Steinke 2020)",
            "utility_loss_bound_95": self.utility_loss_bound(),
            "randomness": self.randomness,
        }


@dataclass(frozen=True)
class _Weights:
    """Candidate r (of the eligible ones, ``index``) has weight exp(−N_r/t) exactly."""

    index: np.ndarray  # positions of the candidates with a finite score
    capped: np.ndarray  # int64: min(N_r, 2^60) (N_r ≥ 0)
    exact_numerator: Callable[[int], int]  # the exact N_r of eligible position j (Python int)
    t: int
    estimate: np.ndarray  # N_r as float64 (for the probabilities; never for sampling)


@functools.lru_cache(maxsize=256)
def _rate(epsilon: float, sensitivity_steps: int, monotonic: bool) -> Fraction:
    """λ = s/t ≤ ε/(c·K), c = 1 (monotone) or 2, rounded down to RATE_BITS significant bits."""
    c = 1 if monotonic else 2
    return exact.rational_at_most(Fraction(epsilon) / (c * sensitivity_steps), RATE_BITS)


def _check(epsilon: float, sensitivity: float) -> tuple[float, float]:
    epsilon = calibration.check_epsilon(epsilon)
    sensitivity = calibration.check_sensitivity(sensitivity, "quality sensitivity")
    return epsilon, sensitivity


def _grid_scores(scores: np.ndarray, sensitivity: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(rounded scores of the finite candidates, their positions, K = sensitivity in steps).

    Integer scores with a whole sensitivity are kept (K = Δq); real ones are rounded to
    h = 2^⌊log₂(Δq/2²⁰)⌋ (K = ⌊Δq/h⌋ + 1). Rounded scores are int64, or Python integers when
    some exceed 2^62 steps.
    """
    raw = np.asarray(scores)
    if raw.ndim != 1 or raw.size == 0:
        raise ParameterError("the exponential mechanism needs a non-empty 1-d array of scores")
    if raw.dtype == bool or not np.issubdtype(raw.dtype, np.number):
        raise ParameterError(f"quality scores must be numbers, got {raw.dtype}")
    if np.issubdtype(raw.dtype, np.integer) and float(sensitivity).is_integer():
        positions = np.arange(raw.size)
        return raw.astype(np.int64), positions, int(sensitivity)
    values = raw.astype(np.float64)
    if np.isnan(values).any() or (values == np.inf).any():
        raise ParameterError("a quality score is NaN or +infinity")
    positions = np.flatnonzero(values > -np.inf)
    if positions.size == 0:
        raise ParameterError("every candidate has probability zero (all scores or weights −inf)")
    step = math.ldexp(1.0, math.floor(math.log2(sensitivity)) - SCORE_STEPS_BITS)
    steps = math.floor(sensitivity / step) + 1
    with np.errstate(over="ignore"):
        scaled = np.rint(values[positions] / step)  # exact: a power-of-two division, then rint
    if not np.all(np.isfinite(scaled)):
        raise ParameterError("quality scores too large for their sensitivity's grid")
    if np.abs(scaled).max() < _INT64_SAFE:
        return scaled.astype(np.int64), positions, steps
    return np.array([int(v) for v in scaled], dtype=object), positions, steps


def _base_measure(log_weights: np.ndarray | None, size: int, t: int) -> np.ndarray | None:
    """rint((max w − w_r)·t) as integer-valued float64 (the base measure in units of 1/t), or
    None; candidates of weight 0 (−inf) get +inf."""
    if log_weights is None:
        return None
    weights = np.asarray(log_weights, dtype=np.float64)
    if weights.shape != (size,):
        raise ParameterError("log_weights must have one entry per score")
    if np.isnan(weights).any() or (weights == np.inf).any():
        raise ParameterError("log_weights must be finite or −inf")
    finite = weights > -np.inf
    if not finite.any():
        raise ParameterError("every candidate has probability zero (all scores or weights −inf)")
    top = weights[finite].max()
    with np.errstate(over="ignore"):
        units = np.where(finite, np.rint((top - weights) * t), np.inf)
    return units


def _weights(scores: np.ndarray, epsilon: float, sensitivity: float, monotonic: bool,
             log_weights: np.ndarray | None) -> _Weights:
    grid, positions, steps = _grid_scores(scores, sensitivity)
    rate = _rate(epsilon, steps, monotonic)
    s, t = rate.numerator, rate.denominator
    omega_all = _base_measure(log_weights, np.asarray(scores).size, t)
    omega = None if omega_all is None else omega_all[positions]
    if omega is not None:
        keep = np.isfinite(omega)
        if not keep.any():
            raise ParameterError("every candidate has probability zero (all scores or weights −inf)")
        grid, positions, omega = grid[keep], positions[keep], omega[keep]
    top = grid.max()
    if grid.dtype != object and float(top) - float(grid.min()) < _INT64_SAFE:
        gaps = top - grid  # exact int64
        with np.errstate(over="ignore"):  # a huge ε: estimates beyond float range are +inf
            estimate = float(s) * gaps.astype(np.float64)

        def exact_gap(j: int) -> int:
            return int(gaps[j])

    else:  # scores beyond 2^62 steps apart: exact gaps in Python integers
        gaps_obj = np.array([int(top) - int(v) for v in grid], dtype=object)
        with np.errstate(over="ignore"):
            estimate = float(s) * gaps_obj.astype(np.float64)
        gaps = None

        def exact_gap(j: int) -> int:
            return int(gaps_obj[j])

    if omega is not None:
        estimate = estimate + omega
    # Entries whose estimate is below 2^61 are exact in int64 (the estimate's relative error is
    # below 2^-50, so their N < 2^62); the others have N > 2^60. Every N is capped at 2^60 for the
    # first stage, and those at the cap get the second stage with N − 2^60.
    fast = estimate < float(1 << 61)
    capped = np.full(grid.size, _FAST, dtype=np.int64)
    # A huge ε can make s exceed int64. min(s, 2^60)·gap is min(s·gap, 2^60) after the cap below
    # (a gap of 0 gives 0 either way; a gap ≥ 1 with s ≥ 2^60 gives at least 2^60 either way), and
    # it fits int64 on the fast entries; the exact N of the entries at the cap is exact_numerator's.
    s_fast = min(s, _FAST)
    if gaps is not None:
        numerators = s_fast * gaps[fast]
    else:
        numerators = np.array([s_fast * int(v) for v in gaps_obj[fast]], dtype=np.int64)
    if omega is not None:
        numerators = numerators + omega[fast].astype(np.int64)
    capped[fast] = np.minimum(numerators, _FAST)  # every N ≥ 2^60 goes through both stages

    def exact_numerator(j: int) -> int:
        extra = 0 if omega is None else int(omega[j])  # an integer-valued double: exact
        return s * exact_gap(j) + extra

    return _Weights(positions, capped, exact_numerator, t, estimate)


def _batches_trials(batch: int, t: int) -> bool:
    """Whether a batch of ``batch`` proposals with denominator ``t`` is tested by
    :func:`~.exact.bernoulli_exp_neg_batched` rather than :func:`~.exact.bernoulli_exp_neg`.

    Few proposals (at most :data:`_MATRIX_BATCH`): draw each K-loop's trials 12 at a time (fewer
    NumPy calls; 12·t must fit in int64); many: one trial at a time for the entries still running
    (fewer random draws). The same exact distribution, other draws."""
    return batch <= _MATRIX_BATCH and t * 12 < _INT64_SAFE


def _sample(weights: _Weights, generator: np.random.Generator) -> int:
    """The exact rejection sampler of the module docstring: a position in ``weights.index``."""
    m = weights.index.size
    batch = min(max(m, 64), _BATCH)
    batched = _batches_trials(batch, weights.t)
    while True:
        proposals = generator.integers(0, m, size=batch, dtype=np.int64)
        numerators = weights.capped[proposals]
        passed = (exact.bernoulli_exp_neg_batched(generator, numerators, weights.t) if batched
                  else exact.bernoulli_exp_neg(generator, numerators, weights.t))
        for j in proposals[passed]:  # in order: the first trial that passes both stages wins
            j = int(j)
            if weights.capped[j] < _FAST:
                return j
            rest = weights.exact_numerator(j) - _FAST
            if exact.bernoulli_exp_neg(generator, np.array([rest], dtype=object), weights.t)[0]:
                return j


def exponential_mechanism(
    scores: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    randomness: Randomness | int | None = None,
    monotonic: bool = False,
    log_weights: np.ndarray | None = None,
) -> Choice:
    """Select an index with probability ∝ w_r·exp(ε·q_r/(2Δq)) (ε-DP; see the module docstring),
    sampled exactly.

    ``scores``: quality of each candidate (−inf allowed: never chosen; integer scores with a
    whole ``sensitivity`` are used without rounding); ``sensitivity``: Δq, the most one neighbour
    can change any score; ``monotonic``: scores all move the same way between neighbours (drops
    the factor 2); ``log_weights``: optional data-independent base measure.
    """
    epsilon, sensitivity = _check(epsilon, sensitivity)
    weights = _weights(np.asarray(scores), epsilon, sensitivity, monotonic, log_weights)
    randomness = as_randomness(randomness)
    position = _sample(weights, randomness.generator)
    return Choice(
        index=int(weights.index[position]),
        epsilon=float(epsilon),
        sensitivity=float(sensitivity),
        monotonic=monotonic,
        candidates=int(np.asarray(scores).size),
        randomness=randomness.describe(),
    )


def exponential_mechanism_chunks(
    score_chunks: Iterable[np.ndarray],
    *,
    epsilon: float,
    sensitivity: float,
    randomness: Randomness | int | None = None,
    monotonic: bool = False,
) -> Choice:
    """The exponential mechanism over candidates given chunk by chunk; the index counts across
    the concatenation of the chunks. The exact sampler needs every score at once, so the chunks
    are concatenated (8 bytes per candidate)."""
    chunks = [np.asarray(chunk, dtype=np.float64).ravel() for chunk in score_chunks]
    scores = np.concatenate(chunks) if chunks else np.zeros(0)
    if scores.size == 0 or np.all(scores == -np.inf):
        raise ParameterError("the exponential mechanism needs at least one candidate with a finite score")
    return exponential_mechanism(scores, epsilon=epsilon, sensitivity=sensitivity, randomness=randomness,
                                 monotonic=monotonic)


def exponential_probabilities(
    scores: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    monotonic: bool = False,
    log_weights: np.ndarray | None = None,
) -> np.ndarray:
    """The probabilities the exact sampler selects with (its rounded scores and rational rate),
    evaluated in floating point by a log-softmax (for tests and audits)."""
    epsilon, sensitivity = _check(epsilon, sensitivity)
    weights = _weights(np.asarray(scores), epsilon, sensitivity, monotonic, log_weights)
    result = np.zeros(np.asarray(scores).size)
    result[weights.index] = np.exp(special.log_softmax(-weights.estimate / weights.t))
    return result
