"""The α-β algorithm end to end: V ⊆ D always, duplicates, identifiers, declared domains, the wide
(m ≥ 2^64) path, reproducibility and the certificate; what must be public (the domain and a bound
on n) and that nothing else about the data reaches a public output."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.data import Attribute, AttributeType, Role, Schema, load
from crowdsafe.errors import ParameterError, SchemaError
from crowdsafe.perturb import perturb, prepare, run
from crowdsafe.perturb.alpha_beta import PerturbRequest
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest, plan_alpha_beta
from crowdsafe.randomness import Randomness

TARGET = dict(d=0.02, gamma=0.4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["p", "q", "r", None]), st.booleans()),
                  min_size=1, max_size=25),
    beta_share=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32),
)
def test_the_view_is_a_set_inside_the_domain(rows, beta_share, seed):
    frame = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.String, "c": pl.Boolean}, orient="row")
    table = prepare(load(frame), exploratory=True)
    domain = [table.domain.values[a].to_list() for a in ("a", "b", "c")]
    assert table.domain.size == math.prod(len(v) for v in domain)
    floor = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(**TARGET, alpha=0.5)).beta
    beta = floor + beta_share * (0.5 - floor) * 0.999
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(**TARGET, alpha=0.5, beta=beta))
    view = run(table, plan, Randomness(seed))
    published = view.frame.rows()
    assert len(set(published)) == len(published)  # a set
    assert set(published) <= set(itertools.product(*domain))  # never a tuple outside D
    assert view.frame.schema == frame.schema


def test_duplicates_collapse_or_are_refused():
    frame = pl.DataFrame({"a": [1, 1, 1, 2], "b": ["x", "x", "x", "y"]})
    table = prepare(load(frame), exploratory=True)
    assert (table.rows, table.n, table.duplicate_rows) == (4, 2, 2)
    with pytest.raises(ParameterError, match="some rows repeat") as refused:
        prepare(load(frame), duplicates="error", exploratory=True)
    assert "2" not in str(refused.value)  # how many rows repeat is a fact about the data
    with pytest.raises(ParameterError, match="collapse"):
        prepare(load(frame), duplicates="keep", exploratory=True)


def test_attributes_are_checked_and_identifiers_never_published():
    frame = pl.DataFrame({"id": [1, 2, 3], "a": [1, 2, 2], "b": ["x", "y", "x"]})
    data = load(frame, schema=Schema.of({"id": "numeric", "a": "numeric", "b": "categorical"}))
    data = data.with_roles(qi=["a", "b"])
    identified = load(frame)
    assert prepare(data, exploratory=True).domain.attributes == ["id", "a", "b"]  # no identifier declared
    schema = Schema((Attribute("id", Role.IDENTIFIER, AttributeType.NUMERIC),
                     Attribute("a", Role.QUASI_IDENTIFIER, AttributeType.NUMERIC),
                     Attribute("b", Role.QUASI_IDENTIFIER, AttributeType.CATEGORICAL)))
    with_id = load(frame, schema=schema)
    assert prepare(with_id, exploratory=True).domain.attributes == ["a", "b"]
    with pytest.raises(ParameterError, match="identifier"):
        prepare(with_id, ["id", "a"], exploratory=True)
    with pytest.raises(SchemaError, match="no column named 'zz'"):
        prepare(identified, ["zz"], exploratory=True)
    with pytest.raises(ParameterError, match="twice"):
        prepare(identified, ["a", "a"], exploratory=True)


def test_declared_domains_replace_the_active_ones():
    frame = pl.DataFrame({"age": [30, 31, 45], "sex": ["F", "M", "F"]})
    table = prepare(load(frame, missing="drop"), domains={"age": range(18, 100)}, exploratory=True)
    assert table.domain.sizes == [82, 2] and table.domain.size == 164
    assert table.domain.active  # sex still uses its active domain (exploratory)
    assert table.sources == {"age": "declared", "sex": "data (active domain)"}
    declared = prepare(load(frame, missing="drop"), domains={"age": range(18, 100), "sex": ["F", "M", "X"]},
                       max_rows=10)
    assert not declared.domain.active and declared.domain.size == 82 * 3
    # the default policy keeps missing values: null is one more value of each public domain
    kept = prepare(load(frame), domains={"age": range(18, 100), "sex": ["F", "M", "X"]}, max_rows=10)
    assert kept.domain.sizes == [83, 4] and kept.domain.values["sex"].to_list() == ["F", "M", "X", None]
    # a value outside the public domain is left out of I, not refused, and counted for the custodian
    narrow = prepare(load(frame), domains={"age": range(18, 40), "sex": ["F", "M"]}, max_rows=10)
    assert (narrow.rows, narrow.outside, narrow.n, narrow.duplicate_rows) == (3, 1, 2, 0)
    with pytest.raises(ParameterError, match="not among the attributes"):
        prepare(load(frame), ["age"], domains={"sex": ["F"]}, max_rows=10)


def test_wide_domains_use_per_attribute_draws():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({f"v{i}": rng.integers(0, 10**6, 300) for i in range(4)})  # m ~ 300^4 < 2^64
    wide = pl.concat([frame, frame.select((pl.all() + 1).name.suffix("_w"))], how="horizontal")
    table = prepare(load(wide), exploratory=True)
    assert table.domain.size >= 2**64 and table.index is None
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(c=2, gamma=0.5))
    view = run(table, plan, Randomness(31))
    assert view.frame.columns == wide.columns
    rows = view.frame.rows()
    assert len(set(rows)) == len(rows)
    for name in wide.columns:
        assert set(view.frame.get_column(name).to_list()) <= set(wide.get_column(name).to_list())
    expected = plan.expected_view
    assert abs(view.rows - expected) < 5 * math.sqrt(expected)
    kept = view.frame.join(wide.unique(), on=wide.columns, how="semi").height
    assert abs(kept - 150) < 5 * math.sqrt(75)


def small_frame(rows: int = 40) -> pl.DataFrame:
    rng = np.random.default_rng(7)
    return pl.DataFrame({"a": rng.integers(0, 8, rows), "b": rng.integers(0, 3, rows)})


PUBLIC = dict(domains={"a": list(range(10)), "b": [0, 1, 2]}, max_rows=60)  # m = 30, N = 60
VIEW_TARGET = AlphaBetaPlanRequest(gamma=0.3, c=0.2)
CERTIFIED = PerturbRequest(VIEW_TARGET, **PUBLIC)


def test_seeded_runs_reproduce_and_are_not_fit_for_release():
    frame = small_frame()
    first = perturb(load(frame), CERTIFIED, randomness=5)
    second = perturb(load(frame), CERTIFIED, randomness=5)
    assert first.view.frame.equals(second.view.frame)
    assert not first.view.certificate.fit_for_release
    declared = load(frame, schema=Schema.of({"a": "integer", "b": "integer"}))
    secure = perturb(declared, CERTIFIED)
    assert secure.view.certificate.fit_for_release and not secure.view.certificate.seeded
    # without a declared schema the types were inferred: the view is not fit for release either
    inferred = perturb(load(frame), CERTIFIED).view.certificate
    assert not inferred.fit_for_release and any("schema inferred" in r for r in inferred.unfit_reasons)


def test_the_certificate_states_the_guarantee_and_its_limits():
    frame = small_frame()
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, c=0.2), domains={"a": list(range(20)), "b": [0, 1, 2]},
                             max_rows=50)  # 40 rows, N = 50 <= m = 60
    result = perturb(load(frame, missing="drop"), request, randomness=6)  # no missing value in the domains
    cert = result.view.certificate
    assert cert.guarantee == "d-gamma" and cert.delta == 0.0 and cert.neighbours == "add-remove"
    params = cert.parameters
    # the paper's formulas, written here: d = c N/m, alpha = 1/2, beta = (d/gamma)((1-gamma)/(1-d)) alpha,
    # epsilon = max(ln(alpha/beta), ln((1-beta)/(1-alpha)))
    d = 0.2 * 50 / 60
    beta = (d / 0.5) * ((1 - 0.5) / (1 - d)) * 0.5
    assert params["d"] == pytest.approx(d, rel=1e-12) and params["gamma"] == 0.5
    assert params["alpha"] == 0.5 and params["beta"] == pytest.approx(beta, rel=1e-9) and params["beta"] >= beta
    assert cert.epsilon == pytest.approx(max(math.log(0.5 / beta), math.log((1 - beta) / 0.5)), rel=1e-9)
    # Bayes by hand: a tuple seen in the view has posterior at most gamma for a prior of d
    assert 0.5 * d / (0.5 * d + params["beta"] * (1 - d)) <= 0.5 + 1e-12
    assert params["posterior_present_max"] == pytest.approx(0.5, rel=1e-9)
    assert params["max_rows"] == 50 and params["m"] == 60 and "n" not in params
    assert params["domain"]["a"]["values"] == list(range(20))
    assert params["domain_sources"] == {"a": "declared", "b": "declared"}
    assert params["view_rows"] == result.view.rows
    text = " ".join(cert.assumptions)
    assert "tuple-independent" in text and "correlations" in text and "no guarantee" in text
    assert "fixed before the data was read" in text and "max_rows" in text
    public = json.dumps(cert.to_dict()) + json.dumps(result.as_dict())
    assert "kept" not in json.dumps(params) and "inserted" not in json.dumps(params)
    assert "fingerprint" not in json.dumps(params) and not getattr(cert, "input_fingerprint", None)
    assert "duplicate_rows_collapsed" not in public and "distinct_tuples" not in public
    report = result.custodian_report()
    assert report["custodian_only"].startswith("CUSTODIAN ONLY")
    assert (report["rows"], report["distinct_tuples"]) == (40, frame.unique().height)
    assert report["duplicate_rows_collapsed"] == 40 - frame.unique().height and report["rows_outside_domain"] == 0
    shown_d, rest = cert.summary()[1:].split(", ", 1)
    assert rest.startswith("0.5)-private (as unbounded DP: epsilon = ")
    # d, the prior the attacker is assumed to stay below, is never shown larger than it is (3 digits)
    assert float(shown_d) <= params["d"] < float(shown_d) + 10 ** (math.floor(math.log10(params["d"])) - 2)


def test_a_bound_above_m_is_capped_at_m():
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.3, d=0.05), **PUBLIC)  # N = 60 > m = 30
    result = perturb(load(small_frame(), missing="drop"), request, randomness=1)
    assert result.plan.n == 30 and result.view.certificate.parameters["max_rows"] == 30


def test_a_certified_run_refuses_a_domain_taken_from_the_data():
    frame = small_frame()
    with pytest.raises(ParameterError) as refused:
        perturb(load(frame), PerturbRequest(VIEW_TARGET, max_rows=60), randomness=1)
    message = str(refused.value)
    assert "no public domain for 'a', 'b'" in message
    assert "domains={attribute: [values]}" in message and "exploratory=True" in message
    with pytest.raises(ParameterError, match="no public domain for 'b'"):
        perturb(load(frame), PerturbRequest(VIEW_TARGET, max_rows=60, domains={"a": range(10)}), randomness=1)
    with pytest.raises(ParameterError, match="max_rows=N"):
        perturb(load(frame), PerturbRequest(VIEW_TARGET, domains=PUBLIC["domains"]), randomness=1)
    with pytest.raises(ParameterError, match="whole number"):
        perturb(load(frame), PerturbRequest(VIEW_TARGET, domains=PUBLIC["domains"], max_rows=0), randomness=1)


def test_an_exploratory_run_is_certified_no_formal_guarantee():
    frame = small_frame()
    result = perturb(load(frame), PerturbRequest(VIEW_TARGET, exploratory=True, domains={"a": range(10)}), randomness=1)
    cert = result.view.certificate
    assert cert.guarantee == "none" and cert.epsilon is None and not cert.has_guarantee
    assert "exploratory run" in cert.reason and "'b' was taken from the data" in cert.reason
    assert "n was taken from the data" in cert.reason
    assert cert.summary().startswith("no formal guarantee: exploratory run")
    unseeded = perturb(load(frame), PerturbRequest(VIEW_TARGET, exploratory=True))
    assert unseeded.as_dict()["fit_for_release"] is False
    assert cert.parameters["domain_sources"] == {"a": "declared", "b": "data (active domain)"}
    # with every domain public and a bound, the flag changes nothing: the run is certified
    certified = perturb(load(frame), PerturbRequest(VIEW_TARGET, exploratory=True, **PUBLIC), randomness=1)
    assert certified.view.certificate.guarantee == "d-gamma"


def test_data_above_the_bound_is_refused_without_telling_by_how_much():
    messages = set()
    for rows in (41, 55):
        with pytest.raises(ParameterError) as refused:
            perturb(load(small_frame(rows)), PerturbRequest(VIEW_TARGET, domains=PUBLIC["domains"], max_rows=40),
                    randomness=1)
        messages.add(str(refused.value))
    (message,) = messages  # the same words whatever the excess
    assert "more than max_rows=40 rows" in message and "nothing was perturbed or written" in message
    assert "41" not in message and "55" not in message
    at_the_bound = perturb(load(small_frame(40)), PerturbRequest(VIEW_TARGET, domains=PUBLIC["domains"], max_rows=40),
                           randomness=1)
    assert at_the_bound.view.certificate.guarantee == "d-gamma"


def test_neighbouring_tables_give_the_same_public_fields_apart_from_the_view():
    frame = small_frame(60)
    runs = [perturb(load(f), CERTIFIED, randomness=11) for f in (frame, frame.slice(1))]
    public = []
    for result in runs:
        cert = result.view.certificate.to_dict()
        cert["parameters"].pop("view_rows")  # the view's own size: a DP output
        summary = result.as_dict()
        summary.pop("view_rows")
        public.append((cert, summary, result.plan.as_dict()))
    assert public[0] == public[1]
    assert runs[0].custodian_report()["rows"] == 60 and runs[1].custodian_report()["rows"] == 59


def test_domains_from_the_schema_order_and_hierarchies(tmp_path):
    from crowdsafe.datasets import adult

    frame = pl.DataFrame({"edu": ["low", "high", "low"], "sex": ["F", "M", "F"], "age": [30, 41, 30]})
    (tmp_path / "sex.csv").write_text("F;*\nM;*\nX;*\n")
    toml = tmp_path / "schema.toml"
    toml.write_text(
        '[attributes.edu]\ntype = "ordinal"\norder = ["low", "mid", "high"]\n'
        '[attributes.sex]\ntype = "categorical"\nhierarchy = "sex.csv"\n'
        '[attributes.age]\ntype = "numeric"\nhierarchy = { widths = [10] }\n'
    )
    data = load(frame, schema=Schema.from_toml(toml))
    table = prepare(data, ["edu", "sex"], max_rows=10)
    assert table.sources == {"edu": "schema order", "sex": "hierarchy leaves"}
    assert table.domain.sizes == [4, 4]  # missing values kept: null is a value of each
    dropped = prepare(load(frame, schema=Schema.from_toml(toml), missing="drop"), ["edu", "sex"], max_rows=10)
    assert dropped.domain.sizes == [3, 3]
    # a hierarchy the schema builds over the column's own values is not public
    with pytest.raises(ParameterError, match="no public domain for 'age'"):
        prepare(data, max_rows=10)
    # Adult's hierarchies are attached in Python from fixed value lists: public
    adult_table = prepare(adult("train", drop_missing=True),
                          ["sex", "race"], max_rows=40_000)
    assert adult_table.sources == {"sex": "hierarchy leaves", "race": "hierarchy leaves"}


SPECS = {  # a schema builder -> whether its leaves are a public domain (declared, not observed)
    'hierarchy = { groups = [{ low = ["a", "b"], high = ["c", "d"] }] }': True,
    'hierarchy = { fanout = [2], order = ["a", "b", "c", "d"] }': True,
    'hierarchy = { fanout = [2] }': False,
    'hierarchy = { mask = 1 }': False,
    'hierarchy = { flat = true }': False,
    "": False,  # no hierarchy: the flat one over the values present
}


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_a_hierarchy_is_a_public_domain_exactly_when_it_is_declared(spec, tmp_path):
    """The provenance is the hierarchy's type (``observed``), whatever the specification: named
    groups and fanout over a declared order are public; builders over the values present are not."""
    frame = pl.DataFrame({"v": ["a", "b", "a"]})  # c and d are declared, never present
    toml = tmp_path / "schema.toml"
    toml.write_text(f'[attributes.v]\ntype = "categorical"\n{spec}\n')
    data = load(frame, schema=Schema.from_toml(toml), missing="drop")
    assert data.hierarchies.get("v") is None or data.hierarchies["v"].observed is not SPECS[spec]
    if SPECS[spec]:
        table = prepare(data, max_rows=10)
        assert table.sources == {"v": "hierarchy leaves"}
        assert table.domain.values["v"].to_list() == ["a", "b", "c", "d"]
    else:
        with pytest.raises(ParameterError, match="no public domain for 'v'"):
            prepare(data, max_rows=10)


def test_the_missing_value_is_in_a_domain_by_the_policy_whatever_the_data_holds(tmp_path):
    """Declared lists, schema orders and hierarchy leaves all hold null exactly when the policy
    keeps missing values: with or without a missing value in the data, the same domain."""
    (tmp_path / "v.csv").write_text("a;*\nb;*\n")
    toml = tmp_path / "schema.toml"
    toml.write_text('[attributes.v]\ntype = "categorical"\nhierarchy = "v.csv"\n'
                    '[attributes.o]\ntype = "ordinal"\norder = ["lo", "hi"]\n'
                    '[attributes.w]\ntype = "numeric"\n')
    schema = Schema.from_toml(toml)
    full = pl.DataFrame({"v": ["a", "b"], "o": ["lo", "hi"], "w": [1, 2]})
    holes = pl.DataFrame({"v": ["a", None, "b"], "o": [None, "hi", "lo"], "w": [1, None, 2]})
    domains = {"w": [1, 2]}
    for missing, expected in (("keep", {"v": ["a", "b", None], "o": ["lo", "hi", None], "w": [1, 2, None]}),
                              ("drop", {"v": ["a", "b"], "o": ["lo", "hi"], "w": [1, 2]})):
        for frame in (full, holes):
            data = load(frame, schema=schema, missing=missing)
            if missing == "keep" and frame is holes:
                assert data.hierarchies["v"].leaves.null_count() == 1  # the pipeline's leaf, there or not
            table = prepare(data, domains=domains, max_rows=10)
            assert {a: table.domain.values[a].to_list() for a in ("v", "o", "w")} == expected
    # a declared null is taken out when no row can hold one
    dropped = prepare(load(full, schema=schema, missing="drop"), domains={"w": [1, None, 2]}, max_rows=10)
    assert dropped.domain.values["w"].to_list() == [1, 2]


def test_the_plan_alone_does_not_read_the_data():
    from crowdsafe.perturb.alpha_beta import plan_public

    plans = [plan_public(load(small_frame(rows), missing="drop"), CERTIFIED).as_dict() for rows in (20, 50)]
    assert plans[0] == plans[1] and plans[0]["n_bound"] == 30


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 70_000), min_size=1, max_size=5), seed=st.integers(0, 2**32))
def test_mixed_radix_indices_round_trip(sizes, seed):
    from crowdsafe.perturb import TupleDomain

    domain = TupleDomain({f"a{i}": pl.Series(range(size)) for i, size in enumerate(sizes)})
    if not domain.indexable:
        return
    rng = np.random.default_rng(seed)
    codes = {name: rng.integers(0, size, 50).astype(np.uint32) for name, size in zip(domain.attributes, sizes)}
    index = domain.index(codes)
    assert int(index.max()) < domain.size
    back = domain.codes_of(index)
    assert all(np.array_equal(back[name], codes[name]) for name in domain.attributes)


def test_a_ledger_is_charged_the_equivalent_epsilon_under_the_keyed_identity(tmp_path):
    from crowdsafe import api
    from crowdsafe.errors import BudgetExceeded
    from crowdsafe.perturb import plan_public
    from crowdsafe.privacy.ledger import Ledger

    frame = small_frame()
    room = 2.5 * plan_public(load(frame), CERTIFIED).epsilon  # two views fit, not three
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        with pytest.raises(BudgetExceeded, match="no privacy budget"):
            api.perturb(frame, gamma=0.3, c=0.2, seed=1, ledger=book, **PUBLIC)
        first = api.perturb(frame, gamma=0.3, c=0.2, seed=1, ledger=book, budget=(room, 0.0), name="people", **PUBLIC)
        epsilon = first.view.certificate.epsilon
        assert first.ledger["charged"]["epsilon"] == pytest.approx(epsilon)
        assert first.ledger["spent"]["epsilon"] == pytest.approx(epsilon) and first.ledger["dataset"] == "people"
        budget = book.budget(load(frame).fingerprint(key=book.identity_key))
        assert budget is not None and budget.name == "people"  # the keyed, row-order-invariant identity
        # the same rows in another order are the same dataset: a second view spends the budget again
        second = api.perturb(frame.reverse(), gamma=0.3, c=0.2, seed=2, ledger=book, **PUBLIC)
        assert second.ledger["spent"]["epsilon"] == pytest.approx(2 * epsilon)
        with pytest.raises(BudgetExceeded, match="refused"):
            api.perturb(frame, gamma=0.3, c=0.2, seed=3, ledger=book, **PUBLIC)
        with pytest.raises(ParameterError, match="exploratory run carries no guarantee"):
            api.perturb(frame, gamma=0.3, c=0.2, seed=3, ledger=book, exploratory=True)
        assert book.budget("people").entries == 2  # neither refusal was charged
        entry = book.entries("people")[0].as_dict()
        assert entry["outcome"]["rows"] == 40  # the custodian-only facts go to the ledger, not the view
        assert "fingerprint" not in json.dumps(first.view.certificate.to_dict()["parameters"])


def test_a_c_that_makes_d_reach_1_says_what_n_and_m_are():
    """n is the bound on the rows (at most the domain's m tuples: a set holds no more), so
    ``max_rows=500`` over 12 tuples plans with n = 12; the refusal says so."""
    with pytest.raises(ParameterError, match=r"n = 12, the bound on the rows taken for n, at most the domain's "
                                             r"m = 12 tuples\): use a smaller c \(c < m/n = 1\)"):
        plan_alpha_beta(12, 12, AlphaBetaPlanRequest(gamma=0.9, c=1.0))
