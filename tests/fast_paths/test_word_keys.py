"""selection/words.WordKeys (wide keys as int64 words) against the same keys as Python integers
in object arrays (the reference twin of selection/tables.py): every operation the keyed tables
use gives the same integers, the same comparisons and the same stable order, for layouts of
2, 3 and more words, words up to 62 bits (the two-pass rank fallback of stable_order) and total
widths just past 62, 64 and 126 bits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.data import packing
from crowdsafe.selection import words
from crowdsafe.selection.words import WordKeys, dense_ranks, field_of, neighbours_differ, stable_order, with_field_of


@st.composite
def keyed(draw, total: int | None = None):
    """(bits per column, shifts, int64 code columns, the layout's word width): codes drawn from few
    values so that keys repeat (runs, ties for the stable order)."""
    if total is None:
        bits = draw(st.lists(st.integers(1, 40), min_size=2, max_size=9))
    else:  # columns summing to exactly ``total`` bits
        bits = []
        while sum(bits) < total:
            bits.append(min(draw(st.integers(8, 30)), total - sum(bits)))
    n = draw(st.integers(0, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    columns = []
    for b in bits:
        values = rng.integers(0, 1 << b, draw(st.integers(1, 4)), dtype=np.int64, endpoint=False)
        columns.append(values[rng.integers(0, len(values), n)])
    word_bits = draw(st.sampled_from([max(bits), 40, 62]))
    return bits, [int(s) for s in packing.bit_shifts(bits)], columns, word_bits


def _objects(columns, shifts, n):
    keys = np.zeros(n, dtype=object)
    for values, shift in zip(columns, shifts):
        keys |= values.astype(object) << shift
    return keys


def _as_objects(keys):
    return keys.to_objects() if isinstance(keys, WordKeys) else keys.astype(object)


def _packed(bits, shifts, columns, word_bits, monkeypatch):
    monkeypatch.setattr(words, "WORD_BITS", word_bits)
    n = len(columns[0])
    return WordKeys.pack(columns, shifts, bits, n), _objects(columns, shifts, n)


@pytest.mark.parametrize("total", [None, 63, 65, 127])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_word_keys_are_the_python_integers(total, data, monkeypatch):
    bits, shifts, columns, word_bits = data.draw(keyed(total))
    packed, reference = _packed(bits, shifts, columns, word_bits, monkeypatch)
    assert all(width <= max(word_bits, max(bits)) for width in packed.widths)
    assert _as_objects(packed).tolist() == reference.tolist()
    n = len(reference)
    # fields, replaced fields
    for j, (b, shift) in enumerate(zip(bits, shifts)):
        assert field_of(packed, shift, b).tolist() == field_of(reference, shift, b).tolist() == columns[j].tolist()
        codes = columns[j][::-1].copy()
        assert _as_objects(with_field_of(packed, shift, b, codes)).tolist() == \
            with_field_of(reference, shift, b, codes).tolist()
    # masks at column boundaries (a projection, a cleared field) and arbitrary ones, negative too
    total_bits = sum(bits)
    masks = [~((1 << shift) - 1) for shift in shifts] + [~(((1 << b) - 1) << s) for b, s in zip(bits, shifts)]
    masks += [data.draw(st.integers(-(1 << (total_bits + 2)), 1 << (total_bits + 2))) for _ in range(3)]
    for mask in masks:
        cleared = packed & mask
        assert _as_objects(cleared).tolist() == (reference & mask).tolist()
        assert neighbours_differ(cleared).tolist() == (reference & mask)[1:].__ne__((reference & mask)[:-1]).tolist()
        for j, (b, shift) in enumerate(zip(bits, shifts)):  # a cleared word comes back to life
            assert _as_objects(with_field_of(cleared, shift, b, columns[j])).tolist() == \
                with_field_of(reference & mask, shift, b, columns[j]).tolist()
    # shifts at column boundaries and anywhere
    for shift in [*shifts, *(s + b for s, b in zip(shifts, bits)), *data.draw(st.lists(st.integers(0, total_bits + 3),
                                                                                     max_size=3))]:
        assert _as_objects(packed >> shift).tolist() == (reference >> shift).tolist()
        assert _as_objects((packed & masks[0]) >> shift).tolist() == ((reference & masks[0]) >> shift).tolist()
    # order, runs, ranks, gathers
    order = stable_order(packed)
    assert order.tolist() == np.argsort(reference, kind="stable").tolist()
    assert neighbours_differ(packed).tolist() == (reference[1:] != reference[:-1]).tolist()
    assert dense_ranks(packed).tolist() == np.unique(reference, return_inverse=True)[1].reshape(-1).tolist()
    index = np.arange(n)[::2]
    assert _as_objects(packed[index]).tolist() == reference[index].tolist()
    assert len(packed) == n


def test_stable_order_past_a_rank_beside_a_word():
    """Words of 62 bits leave no room for a rank: the word, then the rank, two stable passes."""
    rng = np.random.default_rng(1)
    bits = [31, 31, 31, 31]
    columns = [rng.integers(0, 3, 500, dtype=np.int64) << 29 for _ in bits]
    shifts = [int(s) for s in packing.bit_shifts(bits)]
    offsets, widths = words.word_layout(bits, 62)
    assert widths == [62, 62]
    packed = WordKeys([np.zeros(500, dtype=np.int64) for _ in offsets], offsets, widths)
    for values, shift in zip(columns, shifts):
        packed = packed.with_field(shift, 31, values)
    reference = _objects(columns, shifts, 500)
    assert _as_objects(packed).tolist() == reference.tolist()
    assert stable_order(packed).tolist() == np.argsort(reference, kind="stable").tolist()
    assert dense_ranks(packed).tolist() == np.unique(reference, return_inverse=True)[1].tolist()


@pytest.mark.parametrize("bits, expected", [
    ([40, 40], [40, 40]),
    ([12] * 5 + [3], [24, 39]),
    ([30, 30, 30, 30], [30, 30, 30, 30]),
    ([8] * 16, [8, 40, 40, 40]),
])
def test_layout_fills_words_from_the_last_column(bits, expected):
    offsets, widths = words.word_layout(bits)
    assert widths == expected
    assert sum(widths) == sum(bits) and offsets[-1] == 0
    assert all(offsets[w] == offsets[w + 1] + widths[w + 1] for w in range(len(widths) - 1))
