"""The types a schema draft reads from the values are marked ``from_data``, on a table and on its
neighbours alike, so that an answer or a release built on the unedited draft is never certified fit.

A column of whole numbers was drafted ``type = "integer"``, unmarked; the same table with one row
more holding 40.5 was drafted ``type = "real"``, unmarked. On the unedited drafts ``sum(age)``
took another mechanism (discrete Laplace, or Laplace on a grid), noise scale and format (19 or
18.0), both certified fit: the answer told whether one row held a fraction (found by a
neighbouring-table audit). Dates written YYYY-MM-DD, numbers, and true or false are typed by
their values the same way: one word in a neighbour makes the column text.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import schema_draft
from crowdsafe.data.schema_draft import draft_schema

ROWS = 400


def _table() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    return pl.DataFrame({
        "age": rng.integers(18, 90, ROWS),
        "visit": [f"2024-{m:02d}-{d:02d}" for m, d in zip(rng.integers(1, 13, ROWS), rng.integers(1, 29, ROWS))],
        "score": rng.integers(0, 50, ROWS).astype(str),
        "smoker": rng.choice(["true", "false"], ROWS),
        "zip": rng.choice(["01067", "10115", "80331"], ROWS),
    })


#: one row more, with the value that types a column otherwise (the others as in the first row)
NEIGHBOURS = {
    "integer or real": {"age": "40.5"},
    "date or text": {"visit": "unknown"},
    "numbers or text": {"score": "n.a."},
    "true or false or text": {"smoker": "maybe"},
}


def _pair(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """D and D' (D with one row more) as CSV files: a CSV has no types, the reader takes them from
    the values."""
    table = _table().with_columns(pl.col("age").cast(pl.String))
    first = table.row(0, named=True)
    added = pl.DataFrame([{**first, **NEIGHBOURS[case]}], schema=table.schema)
    folder = tmp_path / case.replace(" ", "-")
    folder.mkdir()
    table.write_csv(folder / "d.csv")
    pl.concat([table, added]).write_csv(folder / "d1.csv")
    return folder / "d.csv", folder / "d1.csv"


def _drafted(csv: Path) -> tuple[Path, dict]:
    toml = draft_schema(csv).write(csv.with_suffix(".toml"))
    return toml, tomllib.loads(toml.read_text(encoding="utf-8"))["attributes"]


def _unmarked_differences(one: dict, other: dict) -> list[str]:
    """The schema keys the two drafts set differently for a column, where either draft has no
    ``from_data`` marker for that key or for the column's type (the hierarchy a type takes, such as
    the public calendar of a date, goes with the type): a data-decided choice a release or an
    answer could use unmarked."""
    found = []
    for name, spec in one.items():
        twin = other[name]
        for key in ("type", "order", "hierarchy", "role"):
            if spec.get(key) == twin.get(key):
                continue
            marked = [any(m.split()[0] in (key, "type") for m in s.get("from_data", [])) for s in (spec, twin)]
            if key == "role" or not all(marked):
                found.append(f"{name}: {key} {spec.get(key)!r} / {twin.get(key)!r}, marked {marked}")
    return found


@pytest.mark.parametrize("case", list(NEIGHBOURS))
def test_the_drafts_of_neighbours_differ_only_by_marked_choices(tmp_path, case):
    d, d1 = _pair(tmp_path, case)
    (_, one), (_, other) = _drafted(d), _drafted(d1)
    (column,) = NEIGHBOURS[case]
    assert one[column] != other[column]  # the row decides the type (or, true or false, the hierarchy)
    assert _unmarked_differences(one, other) == []
    assert one["zip"].get("from_data", []) == other["zip"].get("from_data", []) == ["hierarchy mask depth"]


@pytest.mark.parametrize("given", ["frame", "parquet"])
def test_the_markers_name_the_type_read(tmp_path, given):
    """A frame's or a Parquet file's types too: its writer often took them from the values."""
    d = _table().with_columns(pl.col("age").cast(pl.Float64).alias("weight"),
                              pl.col("visit").str.to_date(), pl.col("smoker") == "true")
    if given == "parquet":
        d.write_parquet(tmp_path / "d.parquet")
    marked = {a.name: a.type_from_data for a in draft_schema(d if given == "frame" else tmp_path / "d.parquet")
              .attributes}
    assert marked == {"age": ("type integer",), "visit": ("type date",), "score": ("type categorical",),
                      "smoker": ("type categorical",), "zip": (), "weight": ("type real",)}


def test_declared_types_are_not_marked():
    """An Enum's order and a Categorical are declared by the table's type (a writer lists them, no
    reader infers them); a code column is text by its name; a bundled table's schema declares."""
    frame = pl.DataFrame({"size": pl.Series(["S", "M", "L"] * 20, dtype=pl.Enum(["S", "M", "L"])),
                          "city": pl.Series(["Köln", "Bonn", "Kiel"] * 20, dtype=pl.Categorical),
                          "PLZ": [50667, 53111, 24103] * 20})
    assert {a.name: a.type_from_data for a in draft_schema(frame).attributes} == {"size": (), "city": (), "PLZ": ()}
    adult = {a.name: a.type_from_data for a in draft_schema("adult").attributes}
    assert adult["age"] == adult["hours-per-week"] == adult["sex"] == ()  # as its schema declares them
    assert adult["education"] == ("type categorical",)  # declared ordinal: the draft's text type is the values'


