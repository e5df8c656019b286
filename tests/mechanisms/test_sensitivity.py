"""Sensitivity helpers: derived values, refusals, and local sensitivity against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import (
    clamp,
    count_sensitivity,
    histogram_sensitivity,
    local_sensitivity,
    quantile_sensitivity,
    sum_sensitivity,
)


def test_count_is_one_per_row_and_scales_with_rows_per_person():
    assert count_sensitivity().l1 == 1
    assert count_sensitivity("change").l1 == 1
    assert count_sensitivity(rows_per_person=4).l1 == 4


def test_histogram_add_remove_versus_change():
    add = histogram_sensitivity("add-remove")
    change = histogram_sensitivity("change")
    assert (add.l1, add.l2, add.one_coordinate) == (1, 1, True)
    assert (change.l1, change.l2, change.one_coordinate) == (2, pytest.approx(math.sqrt(2)), False)
    several = histogram_sensitivity("add-remove", rows_per_person=3)
    assert (several.l1, several.l2, several.one_coordinate) == (3, 3, False)


def test_sum_sensitivity_depends_on_bounds_and_neighbours():
    assert sum_sensitivity(-5, 10).l1 == 10
    assert sum_sensitivity(-5, 10, "change").l1 == 15
    assert sum_sensitivity(17, 90, rows_per_person=2).l1 == 180


@pytest.mark.parametrize(("lower", "upper"), [(None, 1), (0, None), (5, 5), (6, 1), (0, float("inf")), ("a", 1),
                                              (0, 1e19), (-(2.0**62) * 1.01, 0)])
def test_sum_refuses_missing_or_bad_bounds(lower, upper):
    with pytest.raises(ParameterError):
        sum_sensitivity(lower, upper)


def test_bounds_up_to_2_to_the_62_are_allowed():
    # an integer column's clamped values are compared and summed as 64-bit integers
    assert sum_sensitivity(-(2.0**62), 2.0**62).l1 == 2.0**62


def test_bad_neighbours_or_rows_per_person():
    with pytest.raises(ParameterError, match="neighbours"):
        count_sensitivity("swap")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError):
            count_sensitivity(rows_per_person=bad)


def test_quantile_score_sensitivity():
    assert quantile_sensitivity(0.5).l1 == 0.5
    assert quantile_sensitivity(0.9).l1 == pytest.approx(0.9)
    assert quantile_sensitivity(0.5, "change").l1 == 1.0


def test_clamp_counts_moved_values():
    result = clamp(np.array([-3.0, 0.0, 5.0, 11.0, 12.0]), 0, 10)
    assert list(result.values) == [0.0, 0.0, 5.0, 10.0, 10.0]
    assert (result.below, result.above, result.clamped) == (1, 2, 3)


def _brute_local(statistic, x: np.ndarray, low: float, high: float) -> float:
    """max |f(x) − f(x')| over removing each value and adding each of many values in [L, U]."""
    base = statistic(x)
    changes = [abs(statistic(np.delete(x, i)) - base) for i in range(x.size)]
    changes += [abs(statistic(np.append(x, v)) - base) for v in np.linspace(low, high, 201)]
    return max(changes)


@pytest.mark.slow
@given(values=st.lists(st.integers(0, 100), min_size=3, max_size=25))
@settings(max_examples=80, deadline=None)
def test_local_sensitivity_matches_brute_force(values):
    x = np.array(values, dtype=float)
    for query, statistic in (("mean", np.mean), ("median", np.median), ("sum", np.sum)):
        result = local_sensitivity("quantile" if query == "median" else query, x, lower=0, upper=100)
        assert result.value == pytest.approx(_brute_local(statistic, x, 0.0, 100.0), abs=1e-9)
        assert result.differentially_private is False and "NOT differentially private" in result.note


def test_local_sensitivity_of_a_median_can_be_far_below_the_global_bound():
    dense = np.full(1001, 50.0)
    result = local_sensitivity("quantile", dense, lower=0, upper=100, q=0.5)
    assert result.value == 0.0 and result.global_value == 100.0
    assert local_sensitivity("count").value == 1.0
