"""The ledger across engines: the Spark engine identifies a table by another digest than the
Polars engine (docs/spark.md, "Identity and the ledger"), so the same rows are not recognised
across engines. The refusals a Spark user meets say so, and never send them to a step that
cannot work (``crowdsafe ledger init`` registers the Polars identity, which a Spark run does not
find)."""

from __future__ import annotations

import pytest

from crowdsafe import cli

pytestmark = pytest.mark.spark


def _table(tmp_path):
    source = tmp_path / "people.csv"
    source.write_text("age,sex\n" + "".join(f"{20 + i % 40},{'MF'[i % 2]}\n" for i in range(200)))
    return source


def test_a_spark_run_on_a_name_registered_from_polars_names_the_engine(spark, capsys, tmp_path, private_ledger):
    source = _table(tmp_path)
    assert cli.main(["ledger", "init", str(source), "--epsilon", "1", "--delta", "1e-5"]) == 0
    capsys.readouterr()
    code = cli.main(["query", str(source), "count", "--epsilon", "0.5", "--engine", "spark"])
    err = capsys.readouterr().err
    assert code == 2 and "already belongs to other data" in err, err
    assert "--engine spark identifies a table by another digest than the Polars engine" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_spark_run_without_a_budget_is_told_to_pass_one(spark, capsys, tmp_path, private_ledger):
    """`crowdsafe ledger init` registers the Polars engine's identity: the Spark refusal does not
    send the user there (following it led to "the name already belongs to other data")."""
    source = _table(tmp_path)
    for ledger_exists in (False, True):
        if ledger_exists:  # the ledger file exists, with another table in it
            other = tmp_path / "other.csv"
            other.write_text("a\n1\n2\n")
            assert cli.main(["ledger", "init", str(other), "--epsilon", "1", "--delta", "1e-5"]) == 0
            capsys.readouterr()
        code = cli.main(["query", str(source), "count", "--epsilon", "0.5", "--engine", "spark"])
        err = capsys.readouterr().err
        assert code != 0 and "no privacy budget is set for 'people.csv'" in err, err
        assert "pass --budget E,D to set one" in err and "ledger init" not in err, err



def test_a_spark_run_under_another_schema_is_told_the_types_count(spark, capsys, tmp_path, private_ledger):
    """On Spark the identity counts the declared types (docs/spark.md, "Remaining gap: declared
    types"): the refusal said they do not count, which is the Polars engine's rule."""
    source = _table(tmp_path)
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.age]\ntype = "categorical"\n[attributes.sex]\ntype = "categorical"\n')
    query = ["query", str(source), "count", "--epsilon", "0.5", "--engine", "spark"]
    assert cli.main([*query, "--schema", str(schema), "--budget", "1,1e-5"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    code = cli.main(query)
    err = capsys.readouterr().err
    assert code == 2 and "already belongs to other data" in err, err
    assert "except with --engine spark, whose identity counts the declared types" in err, err
