"""Benchmark ``crowdsafe publish`` on the Spark engine against the Polars engine; print JSON.

For each size (synthetic Adult, ``crowdsafe.datasets.synthetic``, written to Parquet first,
outside the timing; published columns: the eight quasi-identifiers and income with Adult's
default hierarchies; default plan ε = 1, δ = 1e-6, so ε1 = 0.1, β = 0.593, k = 73):

- Polars engine: read the Parquet file, ``publish_dataset`` end to end (no ledger, Parquet
  output), and its floor: a bare Polars group-by of the published columns on the loaded frame;
- Spark engine on ``local[N]`` for each N of ``--threads`` (a fresh JVM per N, so a small N
  simulates fewer executors): the stages as ``publish_table`` runs them — the table pass
  (count, identity, distinct values), sample + encode + count (one Spark job), the ε1-safe
  choice on the driver (the Polars engine's code), Apply on the counts, generating and writing
  the release — the end-to-end time, and the Spark floor: a bare ``groupBy(columns).count()``
  over the same Parquet file.

The load average is recorded before and after each measurement (the machine may be shared).

Then the DP histogram (bench/spark_histogram.py, in its own process: a 40-cell histogram on both
engines with their floors), reported under ``dp_histogram`` unless ``--no-histogram``.

Usage: python bench/spark.py [--sizes 10M,50M] [--threads 1,2] [--driver-memory 1g] [--engines polars,spark]
"""

from __future__ import annotations

from sizes import rows_of  # this folder's size names (10M, 50M, ...)

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write_parquet(rows: int, folder: Path) -> Path:
    from crowdsafe.datasets import synthetic

    path = folder / f"synthetic-{rows}.parquet"
    synthetic(rows, seed=0).frame.write_parquet(path, row_group_size=1 << 20)
    return path


def adult_hierarchies() -> dict:
    """Adult's default hierarchies as the synthetic generator attaches them (a missing-value leaf
    where the data has missing values)."""
    from crowdsafe.datasets import synthetic

    return synthetic(50_000, seed=0).hierarchies


def polars_engine(path: Path, folder: Path) -> dict[str, object]:
    from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication, prepare_dataset, publish_dataset
    from crowdsafe.data import load
    from crowdsafe.datasets.uci_adult import schema
    from crowdsafe.randomness import Randomness

    before = load_average()
    read_time, data = timed(lambda: load(str(path), schema=schema(), hierarchies=adult_hierarchies()))
    prepared, columns, _ = prepare_dataset(data)
    floor, _ = timed(lambda: prepared.frame.group_by(columns).len())
    plan = plan_publication(PlanRequest(1.0, 1e-6))
    total, publication = timed(lambda: publish_dataset(data, plan, RunOptions(out=folder / "polars-release.parquet"),
                                                       randomness=Randomness()))
    return {
        "read_seconds": read_time,
        "publish_dataset_seconds": total,
        "floor_group_by_seconds": floor,
        "rows_published": publication.release.rows_published,
        "scheme": dict(publication.release.recoding.levels),
        "load_average_before_after": [before, load_average()],
    }


