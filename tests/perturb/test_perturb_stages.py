"""The per-row stages of the α-β algorithm: exact binomial for any size, uniform distinct insertions
over D \\ I (chi-square), and the whole mechanism's distribution on a tiny domain."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from crowdsafe.data import load
from crowdsafe.data.arrays import sorted_unique
from crowdsafe.errors import ParameterError
from crowdsafe.perturb import prepare, run, stages
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest, plan_alpha_beta
from crowdsafe.randomness import Randomness
from statistics_helpers import binomial_fit_pvalue

# A statistical test "passes" when its p-value is above this (fixed seeds make it deterministic).
P_FLOOR = 1e-3


def chi_square_uniform(counts: np.ndarray) -> float:
    return stats.chisquare(counts).pvalue


def test_binomial_has_the_binomial_distribution():
    """The insertion count on a small count against the exact pmf (mechanisms.binomial has the
    thorough tests)."""
    rng = Randomness(11)
    trials, p, draws = 60, 0.3, 4000
    sample = np.array([stages.binomial(trials, p, rng) for _ in range(draws)])
    assert binomial_fit_pvalue(sample, trials, p) > P_FLOOR


@pytest.mark.slow
def test_binomial_of_more_than_64_bits_of_trials():
    rng = Randomness(12)
    trials, p = 2**80, 1e-22
    mean = trials * p
    sample = np.array([stages.binomial(trials, p, rng) for _ in range(1500)])
    assert abs(sample.mean() - mean) < 4 * math.sqrt(mean / len(sample))
    assert sample.var() == pytest.approx(mean, rel=0.15)
    assert stages.binomial(2**70, 0.0, rng) == 0
    assert stages.binomial(2**70, 1.0, rng) == 2**70
    with pytest.raises(ParameterError):
        stages.binomial(-1, 0.5, rng)
    with pytest.raises(ParameterError):
        stages.binomial(10, 1.5, rng)


@pytest.mark.parametrize("count", [4, 15])  # sparse (rejection) and dense (complement) paths
def test_inserted_indices_are_uniform_over_the_domain_minus_the_data(count):
    rng = Randomness(13)
    m = 24
    existing = np.array([0, 3, 7, 8, 15, 23], dtype=np.uint64)
    free = np.setdiff1d(np.arange(m), existing)
    runs = 3000
    hits = np.zeros(m, dtype=np.int64)
    for _ in range(runs):
        drawn = stages.insert_indices(count, 0, m, existing, rng)
        assert len(drawn) == count and (np.diff(drawn.astype(np.int64)) > 0).all()  # distinct, sorted
        hits += np.bincount(drawn.astype(np.int64), minlength=m)
    assert hits[existing.astype(np.int64)].sum() == 0
    assert hits[free].sum() == runs * count
    assert chi_square_uniform(hits[free]) > P_FLOOR


def test_rejection_over_several_batches_stays_distinct_and_uniform():
    """400,000 of 1,000,000 indices: the first batch (440,016 draws) holds only about 356,000
    distinct ones, so later batches are merged in; the result is still distinct, outside the
    data, and uniform (10 bins of the range, chi-square)."""
    rng = Randomness(21)
    m, count = 1_000_000, 400_000
    existing = np.arange(0, m, 1000, dtype=np.uint64)
    drawn = stages.insert_indices(count, 0, m, existing, rng)
    assert len(drawn) == count and (np.diff(drawn.astype(np.int64)) > 0).all()  # distinct, sorted
    assert sorted_unique(np.array([3, 1, 3, 2, 1], dtype=np.uint64)).tolist() == [1, 2, 3]
    assert not np.isin(drawn, existing).any()
    bins = np.bincount((drawn // 100_000).astype(np.int64), minlength=10)
    assert chi_square_uniform(bins) > P_FLOOR


def test_insertions_from_disjoint_ranges_cover_a_partition():
    """What a partitioned engine does: each range draws from itself, minus I's indices in it."""
    rng = Randomness(14)
    existing = np.array([2, 5, 11], dtype=np.uint64)
    low_part = stages.insert_indices(3, 0, 8, existing[existing < 8], rng)
    high_part = stages.insert_indices(6, 8, 16, existing[existing >= 8], rng)
    assert set(low_part.tolist()) <= set(range(8)) - {2, 5}
    assert set(high_part.tolist()) <= set(range(8, 16)) - {11}
    with pytest.raises(ParameterError, match="only"):
        stages.insert_indices(8, 8, 16, existing[existing >= 8], rng)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_per_attribute_insertions_are_uniform_over_the_domain_minus_the_data():
    rng = Randomness(15)
    sizes = [3, 4, 2]
    existing = pl.DataFrame({"c0": [0, 1, 2, 2], "c1": [0, 3, 1, 1], "c2": [1, 0, 0, 1]}, schema={
        "c0": pl.UInt32, "c1": pl.UInt32, "c2": pl.UInt32})
    taken = {tuple(r) for r in existing.iter_rows()}
    cells = [t for t in itertools.product(*(range(s) for s in sizes)) if t not in taken]
    position = {t: i for i, t in enumerate(cells)}
    hits = np.zeros(len(cells), dtype=np.int64)
    runs, count = 800, 5
    for _ in range(runs):
        drawn = stages.insert_tuples(count, sizes, existing, rng)
        rows = list(drawn.iter_rows())
        assert len(rows) == count == len(set(rows))
        for row in rows:
            hits[position[row]] += 1  # KeyError if a tuple of I (or outside D) was drawn
    assert chi_square_uniform(hits) > P_FLOOR


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
def test_the_mechanism_is_independent_bernoulli_per_tuple():
    """On a domain of 4 tuples, the view's distribution over all 16 subsets is the product of
    Bernoulli(α) for tuples of I and Bernoulli(β) for the others."""
    data = load(pl.DataFrame({"a": [0, 1, 0], "b": ["x", "y", "y"]}))  # domain {0,1} x {x,y}
    table = prepare(data, exploratory=True)
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(d=0.1, gamma=0.5, alpha=0.5, beta=0.3))
    tuples = [(0, "x"), (0, "y"), (1, "x"), (1, "y")]
    in_data = {(0, "x"), (1, "y"), (0, "y")}
    rng = Randomness(16)
    runs = 3000
    observed = np.zeros(16, dtype=np.int64)
    for _ in range(runs):
        view = run(table, plan, rng).frame
        present = set(view.iter_rows())
        assert len(present) == view.height  # a set: no tuple twice
        observed[sum(1 << i for i, t in enumerate(tuples) if t in present)] += 1
    expected = np.zeros(16)
    for mask in range(16):
        p = 1.0
        for i, t in enumerate(tuples):
            chance = 0.5 if t in in_data else 0.3
            p *= chance if mask >> i & 1 else 1 - chance
        expected[mask] = p * runs
    assert stats.chisquare(observed, expected).pvalue > P_FLOOR


