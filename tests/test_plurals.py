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


def test_one_row_with_a_missing_value_has_one():
    from crowdsafe.data.missing import MissingPolicy, MissingReport

    said = MissingReport(MissingPolicy.KEEP, {"v": 1}, rows_with_missing=1).describe()
    assert "1 row has one (v 1)" in said
    assert "2 rows have one" in MissingReport(MissingPolicy.KEEP, {"v": 2}, rows_with_missing=2).describe()


def test_one_class_short_of_the_population_is_one_class():
    from crowdsafe import models

    release = Dataset(pl.DataFrame({"age": ["1", "1", "2"], "s": ["a", "b", "c"]}),
                      Schema.of({"age": "categorical", "s": "categorical"}, qi=["age"]))
    population = Dataset(pl.DataFrame({"age": ["1", "2", "2"], "s": ["a", "b", "c"]}),
                         Schema.of({"age": "categorical", "s": "categorical"}, qi=["age"]))
    notes = models.assess_risk(models.EquivalenceClasses(release), population=population).notes
    assert any(n.startswith("1 class matches fewer population records than it holds") for n in notes), notes


def test_one_sample_unique_is_alone_in_its_class(capsys, tmp_path):
    from cli_helpers import run_command

    pl.DataFrame({"age": [1, 1, 2], "s": ["a", "b", "c"]}).write_csv(tmp_path / "t.csv")
    code, out, err = run_command(capsys, "check", str(tmp_path / "t.csv"), "--qi", "age")
    assert code == 0, err
    assert "sample uniques: 1 row (33.3%) is alone in its class" in " ".join(out.split())
