"""The choice on the whole table (selection/PROOF.md §8): where the planner holds ε1 at the top of
its range and the engine holds the table, the exponential mechanism scores the schemes on the whole
table with classes of ⌈k/β⌉ rows instead of on the sample; the release of the chosen scheme is then
strongly safe and the two compose to the plan's (ε, δ). The plan says so, the chooser reads the
table with those inputs and no noisy count, and the certificate cites the composition."""

from __future__ import annotations

import pytest

from crowdsafe import api
from crowdsafe.anonymize import publish
from crowdsafe.anonymize.counted import counted
from crowdsafe.anonymize.plan import COUNT_SHARE, TABLE_RULE, PlanRequest, plan_publication
from crowdsafe.anonymize.publish import choose_recoding, plan_for_dataset, prepare_dataset, table_threshold
from crowdsafe.datasets import adult
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.certify import THEOREM_EPSILON_SAFE, THEOREM_TABLE_CHOICE
from crowdsafe.privacy.dps import dps_delta
from crowdsafe.randomness import Randomness
from crowdsafe.sampling import sample_of


@pytest.mark.parametrize(("epsilon", "source"), [(0.1, "table"), (0.25, "table"), (0.5, "sample"), (1.0, "sample")])
def test_the_polars_plan_chooses_on_the_table_exactly_where_epsilon1_is_capped(epsilon, source):
    plan = plan_for_dataset(adult(), PlanRequest(epsilon, 1e-6, objective="classification", target="income"))
    assert plan.selection_source == source
    described = plan.as_dict()
    assert described["selection_source"] == source
    assert (described["selection_rule"] == TABLE_RULE) == (source == "table")
    assert plan.count_share == 0.0  # the table replaces the noisy count of the sample


def test_a_plan_without_the_table_counts_the_sample_as_before():
    """A plan without the table's counts (``table_counts`` off: an engine that does not hold
    them) keeps the sample (a given epsilon1 too: test_given_epsilon1.py)."""
    capped = plan_publication(PlanRequest(0.1, 1e-6, candidates=36_864))
    assert capped.selection_source == "sample" and capped.count_share == COUNT_SHARE
    given = plan_publication(PlanRequest(0.1, 1e-6, epsilon1=0.05, candidates=36_864))
    assert given.selection_source == "sample" and given.count_share == COUNT_SHARE
    fixed = plan_for_dataset(adult(), PlanRequest(0.1, 1e-6, scheme="medium"))
    assert fixed.as_dict()["selection_source"] is None


def test_the_threshold_is_k_over_beta_rounded_up():
    assert table_threshold(53, 0.0445) == 1192  # 53 / 0.0445 = 1191.01...
    assert table_threshold(40, 0.25) == 160 and table_threshold(3, 0.5) == 6 and table_threshold(10, 1.0) == 10


def _adult_counts(epsilon):
    data = adult()
    plan = plan_for_dataset(data, PlanRequest(epsilon, 1e-6, objective="classification", target="income"))
    prepared, columns, _ = prepare_dataset(data)
    sample = counted(sample_of(prepared, plan.beta, Randomness(1)), columns)
    return plan, columns, sample, counted(prepared, columns)


def test_the_chooser_reads_the_table_with_k_over_beta_and_epsilon1(monkeypatch):
    plan, columns, sample, table = _adult_counts(0.1)
    seen = {}
    real = publish.choose_scheme

    def spy(source, columns_, k, epsilon1, randomness, objective=None, count_share=0.0):
        seen.update(rows=source.n_rows, k=k, epsilon1=epsilon1, count_share=count_share)
        return real(source, columns_, k, epsilon1, randomness, objective, count_share)

    monkeypatch.setattr(publish, "choose_scheme", spy)
    scheme, profile, choice = choose_recoding(sample, columns, plan, None, Randomness(2), table)
    assert seen == {"rows": table.n_rows, "k": table_threshold(plan.k, plan.beta), "epsilon1": plan.epsilon1,
                    "count_share": 0.0}
    assert profile.reads == "table" and profile.epsilon1 == plan.epsilon1
    assert f"ceil(k/beta) = {table_threshold(plan.k, plan.beta)}" in profile.name
    assert choice is not None and choice.count_epsilon == 0.0
    with pytest.raises(ParameterError, match="whole table"):
        choose_recoding(sample, columns, plan, None, Randomness(2))  # the engine did not count it


def test_the_certificate_cites_the_composition_with_the_plans_numbers():
    for epsilon, theorem in ((0.1, THEOREM_TABLE_CHOICE), (1.0, THEOREM_EPSILON_SAFE)):
        publication = api.publish("adult", epsilon=epsilon, delta=1e-6, objective="classification", target="income",
                                  seed=3, ledger=None, report=False)
        certificate = publication.certificate
        plan = publication.plan
        assert certificate.theorem == theorem
        assert certificate.epsilon == pytest.approx(plan.epsilon)
        assert certificate.delta == pytest.approx(dps_delta(plan.k, plan.beta, plan.epsilon, plan.epsilon1))
        recode = [m for m in certificate.to_dict()["mechanisms"] if m["step"] == "recode"][0]
        table = epsilon == 0.1
        assert recode["parameters"]["chosen_on"] == ("table" if table else "sample")
        assert any("on the table" in a for a in certificate.assumptions) == table
        assert any("saw only the sample" in a for a in certificate.assumptions) == (not table)
