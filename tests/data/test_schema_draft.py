"""The schema draft: identifiers, types, hierarchies, the commented TOML and its round trip."""

from __future__ import annotations

import tomllib

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import Schema, load
from crowdsafe.data.column_names import stable_names
from crowdsafe.data.io import read_table
from crowdsafe.data.schema import Role
from crowdsafe.data.schema_draft import draft_schema, sensitive_by_name
from crowdsafe.data.schema_toml import toml_key, toml_value
from crowdsafe.datasets.people import people, write_people_csv
from crowdsafe.errors import InputError, ParameterError

IDENTIFIERS = ["id", "first_name", "last_name", "email", "phone", "date_of_birth", "case_number"]
QUASI = ["age", "sex", "zip", "arrest_date", "charge", "disposition"]


@pytest.fixture(scope="module")
def people_csv(tmp_path_factory):
    return write_people_csv(tmp_path_factory.mktemp("people") / "people.csv", 3_000, seed=1)


@pytest.fixture(scope="module")
def draft(people_csv):
    return draft_schema(people_csv)


def test_people_identifiers_and_quasi_identifiers(draft):
    assert draft.identifiers == IDENTIFIERS
    assert draft.quasi_identifiers == QUASI
    assert all(a.hierarchy is not None for a in draft.attributes if a.role is Role.QUASI_IDENTIFIER)
    assert {a.identifier_from for a in draft.attributes if a.identifier} == {"name"}


def test_types_and_hierarchy_kinds(draft):
    kinds = {a.name: (a.type.value, a.hierarchy.kind if a.hierarchy else None) for a in draft.attributes}
    assert kinds["age"] == ("numeric", "intervals")
    assert kinds["zip"] == ("categorical", "mask")
    assert kinds["arrest_date"] == ("date", "dates")
    assert kinds["charge"] == ("categorical", "groups")
    assert kinds["disposition"] == ("categorical", "frequency")
    assert kinds["sex"] == ("categorical", "flat")
    age = next(a for a in draft.attributes if a.name == "age").hierarchy
    assert age.spec == {"widths": [5, 10, 20, 40], "bottom": 0, "top": 120} and not age.from_data
    assert draft.sensitive_suggestions == ["charge", "disposition"]


def test_the_file_round_trips_and_loads(draft, people_csv, tmp_path):
    text = draft.to_toml()
    document = tomllib.loads(text)
    assert list(document["attributes"]) == [*IDENTIFIERS[:6], "age", "sex", "zip", "case_number",
                                           "arrest_date", "charge", "disposition"]
    assert document["attributes"]["charge"]["hierarchy"]["groups"][0]["THEFT*"] == [
        "THEFT GRAND", "THEFT PETTY", "THEFT VEHICLE"]
    path = draft.write(tmp_path / "people.toml")
    schema = Schema.from_toml(path)
    assert schema.identifiers == IDENTIFIERS and schema.quasi_identifiers == QUASI
    dataset = load(people_csv, schema=path)
    assert set(dataset.hierarchies) == set(QUASI)
    assert dataset.frame.get_column("zip").dtype == pl.String


def test_the_file_says_the_schema_is_public_and_marks_data_choices(draft):
    text = draft.to_toml()
    assert "assumes this schema is PUBLIC" in text
    assert text.count("FROM THE DATA") >= 4  # header, zip mask, charge groups, disposition groups
    assert "direct identifier, from its name" in text
    assert "likely sensitive (its name has the word 'charge')" in text
    assert all(len(line) <= 100 for line in text.splitlines() if line.startswith("#"))


@pytest.mark.slow
def test_a_dp_publish_keeps_age_as_intervals_and_drops_identifiers(draft, tmp_path):
    csv = write_people_csv(tmp_path / "people.csv", 30_000, seed=0)
    schema = draft_schema(csv).write(tmp_path / "people.toml")
    out = tmp_path / "release" / "people.csv"
    api.publish(csv, epsilon=1.0, delta=1e-6, schema=schema, seed=7, out=out)
    release = read_table(out)
    assert not set(release.columns) & set(IDENTIFIERS)
    ages = release.get_column("age").cast(pl.String)
    assert ages.str.starts_with("[").all()  # intervals such as [0, 40), never *


def test_an_identifier_planted_under_a_plain_name_is_caught_by_its_values():
    frame = people(500, seed=3).select("age", "sex", pl.col("email").alias("contact"),
                                       pl.col("phone").alias("reach"))
    found = {a.name: a for a in draft_schema(frame).attributes}
    assert found["contact"].role is Role.IDENTIFIER and found["contact"].identifier_from == "values"
    assert "email" in found["contact"].identifier
    assert found["reach"].role is Role.IDENTIFIER and "telephone" in found["reach"].identifier
    text = draft_schema(frame).to_toml()
    assert "direct identifier, FROM THE DATA (its values)" in text


