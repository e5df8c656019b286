"""Mutation tests of the empirical ε audit on the safe pipeline's steps (sampling, safe
k-anonymization, suppression) and on its ε1-safe scheme selection.

The full pipeline takes ~10 ms a run, so the runs drive the very library functions it is made of
(anonymize/publish.py: ``prepare_dataset``, ``sampling.sample_of``, ``count_sample``, ``apply_recoding``
with a fixed scheme from ``fixed_scheme``; the release's rows are ``class_frame`` of the result;
selection/mechanism.py: ``choose_scheme``) on a small crafted worst-case pair:

- D₀: k − 1 people aged 60–64 (one class of the fixed scheme "age=1", 5-year bands) plus others;
- D₁ = D₀ + x, aged 62: x's presence decides whether the class can reach k in the sample.

The distinguisher is the event "x's class [60, 65) is published". On D₀ it never happens (FPR = 0:
the class has k − 1 rows), on D₁ it happens exactly when all k rows of the class are sampled
(TPR = β^k). The (ε, δ) hypothesis-testing bound ln((1 − δ − FNR)/FPR) is then +∞ in the
population as soon as β^k > δ and 0 otherwise, and the measured bound is
ln((TPR_lower − δ)/FPR_upper) with FPR_upper = 1 − α^(1/N) ≈ ln(1/α)/N: a large number whenever
the claimed δ is below β^k by a few standard errors. For the real plan, k is the least k with
d(k, β, ε) ≤ δ, and d(k, β, ε) ≥ β^k (the tail at n = k is β^k), so the event shows nothing: this
is the pair on which the plan's δ is *exactly* reached (d(66, 0.9, 3) = 0.9^66 and
d(7, 0.5, 2) = 0.5^7), i.e. the audit is aimed at the boundary of the claim.

Confidence 0.99 per audit (Bonferroni over its events). Sizes: with 0 false positives in N runs
FPR_upper = 1 − 0.005^(1/N) (5.3/N), so a broken variant whose TPR exceeds its claimed δ by p is
rejected when ln(p·N/5.3) (less the Clopper–Pearson slack on p) exceeds the claimed ε: N = 300 to
500 suffices for the variants below (each docstring gives its numbers). A run costs 2–5 ms.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from crowdsafe.anonymize.counted import class_frame
from crowdsafe.anonymize.publish import PlanRequest, apply_recoding, count_sample, plan_publication, prepare_dataset
from crowdsafe.data import Dataset, Schema
from crowdsafe.data.builders import flat, intervals
from crowdsafe.mechanisms.audit import audit
from crowdsafe.randomness import Randomness
from crowdsafe.sampling import sample_of
from crowdsafe.selection.mechanism import choose_scheme, fixed_scheme

SCHEME = "age=1"
X_CLASS = "[60, 65)"
PUBLISHED = [(f"x's class {X_CLASS} is published", lambda outs: np.asarray(outs, dtype=bool))]

# Two plans whose δ is reached on the crafted pair: (ε = 3, δ = 1e-3, β = 0.9) gives k = 66,
# (ε = 2, δ = 1e-2, β = 0.5) gives k = 7.
PLAN_A = dict(epsilon=3.0, delta=1e-3, beta=0.9)
PLAN_B = dict(epsilon=2.0, delta=1e-2, beta=0.5)


def _dataset(ages: list[int]) -> Dataset:
    frame = pl.DataFrame({"age": ages})
    schema = Schema.of({"age": "numeric"}, qi=["age"])
    # The hierarchy is fixed in advance over the public range 0..99, not read from the data.
    data = Dataset(frame, schema, {"age": intervals("age", range(0, 100), widths=[5, 20])}, name="audit")
    prepared, columns, _ = prepare_dataset(data)
    return prepared


def neighbours(k: int) -> tuple[Dataset, Dataset]:
    """D₀ with k − 1 rows in x's class [60, 65) and 40 rows elsewhere; D₁ = D₀ + x (age 62)."""
    others = [20] * 20 + [35] * 20
    in_class = [60 + (i % 5) for i in range(k - 1)]
    return _dataset(others + in_class), _dataset(others + in_class + [62])


def pipeline(k: int, beta: float | None):
    """One run of sampling + fixed-scheme k-anonymization + suppression, through the library's
    functions; the output is whether x's class is in the release. ``beta=None``: no sampling
    (a broken variant)."""

    def run(data: Dataset, randomness: Randomness, n: int) -> list[bool]:
        columns = data.quasi_identifiers
        scheme = fixed_scheme(data, columns, SCHEME)
        outs = []
        for stream in randomness.spawn(n):
            sample = data if beta is None else sample_of(data, beta, stream)
            applied = apply_recoding(count_sample(sample, columns), scheme, k)
            released = class_frame(applied, scheme, columns).get_column("age").cast(pl.String)
            outs.append(X_CLASS in released.to_list())
        return outs

    return run


def test_the_crafted_pair_differs_in_one_row_and_x_class_is_the_one_at_stake():
    d0, d1 = neighbours(7)
    assert d1.n_rows == d0.n_rows + 1
    # Without sampling, D₁'s class reaches k and D₀'s does not: the event is aimed right.
    assert pipeline(7, None)(d1, Randomness(0), 1) == [True]
    assert pipeline(7, None)(d0, Randomness(0), 1) == [False]


