"""Where the ε1-safe choice spends its time, and what a faster exact search could save; print JSON.

The choice (``choose_scheme``: the exponential mechanism over the generalization lattice, a
branch and bound, crowdsafe/selection/PROOF.md §4) is most of ``publish_dataset``'s time. For
each size (Adult, and the synthetic Adult at 1M and 10M rows; the plan at ε = 1, δ = 1e-6 of
the ``retained`` objective, whose branch and bound this studies; one Bernoulli sample, seed 0)
this prints:

- ``choice_seconds``: the choice, best of --repeat;
- ``visits_by_depth`` and ``rows_by_depth``: how many blocks the search opened at each depth of
  its column order, and the table rows it handled there (the work is rows × passes);
- ``first_leaf_below_best``: how far below the final best lower key the first key the search
  prunes with lies, in key units (nats): the incumbent's (crowdsafe/selection/incumbent.py) when
  one is found before the search, else the first node the dive scores; the search prunes against
  the best key found so far, so a poor first key costs visits;
- ``with_best_known``: the same search started with the final best lower key already known (an
  oracle: a lower bound on what any incumbent heuristic could save), its time and visits; and
  ``with_best_known_minus``: started 100 and 200 nats below it (what a merely good incumbent
  saves);
- for Adult only (``--gaps``), ``bound_gap_by_depth``: for every child block whose bound the
  search computed, its bound minus the exact best key in it (nats; median, 10th and 90th
  percentiles), from the exact scores of all 36,864 nodes (about 3 s). A block is skipped only
  when its bound plus its largest Gumbel is below the best key, so these gaps are what a tighter
  bound would have to close.

It wraps the search's internal functions (``search.children``, ``search.key_bounds``) to count and
to seed the incumbent; the choice itself is unchanged (the chosen node is printed and is the same
in every variant). Not a privacy-preserving procedure: the figures are facts about the sample.

Usage: python bench/selection_search.py [--sizes adult,1m,10m] [--repeat 3] [--gaps]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl
from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)

import crowdsafe.selection.search as search
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.publish import PlanRequest, choose_recoding, count_sample, plan_for_dataset, prepare_dataset
from crowdsafe.datasets import adult, synthetic
from crowdsafe.randomness import Randomness
from crowdsafe.sampling import sample_of
from crowdsafe.selection.score import Objective


@contextlib.contextmanager
def instrumented(seed_best: float = -math.inf) -> Iterator[dict[str, Any]]:
    """Count the blocks opened per depth and record every scored node's lower key; with
    ``seed_best``, the search's incumbent starts at that key (every node whose lower key reaches it
    is still found, so the choice is the same)."""
    record: dict[str, Any] = {"visits": collections.Counter(), "rows": collections.Counter(), "lower_keys": [],
                              "bounds": []}
    children, key_bounds = search.children, search.key_bounds
    seeded = [seed_best > -math.inf]

    def counting_children(tables, keys, counts, attribute, levels, k):  # type: ignore[no-untyped-def]
        record["visits"][attribute] += 1
        record["rows"][attribute] += len(keys)
        bounds, exact, made = children(tables, keys, counts, attribute, levels, k)
        record["bounds"].append((attribute, list(levels[:attribute]), [int(b) for b in bounds]))
        return bounds, exact, made

    def recording_key_bounds(score, low, high):  # type: ignore[no-untyped-def]
        lower, upper = key_bounds(score, low, high)
        record["lower_keys"].append(lower)
        if seeded[0]:  # the first key the search prunes with becomes the seed when the seed is higher
            seeded[0] = False
            return max(lower, seed_best), upper
        return lower, upper

    search.children, search.key_bounds = counting_children, recording_key_bounds
    try:
        yield record
    finally:
        search.children, search.key_bounds = children, key_bounds


def bench(name: str, repeat: int, gaps: bool) -> dict[str, Any]:
    data = adult() if name == "adult" else synthetic(rows_of(name), seed=0)
    plan = plan_for_dataset(data, PlanRequest(1.0, 1e-6, objective="retained"))
    prepared, columns, _ = prepare_dataset(data)
    table = count_sample(sample_of(prepared, plan.beta, Randomness(0)), columns)

    def choose() -> Any:
        return choose_recoding(table, columns, plan, None, Randomness(1))

    def timed(seed_best: float = -math.inf) -> tuple[float, dict[str, Any], Any]:
        runs = []
        for _ in range(repeat):
            with instrumented(seed_best) as record:
                started = time.perf_counter()
                chosen = choose()
                runs.append(time.perf_counter() - started)
        return min(runs), record, chosen

    seconds, record, chosen = timed()
    best = max(record["lower_keys"])
    entry: dict[str, Any] = {
        "dataset": name, "rows": data.n_rows, "distinct_sample_tuples": int(len(table.counts)),
        "plan": {"k": plan.k, "beta": plan.beta, "epsilon1": plan.epsilon1},
        "chosen": dict(chosen[0].levels), "choice_seconds": seconds,
        "visits": sum(record["visits"].values()),
        "visits_by_depth": dict(sorted(record["visits"].items())),
        "rows_by_depth": dict(sorted(record["rows"].items())),
        "first_leaf_below_best": best - record["lower_keys"][0],
    }
    known_seconds, known, known_choice = timed(best)
    entry["with_best_known"] = {"seconds": known_seconds, "visits": sum(known["visits"].values()),
                                "same_choice": dict(known_choice[0].levels) == entry["chosen"]}
    entry["with_best_known_minus"] = {}
    for margin in (100, 200):
        margin_seconds, margin_record, _ = timed(best - margin)
        entry["with_best_known_minus"][str(margin)] = {"seconds": margin_seconds,
                                                       "visits": sum(margin_record["visits"].values())}
    if gaps:
        entry["bound_gap_by_depth"] = bound_gaps(table, columns, plan, record["bounds"])
    return entry


def bound_gaps(table: Any, columns: list[str], plan: Any, bounds: list[tuple[int, list[int], list[int]]]
               ) -> dict[str, dict[str, float]]:
    """Each computed child bound minus the exact best score in its block, in key units."""
    objective = Objective("retained").for_columns(columns, table.hierarchies)
    heights = objective.candidate_heights(columns, table.hierarchies)
    order = search.search_order(heights)
    ordered = [columns[j] for j in order]
    _, scores = search.lattice_scores(table, ordered, plan.k, objective)
    scale = plan.epsilon1 / objective.key_denominator(plan.k)
    keys = scores.astype(np.float64) * scale
    strides = Lattice(tuple(ordered), tuple(heights[j] for j in order)).strides
    by_depth: dict[int, list[float]] = collections.defaultdict(list)
    for attribute, levels, child_bounds in bounds:
        base = sum(level * int(strides[a]) for a, level in enumerate(levels))
        size = int(strides[attribute])
        for level, bound in enumerate(child_bounds):
            start = base + level * size
            by_depth[attribute].append(bound * scale - float(keys[start:start + size].max()))
    return {f"{attribute} {ordered[attribute]}": {
        "children": len(values), "median": float(np.median(values)),
        "p10": float(np.percentile(values, 10)), "p90": float(np.percentile(values, 90))}
        for attribute, values in sorted(by_depth.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1m,10m")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gaps", action="store_true", help="Adult only: the bound's gap per depth (about 3 s)")
    args = parser.parse_args()
    results = []
    for name in args.sizes.split(","):
        name = name.strip()
        entry = bench(name, args.repeat, args.gaps and name == "adult")
        results.append(entry)
        print(json.dumps(entry), file=sys.stderr)
    print(json.dumps({"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                  "polars": pl.__version__}, "results": results}, indent=2))


if __name__ == "__main__":
    main()
