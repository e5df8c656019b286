"""Plain DP answers to Adult's marginal workload beside crowdsafe's certified release, at the same ε; print JSON.

The brief asks the certified release to teach as much as the best DP alternative at the same ε.
This measures the gap on the workload of bench/marginals.py (the mean total variation distance
over the 9 one-way and 36 two-way marginals of the eight quasi-identifiers and income, against
the training split, each marginal over the hierarchies' leaves), for three direct answers a
statistician could give instead of a table, each (ε, δ)-DP under add/remove neighbours (one
person is one row: one cell of every marginal):

- ``laplace_45``: every 1- and 2-way marginal with Laplace noise of scale 45/ε (L1 sensitivity 45),
  pure ε-DP;
- ``gaussian_36``: the 36 two-way marginals with Gaussian noise of σ = Δ2/√(2ρ), Δ2 = √36 = 6,
  where ρ-zCDP gives (ρ + 2√(ρ ln 1/δ), δ)-DP (Bun and Steinke 2016, Proposition 1.3) solved for
  ρ at the asked ε; the one-way marginals are the means of the pairs' projections;
- ``laplace_1way_product``: the 9 one-way marginals with Laplace noise of scale 9/ε, each pair as
  the product of its two (independence).

Negative counts are clipped to 0 and each marginal normalized, as a user would. The release
row is bench/marginals.py's ``run`` (the planner's default plan, seeds as given), in the same run.
NumPy's generator draws the baselines' noise (default_rng(1000 + seed)): a measurement, not a
release. The two Laplace answers are pure ε-DP (δ = 0), within the same (ε, δ) with room to spare.

Usage: PYTHONPATH=src python bench/dp_baselines.py [--epsilons 0.05 0.1 0.25 0.5 1] [--seeds 0 1 2 3 4]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from marginals import COLUMNS, run  # noqa: E402  (the release measured as bench/marginals.py does)

from crowdsafe.data import Dataset  # noqa: E402
from crowdsafe.data.generalized import AttributeDomain, CellTable  # noqa: E402
from crowdsafe.datasets import adult  # noqa: E402
from crowdsafe.metrics.marginals import mass_name, spread_marginal  # noqa: E402

PAIRS = list(itertools.combinations(COLUMNS, 2))
Marginals = tuple[dict[str, np.ndarray], dict[tuple[str, str], np.ndarray]]


def true_marginals(data: Dataset) -> Marginals:
    """Every 1- and 2-way marginal of COLUMNS as a probability array over the leaves' codes (the
    measure of crowdsafe.metrics.marginal_distances, taken on the original table)."""
    table = CellTable.of_original(data, list(COLUMNS))
    size = {c: AttributeDomain.of(data, c).size for c in COLUMNS}

    def dense(columns: Sequence[str]) -> np.ndarray:
        frame = spread_marginal(table, columns)
        out = np.zeros(tuple(size[c] for c in columns))
        np.add.at(out, tuple(frame.get_column(c).to_numpy().astype(np.int64) for c in columns),
                  frame.get_column(mass_name(columns)).to_numpy())
        return out

    return {c: dense([c]) for c in COLUMNS}, {p: dense(list(p)) for p in PAIRS}


def normalized(counts: np.ndarray) -> np.ndarray:
    clipped = np.clip(counts, 0.0, None)
    total = clipped.sum()
    return clipped / total if total > 0 else np.full(counts.shape, 1.0 / counts.size)


def mean_tvd(truth: Marginals, answer: Marginals) -> tuple[float, float]:
    """Mean TVD of the 1-way and of the 2-way marginals of ``answer`` (counts, normalized here)."""
    one = [0.5 * np.abs(truth[0][c] - normalized(answer[0][c])).sum() for c in COLUMNS]
    two = [0.5 * np.abs(truth[1][p] - normalized(answer[1][p])).sum() for p in PAIRS]
    return float(np.mean(one)), float(np.mean(two))


def zcdp_sigma(epsilon: float, delta: float, l2: float) -> float:
    """σ of the Gaussian mechanism with L2 sensitivity ``l2`` that is ρ-zCDP for the ρ whose
    (ρ + 2√(ρ ln 1/δ), δ)-DP conversion equals ``epsilon``."""
    log_inv = math.log(1.0 / delta)
    rho = (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2 * (1.0 - 1e-12)  # (rounding: never above ε)
    return l2 / math.sqrt(2.0 * rho)


def laplace_45(truth: Marginals, n: int, epsilon: float, delta: float, rng: np.random.Generator) -> Marginals:
    scale = (len(COLUMNS) + len(PAIRS)) / epsilon
    return ({c: n * t + rng.laplace(0.0, scale, t.shape) for c, t in truth[0].items()},
            {p: n * t + rng.laplace(0.0, scale, t.shape) for p, t in truth[1].items()})


def gaussian_36(truth: Marginals, n: int, epsilon: float, delta: float, rng: np.random.Generator) -> Marginals:
    sigma = zcdp_sigma(epsilon, delta, math.sqrt(len(PAIRS)))
    pairs = {p: n * t + rng.normal(0.0, sigma, t.shape) for p, t in truth[1].items()}
    ones = {c: np.mean([pairs[p].sum(axis=1 if p[0] == c else 0) for p in PAIRS if c in p], axis=0)
            for c in COLUMNS}
    return ones, pairs


def laplace_1way_product(truth: Marginals, n: int, epsilon: float, delta: float,
                         rng: np.random.Generator) -> Marginals:
    scale = len(COLUMNS) / epsilon
    ones = {c: normalized(n * t + rng.laplace(0.0, scale, t.shape)) for c, t in truth[0].items()}
    return ones, {p: np.outer(ones[p[0]], ones[p[1]]) for p in PAIRS}


BASELINES: Mapping[str, Callable[[Marginals, int, float, float, np.random.Generator], Marginals]] = {
    "laplace_45": laplace_45, "gaussian_36": gaussian_36, "laplace_1way_product": laplace_1way_product,
}


def measure(data: Dataset, epsilons: Sequence[float], seeds: Sequence[int], delta: float,
            release: bool = True) -> list[dict[str, object]]:
    """One row per (ε, method): the mean and range over ``seeds`` of the mean 1- and 2-way TVD."""
    truth, n = true_marginals(data), data.frame.height
    rows: list[dict[str, object]] = []
    for epsilon in epsilons:
        if release:
            runs = [run(data, adult("test"), epsilon, delta, seed, "default", None) for seed in seeds]
            two = [float(r["tvd_2way_mean"]) for r in runs]
            rows.append({"method": "crowdsafe release", "epsilon": epsilon,
                         "tvd_1way_mean": round(float(np.mean([float(r["tvd_1way_mean"]) for r in runs])), 5),
                         "tvd_2way_mean": round(float(np.mean(two)), 5),
                         "tvd_2way_range": [min(two), max(two)],
                         "empty_releases": sum(r["release_rows"] == 0 for r in runs)})
        for name, baseline in BASELINES.items():
            scores = [mean_tvd(truth, baseline(truth, n, epsilon, delta, np.random.default_rng(1000 + seed)))
                      for seed in seeds]
            two = [s[1] for s in scores]
            rows.append({"method": name, "epsilon": epsilon,
                         "tvd_1way_mean": round(float(np.mean([s[0] for s in scores])), 5),
                         "tvd_2way_mean": round(float(np.mean(two)), 5),
                         "tvd_2way_range": [round(min(two), 5), round(max(two), 5)]})
        for row in rows[-(len(BASELINES) + int(release)):]:
            print(f"eps={epsilon} {row['method']}: 1-way {row['tvd_1way_mean']:.3f}, 2-way {row['tvd_2way_mean']:.3f}",
                  file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.05, 0.1, 0.25, 0.5, 1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--delta", type=float, default=1e-6)
    args = parser.parse_args(argv)
    rows = measure(adult("train"), args.epsilons, args.seeds, args.delta)
    print(json.dumps({
        "benchmark": "dp_baselines",
        "description": "mean TVD of the 1-way and 2-way marginals of Adult's 8 quasi-identifiers and income: "
                       "crowdsafe's release (bench/marginals.py) and three plain DP answers at the same (eps, delta)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__},
        "parameters": {"epsilons": args.epsilons, "seeds": args.seeds, "delta": args.delta},
        "rows": rows,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
