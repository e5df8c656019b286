"""data/encoding._encode_integers: integer columns by a look-up table of their span (span below
_DIRECT_SPAN) or by sorting: the same dictionary and the same code on every non-null row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import encoding


@st.composite
def integer_columns(draw):
    values = np.array(draw(st.lists(st.integers(-50, 50), min_size=1, max_size=60)), dtype=np.int64)
    nulls = np.array(draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))))
    return values, (nulls if draw(st.booleans()) and not nulls.all() else None)


@settings(max_examples=200, deadline=None)
@given(integer_columns())
def test_lookup_and_sort_encode_alike(case):
    values, nulls = case
    valid = values if nulls is None else values[~nulls]
    low, high = int(valid.min()), int(valid.max())
    codes, dictionary = encoding._encode_by_lookup(values, nulls, low, high)
    other_codes, other_dictionary = encoding._encode_by_sort(values, valid)
    rows = np.ones(len(values), dtype=bool) if nulls is None else ~nulls
    assert dictionary.tolist() == other_dictionary.tolist() == sorted(set(valid.tolist()))
    assert codes[rows].tolist() == other_codes[rows].tolist()
    assert codes.dtype == other_codes.dtype == np.uint32


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_encode_integers_switches_at_the_direct_span(monkeypatch, shift):
    values = np.array([7, 3, 19, 3, 11, 7], dtype=np.int64)  # span 19 − 3 = 16
    monkeypatch.setattr(encoding, "_DIRECT_SPAN", 16 + shift)
    codes, dictionary = encoding._encode_integers(values, None)
    assert dictionary.tolist() == [3, 7, 11, 19]
    assert codes.tolist() == [1, 0, 3, 0, 2, 1]
