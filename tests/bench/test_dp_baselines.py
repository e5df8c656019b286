"""bench/dp_baselines.py: the true marginals it compares with are the data's own shares, each
baseline is exact without noise (but the product of one-way marginals, which misses the pairs'
dependence), and the Gaussian baseline's σ spends no more than the ε asked."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.datasets import adult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import dp_baselines  # noqa: E402


@pytest.fixture(scope="module")
def data_and_truth():
    data = adult("train")
    return data, dp_baselines.true_marginals(data)


def test_the_true_one_way_marginal_is_the_columns_shares(data_and_truth):
    data, (ones, _) = data_and_truth
    domain = AttributeDomain.of(data, "sex")
    shares = data.frame.get_column("sex").value_counts(normalize=True)
    for value, share in zip(shares.get_column("sex").to_list(), shares.get_column("proportion").to_list()):
        assert ones["sex"][domain.values.to_list().index(value)] == pytest.approx(share)
    assert all(t.sum() == pytest.approx(1.0) for t in ones.values())


def test_without_noise_the_baselines_answer_exactly_but_the_product(data_and_truth):
    data, truth = data_and_truth
    n = data.frame.height
    for name in ("laplace_45", "gaussian_36"):
        answer = dp_baselines.BASELINES[name](truth, n, 1e12, 1e-6, np.random.default_rng(0))
        assert max(dp_baselines.mean_tvd(truth, answer)) < 1e-6
    one, two = dp_baselines.mean_tvd(truth, dp_baselines.laplace_1way_product(truth, n, 1e12, 1e-6,
                                                                              np.random.default_rng(0)))
    assert one < 1e-6 < 0.05 < two  # the pairs' dependence is lost


@pytest.mark.parametrize("epsilon", [0.05, 0.1, 1.0, 4.0])
def test_the_gaussian_sigma_spends_at_most_epsilon(epsilon):
    delta, l2 = 1e-6, 6.0
    sigma = dp_baselines.zcdp_sigma(epsilon, delta, l2)
    rho = l2**2 / (2 * sigma**2)
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) <= epsilon
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(epsilon, rel=1e-9)
