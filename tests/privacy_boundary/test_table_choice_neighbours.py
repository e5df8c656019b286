"""The choice on the whole table (selection/PROOF.md §8) on neighbouring tables: at a small ε the
Polars engine's plan chooses on the table, and every input of that choice is public, so it is
identical on D and D + one row with the same seed: the plan (its source and rule), the threshold
⌈k/β⌉ and ε1 the mechanism runs with, and every other mechanism input (tests/mechanism_spy.py).

The last test puts back a leaking variant (the plan's source decided by the table's row count)
and shows that the comparison then fails."""

from __future__ import annotations

import pytest
from test_sample_count_neighbours import SMALL_CASES, SMALL_EPSILON, same_inputs_at_small_epsilon

from crowdsafe.anonymize.publish import table_threshold
from mechanism_spy import input_differences
from neighbour_tables import PAIR, run_pair


def check_the_table_choice_ran(d, d1) -> None:
    for inputs in (d, d1):
        assert inputs.refused is None and inputs.charged is True
        assert inputs.plan["selection_source"] == "table" and inputs.plan["count_share"] == 0.0
        threshold = table_threshold(inputs.plan["k"], inputs.plan["beta"])
        assert [(s["k"], s["epsilon1"], s["count_share"]) for s in inputs.selections] == \
            [(threshold, inputs.plan["epsilon1"], 0.0)]
        assert not any("noisy_count" in c for c in inputs.custodian)


@pytest.mark.parametrize("case", SMALL_CASES)
def test_the_table_choice_is_built_from_the_same_inputs_on_neighbours(case, tmp_path, monkeypatch, mechanism_spy):
    same_inputs_at_small_epsilon(case, check_the_table_choice_ran, tmp_path, monkeypatch, mechanism_spy)


@pytest.mark.parametrize("epsilon", [0.02, 1.0])
def test_the_default_objective_and_its_rule_are_the_same_on_neighbours(epsilon, tmp_path, monkeypatch,
                                                                       mechanism_spy):
    """Without an objective, on the table with a declared hierarchy for every column: at ε = 0.02
    the ``marginals`` choice on the table would be too blunt (public: ε1 and L), so the default is
    ``retained`` with the rule naming the resolution; at ε = 1 it is ``marginals``. Either way the
    objective, its rule and every mechanism input are the same on D and D + one row."""
    d, d1 = run_pair(mechanism_spy, PAIR["declared-constant-declared-made-non-constant"], "default", tmp_path,
                     monkeypatch, epsilon=epsilon)
    for inputs in (d, d1):
        assert inputs.refused is None and inputs.charged is True
    assert (d.plan["objective"], d.plan["objective_rule"]) == (d1.plan["objective"], d1.plan["objective_rule"])
    if epsilon < 0.05:
        assert d.plan["objective"] == "retained"
        assert d.plan["objective_rule"].startswith("default: retained, since at this epsilon the choice for marginals")
    else:
        assert d.plan["objective"] == "marginals"
    assert input_differences(d, d1) == []


def test_the_comparison_fails_when_the_tables_size_picks_the_source(tmp_path, monkeypatch, mechanism_spy):
    """The leak this guards against: the source chosen from the number of rows (custodian-only)."""
    from dataclasses import replace

    from crowdsafe.anonymize import publish

    real = publish.plan_publication

    def leaking(request):
        return real(replace(request, table_counts=request.table_counts and rows[0] % 2 == 0))

    rows = [0]
    planned = publish.plan_for_dataset

    def counting(dataset, request):
        rows[0] = dataset.n_rows
        return planned(dataset, request)

    monkeypatch.setattr(publish, "plan_publication", leaking)
    monkeypatch.setattr(publish, "plan_for_dataset", counting)  # the engine imports it at call time

    d, d1 = run_pair(mechanism_spy, PAIR["schemaless-new-value"], "retained", tmp_path, monkeypatch,
                     epsilon=SMALL_EPSILON)
    assert {d.plan["selection_source"], d1.plan["selection_source"]} == {"table", "sample"}
    assert any(line.startswith("plan:") for line in input_differences(d, d1))
