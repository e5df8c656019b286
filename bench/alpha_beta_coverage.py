"""The α-β estimator over many seeded views of Adult: bias, spread and its error bars' coverage; print JSON.

Adult's training file without missing values, six attributes (age, education, occupation,
native-country, sex, income) over their public domains, c = 5, γ = 0.2, N = 50,000 (the
docs/alpha-beta.md example), one view per seed. Per query fixed in advance: the true count of
distinct tuples, the mean estimate and its z-score (mean − true over the standard error of the
mean), the estimates' standard deviation beside the exact one, sqrt(v)/(α − β) with
v = α(1 − α)q + β(1 − β)(n_D − q), the mean Bernstein bar (95%) beside the normal-approximation
half-width 1.96·sqrt(v)/(α − β), how often the bar was exceeded, and how often the plug-in
normal interval EST ± 1.96·sqrt(v̂)/(α − β), v̂ at q̂ = EST clipped to [0, n_D], held the truth. The numbers are quoted in
docs/alpha-beta.md ("Estimating counting queries").

Usage: PYTHONPATH=src python bench/alpha_beta_coverage.py [--views 150] [--first-seed 1000]
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import polars as pl

import crowdsafe.api as cs
from crowdsafe.datasets import load_bundled

ATTRIBUTES = ["age", "education", "occupation", "native-country", "sex", "income"]
QUERIES = {
    "count": pl.lit(True),
    "count where income = '>50K'": pl.col("income") == ">50K",
    "count where sex = 'Female' and age between 26 and 32": (pl.col("sex") == "Female")
    & pl.col("age").is_between(26, 32),
    "count where native-country = 'Mexico'": pl.col("native-country") == "Mexico",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, default=150)
    parser.add_argument("--first-seed", type=int, default=1000)
    args = parser.parse_args()
    distinct = load_bundled("adult", missing="drop").frame.select(ATTRIBUTES).unique()
    truth = {q: distinct.filter(condition).height for q, condition in QUERIES.items()}
    estimates: dict[str, list[float]] = {q: [] for q in QUERIES}
    bars: dict[str, list[float]] = {q: [] for q in QUERIES}
    plugin: dict[str, list[float]] = {q: [] for q in QUERIES}
    n_domain: dict[str, int] = {}
    for seed in range(args.first_seed, args.first_seed + args.views):
        result = cs.perturb("adult", c=5, gamma=0.2, max_rows=50_000, attributes=ATTRIBUTES, missing="drop",
                            seed=seed, ledger=None, report=False)
        for query in QUERIES:
            answer = cs.estimate(result, query)
            estimates[query].append(answer.estimate)
            bars[query].append(answer.error)
            a, b, q_hat = result.plan.alpha, result.plan.beta, min(max(answer.estimate, 0.0), answer.n_domain)
            v_hat = a * (1 - a) * q_hat + b * (1 - b) * (answer.n_domain - q_hat)
            plugin[query].append(1.96 * math.sqrt(v_hat) / (a - b))
            n_domain[query] = answer.n_domain
    alpha, beta = result.plan.alpha, result.plan.beta
    out: dict[str, object] = {"views": args.views, "seeds": [args.first_seed, args.first_seed + args.views - 1],
                              "alpha": alpha, "beta": beta, "queries": {}}
    for query, true in truth.items():
        x = np.asarray(estimates[query])
        sd = math.sqrt(alpha * (1 - alpha) * true + beta * (1 - beta) * (n_domain[query] - true)) / (alpha - beta)
        out["queries"][query] = {  # type: ignore[index]
            "true": true, "mean_estimate": float(x.mean()),
            "z": float((x.mean() - true) / (x.std(ddof=1) / math.sqrt(len(x)))),
            "sd": float(x.std(ddof=1)), "sd_exact": sd,
            "bernstein_bar": float(np.mean(bars[query])), "normal_half_width": 1.96 * sd,
            "bar_exceeded": float(np.mean(np.abs(x - true) > np.asarray(bars[query]))),
            "plugin_normal_covered": float(np.mean(np.abs(x - true) <= np.asarray(plugin[query]))),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