def test_no_identifier_on_adult():
    draft = draft_schema("adult")
    assert draft.identifiers == []
    assert all(a.hierarchy is not None for a in draft.attributes)
    assert draft.sensitive_suggestions == ["income"]


def test_numbers_round_outward_and_dates_in_text_are_dates():
    frame = pl.DataFrame({"weight": [43.5, 61.0, 118.2] * 10,
                          "visit": ["2021-03-04", "2022-11-30", "2020-01-01"] * 10})
    found = {a.name: a for a in draft_schema(frame).attributes}
    assert found["weight"].hierarchy.spec == {"widths": [1, 2, 10, 20], "bottom": 40, "top": 120}
    assert found["weight"].hierarchy.from_data
    assert found["visit"].type.value == "date" and found["visit"].hierarchy.kind == "dates"


@pytest.mark.parametrize("values, spec", [
    # 1e308 beside 5: the widest width (2e308) and the top would be inf; the finite bounds stay
    ([1e308, float("inf"), float("-inf"), 5.0], {"widths": [1e307, 2e307], "bottom": 0, "top": 1.2e308}),
    ([1e308, float("nan"), 5.0], {"widths": [1e307, 2e307], "bottom": 0, "top": 1.2e308}),
    ([float("inf"), 3.0, float("-inf"), 17.0], {"widths": [2, 10, 20], "bottom": 0, "top": 20}),
    ([-1e308, 1e308, 5.0], {"flat": True}),  # a span beyond the largest double: no intervals
])
def test_numbers_beyond_finite_get_a_draft_from_the_finite_values(tmp_path, values, spec):
    """inf, -inf, NaN and spans near the largest double never reach the file as inf or nan (it
    was an internal error writing it); a note says the bounds leave the non-finite values out."""
    draft = draft_schema(pl.DataFrame({"income": values * 20}))
    hierarchy = draft.attributes[0].hierarchy
    assert hierarchy.spec == spec
    if "flat" not in spec:
        assert any("holds inf, -inf or NaN" in note for note in hierarchy.notes)
    path = tmp_path / "s.toml"
    draft.write(path)
    assert Schema.from_toml(path)["income"].type.value == "numeric"


def test_writer_refuses_to_overwrite_without_force(draft, tmp_path):
    path = tmp_path / "s.toml"
    draft.write(path)
    with pytest.raises(ParameterError, match="s.toml exists: give force=True to replace it"):
        draft.write(path)  # a draft is the custodian's to edit: crowdsafe never takes it for its own
    draft.write(path, force=True)


def test_toml_keys_and_values_are_quoted_when_needed():
    assert toml_key("age") == "age" and toml_key("b c") == '"b c"' and toml_key('a"b') == '"a\\"b"'
    values = ["a", "é", "tab\there", "del\x7f"]
    document = tomllib.loads(toml_key("x y.z") + " = " + toml_value(values))
    assert document == {"x y.z": values}


def test_awkward_names_are_noted_and_quoted():
    frame = pl.DataFrame({"b c": ["x", "y"] * 20, "B-C": ["u", "v"] * 20, "b_c": ["p", "q"] * 20})
    draft = draft_schema(frame)
    assert any("differ only in case or punctuation" in n for n in draft.notes)
    assert list(tomllib.loads(draft.to_toml())["attributes"]) == ["b c", "B-C", "b_c"]


def test_sensitive_by_name():
    assert sensitive_by_name("Diagnosis") == "diagnosis" and sensitive_by_name("annual_income") == "income"
    assert sensitive_by_name("age") is None


# -- the stable rename of column names --------------------------------------------------------


def test_stable_names_rule():
    names, renames = stable_names(["name", "name", "", " age ", "name_2", "name"])
    assert names == ["name", "name_3", "column_3", "age", "name_2", "name_4"]
    assert [r.position for r in renames] == [2, 3, 4, 6]


def test_duplicate_headers_load_with_the_stable_rename(tmp_path, capsys):
    path = write_people_csv(tmp_path / "dup.csv", 200, seed=2, duplicate_header=True)
    frame = read_table(path)
    assert frame.columns[-2:] == ["charge", "charge_2"]
    assert "'charge' (column 13) -> 'charge_2'" in capsys.readouterr().err
    draft = draft_schema(path)
    assert [r.new for r in draft.renames] == ["charge_2"]
    assert "-> 'charge_2' (duplicate of an earlier 'charge')" in draft.to_toml()
    assert read_table(path).columns == frame.columns  # the same every time


