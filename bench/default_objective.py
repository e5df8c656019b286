"""The default objective across ε on Adult (issue 36); print JSON.

For each ε, the plan's default objective (``objective=None``: ``marginals`` where its ε1 is not
held at the cap and every published column has a declared hierarchy, else ``retained``;
:func:`crowdsafe.anonymize.plan.default_objective`) and, beside it, the objective it did not
pick, each published five times (seeds 0-4) from Adult's train file as ``crowdsafe publish
adult`` plans it. Per release: the mean 2-way TVD against the train file, the share of the sample
suppressed and the test accuracy of the majority lookup trained on the release
(:func:`crowdsafe.experiments.marginal_ceiling.workload_comparison`). With ``--ceiling N``, the
lattice's best node at the default's plan at ε = 1 on N fresh samples (minutes each).

Usage: PYTHONPATH=src python bench/default_objective.py [--epsilons 0.1 0.25 ...] [--seeds 5]
       [--ceiling 2] > bench/results/default_objective.json
       python bench/default_objective.py --markdown bench/results/default_objective.json
(the second prints docs/publish.md's table from a saved run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
from datetime import UTC, datetime
from typing import Any

from crowdsafe.datasets import adult
from crowdsafe.experiments.marginal_ceiling import workload_comparison

EPSILONS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean, min and max of the releases' TVD, suppression and accuracy (NaN: income generalized)."""
    tvd = [r["tvd"] for r in rows]
    suppressed = [r["suppression_rate"] for r in rows]
    accuracy = [r["accuracy"] for r in rows if "accuracy" in r and not math.isnan(r["accuracy"])]
    first = rows[0]
    return {
        "objective": first["objective"], "requested": first["requested"],
        "k": first["k"], "beta": first["beta"], "epsilon1": first["epsilon1"],
        "tvd_mean": statistics.mean(tvd), "tvd_min": min(tvd), "tvd_max": max(tvd),
        "suppressed_mean": statistics.mean(suppressed), "suppressed_max": max(suppressed),
        "accuracy_mean": statistics.mean(accuracy) if accuracy else None,
        "accuracy_min": min(accuracy) if accuracy else None, "accuracy_max": max(accuracy) if accuracy else None,
        "no_target": len(rows) - len(accuracy),
        "nodes": [r["node"] for r in rows],
    }


def _cell(entry: dict[str, Any]) -> list[str]:
    accuracy = "income generalized" if entry["accuracy_mean"] is None else \
        f"{entry['accuracy_mean']:.3f} ({entry['accuracy_min']:.3f}–{entry['accuracy_max']:.3f})"
    if entry["no_target"] and entry["accuracy_mean"] is not None:
        accuracy += f", {entry['no_target']}/{len(entry['nodes'])} no income"
    return [f"`{entry['objective']}`", f"{entry['k']}, {entry['beta']:.3f}, {entry['epsilon1']:.3f}",
            f"{entry['tvd_mean']:.3f} ({entry['tvd_min']:.3f}–{entry['tvd_max']:.3f})",
            f"{entry['suppressed_mean']:.0%} ({entry['suppressed_max']:.0%})", accuracy]


def markdown(saved: dict[str, Any]) -> str:
    """docs/publish.md's table: per ε, the default objective's row, then the other objective's."""
    lines = ["| ε | | objective | k, β, ε1 | mean 2-way TVD (min–max) | suppressed, mean (max) | "
             "income accuracy, mean (min–max) |", "|---|---|---|---|---|---|---|"]
    for result in saved["results"]:
        for label, entry in (("**default**", result["default"]), ("beside it", result["other"])):
            lines.append("| " + " | ".join([f"{result['epsilon']:g}", label, *_cell(entry)]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--ceiling", type=int, default=0, help="samples for the lattice's best node at epsilon 1")
    parser.add_argument("--markdown", metavar="JSON", help="print the docs table of a saved run and stop")
    args = parser.parse_args()
    if args.markdown:
        with open(args.markdown, encoding="utf-8") as saved:
            print(markdown(json.load(saved)))
        return
    train, test = adult("train"), adult("test")
    results = []
    for epsilon in args.epsilons:
        rows = workload_comparison(train, epsilon, seeds=args.seeds, objectives=(None,), ceiling_seeds=0, test=test)
        default = summary(rows)
        other = "retained" if default["objective"] == "marginals" else "marginals"
        beside = summary(workload_comparison(train, epsilon, seeds=args.seeds, objectives=(other,), ceiling_seeds=0,
                                             test=test))
        entry = {"epsilon": epsilon, "default": default, "other": beside}
        results.append(entry)
        print(json.dumps({"epsilon": epsilon, "default": default["objective"],
                          "tvd": round(default["tvd_mean"], 3), "suppressed_max": round(default["suppressed_max"], 3)}),
              file=sys.stderr)
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
