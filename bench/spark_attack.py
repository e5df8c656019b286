"""Benchmark the intersection attack on the Spark engine against a bare Spark join; print JSON.

The workloads are bench/attacks.py's (``adult``: two Mondrian releases of Adult's training
file, every row a target; ``1m``: two releases of 1,000,000 synthetic rows sharing 500,000
targets), written outside the timing as the command line meets them: each release as CSV
(``crowdsafe anonymize`` writes CSV), the targets as Parquet.

On one ``local[N]`` session (``--threads``, 1 GiB driver):

- ``attack``: what ``crowdsafe attack intersection R1.csv R2.csv --targets T.parquet --engine
  spark`` runs: reading the releases (``read_spark_release``) and the targets, the attack
  (``intersection_attack_spark``) to its summary; ``attack_with_targets_out``: the same, then
  the per-target metrics written as Parquet (what ``--out`` adds; the per-target frame is lazy
  until then);
- the floor: the same files read by Spark (the releases as CSV with a header, every column
  text; the targets' Parquet), the targets' quasi-identifiers cast to text and semi-joined with
  each release's, each join counted: it reads and hashes every row of both on the
  quasi-identifiers and nothing more (no sensitive column, no generalized cell read);
- the Polars engine's attack (``intersection_attack``) on the same files, read by Polars, for
  the ratio between the engines.

The JVM's first jobs carry its warm-up (JIT, class loading): every job runs once untimed, then
the jobs take turns ``--repeat`` times and the best wall time of each is kept. The Spark jobs
each timed call starts are counted (``spark_jobs``, from the session's status tracker). The
load average is recorded before and after.

Usage: python bench/spark_attack.py [--sizes adult,1m] [--repeat 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from attacks import QI, SENSITIVE, _workload  # this folder's workloads


def _files(size: str, folder: Path) -> tuple[list[Path], Path, dict]:
    """The workload's releases as CSV files and its targets as Parquet, in ``folder``."""
    releases, targets, hierarchies = _workload(size)
    paths = []
    for j, release in enumerate(releases):
        paths.append(folder / f"R{j + 1}.csv")
        release.write_csv(paths[-1])
    targets.write_parquet(folder / "targets.parquet")
    return paths, folder / "targets.parquet", hierarchies


def _jobs_of(spark: Any, job: Callable[[], object]) -> tuple[float, int]:
    """One run of ``job``: its wall time and the Spark jobs it started."""
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    started = time.perf_counter()
    job()
    seconds = time.perf_counter() - started
    return seconds, len(set(tracker.getJobIdsForGroup(None)) - before)


def measure(spark: Any, size: str, repeat: int, folder: Path) -> dict[str, object]:
    from pyspark.sql import functions as F

    from crowdsafe.attacks import intersection_attack
    from crowdsafe.attacks.releases import read_release
    from crowdsafe.engines.spark.attacks import intersection_attack_spark, read_spark_release

    made = time.perf_counter()
    paths, targets_path, hierarchies = _files(size, folder)
    made = time.perf_counter() - made
    out_path = folder / "metrics.parquet"
    summaries: list[dict] = []

    def attack(write: bool) -> Callable[[], object]:
        def run() -> object:
            releases = [read_spark_release(spark, str(p), f"R{j + 1}") for j, p in enumerate(paths)]
            targets = spark.read.parquet(str(targets_path))
            result = intersection_attack_spark(releases, targets, QI, SENSITIVE, hierarchies=hierarchies)
            if write:
                result.targets.write.mode("overwrite").parquet(str(out_path))
            summaries.append(result.summary)
            return result
        return run

    def floor() -> object:
        targets = spark.read.parquet(str(targets_path)).select([F.col(f"`{c}`").cast("string").alias(c) for c in QI])
        counts = []
        for p in paths:
            release = spark.read.option("header", True).option("inferSchema", False).csv(str(p)).select(
                [F.col(f"`{c}`").alias(c) for c in QI])
            counts.append(targets.join(release, on=QI, how="left_semi").count())
        return counts

    def on_polars() -> object:
        releases = [read_release(p, f"R{j + 1}") for j, p in enumerate(paths)]
        return intersection_attack(releases, pl.read_parquet(targets_path), QI, SENSITIVE, hierarchies=hierarchies)

    jobs = {"attack": attack(False), "attack_with_targets_out": attack(True), "floor": floor, "polars": on_polars}
    load_before = os.getloadavg()[0]
    for job in jobs.values():
        job()  # once untimed: the JVM's warm-up, Polars' first query
    best: dict[str, float] = {name: float("inf") for name in jobs}
    spark_jobs: dict[str, int] = {}
    for _ in range(repeat):
        for name, job in jobs.items():
            seconds, count = _jobs_of(spark, job)
            best[name] = min(best[name], seconds)
            spark_jobs[name] = count
    polars_summary = on_polars().summary  # type: ignore[attr-defined]
    same = all(summaries[-1].get(key) == polars_summary.get(key)
               for key in ("targets", "perfect_breach", "vulnerable", "contradictions"))
    return {
        "size": size,
        "targets": int(pl.scan_parquet(targets_path).select(pl.len()).collect().item()),
        "release_rows": [int(pl.scan_csv(p).select(pl.len()).collect().item()) for p in paths],
        "making_files_seconds": made,
        "attack_seconds": best["attack"],
        "attack_with_targets_out_seconds": best["attack_with_targets_out"],
        "floor_spark_join_seconds": best["floor"],
        "ratio_to_floor": best["attack"] / best["floor"],
        "ratio_with_targets_out_to_floor": best["attack_with_targets_out"] / best["floor"],
        "polars_engine_attack_seconds": best["polars"],
        "spark_over_polars": best["attack"] / best["polars"],
        "spark_jobs": {name: spark_jobs[name] for name in ("attack", "attack_with_targets_out", "floor")},
        "same_summary_as_polars": same,
        "perfect_breach": summaries[-1]["perfect_breach"],
        "load_average": [load_before, os.getloadavg()[0]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1m")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from crowdsafe.engines.spark.session import spark_session

    started = time.perf_counter()
    spark = spark_session(f"local[{args.threads}]", config={
        "spark.driver.memory": "1g", "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(2 * args.threads)})
    session_seconds = time.perf_counter() - started
    folder = Path(tempfile.mkdtemp(prefix="crowdsafe-spark-attack-"))
    workloads = []
    try:
        for size in args.sizes.split(","):
            (folder / size).mkdir()
            workloads.append(measure(spark, size, args.repeat, folder / size))
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)
    out = {"python": sys.version.split()[0], "polars": pl.__version__, "machine": platform.machine(),
           "master": f"local[{args.threads}]", "session_start_seconds": session_seconds, "workloads": workloads}
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
