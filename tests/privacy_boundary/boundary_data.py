"""The small table of the neighbouring-input tests: a slice of Adult written as Parquet with a
schema file and hierarchy files, and the rows removed to make its neighbours."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import polars as pl

from crowdsafe.datasets import adult
from crowdsafe.datasets.uci_adult import hierarchies

ROWS = 3000
QI = ("age", "workclass", "education", "marital-status", "race", "sex")
SENSITIVE = "income"
COLUMNS = (*QI, "hours-per-week", SENSITIVE)
WITH_HIERARCHY = ("age", "workclass", "education", "marital-status")
TYPES = {"age": "numeric", "hours-per-week": "numeric"}
#: drafted.toml: schema.toml with the from_data markers a schema draft leaves for review (issue 32),
#: one on a column no command publishes
DRAFTED = {"education": "hierarchy groups", "marital-status": "hierarchy groups", "hours-per-week": "hierarchy bounds"}


def base_table() -> pl.DataFrame:
    """The first ROWS rows of Adult (train) without missing values, a few columns."""
    return adult(drop_missing=True).frame.select(COLUMNS).head(ROWS)


def removals(frame: pl.DataFrame) -> dict[str, int]:
    """Rows to remove: the first, the first other row whose QI tuple is unique, the first row of
    the largest QI class (the choices are made on the data; the test is about the outputs)."""
    indexed = frame.with_row_index("_row")
    sizes = indexed.group_by(QI).agg(pl.col("_row").min().alias("first"), pl.len().alias("size"))
    unique = sizes.filter((pl.col("size") == 1) & (pl.col("first") > 0)).sort("first")["first"][0]
    large = sizes.sort(["size", "first"], descending=[True, False])["first"][0]
    return {"first": 0, "unique-qi": int(unique), "large-class": int(large)}


@functools.cache
def _hierarchy_file(name: str) -> bytes:
    """The bytes of Adult's hierarchy of ``name`` as ``Hierarchy.write_csv`` writes it (built and
    written once: every run of every case writes the same files)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.hierarchy.csv"
        hierarchies()[name].write_csv(path)
        return path.read_bytes()


def write_inputs(directory: Path, frame: pl.DataFrame) -> None:
    """data.parquet, schema.toml, drafted.toml (the same with :data:`DRAFTED` markers) and the
    hierarchy files in ``directory`` (the same names for every run, so paths printed by a run
    compare equal)."""
    directory.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(directory / "data.parquet")
    lines, drafted = [], []
    for name in COLUMNS:
        block = [f'[attributes."{name}"]']
        role = "sensitive" if name == SENSITIVE else ("insensitive" if name not in QI else "quasi-identifier")
        block.append(f'role = "{role}"')
        block.append(f'type = "{TYPES.get(name, "categorical")}"')
        if name in WITH_HIERARCHY:
            file = f"{name}.hierarchy.csv"
            (directory / file).write_bytes(_hierarchy_file(name))
            block.append(f'hierarchy = "{file}"')
        lines += [*block, ""]
        drafted += [*block, *([f'from_data = ["{DRAFTED[name]}"]'] if name in DRAFTED else []), ""]
    (directory / "schema.toml").write_text("\n".join(lines), encoding="utf-8")
    (directory / "drafted.toml").write_text("\n".join(drafted), encoding="utf-8")


# -- a table with direct identifiers and no schema (the name warnings of issue 18) ----------------

PEOPLE = "people.parquet"
IDENTIFIER_NAMES = ("name", "email", "case_number")


def write_people(directory: Path) -> None:
    """``people.parquet``: data.parquet plus a name, an email address and a case number per row,
    each made from the row's own values (never its position, so D minus one row gives exactly
    the people table minus that row). Read without a schema: every column is inferred."""
    frame = pl.read_parquet(directory / "data.parquet")
    key = pl.concat_str([pl.col(c).cast(pl.String) for c in frame.columns], separator="|").hash(seed=18)
    frame.with_columns(
        pl.format("Person {}", key).alias("name"),
        pl.format("p{}@example.org", key).alias("email"),
        pl.format("CASE-{}", key).alias("case_number"),
    ).select([*IDENTIFIER_NAMES, *frame.columns]).write_parquet(directory / PEOPLE)
