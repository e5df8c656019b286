"""A clamped sum's sensitivity against neighbouring tables, worked out by brute force (audit math1,
defect 1).

Under change-one neighbours a replaced row need not stay in the sum: a filter (or a partition's
part) or a missing value can take the old row's value out of the sum and put nothing in, so the
sum moves by up to max(|L|, |U|), more than U − L when 0 is outside [L, U]. Every expected shift
below is computed here from the rows themselves (plain Python sums of clamped values), never by
crowdsafe's sensitivity functions.
"""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import load
from crowdsafe.mechanisms import sum_sensitivity
from crowdsafe.mechanisms.queries import answer_query
from crowdsafe.mechanisms.query_plan import QueryRequest

Row = tuple[bool, float | None]  # (passes the filter, value or missing)


def _brute_sum(rows: list[Row], low: float, high: float) -> float:
    """The clamped sum over the rows that pass the filter and hold a value."""
    return math.fsum(min(high, max(low, value)) for keep, value in rows if keep and value is not None)


def _frame(rows: list[tuple[str, int | None]]) -> pl.DataFrame:
    return pl.DataFrame({"sex": [s for s, _ in rows], "hours": [h for _, h in rows]},
                        schema={"sex": pl.String, "hours": pl.Int64})


def _audit_tables(missing: bool) -> tuple[list[tuple[str, int | None]], list[tuple[str, int | None]]]:
    """The audit's tables: 50 × (Male, 60), 50 × (Female, 70), and one row changed between them:
    (Male, 100) → (Female, 100), or (Female, missing) → (Female, 100)."""
    base: list[tuple[str, int | None]] = [("Male", 60)] * 50 + [("Female", 70)] * 50
    before: tuple[str, int | None] = ("Female", None) if missing else ("Male", 100)
    return base + [before], base + [("Female", 100)]


@pytest.mark.parametrize(("text", "missing", "partition"), [
    ("sum(hours) clamp 50..100 where sex = 'Female'", False, None),
    ("sum(hours) clamp 50..100 where sex = 'Female'", False, "sex"),
    ("sum(hours) clamp 50..100", True, None),
])
def test_audit_neighbours_noise_matches_the_true_shift(text, missing, partition):
    d0, d1 = _audit_tables(missing)
    shift = abs(
        _brute_sum([(s == "Female" or "where" not in text, h) for s, h in d1], 50, 100)
        - _brute_sum([(s == "Female" or "where" not in text, h) for s, h in d0], 50, 100)
    )
    assert shift == 100  # the largest shift any change can make with bounds 50..100
    for rows in (d0, d1):
        answer = answer_query(load(_frame(rows), name="d"),
                              QueryRequest(text, epsilon=1.0, neighbours="change", partition=partition),
                              randomness=1)
        assert answer.sensitivity.l1 == shift
        # the discrete Laplace's scale is the sensitivity / ε, up to its documented 1e-9 margin
        assert answer.noise_scale == pytest.approx(shift / 1.0, rel=1e-8)
        assert answer.noise_scale >= shift


def test_audit_neighbours_mean_sum_half():
    d0, d1 = _audit_tables(missing=False)
    for rows in (d0, d1):
        answer = answer_query(load(_frame(rows), name="d"),
                              QueryRequest("mean(hours) clamp 50..100 where sex = 'Female'", epsilon=1.0,
                                           neighbours="change"), randomness=1)
        # the sum half spends ε/2 and must absorb the 100 a row leaving the filter moves the sum by
        assert answer.components["sum"].noise_scale == pytest.approx(100 / 0.5, rel=1e-8)


# The candidate rows of a brute-force search for the largest shift: in or out of the filter, with
# a value below, at, inside, at the top of or above the bounds, or missing.
def _candidates(low: float, high: float) -> list[Row]:
    values: list[float | None] = [None, low - 7.0, low, (low + high) / 2, high, high + 7.0, 0.0]
    return [(keep, value) for keep in (True, False) for value in values]


def _worst_shift(low: float, high: float, neighbours: str) -> float:
    rows = _candidates(low, high)
    if neighbours == "change":
        pairs = itertools.product(rows, rows)
        return max(abs(_brute_sum([a], low, high) - _brute_sum([b], low, high)) for a, b in pairs)
    return max(abs(_brute_sum([a], low, high)) for a in rows)


bounds = st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000)).filter(lambda b: b[0] < b[1])


@pytest.mark.parametrize("neighbours", ["change", "add-remove"])
@pytest.mark.parametrize(("low", "high"), [(50, 100), (-100, -50), (-5, 10), (0, 1), (-3, 0), (7, 8)])
def test_the_stated_sensitivity_is_the_brute_force_worst_case(low, high, neighbours):
    assert sum_sensitivity(low, high, neighbours).l1 == _worst_shift(low, high, neighbours)


@settings(max_examples=150, deadline=None)
@given(
    low_high=bounds,
    neighbours=st.sampled_from(["change", "add-remove"]),
    rows=st.lists(st.tuples(st.booleans(), st.none() | st.integers(-1500, 1500)), min_size=0, max_size=8),
    new=st.tuples(st.booleans(), st.none() | st.integers(-1500, 1500)),
    where=st.integers(0, 8),
)
def test_no_neighbouring_pair_moves_the_sum_past_its_sensitivity(low_high, neighbours, rows, new, where):
    """Random bounds (0 inside or outside them), a random table and a random neighbour: the sum's
    shift, computed by brute force, never exceeds the stated sensitivity."""
    low, high = low_high
    d0: list[Row] = [(keep, None if v is None else float(v)) for keep, v in rows]
    row: Row = (new[0], None if new[1] is None else float(new[1]))
    if neighbours == "change":
        if not d0:
            d0 = [row]
        d1 = list(d0)
        d1[where % len(d0)] = row
    else:
        d1 = d0[:where % (len(d0) + 1)] + [row] + d0[where % (len(d0) + 1):]
    shift = abs(_brute_sum(d1, low, high) - _brute_sum(d0, low, high))
    stated = sum_sensitivity(low, high, neighbours)
    assert shift <= stated.l1
    assert shift <= _worst_shift(low, high, neighbours) == stated.l1


@settings(max_examples=40, deadline=None)
@given(
    low_high=bounds,
    neighbours=st.sampled_from(["change", "add-remove"]),
    old=st.tuples(st.sampled_from(["F", "M"]), st.none() | st.integers(-1500, 1500)),
    new=st.tuples(st.sampled_from(["F", "M"]), st.none() | st.integers(-1500, 1500)),
)
def test_the_query_noise_covers_every_brute_force_shift(low_high, neighbours, old, new):
    """End to end through the query engine (integer bounds and values: the unit is 1, so the noise
    scale times ε is the units sensitivity): a filtered sum on two neighbouring tables."""
    low, high = low_high
    base = [("F", low), ("M", high), ("F", None)]
    d0 = base + ([old] if neighbours == "change" else [])
    d1 = base + [new]
    rows0 = [(s == "F", None if h is None else float(h)) for s, h in d0]
    rows1 = [(s == "F", None if h is None else float(h)) for s, h in d1]
    shift = abs(_brute_sum(rows1, low, high) - _brute_sum(rows0, low, high))
    text = f"sum(hours) clamp {low}..{high} where sex = 'F'"
    for rows in (d0, d1):
        answer = answer_query(load(_frame(rows), name="d"), QueryRequest(text, epsilon=1.0, neighbours=neighbours),
                              randomness=1)
        assert answer.noise_scale * 1.0 >= shift
