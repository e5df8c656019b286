"""A schema given for a bundled table is honoured: its hierarchies are the ones the release uses,
and the certificate's reasons name those (found by the app sweep: `publish adult --schema FILE`
published Adult's own workclass groups while the certificate spoke of the file's)."""

from __future__ import annotations

import polars as pl

from cli_helpers import run_command
from crowdsafe.privacy import Certificate

WORKCLASS = sorted(["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "State-gov", "Local-gov",
                    "Without-pay", "Never-worked"])
SCHEMA_HEAD = """
[attributes.age]  # no hierarchy named: Adult's own
role = "quasi-identifier"
type = "integer"

[attributes.workclass]
role = "quasi-identifier"
type = "categorical"
from_data = ["hierarchy groups"]
[[attributes.workclass.hierarchy.groups]]
W1 = ["Private", "Self-emp-not-inc", "Local-gov"]
W2 = ["State-gov", "Self-emp-inc", "Federal-gov", "Without-pay", "Never-worked"]

[attributes.sex]
role = "quasi-identifier"
type = "categorical"
"""
#: the other columns, published as they are
INSENSITIVE = {**dict.fromkeys(["education", "marital-status", "occupation", "race", "native-country", "relationship"],
                               "categorical"),
               **dict.fromkeys(["fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"],
                               "integer")}
SCHEMA = SCHEMA_HEAD + "".join(
    f'[attributes.{name}]\nrole = "insensitive"\ntype = "{kind}"\n\n' for name, kind in INSENSITIVE.items()) + """
[attributes.income]
role = "sensitive"
type = "categorical"
"""


def test_publish_of_a_bundled_table_uses_the_schemas_hierarchies(capsys, tmp_path):
    schema = tmp_path / "adult.schema.toml"
    schema.write_text(SCHEMA, encoding="utf-8")
    out = tmp_path / "a.csv"
    code, _, err = run_command(capsys, "publish", "adult", "--schema", str(schema), "--epsilon", "1", "--no-ledger",
                               "--seed", "3", "--scheme", "workclass=1", "--out", str(out))
    assert code == 0, err
    published = set(pl.read_csv(out, infer_schema=False).get_column("workclass").drop_nulls().to_list())
    # the schema's groups (W1, W2) or the values; never Adult's own groups (Self-employed, Government)
    assert published and published <= {*WORKCLASS, "W1", "W2", "*", "?"}, published
    assert published & {"W1", "W2"}, published  # level 1: the file's groups
    certificate = Certificate.read(tmp_path / "a.certificate.json")
    reasons = " ".join(certificate.unfit_reasons)
    assert "'workclass'" in reasons  # the file's groups, which the release used
