"""The selection's noisy count (selection/candidates.py) on neighbouring tables: at a small ε the
plan adds the count inside Am, and everything the count step is built from is public, so it is
identical on D and D + one row with the same seed: the plan (its count share), the possible
tuples of every node and the mask's arguments, with every other mechanism input
(tests/mechanism_spy.py). The noisy count itself is a DP output: it may differ, and is kept apart.

The last test puts back a leaking variant (an observed hierarchy's node counts, which come from
the data, used as its possible tuples) and shows that the comparison then fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from mechanism_spy import input_differences
from neighbour_tables import PAIR, run_pair

SMALL_EPSILON = 0.1  # the planner's ε1 is at the top of its range: the count runs


@pytest.fixture(autouse=True)
def the_count_step(monkeypatch):
    """The count step as the Spark engine runs it: plans that choose on the sample (the Polars
    engine's choose on the whole table here: tests/privacy_boundary/test_table_choice_neighbours.py)."""
    from crowdsafe.anonymize import publish

    monkeypatch.setattr(publish, "TABLE_COUNTS", False)


def check_the_count_ran(d, d1) -> None:
    for inputs in (d, d1):
        assert inputs.refused is None and inputs.charged is True
        assert inputs.plan["count_share"] > 0 and inputs.plan["count_rule"]
        assert [s["count_share"] for s in inputs.selections] == [inputs.plan["count_share"]]
        assert any("possible_cells" in c for c in inputs.counts)
        assert any("noisy_count" in c for c in inputs.custodian)


#: the pairs and objectives both small-ε paths are compared on (the table's: test_table_choice_neighbours.py)
SMALL_CASES = [(pair_id, objective) for objective in ("retained", "classification")
               for pair_id in ("schemaless-new-value", "schema-value-outside-declared-hierarchy",
                               "declared-constant-declared-made-non-constant")]


def same_inputs_at_small_epsilon(case, check, tmp_path, monkeypatch, mechanism_spy) -> None:
    """Run the pair at SMALL_EPSILON, ``check`` that the intended path ran on both sides, and
    compare every mechanism input."""
    pair_id, objective = case
    d, d1 = run_pair(mechanism_spy, PAIR[pair_id], objective, tmp_path, monkeypatch, epsilon=SMALL_EPSILON)
    check(d, d1)
    assert input_differences(d, d1) == []


@pytest.mark.parametrize("case", SMALL_CASES)
def test_the_count_step_is_built_from_the_same_inputs_on_neighbours(case, tmp_path, monkeypatch, mechanism_spy):
    same_inputs_at_small_epsilon(case, check_the_count_ran, tmp_path, monkeypatch, mechanism_spy)


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["retained", "loss", "discernibility", "classification"])
# (mask-unbounded is refused alike on both sides before any count: test_mechanism_inputs.py)
@pytest.mark.parametrize("pair_id", [p for p in PAIR if not p.startswith(("wide", "mask-unbounded"))])
def test_the_count_step_on_every_pair(pair_id, objective, tmp_path, monkeypatch, mechanism_spy):
    d, d1 = run_pair(mechanism_spy, PAIR[pair_id], objective, tmp_path, monkeypatch, epsilon=SMALL_EPSILON)
    check_the_count_ran(d, d1)
    assert input_differences(d, d1) == []


def test_the_comparison_fails_when_an_observed_hierarchy_sizes_the_candidates(tmp_path, monkeypatch,
                                                                              mechanism_spy):
    """The leak this guards against: an observed hierarchy's number of leaves is the data's number
    of values, so counting it in the possible tuples differs on the new-value pair."""
    from crowdsafe.selection import candidates

    def leaking(columns, heights, hierarchies):
        cells = np.ones(1)
        for column, height in zip(columns, heights):
            sizes = np.array([float(hierarchies[column].size(level)) for level in range(height + 1)])
            cells = np.multiply.outer(cells, sizes).ravel()
        return cells

    monkeypatch.setattr(candidates, "possible_cells", leaking)
    d, d1 = run_pair(mechanism_spy, PAIR["schemaless-new-value"], "retained", tmp_path, monkeypatch,
                     epsilon=SMALL_EPSILON)
    check_the_count_ran(d, d1)
    assert any(line.startswith("counts:") for line in input_differences(d, d1))
