"""Benchmark ``crowdsafe publish`` on the Spark engine against the Polars engine; print JSON.

For each size (synthetic Adult, ``crowdsafe.datasets.synthetic``, written to Parquet first,
outside the timing; published columns: the eight quasi-identifiers and income with Adult's
default hierarchies; each engine's default plan at ε = 1, δ = 1e-6, the same for both since both
plan from the hierarchies' heights: on 2026-11-29 ε1 = 0.416, β = 0.299, k = 34, objective
``marginals``; until then the Spark engine's plan was unsized, ε1 = 0.1, β = 0.346, k = 27,
objective ``retained``, and this script used that one for both engines):

- Polars engine: read the Parquet file, ``publish_dataset`` end to end (no ledger, Parquet
  output), and its floor: a bare Polars group-by of the published columns on the loaded frame;
- Spark engine on ``local[N]`` for each N of ``--threads`` (a fresh JVM per N, so a small N
  simulates fewer executors): the stages as ``publish_table`` runs them — reading the table
  (``spark_table``: the table pass, row count, identity, distinct values, then the table counted
  by leaf-code tuples: two Spark jobs), the sample (binomial thinning of those counts, on the
  driver), the ε1-safe choice on the driver (the Polars engine's code), Apply on the counts,
  generating and writing the release — the end-to-end time, and the Spark floor: a bare ``groupBy(columns).count()``
  over the same Parquet file on the same session (the published columns, read as the publish
  reads them). The JVM's first job carries its warm-up (JIT, class loading): it is one untimed
  run of the floor (``floor_cold_seconds``); then the floor is timed before and after the
  publish and ``floor_spark_group_by_seconds`` is the better of the two (``--repeat N``: N
  publishes and N + 1 floors, interleaved, the best of each).

The load average is recorded before and after each measurement (the machine may be shared).

Then the DP histogram (bench/spark_histogram.py, in its own process: a 40-cell histogram on both
engines with their floors), reported under ``dp_histogram`` unless ``--no-histogram``.

Each Spark child also reports its memory: the Python driver's peak RSS (``driver_peak_rss_mb``,
VmHWM), the JVM's peak RSS (``jvm_peak_rss_mb``, VmHWM of the gateway process) and the heap it
was given (``driver_memory``); Spark's Python workers (the processes below the JVM, sampled every
0.5 s): ``python_workers_peak_rss_sum_mb``, ``python_worker_peak_rss_mb``,
``python_workers_max_processes``; ``session_start_seconds`` is the JVM start, a fixed cost.

Sizes of 100M rows or more need ``--allow-100m`` (a long run); their table is written as Parquet
parts (``crowdsafe.datasets.synthetic.write_synthetic_parts``, never whole in memory), as every
size is with ``--parts``; the Polars engine is skipped on a folder of parts. ``--no-stages``
times only ``publish_table`` end to end and the floor (not the stages one by one).
``--data-dir DIR`` keeps the generated tables in DIR and reuses them on the next run (generate
100M rows once); by default they go to a temporary folder deleted after the run.

Usage: python bench/spark.py [--sizes 10M,50M] [--threads 1,2] [--driver-memory 1g] [--engines polars,spark]
       python bench/spark.py --sizes 100M --threads 2 --engines spark --allow-100m --no-stages --no-histogram \
           --data-dir /tmp/crowdsafe-bench-data
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


LARGE = 100_000_000  # sizes from here need --allow-100m and are written in parts


def write_parquet(rows: int, folder: Path, parts: bool = False) -> Path:
    """The synthetic table of ``rows`` rows in ``folder`` (kept from an earlier run when there)."""
    from crowdsafe.datasets import synthetic
    from crowdsafe.datasets.synthetic import write_synthetic_parts

    parts = parts or rows >= LARGE
    path = folder / f"synthetic-{rows}{'-parts' if parts else ''}.parquet"
    done = path.with_name(path.name + ".done")  # written last: a complete table from an earlier run
    if done.exists():
        return path
    shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    if parts:
        write_synthetic_parts(rows, path, seed=0)  # a folder of part files, never whole in memory
    else:
        synthetic(rows, seed=0).frame.write_parquet(path, row_group_size=1 << 20)
    done.touch()
    return path


def parquet_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.glob("*.parquet")) if path.is_dir() else path.stat().st_size


def peak_rss_mb(pid: int | None = None) -> float | None:
    """Peak resident memory (MB, VmHWM) of this process or of process ``pid``. (Not getrusage's
    ru_maxrss: Linux carries the forking parent's peak across exec into a child's.)"""
    try:
        for line in Path(f"/proc/{pid or 'self'}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_mb(pid: int) -> float:
    """Resident memory (MB, VmRSS) of process ``pid`` now; 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, their children, ...), read from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found.extend(children)
        todo.extend(children)
    return found


