"""`crowdsafe publish --engine spark` from a CSV file, the ledger, and all-or-nothing writes."""

from __future__ import annotations

import json

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.privacy import Certificate
from crowdsafe.privacy.ledger import Ledger

pytestmark = pytest.mark.spark


def test_cli_publishes_a_csv_file_on_spark_and_charges_the_ledger(spark, capsys, tmp_path, private_ledger):
    source = tmp_path / "people.csv"
    load("adult").frame.head(3000).select("race", "sex", "income").write_csv(source)
    schema = tmp_path / "schema.toml"  # declared types: a schema inferred from the data is not fit for release
    schema.write_text("".join(f'[attributes.{c}]\ntype = "categorical"\n' for c in ("race", "sex", "income")))
    out = tmp_path / "release" / "people.csv"
    code = cli.main(["publish", str(source), "--engine", "spark", "--scheme", "coarse", "--schema", str(schema),
                     "--qi", "sex,race", "--sensitive", "income", "--budget", "5,1e-5", "--json",
                     "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    payload = json.loads(printed)
    # flat hierarchies: coarse = kept
    assert payload["releases"][0]["dp_output"]["scheme"] == {"race": 0, "sex": 0, "income": 0}
    parts = sorted(out.glob("part-*.csv"))
    assert parts, "the release is a directory of CSV part files"
    written = pl.concat([pl.read_csv(p, infer_schema=False) for p in parts if p.stat().st_size])
    assert written.columns == ["race", "sex", "income"]
    assert written.height == payload["releases"][0]["dp_output"]["rows_published"]
    assert written.group_by(written.columns).len().get_column("len").min() >= payload["plan"]["k"]
    certificate = Certificate.read(tmp_path / "release" / "people.certificate.json")
    assert certificate.fit_for_release and certificate.guarantee == "dps"
    assert "spark" in json.dumps(Ledger(private_ledger).export())  # the charge records the engine
    assert payload["custodian_only"]["ledger"]["budget"]["spent"]["epsilon"] == pytest.approx(1.0)
    report = tmp_path / "release" / "people.report.html"  # beside the folder, built from its part files
    assert payload["written"]["reports"] == [str(report)] and "Release report: people.csv" in report.read_text()
    assert f"{written.height:,} records" in report.read_text()
    # the ledger records the folder's digest (its part files': crowdsafe.drivers.verify.folder_digest), so
    # `ledger verify` checks a Spark release as a file's; it recorded none and could not
    code = cli.main(["ledger", "verify", str(out), "--json"])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(printed)["entry"] == payload["custodian_only"]["ledger"]["entry"]
    edited = next(p for p in parts if p.stat().st_size)
    edited.write_text(edited.read_text() + edited.read_text().splitlines()[-1] + "\n")  # one row more
    code = cli.main(["ledger", "verify", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "SHA-256 differs" in err and err.count("\n") == 1, err



def test_the_output_guard_holds_on_spark_local_paths(spark, capsys, tmp_path, private_ledger):
    """A Spark release onto its input folder of parts, or into it, is refused before anything is
    read or charged (the writer renames the old output aside and deletes it: the data would go);
    a rerun replaces the release folder crowdsafe wrote; a folder crowdsafe did not write needs
    --force."""
    data = tmp_path / "people.parquet"
    data.mkdir()
    load("adult").frame.head(2000).select("race", "sex", "income").write_parquet(data / "part-0.parquet")
    before = (data / "part-0.parquet").read_bytes()
    base = ["publish", str(data), "--engine", "spark", "--scheme", "coarse", "--qi", "sex,race", "--sensitive",
            "income", "--seed", "1", "--no-report", "--ledger", str(private_ledger), "--budget", "5,1e-5"]
    for out, words in ((data, "would overwrite the data"), (data / "r.parquet", "inside that folder")):
        code = cli.main([*base, "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and words in err and err.count("\n") == 1
    assert sorted(p.name for p in data.iterdir()) == ["part-0.parquet"] and (data / "part-0.parquet").read_bytes() \
        == before
    assert Ledger(private_ledger).entries() == []
    out = tmp_path / "release.parquet"
    for _ in range(2):  # the second run replaces the release crowdsafe wrote
        assert cli.main([*base, "--out", str(out)]) == 0, capsys.readouterr().err
    assert len(Ledger(private_ledger).entries()) == 2
    foreign = tmp_path / "theirs.parquet"
    foreign.mkdir()
    code = cli.main([*base, "--out", str(foreign)])
    assert code == 2 and "exists and crowdsafe did not write it" in capsys.readouterr().err


def test_spark_master_needs_the_spark_engine(capsys, tmp_path):
    code = cli.main(["publish", "adult", "--spark-master", "local[2]", "--out", str(tmp_path / "x.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and "--engine spark" in err
    code = cli.main(["publish", "adult", "--engine", "flink", "--out", str(tmp_path / "x.csv")])
    _, err = capsys.readouterr()
    assert code == 2 and "unknown engine" in err


def test_a_failed_write_leaves_the_previous_output_untouched(spark, tmp_path):
    from pyspark.sql import functions as F

    from crowdsafe.engines.spark.write import write_releases

    target = str(tmp_path / "release.parquet")
    write_releases(spark, [spark.range(5)], ['{"first": true}'], [target])
    before = sorted(p.name for p in tmp_path.rglob("*"))
    failing = spark.range(5).select(F.when(F.col("id") > 2, F.raise_error(F.lit("boom"))).otherwise(F.col("id")))
    with pytest.raises(Exception, match="boom"):
        write_releases(spark, [failing], ['{"second": true}'], [target])
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert json.loads((tmp_path / "release.certificate.json").read_text()) == {"first": True}
    assert pl.read_parquet(tmp_path / "release.parquet" / "*.parquet").height == 5


def test_spark_csv_releases_are_formula_safe_unless_told(spark, tmp_path):
    import csv

    from crowdsafe.engines.spark.write import write_releases

    cells = ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "'=x", "-5", "plain"]
    escaped = ["'=1+1", "'+cmd", "'-2+3", "'@SUM(A1)", "''=x", "-5", "plain"]  # by hand (OWASP)
    frame = spark.createDataFrame(pl.DataFrame({"=note": cells, "n": [-5] * len(cells)}).to_arrow()).coalesce(1)

    def written(name: str) -> list[list[str]]:
        parts = sorted((tmp_path / name).glob("part-*.csv"))
        rows: list[list[str]] = []
        for part in parts:
            with open(part, newline="", encoding="utf-8") as handle:
                rows += list(csv.reader(handle))
        return rows

    write_releases(spark, [frame], ["{}"], [str(tmp_path / "safe.csv")])
    write_releases(spark, [frame], ["{}"], [str(tmp_path / "raw.csv")], escape_formulas=False)
    safe, raw = written("safe.csv"), written("raw.csv")
    assert safe[0] == ["'=note", "n"] and [r[0] for r in safe[1:]] == escaped
    assert {r[1] for r in safe[1:]} == {"-5"}
    assert raw[0] == ["=note", "n"] and [r[0] for r in raw[1:]] == cells


@pytest.mark.parametrize("epsilon", ["1", "0.1"])
def test_plan_only_on_spark_is_the_plan_the_run_makes(spark, capsys, tmp_path, private_ledger, epsilon):
    """``--plan-only --engine spark`` reads the table's hierarchies (the table pass, no count) and
    prints the plan the Polars engine prints for the same table, and the one the Spark run then
    makes (lattice sized, the default objective, the choice on the table at small ε)."""
    plans = {}
    for engine in ("polars", "spark"):
        code = cli.main(["publish", "adult", "--engine", engine, "--plan-only", "--json", "--epsilon", epsilon,
                         "--delta", "1e-6"])
        printed, err = capsys.readouterr()
        assert code == 0, err
        plans[engine] = json.loads(printed)
    assert plans["spark"]["plan"] == plans["polars"]["plan"]
    assert plans["spark"]["custodian_only"]["input_rows"] == load("adult").n_rows
    assert plans["spark"]["plan"]["selection_source"] == ("table" if epsilon == "0.1" else "sample")
    code = cli.main(["publish", "adult", "--engine", "spark", "--json", "--epsilon", epsilon, "--delta", "1e-6",
                     "--budget", "5,1e-5", "--seed", "4", "--out", str(tmp_path / "r.parquet")])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(printed)["plan"] == plans["spark"]["plan"]
