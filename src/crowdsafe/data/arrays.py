"""Small NumPy building blocks shared by several layers."""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray, universe: int | None = None) -> np.ndarray:
    """The distinct values, sorted: a sort and a comparison (NumPy 2.4's ``np.unique`` hashes
    large integer arrays, many times slower). ``universe``: when given, the values are integers
    in ``[0, universe)``, marked in a table of the universe instead when it is not much larger
    than the values."""
    if universe is not None and universe <= 4 * len(values) + (1 << 16):
        present = np.zeros(universe, dtype=bool)
        present[values] = True
        return np.flatnonzero(present)
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def segments(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenated ranges ``starts[i] .. starts[i] + counts[i] - 1``."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(total, dtype=np.int64)


def unique_inverse(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys`` (non-negative integers below ``span``), sorted, and each key's
    index among them: ``np.unique(keys, return_inverse=True)`` by a table of every possible key
    when the span is small, else by one sort."""
    keys = keys.astype(np.int64, copy=False)
    if span <= 4 * len(keys) + (1 << 16):
        present = np.zeros(span, dtype=bool)
        present[keys] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present), rank[keys]
    order = np.argsort(keys)
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(new, dtype=np.int64) - 1
    return ordered[new], inverse
