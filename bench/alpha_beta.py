"""Benchmark of the α-β algorithm and its estimator, against bare Polars group-bys.

- perturb: Adult (training file, rows without a missing value) and synthetic Adults of 1M and
  10M rows, the 9 attributes of the case study (age, workclass, education, marital-status,
  occupation, race, sex, native-country, income), (10·n/m, 0.2)-privacy with α = 1/2: encode,
  collapse duplicates, keep, draw the insertions, put them in domain order, decode, certify (no
  ledger: no charge). The input's fingerprint (BLAKE2b-256, what a ledger's keyed identity hashes) is
  timed on its own beside it. Floor: a bare Polars
  ``group_by(9 attributes).len()`` over the same rows, timed in the same run.
- estimate: every equality query over every set of up to 3 of the 9 attributes (320,403 queries
  on Adult over its public domains) from the Adult view, in one vectorised pass. Floors: one Polars group-by over the
  view's rows, and the 129 Polars group-bys (one per attribute set) a bare implementation needs.

Each timing is the best of ``--repeat`` runs (one run for 10M rows). Prints JSON.
Usage: ``python bench/alpha_beta.py [--sizes adult,1000000,10000000] [--repeat 3]``.
"""

from __future__ import annotations

from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)
from timing import best_of as _best

import argparse
import itertools
import json
import os
import platform
import resource
import tempfile
from pathlib import Path

ATTRIBUTES = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex",
              "native-country", "income"]
TARGET = dict(c=10.0, gamma=0.2, alpha=0.5)
GOAL_ADULT_VIEW_S = 1.0
GOAL_SWEEP_S = 5.0


def _dataset(size: str):
    from crowdsafe.datasets import adult, synthetic

    return adult("train", drop_missing=True) if size == "adult" else synthetic(rows_of(size), seed=1)


def _perturb(size: str, repeat: int) -> tuple[dict, object]:
    from crowdsafe.perturb import perturb
    from crowdsafe.perturb.alpha_beta import PerturbRequest
    from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

    dataset = _dataset(size)
    runs = 1 if dataset.n_rows >= 5_000_000 else repeat
    # perturb requires a public bound on the rows (max_rows); the benchmark declares the table's own size,
    # so the plan (d = c n/m, beta) is the one the exact n gives.
    request = PerturbRequest(AlphaBetaPlanRequest(**TARGET), attributes=ATTRIBUTES, max_rows=dataset.n_rows)
    seconds, result = _best(runs, lambda: perturb(dataset, request, randomness=2007))
    fingerprint_s, _ = _best(runs, dataset.fingerprint)
    floor_s, grouped = _best(runs, lambda: dataset.frame.group_by(ATTRIBUTES).len())
    distinct = result.custodian["distinct_tuples"]  # the plan's n is the public bound now
    assert grouped.height == distinct, "the floor and the algorithm disagree on the distinct tuples"
    out = {
        "size": size,
        "rows": dataset.n_rows,
        "distinct_tuples": distinct,
        "m": result.plan.m,
        "beta": result.plan.beta,
        "view_rows": result.view.rows,
        "perturb_s": round(seconds, 4),
        "of_which_input_fingerprint_s": round(fingerprint_s, 4),
        "floor_groupby_s": round(floor_s, 4),
        "ratio_to_floor": round(seconds / floor_s, 2),
        "ratio_to_floor_without_fingerprint": round((seconds - fingerprint_s) / floor_s, 2),
        "runs": runs,
    }
    if size == "adult":
        with tempfile.TemporaryDirectory(prefix="crowdsafe-bench-") as folder:
            path = Path(folder) / "view.csv"
            out["write_view_csv_s"] = round(_best(runs, lambda: result.view.write(path))[0], 4)
            from crowdsafe.perturb import estimate, read_view

            query = "count where age between 26 and 32 and sex = 'Female'"
            out["read_view_and_estimate_one_query_s"] = round(
                _best(runs, lambda: estimate(read_view(path), query))[0], 4)
    return out, result.view


def _sweep(view, repeat: int) -> dict:
    from crowdsafe.perturb import equality_estimates

    seconds, sweep = _best(repeat, lambda: equality_estimates(view, max_attributes=3))
    frame = view.frame
    floor_one, _ = _best(repeat, lambda: frame.group_by(ATTRIBUTES).len())
    subsets = [list(s) for k in (1, 2, 3) for s in itertools.combinations(ATTRIBUTES, k)]
    floor_all, _ = _best(repeat, lambda: [frame.group_by(s).len() for s in subsets])
    return {
        "view_rows": view.rows,
        "attribute_sets": len(subsets),
        "queries": sweep.queries,
        "sweep_s": round(seconds, 4),
        "floor_one_groupby_over_view_s": round(floor_one, 4),
        "floor_polars_groupby_per_attribute_set_s": round(floor_all, 4),
        "ratio_to_per_set_floor": round(seconds / floor_all, 2),
        "note": "the per-set Polars floor only counts the combinations present; the sweep also lists "
                "every absent combination and computes estimates and error bars",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1000000,10000000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import polars as pl

    results, adult_view = [], None
    for size in args.sizes.split(","):
        measured, view = _perturb(size, args.repeat)
        results.append(measured)
        if size == "adult":
            adult_view = view
        del view
    sweep = None
    if adult_view is not None:
        sweep = _sweep(adult_view, args.repeat)
    adult = next((r for r in results if r["size"] == "adult"), None)
    print(json.dumps({
        "benchmark": "alpha_beta",
        "what": "perturb (9 attributes, (10n/m, 0.2)-privacy, alpha = 1/2) and the <=3-attribute equality sweep",
        "floor": "bare Polars group_by(...).len() over the same rows, in the same run",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "polars": pl.__version__,
                    "load_average_1min": round(os.getloadavg()[0], 2)},
        "repeat": args.repeat,
        "perturb": results,
        "estimate_sweep_adult": sweep,
        "peak_memory_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3),
        "goals": {
            "adult_view_s": adult["perturb_s"] if adult else None,
            "adult_view_under_1s": adult["perturb_s"] < GOAL_ADULT_VIEW_S if adult else None,
            "sweep_s": sweep["sweep_s"] if sweep else None,
            "sweep_under_5s": sweep["sweep_s"] < GOAL_SWEEP_S if sweep else None,
        },
    }, indent=2))


if __name__ == "__main__":
    main()
