"""data/arrays: table twins (while :func:`fits_a_table`) and sort twins give the same result;
:func:`sort_with_order` sorts few keys by 16-bit radix passes, more by packing key and position
into one integer while they fit in 63 bits, else argsorts; :func:`sorted_integers` sorts many
integers with Polars, the same values as NumPy; :func:`unique_counts` is ``np.unique`` with counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import arrays


@st.composite
def keys_below(draw):
    span = draw(st.integers(1, 300))
    keys = draw(st.lists(st.integers(0, span - 1), max_size=80))
    return np.array(keys, dtype=np.int64), span


@settings(max_examples=200, deadline=None)
@given(keys_below())
def test_table_and_sort_twins_agree(case):
    keys, span = case
    distinct, inverse = np.unique(keys, return_inverse=True)
    for got in (arrays._unique_by_table(keys, span), arrays._unique_by_sort(keys)):
        assert got.tolist() == distinct.tolist()
    for got, got_inverse in (arrays._unique_inverse_by_table(keys, span), arrays._unique_inverse_by_sort(keys, span)):
        assert got.tolist() == distinct.tolist()
        assert got_inverse.tolist() == inverse.reshape(-1).tolist()


@settings(max_examples=200, deadline=None)
@given(keys_below())
def test_packed_sort_and_argsort_agree(case):
    keys, _ = case
    order = np.argsort(keys, kind="stable")
    shift = max(len(keys) - 1, 0).bit_length()
    for ordered, got in (arrays._sort_packed(keys, shift), arrays._sort_by_argsort(keys)):
        assert got.tolist() == order.tolist()
        assert ordered.tolist() == keys[order].tolist()


@st.composite
def wide_keys(draw):
    bits = draw(st.sampled_from([1, 8, 16, 17, 31, 32, 33, 48, 49, 62, 63]))
    span = draw(st.integers(1, 2**bits))
    keys = draw(st.lists(st.integers(0, span - 1) | st.sampled_from([0, span - 1]), max_size=80))
    return np.array(keys, dtype=np.int64), span


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=300, deadline=None)
@given(wide_keys())
def test_radix_sort_is_the_stable_argsort(case):
    """The radix twin gives NumPy's stable order for keys of every width (1 to 4 passes), and
    the sorted keys; :func:`sorted_unique` by it gives the distinct keys."""
    keys, span = case
    order = np.argsort(keys, kind="stable")
    ordered, got = arrays._sort_by_radix(keys, span)
    assert got.tolist() == order.tolist()
    assert ordered.tolist() == keys[order].tolist()
    assert arrays._unique_by_sort(keys, span).tolist() == np.unique(keys).tolist()
    assert arrays._unique_by_sort(keys.astype(np.uint64), span).dtype == np.uint64
    expected, counts = np.unique(keys, return_counts=True)
    for universe in (span, None):
        got, got_counts = arrays.unique_counts(keys, universe)
        assert got.tolist() == expected.tolist() and got_counts.tolist() == counts.tolist()


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_radix_switch(monkeypatch, shift):
    keys = np.array([5, 3, 5, 0, 3, 1], dtype=np.int64)
    monkeypatch.setattr(arrays, "RADIX_BELOW", len(keys) + shift)
    monkeypatch.setattr(arrays, "RADIX_UNIQUE_BELOW", len(keys) + shift)
    calls = []
    real = arrays._radix_order
    monkeypatch.setattr(arrays, "_radix_order", lambda k, s: calls.append(len(k)) or real(k, s))
    ordered, order = arrays.sort_with_order(keys, 6)
    assert order.tolist() == np.argsort(keys, kind="stable").tolist() and ordered.tolist() == sorted(keys)
    assert arrays.sorted_unique(keys, 1 << 40).tolist() == [0, 1, 3, 5]
    assert calls == ([len(keys)] * 2 if shift > 0 else [])


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_table_switch(monkeypatch, shift):
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 40, 25)
    span = 40  # the rule: 40 <= 0 * 25 + floor
    monkeypatch.setattr(arrays, "TABLE_PER_KEY", 0)
    monkeypatch.setattr(arrays, "TABLE_FLOOR", span + shift)
    distinct, inverse = np.unique(keys, return_inverse=True)
    assert arrays.sorted_unique(keys, span).tolist() == distinct.tolist()
    got, got_inverse = arrays.unique_inverse(keys, span)
    assert got.tolist() == distinct.tolist() and got_inverse.tolist() == inverse.tolist()


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_packing_switch(monkeypatch, shift):
    monkeypatch.setattr(arrays, "RADIX_BELOW", 0)
    n = 5  # positions below 2**3: packed while the span is at most 2**60
    limit = 1 << 60
    keys = np.array([limit - 2, 3, limit - 2, 0, 3], dtype=np.int64)
    ordered, order = arrays.sort_with_order(keys, limit + shift)
    expected = np.argsort(keys, kind="stable")
    assert len(keys) == n and order.tolist() == expected.tolist() and ordered.tolist() == keys[expected].tolist()


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.integers(-(2**63), 2**64 - 1), max_size=60),
       dtype=st.sampled_from([np.int64, np.uint64, np.uint32, np.int32]))
def test_parallel_sort_gives_numpys_sorted_values(values, dtype):
    """:func:`sorted_integers` sorts many integers with Polars: the same values and dtype as
    ``np.sort``, in a writable array; and so :func:`sorted_unique` is unchanged."""
    info = np.iinfo(dtype)
    keys = np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrays, "PARALLEL_SORT_FROM", 0)
        got = arrays.sorted_integers(keys)
        unique = arrays.sorted_unique(keys)
    assert got.dtype == keys.dtype and got.flags.writeable
    assert got.tolist() == np.sort(keys).tolist()
    assert unique.tolist() == np.unique(keys).tolist()


def test_parallel_sort_only_for_many_integers(monkeypatch):
    monkeypatch.setattr(arrays, "PARALLEL_SORT_FROM", 3)
    floats = np.array([2.5, float("nan"), -1.0])
    assert arrays.sorted_integers(floats).tolist()[:2] == [-1.0, 2.5]  # NumPy's: NaN last
    import polars as pl

    calls = []
    real = pl.Series.sort
    monkeypatch.setattr(pl.Series, "sort", lambda self, *a, **k: calls.append(len(self)) or real(self, *a, **k))
    assert arrays.sorted_integers(np.array([3, 1], dtype=np.int64)).tolist() == [1, 3]
    assert not calls
    assert arrays.sorted_integers(np.array([3, 1, 2], dtype=np.int64)).tolist() == [1, 2, 3]
    assert calls == [3]