def spark_engine(path: Path, folder: Path, threads: int, driver_memory: str) -> dict[str, object]:
    """In a child process: one JVM per thread count."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"),
                                                         str(Path(__file__).resolve().parent)])}
    command = [sys.executable, __file__, "--child", str(path), str(folder), str(threads), driver_memory]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "Error" in line or "Exception" in line]
        return {"master": f"local[{threads}]", "driver_memory": driver_memory, "failed": True,
                "error": errors[-3:] if errors else done.stderr.strip().splitlines()[-3:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def spark_child(path: str, folder: str, threads: int, driver_memory: str) -> dict[str, object]:
    from crowdsafe.anonymize.counted import apply_counts
    from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication
    from crowdsafe.anonymize.selection import choose_scheme
    from crowdsafe.datasets.uci_adult import schema
    from crowdsafe.engines.spark.publish import count_release_sample, publish_table, release_of
    from crowdsafe.engines.spark.session import spark_session
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.engines.spark.write import write_releases
    from crowdsafe.randomness import Randomness

    start_time, spark = timed(lambda: spark_session(f"local[{threads}]", config={
        "spark.driver.memory": driver_memory, "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(2 * threads)}))
    before = load_average()
    table_time, table = timed(lambda: spark_table(spark, path, schema=schema(), hierarchies=adult_hierarchies()))
    columns = table.columns
    floor, _ = timed(lambda: spark.read.parquet(path).groupBy(*columns).count().count())
    plan = plan_publication(PlanRequest(1.0, 1e-6))
    randomness = Randomness()
    count_time, sample = timed(lambda: count_release_sample(table, plan.beta, randomness, None))
    choice_time, choice = timed(lambda: choose_scheme(sample.table, columns, plan.k, plan.epsilon1, randomness))
    apply_time, applied = timed(lambda: apply_counts(sample.table, choice.scheme.levels, plan.k))
    target = str(Path(folder) / f"spark-stages-{threads}.parquet")
    write_time, _ = timed(lambda: write_releases(spark, [release_of(table, choice.scheme, applied)[1]], ["{}"],
                                                 [target]))
    run = RunOptions(out=str(Path(folder) / f"spark-{threads}.parquet"))
    total, publication = timed(lambda: publish_table(spark_table(spark, path, schema=schema(),
                                                                 hierarchies=adult_hierarchies()),
                                                     plan, run, randomness=Randomness()))
    return {
        "master": f"local[{threads}]",
        "driver_memory": driver_memory,
        "session_start_seconds": start_time,
        "stages_seconds": {
            "table_pass": table_time, "sample_encode_count": count_time, "epsilon1_safe_choice": choice_time,
            "apply_on_counts": apply_time, "generate_and_write": write_time,
        },
        "frequency_table_rows": int(sample.table.n_cells),
        "nodes_scored": choice.scored,
        "publish_table_seconds": total,
        "floor_spark_group_by_seconds": floor,
        "rows_published": publication.release.rows_published,
        "load_average_before_after": [before, load_average()],
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, path, folder, threads, memory = sys.argv
        print(json.dumps(spark_child(path, folder, int(threads), memory)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10M,50M")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--engines", default="polars,spark", help="run only some engines, e.g. spark")
    parser.add_argument("--no-histogram", action="store_true",
                        help="skip the DP-histogram benchmark (bench/spark_histogram.py, run in its own process)")
    args = parser.parse_args()
    import polars as pl
    import pyspark

    results = []
    for size in args.sizes.split(","):
        rows = rows_of(size)
        if rows is None:
            raise SystemExit("bench/spark.py: use synthetic sizes (10M, 50M)")
        folder = Path(tempfile.mkdtemp(prefix="crowdsafe-spark-bench-"))
        try:
            generate_time, path = timed(lambda: write_parquet(rows, folder))
            entry: dict[str, object] = {"rows": rows, "parquet_bytes": path.stat().st_size,
                                        "generate_and_write_parquet_seconds": generate_time}
            engines = args.engines.split(",")
            if "polars" in engines:
                entry["polars"] = polars_engine(path, folder)
            if "spark" in engines:
                entry["spark"] = [spark_engine(path, folder, int(n), args.driver_memory)
                                  for n in args.threads.split(",")]
            if "polars" in engines and "spark" in engines:
                polars_total = entry["polars"]["publish_dataset_seconds"]  # type: ignore[index]
                for run in entry["spark"]:  # type: ignore[union-attr]
                    if not run.get("failed"):
                        run["ratio_to_polars"] = run["publish_table_seconds"] / polars_total
            results.append(entry)
            print(json.dumps(entry), file=sys.stderr)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    histogram = None
    if not args.no_histogram:  # a fresh JVM of its own, after the publish runs
        script = Path(__file__).with_name("spark_histogram.py")
        done = subprocess.run([sys.executable, str(script), "--sizes", args.sizes,
                               "--driver-memory", max(args.driver_memory, "2g", key=_megabytes)],
                              capture_output=True, text=True)
        histogram = json.loads(done.stdout) if done.returncode == 0 else {
            "failed": True, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    print(json.dumps({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__,
                    "pyspark": pyspark.__version__},
        "results": results,
        "dp_histogram": histogram,
    }, indent=2))


def _megabytes(size: str) -> float:
    """'512m', '2g' -> megabytes (to pick the larger driver memory)."""
    size = size.strip().lower()
    return float(size[:-1]) * (1024 if size.endswith("g") else 1) if size[-1] in "gm" else float(size) / 2**20


if __name__ == "__main__":
    main()
