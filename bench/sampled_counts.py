"""What dividing a sampled release's counts by β gives an analyst, on Adult; print JSON.

``crowdsafe.publish`` at the default plan (ε as given), seeds as given. Per seed: the sample's
suppression rate (custodian-only, read here for the measurement), and for each query the release's
count divided by β and its share of the released rows. The truth is counted on the whole table.
The numbers are quoted in docs/publish.md ("Counts from a sampled release are not population
counts times β").

Usage: PYTHONPATH=src python bench/sampled_counts.py [--epsilon 1] [--seeds 100 ... 119]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import numpy as np
import polars as pl

import crowdsafe.api as cs
from crowdsafe.datasets import load_bundled

QUERIES: dict[str, Callable[[pl.DataFrame], int]] = {
    "all rows": lambda t: t.height,
    "income = '>50K'": lambda t: int((t.get_column("income") == ">50K").sum()),
    "sex = 'Female'": lambda t: int((t.get_column("sex") == "Female").sum()),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(100, 120)))
    args = parser.parse_args()
    full = load_bundled("adult").frame
    scaled: dict[str, list[float]] = {q: [] for q in QUERIES}
    shares: dict[str, list[float]] = {q: [] for q in QUERIES}
    suppression, plans = [], set()
    for seed in args.seeds:
        publication = cs.publish("adult", epsilon=args.epsilon, seed=seed, ledger=None, report=False)
        table, beta = publication.release.table, publication.plan.beta
        plans.add((beta, publication.plan.k))
        suppression.append(publication.custodian_report()["releases"][0]["suppression_rate"])
        for query, count in QUERIES.items():
            scaled[query].append(count(table) / beta)
            shares[query].append(count(table) / max(table.height, 1))
    out = {
        "epsilon": args.epsilon, "seeds": args.seeds, "rows": full.height,
        "plans (beta, k)": sorted(plans),
        "suppression": {"mean": float(np.mean(suppression)), "min": float(np.min(suppression)),
                        "max": float(np.max(suppression))},
        "queries": {
            query: {"true": count(full), "true_share": count(full) / full.height,
                    "count_over_beta_mean": float(np.mean(scaled[query])),
                    "relative_bias": float(np.mean(scaled[query]) / count(full) - 1),
                    "share_mean": float(np.mean(shares[query])), "share_sd": float(np.std(shares[query], ddof=1))}
            for query, count in QUERIES.items()
        },
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
