"""A drafted schema's ``from_data`` markers reach the certificate (issue 32, point 6).

`crowdsafe schema draft` marks, per attribute, what it read from the data; until the custodian
deletes the marker, a release (or α-β view) that uses the column is certified not fit for
release, with a reason naming the column and what was read. A marker on a column the run does
not use changes nothing.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import Schema, load
from crowdsafe.data.schema import complete_schema
from crowdsafe.data.schema_draft import draft_schema
from crowdsafe.datasets.people import write_people_csv
from crowdsafe.errors import SchemaError
from crowdsafe.privacy import Certificate

#: what the draft reads from the data of the people table, per column it does not draft an identifier: a
#: CSV has no types, so every type is read from the values but zip's (a code by its name)
MARKERS = {"age": ("type integer",), "sex": ("type categorical", "hierarchy flat"), "zip": ("hierarchy mask depth",),
           "arrest_date": ("type date",), "charge": ("type categorical", "hierarchy groups"),
           "disposition": ("type categorical", "hierarchy groups")}
#: and of its identifiers (dropped before any release, so they count only if one is kept)
IDENTIFIER_MARKERS = {"id": ("type integer",), "date_of_birth": ("type date",),
                      **dict.fromkeys(("first_name", "last_name", "email", "phone", "case_number"),
                                      ("type categorical",))}
SEEDED = "seeded randomness"
UNREVIEWED = "unreviewed schema draft"


@pytest.fixture(scope="module")
def drafted(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("drafted")
    csv = write_people_csv(root / "people.csv", 6_000, seed=5)
    return csv, draft_schema(csv).write(root / "people.toml")


def reviewed(toml: Path, out: Path, only: tuple[str, ...] | None = None) -> Path:
    """``toml`` after the custodian's review: every ``from_data`` line deleted (of the attributes
    ``only``, when given), nothing else."""
    lines, table = [], None
    for line in toml.read_text(encoding="utf-8").splitlines():
        if line.startswith("[attributes.") and not line.startswith("[attributes.\""):
            table = line.strip("[]").split(".")[1]
        if not (line.startswith("from_data =") and (only is None or table in only)):
            lines.append(line)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def reasons_about(certificate: Certificate, prefix: str) -> list[str]:
    return [r for r in certificate.unfit_reasons if r.startswith(prefix)]


def test_the_draft_writes_a_marker_for_each_choice_read_from_the_data(drafted):
    _, toml = drafted
    attributes = tomllib.loads(toml.read_text(encoding="utf-8"))["attributes"]
    marked = {name: tuple(spec["from_data"]) for name, spec in attributes.items() if "from_data" in spec}
    # age's hierarchy (public 0-120) and the dates' read nothing, but their types are the values'
    # (40.5 in a neighbour makes age real); sex is flat because the data holds two values (a third in
    # a neighbour would make it groups); zip is text by its name
    assert marked == {**MARKERS, **IDENTIFIER_MARKERS}
    assert toml.read_text(encoding="utf-8").count("deleted this line") == len(MARKERS) + len(IDENTIFIER_MARKERS)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_markers_round_trip_and_survive_derivations(drafted):
    csv, toml = drafted
    schema = Schema.from_toml(toml)
    assert {a.name: a.from_data for a in schema if a.from_data} == {**MARKERS, **IDENTIFIER_MARKERS}
    assert schema.unreviewed(["age", "zip", "charge", "nope"]) == {
        "age": MARKERS["age"], "zip": MARKERS["zip"], "charge": MARKERS["charge"]}
    assert schema.unreviewed(["zip"], keys=["order"]) == {}  # the mask depth concerns the hierarchy
    assert schema.unreviewed(["age", "charge"], keys=["type"]) == {"age": ("type integer",),
                                                                   "charge": ("type categorical",)}
    assert schema.with_roles(qi=["age", "zip"], sensitive=["charge"]).unreviewed(["zip", "charge"]) == {
        "zip": MARKERS["zip"], "charge": MARKERS["charge"]}
    partial = schema.select(["zip", "age"])
    assert partial["zip"].from_data == MARKERS["zip"]
    frame = pl.read_csv(csv, schema_overrides={"zip": pl.String}).select("zip", "age", "sex")
    assert complete_schema(partial, frame)["zip"].from_data == MARKERS["zip"]
    assert load(csv, schema=toml).schema.unreviewed(list(MARKERS)) == MARKERS
    described = {a["name"]: a for a in schema.to_dict()["attributes"]}
    assert described["zip"]["from_data"] == ["hierarchy mask depth"] and described["age"]["from_data"] == [
        "type integer"]
    assert "(from the data, unreviewed: type categorical, hierarchy groups)" in schema.summary()


@pytest.mark.parametrize(("value", "message"), [
    ('"hierarchy groups"', "must be a list"),
    ('["groups"]', "must start with the key it concerns"),
    ('[""]', "must be a list"),
])
def test_a_bad_marker_is_one_clear_schema_error(tmp_path, value, message):
    path = tmp_path / "s.toml"
    path.write_text(f'[attributes.city]\ntype = "categorical"\nfrom_data = {value}\n', encoding="utf-8")
    with pytest.raises(SchemaError, match=message) as caught:
        Schema.from_toml(path)
    assert "attribute 'city'" in str(caught.value) and "\n" not in str(caught.value)
    path.write_text('[attributes.city]\ntype = "categorical"\nfrom_data = []\n', encoding="utf-8")
    assert Schema.from_toml(path)["city"].from_data == ()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_an_unedited_draft_certifies_not_fit_naming_each_column(drafted, tmp_path):
    csv, toml = drafted
    publication = api.publish(csv, schema=toml, epsilon=1.0, delta=1e-6, seed=3, ledger=tmp_path / "l.db",
                              out=tmp_path / "r.csv", report=False)
    certificate = publication.certificate
    assert not certificate.fit_for_release and certificate.unreviewed_schema == MARKERS
    reasons = reasons_about(certificate, UNREVIEWED)
    assert len(reasons) == len(MARKERS)
    for column, read in MARKERS.items():
        assert any(f"column '{column}': {' and '.join(read)} read from the data" in r for r in reasons)
    assert "unreviewed schema draft: NOT fit for release" in certificate.summary()
    assert publication.summary()["unfit_reasons"] == list(certificate.unfit_reasons)
    written = json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))
    assert written["version"] == 3 and written["unreviewed_schema"] == {c: list(m) for c, m in MARKERS.items()}
    assert written["unfit_reasons"] == list(certificate.unfit_reasons)
    assert Certificate.read(tmp_path / "r.certificate.json").unfit_reasons == certificate.unfit_reasons


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_reviewed_draft_can_be_fit(drafted, tmp_path):
    csv, toml = drafted
    clean = reviewed(toml, tmp_path / "reviewed.toml")
    assert Schema.from_toml(clean).unreviewed(Schema.from_toml(clean).names) == {}
    publication = api.publish(csv, schema=clean, epsilon=1.0, delta=1e-6, ledger=tmp_path / "l.db",
                              out=tmp_path / "r.csv", report=False)  # no seed: secure randomness, a ledger
    assert publication.certificate.fit_for_release, publication.certificate.unfit_reasons
    assert json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))["version"] == 2


@pytest.mark.slow
def test_a_marker_on_an_unpublished_column_changes_nothing(drafted, tmp_path):
    csv, toml = drafted
    clean = reviewed(toml, tmp_path / "reviewed.toml")
    qi = ["age", "arrest_date"]  # zip, sex, charge and disposition are not published
    # their markers only are left: those of the published columns (their types) are reviewed
    partly = reviewed(toml, tmp_path / "partly.toml", only=tuple(qi))
    runs = [api.publish(csv, schema=schema, qi=qi, epsilon=1.0, delta=1e-6, seed=3, ledger=None, report=False)
            for schema in (partly, clean)]
    assert not reasons_about(runs[0].certificate, UNREVIEWED) and runs[0].certificate.unreviewed_schema == {}
    assert runs[0].certificate.to_dict() == runs[1].certificate.to_dict()
    # published as a sensitive attribute, the column counts again
    again = api.publish(csv, schema=partly, qi=qi, sensitive=["disposition"], epsilon=1.0, delta=1e-6, seed=3,
                        ledger=None, report=False)
    assert again.certificate.unreviewed_schema == {"disposition": MARKERS["disposition"]}


@pytest.mark.slow
def test_an_alpha_beta_view_on_a_drafted_order_is_not_fit(drafted, tmp_path):
    """The drafted frequency groups of 'disposition' are a hierarchy with a value list, which α-β
    takes as the public domain: the view names the marker until it is deleted."""
    csv, toml = drafted
    common = dict(attributes=["disposition", "sex"], max_rows=10_000, gamma=0.5, d=0.1, ledger=None)
    marked = api.perturb(csv, schema=toml, domains={"sex": ["F", "M"]}, seed=1, **common)
    assert marked.view.certificate.parameters["domain_sources"]["disposition"] == "hierarchy leaves"
    reasons = reasons_about(marked.view.certificate, UNREVIEWED)
    assert reasons == [  # the types read from the values count for every domain
        "unreviewed schema draft: column 'disposition': type categorical and hierarchy groups read from the data, "
        "not marked reviewed (check it is public, then delete the column's from_data line in the schema)",
        "unreviewed schema draft: column 'sex': type categorical read from the data, not marked reviewed (check it "
        "is public, then delete the column's from_data line in the schema)"]
    assert not marked.as_dict()["fit_for_release"] and marked.as_dict()["unfit_reasons"][-2:] == reasons
    # a declared domain does not use the schema's hierarchy: its marker changes nothing (the type's still counts)
    declared = api.perturb(csv, schema=toml, domains={"sex": ["F", "M"], "disposition": ["Acquitted", "Convicted",
                           "Deferred", "Dismissed", "Pending"]}, seed=1, **common)
    assert declared.view.certificate.unreviewed_schema == {"disposition": ("type categorical",),
                                                           "sex": ("type categorical",)}
    clean = reviewed(toml, tmp_path / "reviewed.toml")
    fit = api.perturb(csv, schema=clean, domains={"sex": ["F", "M"]}, out=tmp_path / "v.csv", report=False, **common)
    assert fit.as_dict()["fit_for_release"], fit.view.certificate.unfit_reasons


def test_a_histogram_over_an_unreviewed_order_is_not_fit(tmp_path):
    """A query's mechanism uses one schema key: a histogram's public cells from an ``order``. A
    draft never marks an order (it writes one only from a column type's declared categories),
    but a marker there reaches the answer; other queries and listed values ignore it."""
    path = tmp_path / "t.csv"
    pl.DataFrame({"size": ["S", "M", "L", "M"] * 30, "n": list(range(120))}).write_csv(path)
    toml = tmp_path / "s.toml"
    toml.write_text('[attributes.size]\ntype = "ordinal"\norder = ["S", "M", "L", "XL"]\nfrom_data = ["order"]\n'
                    '[attributes.n]\ntype = "integer"\n', encoding="utf-8")
    marked = api.query(path, "histogram size", epsilon=1.0, schema=toml, ledger=None)
    assert marked.unreviewed_schema == {"size": ("order",)} and not marked.fit_for_release
    assert marked.as_dict()["unfit_reasons"] == [
        "unreviewed schema draft: column 'size': order read from the data, not marked reviewed (check it is "
        "public, then delete the column's from_data line in the schema)"]
    for text in ("histogram size in ('S', 'M', 'L', 'XL')", "count where size = 'S'", "sum(n) clamp 0..200"):
        answer = api.query(path, text, epsilon=1.0, schema=toml, ledger=None)
        assert answer.unreviewed_schema == {} and answer.fit_for_release, text
        assert "unreviewed_schema" not in answer.as_dict()
