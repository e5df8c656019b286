"""A German customer file with no schema (issue 35): ``;``-separated, decimal commas, German column
names. Names, birth date, e-mail, telephone, street and customer number are identifiers; PLZ is
text with its leading zeros and a mask hierarchy, on every path that reads the file; Diagnose is
likely sensitive; Einkommen is numeric. Name-based findings never read a value; value-based ones
are marked as read from the data."""

from __future__ import annotations

import re
import tomllib

import polars as pl
import pytest

from crowdsafe import datasets
from crowdsafe.data import Schema, load
from crowdsafe.data import streaming as streaming_module
from crowdsafe.data.identifiers import name_warnings
from crowdsafe.data.schema import Role
from crowdsafe.data.schema_draft import draft_schema
from crowdsafe.data.streamed_table import StreamedTable, load_or_stream
from crowdsafe.data.streaming import frequency_table
from crowdsafe.datasets.german_customers import REFERENCE_DAY, german_customers, write_german_customers
from crowdsafe.errors import CrowdsafeError
from hierarchy_labels import NEUTRAL, labels_naming_values

IDENTIFIERS = ["Kundennummer", "Vorname", "Nachname", "Geburtsdatum", "E-Mail", "Telefon", "Straße"]
QUASI = ["PLZ", "Ort", "Geschlecht", "Alter", "Beruf", "Einkommen", "Diagnose"]
ROWS, SEED = 2_000, 1


@pytest.fixture(scope="module")
def german_csv(tmp_path_factory):
    return write_german_customers(tmp_path_factory.mktemp("german") / "kunden.csv", rows=ROWS, seed=SEED)


@pytest.fixture(scope="module")
def draft(german_csv):
    return draft_schema(german_csv)


def _codes(frame: pl.DataFrame) -> pl.Series:
    return frame.get_column("PLZ")


# -- the file --------------------------------------------------------------------------------------


def test_the_file_is_written_as_a_german_locale_writes_it(german_csv):
    text = german_csv.read_text(encoding="utf-8")
    header, first = text.splitlines()[:2]
    assert header.split(";") == IDENTIFIERS[:6] + ["Straße", "PLZ", "Ort", "Geschlecht", "Alter", "Beruf",
                                                  "Einkommen", "Diagnose"]
    cells = first.split(";")
    assert re.fullmatch(r"\d\d\.\d\d\.\d{4}", cells[3]) and re.fullmatch(r"\d{5}", cells[7])
    assert re.fullmatch(r"\d{1,3}(\.\d{3})*,\d\d", cells[12])
    assert re.search(r";0\d{4};", text)  # postal codes with a leading zero (Dresden, Leipzig, ...)
    assert re.search(r";\d\.\d{3},\d\d;", text)  # thousands written 3.456,78


def test_the_generator_is_seeded_and_consistent():
    frame = german_customers(ROWS, seed=SEED)
    assert frame.equals(german_customers(ROWS, seed=SEED)) and not frame.equals(german_customers(ROWS, seed=2))
    assert frame.get_column("Kundennummer").n_unique() == ROWS
    assert _codes(frame).str.contains(r"^\d{5}$").all() and _codes(frame).str.starts_with("0").any()
    born = frame.get_column("Geburtsdatum")
    years = (pl.Series([REFERENCE_DAY] * ROWS) - born).dt.total_days() / 365.25
    assert ((years - frame.get_column("Alter")).abs() < 1.01).all()
    assert frame.get_column("E-Mail").str.contains(r"^[a-z]+\.[a-z]+\d+@example\.(com|org|net)$").all()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_named_table_is_the_file_read_back(german_csv):
    assert load(german_csv).frame.equals(german_customers(ROWS, seed=SEED))
    assert load(german_csv, decimal_comma=True).frame.equals(german_customers(ROWS, seed=SEED))
    assert "german-customers" in datasets.names()
    bundled = load("german-customers")
    assert bundled.n_rows == 20_000 and bundled.frame.get_column("PLZ").dtype == pl.String


# -- the draft -------------------------------------------------------------------------------------


def test_identifiers_by_name(draft):
    assert draft.identifiers == IDENTIFIERS
    assert {a.identifier_from for a in draft.attributes if a.role is Role.IDENTIFIER} == {"name"}
    assert draft.quasi_identifiers == QUASI
    birth = next(a for a in draft.attributes if a.name == "Geburtsdatum")
    assert "identifies a person" in birth.identifier and "year of birth" in birth.identifier


def test_postal_code_is_text_with_a_mask_hierarchy(draft, german_csv, tmp_path):
    plz = next(a for a in draft.attributes if a.name == "PLZ")
    assert plz.role is Role.QUASI_IDENTIFIER and plz.type.value == "categorical"
    assert plz.hierarchy.kind == "mask" and plz.hierarchy.spec == {"mask": 4}
    dataset = load(german_csv, schema=draft.write(tmp_path / "kunden.toml"))
    codes = _codes(dataset.frame)
    assert codes.dtype == pl.String and codes.str.starts_with("0").any() and codes.str.len_chars().min() == 5
    hierarchy = dataset.hierarchies["PLZ"]
    leading = next(c for c in codes.to_list() if c.startswith("0"))
    chain = [hierarchy.labels[level][hierarchy.leaf_map(level)[hierarchy.leaves.to_list().index(leading)]]
             for level in range(1, hierarchy.height + 1)]
    assert chain == [leading[:4] + "*", leading[:3] + "**", leading[:2] + "***", leading[:1] + "****", "*"]


