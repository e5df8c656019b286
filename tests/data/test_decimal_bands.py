"""Interval hierarchies with decimal widths (crowdsafe.data.decimal_bands, builders.intervals): every value
lies in the band its label names, exactly in the decimals declared and read (6.6 in [6.6, 6.7), not
[6.5, 6.6)), nested widths nest, and labels are written exactly (no %g: 1234567.25, not 1.23457e+06),
so both cell readers read each label back to exactly the leaves it covers."""

from __future__ import annotations

import decimal
from decimal import Decimal

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.attacks import plain_cells
from crowdsafe.data import intervals
from crowdsafe.data.cell_reader import CellReader
from crowdsafe.data.decimal_bands import decimal_text, grid_floor
from crowdsafe.data.generalized import AttributeDomain, CellKind, parse_cell
from crowdsafe.errors import HierarchyError

EXACT = decimal.Context(prec=200)  # far more digits than any number here: Decimal arithmetic is exact


def _decimal(mantissa: int, places: int) -> Decimal:
    return Decimal(mantissa).scaleb(-places, EXACT)


def _bound(text: str) -> Decimal:
    return Decimal(text)  # a label's bound read as the decimal it writes


@st.composite
def banded(draw):
    """An origin and nested widths with 1-6 decimals, tails or none, and values: random decimals,
    band edges written as decimals (o + m·w), negatives and large magnitudes (1234567.25)."""
    places = draw(st.integers(1, 6))
    width = _decimal(draw(st.integers(1, 10**places * 3)), places)
    widths = [width]
    for factor in draw(st.lists(st.integers(2, 5), max_size=3)):
        widths.append(EXACT.multiply(widths[-1], factor))
    origin = _decimal(draw(st.integers(-10**(places + 2), 10**(places + 2))), draw(st.integers(0, 6)))
    edges = [EXACT.add(origin, EXACT.multiply(width, m)) for m in draw(st.lists(st.integers(-10**6, 10**6),
                                                                                   max_size=15))]
    scattered = [_decimal(draw(st.integers(-10**14, 10**14)), draw(st.integers(0, 8))) for _ in
                 range(draw(st.integers(0, 15)))]
    near = [EXACT.add(e, _decimal(draw(st.sampled_from([-1, 1])), draw(st.integers(6, 8)))) for e in edges[:5]]
    fixed = [Decimal("1234567.25"), Decimal("-1234567.25"), Decimal("6.6"), Decimal("0.3")]
    values = [v for v in edges + scattered + near + draw(st.lists(st.sampled_from(fixed), max_size=2))
              if abs(v) < 10**8 and len(v.normalize(EXACT).as_tuple().digits) <= 15]
    values = values or [Decimal("0.3")]
    bottom = top = None
    if draw(st.booleans()):
        floor = min(values).quantize(Decimal(1).scaleb(-places), rounding=decimal.ROUND_FLOOR, context=EXACT)
        bottom = floor + _decimal(draw(st.integers(0, 10**places)), places)
        top = bottom + _decimal(draw(st.integers(1, 10**(places + 3))), places)
    return origin, widths, values, bottom, top


def _expected_label(v: Decimal, origin: Decimal, width: Decimal, bottom, top) -> tuple[Decimal, Decimal] | str:
    if bottom is not None and v < bottom:
        return "below"
    if top is not None and v >= top:
        return "above"
    band = EXACT.divide_int(EXACT.subtract(v, origin), width)  # truncates toward zero
    if EXACT.multiply(band, width) > EXACT.subtract(v, origin):
        band -= 1
    low = EXACT.add(origin, EXACT.multiply(band, width))
    high = EXACT.add(low, width)
    return max(low, bottom) if bottom is not None else low, min(high, top) if top is not None else high


@pytest.mark.slow  # over a second (the quick loop: README)
@settings(max_examples=150, deadline=None)
@given(banded())
def test_every_leaf_lies_in_its_band_at_every_level_and_the_labels_read_back(case):
    origin, widths, values, bottom, top = case
    h = intervals("v", [float(v) for v in values], widths=[float(w) for w in widths], origin=float(origin),
                  bottom=None if bottom is None else float(bottom), top=None if top is None else float(top))
    leaves = h.leaves.cast(pl.Float64).to_list()
    assert sorted(Decimal(repr(x)) for x in leaves) == sorted(set(v.normalize(EXACT) for v in values))
    plain = AttributeDomain.from_values(pl.Series("v", leaves))  # the original values, no hierarchy
    labelled = AttributeDomain("v", h.leaves, h)
    for level, width in enumerate(widths, start=1):
        node = h.leaf_map(level)
        labels = h.labels[level]
        for code, x in enumerate(leaves):
            v = Decimal(repr(x))
            label = labels[node[code]]
            expected = _expected_label(v, origin, width, bottom, top)
            if expected == "below":
                assert label == f"<{decimal_text(bottom)}"
            elif expected == "above":
                assert label == f">={decimal_text(top)}"
            else:
                low, high = expected
                assert label == f"[{decimal_text(low)}, {decimal_text(high)})"
                cell = parse_cell(label)
                assert cell.kind is CellKind.RANGE and cell.contains(np.array([x]))[0]
                assert _bound(label[1:label.index(",")]) <= v < _bound(label[label.index(",") + 2:-1])
        if level > 1:  # nested: leaves sharing a node share the node of the level below's parent
            below = h.leaf_map(level - 1)
            assert all(len(set(node[below == j])) == 1 for j in set(below.tolist()))
        distinct = pl.Series("c", sorted(set(labels)), dtype=pl.String)
        # both readers read every label back to exactly the leaves it covers, with or without the hierarchy
        for domain in (labelled, plain):
            cover = domain.cover(distinct)
            reader = CellReader([domain]).read([distinct], [0])[0]
            fast = plain_cells.read_plain([distinct], [0], [domain])
            for j, text in enumerate(distinct.to_list()):
                wanted = np.flatnonzero(np.asarray(labels)[node] == text)
                assert cover.members(j).tolist() == wanted.tolist(), (text, domain.hierarchy is not None)
                assert reader.indices[reader.indptr[j]: reader.indptr[j + 1]].tolist() == wanted.tolist()
                if fast is not None:
                    assert fast[0].indices[fast[0].indptr[j]: fast[0].indptr[j + 1]].tolist() == wanted.tolist()


