"""The planner's printed plan given back by hand (docs/publish.md, "Giving the plan back"): a given
ε1 is spent as given, on the data the planner's own rule picks (the whole table where its ε1 for
the sample is held at the cap and the engine holds the table's counts, selection/PROOF.md §8), with
the same default objective rule; a given β is not refused where a plan exists (a floor failure at
the sample rule's capped ε1 goes on to the table rule); and a β truly too large is refused, with
a message whose bound is right."""

from __future__ import annotations

import json
import math
import re

import pytest

from crowdsafe import api
from crowdsafe.anonymize.plan import TABLE_RULE_GIVEN, PlanRequest, plan_publication
from crowdsafe.defaults import COUNT_SHARE
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.certify import THEOREM_TABLE_CHOICE

EPSILONS = (0.05, 0.1, 0.25, 0.5, 1.0)
ADULT = {"candidates": 36_864, "declared_domains": True}  # Adult's lattice, as plan_for_dataset plans it
FIELDS = ("epsilon", "delta", "k", "beta", "epsilon1", "objective", "selection_source", "count_share",
          "total_epsilon", "total_delta")


def _planner(epsilon: float, table_counts: bool = True, **given):
    return plan_publication(PlanRequest(epsilon, 1e-6, table_counts=table_counts, **ADULT, **given))


def _same(a, b) -> None:
    assert {f: getattr(a, f) for f in FIELDS} == {f: getattr(b, f) for f in FIELDS}


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("table_counts", [True, False])
def test_the_planners_epsilon1_given_back_gives_the_same_mechanism(epsilon, table_counts):
    """ε1 alone, and ε1 with the objective, read the same data as the planner's plan, with the
    same objective (no silent switch to ``retained``), count share, k and β."""
    own = _planner(epsilon, table_counts)
    assert own.selection_source == ("table" if epsilon <= 0.5 and table_counts else "sample")  # Adult's plans
    for given in ({"epsilon1": own.epsilon1}, {"epsilon1": own.epsilon1, "objective": own.objective}):
        again = _planner(epsilon, table_counts, **given)
        _same(own, again)
        assert again.epsilon1_rule == "given"
    if own.selection_source == "table":
        assert _planner(epsilon, epsilon1=own.epsilon1).as_dict()["selection_rule"] == TABLE_RULE_GIVEN


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_planners_beta_k_epsilon1_and_objective_given_back_give_the_same_plan(epsilon):
    own = _planner(epsilon)
    _same(own, _planner(epsilon, beta=own.beta, k=own.k, epsilon1=own.epsilon1, objective=own.objective))


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_planners_beta_given_alone_is_accepted(epsilon):
    """At ε ≤ 0.25 it was refused ("no guarantee for any k"): the sample rule's capped ε1 (half
    of ε) is below the floor at that β, and that failure escaped before the table rule."""
    own = _planner(epsilon)
    for beta in (own.beta, 0.99 * own.beta):
        held = _planner(epsilon, beta=beta)
        assert held.beta == beta  # (where it reads is the rule's at that β: the table at ε = 1 too)
        assert -math.log1p(-beta) + held.epsilon1 <= epsilon  # Theorem 6's condition
        assert held.k <= own.k + 2 and held.objective == own.objective
    for objective, target in (("retained", None), ("classification", "income")):
        own = _planner(epsilon, objective=objective, target=target)
        assert _planner(epsilon, objective=objective, target=target, beta=own.beta).beta == own.beta


