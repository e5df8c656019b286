"""The ``marginals`` objective (issue #36): its scores against a brute-force evaluation of the
definition, its sensitivity on neighbouring tables (random and adversarial, with broken variants
that the same checks catch), its non-monotonicity, the branch and bound against every node's
keys, and the ceiling experiment's TVD against :func:`crowdsafe.metrics.marginal_distances`."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import COLOURS, OUTCOMES, SHAPES, tables

import crowdsafe.selection.marginal_score as marginal_score
from crowdsafe.anonymize.counted import counted
from crowdsafe.data import Dataset, Schema, flat, intervals
from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection.gumbel import exact_gumbel_argmax, random_bits
from crowdsafe.selection.marginal_score import (
    MARGINAL_SUPPRESSION,
    MARGINAL_UNIT,
    gumbel_max_marginals,
    marginal_count,
    marginal_sensitivity_units,
)
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import gumbel_max_over_lattice, lattice_scores

COLUMNS = ["age", "colour", "shape", "outcome"]


def _prepared(data: Dataset) -> Dataset:
    return data.with_roles(qi=COLUMNS, sensitive=[]).with_hierarchies({"outcome": flat("outcome", OUTCOMES)})


def _objective(data: Dataset, columns=COLUMNS):
    return make_objective("marginals").for_columns(columns, data.hierarchies)


def brute_force(data: Dataset, columns: list[str], k: int) -> dict[tuple[int, ...], int]:
    """q_int of every node straight from the definition (score.py): per marginal, per group, the
    leaf tuples it covers enumerated one by one; Python integers throughout."""
    table = counted(data, columns)
    hierarchies = [data.hierarchies[c] for c in columns]
    rows = Counter()
    for codes, count in zip(table.codes.tolist(), table.counts.tolist()):
        rows[tuple(codes)] += count
    d, unit = len(columns), MARGINAL_UNIT
    numerator, denominator = MARGINAL_SUPPRESSION
    marginals = [(i,) for i in range(d)] + list(itertools.combinations(range(d), 2))
    scores = {}
    for levels in itertools.product(*[range(h.height + 1) for h in hierarchies]):
        maps = [h.leaf_map(level).tolist() for h, level in zip(hierarchies, levels)]
        classes = Counter()
        for leaves, count in rows.items():
            classes[tuple(m[v] for m, v in zip(maps, leaves))] += count
        deficit = sum(c * (k - c) for c in classes.values() if c < k)
        error = 0
        for marginal in marginals:
            truth, groups = Counter(), Counter()
            for leaves, count in rows.items():
                truth[tuple(leaves[j] for j in marginal)] += count
                groups[tuple(maps[j][leaves[j]] for j in marginal)] += count
            for group, total in groups.items():
                under = [[v for v in range(hierarchies[j].size(0)) if maps[j][v] == node]
                         for j, node in zip(marginal, group)]
                size = int(np.prod([len(u) for u in under]))
                u = sum(abs(size * truth.get(v, 0) - total) for v in itertools.product(*under))
                error += (k * unit * u) // size
        scores[levels] = -error - marginal_count(d) * unit * numerator * deficit // denominator
    return scores


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=40, with_shape_hierarchy=True), k=st.integers(2, 6))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_marginals_score_matches_its_definition(data, k):
    data = _prepared(data)
    lattice, scores = lattice_scores(data, COLUMNS, k, make_objective("marginals"))
    expected = brute_force(data, COLUMNS, k)
    assert [int(s) for s in scores] == [expected[tuple(int(x) for x in node)] for node in lattice.nodes()]


def _random_table(rng: np.random.Generator, n: int) -> Dataset:
    frame = pl.DataFrame({"age": rng.integers(18, 61, n).tolist(),
                          "colour": rng.choice(COLOURS, n).tolist(),
                          "shape": rng.choice(SHAPES, n).tolist(),
                          "outcome": rng.choice(OUTCOMES, n).tolist()})
    schema = Schema.of({"age": "numeric", "colour": "categorical", "shape": "categorical",
                        "outcome": "categorical"}, qi=COLUMNS)
    from strategies import colour_hierarchy

    hierarchies = {"age": intervals("age", range(18, 61), widths=[5, 10, 20]), "colour": colour_hierarchy(),
                   "shape": flat("shape", SHAPES), "outcome": flat("outcome", OUTCOMES)}
    return Dataset(frame, schema, hierarchies)


def _changes(data: Dataset, neighbour: Dataset, k: int, columns=COLUMNS) -> list[int]:
    objective = make_objective("marginals")
    _, full = lattice_scores(data, columns, k, objective)
    _, other = lattice_scores(neighbour, columns, k, objective)
    return [int(a) - int(b) for a, b in zip(full, other)]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_neighbouring_tables_move_every_score_by_at_most_the_sensitivity():
    """Random tables D and D ± one row (a row removed, a random row added), every node: the
    change stays within Δ_int, and it moves both ways (not monotone, m = 2)."""
    rng = np.random.default_rng(36)
    worst, signs = 0.0, set()
    for _ in range(24):
        data = _random_table(rng, int(rng.integers(2, 80)))
        k = int(rng.integers(2, 8))
        bound = _objective(data).sensitivity_units(k)
        assert bound == marginal_sensitivity_units((1,) * len(COLUMNS), k)
        removed = data.with_frame(data.frame.filter(pl.int_range(pl.len()) != int(rng.integers(data.n_rows))))
        added = data.with_frame(pl.concat([data.frame, _random_table(rng, 1).frame]))
        for neighbour in (removed, added):
            changes = _changes(data, neighbour, k)
            assert max(abs(c) for c in changes) <= bound
            worst = max(worst, max(abs(c) for c in changes) / bound)
            signs |= {int(np.sign(c)) for c in changes if c}
    assert signs == {-1, 1}  # scores move both ways between neighbours: the score is not monotone
    assert worst > 0.3


def _uniform_but_one(k: int) -> tuple[Dataset, Dataset]:
    """One column, age, in intervals of 20 years: ages 20..39 twice each but 20 once (39 rows, one
    class of k = 39 at level 1, [20, 40)), and the table without its row of age 20. At level 1 the removed
    row's cell was the one below the spread estimate and every other cell above it, so the error
    grows by 2(s − 1)/s rows, and the class drops below k: both terms move the score down."""
    ages = [20] + [a for a in range(21, 40) for _ in range(2)]
    schema = Schema.of({"age": "numeric"}, qi=["age"])
    data = Dataset(pl.DataFrame({"age": ages}), schema, {"age": intervals("age", range(18, 61), widths=[20])})
    return data, data.with_frame(data.frame.slice(1))


def test_the_sensitivity_is_nearly_attained_and_broken_bounds_fail():
    k = 39
    data, neighbour = _uniform_but_one(k)
    changes = _changes(data, neighbour, k, ["age"])
    bound = marginal_sensitivity_units((1,), k)
    largest = max(abs(c) for c in changes)
    assert largest <= bound
    assert largest >= 0.96 * bound  # within a factor (1 − 1/s), s = 20, of the proved bound
    unit = MARGINAL_UNIT
    numerator, denominator = MARGINAL_SUPPRESSION
    forgot_the_release = unit * (k + numerator * (k - 1) // denominator)  # "one row moves one cell of the truth"
    forgot_suppression = unit * 2 * k  # the ramp's term left out of Δ
    assert largest > forgot_the_release and largest > forgot_suppression


def test_a_hard_suppression_step_breaks_the_bound(monkeypatch):
    """The same check on the crossing pair catches suppression without the ramp (a class under k
    charged all its rows at k each: Δ would need to be k times larger)."""
    k = 39
    data, neighbour = _uniform_but_one(k)
    bound = marginal_sensitivity_units((1,), k)
    monkeypatch.setattr(marginal_score, "suppression_deficit",
                        lambda counts, k: int(sum(int(c) * k for c in np.asarray(counts) if c < k)))
    assert max(abs(c) for c in _changes(data, neighbour, k, ["age"])) > bound


def _search_against_every_node(seed: int, scales=(1.0, 30.0, 3000.0), search=None) -> list[tuple[int, int]]:
    """(the search's node, the exact argmax over every node's key) on a random table, same bits;
    ``search``: the marginals search (default) or the dispatcher in front of it."""
    search = search or gumbel_max_marginals
    rng = np.random.default_rng(seed)
    data = _random_table(rng, int(rng.integers(20, 200)))
    k = int(rng.integers(2, 6))
    objective = make_objective("marginals")
    lattice, scores = lattice_scores(data, COLUMNS, k, objective)
    denominator = _objective(data).key_denominator(k)
    generator = Randomness(seed).generator
    pairs = []
    for scale in scales:
        cells = gumbel_cells(generator, lattice.size)
        every = np.arange(lattice.size, dtype=np.int64)
        expected = exact_gumbel_argmax(every, scores.astype(object), cells, scale, random_bits(Randomness(seed)),
                                       denominator)
        _, got, scored = search(data, COLUMNS, k, scale, cells, random_bits(Randomness(seed)), objective)
        assert scored <= lattice.size
        pairs.append((got, expected))
    return pairs


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_search_returns_the_argmax_of_every_nodes_keys(seed):
    """The branch and bound, through the selection's dispatcher, against the exact argmax over
    every node's score (the same bits), at scales from nearly uniform to nearly the argmax."""
    for got, expected in _search_against_every_node(seed, (0.01, 1.0, 30.0, 3000.0), gumbel_max_over_lattice):
        assert got == expected


