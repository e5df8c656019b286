"""Benchmark the intersection attack; print JSON.

Workloads:
- ``adult``: two Mondrian releases (k = 10; plain, and with entropy ℓ = 3 on occupation) of the
  whole Adult training file (rows with a missing value dropped), every row a target;
- ``1m``: two releases of 1,000,000 synthetic Adult rows each (Mondrian, k = 10), made from a
  1,500,000-row synthetic table so that they share 500,000 rows, which are the targets.

Quasi-identifiers age, workclass, education, marital-status, race, sex, native-country;
sensitive occupation. The floor, timed in the same run, is a bare Polars join of the same
tables: the targets' quasi-identifiers semi-joined with each release on its quasi-identifier
columns (as text; a semi join, since an inner join of rows repeating one class would multiply
them), the least any attack that reads both tables must do. The target is the
attack within 3x of the floor. ``--grid`` also times the whole ``composition`` experiment.

Usage: python bench/attacks.py [--sizes adult,1m] [--repeat 3] [--grid]
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
from timing import best_of as _best  # best wall time of n runs

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.attacks import AttackedRelease, intersection_attack
from crowdsafe.data import MissingPolicy
from crowdsafe.datasets import adult, synthetic

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SENSITIVE = "occupation"


def _workload(size: str):
    if size == "adult":
        data = adult("train", drop_missing=True).with_roles(qi=QI, sensitive=[SENSITIVE])
        first = anonymize_dataset(data, "mondrian", 10).frame
        second = anonymize_dataset(data, "mondrian", 10, l=3.0, sensitive=SENSITIVE).frame
        return [first, second], data.frame.select(QI + [SENSITIVE]), data.hierarchies
    data = synthetic(1_500_000, seed=1, missing=MissingPolicy.DROP).with_roles(qi=QI, sensitive=[SENSITIVE])
    n = data.n_rows
    a = data.with_frame(data.frame.slice(0, 1_000_000))
    b = data.with_frame(data.frame.slice(n - 1_000_000, 1_000_000))
    targets = data.frame.slice(n - 1_000_000, 2_000_000 - n).select(QI + [SENSITIVE])
    releases = [anonymize_dataset(part, "mondrian", 10).frame for part in (a, b)]
    return releases, targets, data.hierarchies


def _floor(releases: list[pl.DataFrame], targets: pl.DataFrame) -> None:
    left = targets.select(pl.col(c).cast(pl.String) for c in QI)
    for release in releases:
        right = release.select(pl.col(c).cast(pl.String) for c in QI)
        left.join(right, on=QI, how="semi").height


def measure(size: str, repeat: int) -> dict:
    started = time.perf_counter()
    releases, targets, hierarchies = _workload(size)
    made = time.perf_counter() - started
    floor, _ = _best(repeat, lambda: _floor(releases, targets))
    attacked = [AttackedRelease(r, f"R{i + 1}", 10) for i, r in enumerate(releases)]
    seconds, result = _best(repeat, lambda: intersection_attack(attacked, targets, QI, SENSITIVE,
                                                               hierarchies=hierarchies))
    return {
        "size": size,
        "release_rows": [r.height for r in releases],
        "classes": result.releases["classes"].to_list(),
        "targets": targets.height,
        "distinct_target_tuples": int(targets.select(QI).n_unique()),
        "making_releases_seconds": made,
        "floor_join_seconds": floor,
        "attack_seconds": seconds,
        "ratio_to_floor": seconds / floor,
        "within_3x": seconds <= 3 * floor,
        "perfect_breach": result.summary["perfect_breach"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1m")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--grid", action="store_true", help="also time the composition experiment's whole grid")
    args = parser.parse_args()
    out = {"python": sys.version.split()[0], "polars": pl.__version__, "machine": platform.machine(),
           "workloads": [measure(size, args.repeat) for size in args.sizes.split(",")]}
    if args.grid:
        from crowdsafe.experiments import run

        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            run("composition", Path(folder), seed=1)
            out["composition_grid_seconds"] = time.perf_counter() - started
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
