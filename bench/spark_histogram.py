"""Benchmark of a DP histogram on the Spark engine (local mode) against the Polars engine.

The query: ``histogram age[0..100 by 10], sex in ('Female', 'Male'), income in ('<=50K', '>50K')``
(40 cells of a public domain), ε = 1, no ledger. Per size (default 10M and 50M synthetic Adult
rows, written to Parquet first, in 10M-row files, outside every timing):

- ``polars``: crowdsafe's Polars engine, :func:`answer_query` on a loaded Dataset (``load_s``:
  reading the Parquet files into memory, timed once); floor ``polars_floor``: the bare Polars
  lazy scan + the same binning + group-by, without crowdsafe;
- ``spark``: crowdsafe's Spark engine on ``--master`` (default ``local[2]``),
  :func:`answer_query_spark` on a :class:`TypedTable` (``load_s``: typing the table from its
  head, timed once; every query reads the Parquet files again, as Spark does); floor
  ``spark_floor``: the bare PySpark group-by of the same cells, collected.

Best and median of ``--repeat`` runs, the jobs taking turns so that load on a shared machine hits
them alike; the machine's load average is reported before and after. Prints JSON. Usage:
``python bench/spark_histogram.py [--sizes 10M,50M] [--repeat 3] [--master local[2]]``
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402
from queries import interleaved_ms  # noqa: E402
from sizes import rows_of  # noqa: E402

from crowdsafe.data import load  # noqa: E402
from crowdsafe.datasets import synthetic  # noqa: E402
from crowdsafe.mechanisms.queries import answer_query  # noqa: E402
from crowdsafe.mechanisms.query_plan import QueryRequest  # noqa: E402
from crowdsafe.randomness import Randomness  # noqa: E402

QUERY = "histogram age[0..100 by 10], sex in ('Female', 'Male'), income in ('<=50K', '>50K')"
COLUMNS = ["age", "sex", "income", "hours-per-week"]
CHUNK = 10_000_000


def write_synthetic(rows: int, folder: Path) -> float:
    """Synthetic Adult rows as Parquet files of at most 10M rows; seconds taken."""
    start = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    for part, first in enumerate(range(0, rows, CHUNK)):
        frame = synthetic(min(CHUNK, rows - first), seed=part + 1).frame.select(COLUMNS)
        frame.with_columns(pl.col("sex", "income").cast(pl.String)).write_parquet(folder / f"part-{part:03d}.parquet")
        del frame
    return time.perf_counter() - start


def polars_floor(folder: Path) -> pl.DataFrame:
    age = pl.col("age").cast(pl.Float64).clip(0, 100)
    bin_ = ((age / 10).floor().cast(pl.Int64).clip(0, 9)).alias("bin")
    return (pl.scan_parquet(folder / "*.parquet").select(bin_, "sex", "income")
            .group_by("bin", "sex", "income").len().collect())


def spark_floor(frame: Any) -> Any:
    from pyspark.sql import functions as F

    age = F.least(F.greatest(F.col("age").cast("double"), F.lit(0.0)), F.lit(100.0))
    bin_ = F.least(F.floor(age / 10), F.lit(9)).alias("bin")
    return frame.select(bin_, "sex", "income").groupBy("bin", "sex", "income").count().toArrow()


def bench_size(rows: int, folder: Path, spark: Any, repeat: int) -> dict[str, Any]:
    from crowdsafe.engines.spark.queries import answer_query_spark
    from crowdsafe.engines.spark.typed_table import load_table

    result: dict[str, Any] = {"rows": rows, "write_parquet_s": round(write_synthetic(rows, folder), 2)}
    randomness = Randomness()
    start = time.perf_counter()
    table = load_table(spark, str(folder) + "/*.parquet")
    result["spark_load_s"] = round(time.perf_counter() - start, 3)
    start = time.perf_counter()
    dataset = load(pl.read_parquet(folder / "*.parquet"), name="synthetic")
    result["polars_load_s"] = round(time.perf_counter() - start, 3)
    exact = {"polars": answer_query(dataset, QueryRequest(QUERY, epsilon=1.0), randomness=randomness),
             "spark": answer_query_spark(table, QueryRequest(QUERY, epsilon=1.0), randomness=randomness)}  # warm-up
    result["cells"] = exact["spark"].value.height
    jobs = {
        "polars": lambda: answer_query(dataset, QueryRequest(QUERY, epsilon=1.0), randomness=randomness),
        "polars_floor": lambda: polars_floor(folder),
        "spark": lambda: answer_query_spark(table, QueryRequest(QUERY, epsilon=1.0), randomness=randomness),
        "spark_floor": lambda: spark_floor(table.frame),
    }
    timings = {name: {"best_s": round(t["best"] / 1000, 3), "median_s": round(t["median"] / 1000, 3)}
               for name, t in interleaved_ms(jobs, repeat).items()}
    result.update(timings)
    result["spark_over_polars"] = round(timings["spark"]["best_s"] / timings["polars"]["best_s"], 2)
    result["spark_over_spark_floor"] = round(timings["spark"]["best_s"] / timings["spark_floor"]["best_s"], 2)
    result["polars_over_polars_floor"] = round(timings["polars"]["best_s"] / timings["polars_floor"]["best_s"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10M,50M")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g")
    args = parser.parse_args()

    from crowdsafe.engines.spark.session import spark_session

    load_before = os.getloadavg()
    start = time.perf_counter()
    spark = spark_session(args.master, config={"spark.driver.memory": args.driver_memory,
                                               "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "8"})
    report: dict[str, Any] = {
        "benchmark": "spark_histogram",
        "query": QUERY,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__,
                    "pyspark": spark.version, "master": args.master, "driver_memory": args.driver_memory},
        "spark_session_start_s": round(time.perf_counter() - start, 2),
        "load_average_before": [round(x, 2) for x in load_before],
        "sizes": [],
    }
    for size in args.sizes.split(","):
        rows = rows_of(size)
        if rows is None:
            raise SystemExit("bench: spark_histogram runs on synthetic sizes only (e.g. 10M)")
        folder = Path(tempfile.mkdtemp(prefix="crowdsafe-spark-bench-"))
        try:
            report["sizes"].append(bench_size(rows, folder, spark, args.repeat))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    spark.stop()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