def test_the_search_order_is_not_the_given_one():
    """Lowest entropy first (fewest leaves without the sample): on these columns (age has the most
    values, uniform) the search walks a permuted lattice, so the tests above exercise the mapping
    back to the caller's nodes."""
    data = _random_table(np.random.default_rng(0), 50)
    hierarchies = [data.hierarchies[c] for c in COLUMNS]
    for order in (marginal_score.marginal_search_order(hierarchies),
                  marginal_score.marginal_search_order(hierarchies, counted(data, COLUMNS))):
        assert order != list(range(len(COLUMNS))) and order[-1] == COLUMNS.index("age")


def test_a_column_whose_rows_share_a_value_is_searched_before_fewer_leaves():
    """The sample's entropy decides, not the number of leaves: age, nearly constant here, comes
    first, ahead of columns with far fewer leaves; an empty sample falls back to fewest leaves."""
    data = _random_table(np.random.default_rng(1), 200)
    frame = data.frame.with_columns(pl.when(pl.int_range(pl.len()) < 195).then(30).otherwise(pl.col("age"))
                                    .alias("age"))
    skewed = data.with_frame(frame)
    hierarchies = [skewed.hierarchies[c] for c in COLUMNS]
    assert marginal_score.marginal_search_order(hierarchies, counted(skewed, COLUMNS))[0] == COLUMNS.index("age")
    empty = skewed.with_frame(frame.head(0))
    assert marginal_score.marginal_search_order(hierarchies, counted(empty, COLUMNS)) == \
        marginal_score.marginal_search_order(hierarchies)