class WorkerMemory:
    """Samples, every ``interval`` seconds on a thread, the resident memory of the processes below
    the JVM (Spark's Python workers and their daemon): the peak of their sum and of any one."""

    def __init__(self, jvm_pid: int, interval: float = 0.5) -> None:
        import threading

        self.jvm_pid, self.interval = jvm_pid, interval
        self.peak_sum_mb = self.peak_one_mb = 0.0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            sizes = [rss_mb(pid) for pid in descendants(self.jvm_pid)]
            self.peak_sum_mb = max(self.peak_sum_mb, sum(sizes))
            self.peak_one_mb = max([self.peak_one_mb, *sizes])
            self.peak_processes = max(self.peak_processes, len(sizes))

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return {"python_workers_peak_rss_sum_mb": self.peak_sum_mb,
                "python_worker_peak_rss_mb": self.peak_one_mb,
                "python_workers_max_processes": self.peak_processes}


def adult_hierarchies() -> dict:
    """Adult's default hierarchies as the synthetic generator attaches them (a missing-value leaf
    where the data has missing values)."""
    from crowdsafe.datasets import synthetic

    return synthetic(50_000, seed=0).hierarchies


def polars_engine(path: Path, folder: Path) -> dict[str, object]:
    from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_for_dataset, prepare_dataset, publish_dataset
    from crowdsafe.data import load
    from crowdsafe.datasets.uci_adult import schema
    from crowdsafe.randomness import Randomness

    before = load_average()
    read_time, data = timed(lambda: load(str(path), schema=schema(), hierarchies=adult_hierarchies()))
    prepared, columns, _ = prepare_dataset(data)
    floor, _ = timed(lambda: prepared.frame.group_by(columns).len())
    plan = plan_for_dataset(data, PlanRequest(1.0, 1e-6))  # the engine's default plan (its hierarchies' heights)
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


