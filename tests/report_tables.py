"""The report tests' small table: a slice of Adult with hierarchies, its input files, and its
publication (a module of its own, not tests/report/conftest.py: ``from conftest import`` names
whichever folder's conftest was imported first, and failed when tests/report ran with tests/app)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from crowdsafe import api
from crowdsafe.datasets import adult
from crowdsafe.datasets.uci_adult import hierarchies

QI = ("age", "workclass", "education", "marital-status", "race", "sex")
WITH_HIERARCHY = ("age", "workclass", "education", "marital-status")


def small_table(rows: int = 2000) -> pl.DataFrame:
    """The first ``rows`` rows of Adult without missing values, the quasi-identifiers only."""
    return adult(drop_missing=True).frame.select(QI).head(rows)


def write_inputs(directory: Path, frame: pl.DataFrame) -> tuple[Path, Path]:
    """``data.parquet`` and ``schema.toml`` (with hierarchy files) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(directory / "data.parquet")
    known = hierarchies()
    lines = []
    for name in QI:
        lines += [f'[attributes."{name}"]', 'role = "quasi-identifier"',
                  f'type = "{"numeric" if name == "age" else "categorical"}"']
        if name in WITH_HIERARCHY:
            known[name].write_csv(directory / f"{name}.hierarchy.csv")
            lines.append(f'hierarchy = "{name}.hierarchy.csv"')
        lines.append("")
    (directory / "schema.toml").write_text("\n".join(lines), encoding="utf-8")
    return directory / "data.parquet", directory / "schema.toml"


def publish_small(directory: Path, frame: pl.DataFrame, *, seed: int = 7, **options):
    """Publish ``frame`` (seeded, no ledger unless given) to ``directory/out/r.csv``."""
    data, schema = write_inputs(directory, frame)
    options.setdefault("ledger", None)
    return api.publish(str(data), epsilon=1.0, delta=1e-6, schema=str(schema), seed=seed,
                       out=str(directory / "out" / "r.csv"), **options)
