"""The ε1-safe choice samples the exponential mechanism exactly (issue 16): exact Gumbel
enclosures, the lazy refinement of overlapping keys, ties, the common path, the overflow guard.

Expected values come from mpmath at high precision or from the definition, never from the code
under test."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from mpmath import ctx_iv, mp, mpf
from scipy import stats

import crowdsafe
from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.data import Hierarchy
from crowdsafe.datasets import adult
from crowdsafe.randomness import Randomness, gumbel_cells, gumbel_enclosure
from crowdsafe.selection.gumbel import SCORE_UNIT, exact_gumbel_argmax, random_bits
from crowdsafe.selection.mechanism import choose_scheme
from crowdsafe.selection.search import gumbel_max_over_lattice

TOP = (1 << 53) - 1  # the last 53-bit cell: its Gumbel interval reaches +inf


def _exact_gumbel(u) -> mpf:
    return -mp.log(-mp.log(u))


def test_gumbel_enclosure_contains_the_exact_gumbel_of_every_point_of_the_cell():
    cells = np.r_[gumbel_cells(Randomness(1).generator, 300), 0, 1, 2, 2**52, TOP - 1, TOP].astype(np.int64)
    lo, hi = gumbel_enclosure(cells)
    with mp.workprec(200):
        for cell, low, high in zip(cells.tolist(), lo, hi):
            if cell == 0:
                assert low == -np.inf
            else:
                assert low <= _exact_gumbel(mpf(cell) / 2**53)
                assert _exact_gumbel(mpf(cell) / 2**53) - mpf(low) < 1e-8 * (1 + abs(low))  # not loose
            if cell == TOP:
                assert high == np.inf
            else:
                assert _exact_gumbel(mpf(cell + 1) / 2**53) <= high
                assert mpf(high) - _exact_gumbel(mpf(cell + 1) / 2**53) < 1e-8 * (1 + abs(high))


class _Bits:
    """Refinement bits given per (node, round); records the rounds asked for."""

    def __init__(self, table):
        self.table = table
        self.calls = []

    def __call__(self, indices, round_):
        self.calls.append((round_, [int(i) for i in indices]))
        return np.array([self.table[(int(i), round_)] for i in indices], dtype=np.uint64)


@pytest.fixture(scope="module")
def tiny():
    """No rows over sex × race (a lattice of 2 × (h + 1) nodes): every score is 0 (the square ramp
    gives any row some credit, so only an empty sample ties every node)."""
    data = adult()
    columns = ["sex", "race"]
    small = data.with_frame(data.frame.head(0))
    size = (small.hierarchies["sex"].height + 1) * (small.hierarchies["race"].height + 1)
    return small, columns, size


def test_equal_cells_are_decided_by_the_next_bits(tiny):
    """Two nodes in the top cell (Gumbel intervals up to +inf, equal scores): the float search
    cannot separate them, so the refinement draws 64 more bits each, and U (hence G) is larger for
    the larger bits; equal bits need a second round."""
    sample, columns, size = tiny
    a, b = 1, size - 1
    cells = np.full(size, 5, dtype=np.int64)
    cells[[a, b]] = TOP
    first_round = _Bits({(a, 0): 7, (b, 0): 3})
    assert gumbel_max_over_lattice(sample, columns, 50, 0.1, cells, first_round)[1] == a
    assert first_round.calls == [(0, [a, b])]
    tied_once = _Bits({(a, 0): 9, (b, 0): 9, (a, 1): 2**63, (b, 1): 2**64 - 1})
    assert gumbel_max_over_lattice(sample, columns, 50, 0.1, cells, tied_once)[1] == b
    assert tied_once.calls == [(0, [a, b]), (1, [a, b])]
    cells[[a, b]] = 2**52  # finite intervals in the middle of (0, 1)
    apart = _Bits({(a, 0): 0, (b, 0): 2})
    assert gumbel_max_over_lattice(sample, columns, 50, 0.1, cells, apart)[1] == b
    assert len(apart.calls) == 1
    # adjacent cells share an end, so the intervals touch: the next bits decide, whatever they are
    adjacent = _Bits({(a, 0): 1, (b, 0): 0, (a, 1): 0, (b, 1): 2**64 - 2})
    assert gumbel_max_over_lattice(sample, columns, 50, 0.1, cells, adjacent)[1] == a
    assert len(adjacent.calls) == 2


def test_the_refinement_compares_score_and_gumbel_exactly():
    """Node 0 scores one unit (2^-20) more than node 1, both in the same 53-bit cell, scale 2^-40:
    the score difference 2^-60 is far below the float keys' width, of the order of the Gumbel
    difference the next 64 bits make. The winner must be the argmax of the exact keys, computed
    here with mpmath at 400 bits from U = (cell, 64 bits, 64 bits, then the middle)."""
    scale = 2.0**-40
    winners = set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        cell = int(rng.integers(1, TOP))
        bits = {(node, round_): int(rng.integers(0, 2**64, dtype=np.uint64)) for node in (0, 1) for round_ in range(3)}
        with mp.workprec(400):
            keys = []
            for node, score in ((0, 1), (1, 0)):
                u = (mpf(cell) * 2**128 + bits[(node, 0)] * mpf(2)**64 + bits[(node, 1)] + mpf(1) / 2) / mpf(2)**181
                keys.append(mpf(scale) * score / SCORE_UNIT + _exact_gumbel(u))
        expected = 0 if keys[0] > keys[1] else 1
        got = exact_gumbel_argmax(np.array([0, 1]), np.array([1, 0]), np.array([cell, cell]), scale, _Bits(bits))
        assert got == expected
        winners.add(got)
    assert winners == {0, 1}  # the case is really decided by score and bits together


@pytest.mark.slow
def test_the_refinement_with_fresh_bits_is_fair(monkeypatch):
    """Equal scores in the same cell: with fresh random bits each node wins half the time
    (binomial test, fixed seed, p-value > 1e-3).

    The refinement makes a private mpmath interval context per call (about 30 ms, nine tenths of
    each trial here; in a publish the path is rare); the 2000 trials share one, made by the same
    class. The refinement sets the context's precision itself each round and keeps no other state
    in it, so every trial draws the same bits and compares the same intervals as before."""
    shared = ctx_iv.MPIntervalContext()
    monkeypatch.setattr(ctx_iv, "MPIntervalContext", lambda: shared)
    randomness = Randomness(5)
    cells = np.array([2**40, 2**40], dtype=np.int64)
    trials = 2000
    wins = sum(exact_gumbel_argmax(np.array([3, 8]), np.array([0, 0]), cells, 0.1, random_bits(randomness)) == 3
               for _ in range(trials))
    assert stats.binomtest(wins, trials, 0.5).pvalue > 1e-3


def test_ties_in_the_score_give_a_uniform_choice(tiny):
    """Every score 0 (k above the sample size): each node is chosen with probability 1/size
    (chi-square, fixed seed, p-value > 1e-3)."""
    sample, columns, size = tiny
    randomness = Randomness(3)
    draws = 200 * size
    counts = Counter()
    for _ in range(draws):
        levels = choose_scheme(sample, columns, 50, 0.5, randomness).scheme.levels
        counts[tuple(levels[c] for c in columns)] += 1
    assert len(counts) == size
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3


def test_the_common_path_needs_no_refinement():
    """With random cells the float intervals almost never overlap (probability ~1e-8 per pair of
    close keys): the search decides alone and never asks for more bits."""
    data = adult()
    columns = ["age", "education", "marital-status", "sex"]
    sample = data.with_frame(data.frame.head(3000))

    def no_bits(indices, round_):
        raise AssertionError("refinement asked for bits")

    generator = Randomness(8).generator
    size = int(np.prod([data.hierarchies[c].height + 1 for c in columns]))
    for scale in (0.01, 0.1, 1.0):
        for _ in range(3):
            gumbel_max_over_lattice(sample, columns, 20, scale, gumbel_cells(generator, size), no_bits)


def test_scores_beyond_int64_are_exact_and_never_refused():
    """A counted sample of 2^43 + 5 rows: q_int of the leaf node (k = 2), 2^20 · (2^43 · 2 + 5 · 2),
    passes 2^63; it is computed exactly (no overflow, no error that would tell the size), and the
    leaf node (weight 1) beats the root (weight 0) by about ε1 · 2^43 · 2/3."""
    from crowdsafe.selection.search import lattice_scores

    hierarchy = Hierarchy.from_columns("x", ["a", "b"], [["*", "*"]])
    huge = CountedSample(("x",), np.array([[0], [1]], dtype=np.int64), np.array([2**43, 5], dtype=np.int64),
                         {"x": hierarchy})
    _, scores = lattice_scores(huge, ["x"], 2)
    assert [int(q) for q in scores] == [2**20 * (2**43 * 2 + 5 * 2), 0]
    assert choose_scheme(huge, ["x"], 2, 0.1, Randomness(1)).scheme.levels["x"] == 0


def test_an_empty_sample_is_a_uniform_exact_choice():
    hierarchy = Hierarchy.from_columns("x", ["a", "b"], [["*", "*"]])
    data = crowdsafe.data.load(pl.DataFrame({"x": ["a", "b"]})).with_hierarchies({"x": hierarchy})
    empty = data.with_frame(data.frame.head(0))
    chosen = {choose_scheme(empty, ["x"], 2, 1.0, Randomness(seed)).scheme.levels["x"] for seed in range(40)}
    assert chosen == {0, 1}
