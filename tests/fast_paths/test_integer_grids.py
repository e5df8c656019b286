"""Values rounded to an integer grid are int64 while every multiple is below _INT64_SAFE, else
Python integers (object arrays): the same integers either way (mechanisms/discretization.to_grid;
the exponential mechanism's gaps are in test_exponential_paths.py)."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.mechanisms import discretization


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_to_grid_gives_the_same_integers_on_both_sides(monkeypatch, shift):
    values = np.array([3.0, -7.25, 0.5, 12.0])
    step = 0.25
    expected = [12, -29, 2, 48]
    monkeypatch.setattr(discretization, "_INT64_SAFE", 48 + shift)  # the largest |multiple| is 48
    grid = discretization.to_grid(values, step)
    assert grid.dtype == (np.int64 if 48 < 48 + shift else object)
    assert [int(v) for v in grid] == expected
    assert discretization.from_grid(grid, step).tolist() == [3.0, -7.25, 0.5, 12.0]
