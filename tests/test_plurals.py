"""Counts in messages agree with their noun: "1 row", never "1 rows" (crowdsafe.number_text.quantity)."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.classic import anonymize_dataset
from crowdsafe.data import Dataset, Schema
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity
from crowdsafe.report.content import TOP_VALUES, shown_values


def test_quantity_is_singular_for_one_only():
    assert [quantity(n, "row") for n in (0, 1, 2, 1234)] == ["0 rows", "1 row", "2 rows", "1,234 rows"]
    assert quantity(1, "class", "classes") == "1 class" and quantity(3, "class", "classes") == "3 classes"


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav", "lattice"])
def test_a_one_row_table_is_refused_in_the_singular(algorithm):
    frame = pl.DataFrame({"age": [1], "s": ["a"]})
    data = Dataset(frame, Schema.of({"age": "numeric", "s": "categorical"}, qi=["age"], sensitive=["s"]))
    with pytest.raises(ParameterError, match=r"the table has 1 row, fewer than k = 2") as refused:
        anonymize_dataset(data, algorithm, 2)
    assert "1 rows" not in str(refused.value)


def test_one_value_left_over_is_one_value():
    values = [(f"v{i:02d}", 100 - i) for i in range(TOP_VALUES + 1)]
    assert shown_values(values)[-1] == ("other (1 value)", 100 - TOP_VALUES)
