"""Empirical privacy audit: a statistical lower bound on the ε a mechanism really has.

Run the mechanism many times on two neighbouring datasets D₀ and D₁ and estimate, for output events
O, p₀ = Pr[M(D₀) ∈ O] and p₁ = Pr[M(D₁) ∈ O]. If M is (ε, δ)-DP then p₀ ≤ e^ε·p₁ + δ for every O,
so any event gives the lower bound ε ≥ ln((p₀ − δ)/p₁). With a one-sided Clopper–Pearson lower
bound on p₀ and upper bound on p₁, the bound holds with the stated confidence (Jagielski, Ullman &
Oprea 2020; Ding, Wang, Wang, Zhang & Kifer 2018 use the same principle to find bugs).

To keep the bound honest when events are chosen automatically, the runs are split: a first batch
*selects* the most revealing events (thresholds on a scalar statistic of the output), a second,
independent batch *measures* them, and the confidence is shared out over every event and both
directions (Bonferroni). A correct ε-DP mechanism therefore yields a bound below ε except with
probability at most 1 − confidence; a broken one (too little noise) yields a bound above its claim
once there are enough runs.

The helper is generic: ``run(data, randomness, n)`` returns n outputs of the mechanism on ``data``
(a vectorised mechanism returns an array; anything else may return a list), and a ``statistic``
maps outputs to numbers (the identity for numeric outputs). Explicit ``events`` (name, predicate
on the outputs) can replace the automatic thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness, as_randomness

Run = Callable[[Any, Randomness, int], Any]
Statistic = Callable[[Any], np.ndarray]
Event = tuple[str, Callable[[Any], np.ndarray]]


@dataclass(frozen=True)
class EventEstimate:
    """One output event measured on both datasets, with the ε bound it gives."""

    name: str
    hits: tuple[int, int]
    trials: int
    epsilon_lower_bound: float

    def as_dict(self) -> dict[str, object]:
        return {
            "event": self.name,
            "hits_d0": self.hits[0],
            "hits_d1": self.hits[1],
            "trials": self.trials,
            "epsilon_lower_bound": self.epsilon_lower_bound,
        }


@dataclass(frozen=True)
class AuditResult:
    """The audit's verdict: ``epsilon_lower_bound`` holds with probability ≥ ``confidence``."""

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    trials: int
    events: list[EventEstimate] = field(default_factory=list)

    @property
    def violates_claim(self) -> bool:
        """True when the measured lower bound exceeds the claimed ε: the claim is false."""
        return self.epsilon_lower_bound > self.claimed_epsilon

    @property
    def best_event(self) -> EventEstimate | None:
        return max(self.events, key=lambda e: e.epsilon_lower_bound, default=None)

    def as_dict(self) -> dict[str, object]:
        return {
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_delta": self.claimed_delta,
            "confidence": self.confidence,
            "trials_per_dataset": self.trials,
            "violates_claim": self.violates_claim,
            "events": [e.as_dict() for e in self.events],
        }


