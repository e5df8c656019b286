"""selection/bound.children under the classification objective: bounds rolled
up from one dense (G', y) array (while it has at most DENSE_CELLS_PER_ROW cells per row,
bounds_rolled_up) or each child's own table (bounds_of_child_tables). Both are upper bounds on
every node of their block and exact on single nodes, but not always equal; so the twins are
checked by what they must share: the bounds hold (tests/anonymize/test_objectives.py's check),
and the branch and bound returns the same node for the same random bits, with the rule moved so
that each call takes one side or the other."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import tables
from test_objectives import COLUMNS, _block_violations, _brute_force_blocks, _rolled_up_bound, _with_outcome_hierarchy

from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import bound
from crowdsafe.selection import score as objectives
from crowdsafe.selection.gumbel import random_bits
from crowdsafe.selection.search import gumbel_max_over_lattice

LIMITS = (0, 0.5, 1, 2, 3, 4, 6, 1e9)  # cells per row: every call dense, mixed, every call by child tables


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=50, with_shape_hierarchy=True), k=st.integers(2, 4),
       seed=st.integers(0, 2**31))
@pytest.mark.slow
def test_either_bound_holds_and_the_search_returns_the_same_node(data, k, seed):
    data = _with_outcome_hierarchy(data)
    objective = objectives.make_objective("classification", "outcome")
    chosen = set()
    blocks = _brute_force_blocks(data, k)  # the brute force reads no rule: one for the eight limits
    old = bound.DENSE_CELLS_PER_ROW
    try:
        for limit in LIMITS:
            bound.DENSE_CELLS_PER_ROW = limit
            assert _block_violations(data, k, _rolled_up_bound, blocks) == []
            cells = gumbel_cells(Randomness(seed).generator, 1 << 12)
            _, index, _ = gumbel_max_over_lattice(data, COLUMNS, k, 0.3, cells[:1 << 12], random_bits(Randomness(seed)),
                                                  objective)
            chosen.add(index)
    finally:
        bound.DENSE_CELLS_PER_ROW = old
    assert len(chosen) == 1
