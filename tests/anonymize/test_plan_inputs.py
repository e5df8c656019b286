"""plan_publish refuses what publish refuses, before anything is read (an API sweep found
candidates=0 ending in 'math domain error', candidates=2.5 and scheme={'age': -1} planned,
and expected_sample_rows('5') a TypeError, (-5) a negative number of rows)."""

from __future__ import annotations

import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError


@pytest.mark.parametrize("candidates", [0, -1, 2.5, True, "10"])
def test_candidates_must_be_a_whole_number_of_at_least_one(candidates):
    with pytest.raises(ParameterError, match=r"^candidates \(the number of candidate schemes.*must be a whole "
                                             r"number >= 1, got"):
        api.plan_publish(1.0, candidates=candidates)


def test_one_candidate_is_planned():
    assert api.plan_publish(1.0, candidates=1).candidates == 1


@pytest.mark.parametrize("scheme", [{"age": -1}, "age=-1", {"age": 1.5}, {"age": True}, "fine, age=-2"])
def test_a_scheme_level_below_zero_or_not_whole_is_refused_by_plan_and_publish_alike(scheme, tmp_path):
    with pytest.raises(ParameterError, match=r"the level of 'age' in the scheme") as planned:
        api.plan_publish(1.0, scheme=scheme)
    assert "\n" not in str(planned.value)
    with pytest.raises(ParameterError) as published:  # before the data (a missing file) is read
        api.publish(tmp_path / "absent.csv", epsilon=1.0, scheme=scheme, ledger=tmp_path / "ledger.sqlite3")
    assert str(published.value) == str(planned.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("rows", [-5, "5", 2.5, True, None])
def test_expected_sample_rows_takes_a_number_of_rows(rows):
    with pytest.raises(ParameterError, match=r"rows must be a whole number >= 0"):
        api.plan_publish(1.0).expected_sample_rows(rows)


def test_expected_sample_rows_is_rows_times_beta():
    plan = api.plan_publish(1.0)
    assert plan.expected_sample_rows(1000) == pytest.approx(1000 * plan.beta)
    assert plan.expected_sample_rows(0) == 0