def test_diagnosis_is_likely_sensitive_and_income_numeric(draft):
    assert draft.sensitive_suggestions == ["Einkommen", "Diagnose"]
    types = {a.name: a.type.value for a in draft.attributes}
    assert types["Einkommen"] == types["Alter"] == "numeric" and draft.decimal_comma is True
    age = next(a for a in draft.attributes if a.name == "Alter")
    assert age.hierarchy.spec == {"widths": [5, 10, 20, 40], "bottom": 0, "top": 120}  # Alter is an age


def test_no_text_hierarchy_lists_a_value_as_a_label(draft, german_csv, tmp_path):
    dataset = load(german_csv, schema=draft.write(tmp_path / "kunden.toml"))
    for name in ("PLZ", "Ort", "Geschlecht", "Beruf", "Diagnose"):
        assert labels_naming_values(dataset.hierarchies[name]) == [], name
    document = tomllib.loads(draft.to_toml())
    labels = [label for attribute in document["attributes"].values()
              for level in attribute.get("hierarchy", {}).get("groups", []) for label in level]
    assert labels and all(NEUTRAL.match(label) for label in labels), labels  # group 1, groups 1-3: no city


def test_near_unique_postal_codes_stay_quasi_identifiers():
    codes = [f"{(7919 * i) % 100_000:05d}" for i in range(500)]  # 500 distinct codes: near-unique text
    found = {a.name: a for a in draft_schema(pl.DataFrame({"PLZ": codes, "Kennzahl": codes})).attributes}
    assert found["PLZ"].role is Role.QUASI_IDENTIFIER and found["PLZ"].hierarchy.kind == "mask"
    assert found["Kennzahl"].identifier_from == "values"  # the same values under a name that says nothing


# -- every read of the file keeps the postal codes as text ----------------------------------------


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_loading_without_a_schema_keeps_leading_zeros(german_csv):
    frame = load(german_csv).frame
    assert _codes(frame).dtype == pl.String and _codes(frame).str.starts_with("0").any()
    assert frame.get_column("Einkommen").dtype == pl.Float64
    partial = load(german_csv, schema=Schema.of({"Ort": "categorical"}))  # PLZ left out: inferred
    assert _codes(partial.frame).dtype == pl.String
    declared = load(german_csv, schema=Schema.of({"PLZ": "numeric"}))  # a declaration wins
    assert declared.frame.get_column("PLZ").dtype == pl.Int64


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_streamed_reads_keep_leading_zeros(german_csv, monkeypatch):
    monkeypatch.setattr(streaming_module, "EAGER_BYTES", 0)  # every file streams
    streamed = load_or_stream(german_csv)
    assert isinstance(streamed, StreamedTable)
    codes = streamed.domain.frame.get_column("PLZ")
    assert codes.dtype == pl.String and codes.str.starts_with("0").any()
    counted = frequency_table(german_csv, ["PLZ"])
    assert counted.get_column("PLZ").dtype == pl.String and counted.get_column("PLZ").str.starts_with("0").any()


# -- the privacy boundary: names are public, values are the custodian's ---------------------------


def test_name_findings_read_no_value_and_value_findings_are_marked():
    frame = german_customers(300, seed=3)
    scrambled = frame.select(pl.col(c).cast(pl.String).str.replace_all(r"\w", "x") for c in frame.columns)
    assert draft_schema(frame).identifiers == draft_schema(scrambled).identifiers == IDENTIFIERS
    assert [w.split("'")[1] for w in name_warnings(Schema.infer(frame), frame.columns)] == IDENTIFIERS
    renamed = frame.rename({c: f"c{i}" for i, c in enumerate(frame.columns)})  # names that say nothing
    found = {a.name: a for a in draft_schema(renamed).attributes}
    by_values = {n: a.identifier_from for n, a in found.items() if a.role is Role.IDENTIFIER}
    assert by_values["c4"] == by_values["c5"] == by_values["c6"] == "values"  # e-mail, telephone, street
    assert set(by_values.values()) == {"values"}
    assert "FROM THE DATA (its values)" in draft_schema(renamed).to_toml()


def test_the_writer_does_not_replace_a_file_unless_forced(tmp_path):
    target = tmp_path / "kunden.csv"
    target.write_text("mine\n")
    with pytest.raises(CrowdsafeError, match="exists"):
        write_german_customers(target, rows=10)
    assert target.read_text() == "mine\n"
    write_german_customers(target, rows=10, force=True)
    assert target.read_text().startswith("Kundennummer;")
