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
    ordered, order = sort_with_order(keys, span)
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(new, dtype=np.int64) - 1
    return ordered[new], inverse


def sort_with_order(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-negative integer ``keys`` (below ``span``) sorted, and the stable order that
    sorts them (``np.argsort(keys, kind="stable")``). When each key and its position fit in
    63 bits together, they are packed into one integer and sorted as plain integers, which
    NumPy does several times faster than an argsort."""
    n = len(keys)
    shift = max(n - 1, 0).bit_length()  # every position is below 2**shift
    if span > 1 << (63 - shift):
        order = np.argsort(keys, kind="stable")
        return keys[order], order
    packed = keys.astype(np.int64) << shift
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    return packed >> shift, packed & ((1 << shift) - 1)


def stable_argsort(keys: np.ndarray, span: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of non-negative integer keys below ``span``
    (:func:`sort_with_order`)."""
    return sort_with_order(keys, span)[1]
