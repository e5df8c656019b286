"""Mixed-radix packing of integer code columns into one key per row.

A tuple of codes (c_1, ..., c_d) with c_j in [0, s_j) is the integer

    key = ((c_1 · s_2 + c_2) · s_3 + c_3) · ... · s_d + c_d

(the first column most significant, the last varying fastest), a bijection from the grid
[0, s_1) × ... × [0, s_d) onto [0, Π s_j). Keys sort as the tuples do (lexicographically), so
a group-by, a sort or a dense ranking over the columns is one over a single integer column.
Sizes below 1 count as 1 (an empty column).

With power-of-two radices the packing is one of bit fields: column j takes ``bits[j]`` bits at
``shift[j]`` (:func:`bit_shifts`, :func:`pack_bits`), so a column's code is read back with a shift
and a mask, and raising or clearing one column leaves the others' fields in place.

The key fits a signed 64-bit integer when Π s_j < 2^63 (:func:`fits`); callers fall back to a
group-by over the columns themselves otherwise. This module is the one place the packing is
written; it knows nothing of privacy and reads no table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["bit_shifts", "fits", "pack", "pack_bits", "span", "strides", "unpack"]


def span(sizes: Sequence[int]) -> float:
    """Π max(s_j, 1), the number of keys, as a float (so a huge product does not overflow)."""
    return float(np.prod(np.asarray([max(int(s), 1) for s in sizes], dtype=float)))


def fits(sizes: Sequence[int], limit: float = 2.0**63) -> bool:
    """Whether every key of the grid of ``sizes`` is below ``limit`` (by default: fits int64)."""
    return span(sizes) < limit


def strides(sizes: Sequence[int]) -> np.ndarray:
    """The weight of each column in the key (int64): ``key = Σ c_j · strides[j]``."""
    radices = np.asarray([max(int(s), 1) for s in sizes], dtype=np.int64)
    return np.r_[np.cumprod(radices[::-1])[::-1][1:], 1].astype(np.int64)


def pack(columns: Sequence[np.ndarray], sizes: Sequence[int], dtype: type = np.int64) -> np.ndarray:
    """The key of every row of the code ``columns`` (``columns[j]`` in ``[0, sizes[j])``), as
    ``dtype`` (int64 or uint64; the caller checks :func:`fits`). One multiply-add per column, in
    place (codes of another integer type are cast in the ufunc's buffer, not copied)."""
    n = len(columns[0]) if len(columns) else 0
    key: np.ndarray = np.zeros(n, dtype=dtype)
    radix = np.dtype(dtype).type
    for values, size in zip(columns, sizes):
        key *= radix(max(int(size), 1))
        if values.dtype == key.dtype:
            key += values
        else:
            np.add(key, values, out=key, dtype=key.dtype, casting="unsafe")
    return key


def unpack(keys: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """The code columns of ``keys`` (the inverse of :func:`pack`), in the keys' dtype."""
    radix = keys.dtype.type
    remainder = keys
    columns = []
    for size in reversed(list(sizes)):
        r = radix(max(int(size), 1))
        quotient = remainder // r  # one division per column; the code is what it leaves
        columns.append(remainder - quotient * r)
        remainder = quotient
    columns.reverse()
    return columns


def bit_shifts(bits: Sequence[int]) -> np.ndarray:
    """Where each column's bit field starts (int64) when column j takes ``bits[j]`` bits, the
    first column in the highest bits: the strides of :func:`pack` for radices 2^bits[j]."""
    bits = [int(b) for b in bits]
    return np.r_[np.cumsum(bits[::-1])[::-1][1:], 0].astype(np.int64)


def pack_bits(columns: Iterable[np.ndarray], shifts: Sequence[int], n: int) -> np.ndarray:
    """The int64 key of every one of ``n`` rows with the codes of ``columns`` in bit fields at
    ``shifts`` (each code below 2^its field's width; the caller checks the widths sum to < 63).
    ``columns`` may be a generator: each column is made, placed and dropped in turn."""
    key = np.zeros(n, dtype=np.int64)
    for values, shift in zip(columns, shifts):
        key |= values << shift
    return key
