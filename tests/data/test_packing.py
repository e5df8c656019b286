"""Mixed-radix packing (crowdsafe.data.packing): the one key every group-by over code columns uses."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import packing


@st.composite
def code_columns(draw):
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4))
    n = draw(st.integers(0, 30))
    columns = [np.asarray(draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
               for s in sizes]
    return columns, sizes


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=200, deadline=None)
@given(data=code_columns(), dtype=st.sampled_from([np.int64, np.uint64]))
def test_pack_is_the_mixed_radix_number_and_unpack_inverts_it(data, dtype):
    columns, sizes = data
    key = packing.pack(columns, sizes, dtype)
    assert key.dtype == dtype
    strides = packing.strides(sizes)
    expected = sum(c * int(w) for c, w in zip(columns, strides)) if len(columns[0]) else np.zeros(0)
    assert key.astype(np.int64).tolist() == np.asarray(expected, dtype=np.int64).tolist()
    back = packing.unpack(key, sizes)
    assert [b.astype(np.int64).tolist() for b in back] == [c.tolist() for c in columns]


def test_keys_sort_as_the_tuples_and_cover_the_grid():
    sizes = [3, 1, 4]
    grid = list(itertools.product(*[range(s) for s in sizes]))
    columns = [np.array([t[j] for t in grid], dtype=np.int64) for j in range(len(sizes))]
    assert packing.pack(columns, sizes).tolist() == list(range(len(grid)))
    assert packing.span(sizes) == 12.0


def test_fits_and_wide_unsigned_keys():
    assert packing.fits([2**31, 2**31])
    assert not packing.fits([2**32, 2**31])
    assert packing.fits([2**32, 2**31], 2.0**64)
    high = np.array([2**40 + 3], dtype=np.int64)
    key = packing.pack([high, np.array([5])], [2**41, 2**22], np.uint64)  # above 2^63: exact in uint64
    assert int(key[0]) == (2**40 + 3) * 2**22 + 5
    assert [int(c[0]) for c in packing.unpack(key, [2**41, 2**22])] == [2**40 + 3, 5]


@pytest.mark.parametrize("codes_dtype", [np.uint8, np.uint32, np.int64])
def test_codes_of_any_integer_type_pack_alike(codes_dtype):
    columns = [np.array([1, 2, 0], dtype=codes_dtype), np.array([4, 0, 3], dtype=codes_dtype)]
    assert packing.pack(columns, [3, 5]).tolist() == [9, 10, 3]
    assert packing.pack(columns, [3, 5], np.uint64).tolist() == [9, 10, 3]


def test_division_dtype_is_the_narrowest_that_holds_every_key_and_unpack_divides_in_it():
    assert packing.division_dtype([2**16, 2**16]) is np.uint32
    assert packing.division_dtype([2**16, 2**16 + 1]) is np.int64
    assert packing.division_dtype([2**32, 2**31]) is np.int64
    assert packing.division_dtype([2**32, 2**31 + 1]) is np.uint64
    sizes = [7, 1, 300]
    columns = [np.array([6, 0, 3]), np.array([0, 0, 0]), np.array([299, 5, 0])]
    key = packing.pack(columns, sizes, np.uint64)
    back = packing.unpack(key, sizes, packing.division_dtype(sizes))
    assert all(b.dtype == np.uint32 for b in back)
    assert [b.tolist() for b in back] == [c.tolist() for c in columns]