@pytest.mark.parametrize("order", list(itertools.permutations(range(len(COLUMNS)))))
def test_every_search_order_returns_the_argmax(order, monkeypatch):
    """The order only decides the running time: each of the 24 orders returns the exact argmax."""
    monkeypatch.setattr(marginal_score, "marginal_search_order", lambda hierarchies, sample=None: list(order))
    for seed in (0, 1):
        for got, expected in _search_against_every_node(seed):
            assert got == expected


def test_a_search_that_forgets_to_reorder_the_scores_is_caught(monkeypatch):
    """Broken variant: the scores in the caller's order, the cells in the searched order. The
    check above then fails, so it can fail."""
    real = marginal_score.MarginalScorer
    monkeypatch.setattr(marginal_score, "MarginalScorer",
                        lambda sample, columns, k, objective: real(sample, COLUMNS, k, objective))
    pairs = [pair for seed in range(4) for pair in _search_against_every_node(seed)]
    assert any(got != expected for got, expected in pairs)


def test_the_search_on_adult_scores_few_nodes():
    from crowdsafe.anonymize.publish import prepare_dataset
    from crowdsafe.datasets import adult
    from crowdsafe.sampling import sample_of

    prepared, columns, _ = prepare_dataset(adult())
    sample = sample_of(prepared, 0.3, Randomness(5))
    objective = make_objective("marginals")
    cells = gumbel_cells(Randomness(6).generator, 36864)
    lattice, chosen, scored = gumbel_max_marginals(sample, columns, 34, 0.4, cells, random_bits(Randomness(7)),
                                                   objective)
    assert lattice.size == 36864 and scored < 2000


