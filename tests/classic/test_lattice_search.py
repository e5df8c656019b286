"""The lattice searches: the optimal search against brute force, roll-ups against the data
layer, the greedy heuristic, and global recodings applied to other tables (a sample)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import tables

from crowdsafe.anonymize import GeneralizationScheme, apply
from crowdsafe.anonymize.constraints import sensitive_constraints
from crowdsafe.classic import anonymize_dataset, lattice_search
from crowdsafe.classic.lattice_search import _Problem, greedy_search
from crowdsafe.data import Dataset, frequency_table
from crowdsafe.datasets import adult
from crowdsafe.errors import ParameterError
from crowdsafe.metrics import information_loss

SMALL_QIS = ["age", "education", "marital-status", "sex"]


@pytest.fixture(scope="module")
def small_adult():
    data = adult(drop_missing=True)
    return data.with_frame(data.frame.head(3000)).with_roles(qi=SMALL_QIS, sensitive=["income"])


#: The brute force's measured nodes of a table, per (k, l, t): Apply and the measured loss depend
#: on neither the suppression limit nor the metric, so the tests on the same table and k share
#: them (each entry keeps its table, compared by identity, so an id is never reused).
_NODES: dict[tuple, tuple[Dataset, list]] = {}


def _measured_nodes(data, k, l, t) -> list:
    """Every node: Apply the scheme, the rows it suppresses, its release, its measured loss (once
    a test needs it: a node over the limit is never measured)."""
    key = (id(data), k, l, t)
    if key in _NODES and _NODES[key][0] is data:
        return _NODES[key][1]
    columns = data.quasi_identifiers
    constraints = sensitive_constraints(data, "income" if "income" in data.columns else "outcome", l=l, t=t)
    nodes = []
    for levels in itertools.product(*[range(data.hierarchies[c].height + 1) for c in columns]):
        scheme = GeneralizationScheme(dict(zip(columns, levels)), {c: data.hierarchies[c] for c in columns})
        applied = apply(data, scheme, k, constraints=constraints)
        nodes.append([levels, applied.rows_suppressed, applied.frame, None])  # None: not measured yet
    _NODES[key] = (data, nodes)
    return nodes


def brute_force(data, k, limit=0.0, metric="gcp", l=None, t=None):
    """Every node: Apply the scheme, check the limit, measure the release's loss."""
    losses = {}
    for node in _measured_nodes(data, k, l, t):
        levels, suppressed, frame, measured = node
        if suppressed > limit * data.n_rows:
            continue
        if measured is None:
            node[3] = measured = information_loss(data, frame, qi=data.quasi_identifiers, k=k,
                                                  input_rows=data.n_rows)
        losses[levels] = measured.loss(metric)
    return losses


def assert_same_optimum(data, k, limit=0.0, metric="gcp", l=None, t=None):
    losses = brute_force(data, k, limit, metric, l, t)
    sensitive = "income" if "income" in data.columns else "outcome"
    constraints = sensitive_constraints(data, sensitive, l=l, t=t)
    if not losses:
        with pytest.raises(ParameterError):
            lattice_search(data, k, suppression_limit=limit, metric=metric, constraints=constraints, search="optimal")
        return None
    _, result = lattice_search(data, k, suppression_limit=limit, metric=metric, constraints=constraints,
                               search="optimal")
    best = min(losses.values())
    assert result.loss == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert losses[result.levels] == pytest.approx(best, rel=1e-9, abs=1e-12)
    return result


@pytest.mark.slow
@pytest.mark.parametrize("k, limit", [(5, 0.0), (20, 0.0), (5, 0.02), (20, 0.05)])
def test_optimum_equals_brute_force_for_gcp(small_adult, k, limit):
    result = assert_same_optimum(small_adult, k, limit)
    assert result.evaluated < result.nodes  # the search does not evaluate every node


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["discernibility", "precision", "height"])
def test_optimum_equals_brute_force_for_other_losses(small_adult, metric):
    assert_same_optimum(small_adult, 10, 0.02, metric)


@pytest.mark.slow
def test_optimum_equals_brute_force_for_entropy(small_adult):
    assert_same_optimum(small_adult, 10, 0.0, "entropy")


@pytest.mark.slow
@pytest.mark.parametrize("l, t", [(1.5, None), (None, 0.15), (1.6, 0.2)])
def test_optimum_equals_brute_force_with_l_and_t(small_adult, l, t):
    assert_same_optimum(small_adult, 5, 0.05, "gcp", l, t)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=5, with_shape_hierarchy=True), k=st.integers(1, 5),
       limit=st.sampled_from([0.0, 0.1, 0.25]), metric=st.sampled_from(["gcp", "discernibility", "height"]),
       l=st.sampled_from([None, 1.5]))