def spark_engine(path: Path, folder: Path, threads: int, driver_memory: str, stages: bool = True,
                 repeat: int = 1) -> dict[str, object]:
    """In a child process: one JVM per thread count."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"),
                                                         str(Path(__file__).resolve().parent)])}
    command = [sys.executable, __file__, "--child", str(path), str(folder), str(threads), driver_memory,
               "stages" if stages else "no-stages", str(repeat)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "Error" in line or "Exception" in line]
        return {"master": f"local[{threads}]", "driver_memory": driver_memory, "failed": True,
                "error": errors[-3:] if errors else done.stderr.strip().splitlines()[-3:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def spark_child(path: str, folder: str, threads: int, driver_memory: str, stages: bool = True,
                repeat: int = 1) -> dict[str, object]:
    from crowdsafe.anonymize.counted import apply_counts, class_frame
    from crowdsafe.anonymize.publish import PlanRequest, RunOptions
    from crowdsafe.datasets.uci_adult import schema
    from crowdsafe.engines.spark.engine import SparkEngine
    from crowdsafe.engines.spark.io import read_frame
    from crowdsafe.engines.spark.publish import count_release_sample, publish_table, release_of
    from crowdsafe.engines.spark.session import spark_session
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.engines.spark.write import write_releases
    from crowdsafe.randomness import Randomness
    from crowdsafe.selection import choose_scheme

    start_time, spark = timed(lambda: spark_session(f"local[{threads}]", config={
        "spark.driver.memory": driver_memory, "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(2 * threads)}))
    gateway = getattr(spark.sparkContext._gateway, "proc", None)
    workers = WorkerMemory(gateway.pid) if gateway is not None else None
    before = load_average()
    roles = schema()
    columns = [c for c in roles.names if c in {*roles.quasi_identifiers, *roles.sensitive}]  # the published ones

    def floor_run() -> float:  # read as the publish reads (read_frame), grouped by the published columns
        return timed(lambda: read_frame(spark, path).groupBy(*columns).count().count())[0]

    cold = floor_run()  # the JVM's first job: JIT warm-up and class loading, not timed as the floor
    floors = [floor_run()]
    # the engine's default plan, from the table's hierarchies (the table pass alone, untimed)
    plan = SparkEngine().plan_publication(spark_table(spark, path, schema=schema(), hierarchies=adult_hierarchies(),
                                                      count=False), PlanRequest(1.0, 1e-6))
    staged: dict[str, object] = {}
    if stages:
        table_time, table = timed(lambda: spark_table(spark, path, schema=schema(), hierarchies=adult_hierarchies()))
        columns = table.columns
        randomness = Randomness()
        count_time, sample = timed(lambda: count_release_sample(table, plan.beta, randomness, None))
        choice_time, choice = timed(lambda: choose_scheme(sample.table, columns, plan.k, plan.epsilon1, randomness,
                                                                  plan.objective, plan.count_share))
        apply_time, applied = timed(lambda: apply_counts(sample.table, choice.scheme.levels, plan.k))
        target = str(Path(folder) / f"spark-stages-{threads}.parquet")
        written = (class_frame(applied, choice.scheme, columns), applied.class_sizes[applied.class_kept])
        write_time, _ = timed(lambda: write_releases(spark, [release_of(table, choice.scheme, applied)[1]], ["{}"],
                                                     [target], classes=[written]))
        staged = {
            "stages_seconds": {
                "table_pass_and_count": table_time, "sample": count_time, "epsilon1_safe_choice": choice_time,
                "apply_on_counts": apply_time, "generate_and_write": write_time,
            },
            "frequency_table_rows": int(sample.table.n_cells),
            "nodes_scored": choice.scored,
        }
    totals = []
    for attempt in range(repeat):
        run = RunOptions(out=str(Path(folder) / f"spark-{threads}-{attempt}.parquet"))
        total, publication = timed(lambda run=run: publish_table(spark_table(spark, path, schema=schema(),
                                                                             hierarchies=adult_hierarchies()),
                                                                 plan, run, randomness=Randomness()))
        totals.append(total)
        floors.append(floor_run())
    worker_memory = workers.stop() if workers is not None else {}
    return {
        "master": f"local[{threads}]",
        "driver_memory": driver_memory,
        "session_start_seconds": start_time,
        **staged,
        "publish_table_seconds": min(totals),
        "publish_table_seconds_all": totals,
        "floor_spark_group_by_seconds": min(floors),
        "floor_spark_group_by_seconds_all": floors,
        "floor_cold_seconds": cold,
        "ratio_to_floor": min(totals) / min(floors),
        "rows_published": publication.release.rows_published,
        "driver_peak_rss_mb": peak_rss_mb(),
        "jvm_peak_rss_mb": peak_rss_mb(gateway.pid) if gateway is not None else None,
        **worker_memory,
        "load_average_before_after": [before, load_average()],
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, path, folder, threads, memory, stages, repeat = sys.argv
        print(json.dumps(spark_child(path, folder, int(threads), memory, stages == "stages", int(repeat))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10M,50M")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--engines", default="polars,spark", help="run only some engines, e.g. spark")
    parser.add_argument("--parts", action="store_true", help="write every size as Parquet parts (a folder)")
    parser.add_argument("--allow-100m", action="store_true", help="allow sizes of 100M rows or more (a long run)")
    parser.add_argument("--no-stages", action="store_true", help="time publish_table end to end only")
    parser.add_argument("--repeat", type=int, default=1, help="publishes per JVM (the best is reported)")
    parser.add_argument("--data-dir", help="keep the generated tables here and reuse them (default: a temporary "
                                           "folder)")
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
        if rows >= LARGE and not args.allow_100m:
            raise SystemExit(f"bench/spark.py: {size} rows takes long; add --allow-100m to run it")
        folder = Path(tempfile.mkdtemp(prefix="crowdsafe-spark-bench-"))
        data = Path(args.data_dir) if args.data_dir else folder
        data.mkdir(parents=True, exist_ok=True)
        try:
            generate_time, path = timed(lambda rows=rows, data=data: write_parquet(rows, data, args.parts))
            entry: dict[str, object] = {"rows": rows, "parquet_bytes": parquet_bytes(path),
                                        "parquet_parts": len(list(path.glob("*.parquet"))) if path.is_dir() else 1,
                                        "generate_and_write_parquet_seconds": generate_time,
                                        "generate_peak_rss_mb": peak_rss_mb()}
            engines = args.engines.split(",")
            if "polars" in engines and not path.is_dir():
                entry["polars"] = polars_engine(path, folder)
            if "spark" in engines:
                entry["spark"] = [spark_engine(path, folder, int(n), args.driver_memory, not args.no_stages,
                                               args.repeat) for n in args.threads.split(",")]
            if "polars" in entry and "spark" in entry:
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
