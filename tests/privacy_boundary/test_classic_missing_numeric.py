"""Classic anonymization (no guarantee) refuses a missing numeric quasi-identifier, and says the
refusal is a custodian-only fact about the data (sweep pb6, item 4).

Mondrian (a range) and MDAV (a mean) have no place for a missing number, so D plus one row with
an empty age is refused where D runs: the exit status depends on one row, which the rule allows
for the custodian's own runs when the message says whose fact it is (docs/privacy-boundary.md).
"""

from __future__ import annotations

import polars as pl
import pytest
from boundary_data import base_table

from crowdsafe import cli

SCHEMA = """[attributes.age]
role = "quasi-identifier"
type = "integer"
[attributes.hours-per-week]
role = "quasi-identifier"
type = "integer"
[attributes.education]
role = "quasi-identifier"
type = "categorical"
[attributes.sex]
role = "quasi-identifier"
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
"""
ARGS = {
    "mondrian": ["--qi", "age,education,sex", "--sensitive", "income", "--k", "5", "--l", "1.2"],
    "mdav": ["--qi", "age,hours-per-week", "--k", "5"],
}


@pytest.mark.parametrize("algorithm", [pytest.param("mondrian", marks=pytest.mark.slow), "mdav"])  # slow: 0.5 s+
def test_a_missing_numeric_qi_is_refused_as_a_custodian_fact(tmp_path, capsys, algorithm):
    table = base_table().select("age", "hours-per-week", "education", "sex", "income").head(400)
    sides = {"D": table, "D1": pl.concat([table, table.head(1).with_columns(pl.lit(None, dtype=table.schema["age"])
                                                                           .alias("age"))])}
    codes = {}
    for side, frame in sides.items():
        folder = tmp_path / side
        folder.mkdir()
        frame.write_csv(folder / "data.csv")
        (folder / "schema.toml").write_text(SCHEMA, encoding="utf-8")
        capsys.readouterr()
        codes[side] = cli.main(["anonymize", str(folder / "data.csv"), "--schema", str(folder / "schema.toml"),
                                "--algorithm", algorithm, *ARGS[algorithm], "--out", str(folder / "a" / "r.csv")])
        err = capsys.readouterr().err
    assert codes == {"D": 0, "D1": 2}
    assert "numeric quasi-identifier 'age' has missing values" in err
    assert "drop those rows (--missing drop)" in err and "missing='drop'" not in err  # the flag, not Python
    assert err.rstrip().endswith("(a custodian-only fact about the data: keep this message to the custodian)")
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "D1" / "a").exists()