@pytest.mark.slow
def test_optimum_equals_brute_force_on_random_tables(data, k, limit, metric, l):
    assume(data.n_rows >= k)
    assert_same_optimum(data, k, limit, metric, l)


@settings(max_examples=30, deadline=None)
@given(data=tables(min_rows=1, with_shape_hierarchy=True), order=st.permutations(list(range(12))))
@pytest.mark.slow
def test_roll_ups_agree_with_the_data_layer(data, order):
    columns = data.quasi_identifiers
    problem = _Problem(data, columns, 1, 0.0, sensitive_constraints(data, None), "gcp")
    rollups = problem.rollups
    nodes = list(itertools.product(*[range(data.hierarchies[c].height + 1) for c in columns]))
    for i in order:  # evaluate in a random order, so roll-ups start from various cached tables
        levels = nodes[i * 5 % len(nodes)]
        table = rollups.table(levels)
        expected = frequency_table(data, columns, levels={c: lv for c, lv in zip(columns, levels) if lv})
        assert sorted(table.counts.tolist()) == sorted(expected.get_column("count").to_list())


def test_greedy_finds_a_feasible_node_no_better_than_the_optimum(small_adult):
    _, optimal = lattice_search(small_adult, 10, suppression_limit=0.02, search="optimal")
    _, greedy = lattice_search(small_adult, 10, suppression_limit=0.02, search="greedy")
    assert not greedy.optimal and greedy.search == "greedy"
    assert greedy.loss >= optimal.loss - 1e-12
    assert greedy.suppressed_rows <= 0.02 * small_adult.n_rows


def test_greedy_falls_back_to_the_top_when_the_budget_is_spent(small_adult):
    problem = _Problem(small_adult, SMALL_QIS, 10, 0.0, sensitive_constraints(small_adult, None), "gcp")
    result = greedy_search(problem, time_budget=1e-9)
    assert result.levels == problem.lattice.top
    assert any("time budget" in note for note in result.notes)


def test_a_scheme_recodes_another_table_such_as_a_sample(small_adult):
    scheme = GeneralizationScheme.of(small_adult, [2, 1, 1, 0])
    sample = small_adult.with_frame(small_adult.frame.sample(fraction=0.3, seed=3))
    applied = apply(sample, scheme, 5)
    assert applied.rows_in == sample.n_rows
    assert applied.published_class_sizes.min() >= 5
    ages = set(applied.frame.get_column("age").to_list())
    assert ages <= set(small_adult.hierarchies["age"].labels[2])
    with pytest.raises(ParameterError, match="above the suppression limit"):
        apply(sample, GeneralizationScheme.of(small_adult, [0, 0, 0, 0]), 50, suppression_limit=0.01)


def test_lattice_release_and_errors(small_adult):
    release = anonymize_dataset(small_adult, "lattice", 10, suppression_limit=0.02)
    assert release.certificate.guarantee == "none"
    assert release.certificate.reason == "data-dependent recoding (optimal lattice search)"
    assert release.rows_suppressed <= 60
    with pytest.raises(ParameterError, match="minimizes one of"):
        anonymize_dataset(small_adult, "lattice", 10, loss="c_avg")
    with pytest.raises(ParameterError, match="whole table does not satisfy"):
        anonymize_dataset(small_adult, "lattice", 2, l=2)
    bare = Dataset(small_adult.frame, small_adult.schema,
                   {c: h for c, h in small_adult.hierarchies.items() if c != "sex"})
    flat = anonymize_dataset(bare, "lattice", 10, suppression_limit=0.02)
    assert any("no hierarchy for sex" in note for note in flat.notes)
    assert set(flat.frame.get_column("sex").unique().to_list()) <= {"Male", "Female", "*"}


def test_separable_bounds_never_exceed_the_loss(small_adult):
    problem = _Problem(small_adult, SMALL_QIS, 10, 0.05, sensitive_constraints(small_adult, None), "gcp")
    shares = problem.separable_bounds()
    for levels in [(0, 0, 0, 0), (1, 1, 1, 1), (4, 0, 3, 1), (2, 3, 0, 0)]:
        bound = sum(share[level] for share, level in zip(shares, levels))
        result = problem.evaluate(levels, score_infeasible=True)
        assert bound <= result.loss + 1e-12
        no_suppression = problem.scorer.score(list(levels), k=1).loss("gcp")
        assert bound == pytest.approx(no_suppression, abs=1e-12)
