"""The publish experiments' building blocks (the full runs are `crowdsafe experiment extreme-value`
and `crowdsafe experiment utility`)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from crowdsafe.experiments import available
from crowdsafe.experiments.extreme_value import (
    dp_advantage_bound,
    membership_game,
    mondrian_release,
    reveals_rich,
    town,
)
from crowdsafe.experiments.utility import workload_error
from crowdsafe.randomness import Randomness


def test_experiments_are_registered():
    names = {e.name for e in available()}
    assert {"extreme-value", "utility"} <= names


@pytest.mark.parametrize(
    ("cell", "reveals"),
    [("[80, 350]", True), ("[350, 400)", True), ("350", True), ("[0, 400)", False), ("*", False),
     ("[0, 99]", False), ("[50, 100)", False)],
)
def test_what_the_attacker_reads_in_a_worth_cell(cell, reveals):
    assert reveals_rich(pl.DataFrame({"worth": [cell]})) is reveals


def test_mondrian_always_reveals_the_rich_person():
    outcome = membership_game("Mondrian", lambda d, r: mondrian_release(d, 10), Randomness(1), runs=6)
    assert outcome.true_positive_rate == 1.0 and outcome.false_positive_rate == 0.0


def test_dp_advantage_bound():
    # for pure ε-DP the best membership test has TPR − FPR = (e^ε − 1)/(e^ε + 1) = tanh(ε/2)
    assert dp_advantage_bound(1.0, 0.0) == pytest.approx(math.tanh(0.5))


def test_the_town_is_a_neighbour_pair():
    base, rich = town(Randomness(3), size=20), town(Randomness(3), size=20, rich=True)
    assert rich.frame.head(20).equals(base.frame) and rich.frame["worth"].max() == 350
    assert base.frame["worth"].max() < 100


def test_workload_error_of_the_data_itself_is_zero():
    data = town(Randomness(4), size=50)
    release = data.frame.select(pl.all().cast(pl.String))
    assert workload_error(release, data, ["age", "worth"], 1.0) == pytest.approx(0.0)
