"""Wide keyed tables (key fields past 62 bits): int64 words against Python integers; print JSON.

The ε1-safe choice (``choose_scheme``, the ``publish`` command's lattice search) keeps the
sample's frequency table as one key per distinct tuple (crowdsafe/selection/tables.py). When the
columns' bit fields pass 62 bits the keys are int64 words (crowdsafe/selection/words.py); the
reference twin, Python integers in object arrays (``tables.OBJECT_KEYS``), was the only wide
path before. For each size this prints, on a synthetic table of ``--columns`` columns with
50–500 values each (skewed: value i drawn with weight 1/(i + 1)^1.1; seed 0; flat hierarchies
built from the observed values, as a column without a declared schema gets):

- ``key_bits`` and ``distinct_tuples`` of the wide table;
- ``words_seconds``: the choice with int64 words (best of --repeat);
- ``objects_seconds``: the same choice with Python integers (the baseline, timed in the same
  run, once: it is the slow path; skipped above --objects-up-to rows);
- ``narrow_seconds``: the choice on a narrow twin (the same rows and columns, each column's values
  folded into 2^⌊62/d⌋ codes so the key fits an int64; nearly as many distinct tuples, printed as
  ``narrow_distinct_tuples``), the int64 path: the floor a wide table is held to;
- ``raise_*_seconds``: one roll-up of the first column (``KeyedTables.raise_level``) of the full
  table, for each of the three, best of --repeat;
- ``same_choice``: the words and objects (when timed) chose the same node with the same scores
  scored; the node is printed.

Usage: python bench/wide_keys.py [--sizes 200k] [--columns 10] [--repeat 3] [--objects-up-to 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)

from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.data.builders import observed_flat
from crowdsafe.randomness import Randomness
from crowdsafe.selection import tables as keyed_tables
from crowdsafe.selection.mechanism import choose_scheme


def table(rows: int, columns: int, seed: int, fold_bits: int | None = None) -> CountedSample:
    """Skewed codes (Zipf-like, value i with weight 1/(i + 1)^1.1), column j with 50–500 values;
    ``fold_bits``: each value folded into 2^fold_bits codes (the narrow twin). Flat hierarchies
    over the observed values."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(50, 501, columns)
    names = [f"q{j}" for j in range(columns)]
    weights = [1.0 / np.arange(1, size + 1) ** 1.1 for size in sizes]
    raw = np.stack([rng.choice(size, rows, p=w / w.sum()) for size, w in zip(sizes, weights)], axis=1)
    if fold_bits is not None:
        raw = raw % (1 << fold_bits)
    hierarchies = {}
    codes = np.empty_like(raw)
    for j, name in enumerate(names):
        values = np.unique(raw[:, j])
        hierarchies[name] = observed_flat(pl.Series(name, values))
        codes[:, j] = np.searchsorted(values, raw[:, j])
    distinct, counts = np.unique(codes, axis=0, return_counts=True)
    return CountedSample(tuple(names), distinct.astype(np.int64), counts.astype(np.int64), hierarchies)


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def with_object_keys(flag: bool, run: Callable[[], Any]) -> Callable[[], Any]:
    def wrapped() -> Any:
        saved = keyed_tables.OBJECT_KEYS
        keyed_tables.OBJECT_KEYS = flag
        try:
            return run()
        finally:
            keyed_tables.OBJECT_KEYS = saved
    return wrapped


def bench(rows: int, columns: int, repeat: int, objects_up_to: int, k: int) -> dict[str, Any]:
    wide = table(rows, columns, 0)
    narrow = table(rows, columns, 0, fold_bits=62 // columns)
    names = list(wide.columns)

    def choose(sample: CountedSample) -> Callable[[], Any]:
        def run() -> Any:
            choice = choose_scheme(sample, names, k, 1.0, Randomness(1), "retained")
            return dict(choice.scheme.levels), choice.scored
        return run

    def raise_first(sample: CountedSample, object_keys: bool = False) -> Callable[[], Any]:
        tables = with_object_keys(object_keys, lambda: keyed_tables.KeyedTables(sample, names, None, k))()
        return lambda: len(tables.raise_level(tables.base_keys, tables.base_counts, 0, 0, 1)[1])

    made = keyed_tables.KeyedTables(wide, names, None, k)
    entry: dict[str, Any] = {"rows": rows, "columns": columns, "k": k, "key_bits": sum(made.bits),
                             "distinct_tuples": int(len(wide.counts)),
                             "narrow_key_bits": sum(keyed_tables.KeyedTables(narrow, names, None, k).bits),
                             "narrow_distinct_tuples": int(len(narrow.counts))}
    entry["words_seconds"], words_choice = best_of(repeat, with_object_keys(False, choose(wide)))
    entry["narrow_seconds"], _ = best_of(repeat, choose(narrow))
    entry["raise_words_seconds"], _ = best_of(repeat, with_object_keys(False, raise_first(wide)))
    entry["raise_narrow_seconds"], _ = best_of(repeat, raise_first(narrow))
    entry["chosen"] = words_choice[0]
    entry["nodes_scored"] = words_choice[1]
    if rows <= objects_up_to:
        entry["objects_seconds"], objects_choice = best_of(1, with_object_keys(True, choose(wide)))
        entry["raise_objects_seconds"], _ = best_of(1, raise_first(wide, object_keys=True))
        entry["same_choice"] = objects_choice == words_choice
        entry["speedup_over_objects"] = entry["objects_seconds"] / entry["words_seconds"]
    entry["ratio_to_narrow"] = entry["words_seconds"] / entry["narrow_seconds"]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200k")
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--objects-up-to", type=int, default=200_000)
    args = parser.parse_args()
    results = [bench(rows_of(size), args.columns, args.repeat, args.objects_up_to, args.k)
               for size in args.sizes.split(",")]
    print(json.dumps({"machine": {"python": sys.version.split()[0], "numpy": np.__version__,
                                  "platform": platform.platform(), "cpus": os.cpu_count()},
                      "results": results}, indent=2))


if __name__ == "__main__":
    main()