def test_decimal_widths_band_the_value_they_name():
    """The black-box repro: widths 0.1 put 6.6, 7.1 and 0.3 in the band below their own value."""
    h = intervals("ph", [6.6, 7.1, 0.3, 0.6, 0.5], widths=[0.1, 0.2, 1, 2], bottom=0, top=14)
    assert h.to_rows() == [
        ["0.3", "[0.3, 0.4)", "[0.2, 0.4)", "[0, 1)", "[0, 2)", "*"],
        ["0.5", "[0.5, 0.6)", "[0.4, 0.6)", "[0, 1)", "[0, 2)", "*"],
        ["0.6", "[0.6, 0.7)", "[0.6, 0.8)", "[0, 1)", "[0, 2)", "*"],
        ["6.6", "[6.6, 6.7)", "[6.6, 6.8)", "[6, 7)", "[6, 8)", "*"],
        ["7.1", "[7.1, 7.2)", "[7, 7.2)", "[7, 8)", "[6, 8)", "*"],
    ]
    assert list(h.level_names) == ["value", "width 0.1", "width 0.2", "width 1", "width 2", "*"]


def test_labels_keep_every_digit():
    """No %g: six significant digits merged distinct bands and wrote 1.23457e+06."""
    lat = intervals("lat", [52.520001, 52.5200015, 52.520002], widths=[1e-6])
    assert lat.labels[1] == ("[52.520001, 52.520002)", "[52.520002, 52.520003)")
    assert lat.level_names[1] == "width 0.000001"
    big = intervals("x", [1234567.25, 1234567.75], widths=[0.5], origin=0.25)
    assert big.labels[1] == ("[1234567.25, 1234567.75)", "[1234567.75, 1234568.25)")
    cut = intervals("x", [1.0, 1234567.25, 2e6], cuts=[[1234567.25, 1234567.5]])
    assert cut.labels[1] == ("<1234567.25", "[1234567.25, 1234567.5)", ">=1234567.5")
    assert intervals("x", [3, 10**12], widths=[5]).labels[1] == ("[0, 5)", "[1000000000000, 1000000000005)")
    tiny = intervals("x", [5e-9, 1.5], widths=[1e-9])  # below 1e-7 a bound is written with an exponent
    assert tiny.labels[1] == ("[5e-09, 6e-09)", "[1.5, 1.500000001)")
    huge = intervals("x", [-0.15, 1e300], widths=[0.1])  # past int64 on the grid: Python integers
    assert huge.labels[1] == ("[-0.2, -0.1)", f"[1e+300, 1.{'0' * 300}1e+300)")


@pytest.mark.parametrize(("number", "text"), [
    ("6.6", "6.6"), ("-0.1", "-0.1"), ("0", "0"), ("-0.0", "0"), ("1E+2", "100"), ("120.000", "120"),
    ("0.000001", "0.000001"), ("1E-7", "0.0000001"), ("1E-8", "1e-08"), ("1.5E-8", "1.5e-08"),
    ("1234567.25", "1234567.25"), ("1E+20", "100000000000000000000"), ("1E+21", "1e+21"),
    ("-1.25E+30", "-1.25e+30"), ("Infinity", "inf"),
])
def test_decimal_text_is_exact_and_shortest(number, text):
    assert decimal_text(Decimal(number)) == text


def test_grid_floor_is_exact_near_and_on_the_grid():
    values = np.array([6.6, 6.599999999999999, 6.600000000000001, -0.3, -0.30000000000000004, 0.1 + 0.2,
                       1e17, -2.5e-9, 0.0, -0.0, 2.0**60])
    expected = [Decimal(repr(v)).scaleb(1, EXACT).to_integral_value(decimal.ROUND_FLOOR) for v in values.tolist()]
    assert grid_floor(values, 1).tolist() == [int(e) for e in expected]
    many = grid_floor(np.array([1e300, 0.1]), 1)
    assert many.tolist() == [10**301, 1]


def test_widths_nest_in_the_decimals_written():
    assert intervals("x", [0.35], widths=[0.1, 0.3, 0.9]).labels[2] == ("[0.3, 0.6)",)
    with pytest.raises(HierarchyError, match="width 0.25 of level 2 is not a whole multiple of width 0.1"):
        intervals("x", [1.0], widths=[0.1, 0.25])
    with pytest.raises(HierarchyError, match="not a whole multiple"):
        intervals("x", [1.0], widths=[0.1, 0.30000000000000004])
