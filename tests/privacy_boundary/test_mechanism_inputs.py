"""Issue 32: the mechanism is built from public inputs only, so it is built from the same inputs on
D and on D + one row.

test_neighbours.py compares what leaves a run; this file compares what goes *into* its
mechanisms, as the real run built them (tests/mechanism_spy.py wraps the driver, the selection,
the keyed tables and the entropy scorer): the plan (ε, δ, ε1 and the ε split, k, β, the number of
candidates), a fixed scheme's levels, the candidate heights, every node's penalty (by label),
the score's units Δ_int and key denominator, the entropy objective's leaf counts, and whether the
run was refused before the charge, and with which message. Every case runs ``api.publish`` (a
few the command line) with the same seed and a fresh ledger on each side, for every objective and
a fixed scheme, on the neighbouring tables of tests/neighbour_tables.py: a schema-less CSV, a
table with a schema (a hierarchy file, a ``widths`` builder, columns without a hierarchy), a table
whose hierarchies are all declared (``entropy`` runs there only; elsewhere it must be refused
before the charge, identically on both sides), and one whose keys pass 62 bits with one more
value. The Spark engine runs the same comparison in tests/engines/test_conformance.py.

The last tests put back, one at a time, each piece of the code before the fix
(tests/old_mechanism_inputs.py) and show that the comparison then fails on the pair that piece
leaked on.
"""

from __future__ import annotations

import pytest

from mechanism_spy import Inputs, input_differences
from neighbour_tables import OBJECTIVES, PAIR, TABLES, Pair, run_pair
from old_mechanism_inputs import before_the_fix, penalties_counting_leaves


def check_the_case_ran(pair: Pair, objective: str, d: Inputs, d1: Inputs) -> None:
    """Each side ran as the case intends, so an identical pair of records is evidence: refused
    before the charge exactly where it must be, the selection's tables built otherwise, and the
    pair's row visible where it must be (a node for a new value of an observed hierarchy, none
    for a value outside a declared one)."""
    table = TABLES[pair.table]
    for inputs in (d, d1):
        if table.refused is not None:  # refused from the schema alone, whatever the objective
            assert inputs.refused is not None and table.refused in inputs.refused, inputs.refused
            assert inputs.charged is False and inputs.tables == [] and inputs.plan is None
            continue
        if objective in ("entropy", "marginals") and table.entropy_refused:
            assert inputs.refused is not None and f"{objective} objective needs a declared hierarchy" in inputs.refused
            assert inputs.charged is False and inputs.tables == [] and inputs.plan is None
            continue
        assert inputs.refused is None and inputs.charged is True
        if objective.startswith("scheme:"):
            assert inputs.fixed_levels is not None and inputs.tables == [] and inputs.selections == []
            continue
        assert len(inputs.selections) == 1 and inputs.tables
        assert (len(inputs.entropy) == 1) == (objective == "entropy")
    if d.tables:
        table_d, table_d1 = d.tables[-1], d1.tables[-1]
        j = table_d["columns"].index(pair.column)
        leaves, leaves_d1 = table_d["penalties"][j][0].keys(), table_d1["penalties"][j][0].keys()
        if pair.observed:
            assert leaves_d1 - leaves == {str(pair.value)}
        else:
            assert leaves_d1 == leaves and "Atlantis" not in leaves
    keyed = [[c for c in inputs.custodian if "key_bits" in c] for inputs in (d, d1)]
    if pair.table == "wide" and keyed[0]:  # the pair crosses the width at which the old code refused
        # (the custodian record also holds the noisy count, when the plan's selection drew one)
        assert [c[0]["key_bits"] for c in keyed] == [62, 63]
        assert [c[0]["wide_keys"] for c in keyed] == [False, True]


@pytest.mark.slow
@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("pair_id", list(PAIR))
def test_the_mechanism_is_built_from_the_same_inputs_on_neighbours(pair_id, objective, tmp_path, monkeypatch,
                                                                   mechanism_spy):
    pair = PAIR[pair_id]
    extra = {"beta": 0.01} if pair.table == "wide" else {}  # a small sample: the scoring stays cheap
    d, d1 = run_pair(mechanism_spy, pair, objective, tmp_path, monkeypatch, **extra)
    check_the_case_ran(pair, objective, d, d1)
    assert input_differences(d, d1) == []


@pytest.mark.parametrize(("pair_id", "objective"), [
    ("schemaless-constant-made-non-constant", "retained"),
    ("schema-value-outside-declared-hierarchy", "classification"),
    ("schemaless-new-value", "entropy"),
])
def test_the_same_through_the_command_line(pair_id, objective, tmp_path, monkeypatch, mechanism_spy):
    pair = PAIR[pair_id]
    d, d1 = run_pair(mechanism_spy, pair, objective, tmp_path, monkeypatch, cli=True)
    check_the_case_ran(pair, objective, d, d1)
    assert input_differences(d, d1) == []


