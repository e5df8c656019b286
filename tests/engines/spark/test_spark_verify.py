"""`crowdsafe ledger verify` on a Spark release (a folder of part files), as on a Polars release
(a file). Until 2026-11-30 a folder got no digest in the ledger, so a Spark release could never
be checked: "the ledger holds no digest of its table (a folder or a remote path)"."""

from __future__ import annotations

import pytest

from crowdsafe import cli
from crowdsafe.data import load

pytestmark = pytest.mark.spark


def test_a_spark_release_folder_is_verified_byte_for_byte(spark, tmp_path, capsys, private_ledger):
    source = tmp_path / "people.csv"
    load("adult").frame.head(2000).select("race", "sex", "income").write_csv(source)
    schema = tmp_path / "schema.toml"
    schema.write_text("".join(f'[attributes.{c}]\ntype = "categorical"\n' for c in ("race", "sex", "income")))
    out = tmp_path / "release" / "people.parquet"
    assert cli.main(["publish", str(source), "--engine", "spark", "--scheme", "coarse", "--schema", str(schema),
                     "--qi", "sex,race", "--sensitive", "income", "--budget", "5,1e-5", "--no-report",
                     "--out", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert cli.main(["ledger", "verify", str(out)]) == 0, capsys.readouterr().err
    assert "are the files ledger entry #1" in capsys.readouterr().out
    part = next(p for p in sorted(out.iterdir()) if p.name.startswith("part-") and p.stat().st_size)
    original = part.read_bytes()
    for change in ("edited", "added", "renamed"):
        if change == "edited":
            part.write_bytes(original + b"x")
        elif change == "added":
            (out / "part-99999.parquet").write_bytes(original)
        else:
            part.rename(out / ("x" + part.name))
        code = cli.main(["ledger", "verify", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and "is not the table ledger entry #1" in err and "SHA-256 differs" in err, (change, err)
        if change == "edited":
            part.write_bytes(original)
        elif change == "added":
            (out / "part-99999.parquet").unlink()
        assert change == "renamed" or cli.main(["ledger", "verify", str(out)]) == 0
        capsys.readouterr()
