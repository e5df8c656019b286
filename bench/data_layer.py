"""Benchmark of the data layer: load + encode + frequency table, against a bare Polars group-by.

For Adult (32,561 rows) and synthetic Adults of 1M and 10M rows, each size runs in its own
subprocess so its peak memory (``resource.getrusage(...).ru_maxrss``) is its own:

- the data is first written to a Parquet file by a separate preparation subprocess;
- ``load`` reads it with Adult's schema and default hierarchies (coverage validated),
  ``encode`` dictionary-encodes the 8 quasi-identifiers, ``frequency_table`` counts their
  distinct tuples;
- the floors, timed in the same subprocess: a bare ``frame.group_by(qis).len()`` on the loaded
  frame, and ``pl.read_parquet`` + that group-by.

Each timing is the best of ``--repeat`` runs (a fresh Dataset each time, so no cached
encoding). Peak memory is measured in two further fresh subprocesses, one running the
pipeline once and one running the floor (read + group-by) once. Prints JSON. Usage: ``python bench/data_layer.py [--sizes adult,1000000,10000000]``.
"""

from __future__ import annotations

from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)
from timing import best_of as _best

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_RATIO = 3.0
GOAL_PEAK_GIB = 4.0


def _prepare(size: str, path: Path) -> None:
    from crowdsafe.data import write
    from crowdsafe.datasets import adult, synthetic

    dataset = adult() if size == "adult" else synthetic(rows_of(size), seed=1)
    write(dataset, path)


def _measure(size: str, path: Path, repeat: int) -> dict:
    import polars as pl

    from crowdsafe.data import encode, frequency_table, load
    from crowdsafe.datasets import uci_adult as adult_module

    schema = adult_module.schema()
    qis = schema.quasi_identifiers

    def pipeline():
        hierarchies = adult_module.hierarchies()
        t0 = time.perf_counter()
        dataset = load(path, schema=schema, hierarchies={
            c: h.with_missing_leaf() for c, h in hierarchies.items()
        })
        t1 = time.perf_counter()
        encode(dataset)
        t2 = time.perf_counter()
        table = frequency_table(dataset)
        t3 = time.perf_counter()
        return {"load_s": t1 - t0, "encode_s": t2 - t1, "frequency_s": t3 - t2, "total_s": t3 - t0,
                "rows": dataset.n_rows, "distinct_tuples": table.height, "frame": dataset.frame}

    best = None
    for _ in range(repeat):  # keep one frame alive at a time
        run = pipeline()
        frame = run.pop("frame")
        if best is None or run["total_s"] < best["total_s"]:
            best = run
    floor_groupby, grouped = _best(repeat, lambda: frame.group_by(qis).len())
    floor_read, _ = _best(repeat, lambda: pl.read_parquet(path).group_by(qis).len())
    assert grouped.height == best["distinct_tuples"], "floor and pipeline disagree on the tuples"
    bundled = None
    if size == "adult":
        bundled, _ = _best(repeat, lambda: frequency_table(adult_module.adult()))
    out = {
        "size": size,
        **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in best.items()},
        "floor_groupby_s": round(floor_groupby, 4),
        "floor_read_groupby_s": round(floor_read, 4),
        "ratio_total_to_floor_groupby": round(best["total_s"] / floor_groupby, 2),
        "ratio_total_to_floor_read_groupby": round(best["total_s"] / floor_read, 2),
        "ratio_encode_frequency_to_floor_groupby": round(
            (best["encode_s"] + best["frequency_s"]) / floor_groupby, 2),
        "parquet_bytes": path.stat().st_size,
    }
    if bundled is not None:
        out["bundled_adult_load_and_frequency_s"] = round(bundled, 4)
    return out


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30  # Linux: KiB


def _memory(size: str, path: Path, mode: str) -> dict:
    """Peak memory of one fresh process running the pipeline once (or the floor once)."""
    import polars as pl

    from crowdsafe.data import encode, frequency_table, load
    from crowdsafe.datasets import uci_adult as adult_module

    schema = adult_module.schema()
    baseline = _peak_gib()  # interpreter + imports
    if mode == "pipeline":
        hierarchies = {c: h.with_missing_leaf() for c, h in adult_module.hierarchies().items()}
        dataset = load(path, schema=schema, hierarchies=hierarchies)
        encode(dataset)
        frequency_table(dataset)
    else:
        pl.read_parquet(path).group_by(schema.quasi_identifiers).len()
    return {"peak_gib": round(_peak_gib(), 3), "after_imports_gib": round(baseline, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1000000,10000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--prepare", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--memory", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.prepare:
        _prepare(args.prepare, Path(args.path))
        return
    if args.one and args.memory:
        print(json.dumps(_memory(args.one, Path(args.path), args.memory)))
        return
    if args.one:
        print(json.dumps(_measure(args.one, Path(args.path), args.repeat)))
        return

    import polars as pl

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    results = []
    with tempfile.TemporaryDirectory(prefix="crowdsafe-bench-") as folder:
        for size in args.sizes.split(","):
            path = Path(folder) / f"{size}.parquet"
            subprocess.run([sys.executable, __file__, "--prepare", size, "--path", str(path)], env=env, check=True)
            done = subprocess.run(
                [sys.executable, __file__, "--one", size, "--path", str(path), "--repeat", str(args.repeat)],
                env=env, check=True, capture_output=True, text=True,
            )
            result = json.loads(done.stdout)
            for mode in ("pipeline", "floor"):
                memory = subprocess.run(
                    [sys.executable, __file__, "--one", size, "--path", str(path), "--memory", mode],
                    env=env, check=True, capture_output=True, text=True,
                )
                measured = json.loads(memory.stdout)
                result[f"peak_memory_{mode}_gib"] = measured["peak_gib"]
            result["memory_after_imports_gib"] = measured["after_imports_gib"]
            results.append(result)
            path.unlink()
    largest = results[-1]
    print(json.dumps({
        "benchmark": "data_layer",
        "what": "load (Parquet, Adult schema + hierarchies) + encode (8 QIs) + frequency table",
        "floor": "bare Polars group_by(8 QIs).len() on the loaded frame; also read_parquet + group_by",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "polars": pl.__version__},
        "repeat": args.repeat,
        "results": results,
        "goals": {
            "size": largest["size"],
            "ratio_total_to_floor_groupby": largest["ratio_total_to_floor_groupby"],
            "within_3x_of_floor": largest["ratio_total_to_floor_groupby"] <= GOAL_RATIO,
            "peak_memory_pipeline_gib": largest["peak_memory_pipeline_gib"],
            "under_4_gib": largest["peak_memory_pipeline_gib"] < GOAL_PEAK_GIB,
        },
    }, indent=2))


if __name__ == "__main__":
    main()
