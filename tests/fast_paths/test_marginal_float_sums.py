"""The ``marginals`` scorer's group errors summed in float64 (marginal_tables._group_errors_in_floats)
against the int64 sums (_group_errors, the reference twin) on the same cells, and the bound that
routes a marginal to the floats: below it every sum is exact; above it the float sums can be
wrong, so the guard is needed (a broken variant without it is caught)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.selection.marginal_tables import _group_errors, _group_errors_in_floats, floats_are_exact


@st.composite
def cells_in_groups(draw):
    """Cells (their rows), repeated in each of a few level combinations, each combination's
    cells in groups of a range of its own; a group's cover at least the cells it holds."""
    truth = np.array(draw(st.lists(st.integers(1, 10**6), min_size=1, max_size=30)), dtype=np.int64)
    combinations = draw(st.integers(1, 4))
    member, cover, groups = [], [], 0
    for _ in range(combinations):
        count = draw(st.integers(1, len(truth)))
        group = np.array([draw(st.integers(0, count - 1)) for _ in truth], dtype=np.int64)
        held = np.bincount(group, minlength=count)
        size = np.array([held[g] + draw(st.integers(0, 50)) for g in range(count)], dtype=np.int64)
        member.append(group + groups)
        cover.append(size[group])
        groups += count
    return truth, np.concatenate(member), np.concatenate(cover), groups, combinations


@settings(max_examples=60, deadline=None)
@given(case=cells_in_groups())
def test_float_sums_equal_the_int64_sums(case):
    truth, member, cover, groups, combinations = case
    assert floats_are_exact(cover, truth)
    fast = _group_errors_in_floats(member, truth, cover, groups, combinations)
    twin = _group_errors(member, np.tile(truth, combinations), cover, groups)
    for got, expected in zip(fast, twin):
        assert got.dtype == np.int64 and got.tolist() == expected.tolist()


def test_past_the_bound_the_floats_are_wrong_and_declined():
    """Broken variant: the float sums without the guard. Two cells of 2^52 + 1 and 2 rows in one
    group covering three leaf tuples: s · t passes 2^53 and is odd, so float64 rounds it and u_G
    comes out wrong; the guard declines these cells (generalization_table then sums in int64)."""
    truth = np.array([2**52 + 1, 2], dtype=np.int64)
    member = np.zeros(2, dtype=np.int64)
    cover = np.full(2, 3, dtype=np.int64)
    assert not floats_are_exact(cover, truth)
    fast = _group_errors_in_floats(member, truth, cover, 1, 1)
    twin = _group_errors(member, truth, cover, 1)
    assert any(got.tolist() != expected.tolist() for got, expected in zip(fast, twin))


def test_the_guard_is_the_bound_on_every_sum():
    """2 · max(s) · N < 2^53 exactly: just below it accepted, at it declined."""
    rows = 2**40
    below = (2**53 - 1) // (2 * rows)
    truth = np.array([rows], dtype=np.int64)
    assert floats_are_exact(np.array([below]), truth)
    assert not floats_are_exact(np.array([below + 1]), truth)