def _answers(tmp_path: Path, case: str, text: str) -> list:
    d, d1 = _pair(tmp_path, case)
    return [api.query(csv, text, epsilon=1.0, schema=_drafted(csv)[0], ledger=None) for csv in (d, d1)]


def test_a_sum_on_an_unedited_draft_is_not_fit_on_either_side(tmp_path):
    answers = _answers(tmp_path, "integer or real", "sum(age) clamp 0..100")
    assert answers[0].as_dict()["mechanism"] != answers[1].as_dict()["mechanism"]  # what the type decides
    assert [a.unreviewed_schema for a in answers] == [{"age": ("type integer",)}, {"age": ("type real",)}]
    assert not any(a.fit_for_release for a in answers)


@pytest.mark.parametrize(("case", "text", "column"), [
    ("date or text", "count where visit = '2024-03-05'", "visit"),
    ("numbers or text", "count where score is not null", "score"),
    ("true or false or text", "count where smoker = 'true'", "smoker"),
])
def test_a_count_on_an_unedited_draft_is_not_fit_on_either_side(tmp_path, case, text, column):
    answers = _answers(tmp_path, case, text)
    assert all(column in a.unreviewed_schema for a in answers)
    assert not any(a.fit_for_release for a in answers)


@pytest.mark.slow
def test_a_release_on_an_unedited_draft_is_not_fit_on_either_side(tmp_path):
    """age's hierarchy (intervals over the public 0-120) reads nothing: its type was the one choice
    left unmarked, and the release printed 19 or 18.0."""
    d, d1 = _pair(tmp_path, "integer or real")
    for csv in (d, d1):
        toml, _ = _drafted(csv)
        publication = api.publish(csv, schema=toml, qi=["age"], epsilon=1.0, delta=1e-6, ledger=None, report=False)
        assert "age" in publication.certificate.unreviewed_schema
        assert not publication.certificate.fit_for_release


def test_the_check_fails_when_a_type_goes_unmarked(tmp_path, monkeypatch):
    """The broken variant: the types written without their markers, as before the fix."""
    monkeypatch.setattr(schema_draft, "type_marker", lambda *args, **kwargs: ())
    d, d1 = _pair(tmp_path, "integer or real")
    (toml, one), (toml1, other) = _drafted(d), _drafted(d1)
    assert _unmarked_differences(one, other) == ["age: type 'integer' / 'real', marked [False, False]"]
    answers = [api.query(csv, "sum(age) clamp 0..100", epsilon=1.0, schema=schema, ledger=None)
               for csv, schema in ((d, toml), (d1, toml1))]
    assert all(a.fit_for_release for a in answers)  # both certified fit, by other mechanisms: the defect
