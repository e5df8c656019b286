"""data/packing: :func:`~crowdsafe.data.packing.unpack` of many keys runs in Polars, every column
at once (``_unpack_in_parallel``); its twin is the column-by-column division loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import packing

#: The key dtypes and the number of keys each holds.
KEY_LIMITS = {np.uint32: 2.0**32, np.int64: 2.0**63, np.uint64: 2.0**64}


@st.composite
def keyed_columns(draw):
    """Code columns of small and large sizes (2^16 + 1 and up reach the dtype's stride limit),
    and a key dtype that holds every key of their grid."""
    sizes = draw(st.lists(st.integers(1, 9) | st.integers(2**16 - 2, 2**16 + 2), min_size=1, max_size=4))
    n = draw(st.integers(0, 30))
    columns = [np.asarray(draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
               for s in sizes]
    dtype = draw(st.sampled_from([d for d, limit in KEY_LIMITS.items() if packing.fits(sizes, limit)]))
    return columns, sizes, dtype


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=150, deadline=None)
@given(data=keyed_columns())
def test_unpack_in_parallel_gives_the_columns_of_the_division_loop(data):
    """Many keys are unpacked by Polars, every column at once: the same codes, dtype and
    writability as NumPy's column-by-column divisions (uint64 keys stay on NumPy)."""
    columns, sizes, dtype = data
    key = packing.pack(columns, sizes, np.uint64).astype(dtype)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(packing, "PARALLEL_UNPACK_FROM", 10**12)
        by_loop = packing.unpack(key, sizes)
        patch.setattr(packing, "PARALLEL_UNPACK_FROM", 0)
        in_parallel = packing.unpack(key, sizes)
    assert [c.dtype for c in in_parallel] == [c.dtype for c in by_loop] == [np.dtype(dtype)] * len(sizes)
    assert [c.tolist() for c in in_parallel] == [c.tolist() for c in by_loop] == [c.tolist() for c in columns]
    assert all(c.flags.writeable for c in in_parallel)


def test_unpack_switches_to_polars_at_the_threshold(monkeypatch):
    sizes = [5, 3, 7]
    key = packing.pack([np.arange(6) % 5, np.arange(6) % 3, np.arange(6)], sizes, np.int64)
    calls = []
    monkeypatch.setattr(packing, "_unpack_in_parallel", lambda *a: calls.append(a) or [])
    monkeypatch.setattr(packing, "PARALLEL_UNPACK_FROM", 7)
    packing.unpack(key, sizes)
    assert not calls
    monkeypatch.setattr(packing, "PARALLEL_UNPACK_FROM", 6)
    packing.unpack(key, sizes)
    assert len(calls) == 1
    # a weight past the dtype's range (2^32 in uint32 keys) keeps the division loop
    packing.unpack(np.zeros(6, dtype=np.uint32), [1, 2**16, 2**16])
    assert len(calls) == 1
