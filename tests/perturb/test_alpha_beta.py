"""The α-β algorithm end to end: V ⊆ D always, duplicates, identifiers, declared domains, the wide
(m ≥ 2^64) path, reproducibility and the certificate."""

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
from crowdsafe.errors import InputError, ParameterError, SchemaError
from crowdsafe.perturb import perturb, prepare, run
from crowdsafe.privacy.dgamma import plan_alpha_beta
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
    table = prepare(load(frame))
    domain = [table.domain.values[a].to_list() for a in ("a", "b", "c")]
    assert table.domain.size == math.prod(len(v) for v in domain)
    floor = plan_alpha_beta(table.n, table.domain.size, **TARGET, alpha=0.5).beta
    beta = floor + beta_share * (0.5 - floor) * 0.999
    plan = plan_alpha_beta(table.n, table.domain.size, **TARGET, alpha=0.5, beta=beta)
    view = run(table, plan, Randomness(seed))
    published = view.frame.rows()
    assert len(set(published)) == len(published)  # a set
    assert set(published) <= set(itertools.product(*domain))  # never a tuple outside D
    assert view.frame.schema == frame.schema


def test_duplicates_collapse_or_are_refused():
    frame = pl.DataFrame({"a": [1, 1, 1, 2], "b": ["x", "x", "x", "y"]})
    table = prepare(load(frame))
    assert (table.rows, table.n, table.duplicate_rows) == (4, 2, 2)
    with pytest.raises(ParameterError, match="2 rows repeat"):
        prepare(load(frame), duplicates="error")
    with pytest.raises(ParameterError, match="collapse"):
        prepare(load(frame), duplicates="keep")


def test_attributes_are_checked_and_identifiers_never_published():
    frame = pl.DataFrame({"id": [1, 2, 3], "a": [1, 2, 2], "b": ["x", "y", "x"]})
    data = load(frame, schema=Schema.of({"id": "numeric", "a": "numeric", "b": "categorical"}))
    data = data.with_roles(qi=["a", "b"])
    identified = load(frame)
    assert prepare(data).domain.attributes == ["id", "a", "b"]  # no identifier declared
    from crowdsafe.data import Attribute, AttributeType, Role
    schema = Schema((Attribute("id", Role.IDENTIFIER, AttributeType.NUMERIC),
                     Attribute("a", Role.QUASI_IDENTIFIER, AttributeType.NUMERIC),
                     Attribute("b", Role.QUASI_IDENTIFIER, AttributeType.CATEGORICAL)))
    with_id = load(frame, schema=schema)
    assert prepare(with_id).domain.attributes == ["a", "b"]
    with pytest.raises(ParameterError, match="identifier"):
        prepare(with_id, ["id", "a"])
    with pytest.raises(SchemaError, match="no column named 'zz'"):
        prepare(identified, ["zz"])
    with pytest.raises(ParameterError, match="twice"):
        prepare(identified, ["a", "a"])


def test_declared_domains_replace_the_active_ones():
    frame = pl.DataFrame({"age": [30, 31, 45], "sex": ["F", "M", "F"]})
    table = prepare(load(frame), domains={"age": range(18, 100)})
    assert table.domain.sizes == [82, 2] and table.domain.size == 164
    assert table.domain.active  # sex still uses its active domain
    declared = prepare(load(frame), domains={"age": range(18, 100), "sex": ["F", "M", "X"]})
    assert not declared.domain.active and declared.domain.size == 82 * 3
    with pytest.raises(InputError, match="outside the published domain"):
        prepare(load(frame), domains={"age": range(18, 40)})
    with pytest.raises(ParameterError, match="not among the attributes"):
        prepare(load(frame), ["age"], domains={"sex": ["F"]})


def test_wide_domains_use_per_attribute_draws():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({f"v{i}": rng.integers(0, 10**6, 300) for i in range(4)})  # m ~ 300^4 < 2^64
    wide = pl.concat([frame, frame.select((pl.all() + 1).name.suffix("_w"))], how="horizontal")
    table = prepare(load(wide))
    assert table.domain.size >= 2**64 and table.index is None
    plan = plan_alpha_beta(table.n, table.domain.size, c=2, gamma=0.5)
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


def test_seeded_runs_reproduce_and_are_not_fit_for_release():
    frame = small_frame()
    first = perturb(load(frame), gamma=0.3, c=0.2, randomness=5)
    second = perturb(load(frame), gamma=0.3, c=0.2, randomness=5)
    assert first.view.frame.equals(second.view.frame)
    assert not first.view.certificate.fit_for_release
    secure = perturb(load(frame), gamma=0.3, c=0.2)
    assert secure.view.certificate.fit_for_release and not secure.view.certificate.seeded


def test_the_certificate_states_the_guarantee_and_its_limits():
    frame = small_frame()
    n = frame.unique().height
    result = perturb(load(frame), gamma=0.3, c=0.2, randomness=6)
    cert = result.view.certificate
    plan = result.plan
    assert cert.guarantee == "d-gamma" and cert.delta == 0.0 and cert.neighbours == "add-remove"
    assert cert.epsilon == pytest.approx(max(math.log(plan.alpha / plan.beta),
                                             math.log((1 - plan.beta) / (1 - plan.alpha))))
    params = cert.parameters
    assert params["d"] == pytest.approx(0.2 * n / 24) and params["gamma"] == 0.3
    assert params["alpha"] == plan.alpha and params["beta"] == plan.beta
    assert params["n"] == plan.n == n and params["m"] == 24
    assert params["domain"]["a"]["values"] == list(range(8))
    assert params["view_rows"] == result.view.rows
    text = " ".join(cert.assumptions)
    assert "tuple-independent" in text and "correlations" in text and "no guarantee" in text
    assert "active domain" in text
    assert "kept" not in json.dumps(params) and "inserted" not in json.dumps(params)
    assert cert.input_fingerprint == load(frame).fingerprint()
    assert result.duplicate_rows == 40 - n
    assert cert.summary().startswith(f"({params['d']:.3g}, 0.3)-private (as unbounded DP: epsilon = ")


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 70_000), min_size=1, max_size=5), seed=st.integers(0, 2**32))
def test_mixed_radix_indices_round_trip(sizes, seed):
    from crowdsafe.perturb import Domain

    domain = Domain({f"a{i}": pl.Series(range(size)) for i, size in enumerate(sizes)})
    if not domain.indexable:
        return
    rng = np.random.default_rng(seed)
    codes = {name: rng.integers(0, size, 50).astype(np.uint32) for name, size in zip(domain.attributes, sizes)}
    index = domain.index(codes)
    assert int(index.max()) < domain.size
    back = domain.codes_of(index)
    assert all(np.array_equal(back[name], codes[name]) for name in domain.attributes)
