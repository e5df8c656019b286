"""An identifier's ``type`` may be left out of a schema file: the column is dropped from every
output and never read as a value, so the type it was asked for said nothing (ARX and sdcMicro
users declare identifiers by role alone). Read as text without one."""

from __future__ import annotations

import polars as pl

from crowdsafe import api
from crowdsafe.data import Schema
from crowdsafe.data.schema import AttributeType, Role

SCHEMA = """person_id = "patient"
[attributes.patient]
role = "identifier"
[attributes.age]
type = "integer"
[attributes.sex]
type = "categorical"
"""


def _files(tmp_path):
    data, schema = tmp_path / "d.csv", tmp_path / "s.toml"
    # identifiers of no one type: a number and a code (a declared integer would refuse 'P-3')
    data.write_text("patient,age,sex\n" + "".join(f"{'P-' if i % 2 else ''}{i},{30 + i % 4},{'FM'[i % 2]}\n"
                                                  for i in range(40)))
    schema.write_text(SCHEMA)
    return data, schema


def test_an_identifier_without_a_type_is_read(tmp_path):
    _, schema = _files(tmp_path)
    patient = Schema.from_toml(schema)["patient"]
    assert patient.role is Role.IDENTIFIER and patient.type is AttributeType.CATEGORICAL


def test_it_is_dropped_and_its_rows_told_apart(tmp_path):
    data, schema = _files(tmp_path)
    out = tmp_path / "r.csv"
    release = api.anonymize(str(data), schema=str(schema), k=5, out=str(out), report=False)
    assert "patient" not in pl.read_csv(out).columns and "patient" not in release.frame.columns
    answer = api.query(str(data), "count", schema=str(schema), epsilon=1.0, max_rows_per_person=1, ledger=None,
                       seed=1)
    assert answer.kind == "count"
