"""Empirical privacy audit (crowdsafe.mechanisms.audit) of the whole safe pipeline, and of Mondrian.

Neighbouring towns D0 and D1 = D0 + one person worth 35M (everyone else is below 10M). Each run of
the pipeline samples, chooses a scheme with the exponential mechanism, applies and suppresses —
everything that shapes the output. The audit's lower bound on ε holds with probability 0.99; with
400 runs per dataset it can detect an ε up to about 4.
"""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.anonymize.publish import plan_publication, publish_dataset
from crowdsafe.experiments.extreme_value import mondrian_release, reveals_rich, town
from crowdsafe.mechanisms import audit
from crowdsafe.randomness import Randomness

TRIALS = 400
EVENTS = [
    ("a published worth cell shows a value >= 10M", lambda outs: np.array([o["reveals"] for o in outs])),
    ("more than the median number of rows published", lambda outs: np.array([o["rows"] for o in outs]) > 20),
    ("at most the median number of rows published", lambda outs: np.array([o["rows"] for o in outs]) <= 20),
]


def _neighbours():
    base = town(Randomness(7), size=60)
    rich = town(Randomness(7), size=60, rich=True)
    assert rich.n_rows == base.n_rows + 1 and rich.frame.head(60).equals(base.frame)
    return base, rich


def _outcome(frame):
    return {"reveals": reveals_rich(frame), "rows": frame.height}


@pytest.mark.slow
def test_audit_of_the_safe_pipeline_stays_below_the_certified_epsilon():
    plan = plan_publication(1.0, 0.02, beta=0.5)
    assert plan.k == 10

    def run(data, randomness, n):
        return [_outcome(publish_dataset(data, plan, randomness=stream, force=True).release.frame)
                for stream in randomness.spawn(n)]

    result = audit(run, _neighbours(), claimed_epsilon=plan.epsilon, claimed_delta=plan.delta,
                   events=EVENTS, trials=TRIALS, randomness=3)
    assert not result.violates_claim
    assert result.epsilon_lower_bound < plan.epsilon


@pytest.mark.slow
def test_audit_of_mondrian_without_sampling_finds_a_large_epsilon():
    k = 10

    def run(data, randomness, n):
        # Mondrian is deterministic: every run on the same data gives the same release.
        return [_outcome(mondrian_release(data, k))] * n

    result = audit(run, _neighbours(), claimed_epsilon=1.0, events=EVENTS, trials=TRIALS, randomness=4)
    assert result.violates_claim and result.epsilon_lower_bound > 3.0
    assert result.best_event.name.startswith("a published worth cell")
