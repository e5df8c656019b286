"""crowdsafe's release of Adult on the marginal workload of the DP synthetic data (issue 36); print JSON.

Published DP synthetic data (MST, AIM; bench/peers/synthetic.py) is judged on a workload of
marginals, so the certified release is measured the same way: for each ε (default 0.5, 1, 2;
δ = 1e-6), seed (0-2) and objective (default: the planner's default and ``classification``
with target income; ``--objective NAME`` measures others), Adult's training split is published
the way ``crowdsafe publish adult`` publishes it (``plan_for_dataset`` then ``publish_dataset``;
published columns: the eight quasi-identifiers and income) and the release is compared with the
training split by :func:`crowdsafe.metrics.marginal_distances`: the total variation distance
TVD = ½ Σ |p − q| of every 1-way and 2-way marginal of the nine columns, each normalized to a
probability distribution over the original values (the hierarchies' leaves: age per year
17..90, '?' its own value where the training split has one). A generalized cell is spread
uniformly over the leaves it covers; suppressed rows are simply absent. bench/peers/marginal_tvd.py
computes the same for the peers without crowdsafe (tests/bench/test_marginals.py checks that
both agree).

Beside each release: its test accuracy on adult.test (logistic regression and decision tree
trained on the release, :func:`crowdsafe.metrics.release_accuracy`; null when the release
generalizes income) and its time (plan, and publish_dataset without writing). The same TVDs are
computed for two references: a true 30% Bernoulli sample of the training split (seeds 0-2, the
rows bench/peers draws) and a table of '*' in every column; they calibrate the scale.

Usage: PYTHONPATH=src python bench/marginals.py [--epsilons 0.5 1 2] [--seeds 0 1 2]
       [--objective default --objective classification] [--target income]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime

import numpy as np
import polars as pl

from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_for_dataset, publish_dataset
from crowdsafe.data import Dataset
from crowdsafe.datasets import adult
from crowdsafe.errors import ParameterError
from crowdsafe.metrics import marginal_distances, release_accuracy
from crowdsafe.randomness import Randomness

COLUMNS = ("age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country",
           "income")
TARGET = "income"
DEFAULT = "default"  # the planner's default objective (objective=None)


def tvd(original: Dataset, release: pl.DataFrame) -> dict[str, object]:
    """Mean 1- and 2-way TVD of ``release`` against ``original`` over COLUMNS (and per marginal)."""
    report = marginal_distances(original, release.select(COLUMNS), list(COLUMNS))
    twos = {" x ".join(m.attributes): m.total_variation for m in report.two_way}
    worst = max(twos, key=twos.get)
    return {
        "tvd_1way_mean": round(float(np.mean([m.total_variation for m in report.one_way])), 5),
        "tvd_2way_mean": round(float(np.mean(list(twos.values()))), 5),
        "tvd_2way_max": round(twos[worst], 5),
        "tvd_2way_worst": worst,
        "tvd_1way": {m.attributes[0]: round(m.total_variation, 5) for m in report.one_way},
        "tvd_2way": {k: round(v, 5) for k, v in twos.items()},
    }


def accuracy(original: Dataset, release: pl.DataFrame, test: Dataset, model: str) -> float | None:
    try:
        return round(release_accuracy(original, release, test, TARGET, features=list(COLUMNS[:-1]), model=model), 4)
    except ParameterError:  # the release generalizes income
        return None


def run(data: Dataset, test: Dataset, epsilon: float, delta: float, seed: int, objective: str,
        target: str | None) -> dict[str, object]:
    started = time.perf_counter()
    plan = plan_for_dataset(data, PlanRequest(epsilon, delta, objective=None if objective == DEFAULT else objective,
                                              target=target))
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    publication = publish_dataset(data, plan, RunOptions(report=False), randomness=Randomness(seed))
    publish_seconds = time.perf_counter() - started
    release = publication.release.frame
    summary = publication.summary()
    return {
        "method": f"crowdsafe {objective}",
        "objective": plan.objective,
        "target": plan.target,
        "epsilon": epsilon,
        "delta": delta,
        "seed": seed,
        "k": plan.k,
        "beta": round(plan.beta, 5),
        "epsilon1": round(plan.epsilon1, 5),
        "scheme": summary["releases"][0]["dp_output"].get("scheme") if summary.get("releases") else None,
        "release_rows": release.height,
        "accuracy_logistic": accuracy(data, release, test, "logistic"),
        "accuracy_tree": accuracy(data, release, test, "tree"),
        "seconds_plan": round(plan_seconds, 3),
        "seconds_publish": round(publish_seconds, 3),
        "seconds": round(plan_seconds + publish_seconds, 3),
        **tvd(data, release),
    }


def references(data: Dataset, test: Dataset, seeds: list[int]) -> list[dict[str, object]]:
    """A true 30% Bernoulli sample of the training split (numpy's default_rng(seed), the rows
    bench/peers/synthetic.py draws) and a table of '*'."""
    frame = data.frame.select(COLUMNS)
    out = []
    for seed in seeds:
        keep = np.random.default_rng(seed).random(frame.height) < 0.3
        sample = frame.filter(pl.Series(keep))
        out.append({"reference": "sample 30%", "seed": seed, "rows": sample.height,
                    "accuracy_logistic": accuracy(data, sample, test, "logistic"),
                    "accuracy_tree": accuracy(data, sample, test, "tree"), **tvd(data, sample)})
    stars = pl.DataFrame({c: ["*"] * frame.height for c in COLUMNS})
    out.append({"reference": "all *", "seed": None, "rows": stars.height, **tvd(data, stars)})
    return out


def summarize(rows: list[dict[str, object]], key: str) -> list[dict[str, object]]:
    """Mean, min, max of the TVDs and accuracies (and mean seconds) per (key, ε)."""
    groups = dict.fromkeys((r[key], r.get("epsilon")) for r in rows)
    out = []
    for name, eps in groups:
        sel = [r for r in rows if r[key] == name and r.get("epsilon") == eps]
        entry: dict[str, object] = {key: name, "epsilon": eps, "runs": len(sel)}
        for field in ("tvd_2way_mean", "tvd_1way_mean", "accuracy_logistic", "accuracy_tree", "seconds"):
            values = [float(r[field]) for r in sel if r.get(field) is not None]
            if values:
                entry[f"{field}_mean" if not field.endswith("_mean") else field] = round(float(np.mean(values)), 5)
        tv = [float(r["tvd_2way_mean"]) for r in sel]
        entry["tvd_2way_min"], entry["tvd_2way_max"] = round(min(tv), 5), round(max(tv), 5)
        out.append(entry)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--objective", action="append", default=None,
                        help=f"a selection objective ('{DEFAULT}': the planner's default); repeat for several "
                             f"(default: {DEFAULT} and classification)")
    parser.add_argument("--target", default=None,
                        help="target column given to every objective (default: income for classification only)")
    parser.add_argument("--reference-seeds", type=int, nargs="*", default=[0, 1, 2],
                        help="seeds of the 30%% samples ('--reference-seeds' alone: no reference rows)")
    args = parser.parse_args(argv)
    objectives = args.objective or [DEFAULT, "classification"]

    data, test = adult("train"), adult("test")
    refs = references(data, test, args.reference_seeds) if args.reference_seeds else []
    for ref in refs:
        print(f"{ref['reference']} seed={ref['seed']}: 2-way TVD {ref['tvd_2way_mean']:.4f}", file=sys.stderr)
    runs = []
    for objective in objectives:
        target = args.target or (TARGET if objective == "classification" else None)
        for eps in args.epsilons:
            for seed in args.seeds:
                entry = run(data, test, eps, args.delta, seed, objective, target)
                runs.append(entry)
                print(f"{entry['method']} eps={eps} seed={seed}: 2-way TVD {entry['tvd_2way_mean']:.4f}, "
                      f"logistic {entry['accuracy_logistic']}, {entry['seconds']:.2f} s", file=sys.stderr)
    print(json.dumps({
        "benchmark": "marginals",
        "description": "crowdsafe's certified release of Adult (train split) on issue 36's marginal workload: mean "
                       "TVD over the 36 2-way (9 1-way) marginals of the 8 quasi-identifiers and income against "
                       "the training split (crowdsafe.metrics.marginal_distances: cells spread uniformly over the "
                       "leaves they cover, suppressed rows absent, each marginal normalized); test accuracy on "
                       "adult.test of a logistic regression and a tree trained on the release; seconds: plan + "
                       "publish_dataset (nothing written)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__},
        "parameters": {"epsilons": args.epsilons, "seeds": args.seeds, "delta": args.delta,
                       "objectives": objectives, "target": args.target},
        "runs": runs,
        "summary": summarize(runs, "method"),
        "references": refs,
        "references_summary": summarize(refs, "reference") if refs else [],
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
