"""How well each candidate score for the classification objective chooses; print JSON.

On one Bernoulli sample of Adult (train) under the publish plan at ε (default 1, δ = 1e-6, the
classification objective's planner), every node of the lattice with income kept at level 0 is
applied as the pipeline applies it (recode, suppress classes of the whole tuple under k), and the
release's lookup classifier (each generalized tuple predicts its majority income, the release's
majority elsewhere) is tested on Adult's test split. Then, for each candidate score, the expected
test accuracy of the exponential mechanism's choice, Σ_g P(g) · accuracy(g) with
P(g) ∝ exp(ε1 · q(S, g) / (m Δq)), at the plan's ε1:

- ``classification``: crowdsafe's score, max_y0 Σ_G [max_y t(c_Gy) + s(c_Gy0)] (Δ = 1, monotone);
- ``no_fallback``: Σ_G max_y c_Gy · min(c_Gy, k)/k (square ramp only; Δ = (2k − 1)/k, monotone);
- ``survivors_beyond_threshold``: Σ_G max_y t(c_Gy) (Δ = 1, monotone);
- ``exact_step``: the lookup classifier's exact accuracy on the sample (Δ = k, monotone).

The ceiling (the best node, chosen with the test set) and the share of nodes reaching 0.80 are
printed too. This measures the choice of score; it is not a privacy-preserving procedure.

Usage: python bench/selection_scores.py [--epsilon 1] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import numpy as np

from crowdsafe.anonymize.counted import counted
from crowdsafe.anonymize.publish import PlanRequest, plan_for_dataset, prepare_dataset
from crowdsafe.datasets import adult


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    train, test = adult("train"), adult("test")
    prepared, columns, _ = prepare_dataset(train)
    plan = plan_for_dataset(train, PlanRequest(args.epsilon, 1e-6, objective="classification", target="income"))
    k = plan.k
    full = counted(prepared, columns)
    kept = np.random.default_rng(args.seed).binomial(full.counts, plan.beta)
    codes, counts = full.codes[kept > 0], kept[kept > 0]
    target = columns.index("income")
    features = [j for j in range(len(columns)) if j != target]
    hierarchies = [prepared.hierarchies[c] for c in columns]
    grouped = test.frame.select(columns).group_by(columns).len()
    test_codes = np.column_stack([hierarchies[j].leaf_codes(grouped.get_column(c)).astype(np.int64)
                                  for j, c in enumerate(columns)])
    test_counts = grouped.get_column("len").to_numpy()

    def keys(table: np.ndarray, levels: tuple[int, ...]) -> np.ndarray:
        key = np.zeros(len(table), dtype=np.int64)
        for j, level in zip(features, levels):
            key = key * (hierarchies[j].size(level) + 1) + hierarchies[j].generalize(table[:, j], level).astype(np.int64)
        return key

    rows = []
    for levels in itertools.product(*[range(hierarchies[j].height + 1) for j in features]):
        group_key = keys(codes, levels) * 2 + codes[:, target]
        unique, inverse = np.unique(group_key, return_inverse=True)
        sizes = np.bincount(inverse, weights=counts).astype(np.int64)
        groups, labels = np.unique(unique // 2, return_inverse=True)
        table = np.zeros((len(groups), 2), dtype=np.int64)
        table[labels, unique % 2] = sizes
        published = table * (table >= k)
        fallback = int(published[:, 1].sum() > published[:, 0].sum())
        prediction = np.where(published.sum(1) == 0, fallback, (published[:, 1] > published[:, 0]).astype(int))
        test_key = keys(test_codes, levels)
        at = np.minimum(np.searchsorted(groups, test_key), len(groups) - 1)
        predicted = np.where(groups[at] == test_key, prediction[at], fallback)
        accuracy = float(((predicted == test_codes[:, target]) * test_counts).sum() / test_counts.sum())
        survivors = np.maximum(table - (k - 1), 0)
        below = np.minimum(table, k - 1)
        ramp = table * np.minimum(table, k)
        exact = (np.take_along_axis(published, prediction[:, None], 1).sum()
                 + np.where(published.sum(1) == 0, table[:, fallback], 0).sum())
        rows.append((accuracy,
                     survivors.max(1).sum() + below.sum(0).max(),
                     ramp.max(1).sum() / k,
                     survivors.max(1).sum(),
                     exact))
    data = np.array(rows, dtype=np.float64)
    accuracy = data[:, 0]
    scores = {"classification": (1, 1.0), "no_fallback": (2, (2 * k - 1) / k),
              "survivors_beyond_threshold": (3, 1.0), "exact_step": (4, float(k))}
    expected = {}
    for name, (column, sensitivity) in scores.items():
        exponent = plan.epsilon1 * data[:, column] / sensitivity  # all four are monotone: m = 1
        weights = np.exp(exponent - exponent.max())
        weights /= weights.sum()
        expected[name] = {"expected_accuracy": float(weights @ accuracy),
                          "probability_below_0_80": float(weights[accuracy < 0.8].sum())}
    print(json.dumps({
        "epsilon": args.epsilon, "seed": args.seed,
        "plan": {"k": k, "beta": plan.beta, "epsilon1": plan.epsilon1},
        "nodes": len(accuracy), "best_node_accuracy": float(accuracy.max()),
        "share_of_nodes_at_least_0_80": float((accuracy >= 0.8).mean()),
        "scores": expected, "seconds": time.perf_counter() - started,
    }, indent=2))
    print(f"{len(accuracy)} nodes in {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