def test_a_beta_truly_too_large_is_refused_with_the_right_bound():
    """β leaving less than the planner's least ε1 (1% of ε) is refused; the bound the message
    states, 1 − e^−0.99ε, is admitted (with the table rule)."""
    epsilon = 0.1
    bound = 1.0 - math.exp(-0.99 * epsilon)
    with pytest.raises(ParameterError, match="lower beta to at most .* = ") as refused:
        _planner(epsilon, beta=0.2)
    stated = float(re.search(r"lower beta to at most .* = ([0-9.e-]+),", str(refused.value)).group(1))
    assert stated <= bound < stated + 10.0 ** (math.floor(math.log10(bound)) - 5)  # six digits, rounded down
    assert "\n" not in str(refused.value) and "any k" not in str(refused.value)
    with pytest.raises(ParameterError, match="least epsilon1 the planner gives"):
        _planner(epsilon, beta=bound * 1.001)
    at_table = _planner(epsilon, beta=0.09)  # between the sample rule's floor (0.0488) and the bound
    assert at_table.selection_source == "table" and -math.log1p(-0.09) + at_table.epsilon1 <= epsilon
    # without the table's counts the sample rule holds ε1 at half of ε, which a β above
    # 1 − e^−ε/2 does not leave: refused, saying so
    half = 1.0 - math.exp(-epsilon / 2)
    with pytest.raises(ParameterError, match=r"at most 1 - e\^-\(epsilon - epsilon1\) = .*table's counts") as refused:
        _planner(epsilon, table_counts=False, beta=1.1 * half)
    stated = float(re.search(r"at most 1 - e\^-\(epsilon - epsilon1\) = ([0-9.e-]+),", str(refused.value)).group(1))
    assert stated <= half < stated + 10.0 ** (math.floor(math.log10(half)) - 5)  # six digits, rounded down
    assert _planner(epsilon, table_counts=False, beta=0.9 * half).count_share == COUNT_SHARE


def test_the_command_repeats_the_printed_plan(capsys, tmp_path, monkeypatch):
    """``--plan-only`` with the printed ε1 (alone) says the choice reads the whole table, with the
    same objective; at ε = 1 it says the sample."""
    from crowdsafe.cli import main

    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "ledger.sqlite3"))
    for epsilon, where in (("0.05", "whole table"), ("1", "sample")):
        assert main(["publish", "adult", "--epsilon", epsilon, "--plan-only", "--json"]) == 0
        own = json.loads(capsys.readouterr().out)["plan"]
        assert main(["publish", "adult", "--epsilon", epsilon, "--epsilon1", repr(own["epsilon1"]),
                     "--plan-only"]) == 0
        printed = " ".join(capsys.readouterr().out.split())
        assert f"over the lattice, scored on the {where}" in printed
        assert f"objective {own['objective']} among" in printed


def test_the_release_with_a_given_epsilon1_is_certified_for_the_choice_on_the_table():
    """What ran is what is certified: a given ε1 at ε = 0.1 chooses on the table, and the
    certificate cites the composition of selection/PROOF.md §8 at the plan's (ε, δ)."""
    own = api.plan_publish(0.1, table_counts=True, **ADULT)
    publication = api.publish("adult", epsilon=0.1, epsilon1=own.epsilon1, seed=0, ledger=None, report=False)
    assert publication.plan.selection_source == "table" and publication.plan.objective == own.objective
    certificate = publication.certificate.to_dict()
    assert THEOREM_TABLE_CHOICE in json.dumps(certificate)
    assert publication.release.table.height > 0


def test_the_check_before_the_read_accepts_a_beta_the_plan_that_runs_accepts(capsys, tmp_path, monkeypatch):
    """The command checks its parameters before the lattice's size is known. Held at the 10% ε1
    of a plan without that size, β = 0.09 at ε = 0.1 (ε1 up to 5.7% of ε left) was refused there,
    although the plan that runs, with the size, accepts it (ε1 = 0.0057), and although the refusal
    of β = 0.2 named 0.0943 as the largest β."""
    from crowdsafe.anonymize.plan import check_publication
    from crowdsafe.cli import main

    request = PlanRequest(0.1, 1e-6, beta=0.09)
    with pytest.raises(ParameterError, match="no guarantee for any k"):
        check_publication(request)  # as plan_publication without the lattice's size, at 10%
    check_publication(request, lattice_later=True)
    assert _planner(0.1, beta=0.09).beta == 0.09
    with pytest.raises(ParameterError, match="least epsilon1 the planner gives"):
        check_publication(PlanRequest(0.1, 1e-6, beta=0.0943), lattice_later=True)  # no ε1 of the range fits
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "ledger.sqlite3"))
    assert main(["publish", "adult", "--epsilon", "0.1", "--beta", "0.09", "--plan-only"]) == 0
    assert "beta = 0.09 " in " ".join(capsys.readouterr().out.split())
    assert main(["publish", "adult", "--epsilon", "0.1", "--beta", "0.0943", "--plan-only"]) != 0
