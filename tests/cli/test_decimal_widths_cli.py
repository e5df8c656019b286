"""`crowdsafe publish` with a widths hierarchy of decimal widths (the black-box repro): every published
cell contains its own value, and `check --original` reads the release back against the original."""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from cli_helpers import run_command

SCHEMA = """[attributes.ph]
role = "quasi-identifier"
type = "real"
hierarchy = { widths = [0.1, 1], bottom = 0, top = 14 }
[attributes.sex]
role = "quasi-identifier"
type = "categorical"
hierarchy = { flat = true }
"""


def test_decimal_widths_publish_bands_that_hold_their_values(capsys, tmp_path):
    data, schema, out = tmp_path / "ph.csv", tmp_path / "ph.toml", tmp_path / "rel" / "ph.csv"
    data.write_text("\n".join(["ph,sex", *(f"{[6.6, 7.1, 0.3][i % 3]},{'FM'[i % 2]}" for i in range(6000))]) + "\n")
    schema.write_text(SCHEMA)
    code, _, err = run_command(capsys, "publish", str(data), "--schema", str(schema), "--scheme", "ph=1,sex=0",
                               "--epsilon", "3", "--no-ledger", "--seed", "1", "--no-report", "--out", str(out))
    assert code == 0, err
    published = pl.read_csv(out, infer_schema=False)
    # each value has its own band of width 0.1, which begins at it: [6.6, 6.7), not [6.5, 6.6)
    assert set(published["ph"].to_list()) == {"[0.3, 0.4)", "[6.6, 6.7)", "[7.1, 7.2)"}
    for label in set(published["ph"].to_list()):
        low, high = (Decimal(x) for x in label[1:-1].split(", "))
        assert sum(low <= Decimal(v) < high for v in ("6.6", "7.1", "0.3")) == 1
    code, _, err = run_command(capsys, "check", str(out), "--original", str(data), "--schema", str(schema))
    assert code == 0, err  # every cell covers a value of the original (the old '[0.2, 0.3)' covered none)
