"""Functions that pack integer columns into one 64-bit key while ``packing.fits`` (else work on
the columns), and number distinct keys by a table while the span is small (else by a sort). With
``packing.fits`` forced false, and on spans around the table rule, each gives what the reference
(NumPy's unique over the rows) gives. (The copies of these switches are being merged into
data/packing and data/arrays by another change; these tests hold for both.)"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize import counted
from crowdsafe.attacks import locate
from crowdsafe.data import packing

# the package exports a function of that name
information_loss = importlib.import_module("crowdsafe.metrics.information_loss")


@st.composite
def columns_and_sizes(draw):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    n = draw(st.integers(1, 40))
    return [np.array(draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
            for s in sizes], sizes


def reference(columns):
    distinct, ids = np.unique(np.column_stack(columns), axis=0, return_inverse=True)
    return ids.reshape(-1).tolist(), len(distinct)


@settings(max_examples=100, deadline=None)
@given(columns_and_sizes(), st.booleans())
def test_packed_and_column_paths_agree(case, packed):
    columns, sizes = case
    expected = reference(columns)
    with pytest.MonkeyPatch.context() as patch:
        if not packed:
            patch.setattr(packing, "fits", lambda sizes, limit=2.0**63: False)
        for function in (locate.group_ids, information_loss._class_ids):
            ids, m = function(columns, sizes)
            assert (np.asarray(ids).tolist(), m) == expected, function.__name__
        codes = np.unique(np.column_stack(columns), axis=0)[::-1]  # distinct rows, reversed
        order = counted._lexicographic_order(codes, sizes)
        assert codes[order].tolist() == sorted(codes.tolist())


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_dense_codes_and_distinct_switch_at_their_spans(extra):
    rng = np.random.default_rng(8)
    n = 10
    # locate._dense_codes: a table while the span is at most 4n + 1024
    span = 4 * n + 1024 + extra
    ids = np.append(rng.integers(0, span - 1, n - 1), span - 1)
    codes, m = locate._dense_codes(ids)
    distinct, inverse = np.unique(ids, return_inverse=True)
    assert (codes.tolist(), m) == (inverse.tolist(), len(distinct))
    # counted._distinct: a table while the span is at most 4n + 2^16
    span = 4 * n + (1 << 16) + extra
    present, position = counted._distinct(ids % span, span)
    distinct, inverse = np.unique(ids % span, return_inverse=True)
    assert present.tolist() == distinct.tolist() and position.tolist() == inverse.tolist()
