"""Empirical privacy audit: a statistical lower bound on the ε a mechanism really has.

The audit plays the attacker of the DP definition (Jagielski, Ullman & Oprea 2020; Nasr, Song,
Thakurta, Papernot & Carlini 2021). Run the mechanism many times on a neighbouring pair (D₀, D₁)
chosen to be as distinguishable as possible, and run a *distinguishing test* on each output: a
fixed event O ("guess D₁ when O happens"). Its false-positive rate FPR = Pr[M(D₀) ∈ O] and
false-negative rate FNR = Pr[M(D₁) ∉ O] are bounded by the hypothesis-testing form of (ε, δ)-DP
(Kairouz, Oh & Viswanath 2015; Wasserman & Zhou 2010): every test of an (ε, δ)-DP mechanism has

    FPR + e^ε·FNR ≥ 1 − δ   and   e^ε·FPR + FNR ≥ 1 − δ,

so ε ≥ max( ln((1 − δ − FNR)/FPR), ln((1 − δ − FPR)/FNR) ). The audit replaces FPR and FNR by
one-sided Clopper–Pearson *upper* bounds from the runs (SciPy's beta quantiles), which makes

    ε_lb = max over the two directions of ln((1 − δ − FNR_upper)/FPR_upper)   (0 if none is > 0)

a lower bound on the true ε with probability at least the stated confidence. Both directions use
the same two upper bounds, so each event costs two one-sided intervals; with several events the
error probability 1 − confidence is shared out over all of them (Bonferroni).

Choosing the event. A test fixed in advance (``events=``) is measured on one batch of runs. With
``events=None`` the outputs are mapped to one number (``statistic``) and the audit picks the most
revealing thresholds {s ≥ t} / {s ≤ t} on a *separate* batch of runs (selection), then measures only
those on fresh runs: the choice is independent of the measurement, so the confidence statement
holds. A correct (ε, δ) mechanism therefore gives ε_lb ≤ ε except with probability at most
1 − confidence; a broken one gives ε_lb > ε once its true ε exceeds the claim by more than the
statistical slack of the runs (about 3·√((1 − p)/(N·p)) in log space for an event of
probability p seen in N runs).

The audit is a lower bound: passing it does not prove the claim (that is the theorems' job), but
failing it proves the claim false. Its power is shown by running the same test on deliberately
broken variants (tests/audit/, docs/audit.md).

The helper is generic: ``run(data, randomness, n)`` returns n outputs of the mechanism on ``data``
(a vectorised mechanism returns an array; anything else may return a list), and ``statistic``
maps outputs to one number per run (the identity for numeric outputs). Explicit ``events``
(name, predicate on the outputs returning one bool per run) replace the automatic thresholds.
:func:`audit` takes these as keywords; :func:`run_audit` takes them as one :class:`AuditRequest`.
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
    """One distinguishing test measured on both datasets, with the ε bound it gives.

    ``hits``: runs in which the event happened on D₀ (false positives) and on D₁ (true positives);
    ``fpr_upper`` / ``fnr_upper``: the Clopper–Pearson upper bounds used in the bound.
    """

    name: str
    hits: tuple[int, int]
    trials: int
    epsilon_lower_bound: float
    fpr_upper: float = 1.0
    fnr_upper: float = 1.0

    def as_dict(self) -> dict[str, object]:
        return {
            "event": self.name,
            "hits_d0": self.hits[0],
            "hits_d1": self.hits[1],
            "trials": self.trials,
            "fpr_upper": self.fpr_upper,
            "fnr_upper": self.fnr_upper,
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
        """True when the measured lower bound exceeds the claimed ε: the claim is false (with
        probability at least ``confidence``)."""
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
    """One-sided (1 − alpha) Clopper–Pearson lower and upper bounds on a binomial proportion
    (exact: beta-distribution quantiles, ``scipy.stats.beta``)."""
    if trials < 1 or not 0 <= hits <= trials:
        raise ParameterError(f"need 0 <= hits <= trials and trials >= 1, got {hits} of {trials}")
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha}")
    low = 0.0 if hits == 0 else float(stats.beta.ppf(alpha, hits, trials - hits + 1))
    high = 1.0 if hits == trials else float(stats.beta.ppf(1.0 - alpha, hits + 1, trials - hits))
    return low, high


def epsilon_from_error_rates(fpr: float, fnr: float, delta: float = 0.0) -> float:
    """The ε that a test with these error rates proves: max of ln((1 − δ − FNR)/FPR) and
    ln((1 − δ − FPR)/FNR), 0 when neither is positive (the (ε, δ) hypothesis-testing bound).

    With upper confidence bounds for FPR and FNR it is a lower confidence bound on ε."""
    bounds = [0.0]
    for numerator_rate, denominator_rate in ((fnr, fpr), (fpr, fnr)):
        numerator = 1.0 - delta - numerator_rate
        if numerator > 0.0:
            bounds.append(math.inf if denominator_rate <= 0.0 else math.log(numerator / denominator_rate))
    return max(bounds)


def distinguisher_bound(
    false_positives: int, negatives: int, false_negatives: int, positives: int, *, delta: float, alpha: float,
) -> tuple[float, float, float]:
    """(ε_lb, FPR_upper, FNR_upper) of one test: ``false_positives`` of ``negatives`` runs on D₀
    raised the event, ``false_negatives`` of ``positives`` runs on D₁ did not. Each rate gets a
    one-sided (1 − alpha) Clopper–Pearson upper bound, so ε_lb holds with probability ≥ 1 − 2·alpha."""
    fpr_upper = clopper_pearson(false_positives, negatives, alpha)[1]
    fnr_upper = clopper_pearson(false_negatives, positives, alpha)[1]
    return epsilon_from_error_rates(fpr_upper, fnr_upper, delta), fpr_upper, fnr_upper


def _numbers(outputs: Any, statistic: Statistic | None) -> np.ndarray:
    values = np.asarray(statistic(outputs) if statistic is not None else outputs, dtype=np.float64)
    if values.ndim != 1:
        raise ParameterError("the audit statistic must map the outputs to one number per run")
    return values


def _at_least(cut: float) -> Callable[[Any], np.ndarray]:
    def event(statistic: Any) -> np.ndarray:
        return np.asarray(statistic >= cut)

    return event


def _at_most(cut: float) -> Callable[[Any], np.ndarray]:
    def event(statistic: Any) -> np.ndarray:
        return np.asarray(statistic <= cut)

    return event


def _threshold_events(sample_0: np.ndarray, sample_1: np.ndarray, thresholds: int, keep: int,
                      delta: float) -> list[Event]:
    """Pick the ``keep`` threshold events {s ≥ t} / {s ≤ t} with the largest plug-in ε.

    Runs on the selection batch only. Rates are smoothed (+1/2 per count) so an event never seen
    on D₀ is not ranked infinite on the strength of a single run."""
    pooled = np.concatenate([sample_0, sample_1])
    cuts = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, thresholds + 2)[1:-1]))
    n0, n1 = sample_0.size, sample_1.size
    scored: list[tuple[float, Event]] = []
    for cut in cuts:
        for name, predicate in (
            (f"statistic >= {cut:.6g}", _at_least(cut)),
            (f"statistic <= {cut:.6g}", _at_most(cut)),
        ):
            h0, h1 = int(np.count_nonzero(predicate(sample_0))), int(np.count_nonzero(predicate(sample_1)))
            fpr, fnr = (h0 + 0.5) / (n0 + 1.0), (n1 - h1 + 0.5) / (n1 + 1.0)
            scored.append((epsilon_from_error_rates(fpr, fnr, delta), (name, predicate)))
    scored.sort(key=lambda item: item[0], reverse=True)
    return [event for _, event in scored[:keep]]


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What an audit tests and how hard: the mechanism (``run``), the neighbouring pair and the
    randomness are passed beside it.

    - ``claimed_epsilon`` / ``claimed_delta``: the (ε, δ) claim audited; δ enters every bound
      as the δ of the hypothesis-testing inequality (in [0, 1));
    - ``trials``: runs of the mechanism on each dataset for the measurement (at least 100);
    - ``selection_trials``: runs per dataset on which the automatic events are chosen
      (None: max(1000, trials/4));
    - ``statistic``: maps the outputs to one number per run (None: the outputs themselves);
    - ``events``: distinguishing tests fixed in advance, (name, predicate) pairs (None: the
      best ``keep_events`` of ``thresholds`` threshold events on the statistic);
    - ``confidence``: the probability (in (0, 1)) with which the lower bound holds, shared out
      over the events measured.
    """

    claimed_epsilon: float
    claimed_delta: float = 0.0
    trials: int = 100_000
    selection_trials: int | None = None
    statistic: Statistic | None = None
    events: tuple[Event, ...] | None = None
    thresholds: int = 64
    keep_events: int = 4
    confidence: float = 0.99


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

    ``neighbours``: (D₀, D₁), passed to ``run`` as they are; an event is evidence for D₁.
    ``claimed_delta`` enters every bound as the δ of the hypothesis-testing inequality, so an
    (ε, δ) claim is audited as such. ``events``: tests fixed in advance; without them the best
    ``keep_events`` thresholds on ``statistic`` are chosen on ``selection_trials`` separate runs
    (default max(1000, trials/4)). The bound holds with probability ≥ ``confidence`` (shared out
    over the events measured). Returns an :class:`AuditResult`. The keyword form of
    :func:`run_audit` (it builds the :class:`AuditRequest`).
    """
    request = AuditRequest(
        claimed_epsilon=claimed_epsilon, claimed_delta=claimed_delta, trials=trials,
        selection_trials=selection_trials, statistic=statistic,
        events=tuple(events) if events is not None else None, thresholds=thresholds,
        keep_events=keep_events, confidence=confidence,
    )
    return run_audit(run, neighbours, request, randomness)


def run_audit(
    run: Run,
    neighbours: tuple[Any, Any],
    request: AuditRequest,
    randomness: Randomness | int | None = None,
) -> AuditResult:
    """The audit of ``run`` on ``neighbours`` = (D₀, D₁) for ``request`` (see :func:`audit`);
    ``randomness`` drives the runs (a seed, a :class:`Randomness`, or None for fresh entropy)."""
    confidence, trials, claimed_delta = request.confidence, request.trials, request.claimed_delta
    statistic, events = request.statistic, request.events
    if not 0.0 < confidence < 1.0:
        raise ParameterError(f"confidence must lie in (0, 1), got {confidence}")
    if trials < 100:
        raise ParameterError(f"an audit needs at least 100 trials per dataset, got {trials}")
    if not 0.0 <= claimed_delta < 1.0:
        raise ParameterError(f"the claimed delta must lie in [0, 1), got {claimed_delta}")
    data_0, data_1 = neighbours
    randomness = as_randomness(randomness)
    streams = randomness.spawn(4)
    if events is None:
        selection_trials = request.selection_trials
        chosen_trials = selection_trials if selection_trials is not None else max(1000, trials // 4)
        selection_0 = _numbers(run(data_0, streams[0], chosen_trials), statistic)
        selection_1 = _numbers(run(data_1, streams[1], chosen_trials), statistic)
        chosen = _threshold_events(selection_0, selection_1, request.thresholds, request.keep_events,
                                   claimed_delta)

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
    # Two one-sided intervals (FPR and FNR upper bounds) per event serve both directions.
    alpha = (1.0 - confidence) / (2 * len(chosen))
    estimates = []
    for name, predicate in chosen:
        h0, h1 = measure(outputs_0, predicate), measure(outputs_1, predicate)
        bound, fpr_upper, fnr_upper = distinguisher_bound(h0, trials, trials - h1, trials, delta=claimed_delta,
                                                          alpha=alpha)
        estimates.append(EventEstimate(name, (h0, h1), trials, bound, fpr_upper, fnr_upper))
    return AuditResult(
        epsilon_lower_bound=max(e.epsilon_lower_bound for e in estimates),
        claimed_epsilon=float(request.claimed_epsilon),
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