def test_the_view_lists_its_tuples_in_the_domains_order():
    """Kept and inserted tuples are interleaved in the domain's order (the view is a set): a
    row's position is a function of the published set, not of where the row came from."""
    grid = pl.DataFrame({"a": np.arange(2000) % 40, "b": np.arange(2000) // 40})
    frame = grid.filter((pl.col("a") + pl.col("b")) % 2 == 0)  # half the 40 x 50 grid: room to insert
    table = prepare(load(frame), exploratory=True)
    plan = plan_alpha_beta(table.n, table.domain.size, AlphaBetaPlanRequest(d=0.01, gamma=0.5, alpha=0.5, beta=0.2))
    view = run(table, plan, Randomness(17))
    index = table.domain.index(view.codes).astype(np.int64)
    assert (np.diff(index) > 0).all()
    assert view.frame.equals(view.frame.sort(["a", "b"]))
    real = view.frame.with_row_index().join(frame, on=["a", "b"], how="semi").get_column("index").to_numpy()
    inserted = np.setdiff1d(np.arange(view.frame.height), real)
    assert len(real) and len(inserted)
    assert real.min() < inserted.max() and inserted.min() < real.max()  # interleaved, neither kind first


@pytest.mark.parametrize("seed", range(6))
def test_the_merge_into_the_domains_order_matches_its_sorting_twin(seed):
    """stages.in_domain_order (a linear merge) against its reference twin (a sort), on disjoint
    sorted index sets of every shape: empty sides, all kept first, all inserted first, interleaved."""
    gen = np.random.default_rng(seed)
    universe = gen.permutation(200).astype(np.uint64)
    cut = int(gen.integers(0, 201))
    kept, inserted = np.sort(universe[:cut]), np.sort(universe[cut: cut + int(gen.integers(0, 201 - cut))])
    for a, b in ((kept, inserted), (inserted, kept), (kept[:0], inserted), (kept, inserted[:0])):
        merged = stages.in_domain_order(a, b)
        assert merged.dtype == np.uint64
        assert merged.tolist() == stages._in_domain_order_by_sort(a, b).tolist()


def test_codes_past_64_bits_are_listed_in_the_domains_order():
    """Past 2^64 tuples (no index) the codes are sorted column by column: the order the
    mixed-radix index gives below 2^64 (its first attribute most significant)."""
    codes = pl.DataFrame({"c0": [2, 0, 1, 0], "c1": [0, 5, 1, 2]}, schema={"c0": pl.UInt32, "c1": pl.UInt32})
    ordered = stages.codes_in_domain_order(codes)
    keys = ordered.get_column("c0").to_numpy().astype(np.int64) * 6 + ordered.get_column("c1").to_numpy()
    assert (np.diff(keys) > 0).all() and ordered.height == codes.height
