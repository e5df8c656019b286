"""The bundled Adult: row counts, label clean-up, unchanged bytes, hierarchies."""

from __future__ import annotations

import gzip
import hashlib
from importlib import resources

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import MissingPolicy, frequency_table, load
from crowdsafe.datasets import adult, catalogue, load_bundled, names
from crowdsafe.datasets.uci_adult import COLUMNS, QUASI_IDENTIFIERS
from crowdsafe.errors import InputError, ParameterError

SHA256 = {
    "adult.data.gz": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test.gz": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}


@pytest.mark.parametrize("file_name", sorted(SHA256))
def test_bundled_files_are_the_unchanged_originals(file_name):
    packed = resources.files("crowdsafe.datasets").joinpath("files", file_name).read_bytes()
    assert hashlib.sha256(gzip.decompress(packed)).hexdigest() == SHA256[file_name]
    attribution = resources.files("crowdsafe.datasets").joinpath("files", "README.md").read_text()
    assert "Kohavi" in attribution and "CC BY 4.0" in attribution


@pytest.mark.parametrize(
    "split, rows, complete",
    [("train", 32_561, 30_162), ("test", 16_281, 15_060), ("all", 48_842, 45_222)],
)
def test_row_counts_with_and_without_missing_values(split, rows, complete):
    assert adult(split).n_rows == rows
    dropped = adult(split, drop_missing=True)
    assert dropped.n_rows == complete
    assert dropped.missing.rows_dropped == rows - complete
    assert dropped.frame.null_count().sum_horizontal().item() == 0


def test_test_labels_are_normalised_and_comment_skipped():
    test = adult("test").frame
    assert sorted(test.get_column("income").unique().to_list()) == ["<=50K", ">50K"]
    assert test.row(0)[:2] == (25, "Private")  # the first data row, after the comment line
    assert test.columns == list(COLUMNS)
    assert not any(v.startswith(" ") for v in test.get_column("workclass").drop_nulls().unique().to_list())


@pytest.mark.parametrize(("split", "file_name"), [("train", "adult.data.gz"), ("test", "adult.test.gz")])
def test_the_frame_is_the_file_read_line_by_line(split, file_name):
    """The reference: each line split at its commas, every field stripped, '?' missing, the
    test file's comment line and blank lines skipped and its incomes' final '.' dropped."""
    text = gzip.decompress(resources.files("crowdsafe.datasets").joinpath("files", file_name).read_bytes()).decode()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("|")]
    numeric = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
    rows = [[field.strip() for field in line.split(",")] for line in lines]
    columns = {name: [None if row[i] == "?" else int(row[i]) if name in numeric else row[i].removesuffix(".")
                      if name == "income" else row[i] for row in rows] for i, name in enumerate(COLUMNS)}
    expected = pl.DataFrame(columns, schema={c: pl.Int64 if c in numeric else pl.String for c in COLUMNS})
    assert adult(split).frame.equals(expected)


def test_schema_roles_and_types():
    data = adult()
    assert data.quasi_identifiers == list(QUASI_IDENTIFIERS)
    assert data.sensitive == ["income"]
    assert data.schema["education"].order[0] == "Preschool"
    assert data.schema["age"].type.value == "numeric"


def test_every_hierarchy_covers_the_data_and_ends_in_one_root():
    data = adult("all")
    for column, hierarchy in data.hierarchies.items():
        hierarchy.validate(data.frame.get_column(column), column=column)
        assert hierarchy.size(hierarchy.height) == 1, column
        # levels really generalize: strictly fewer nodes going up
        sizes = [hierarchy.size(i) for i in range(hierarchy.height + 1)]
        assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes), column


def test_statistically_sensible_groups():
    h = adult().hierarchies
    rows = {r[0]: r for r in h["education"].to_rows()}
    assert rows["Masters"][1:3] == ["Graduate degree", "University degree"]
    assert rows["HS-grad"][2] == "High school or associate"
    rows = {r[0]: r for r in h["native-country"].to_rows()}
    assert rows["Mexico"][1:3] == ["Central America", "Latin America and Caribbean"]
    assert rows["Germany"][2] == "Europe"
    assert rows["?"][1:3] == ["?", "?"]  # missing stays apart until the root
    rows = {int(r[0]): r for r in h["age"].to_rows()}
    assert rows[33][1:4] == ["[30, 35)", "[30, 40)", "[20, 40)"]
    # education-num uses the same cut points as education's levels
    edu = adult().frame.select("education", "education-num").unique()
    for level in (1, 2):
        by_name = dict(zip(h["education"].mapping(level).get_column("value"),
                           h["education"].mapping(level).get_column("label")))
        by_num = dict(zip(h["education-num"].mapping(level).get_column("value"),
                          h["education-num"].mapping(level).get_column("label")))
        groups_name = edu.with_columns(pl.col("education").replace_strict(by_name).alias("g1"),
                                       pl.col("education-num").replace_strict(by_num).alias("g2"))
        assert groups_name.group_by("g1").agg(pl.col("g2").n_unique()).get_column("g2").max() == 1


def test_generalizing_raises_k_on_adult():
    data = adult(drop_missing=True)
    finest = frequency_table(data).get_column("count").min()
    top = {c: data.hierarchies[c].height for c in data.quasi_identifiers}
    coarse = frequency_table(data, levels={**top, "age": 3, "sex": 0})
    assert finest == 1
    assert coarse.get_column("count").min() > 1
    assert coarse.get_column("count").sum() == 30_162


def test_bundled_names_load_through_the_data_layer():
    assert names() == ["adult", "adult-test", "adult-all", "people", "german-customers"]
    assert [c["rows"] for c in catalogue()] == [32_561, 16_281, 48_842, 30_000, 20_000]
    assert load("adult").n_rows == 32_561
    assert load("adult-all", missing="drop").n_rows == 45_222
    assert load("adult", qi=["age", "sex"]).quasi_identifiers == ["age", "sex"]
    with pytest.raises(InputError, match="missing values"):
        load_bundled("adult", missing=MissingPolicy.ERROR)
    with pytest.raises(InputError, match="no bundled dataset named 'nope'"):
        load_bundled("nope")
    with pytest.raises(ParameterError, match="unknown Adult split"):
        adult("validation")  # type: ignore[arg-type]


@pytest.mark.slow
def test_adult_round_trips_through_csv_with_the_same_counts(tmp_path):
    from crowdsafe.data import write

    data = adult()
    path = write(data, tmp_path / "adult.csv")
    again = load(path, schema=data.schema)
    assert again.n_rows == data.n_rows
    a = frequency_table(data.frame, ["age", "sex", "native-country"])
    b = frequency_table(again.frame, ["age", "sex", "native-country"])
    assert a.equals(b)
    assert np.array_equal(a.get_column("count").to_numpy(), b.get_column("count").to_numpy())
