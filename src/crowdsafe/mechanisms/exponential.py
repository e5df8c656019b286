"""The exponential mechanism (McSherry & Talwar 2007), in log space via the Gumbel-max trick.

Given candidates r with a quality score q(D, r) whose sensitivity is Δq (one neighbour changes
any score by at most Δq), selecting r with probability ∝ exp(ε·q(D, r)/(2Δq)) is ε-DP. When every
score moves in the same direction between neighbours (a *monotone* quality, e.g. a count), the
factor 2 can be dropped: probability ∝ exp(ε·q/Δq) is then ε-DP (McSherry & Talwar 2007).

Sampling uses the Gumbel-max identity: argmax_r (ε·q_r/(2Δq) + G_r) with independent standard
Gumbel G_r has exactly that distribution, with no exponential ever computed, so huge scores
cannot overflow and no normalising sum over a huge candidate set is needed; scores can also be
streamed chunk by chunk (:func:`exponential_mechanism_chunks`), keeping only the running best.

Floating point: the output is an index, so the attack of Mironov 2012 on the low-order bits of real
outputs does not apply. The Gumbel draws come from uniform integers mapped exactly into (0, 1), so
no draw is infinite; their 52-bit resolution and the rounding of the logits (about 1e-16 relative)
move the selection probabilities by a total variation of the order of n·2^-50 for n candidates,
which is an additive δ far below any δ a release uses.

A data-independent *base measure* (``log_weights``, e.g. the log length of an interval) multiplies
each candidate's weight; it must not depend on the data unless the sensitivity accounts for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import calibration
from crowdsafe.randomness import Randomness, as_randomness


@dataclass(frozen=True)
class Choice:
    """The candidate the exponential mechanism selected, and the guarantee of the selection."""

    index: int
    epsilon: float
    sensitivity: float
    monotonic: bool
    candidates: int
    mechanism: str = "exponential mechanism (Gumbel-max)"
    randomness: dict[str, object] = field(default_factory=dict)

    @property
    def delta(self) -> float:
        return 0.0

    def utility_loss_bound(self, level: float = 0.95) -> float:
        """With probability ≥ level the chosen score is within this of the best score.

        McSherry & Talwar 2007 (Theorem 8 in Dwork & Roth 2014): Pr[q(chosen) ≤ OPT − (2Δq/ε)
        (ln |R| + t)] ≤ e^(−t); t = ln(1/(1 − level)). Halved for a monotone quality.
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
            "utility_loss_bound_95": self.utility_loss_bound(),
            "randomness": self.randomness,
        }


def _scale(epsilon: float, sensitivity: float, monotonic: bool) -> float:
    epsilon = calibration.check_epsilon(epsilon)
    sensitivity = calibration.check_sensitivity(sensitivity, "quality sensitivity")
    return epsilon / ((1.0 if monotonic else 2.0) * sensitivity)


def _logits(scores: np.ndarray, scale: float, log_weights: np.ndarray | None) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or scores.size == 0:
        raise ParameterError("the exponential mechanism needs a non-empty 1-d array of scores")
    with np.errstate(over="ignore", invalid="ignore"):
        logits = scores * scale
    if log_weights is not None:
        log_weights = np.asarray(log_weights, dtype=np.float64)
        if log_weights.shape != scores.shape:
            raise ParameterError("log_weights must have one entry per score")
        logits = logits + log_weights
    top = logits.max()
    if not np.isfinite(top) or np.isnan(logits).any():
        # Slow path, only to say precisely what is wrong.
        if np.isnan(scores).any() or (scores == np.inf).any():
            raise ParameterError("a quality score is NaN or +infinity")
        if log_weights is not None and (np.isnan(log_weights).any() or (log_weights == np.inf).any()):
            raise ParameterError("log_weights must be finite or −inf")
        if top == np.inf:
            raise ParameterError("quality scores too large: ε·q/Δq overflows a double")
        raise ParameterError("every candidate has probability zero (all scores or weights −inf)")
    return logits


def gumbel(generator: np.random.Generator, size: int) -> np.ndarray:
    """Standard Gumbel draws −log(−log U), U = (2k + 1)/2^53 with k uniform on 52 bits.

    Every U is an exact double in [2^-53, 1 − 2^-53], so no draw is infinite.
    """
    k = generator.integers(0, 1 << 52, size=size, dtype=np.int64)
    uniform = (2 * k + 1).astype(np.float64) * 2.0**-53
    return -np.log(-np.log(uniform))


def exponential_mechanism(
    scores: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    randomness: Randomness | int | None = None,
    monotonic: bool = False,
    log_weights: np.ndarray | None = None,
) -> Choice:
    """Select an index with probability ∝ w_r·exp(ε·q_r/(2Δq)) (ε-DP; see the module docstring).

    ``scores``: quality of each candidate (−inf allowed: never chosen); ``sensitivity``: Δq, the
    most one neighbour can change any score; ``monotonic``: scores all move the same way between
    neighbours (drops the factor 2); ``log_weights``: optional data-independent base measure.
    """
    scale = _scale(epsilon, sensitivity, monotonic)
    logits = _logits(scores, scale, log_weights)
    randomness = as_randomness(randomness)
    keys = logits + gumbel(randomness.generator, logits.size)
    return Choice(
        index=int(np.argmax(keys)),
        epsilon=float(epsilon),
        sensitivity=float(sensitivity),
        monotonic=monotonic,
        candidates=int(logits.size),
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
    """The exponential mechanism over candidates given chunk by chunk (for candidate sets too
    large to hold at once); the index counts across the concatenation of the chunks."""
    scale = _scale(epsilon, sensitivity, monotonic)
    randomness = as_randomness(randomness)
    best_key, best_index, offset = -np.inf, -1, 0
    for chunk in score_chunks:
        chunk = np.asarray(chunk, dtype=np.float64)
        if chunk.size == 0:
            continue
        logits = _logits_allowing_all_minus_inf(chunk, scale)
        keys = logits + gumbel(randomness.generator, logits.size)
        position = int(np.argmax(keys))
        if keys[position] > best_key:
            best_key, best_index = float(keys[position]), offset + position
        offset += chunk.size
    if best_index < 0:
        raise ParameterError("the exponential mechanism needs at least one candidate with a finite score")
    return Choice(
        index=best_index,
        epsilon=float(epsilon),
        sensitivity=float(sensitivity),
        monotonic=monotonic,
        candidates=offset,
        randomness=randomness.describe(),
    )


def _logits_allowing_all_minus_inf(chunk: np.ndarray, scale: float) -> np.ndarray:
    if np.all(chunk == -np.inf):
        return chunk
    return _logits(chunk, scale, None)


def exponential_probabilities(
    scores: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    monotonic: bool = False,
    log_weights: np.ndarray | None = None,
) -> np.ndarray:
    """The selection probabilities, computed stably by a log-softmax (for tests and audits)."""
    logits = _logits(scores, _scale(epsilon, sensitivity, monotonic), log_weights)
    return np.exp(special.log_softmax(logits))
