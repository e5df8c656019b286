"""Empirical privacy audit (crowdsafe.mechanisms.audit) of the whole safe pipeline, end to end
through ``publish_dataset``, and of Mondrian.

The earlier version of this file audited the pipeline on a town with events (a rich cell shown,
rows above the median) that no plausible flaw of the safe pipeline moves: it gave a bound of 0
even for a doubled ε or k = 2 at β = 0.9, so it could not fail. The pair and event below are the
ones on which the plan's δ is exactly reached (see tests/audit/test_audit_publish.py, which also
runs the broken variants through the pipeline's own functions and shows they are rejected):

- D₀: k − 1 people aged 60–64 (one 5-year class of the fixed scheme "age=1") plus 40 others;
- D₁ = D₀ + x, aged 62; the event: "x's class [60, 65) is in the release".

On D₀ the event never happens; on D₁ it happens with probability β^k, which the plan's δ covers.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication, publish_dataset
from crowdsafe.data import Dataset, Schema
from crowdsafe.data.builders import intervals
from crowdsafe.errors import ParameterError
from crowdsafe.experiments.extreme_value import mondrian_release, reveals_rich, town
from crowdsafe.mechanisms.audit import audit
from crowdsafe.randomness import Randomness

X_CLASS = "[60, 65)"
PUBLISHED = [(f"x's class {X_CLASS} is published", lambda outs: np.asarray(outs, dtype=bool))]


def _crafted(k: int) -> tuple[Dataset, Dataset]:
    others = [20] * 20 + [35] * 20
    in_class = [60 + (i % 5) for i in range(k - 1)]
    schema = Schema.of({"age": "numeric"}, qi=["age"])

    def dataset(ages: list[int]) -> Dataset:
        hierarchy = intervals("age", range(0, 100), widths=[5, 20])  # fixed over the public range
        return Dataset(pl.DataFrame({"age": ages}), schema, {"age": hierarchy}, name="audit")

    return dataset(others + in_class), dataset(others + in_class + [62])


@pytest.mark.slow
def test_audit_of_the_safe_pipeline_on_the_worst_case_pair_stays_below_the_certified_epsilon():
    plan = plan_publication(PlanRequest(2.0, 1e-2, beta=0.5, scheme="age=1"))
    assert plan.k == 7 and plan.delta == pytest.approx(0.5**7, rel=1e-6)  # δ is reached on this pair

    def run(data, randomness, n):
        return [X_CLASS in publish_dataset(data, plan, RunOptions(), randomness=stream).release.frame
                .get_column("age").cast(pl.String).to_list()
                for stream in randomness.spawn(n)]

    result = audit(run, _crafted(plan.k), claimed_epsilon=plan.epsilon, claimed_delta=plan.delta,
                   events=PUBLISHED, trials=200, randomness=3)
    assert result.best_event.hits[0] == 0  # D₀'s class never reaches k
    assert not result.violates_claim


def test_the_pipeline_refuses_to_certify_k_too_small_for_its_delta():
    # The broken variant the audit rejects in tests/audit (k = 2 at β = 0.9 under the plan's δ)
    # cannot be certified through publish_dataset: the certifier recomputes d(k, β, ε).
    plan = plan_publication(PlanRequest(3.0, 1e-3, beta=0.9, scheme="age=1"))
    broken = dataclasses.replace(plan, k=2)
    with pytest.raises(ParameterError, match="exceeds the requested delta"):
        publish_dataset(_crafted(2)[1], broken, RunOptions(), randomness=Randomness(0))


# -- Mondrian (no sampling, recoding fitted to the data): the audit finds a large ε ----------------

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
def test_audit_of_mondrian_without_sampling_finds_a_large_epsilon():
    k = 10

    def run(data, randomness, n):
        # Mondrian is deterministic: every run on the same data gives the same release.
        return [_outcome(mondrian_release(data, k))] * n

    result = audit(run, _neighbours(), claimed_epsilon=1.0, events=EVENTS, trials=TRIALS, randomness=4)
    assert result.violates_claim and result.epsilon_lower_bound > 3.0
    assert result.best_event.name.startswith("a published worth cell")
