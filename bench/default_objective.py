"""The default objective across ε on Adult (issue 36); print JSON.

For each ε, the plan's default objective (``objective=None``;
:func:`crowdsafe.anonymize.plan.default_objective`: ``marginals`` where its ε1 is not held at the
cap or the choice reads the table, its choice's 95% bound is at most
``MARGINALS_RESOLUTION_ROWS`` rows per marginal and every published column has a declared
hierarchy, else ``retained``) and both objectives, ``marginals`` and ``retained``, each published
``--seeds`` times (seeds 0, 1, ...) from Adult's train file as ``crowdsafe publish adult`` plans
it. Per release: the mean 2-way TVD against the train file (1 for an empty release), the share of
the sample suppressed and the test accuracy of the majority lookup trained on the release
(:func:`crowdsafe.experiments.marginal_ceiling.workload_comparison`); per objective the number of
empty releases, and for ``marginals`` its choice's bound in rows per marginal. With
``--baselines N``, on N seeds, what ``crowdsafe query`` answers at the same ε with δ = 0: nine DP
1-way histograms taken as independent (:func:`histogram_baseline`, the same TVD) and a naive
Bayes on eight DP 2-way histograms with income (:func:`naive_bayes_baseline`, test accuracy).
With ``--ceiling N``, the lattice's best node at the default's plan at ε = 1 on N fresh samples
(minutes each).

Usage: PYTHONPATH=src python bench/default_objective.py [--epsilons 0.1 0.25 ...] [--seeds 5]
       [--baselines 5] [--ceiling 2] > bench/results/default_objective.json
       python bench/default_objective.py --markdown bench/results/default_objective.json
(the second prints docs/publish.md's table from a saved run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import statistics
import sys
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

import crowdsafe
from crowdsafe.anonymize.objective_rules import marginals_resolution
from crowdsafe.anonymize.publish import PlanRequest, plan_for_dataset, prepare_dataset
from crowdsafe.data import Dataset
from crowdsafe.data.generalized import AttributeDomain, CellTable
from crowdsafe.datasets import adult
from crowdsafe.experiments.marginal_ceiling import workload_comparison
from crowdsafe.metrics.marginals import distance, mass_name, spread_marginal

EPSILONS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean, min and max of the releases' TVD, suppression and accuracy (NaN: income generalized),
    and how many releases are empty (everything suppressed: TVD 1; left out of the accuracy)."""
    tvd = [r["tvd"] for r in rows]
    suppressed = [r["suppression_rate"] for r in rows]
    published = [r for r in rows if r["suppression_rate"] < 1.0]  # an empty release predicts nothing
    accuracy = [r["accuracy"] for r in published if "accuracy" in r and not math.isnan(r["accuracy"])]
    first = rows[0]
    return {
        "objective": first["objective"], "requested": first["requested"],
        "k": first["k"], "beta": first["beta"], "epsilon1": first["epsilon1"],
        "tvd_mean": statistics.mean(tvd), "tvd_min": min(tvd), "tvd_max": max(tvd),
        "suppressed_mean": statistics.mean(suppressed), "suppressed_max": max(suppressed),
        "empty": sum(rate >= 1.0 for rate in suppressed), "releases": len(rows),
        "accuracy_mean": statistics.mean(accuracy) if accuracy else None,
        "accuracy_min": min(accuracy) if accuracy else None, "accuracy_max": max(accuracy) if accuracy else None,
        "no_target": len(published) - len(accuracy),
        "nodes": [r["node"] for r in rows],
    }


def _as_codes(values: pl.Series, original: Dataset, column: str) -> np.ndarray:
    """The original's codes of ``values`` (a histogram's values, in the domain of ``column``)."""
    labels = AttributeDomain.of(original, column).identity_cover().labels
    codes = pl.DataFrame({"value": pl.Series(labels).cast(pl.String), "code": np.arange(len(labels))})
    found = pl.DataFrame({"value": values.cast(pl.String)}).with_row_index("at").join(
        codes, on="value", how="left", nulls_equal=True).sort("at")
    if found.get_column("code").null_count():
        raise ValueError(f"{column}: a histogram value outside the table's domain")
    return found.get_column("code").to_numpy()


