"""Small NumPy building blocks shared by several layers.

Several come in two twins that give the same result: a table of every possible integer key
(fast while the keys' ``span`` is small, :func:`fits_a_table`) and a sort (the reference twin,
memory bounded by the keys).
"""

from __future__ import annotations

import numpy as np

TABLE_PER_KEY = 4  # a table of every possible key is used while it has at most this many slots per key
TABLE_FLOOR = 1 << 16  # ... or at most this many slots in all
#: From this many integers on, :func:`sorted_integers` sorts with Polars (on every core) rather
#: than NumPy (one core): the same values, about 1.4x faster from twenty thousand integers on
#: (2.5x at 6M) on two cores here.
PARALLEL_SORT_FROM = 1 << 15
#: Below this many keys with a known bound, :func:`sort_with_order` runs 16-bit radix passes
#: (:func:`_radix_order`): 2-5x faster than the packed sort from ten thousand to a hundred
#: thousand keys here, still faster at a million.
RADIX_BELOW = 1 << 20
#: Below this many integers with a known bound, :func:`sorted_unique` sorts them by radix passes
#: too; from there on Polars' sort (:func:`sorted_integers`) is as fast or faster.
RADIX_UNIQUE_BELOW = 1 << 17
_DIGIT = 0xFFFF


def fits_a_table(span: int, n: int) -> bool:
    """Whether ``n`` keys below ``span`` are handled by a table of the span rather than a sort."""
    return span <= TABLE_PER_KEY * n + TABLE_FLOOR


def sorted_unique(values: np.ndarray, universe: int | None = None) -> np.ndarray:
    """The distinct values, sorted: a sort and a comparison (NumPy 2.4's ``np.unique`` hashes
    large integer arrays, many times slower), :func:`_unique_by_sort`. ``universe``: when given,
    the values are integers in ``[0, universe)``, marked in a table of the universe instead when
    it is not much larger than the values (:func:`_unique_by_table`)."""
    if universe is not None and fits_a_table(universe, len(values)):
        return _unique_by_table(values, universe)
    return _unique_by_sort(values, universe)


def _unique_by_table(values: np.ndarray, universe: int) -> np.ndarray:
    """:func:`sorted_unique` of integers in ``[0, universe)`` by a table of the universe."""
    present = np.zeros(universe, dtype=bool)
    present[values] = True
    return np.flatnonzero(present)


def sorted_integers(values: np.ndarray) -> np.ndarray:
    """``np.sort(values)`` (a new array): by Polars' parallel sort for at least
    :data:`PARALLEL_SORT_FROM` integers, by NumPy below (where a Polars call costs more than it
    saves) and for any other dtype. The sorted values are the same either way."""
    if len(values) >= PARALLEL_SORT_FROM and values.dtype.kind in "iu":
        import polars as pl

        return pl.Series(values).sort().to_numpy(writable=True)
    return np.sort(values)


def _unique_by_sort(values: np.ndarray, universe: int | None = None) -> np.ndarray:
    """:func:`sorted_unique` by a sort and a comparison of neighbours (by radix passes when
    the values are fewer than :data:`RADIX_BELOW` integers below a known ``universe``)."""
    ordered = _sorted(values, universe)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def _sorted(values: np.ndarray, universe: int | None) -> np.ndarray:
    """``np.sort(values)``: by radix passes for fewer than :data:`RADIX_UNIQUE_BELOW` integers
    below a known ``universe``, else :func:`sorted_integers`."""
    if universe is not None and len(values) < RADIX_UNIQUE_BELOW and values.dtype.kind in "iu":
        return values[_radix_order(values.astype(np.int64, copy=False), universe)]
    return sorted_integers(values)


def unique_counts(values: np.ndarray, universe: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_counts=True)`` for integers, by a sort and the runs of equal
    values (NumPy 2.4's ``np.unique`` hashes: several times slower on many integers here).
    ``universe``: when given, the values lie in ``[0, universe)``."""
    ordered = _sorted(values, universe)
    if len(ordered) == 0:
        return ordered, np.zeros(0, dtype=np.int64)
    new = np.empty(len(ordered), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return ordered[starts], np.diff(starts, append=len(ordered)).astype(np.int64)


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
    when the span is small (:func:`fits_a_table`), else by one sort."""
    keys = keys.astype(np.int64, copy=False)
    if fits_a_table(span, len(keys)):
        return _unique_inverse_by_table(keys, span)
    return _unique_inverse_by_sort(keys, span)


def _unique_inverse_by_table(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_inverse` by a table of every possible key (int64 ``keys``)."""
    present = np.zeros(span, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present, dtype=np.int64) - 1
    return np.flatnonzero(present), rank[keys]


def _unique_inverse_by_sort(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`unique_inverse` by one sort (int64 ``keys``)."""
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
    NumPy does several times faster than an argsort. Below :data:`RADIX_BELOW` keys, faster
    still: 16-bit radix passes (:func:`_sort_by_radix`). All three give the same arrays (a
    stable order is unique)."""
    n = len(keys)
    if n < RADIX_BELOW:
        return _sort_by_radix(keys, span)
    shift = max(n - 1, 0).bit_length()  # every position is below 2**shift
    if span > 1 << (63 - shift):
        return _sort_by_argsort(keys)
    return _sort_packed(keys, shift)


def _sort_by_argsort(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sort_with_order` by NumPy's stable argsort (the reference twin)."""
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def _sort_by_radix(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sort_with_order` by :func:`_radix_order`."""
    keys = keys.astype(np.int64, copy=False)
    order = _radix_order(keys, span)
    return keys[order], order


def _radix_order(keys: np.ndarray, span: int) -> np.ndarray:
    """The stable order that sorts non-negative int64 ``keys`` below ``span``: a least
    significant digit radix sort, 16 bits a pass, each pass NumPy's stable argsort of uint16
    digits (a counting sort in NumPy, linear). A pass keeps the order of equal digits, so after
    the pass on the top digit the keys are sorted, and equal keys keep their positions' order:
    the stable order, ``np.argsort(keys, kind="stable")``."""
    order = np.argsort((keys & _DIGIT).astype(np.uint16), kind="stable")
    shift = 16
    while (span - 1) >> shift > 0:
        digit = ((keys[order] >> shift) & _DIGIT).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def _sort_packed(keys: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sort_with_order` with each key and its position (below ``2**shift``) packed into
    one int64, sorted as plain integers (the keys below ``2**(63 - shift)``)."""
    n = len(keys)
    packed = keys.astype(np.int64) << shift
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    return packed >> shift, packed & ((1 << shift) - 1)


def stable_argsort(keys: np.ndarray, span: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of non-negative integer keys below ``span``
    (:func:`sort_with_order`)."""
    return sort_with_order(keys, span)[1]
