"""Benchmark reading CSV files (crowdsafe.data.io.read_file and the streamed scan); print JSON.

Files, written once into a temporary folder:
- ``release``: a Mondrian release (k = 10) of the Adult training file as CSV: ten text columns,
  and ages that are numbers in the first rows and intervals (``[18, 35]``) later, so the read
  needs its second try (types from every row);
- ``release_200k``: the same for 200,000 synthetic Adult rows;
- ``people``: the bundled people table (30,000 rows, two date columns, eight other text columns);
- ``release_200k_dated``: ``release_200k`` with a column of dates (2000-2019), for the streamed
  scan's second try (types from every row), where such a column is typed from its distinct values.

For each file, timed in turns in the same run (best of ``--repeat``):
- ``floor``: ``pl.read_csv`` with the reader's options but no date inference (the least a read of
  the file does);
- ``with_dates``: the one read with Polars' ``try_parse_dates`` the reader did before (its two
  tries), the reference the new reading is tested against (tests/data/test_date_inference.py);
- ``read_file``: crowdsafe's reader (with the reading rules: names, NULs, text tidied);
- ``scan``: ``scan_table(...).lazy.collect()`` (the streamed engine's scan, collected; again with
  types from every row when a late value does not fit, as the engine retries);
- ``scan_every_row`` and ``scan_every_row_with_dates``: the scan with types from every row, and the
  same with Polars' date inference over every row (the scan before: ``dated_types`` answering None,
  as it does past its limit of distinct values), on ``release_200k_dated`` only.

Usage: python bench/csv_read.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.data import streaming
from crowdsafe.data.io import read_file
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS
from crowdsafe.data.streaming import scan_table
from crowdsafe.datasets import adult, synthetic
from crowdsafe.datasets.people import write_people_csv

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]


def _files(folder: Path) -> dict[str, Path]:
    paths = {name: folder / f"{name}.csv" for name in ("release", "release_200k", "people", "release_200k_dated")}
    anonymize_dataset(adult("train").with_roles(qi=QI), "mondrian", 10).frame.write_csv(paths["release"])
    table = synthetic(200_000, seed=1).with_roles(qi=QI)
    anonymize_dataset(table, "mondrian", 10).frame.write_csv(paths["release_200k"])
    write_people_csv(paths["people"])
    release = pl.read_csv(paths["release_200k"], infer_schema=False)
    days = pl.date_range(pl.date(2000, 1, 1), pl.date(2019, 12, 31), eager=True)
    release.with_columns(day=days.sample(release.height, with_replacement=True, seed=1).cast(pl.String)).write_csv(
        paths["release_200k_dated"])
    return paths


def _polars(path: Path, dates: bool) -> pl.DataFrame:
    options = dict(null_values=list(DEFAULT_MISSING_TOKENS), try_parse_dates=dates, schema_overrides={"zip": pl.String}
                   if "people" in path.name else None)
    try:
        return pl.read_csv(path, infer_schema_length=10_000, **options)
    except pl.exceptions.ComputeError:  # the reader's second try: types from every row
        return pl.read_csv(path, infer_schema_length=None, **options)


def _scanned(path: Path) -> pl.DataFrame:
    try:
        return scan_table(path).lazy.collect()
    except pl.exceptions.ComputeError:  # as the streamed engine retries: types from every row
        return scan_table(path, infer_all=True).lazy.collect()


def _scanned_with_dates_from_every_row(path: Path) -> pl.DataFrame:
    every_row = streaming.dated_types
    streaming.dated_types = lambda *args, **options: None  # the scan before: Polars infers every row
    try:
        return scan_table(path, infer_all=True).lazy.collect()
    finally:
        streaming.dated_types = every_row


def measure(path: Path, repeat: int) -> dict:
    jobs = {
        "floor": lambda: _polars(path, False),
        "with_dates": lambda: _polars(path, True),
        "read_file": lambda: read_file(path),
        "scan": lambda: _scanned(path),
    }
    if path.stem.endswith("_dated"):
        jobs = {"scan_every_row": lambda: scan_table(path, infer_all=True).lazy.collect(),
                "scan_every_row_with_dates": lambda: _scanned_with_dates_from_every_row(path)}
    best = dict.fromkeys(jobs, float("inf"))
    for job in jobs.values():
        job()  # each once untimed
    for _ in range(repeat):
        for name, job in jobs.items():
            started = time.perf_counter()
            job()
            best[name] = min(best[name], time.perf_counter() - started)
    rows = read_file(path).frame.height
    out = {"rows": rows, **{f"{name}_seconds": seconds for name, seconds in best.items()}}
    if "read_file" in best:
        out.update(read_file_over_floor=best["read_file"] / best["floor"],
                   with_dates_over_read_file=best["with_dates"] / best["read_file"])
    else:
        out["with_dates_over_scan_every_row"] = best["scan_every_row_with_dates"] / best["scan_every_row"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = _files(Path(folder))
        out = {"python": sys.version.split()[0], "polars": pl.__version__, "machine": platform.machine(),
               "files": {name: measure(path, args.repeat) for name, path in paths.items()}}
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
