"""`perturb --max-view-rows N --engine spark` refuses a plan expecting a larger view, as the Polars
engine does, before anything is drawn or written. Until 2026-11-30 the Spark engine ignored the
limit silently (a user who capped the view got one of any size); it still has none by default,
since it writes its view in parts rather than in memory."""

from __future__ import annotations

import json

import pytest

from crowdsafe import cli

pytestmark = pytest.mark.spark


def test_a_limit_given_is_kept_on_spark_as_on_polars(spark, tmp_path, capsys):
    data = tmp_path / "people.csv"
    data.write_text("age,sex\n" + "".join(f"{20 + i % 40},{'MF'[i % 2]}\n" for i in range(200)))
    domains = tmp_path / "domains.json"
    domains.write_text(json.dumps({"age": list(range(1000)), "sex": ["M", "F"]}))
    base = ["perturb", str(data), "--gamma", "0.5", "--c", "2", "--max-rows", "500", "--domains", str(domains),
            "--seed", "1", "--no-ledger"]  # Spark charges no ledger for a view
    refusals = {}
    for engine in ("polars", "spark"):
        out = tmp_path / "views" / f"{engine}.parquet"
        code = cli.main([*base, "--engine", engine, "--out", str(out), "--max-view-rows", "100"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, (engine, err)
        refusals[engine] = err
        assert not out.exists()
    assert "the view would hold about 584 rows, more than --max-view-rows 100" in refusals["spark"]
    assert refusals["spark"].split("(")[0] == refusals["polars"].split("(")[0]
    assert not (tmp_path / "views").exists() or not any((tmp_path / "views").iterdir())  # no staging folder
    # the view fits the limit: written on both engines
    for engine in ("polars", "spark"):
        out = tmp_path / f"{engine}.parquet"
        assert cli.main([*base, "--engine", engine, "--out", str(out), "--max-view-rows", "1000"]) == 0, (
            capsys.readouterr().err)
        assert out.exists()
