"""Benchmark of the exact Bernoulli mask and the exact binomial; prints JSON.

Jobs:
- a Bernoulli(p) mask over 10M rows, ``Randomness.bernoulli`` (exact for the float p: one 64-bit
  word per row compared with p's binary expansion), for p = 0.3, 0.001 and 1e-5 (below 2^-11 the
  words are also checked for ties with p's first 64 places);
- one Binomial(N, 0.001) draw for N = 2^40 and N = 2^64, ``mechanisms.binomial.binomial`` (exact
  for any N), the median over ``--draws`` draws.

Baselines (timed in the same run): the float comparison the mask replaced,
``generator.random(n) < p`` (probability ⌈p·2^53⌉/2^53); for the binomial, the float sampler
α-β used before (NumPy's ``Generator.binomial`` up to 2^32 trials, Beta order-statistic splits
above), reproduced here.

Usage: PYTHONPATH=src python bench/samplers.py [--rows 10000000] [--repeat 5] [--draws 200]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import numpy as np
from timing import best_of

from crowdsafe.mechanisms.binomial import binomial
from crowdsafe.randomness import Randomness

PROBABILITIES = (0.3, 0.001, 1e-5)
TRIALS = {"2^40": 2**40, "2^64": 2**64}
BINOMIAL_P = 0.001


def float_binomial(generator: np.random.Generator, trials: int, p: float) -> int:
    """The replaced sampler: NumPy's binomial up to 2^32 trials, Beta order-statistic splits above."""
    successes = 0
    while trials > 2**32:
        i = trials // 2 + 1
        y = float(generator.beta(float(i), float(trials - i + 1)))
        if y < p:
            successes, p, trials = successes + i, (p - y) / (1.0 - y), trials - i
        else:
            p, trials = p / y, i - 1
    return successes + int(generator.binomial(trials, p))


def median_seconds(draws: int, job) -> float:
    times = []
    for _ in range(draws):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs per mask; the best is reported")
    parser.add_argument("--draws", type=int, default=200, help="binomial draws; the median is reported")
    args = parser.parse_args()
    randomness = Randomness(seed=1)
    generator = randomness.generator
    randomness.bernoulli(1000, 0.3)  # warm up
    masks = {}
    for p in PROBABILITIES:
        exact, mask = best_of(args.repeat, lambda p=p: randomness.bernoulli(args.rows, p))
        floor, _ = best_of(args.repeat, lambda p=p: generator.random(args.rows) < p)
        masks[f"p={p:g}"] = {"seconds": exact, "baseline_float_comparison_seconds": floor,
                             "ratio": exact / floor, "kept_share": float(mask.mean())}
    binomial(generator, 2**64, BINOMIAL_P)  # warm up
    draws = {}
    for name, trials in TRIALS.items():
        exact = median_seconds(args.draws, lambda n=trials: binomial(generator, n, BINOMIAL_P))
        floor = median_seconds(args.draws, lambda n=trials: float_binomial(generator, n, BINOMIAL_P))
        draws[f"N={name}"] = {"seconds": exact, "baseline_float_sampler_seconds": floor, "ratio": exact / floor}
    report = {
        "benchmark": "exact samplers",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "rows": args.rows,
        "repeat": args.repeat,
        "bernoulli_mask": masks,
        "binomial_p": BINOMIAL_P,
        "binomial_draws": args.draws,
        "binomial": draws,
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
