"""Benchmark of DP queries: crowdsafe against the same aggregation without noise in Polars.

For Adult (32,561 rows) and a synthetic Adult of ``--rows`` rows (default 10M), three queries:

- ``count``: ``count where age >= 30 and sex = 'Female'``; floor: Polars filter + len;
- ``histogram``: ``histogram sex, race, income`` (a 3-attribute contingency table, 20 cells);
  floor: Polars group_by(sex, race, income).len();
- ``mean``: ``mean(age) clamp 17..90``; floors: Polars ``mean(age)``, and the clamped mean (the
  same aggregation as the query's, clamped with when/then, faster than ``clip`` in Polars 2.1).

Every floor is the lazy form (projection pushdown: only the needed columns are read), the fastest
bare Polars way to compute it.

crowdsafe is timed through :func:`crowdsafe.mechanisms.queries.answer_query` on a loaded
Dataset (parse, plan, exact aggregate, exact noise, answer), without and with a budget ledger.
The ledger overhead per query is also timed on its own (check + charge + finish on a file in a
temporary folder). The dataset fingerprint, which the ledger keys on, is computed once per loaded
dataset and reported separately.

OpenDP (if importable): its Polars front end does not accept the installed Polars 2.x, so the
same queries run through its core measurements on Python lists (the rows are filtered and keyed
in Polars first; list conversion is included, as a user pays it). That path costs about 2.5 s per
million rows, so it runs on Adult and on ``--opendp-rows`` synthetic rows (default 1M), not 10M.

Each timing gives the best and the median of ``--repeat`` runs, the jobs of one query taking turns
so that load on a shared machine hits them alike; ratios use the best times. Prints JSON. Usage:
``python bench/queries.py [--rows 10000000] [--repeat 7] [--opendp-rows 1000000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import polars as pl  # noqa: E402

from crowdsafe.data import Dataset  # noqa: E402
from crowdsafe.datasets import adult, synthetic  # noqa: E402
from crowdsafe.mechanisms.queries import answer_query  # noqa: E402
from crowdsafe.mechanisms.query_plan import QueryRequest  # noqa: E402
from crowdsafe.privacy.ledger import Ledger  # noqa: E402
from crowdsafe.randomness import Randomness  # noqa: E402

GOAL_RATIO = 1.5
GOAL_LEDGER_MS = 5.0

AGE = pl.col("age")
QUERIES: dict[str, tuple[str, dict[str, Callable[[pl.DataFrame], Any]]]] = {
    "count": (
        "count where age >= 30 and sex = 'Female'",
        {"polars": lambda f: f.lazy().filter((AGE >= 30) & (pl.col("sex") == "Female")).select(pl.len()).collect()},
    ),
    "histogram_3_attributes": (
        "histogram sex, race, income",
        {"polars": lambda f: f.lazy().group_by(["sex", "race", "income"]).len().collect()},
    ),
    "mean": (
        "mean(age) clamp 17..90",
        {
            "polars": lambda f: f.lazy().select(AGE.mean()).collect(),
            "polars_clamped": lambda f: f.lazy().select(
                pl.when(AGE < 17).then(17).when(AGE > 90).then(90).otherwise(AGE).mean()
            ).collect(),
        },
    ),
}


def time_ms(job: Callable[[], Any], repeat: int) -> dict[str, float]:
    """Best and median wall time of ``repeat`` runs, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return {"best": round(min(times) * 1000, 3), "median": round(statistics.median(times) * 1000, 3)}


