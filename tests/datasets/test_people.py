"""The synthetic people table: seeded, consistent, invented, and a named table."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data import load
from crowdsafe.datasets.people import people
from crowdsafe.errors import ParameterError


def test_seeded_and_consistent():
    frame = people(2_000, seed=5)
    assert frame.equals(people(2_000, seed=5)) and not frame.equals(people(2_000, seed=6))
    assert frame.columns == ["id", "first_name", "last_name", "email", "phone", "date_of_birth", "age", "sex",
                             "zip", "case_number", "arrest_date", "charge", "disposition"]
    assert frame.get_column("id").n_unique() == frame.get_column("case_number").n_unique() == 2_000
    years = (frame.get_column("arrest_date") - frame.get_column("date_of_birth")).dt.total_days() / 365.25
    assert ((years - frame.get_column("age")).abs() < 1.01).all()
    assert frame.get_column("email").str.ends_with(pl.lit(".com")).any()
    assert frame.get_column("email").str.contains("@example.").all()
    assert frame.get_column("phone").str.contains(r"555-01\d\d$").all()


def test_a_named_table_and_bad_sizes():
    assert load("people").n_rows == 30_000
    with pytest.raises(ParameterError):
        people(0)


def test_each_call_has_its_own_copy_of_the_table_drawn_once():
    """A whole-number seed's table is drawn once per process (the app reads people at each step);
    a caller that changes its frame in place changes no other caller's."""
    first = people(500, seed=9)
    kept = first.clone()
    first.drop_in_place("charge")
    first.insert_column(0, pl.Series("extra", range(500)))
    again = people(500, seed=9)
    assert again.equals(kept) and "extra" not in again.columns
    assert people(500, seed=None).height == 500  # any other seed NumPy takes: drawn each time
