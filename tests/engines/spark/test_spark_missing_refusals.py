"""Refusals of the Spark engine that depend on the data say whose fact they are (sweep pb7).

Each test runs one command on a table D and on D plus one row (same seed): D answers, D+1 is
refused, so the refusal tells something about the rows and must carry a custodian-only label
(docs/privacy-boundary.md), in the Polars engine's words.
"""

from __future__ import annotations

import functools

import pytest

from crowdsafe import api
from crowdsafe.errors import CrowdsafeError
from small_schemas import AGE_SEX, EDU

pytestmark = pytest.mark.spark

SCHEMA = AGE_SEX + EDU
ROWS = "age,sex,edu\n30,F,HS\n41,M,BSc\n52,F,BSc\n33,M,HS\n"


def _tables(tmp_path, extra: str) -> dict[str, str]:
    (tmp_path / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    paths = {}
    for side, text in {"D": ROWS, "D1": ROWS + extra}.items():
        path = tmp_path / f"{side}.csv"
        path.write_text(text, encoding="utf-8")
        paths[side] = str(path)
    return paths


def _refusal(run) -> str | None:
    try:
        run()
    except CrowdsafeError as exc:
        return str(exc)
    return None


def test_missing_error_refusals_are_labelled_as_on_the_polars_engine(spark, tmp_path):
    paths = _tables(tmp_path, "29,,HS\n")  # D1: one row with a missing sex
    schema = str(tmp_path / "schema.toml")

    def query(path, engine):
        return lambda: api.query(path, "count", epsilon=1, randomness=3, ledger=None, schema=schema,
                                 engine=engine, missing="error")

    def publish(path, engine):
        out = tmp_path / engine / path.rsplit("/", 1)[-1]
        return lambda: api.publish(path, epsilon=1, qi=["age", "sex"], sensitive="edu", seed=3, schema=schema,
                                   engine=engine, out=str(out / "r.parquet"), ledger=str(out / "l.sqlite3"),
                                   budget=(5, 1e-3), missing="error", scheme="medium")

    for command in (query, publish):
        assert _refusal(command(paths["D"], "spark")) is None
        on_spark = _refusal(command(paths["D1"], "spark"))
        on_polars = _refusal(command(paths["D1"], "polars"))
        assert on_spark is not None and on_polars is not None
        assert "1 row with missing values (first in column 'sex')" in on_spark
        assert on_spark.endswith("(a custodian-only fact about the data: missing='error' checks the data "
                                 "itself; nothing was charged)")
        assert on_spark.split(" has ", 1)[1] == on_polars.split(" has ", 1)[1], command.__name__


def test_tables_without_rows_are_refused_with_the_empty_table_label(spark, tmp_path):
    """Header only (Z vs Z plus a row), and emptied by missing='drop' (E: every row has a missing
    value, vs E plus a complete row): refused on query, perturb and publish, labelled as the empty
    table (until now Spark's query answered, and charged, on zero rows; its publish and perturb said
    "has no rows", unlabelled), as the Polars engine refuses them."""
    from crowdsafe.errors import EMPTY_TABLE

    schema = str(tmp_path / "schema.toml")
    (tmp_path / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    tables = {"Z": "age,sex,edu\n", "E": "age,sex,edu\n30,,HS\n,M,BSc\n"}
    for name, text in tables.items():
        (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
        (tmp_path / f"{name}1.csv").write_text(text + "41,F,BSc\n", encoding="utf-8")

    def query(path, missing):
        return lambda: api.query(path, "count", epsilon=1, randomness=3, ledger=None, schema=schema,
                                 engine="spark", missing=missing)

    def perturb(path, missing):
        out = tmp_path / "views" / path.rsplit("/", 1)[-1]
        return lambda: api.perturb(path, attributes=["sex", "edu"], gamma=0.5, d=0.2, max_rows=10, seed=3,
                                   schema=schema, engine="spark", missing=missing, out=str(out / "v.parquet"),
                                   ledger=None)

    def publish(path, missing):
        out = tmp_path / "out" / path.rsplit("/", 1)[-1]
        return lambda: api.publish(path, epsilon=1, qi=["age", "sex"], sensitive="edu", seed=3, schema=schema,
                                   engine="spark", out=str(out / "r.parquet"), ledger=str(out / "l.sqlite3"),
                                   budget=(5, 1e-3), missing=missing, scheme="medium")

    # (header only: Spark's query and perturb were labelled already; kept small, Spark is slow)
    for name, command, missing in (("Z", publish, "keep"), ("Z", publish, "drop"), ("E", query, "drop"),
                                   ("E", perturb, "drop"), ("E", publish, "drop")):
        assert _refusal(command(str(tmp_path / f"{name}1.csv"), missing)) is None, (name, command.__name__)
        refusal = _refusal(command(str(tmp_path / f"{name}.csv"), missing))
        assert refusal is not None and refusal.endswith(EMPTY_TABLE), (name, command.__name__, refusal)


def test_parameter_errors_come_before_the_data_on_spark(spark, tmp_path):
    """A bad parameter is refused before the table is read (sweep pb7, item 4): D and D plus a row
    with a missing value (missing='error') give the parameter's error, on the Spark engine too."""
    paths = _tables(tmp_path, "29,,HS\n")
    schema = str(tmp_path / "schema.toml")
    runs = {
        "query": lambda path: api.query(path, "count", epsilon=-1, randomness=3, ledger=None, schema=schema,
                                        engine="spark", missing="error"),
        "perturb": lambda path: api.perturb(path, attributes=["sex", "edu"], gamma=2, d=0.1, max_rows=4, seed=3,
                                            schema=schema, engine="spark", missing="error",
                                            out=str(tmp_path / "v" / "v.parquet"), ledger=None),
        "publish": lambda path: api.publish(path, epsilon=1, seed=3, schema=schema, engine="spark",
                                            out=str(tmp_path / "r" / "r.parquet"), ledger=None,
                                            missing="error", scheme={"age": 9}),
    }
    for command, run in runs.items():
        on_d, on_d1 = (_refusal(functools.partial(run, paths[side])) for side in ("D", "D1"))
        assert on_d is not None and on_d == on_d1, (command, on_d, on_d1)
        assert "custodian-only" not in on_d
