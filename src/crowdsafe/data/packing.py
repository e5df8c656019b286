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

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["bit_shifts", "division_dtype", "fits", "pack", "pack_bits", "span", "strides", "unpack"]


def span(sizes: Sequence[int]) -> float:
    """Π max(s_j, 1), the number of keys, as a float (a product past the floats is infinity)."""
    total = math.prod(max(int(s), 1) for s in sizes)  # exact; a few sizes, as fast as NumPy's
    try:
        return float(total)
    except OverflowError:
        return math.inf


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
    place (codes of another integer type are cast in the ufunc's buffer, not copied); the first
    column's multiply makes the key array, so d columns take 2d − 2 passes over the rows."""
    if not len(columns):
        return np.zeros(0, dtype=dtype)
    radix = np.dtype(dtype).type
    if len(columns) == 1:
        return np.asarray(columns[0]).astype(dtype)
    key: np.ndarray = np.multiply(columns[0], radix(max(int(sizes[1]), 1)), dtype=dtype, casting="unsafe")
    last = len(columns) - 1
    for j in range(1, len(columns)):
        values = columns[j]
        if values.dtype == key.dtype:
            key += values
        else:
            np.add(key, values, out=key, dtype=key.dtype, casting="unsafe")
        if j < last:
            key *= radix(max(int(sizes[j + 1]), 1))
    return key


def division_dtype(sizes: Sequence[int]) -> type[np.integer[Any]]:
    """The narrowest integer type holding every key of the grid of ``sizes`` (from the exact
    product): uint32, else int64, else uint64. Integer division, which :func:`unpack` does once
    per column, is several times faster on 32-bit (and signed 64-bit) integers than on unsigned
    64-bit ones."""
    keys = math.prod(max(int(s), 1) for s in sizes)
    return np.uint32 if keys <= 2**32 else np.int64 if keys <= 2**63 else np.uint64


#: From this many keys on, :func:`unpack` runs in Polars, every column at once on every core.
PARALLEL_UNPACK_FROM = 1 << 20


def unpack(keys: np.ndarray, sizes: Sequence[int], dtype: type | None = None) -> list[np.ndarray]:
    """The code columns of ``keys`` (the inverse of :func:`pack`), in the keys' dtype, or in
    ``dtype`` when given (the keys are cast to it first; :func:`division_dtype` is the fastest
    that holds them). Many uint32 or int64 keys are unpacked by :func:`_unpack_in_parallel`,
    the same integers."""
    remainder = keys if dtype is None else np.asarray(keys).astype(dtype)
    radix = remainder.dtype.type
    if len(remainder) >= PARALLEL_UNPACK_FROM and remainder.dtype in (np.uint32, np.int64):
        weights = [int(w) for w in strides(sizes)]
        if max(weights, default=1) <= np.iinfo(remainder.dtype).max:
            return _unpack_in_parallel(remainder, sizes, weights)
    columns = []
    for size in reversed(list(sizes)):
        r = radix(max(int(size), 1))
        quotient = remainder // r  # one division per column; the code is what it leaves
        columns.append(remainder - quotient * r)
        remainder = quotient
    columns.reverse()
    return columns


def _unpack_in_parallel(keys: np.ndarray, sizes: Sequence[int], weights: Sequence[int]) -> list[np.ndarray]:
    """:func:`unpack` as ``(key // strides[j]) % sizes[j]`` for every column j, independent of
    each other, so Polars computes them side by side (about 2.7x NumPy's column-by-column
    divisions for 20M uint32 keys on two cores)."""
    import polars as pl

    dtype = pl.Series(keys[:0]).dtype
    frame = pl.DataFrame({"key": keys}).select(
        ((pl.col("key") // weight) % max(int(size), 1)).cast(dtype).alias(str(j))
        for j, (weight, size) in enumerate(zip(weights, sizes)))
    return [frame.get_column(str(j)).to_numpy(writable=True) for j in range(len(sizes))]


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