def histogram_baseline(original: Dataset, epsilon: float, seed: int, columns: list[str]) -> float:
    """The mean 2-way TVD (:func:`crowdsafe.metrics.marginal_distances`' measure) of nine DP 1-way
    histograms taken as independent: ``crowdsafe query "histogram C"`` on each published column at
    ε/d (discrete Laplace, δ = 0; randomness seed·100 + column index), each clipped at 0 and
    normalized, every pair's marginal the product of its two."""
    shares = {}
    for i, column in enumerate(columns):
        answer = crowdsafe.query(original, f"histogram `{column}`", epsilon=epsilon / len(columns),
                                 randomness=seed * 100 + i, ledger=None).value
        counts = np.clip(answer.get_column("count").to_numpy().astype(np.float64), 0.0, None)
        share = counts / counts.sum() if counts.sum() > 0 else np.full(len(counts), 1.0 / len(counts))
        shares[column] = (_as_codes(answer.get_column(column), original, column), share)
    truth = CellTable.of_original(original, columns)
    tvds = []
    for a, b in itertools.combinations(columns, 2):
        (codes_a, share_a), (codes_b, share_b) = shares[a], shares[b]
        product = pl.DataFrame({a: np.repeat(codes_a, len(codes_b)), b: np.tile(codes_b, len(codes_a)),
                                mass_name([a, b]): np.outer(share_a, share_b).ravel()})
        tvds.append(distance(spread_marginal(truth, [a, b]), product, [a, b]).total_variation)
    return float(np.mean(tvds))


def naive_bayes_baseline(original: Dataset, test: Dataset, epsilon: float, seed: int, features: list[str],
                         target: str = "income") -> float:
    """Test accuracy of a naive Bayes on ``crowdsafe query "histogram C, income"`` for each feature
    at ε/d (δ = 0; randomness seed·100 + feature index): each count clipped at 0 plus one (add-one
    smoothing), the class prior from the first table's income totals."""
    frame = test.frame.select([*features, target])
    labels: list[Any] = []
    scores: np.ndarray | None = None
    for i, column in enumerate(features):
        answer = crowdsafe.query(original, f"histogram `{column}`, `{target}`", epsilon=epsilon / len(features),
                                 randomness=seed * 100 + i, ledger=None).value
        table = answer.with_columns((pl.col("count").clip(lower_bound=0) + 1).cast(pl.Float64))
        if not labels:
            labels = table.get_column(target).unique(maintain_order=True).to_list()
            totals = table.group_by(target).agg(pl.col("count").sum())
            prior = {y: n for y, n in totals.iter_rows()}
            scores = np.log(np.array([[prior[y] for y in labels]], dtype=np.float64)).repeat(frame.height, axis=0)
        totals = dict(table.group_by(target).agg(pl.col("count").sum()).iter_rows())
        for j, label in enumerate(labels):
            cells = table.filter(pl.col(target) == label).select(
                pl.col(column).cast(pl.String), (pl.col("count") / totals[label]).log().alias("log"))
            joined = frame.select(pl.col(column).cast(pl.String)).with_row_index("at").join(
                cells, on=column, how="left", nulls_equal=True).sort("at")
            assert scores is not None
            scores[:, j] += joined.get_column("log").fill_null(math.log(1.0 / totals[label])).to_numpy()
    assert scores is not None
    predicted = np.array(labels, dtype=object)[scores.argmax(axis=1)]
    return float(np.mean(predicted == frame.get_column(target).to_numpy()))


def _spread(values: list[float]) -> str:
    return f"{statistics.mean(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def _cell(entry: dict[str, Any]) -> list[str]:
    accuracy = "none published" if entry.get("empty") == entry.get("releases") else \
        "income generalized" if entry["accuracy_mean"] is None else \
        f"{entry['accuracy_mean']:.3f} ({entry['accuracy_min']:.3f}–{entry['accuracy_max']:.3f})"
    if entry["no_target"] and entry["accuracy_mean"] is not None:
        accuracy += f", {entry['no_target']}/{len(entry['nodes'])} no income"
    if entry.get("empty") and entry["accuracy_mean"] is not None:
        accuracy += f", {entry['empty']} empty left out"
    plan = f"{entry['k']}, {entry['beta']:.4f}, {entry['epsilon1']:.4f}"
    if "bound" in entry:  # marginals: its choice's 95% bound, rows per marginal
        plan += f" (bound {entry['bound']:,.0f})"
    return [f"`{entry['objective']}`", plan,
            f"{entry['empty']}/{entry['releases']}",
            f"{entry['tvd_mean']:.3f} ({entry['tvd_min']:.3f}–{entry['tvd_max']:.3f})",
            f"{entry['suppressed_mean']:.0%} ({entry['suppressed_max']:.0%})", accuracy]