# -- the suite fails on the code before the fix -----------------------------------------------------


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_comparison_fails_on_penalties_that_count_an_observed_hierarchys_leaves(tmp_path, monkeypatch,
                                                                                    mechanism_spy):
    """With the missing-value leaf in place, a flat hierarchy's ``*`` covers at least two leaves,
    so counting leaves gives it 1 on both sides of the flat constant pair; a ``widths`` builder's
    band is where counting leaves still leaks: [40, 50) covers one value (range 0) on D and
    40 and 45 (the whole range) on D'. So does a column missing in every row of D (one leaf, the
    missing value, so ``*`` costs 0; 1 once a row holds a value)."""
    penalties_counting_leaves(monkeypatch)
    pairs = ("schema-constant-widths-made-non-constant", "schemaless-missing-column-given-a-value",
             "schemaless-constant-made-non-constant")
    (d, d1), (m, m1), (f, f1) = (run_pair(mechanism_spy, PAIR[name], "retained", tmp_path / name, monkeypatch)
                                 for name in pairs)
    found = input_differences(d, d1)
    assert any("'hours' level 1: node '[40, 50)' costs 0 != " in line for line in found), found
    found = input_differences(m, m1)
    assert any("'note' level 1: node '*' costs 0 != " in line for line in found), found
    assert input_differences(f, f1) == []  # the missing-value leaf alone closes this one


def test_the_comparison_fails_on_the_code_before_the_fix_for_a_flat_constant_column(tmp_path, monkeypatch,
                                                                                    mechanism_spy):
    """Both pieces put back (leaves counted, no missing-value leaf): the issue's case, a column
    without a hierarchy constant in D, whose ``*`` costs 0 on D and 1 on D'."""
    before_the_fix(monkeypatch)
    d, d1 = run_pair(mechanism_spy, PAIR["schemaless-constant-made-non-constant"], "retained", tmp_path, monkeypatch)
    found = input_differences(d, d1)
    assert any("'flag' level 1: node '*' costs 0 != " in line for line in found), found


def test_the_comparison_fails_when_a_value_outside_a_declared_hierarchy_stops_the_run(tmp_path, monkeypatch,
                                                                                      mechanism_spy):
    """The values checked against the declared hierarchies before the charge, as the data layer
    did at load: D' is refused with a message naming the value, D publishes."""
    from crowdsafe.engines.polars_engine import PolarsEngine

    prepare = PolarsEngine.prepare

    def checking_values(engine, table, publish_plan, name):
        table.validate_domains()
        return prepare(engine, table, publish_plan, name)

    monkeypatch.setattr(PolarsEngine, "prepare", checking_values)
    d, d1 = run_pair(mechanism_spy, PAIR["schema-value-outside-declared-hierarchy"], "retained", tmp_path, monkeypatch)
    assert d.refused is None and d1.refused is not None and "'Atlantis'" in d1.refused and d1.charged is False
    assert any(line.startswith("refused:") for line in input_differences(d, d1))


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_comparison_fails_when_wide_keys_are_refused(tmp_path, monkeypatch, mechanism_spy):
    """The old 'too many quasi-identifier values' refusal (keys past 62 bits), before the charge."""
    from crowdsafe.engines.polars_engine import PolarsEngine
    from crowdsafe.errors import ParameterError
    from crowdsafe.selection.tables import KEY_BITS, _key_bits

    prepare = PolarsEngine.prepare

    def refusing(engine, table, publish_plan, name):
        prepared, fixed = prepare(engine, table, publish_plan, name)
        if sum(_key_bits([prepared.hierarchies[c] for c in prepared.columns])) > KEY_BITS:
            raise ParameterError("too many quasi-identifier values to score the lattice")
        return prepared, fixed

    monkeypatch.setattr(PolarsEngine, "prepare", refusing)
    d, d1 = run_pair(mechanism_spy, PAIR["wide-65537th-distinct-value"], "retained", tmp_path, monkeypatch, beta=0.01)
    assert d.refused is None and d1.refused is not None and d1.charged is False
    assert any(line.startswith("refused:") for line in input_differences(d, d1))


def test_the_comparison_fails_when_a_mask_takes_its_depth_from_the_data(tmp_path, monkeypatch, mechanism_spy):
    """``{"mask": None}`` let through as the code before the fix did (the depth the longest value
    present): the zip code 1301999 makes the hierarchy three levels higher on D', so the
    candidate heights and the plan (ε1, β) differ; with the fix both sides are refused alike."""
    from crowdsafe.data import builder_checks, builders

    monkeypatch.setattr(builders, "mask_depth", lambda attribute, levels: levels)
    monkeypatch.setattr(builder_checks, "mask_depth", lambda attribute, levels: levels)
    d, d1 = run_pair(mechanism_spy, PAIR["mask-unbounded-longer-masked-value"], "retained", tmp_path, monkeypatch)
    assert d.refused is None and d1.refused is None
    found = input_differences(d, d1)
    assert any(line.startswith("plan:") for line in found), found
    assert any(line.startswith(("selections:", "tables:")) for line in found), found
