"""The neighbouring tables of the mechanism-input tests (issue 32), and how ``publish`` runs on them.

Six tables, each written to a directory as a command reads it:

- ``schemaless``: a CSV read without a schema (every column a quasi-identifier without a
  hierarchy, each given the flat observed hierarchy), with a constant column (``flag``) and a
  column missing in every row (``note``);
- ``schema``: Parquet with a schema: a declared hierarchy file (``country``), a ``widths``
  builder (``age``, and ``hours``, constant: observed hierarchies of height 3), columns without a
  hierarchy (``sex``, ``flag``), a sensitive target (``income``);
- ``declared``: every published column with a declared hierarchy (the ``entropy`` and ``marginals``
  objectives run on it only);
- ``wide``: 65,536 distinct values in ``w1`` (65,535 numbers and the missing value) beside
  columns whose keys fill 62 bits;
- ``builders``: Parquet with a schema whose observed hierarchies are the ``mask`` (``zip``, 3
  characters) and ``dates`` (``born``, month and year) builders;
- ``mask-unbounded``: the same table with a schema given in Python whose ``zip`` is
  ``{"mask": None}`` (no depth): refused from the schema alone, on both sides (the old code made
  the depth the longest value present, so a longer zip code changed the lattice, ε1 and β).

Each :class:`Pair` is D and D' = D + a copy of D's first row with one value changed: a new value
in a column without a hierarchy, a value outside a declared hierarchy, a constant column (flat,
under a ``widths`` builder, or declared) made non-constant, a column missing in every row given a
value, a 65,537th distinct value (D's keys fill 62 bits, D''s 63: the old code refused D' before
the charge, "too many quasi-identifier values"), a zip code longer than every other under a
``mask`` builder, a date in a year no other row has under a ``dates`` builder.

:func:`run_pair` runs ``publish`` (the API, or the command line in this process) on both sides
under a :class:`~mechanism_spy.MechanismSpy`, with the same seed and a fresh ledger each.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data.builders import intervals
from crowdsafe.data.schema import Attribute, AttributeType, Role, Schema
from mechanism_spy import Inputs, MechanismSpy

SEED = 11
EPSILON, DELTA = 1.0, 1e-6
BUDGET = (100.0, 0.5)
ROWS = 600
LEDGER = "ledger.sqlite3"

# -- the tables -------------------------------------------------------------------------------------

COUNTRIES = {"NL": "EU", "DE": "EU", "FR": "EU", "ES": "EU", "US": "NA", "CA": "NA"}


def _frame(rows: int = ROWS) -> pl.DataFrame:
    i = np.arange(rows)
    return pl.DataFrame({
        "country": np.array(list(COUNTRIES))[i % len(COUNTRIES)],
        "age": 20 + (i * 7) % 50,
        "hours": np.full(rows, 40),
        "sex": np.array(["F", "M"])[i % 2],
        "flag": ["yes"] * rows,
        "income": np.array(["<=50K", ">50K", "<=50K"])[i % 3],
    })


def _write_hierarchy_file(path: Path, rows: dict[str, list[str]]) -> None:
    path.write_text("".join(";".join([leaf, *levels]) + "\n" for leaf, levels in rows.items()), encoding="utf-8")


@dataclass(frozen=True)
class Table:
    """A table and how it is written: ``write(directory, frame)`` puts the data (and any schema
    and hierarchy files) in ``directory`` and returns the names of the files a run reads
    (``data``, and ``schema`` when there is one). ``target``: the classification objective's."""

    name: str
    frame: Callable[[], pl.DataFrame]
    write: Callable[[Path, pl.DataFrame], dict]
    target: str
    entropy_refused: bool
    schema: Callable[[], Schema] | None = None  # a schema given in Python, built inside the run
    refused: str | None = None  # every run refused from the schema alone, with this in its message


def _schemaless_frame() -> pl.DataFrame:
    return _frame().with_columns(pl.lit(None, dtype=pl.String).alias("note"))


def _write_schemaless(directory: Path, frame: pl.DataFrame) -> dict:
    frame.write_csv(directory / "data.csv")
    return {"data": "data.csv"}


def _write_parquet(directory: Path, frame: pl.DataFrame) -> dict:
    """Parquet without a schema (every column inferred a quasi-identifier): quicker to read than CSV."""
    frame.write_parquet(directory / "data.parquet")
    return {"data": "data.parquet"}


SCHEMA_ATTRIBUTES = """\
[attributes.country]
type = "categorical"
hierarchy = "country.csv"
[attributes.age]
type = "numeric"
hierarchy = { widths = [10, 20], bottom = 0, top = 100 }
[attributes.hours]
type = "numeric"
hierarchy = { widths = [10, 20], bottom = 0, top = 100 }
[attributes.sex]
type = "categorical"
[attributes.flag]
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
"""


