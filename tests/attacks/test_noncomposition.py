"""The non-composition counter-example: simulated probabilities against an exact computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from crowdsafe.attacks.noncomposition import non_composition, simulate
from crowdsafe.errors import ParameterError

N, RATE = 10_000, 0.5


def discrete_laplace_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    q = np.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(support)


def exact_joint(with_tuple: bool, epsilon: float) -> float:
    """Pr[A2 >= 1/2 and A1 = false], summed exactly over M − F and the noise.

    A2 >= 1/2 <=> 2(M + Z1) >= M + F + Z2 <=> 2 Z1 − Z2 >= F − M (the noisy size is positive
    with overwhelming probability). A1 = false <=> (M > F) == s.
    """
    scale = 2.0 / epsilon
    z = np.arange(-400, 401)
    pz = discrete_laplace_pmf(scale, z)
    # W = 2 Z1 − Z2 on the integers
    w_support = np.arange(-1200, 1201)
    pw = np.zeros(len(w_support))
    for zi, p in zip(z, pz):
        idx = 2 * zi - z + 1200
        pw[idx] += p * pz
    tail = np.cumsum(pw[::-1])[::-1]  # Pr[W >= w]
    half = N // 2
    k = np.arange(half + 1)
    pm = stats.binom.pmf(k, half, RATE)
    diff = np.convolve(pm, pm[::-1])  # distribution of F − M on -half..half
    d = np.arange(-half, half + 1)

    def pr_w_at_least(v):
        idx = np.clip(v + 1200, 0, len(tail) - 1)
        return np.where(v < -1200, 1.0, np.where(v > 1200, 0.0, tail[idx]))

    def joint(shift: int, s: bool) -> float:
        # with t sampled, M gains one: F − M = d − shift
        gap = d - shift
        a1_false = (gap < 0) == s  # M > F <=> F − M < 0
        return float((diff * a1_false * pr_w_at_least(gap)).sum())

    if not with_tuple:
        return joint(0, False)
    return RATE * joint(1, True) + (1 - RATE) * joint(0, False)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_joint_event_probabilities_match_the_exact_values_within_the_interval(epsilon):
    result = non_composition(epsilon=epsilon, runs=200_000, randomness=11, confidence=0.999)
    joint = next(r for r in result["events"] if r["event"] == "A2 >= 0.5 and A1 = false")
    for dataset, with_tuple in (("D", False), ("D'", True)):
        exact = exact_joint(with_tuple, epsilon)
        assert joint[dataset]["low"] <= exact <= joint[dataset]["high"], (dataset, exact, joint[dataset])
    # the theory: ≈ 0 without the tuple, ≈ 1/4 with it
    assert joint["D"]["estimate"] < 0.05
    assert abs(joint["D'"]["estimate"] - 0.25) < 0.01
    assert joint["epsilon_lower_bound"] > epsilon


def test_each_mechanism_alone_looks_private():
    result = non_composition(epsilon=1.0, runs=200_000, randomness=5)
    alone = {r["event"]: r for r in result["events"]}
    assert alone["A1 = true"]["epsilon_lower_bound"] < 0.05
    assert alone["A2 >= 0.5"]["epsilon_lower_bound"] <= 1.0
    for name in ("A1 = true", "A2 >= 0.5"):
        assert abs(alone[name]["D"]["estimate"] - alone[name]["D'"]["estimate"]) < 0.02


def test_small_samples_make_a1_false():
    runs = simulate(True, n=100, rate=0.5, runs=1000, minimum=1000, randomness=1)
    assert not runs.a1.any()


def test_bad_parameters():
    with pytest.raises(ParameterError, match="even"):
        simulate(False, n=101)
    with pytest.raises(ParameterError, match="rate"):
        simulate(False, rate=1.0)
    with pytest.raises(ParameterError, match="epsilon"):
        simulate(False, epsilon=0.0)