def test_an_observed_hierarchy_is_refused():
    """A column whose hierarchy is read from the data (its leaves are the data's values) is refused:
    the spread, and so every score, would change with a new value."""
    from crowdsafe.data.hierarchy import ObservedHierarchy

    data = _prepared(_random_table(np.random.default_rng(0), 20))
    hierarchies = dict(data.hierarchies)
    hierarchies["shape"] = ObservedHierarchy.__new__(ObservedHierarchy)
    with pytest.raises(ParameterError, match="marginals objective needs a declared hierarchy for 'shape'"):
        make_objective("marginals").for_columns(COLUMNS, hierarchies)


def test_the_ceiling_measures_what_marginal_distances_measures():
    """:meth:`MarginalTruth.node_tvd` (the ceiling's exact step) equals the mean 2-way TVD that
    :func:`crowdsafe.metrics.marginal_distances` gives the same release, on several nodes; the
    ceiling's best is no worse than any of them."""
    from crowdsafe.anonymize.counted import apply_counts, published_frame
    from crowdsafe.anonymize.recoding import GeneralizationScheme
    from crowdsafe.experiments.marginal_ceiling import MarginalTruth, lattice_tvd_ceiling, release_tvd

    rng = np.random.default_rng(3)
    data = _random_table(rng, 300)
    sample = data.with_frame(data.frame.sample(fraction=0.5, seed=1))
    k = 3
    truth = MarginalTruth.of(data, COLUMNS)
    table = counted(sample, COLUMNS)
    seen = []
    for node in ([0, 0, 0, 0], [1, 1, 0, 0], [2, 2, 1, 0], [4, 2, 1, 1], [3, 0, 1, 0]):
        levels = dict(zip(COLUMNS, node))
        scheme = GeneralizationScheme(levels, {c: data.hierarchies[c] for c in COLUMNS})
        frame = published_frame(apply_counts(table, levels, k), scheme, COLUMNS)
        value, _ = truth.node_tvd(table, node, k)
        if frame.height:
            assert value == pytest.approx(release_tvd(frame, data, COLUMNS), abs=1e-12)
            seen.append(value)
    best = lattice_tvd_ceiling(sample, data, COLUMNS, k)
    assert best["tvd"] <= min(seen) + 1e-12
    assert (best["lower"] <= best["upper"]).all()


def test_the_workload_comparison_runs_publish_and_the_ceiling():
    from crowdsafe.experiments.marginal_ceiling import workload_comparison

    data = _random_table(np.random.default_rng(4), 400).with_roles(qi=COLUMNS, sensitive=[])
    rows = workload_comparison(data, 2.0, seeds=1, ceiling_seeds=1)
    assert [(r["objective"], r["method"]) for r in rows] == [
        ("retained", "certified release"), ("retained", "best lattice node (ceiling)"),
        ("marginals", "certified release"), ("marginals", "best lattice node (ceiling)")]
    assert all(0.0 <= r["tvd"] <= 1.0 and set(r["node"]) == set(COLUMNS) for r in rows)
    assert all(0.0 <= r["suppression_rate"] <= 1.0 for r in rows)
    test = _random_table(np.random.default_rng(5), 200).with_roles(qi=COLUMNS, sensitive=[])
    scored = workload_comparison(data, 2.0, seeds=1, ceiling_seeds=0, test=test, target="outcome")
    for row in scored:
        # the majority lookup on the release, or NaN where the release generalizes the target
        assert np.isnan(row["accuracy"]) == (row["node"]["outcome"] > 0)
        assert np.isnan(row["accuracy"]) or 0.0 <= row["accuracy"] <= 1.0
