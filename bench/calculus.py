"""Benchmark of the privacy calculus; prints JSON.

Jobs (targets: under 0.2 s each):
- the 18-cell table δ = d(20, β, ε), β ∈ {0.05, 0.1, 0.2} × ε ∈ {0.25, 0.5, 0.75, 1, 1.5, 2};
- the smallest k for ε ∈ [0.1, 2] in 20 steps (β = 0.05, δ = 1e-6).

Baseline (the floor, timed in the same run): a naive SciPy evaluation of the same quantities,
max over a fixed window of n of ``scipy.stats.binom.sf`` (no Chernoff stop, linear space), and for
the solver a linear scan over k with that naive d. The report also gives the largest relative
difference between the two evaluations, as a sanity check.

Usage: PYTHONPATH=src python bench/calculus.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time

import numpy as np
from scipy.stats import binom

from crowdsafe.privacy import dps_delta, smallest_k

BETAS = (0.05, 0.1, 0.2)
EPSILONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
K_TABLE = 20
SOLVE_EPSILONS = np.linspace(0.1, 2.0, 20)
SOLVE_BETA, SOLVE_DELTA = 0.05, 1e-6
NAIVE_WINDOW = 1000  # n from n_m to n_m + 1000, a fixed window instead of a proven stop
TARGET_SECONDS = 0.2


def naive_d(k: int, beta: float, epsilon: float) -> float:
    gamma = (math.exp(epsilon) - 1 + beta) / math.exp(epsilon)
    n_min = max(1, math.ceil(k / gamma - 1))
    n = np.arange(n_min, n_min + NAIVE_WINDOW)
    return float(binom.sf(np.floor(gamma * n), n, beta).max())


def naive_smallest_k(epsilon: float, delta: float, beta: float) -> int:
    k = 1
    while naive_d(k, beta, epsilon) > delta:
        k += 1
    return k


def timed(job, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per job; the median is reported")
    args = parser.parse_args()

    # Warm up imports and caches so that no job pays for them.
    dps_delta(K_TABLE, 0.1, 1.0)
    naive_d(K_TABLE, 0.1, 1.0)
    smallest_k(1.0, SOLVE_DELTA, SOLVE_BETA)

    def table():
        return [dps_delta(K_TABLE, b, e) for b in BETAS for e in EPSILONS]

    def naive_table():
        return [naive_d(K_TABLE, b, e) for b in BETAS for e in EPSILONS]

    def solve():
        return [smallest_k(float(e), SOLVE_DELTA, SOLVE_BETA).k for e in SOLVE_EPSILONS]

    def naive_solve():
        return [naive_smallest_k(float(e), SOLVE_DELTA, SOLVE_BETA) for e in SOLVE_EPSILONS]

    t_table, ours = timed(table, args.repeat)
    t_naive_table, theirs = timed(naive_table, args.repeat)
    t_solve, ks = timed(solve, args.repeat)
    t_naive_solve, naive_ks = timed(naive_solve, max(1, args.repeat // 2))
    rel = max(abs(a / b - 1) for a, b in zip(ours, theirs) if b > 0)
    report = {
        "benchmark": "privacy calculus",
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "repeat": args.repeat,
        "target_seconds": TARGET_SECONDS,
        "delta_table": {
            "cells": len(ours),
            "k": K_TABLE,
            "seconds": t_table,
            "within_target": t_table < TARGET_SECONDS,
            "baseline_naive_scipy_seconds": t_naive_table,
            "max_relative_difference_vs_baseline": rel,
            "deltas": {f"beta={b:g},epsilon={e:g}": d
                       for (b, e), d in zip(((b, e) for b in BETAS for e in EPSILONS), ours)},
        },
        "solve_k": {
            "epsilons": [round(float(e), 6) for e in SOLVE_EPSILONS],
            "beta": SOLVE_BETA,
            "delta": SOLVE_DELTA,
            "seconds": t_solve,
            "within_target": t_solve < TARGET_SECONDS,
            "baseline_naive_scipy_linear_scan_seconds": t_naive_solve,
            "k": ks,
            "baseline_k_agree": ks == naive_ks,
        },
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