@pytest.mark.parametrize("parameters", [PLAN_A, PLAN_B], ids=["eps3-beta0.9", "eps2-beta0.5"])
def test_publish_real_plan_stays_below_its_epsilon(parameters):
    """The plan's own k and β: ε_lb = 0 (the event's TPR β^k does not exceed the plan's δ)."""
    plan = plan_publication(PlanRequest(parameters["epsilon"], parameters["delta"], beta=parameters["beta"],
                                        scheme=SCHEME))
    result = audit(pipeline(plan.k, plan.beta), neighbours(plan.k), claimed_epsilon=plan.epsilon,
                   claimed_delta=plan.delta, events=PUBLISHED, trials=300, randomness=51)
    assert result.epsilon_lower_bound <= plan.epsilon
    assert result.best_event.hits[0] == 0  # D₀'s class never reaches k


@pytest.mark.parametrize(
    "parameters, k, trials",
    [
        pytest.param(PLAN_A, 2, 300, id="k=2 at beta=0.9 for the plan's (3, 1e-3)"),
        pytest.param(PLAN_B, 2, 500, id="k=2 at beta=0.5 for the plan's (2, 1e-2)"),
    ],
)
@pytest.mark.slow
def test_publish_with_k_too_small_for_its_claim_is_rejected(parameters, k, trials):
    """Broken: the plan's (β, ε, δ) claimed, k = 2 applied. TPR = β² (0.81, 0.25) far above δ:
    ε_lb = ln((TPR_lower − δ)/FPR_upper) ≈ 3.7 (N = 300) and 2.9 (N = 500), above the claims 3
    and 2."""
    plan = plan_publication(PlanRequest(parameters["epsilon"], parameters["delta"], beta=parameters["beta"],
                                        scheme=SCHEME))
    assert k < plan.k
    broken = dataclasses.replace(plan, k=k)
    result = audit(pipeline(broken.k, broken.beta), neighbours(broken.k), claimed_epsilon=plan.epsilon,
                   claimed_delta=plan.delta, events=PUBLISHED, trials=trials, randomness=52)
    assert result.violates_claim


def test_publish_without_sampling_is_rejected():
    """Broken: the sampling step skipped (k-anonymity alone claims the plan's guarantee). TPR = 1,
    FPR = 0: ε_lb ≈ ln(N/ln(1/α)) ≈ 4 at N = 300, above the claimed 2."""
    plan = plan_publication(PlanRequest(**{**PLAN_B}, scheme=SCHEME))
    result = audit(pipeline(plan.k, None), neighbours(plan.k), claimed_epsilon=plan.epsilon,
                   claimed_delta=plan.delta, events=PUBLISHED, trials=300, randomness=53)
    assert result.violates_claim


# -- the ε1-safe selection (Theorem 6's Am) ---------------------------------------------------------

EPSILON1 = 2.0
K_SELECT = 2
ROOT = [("the selection chose the root (everything generalized away)",
         lambda outs: np.asarray(outs) == 1)]


def _zip_dataset(zips: list[str]) -> Dataset:
    """One categorical quasi-identifier with the hierarchy value -> * fixed in advance over four
    public codes (a numeric hierarchy would do as well; this one keeps a run at ~2 ms)."""
    frame = pl.DataFrame({"zip": zips})
    schema = Schema.of({"zip": "categorical"}, qi=["zip"])
    data = Dataset(frame, schema, {"zip": flat("zip", ["A", "B", "C", "D"])}, name="audit")
    return prepare_dataset(data)[0]


def _selection(epsilon1: float):
    """choose_scheme on a fixed sample (the selection is ε1-DP with respect to the sample); the
    output is the level chosen for zip (1: the root, everything generalized away)."""

    def run(data: Dataset, randomness: Randomness, n: int) -> list[int]:
        columns = data.quasi_identifiers
        table = count_sample(data, columns)
        return [choose_scheme(table, columns, K_SELECT, epsilon1, stream).scheme.levels["zip"]
                for stream in randomness.spawn(n)]

    return run


def _selection_pair() -> tuple[Dataset, Dataset]:
    """(D₁, D₀) with k = 2: D₀ = one row with zip A, so the leaf node (NCP 0) scores e(1) = 1/2 and
    the root (NCP 1) 0; D₁ = D₀ + one more, so the leaf gains e(2) − e(1) = 3/2, the score's whole
    sensitivity (2k − 1)/k, and the root nothing. The root's probability falls from
    1/(1 + e^(ε1/3)) to 1/(1 + e^(4ε1/3)): choosing it is evidence for D₀, so D₁ is the first of
    the pair (the event's false-positive side)."""
    return _zip_dataset(["A"] * K_SELECT), _zip_dataset(["A"] * (K_SELECT - 1))


@pytest.mark.slow
def test_selection_real_code_stays_below_its_epsilon1():
    """ε1 = 2: P(root) = 1/(1 + e^(2/3)) = 0.339 on D₀ and 1/(1 + e^(8/3)) = 0.065 on D₁: population
    ε = 1.65."""
    result = audit(_selection(EPSILON1), _selection_pair(), claimed_epsilon=EPSILON1, events=ROOT, trials=1000,
                   randomness=61)
    assert result.epsilon_lower_bound <= EPSILON1
    assert result.epsilon_lower_bound > 1.0


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_selection_with_doubled_epsilon1_is_rejected():
    """Broken: the exponential mechanism run at 2ε1 while ε1 is charged. P(root) = 1/(1 + e^(4/3)) =
    0.209 on D₀, 1/(1 + e^(16/3)) = 0.0048 on D₁: population ε = 3.8; N = 1000 measures well above 2."""
    result = audit(_selection(2 * EPSILON1), _selection_pair(), claimed_epsilon=EPSILON1, events=ROOT, trials=1000,
                   randomness=62)
    assert result.violates_claim