def clopper_pearson(hits: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided (1 − alpha) Clopper–Pearson lower and upper bounds on a binomial proportion."""
    low = 0.0 if hits == 0 else float(stats.beta.ppf(alpha, hits, trials - hits + 1))
    high = 1.0 if hits == trials else float(stats.beta.ppf(1.0 - alpha, hits + 1, trials - hits))
    return low, high


def epsilon_lower_bound(hits_a: int, hits_b: int, trials: int, delta: float, alpha: float) -> float:
    """ln((p_a,low − δ)/p_b,high): a lower bound on ε from Pr[O] under A versus B (0 if none)."""
    p_a_low, _ = clopper_pearson(hits_a, trials, alpha)
    _, p_b_high = clopper_pearson(hits_b, trials, alpha)
    if p_a_low - delta <= 0.0:
        return 0.0
    return max(0.0, math.log((p_a_low - delta) / p_b_high))


def _numbers(outputs: Any, statistic: Statistic | None) -> np.ndarray:
    values = np.asarray(statistic(outputs) if statistic is not None else outputs, dtype=np.float64)
    if values.ndim != 1:
        raise ParameterError("the audit statistic must map the outputs to one number per run")
    return values


def _threshold_events(sample_0: np.ndarray, sample_1: np.ndarray, thresholds: int, keep: int, delta: float) -> list[Event]:
    """Pick the ``keep`` threshold events {s ≥ t} / {s ≤ t} with the largest empirical ε."""
    pooled = np.concatenate([sample_0, sample_1])
    cuts = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, thresholds + 2)[1:-1]))
    scored: list[tuple[float, Event]] = []
    n = sample_0.size
    for cut in cuts:
        for name, predicate in (
            (f"statistic >= {cut:.6g}", lambda s, c=cut: s >= c),
            (f"statistic <= {cut:.6g}", lambda s, c=cut: s <= c),
        ):
            h0, h1 = int(predicate(sample_0).sum()), int(predicate(sample_1).sum())
            # Smoothed empirical ratio in both directions, for ranking only.
            ratio = max(math.log((h0 + 1 - delta * n) / (h1 + 1)) if h0 + 1 > delta * n else 0.0,
                        math.log((h1 + 1 - delta * n) / (h0 + 1)) if h1 + 1 > delta * n else 0.0)
            scored.append((ratio, (name, predicate)))
    scored.sort(key=lambda item: item[0], reverse=True)
    return [event for _, event in scored[:keep]]


def audit(
    run: Run,
    neighbours: tuple[Any, Any],
    *,
    claimed_epsilon: float,
    claimed_delta: float = 0.0,
    trials: int = 100_000,
    selection_trials: int | None = None,
    statistic: Statistic | None = None,
    events: Sequence[Event] | None = None,
    thresholds: int = 64,
    keep_events: int = 4,
    confidence: float = 0.99,
    randomness: Randomness | int | None = None,
) -> AuditResult:
    """Lower-bound the ε of a mechanism from ``trials`` runs on each of two neighbouring datasets.

    ``neighbours``: (D₀, D₁), passed to ``run`` as they are. ``claimed_delta`` is subtracted from
    p₀ in every bound, so an (ε, δ) claim is audited as such. Returns an :class:`AuditResult`.
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence}")
    if trials < 100:
        raise ParameterError(f"an audit needs at least 100 trials per dataset, got {trials}")
    data_0, data_1 = neighbours
    randomness = as_randomness(randomness)
    streams = randomness.spawn(4)
    if events is None:
        chosen_trials = selection_trials if selection_trials is not None else max(1000, trials // 4)
        selection_0 = _numbers(run(data_0, streams[0], chosen_trials), statistic)
        selection_1 = _numbers(run(data_1, streams[1], chosen_trials), statistic)
        chosen = _threshold_events(selection_0, selection_1, thresholds, keep_events, claimed_delta)

        def measure(outputs: Any, predicate: Callable[[Any], np.ndarray]) -> int:
            return int(np.count_nonzero(predicate(_numbers(outputs, statistic))))
    else:
        chosen = list(events)
        if not chosen:
            raise ParameterError("an audit needs at least one output event")

        def measure(outputs: Any, predicate: Callable[[Any], np.ndarray]) -> int:
            return int(np.count_nonzero(np.asarray(predicate(outputs), dtype=bool)))

    outputs_0 = run(data_0, streams[2], trials)
    outputs_1 = run(data_1, streams[3], trials)
    # Two directions per event, and each bound uses two one-sided intervals.
    alpha = (1.0 - confidence) / (4 * len(chosen))
    estimates = []
    for name, predicate in chosen:
        h0, h1 = measure(outputs_0, predicate), measure(outputs_1, predicate)
        bound = max(
            epsilon_lower_bound(h0, h1, trials, claimed_delta, alpha),
            epsilon_lower_bound(h1, h0, trials, claimed_delta, alpha),
        )
        estimates.append(EventEstimate(name, (h0, h1), trials, bound))
    return AuditResult(
        epsilon_lower_bound=max(e.epsilon_lower_bound for e in estimates),
        claimed_epsilon=float(claimed_epsilon),
        claimed_delta=float(claimed_delta),
        confidence=confidence,
        trials=trials,
        events=estimates,
    )


def repeat(single_run: Callable[[Any, Randomness], Any]) -> Run:
    """Adapt a one-output mechanism ``single_run(data, randomness)`` to the ``run`` signature."""

    def run(data: Any, randomness: Randomness, n: int) -> list[Any]:
        return [single_run(data, randomness) for _ in range(n)]

    return run