def test_polars_own_duplicate_naming_is_not_used(tmp_path):
    path = tmp_path / "clash.csv"
    path.write_text("a_duplicated_0,a,a,\n1,2,3,4\n", encoding="utf-8")  # Polars alone fails here
    assert read_table(path).columns == ["a_duplicated_0", "a", "a_2", "column_4"]


def test_odd_numeric_columns_load(tmp_path):
    frame = pl.DataFrame({"rate": [0.0012, 0.0031, float("nan"), 0.0055] * 10, "empty": [float("nan")] * 40,
                          "balance": [-37, 12, 5, 80] * 10})
    draft = draft_schema(frame)
    found = {a.name: a for a in draft.attributes}
    assert found["empty"].role is Role.INSENSITIVE
    assert found["balance"].hierarchy.spec == {"widths": [10, 20, 100, 200], "bottom": -200, "top": 200}
    frame.write_csv(tmp_path / "d.csv")
    dataset = load(tmp_path / "d.csv", schema=draft.write(tmp_path / "s.toml"))
    assert set(dataset.hierarchies) == {"rate", "balance"}


def test_iso_dates_in_text_are_not_telephone_numbers():
    from crowdsafe.data.identifiers import identifier_by_values

    dates = pl.Series("visit", ["2021-03-04", "2022-11-30", "2020-01-01"] * 10)
    assert identifier_by_values(dates) is None
    assert identifier_by_values(pl.Series("reach", ["+1 202-555-0143", "(415) 555-0199"] * 10))


def test_parquet_names_get_the_same_rule(tmp_path, capsys):
    path = tmp_path / "t.parquet"
    pl.DataFrame({"": [1, 2], " b ": [3, 4]}).write_parquet(path)
    assert read_table(path).columns == ["column_1", "b"]
    assert "'' (column 1) -> 'column_1' (empty name)" in capsys.readouterr().err


def test_age_is_an_age_in_years_only():
    from crowdsafe.data.hierarchy_draft import is_age

    assert is_age("age") and is_age("AgeAtArrest") and is_age("age_years")
    assert not is_age("age_months") and not is_age("page") and not is_age("mileage")


def test_a_renamed_header_without_rows_says_so(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,a\n", encoding="utf-8")
    with pytest.raises(InputError, match="has a header but no rows"):
        read_table(path)


def test_a_drafted_mask_is_never_deeper_than_a_schema_may_declare(tmp_path):
    """A schema's mask depth must be a whole number from 1 to 64 (refused otherwise when the schema
    is read); a column named zip holding one 100-character value drafted ``mask = 99``, a draft
    that could not be read back."""
    frame = pl.DataFrame({"zip": ["02139", "10001", "x" * 100], "n": [1, 2, 3]})
    made = draft_schema(frame)
    (zip_attribute,) = [a for a in made.attributes if a.name == "zip"]
    assert zip_attribute.hierarchy.spec == {"mask": 64}
    path = made.write(tmp_path / "schema.toml")
    assert Schema.from_toml(path)["zip"].hierarchy == {"mask": 64}


def test_a_column_of_an_unusable_type_says_so_not_none():
    frame = people(50, seed=1).select("age", "sex").with_columns(pl.lit(b"\x00\x01").alias("blob"))
    draft = draft_schema(frame)
    blob = next(a for a in draft.attributes if a.name == "blob")
    assert blob.role is Role.IDENTIFIER and blob.identifier_from == "type" and blob.identifier
    text = draft.to_toml()
    assert "direct identifier, from its type: " in text and "None" not in text
    assert "blob (type)" in draft.summary()


def test_names_in_other_scripts_are_not_said_to_differ_only_in_punctuation():
    # every name beyond a-z folded to '', so four distinct Japanese names were "easy to confuse"
    frame = pl.DataFrame({"年齢": [20, 30] * 20, "性別": ["男", "女"] * 20, "都道府県": ["東京都", "大阪府"] * 20,
                          "المدينة": ["القاهرة", "الجيزة"] * 20, "Straße": ["a", "b"] * 20})
    assert not any("differ only in case" in n for n in draft_schema(frame).notes)
    twins = pl.DataFrame({"都道府県": ["a", "b"] * 20, "都道府県 ": ["c", "d"] * 20, "STRASSE": ["e", "f"] * 20,
                          "straße": ["g", "h"] * 20})
    notes = [n for n in draft_schema(twins).notes if "differ only in case" in n]
    assert len(notes) == 2 and "'都道府県', '都道府県 '" in notes[0] and "'STRASSE', 'straße'" in notes[1]
