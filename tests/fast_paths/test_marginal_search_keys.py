"""The ``marginals`` search hands each child block the keys its parent just made for it
(MarginalSearch._visit's ``node_keys``) instead of making them again: the same floats, since no
floor rises between the two. Its twin makes every block's keys afresh; both must score the same
nodes in the same order, raise the same floors and choose the same node. A variant that hands
down keys made before the parent's projection raised the floors is caught (it opens more blocks)."""

from __future__ import annotations

import numpy as np
from test_marginal_objective import COLUMNS, _random_table

from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import marginal_score
from crowdsafe.selection.marginal_score import MarginalScorer, MarginalSearch, marginal_search_order
from crowdsafe.selection.score import make_objective


class Afresh(MarginalSearch):
    """The reference twin: every block's keys made from the floors when it is visited."""

    def _visit(self, attribute, source, index, node_keys=None):
        super()._visit(attribute, source, index, None)


class Stale(MarginalSearch):
    """Broken variant: each child gets its keys as they were before its parent's projection
    raised the floors (the floors the search learns are ignored for the first bound)."""

    def _visit(self, attribute, source, index, node_keys=None):
        stale = self.__dict__.setdefault("stale", {})
        if attribute + 1 < len(self.heights):
            block = self.strides[attribute]
            before = self.keys(index, (self.heights[attribute] + 1) * block)
            for level in range(self.heights[attribute] + 1):
                stale[attribute + 1, index + level * block] = before[level * block:(level + 1) * block]
        super()._visit(attribute, source, index, stale.get((attribute, index)))


def _searches(seed: int, kind) -> list[tuple[list[tuple[int, int]], list[int]]]:
    """(nodes scored, floors after the search) at three scales on a random table."""
    rng = np.random.default_rng(seed)
    data = _random_table(rng, int(rng.integers(100, 400)))
    k = int(rng.integers(2, 6))
    columns = [COLUMNS[j] for j in marginal_search_order([data.hierarchies[c] for c in COLUMNS])]
    generator = Randomness(seed).generator
    found = []
    for scale in (1.0, 30.0, 3000.0):
        scorer = MarginalScorer(data, columns, k, make_objective("marginals"))
        search = kind(scorer, scale, gumbel_cells(generator, scorer.lattice.size))
        search.run()
        found.append((list(search.scored), search.floor.tolist()))
    return found


def test_handed_down_keys_search_as_keys_made_afresh():
    for seed in range(6):
        assert _searches(seed, MarginalSearch) == _searches(seed, Afresh)


def test_keys_made_before_the_floors_rose_are_caught():
    assert any(_searches(seed, Stale) != _searches(seed, Afresh) for seed in range(6))


def test_the_search_hands_keys_down():
    """The fast path is taken: some visit gets its parent's keys."""
    handed = []
    real = MarginalSearch._visit

    def spy(self, attribute, source, index, node_keys=None):
        handed.append(node_keys is not None)
        real(self, attribute, source, index, node_keys)

    MarginalSearch._visit = spy
    try:
        _searches(0, MarginalSearch)
    finally:
        MarginalSearch._visit = real
    assert any(handed) and marginal_score.MarginalSearch._visit is real