def markdown(saved: dict[str, Any]) -> str:
    """docs/publish.md's table: per ε, the default objective's row, the other objective's, and
    (when measured) the DP histograms' row."""
    lines = ["| ε | | method | k, β, ε1 | empty releases | mean 2-way TVD (min–max) | suppressed, mean (max) | "
             "income accuracy, mean (min–max) |", "|---|---|---|---|---|---|---|---|"]
    for result in saved["results"]:
        default = result["default"]
        other = "retained" if default == "marginals" else "marginals"
        for label, name in (("**default**", default), ("beside it", other)):
            lines.append("| " + " | ".join([f"{result['epsilon']:g}", label, *_cell(result[name])]) + " |")
        baseline = result.get("histograms")
        if baseline:
            accuracy = _spread(baseline["naive_bayes"]) + " (naive Bayes)" if baseline.get("naive_bayes") else ""
            lines.append("| " + " | ".join([
                f"{result['epsilon']:g}", "DP histograms", "`crowdsafe query`, ε/9 per column, δ = 0", "",
                "", _spread(baseline["tvd"]), "", accuracy]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--baselines", type=int, default=0,
                        help="seeds of the DP-histogram baselines (crowdsafe query) at each epsilon")
    parser.add_argument("--ceiling", type=int, default=0, help="samples for the lattice's best node at epsilon 1")
    parser.add_argument("--markdown", metavar="JSON", help="print the docs table of a saved run and stop")
    args = parser.parse_args()
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as saved:
            print(markdown(json.load(saved)))
        return
    train, test = adult("train"), adult("test")
    _, columns, _ = prepare_dataset(train)
    features = [c for c in columns if c != "income"]
    results = []
    for epsilon in args.epsilons:
        plan = plan_for_dataset(train, PlanRequest(epsilon, 1e-6))
        entry: dict[str, Any] = {"epsilon": epsilon, "default": plan.objective, "rule": plan.objective_rule,
                                 "candidates": plan.candidates}
        for objective in ("marginals", "retained"):
            entry[objective] = summary(workload_comparison(train, epsilon, seeds=args.seeds, objectives=(objective,),
                                                           ceiling_seeds=0, test=test))
        entry["marginals"]["bound"] = marginals_resolution(entry["marginals"]["epsilon1"], plan.candidates)
        if args.baselines:
            entry["histograms"] = {
                "tvd": [histogram_baseline(train, epsilon, seed, columns) for seed in range(args.baselines)],
                "naive_bayes": [naive_bayes_baseline(train, test, epsilon, seed, features)
                                for seed in range(args.baselines)]}
        results.append(entry)
        print(json.dumps({"epsilon": epsilon, "default": plan.objective,
                          **{o: [round(entry[o]["tvd_mean"], 3), entry[o]["empty"]] for o in ("marginals", "retained")},
                          "histograms": round(statistics.mean(entry["histograms"]["tvd"]), 3) if args.baselines
                          else None}), file=sys.stderr)
    ceiling = None
    if args.ceiling:
        rows = workload_comparison(train, 1.0, seeds=0, objectives=(None,), ceiling_seeds=args.ceiling)
        ceiling = [{"tvd": r["tvd"], "suppression_rate": r["suppression_rate"], "node": r["node"],
                    "objective": r["objective"], "k": r["k"], "beta": r["beta"]} for r in rows]
    print(json.dumps({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "seeds": args.seeds, "results": results, "ceiling_at_epsilon_1": ceiling,
    }, indent=1))


if __name__ == "__main__":
    main()
