"""The ε1-safe choice of the safe pipeline (anonymize/selection and the modules it draws on): the
branch and bound equals the full evaluation, the choice is the argmax of the exact keys, the
score's sensitivity and monotonicity, and the exponential mechanism's frequencies."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples import sample_of
from strategies import tables

from crowdsafe.datasets import adult
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection.gumbel import SCORE_UNIT
from crowdsafe.selection.score import node_penalties
from crowdsafe.selection.search import gumbel_max_over_lattice, lattice_scores


@pytest.fixture(scope="module")
def adult_data():
    return adult()


# -- the epsilon1-safe choice --------------------------------------------------------------------


def _oracle_bits(seed):
    """Refinement bits that are a fixed function of (node, round), so that two evaluations of the
    same exact keys (branch and bound, full) see the same uniforms."""
    def more_bits(indices, round_):
        return np.array([np.random.SeedSequence((seed, int(i), round_)).generate_state(1, np.uint64)[0]
                         for i in indices], dtype=np.uint64)
    return more_bits


def _midpoint_keys(scale, scores, cells, k):
    """scale · q_int / (2^20 (2k − 1)) + G (the retained objective: monotone, Δ_int = 2^20 (2k − 1))
    with G = −log(−log U) at the middle of each 53-bit cell, in float64: the exact keys to ~1e-15,
    independently of the selection module (only near-ties could differ)."""
    u = (cells.astype(np.float64) + 0.5) * 2.0**-53
    return scale * (scores / (SCORE_UNIT * (2 * k - 1))) + -np.log(-np.log(u))


def test_branch_and_bound_gives_the_argmax_of_the_full_evaluation(adult_data):
    from crowdsafe.selection.gumbel import exact_gumbel_argmax

    columns = ["age", "education", "marital-status", "sex"]
    sample = sample_of(adult_data, 11, 0.5)
    lattice, scores = lattice_scores(sample, columns, 30)
    generator = Randomness(12).generator
    every = np.arange(lattice.size)
    for draw in range(6):
        cells = gumbel_cells(generator, lattice.size)
        for scale in (0.01, 0.1, 1.0):
            _, index, _ = gumbel_max_over_lattice(sample, columns, 30, scale, cells, _oracle_bits(draw))
            assert index == int(np.argmax(_midpoint_keys(scale, scores, cells, 30)))
            assert index == exact_gumbel_argmax(every, scores, cells, scale, _oracle_bits(draw), SCORE_UNIT * 59)


def _brute_force_scores(data, columns, k, quantised=False):
    """q(S, g) of every lattice node, row by row in plain Python from the definition (docs/publish.md),
    sharing no code with the selection module: node order = the lattice's (last column fastest).
    ``quantised``: the exact integer 2^20 · k · q with each class weight max(0, 2^20 − Σ_j ⌈2^20 · NCP_j / d⌉)
    and each class counted |E| · min(|E|, k) (the square ramp)."""
    import itertools

    hierarchies = [data.hierarchies[c] for c in columns]
    ancestors, penalty = [], []
    for h in hierarchies:
        leaves = h.leaves.to_list()
        chain = {}
        for code, leaf in enumerate(leaves):
            nodes = [code]
            for parents in h.parents:
                nodes.append(int(parents[nodes[-1]]))
            chain[leaf] = nodes
        ancestors.append(chain)
        under = [[[leaf for leaf in leaves if chain[leaf][level] == node] for node in range(len(h.labels[level]))]
                 for level in range(h.height + 1)]
        numeric = all(isinstance(v, (int, float)) for v in leaves) and max(leaves) > min(leaves)
        span = (max(leaves) - min(leaves)) if numeric else 0
        penalty.append([[0.0 if level == 0 else
                         (max(u) - min(u)) / span if numeric else (len(u) - 1) / max(len(leaves) - 1, 1)
                         for u in under[level]] for level in range(h.height + 1)])
    rows = data.frame.select(columns).rows()
    scores = []
    d = len(columns)
    for levels in itertools.product(*[range(h.height + 1) for h in hierarchies]):
        classes = Counter(tuple(ancestors[j][row[j]][levels[j]] for j in range(len(columns))) for row in rows)
        if quantised:
            scores.append(sum(
                max(0, 2**20 - sum(math.ceil(penalty[j][levels[j]][node[j]] * 2**20 / d) for j in range(d)))
                * size * min(size, k) for node, size in classes.items()))
            continue
        scores.append(sum(
            (1 - sum(penalty[j][levels[j]][node[j]] for j in range(len(columns))) / len(columns))
            * size * min(size, k) / k
            for node, size in classes.items()))
    return np.asarray(scores)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=80, with_shape_hierarchy=True), k=st.integers(2, 6),
       seed=st.integers(0, 2**31), interleaved=st.booleans())
@pytest.mark.slow
def test_the_choice_is_the_argmax_of_scaled_scores_plus_noise_by_brute_force(data, k, seed, interleaved):
    """For fixed random bits, the branch and bound returns argmax_g scale * q(S, g) + G_g with q
    computed from its definition (exactly, in units of 2^-20); the reference full evaluation
    computes the same integers. ``interleaved``: a colour hierarchy whose groups alternate along
    the leaves (codes not in tree order)."""
    from strategies import COLOURS

    from crowdsafe.data import Hierarchy

    if interleaved:
        groups = ["x", "y", "z", "x", "y", "z"]
        data = data.with_hierarchies({"colour": Hierarchy.from_columns(
            "colour", COLOURS, [groups, ["xy" if g != "z" else "z" for g in groups], ["*"] * 6])})
    columns = ["age", "colour", "shape"]
    expected = np.asarray(_brute_force_scores(data, columns, k, quantised=True), dtype=np.int64)
    lattice, scores = lattice_scores(data, columns, k)
    assert scores.dtype == np.int64
    np.testing.assert_array_equal(scores, expected)
    # quantisation lowers each class weight by less than d units of 2^-20
    unquantised = _brute_force_scores(data, columns, k)
    slack = data.n_rows * len(columns) / SCORE_UNIT
    real = scores / (SCORE_UNIT * k)
    assert np.all(real <= unquantised + 1e-9) and np.all(real >= unquantised - slack)
    generator = Randomness(seed).generator
    for scale in (0.01, 0.3, 3.0, 100.0):
        cells = gumbel_cells(generator, lattice.size)
        _, index, _ = gumbel_max_over_lattice(data, columns, k, scale, cells, _oracle_bits(seed))
        assert index == int(np.argmax(_midpoint_keys(scale, expected, cells, k)))


def test_roll_ups_with_counts_packed_in_the_keys_equal_the_stable_sort(adult_data):
    """raise_level sorts (key, count) packed in one int64 when they fit; the plain stable sort of
    the keys (used when they do not) gives the very same frequency tables."""
    from crowdsafe.selection.tables import KeyedTables

    columns = ["age", "education", "marital-status", "occupation", "sex"]
    sample = sample_of(adult_data, 5, 0.5)
    packed, plain = KeyedTables(sample, columns), KeyedTables(sample, columns)
    plain.count_bits = 0
    assert packed.count_bits > 0
    for attribute, column in enumerate(columns):
        for high in range(1, adult_data.hierarchies[column].height + 1):
            got = packed.raise_level(packed.base_keys, packed.base_counts, attribute, 0, high)
            expected = plain.raise_level(plain.base_keys, plain.base_counts, attribute, 0, high)
            np.testing.assert_array_equal(got[0], expected[0])
            np.testing.assert_array_equal(got[1], expected[1])
            assert got[1].sum() == sample.n_rows and np.all(np.diff(got[0]) > 0)


@settings(max_examples=40, deadline=None)
@given(data=tables(min_rows=2, max_rows=40, with_shape_hierarchy=True), k=st.integers(2, 5),
       drop=st.integers(0, 10**6))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_score_has_sensitivity_one_and_is_monotone(data, k, drop):
    """Removing any one row lowers every node's score by between 0 and (2k − 1)/k exactly
    (Δq = (2k − 1)/k, monotone): the integer scores move by 0 to 2^20 (2k − 1) units, no rounding."""
    columns = ["age", "colour", "shape"]
    _, full = lattice_scores(data, columns, k)
    i = drop % data.n_rows
    smaller = data.with_frame(data.frame.filter(pl.int_range(pl.len()) != i))
    _, reduced = lattice_scores(smaller, columns, k)
    change = full - reduced
    assert np.all(change >= 0) and np.all(change <= SCORE_UNIT * (2 * k - 1))


@pytest.mark.parametrize("objective, target", [("retained", None), ("loss", None), ("discernibility", None),
                                               ("classification", "sex"), ("entropy", None)])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_keys_wider_than_int64_give_the_scores_and_choice_of_int64_keys(adult_data, monkeypatch, objective, target):
    """Past KEY_BITS the keyed tables hold int64 words (and, in the reference twin, Python
    integers; a table is never refused for its number of values): the same exact scores and the
    same node chosen for the same randomness, with the same number of nodes scored."""
    from crowdsafe.selection import tables as keyed_tables
    from crowdsafe.selection import words
    from crowdsafe.selection.score import make_objective

    columns = ["age", "education", "marital-status", "sex"]
    chosen = make_objective(objective, target)
    sample = sample_of(adult_data, 5, 0.3)
    lattice, narrow = lattice_scores(sample, columns, 10, chosen)
    cells = gumbel_cells(Randomness(6).generator, lattice.size)
    narrow_choice = gumbel_max_over_lattice(sample, columns, 10, 0.5, cells, _oracle_bits(1), chosen)[1:]
    assert not keyed_tables.KeyedTables(sample, columns, chosen, 10).wide_keys
    monkeypatch.setattr(keyed_tables, "KEY_BITS", 6)
    monkeypatch.setattr(words, "WORD_BITS", 6)  # a word or two per column
    for reference in (False, True):
        monkeypatch.setattr(keyed_tables, "OBJECT_KEYS", reference)
        base_keys = keyed_tables.KeyedTables(sample, columns, chosen, 10).base_keys
        if reference:
            assert base_keys.dtype == object
        else:
            assert isinstance(base_keys, words.WordKeys) and len(base_keys.words) >= 3
        _, wide = lattice_scores(sample, columns, 10, chosen)
        wide_choice = gumbel_max_over_lattice(sample, columns, 10, 0.5, cells, _oracle_bits(1), chosen)[1:]
        assert wide.tolist() == narrow.tolist()
        assert wide_choice == narrow_choice


def test_node_penalties_depend_on_the_hierarchy_only(adult_data):
    for name in ("age", "education"):
        penalties = node_penalties(adult_data.hierarchies[name])
        assert penalties[0].max() == 0.0 and penalties[-1].tolist() == [1.0]
        assert all(((p >= 0) & (p <= 1)).all() for p in penalties)


@pytest.mark.slow
def test_the_choice_follows_the_exponential_mechanism(adult_data):
    """On a tiny lattice, the choice frequencies match exp(eps1 * q) / Z (chi-square, fixed seed).

    choose_scheme takes the sample as a Dataset (counted inside it) or already counted (as the
    publish path passes it); counting is deterministic and was three quarters of each draw. One
    draw in ten takes the Dataset, the others the same sample counted once: the randomness is
    drawn identically in both, so the 3000 choices are those the Dataset alone gave."""
    from scipy import stats

    from crowdsafe.anonymize.counted import counted
    from crowdsafe.selection.mechanism import choose_scheme

    columns = ["sex", "race"]
    sample = sample_of(adult_data.with_roles(qi=columns), 3, 0.01)
    lattice, scores = lattice_scores(sample, columns, 5)
    epsilon1 = 0.05
    p = np.exp(epsilon1 * (scores - scores.max()) / (SCORE_UNIT * (2 * 5 - 1)))
    p /= p.sum()
    randomness = Randomness(21)
    draws = 3000
    counts = np.zeros(lattice.size)
    nodes = [tuple(n) for n in lattice.nodes()]
    counted_once = counted(sample, columns)
    for draw in range(draws):
        choice = choose_scheme(sample if draw % 10 == 0 else counted_once, columns, 5, epsilon1, randomness)
        counts[nodes.index(tuple(choice.scheme.levels[c] for c in columns))] += 1
    keep = p * draws >= 5
    observed = np.r_[counts[keep], counts[~keep].sum()]
    expected = np.r_[p[keep] * draws, p[~keep].sum() * draws]
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    assert stats.chisquare(observed, expected).pvalue > 1e-3