def _write_country(directory: Path) -> None:
    _write_hierarchy_file(directory / "country.csv", {c: [region, "*"] for c, region in COUNTRIES.items()})


def _write_schema(directory: Path, frame: pl.DataFrame) -> dict:
    frame.write_parquet(directory / "data.parquet")
    _write_country(directory)
    (directory / "schema.toml").write_text(SCHEMA_ATTRIBUTES, encoding="utf-8")
    return {"data": "data.parquet", "schema": "schema.toml"}


def _write_declared(directory: Path, frame: pl.DataFrame) -> dict:
    """Every published column with a hierarchy file listing public values (age: 10- and 20-year
    bands over 0..99)."""
    frame.write_parquet(directory / "data.parquet")
    _write_country(directory)
    intervals("age", range(0, 100), widths=[10, 20]).write_csv(directory / "age.csv")
    for column, values in (("sex", ["F", "M"]), ("flag", ["yes", "no"]), ("income", ["<=50K", ">50K"])):
        _write_hierarchy_file(directory / f"{column}.csv", {v: ["*"] for v in values})
    lines = []
    for column in ("country", "age", "sex", "flag", "income"):
        kind = "numeric" if column == "age" else "categorical"
        role = "sensitive" if column == "income" else "quasi-identifier"
        lines += [f"[attributes.{column}]", f'role = "{role}"', f'type = "{kind}"', f'hierarchy = "{column}.csv"']
    lines += ["[attributes.hours]", 'role = "insensitive"', 'type = "numeric"']
    (directory / "schema.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"data": "data.parquet", "schema": "schema.toml"}


WIDE_ROWS = 65_536


def _wide_frame() -> pl.DataFrame:
    """Key bits of the flat hierarchies (each with its missing-value leaf): w1 65,536 leaves (16),
    w2 65,537 (17), w3 20,001 (15), w4 3,001 (12), y 3 (2): 62 in all, the most an int64 key held
    before the fix."""
    i = np.arange(WIDE_ROWS)
    return pl.DataFrame({
        "w1": pl.Series("w1", i, dtype=pl.Int64).scatter(WIDE_ROWS - 1, None),
        "w2": i, "w3": i % 20_000, "w4": i % 3_000, "y": i % 2,
    })


def _builders_frame(rows: int = ROWS) -> pl.DataFrame:
    """Four-character zip codes and birth dates over 1950-1989 (every year present)."""
    i = np.arange(rows)
    zips = np.array(["1301", "1302", "1401", "1402", "2201", "2202"])
    return pl.DataFrame({
        "zip": zips[i % len(zips)],
        "born": pl.Series([dt.date(1950 + k % 40, 1 + k % 12, 1 + k % 28) for k in range(rows)], dtype=pl.Date),
        "sex": np.array(["F", "M"])[i % 2],
        "income": np.array(["<=50K", ">50K", "<=50K"])[i % 3],
    })


BUILDERS_SCHEMA = """\
[attributes.zip]
type = "categorical"
hierarchy = { mask = 3 }
[attributes.born]
type = "date"
hierarchy = { dates = ["month", "year"] }
[attributes.sex]
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
"""


def _write_builders(directory: Path, frame: pl.DataFrame) -> dict:
    frame.write_parquet(directory / "data.parquet")
    (directory / "schema.toml").write_text(BUILDERS_SCHEMA, encoding="utf-8")
    return {"data": "data.parquet", "schema": "schema.toml"}


def _mask_unbounded_schema() -> Schema:
    """The builders' schema in Python, with a ``mask`` of no depth (TOML cannot say None)."""
    qi, categorical = Role.QUASI_IDENTIFIER, AttributeType.CATEGORICAL
    return Schema([
        Attribute("zip", qi, categorical, hierarchy={"mask": None}),
        Attribute("born", qi, AttributeType.DATE, hierarchy={"dates": ["month", "year"]}),
        Attribute("sex", qi, categorical),
        Attribute("income", Role.SENSITIVE, categorical),
    ])


TABLES = {
    "schemaless": Table("schemaless", _schemaless_frame, _write_schemaless, "income", entropy_refused=True),
    "schema": Table("schema", _frame, _write_schema, "income", entropy_refused=True),
    "declared": Table("declared", _frame, _write_declared, "income", entropy_refused=False),
    "wide": Table("wide", _wide_frame, _write_parquet, "y", entropy_refused=True),
    "builders": Table("builders", _builders_frame, _write_builders, "income", entropy_refused=True),
    "mask-unbounded": Table("mask-unbounded", _builders_frame, _write_parquet, "income", entropy_refused=True,
                            schema=_mask_unbounded_schema, refused="mask must be a whole number of characters"),
}

# -- the neighbours: D' = D + a copy of D's first row with one value changed ---------------------


@dataclass(frozen=True)
class Pair:
    table: str
    what: str
    column: str
    value: object
    observed: bool  # the column's hierarchy is built over the data's values (the new value gets a node)

    @property
    def id(self) -> str:
        return f"{self.table}-{self.what}"


PAIRS = [
    Pair("schemaless", "new-value", "country", "Atlantis", observed=True),
    Pair("schemaless", "constant-made-non-constant", "flag", "no", observed=True),
    Pair("schemaless", "missing-column-given-a-value", "note", "x", observed=True),
    Pair("schema", "new-value-without-hierarchy", "sex", "X", observed=True),
    Pair("schema", "value-outside-declared-hierarchy", "country", "Atlantis", observed=False),
    Pair("schema", "constant-made-non-constant", "flag", "no", observed=True),
    Pair("schema", "constant-widths-made-non-constant", "hours", 45, observed=True),
    Pair("declared", "value-outside-declared-hierarchy", "country", "Atlantis", observed=False),
    Pair("declared", "constant-declared-made-non-constant", "flag", "no", observed=False),
    Pair("wide", "65537th-distinct-value", "w1", WIDE_ROWS - 1, observed=True),
    Pair("builders", "longer-masked-value", "zip", "1301999", observed=True),
    Pair("builders", "date-in-a-new-year", "born", dt.date(2003, 7, 14), observed=True),
    Pair("mask-unbounded", "longer-masked-value", "zip", "1301999", observed=True),
]
PAIR = {p.id: p for p in PAIRS}

# (objective, fixed scheme): every objective of the selection, and a fixed scheme
OBJECTIVES = ["retained", "loss", "discernibility", "classification", "entropy", "marginals", "scheme:medium"]


def neighbours(pair: Pair) -> tuple[pl.DataFrame, pl.DataFrame]:
    frame = TABLES[pair.table].frame()
    added = frame.head(1).with_columns(pl.Series(pair.column, [pair.value]).cast(frame.schema[pair.column]))
    return frame, pl.concat([frame, added])


def publish_call(table: Table, directory: Path, written: dict, objective: str, **extra) -> Callable[[], object]:
    """``api.publish`` on the table written in ``directory`` (absolute paths: a Spark session
    resolves relative ones against its own working directory), the release in ``out/``."""
    keywords: dict = {"epsilon": EPSILON, "delta": DELTA, "seed": SEED, "ledger": directory / LEDGER,
                      "budget": BUDGET, "out": str(directory / "out" / "r.csv"), "report": False,
                      **{name: str(directory / file) for name, file in written.items() if name != "data"}, **extra}
    if objective.startswith("scheme:"):
        keywords["scheme"] = objective.partition(":")[2]
    elif objective != "default":  # "default": no objective, the plan's default_objective
        keywords["objective"] = objective
        if objective == "classification":
            keywords["target"] = table.target

    def call() -> object:
        if table.schema is not None:  # built here: a schema refused from itself is the run's refusal
            keywords["schema"] = table.schema()
        return api.publish(str(directory / written["data"]), **keywords)

    return call


def run_pair(spy: MechanismSpy, pair: Pair, objective: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             *, cli: bool = False, **extra) -> tuple[Inputs, Inputs]:
    """``publish`` on D and on D' (each in its own directory, under the same names, with a fresh
    ledger and the same seed; the command line in its directory, with relative paths): the inputs
    each run built its mechanisms from. ``extra``: more keywords of ``api.publish``."""
    table = TABLES[pair.table]
    recorded = []
    for side, frame in zip(("D", "D+1"), neighbours(pair)):
        directory = tmp_path / side
        directory.mkdir(parents=True)
        written = table.write(directory, frame)
        monkeypatch.chdir(directory)
        call = cli_call(table, written, objective) if cli else publish_call(table, directory, written, objective,
                                                                            **extra)
        recorded.append(spy.run(call, ledger=directory / LEDGER))
    return recorded[0], recorded[1]


def cli_call(table: Table, written: dict, objective: str) -> Callable[[], object]:
    """``crowdsafe publish ... --json`` in this process, in the table's directory; a refusal is its
    one printed line."""
    from crowdsafe.cli import main

    argv = ["publish", written["data"], "--epsilon", str(EPSILON), "--delta", str(DELTA), "--seed", str(SEED),
            "--ledger", LEDGER, "--budget", ",".join(map(str, BUDGET)), "--out", "out/r.csv",
            "--no-report", "--json"]
    if "schema" in written:
        argv += ["--schema", written["schema"]]
    if objective.startswith("scheme:"):
        argv += ["--scheme", objective.partition(":")[2]]
    else:
        argv += ["--objective", objective] + (["--target", table.target] if objective == "classification" else [])

    def call() -> object:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(argv)
        return err.getvalue().strip() if code else None

    return call


