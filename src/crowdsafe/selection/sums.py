"""Exact sums by group of non-negative integer counts, shared by the objectives' scores and bounds
(:mod:`.score`, :mod:`.bound`, :mod:`.marginal_score`)."""

from __future__ import annotations

import numpy as np


def exact_sums(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Sums of non-negative int64 ``values`` by ``index`` (0 .. size − 1), exact: a float64
    bincount while the total is below 2^53 (every partial sum is then an exact integer), an int64
    scatter-add beyond."""
    if int(values.sum()) < 2**53:
        return np.bincount(index, weights=values, minlength=size).astype(np.int64)
    sums = np.zeros(size, dtype=np.int64)
    np.add.at(sums, index, values)
    return sums


def largest_target_total(target_codes: np.ndarray, values: np.ndarray) -> int:
    """max over target codes y0 of the sum of ``values`` (≥ 0) over the classes with target y0,
    exact: a float64 bincount while the total is below 2^53 (every partial sum is then an exact
    integer), Python integers beyond."""
    codes = np.asarray(target_codes, dtype=np.int64)
    total = int(values.sum())
    if total < 2**53:
        return int(np.bincount(codes, weights=values).max())
    sums: dict[int, int] = {}
    for code, value in zip(codes.tolist(), values.tolist()):  # beyond 2^53 rows only
        sums[code] = sums.get(code, 0) + value
    return max(sums.values())