def interleaved_ms(jobs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, dict[str, float]]:
    """Time several jobs in turns (one run of each per round), so that a burst of load on a
    shared machine hits them alike; best and median per job."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            start = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - start)
    return {name: {"best": round(min(t) * 1000, 3), "median": round(statistics.median(t) * 1000, 3)}
            for name, t in times.items()}


def ledger_overhead_ms(fingerprint: str, repeat: int = 200) -> dict[str, float]:
    """check + charge + finish, nothing else, against a ledger already holding `repeat` entries."""
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "bench.sqlite3") as ledger:
        ledger.set_budget(fingerprint, "bench", 1e9, 0.0)
        request = {"epsilon": 0.01, "description": "count", "mechanism": "discrete Laplace"}
        times = []
        for _ in range(2 * repeat):
            start = time.perf_counter()
            ledger.check(fingerprint, **request)
            with ledger.charge(fingerprint, **request) as charge:
                charge.record(value=1)
            times.append(time.perf_counter() - start)
        later = times[repeat:]  # the second half runs with `repeat` earlier entries in the file
        return {
            "best_ms": round(min(later) * 1000, 3),
            "median_ms": round(statistics.median(later) * 1000, 3),
            "p90_ms": round(sorted(later)[int(0.9 * len(later))] * 1000, 3),
            "goal_ms": GOAL_LEDGER_MS,
            "note": "one commit flushed to disk (fsync) per charge: the cost follows the disk's flush latency",
        }


def bench_dataset(dataset: Dataset, repeat: int) -> dict[str, Any]:
    frame = dataset.frame
    start = time.perf_counter()
    fingerprint = dataset.fingerprint()
    fingerprint_s = time.perf_counter() - start
    randomness = Randomness()  # the secure default: OS-keyed ChaCha20
    results: dict[str, Any] = {"rows": dataset.n_rows, "fingerprint_once_s": round(fingerprint_s, 3)}
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "ledger.sqlite3") as ledger:
        ledger.set_budget(fingerprint, "bench", 1e9, 0.0)
        for name, (text, floors) in QUERIES.items():
            answer_query(dataset, QueryRequest(text, epsilon=1.0), randomness=randomness)  # warm-up
            jobs: dict[str, Callable[[], Any]] = {
                f"floor_{floor_name}": (lambda floor=floor: floor(frame)) for floor_name, floor in floors.items()
            }
            request = QueryRequest(text, epsilon=1.0)
            jobs["crowdsafe"] = lambda request=request: answer_query(dataset, request, randomness=randomness)
            jobs["crowdsafe_with_ledger"] = lambda request=request: answer_query(
                dataset, request, randomness=randomness, ledger=ledger, fingerprint=fingerprint
            )
            timings = interleaved_ms(jobs, repeat)
            row: dict[str, Any] = {"query": text, **{f"{k}_ms": v for k, v in timings.items()}}
            floor_best = min(v["best"] for k, v in timings.items() if k.startswith("floor_"))
            same = timings.get("floor_polars_clamped", timings["floor_polars"])["best"]
            row["ratio_to_floor_best"] = round(timings["crowdsafe"]["best"] / floor_best, 2)
            row["ratio_to_same_aggregation_best"] = round(timings["crowdsafe"]["best"] / same, 2)
            results[name] = row
    return results


def bench_opendp(frame: pl.DataFrame, repeat: int) -> dict[str, Any]:
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        return {"skipped": f"OpenDP is not importable: {exc}"}
    dp.enable_features("contrib")
    ints = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    texts = (dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    floats = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
    count = dp.t.make_count(*ints) >> dp.m.then_laplace(1.0)
    cells = frame.select(pl.concat_str(["sex", "race", "income"], separator="|")).unique().to_series().to_list()
    histogram = dp.t.make_count_by_categories(*texts, categories=cells) >> dp.m.then_laplace(1.0)
    clamped_sum = dp.t.make_clamp(*floats, bounds=(17.0, 90.0)) >> dp.t.then_sum() >> dp.m.then_laplace(180.0)
    mean_count = dp.t.make_count(*floats) >> dp.m.then_laplace(2.0)

    def run_count() -> None:
        rows = frame.filter((pl.col("age") >= 30) & (pl.col("sex") == "Female")).get_column("age").to_list()
        count(rows)

    def run_histogram() -> None:
        keys = frame.select(pl.concat_str(["sex", "race", "income"], separator="|")).to_series().to_list()
        histogram(keys)

    def run_mean() -> None:
        ages = frame.get_column("age").cast(pl.Float64).to_list()
        clamped_sum(ages) / max(1, mean_count(ages))

    return {
        "rows": frame.height,
        "path": "OpenDP core measurements on Python lists (its Polars front end needs Polars 1.x)",
        "count_ms": time_ms(run_count, repeat),
        "histogram_3_attributes_ms": time_ms(run_histogram, repeat),
        "mean_ms": time_ms(run_mean, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--opendp-rows", type=int, default=1_000_000)
    parser.add_argument("--skip-opendp", action="store_true")
    args = parser.parse_args()

    report: dict[str, Any] = {
        "benchmark": "queries",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__},
        "goals": {"ratio_to_floor_at_large_size": GOAL_RATIO, "ledger_overhead_ms": GOAL_LEDGER_MS},
    }
    small = adult()
    report["adult"] = bench_dataset(small, max(args.repeat, 31))
    report["ledger_overhead"] = ledger_overhead_ms(small.fingerprint())
    start = time.perf_counter()
    large = synthetic(args.rows, seed=1)
    report["synthetic"] = {"generate_s": round(time.perf_counter() - start, 2), **bench_dataset(large, args.repeat)}
    if not args.skip_opendp:
        report["opendp"] = {
            "adult": bench_opendp(small.frame, 3),
            "synthetic": bench_opendp(large.frame.head(args.opendp_rows), 1),
            "synthetic_10M": "not run: the list conversion alone costs about 2.5 s per million rows",
        }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
