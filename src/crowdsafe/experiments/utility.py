"""Utility of safe publishing on Adult against classic k-anonymization at the same k.

For a grid of (ε, δ), the publish planner gives k (and β, ε1); the release is made by
``crowdsafe.publish`` (sampling + ε1-safe scheme), and Mondrian and the optimal full-domain
lattice search (suppression limit 10%) are run on the full data at the same k. For each:

- suppression rate (of the rows each method started from: the sample for publish);
- NCP (GCP) of the quasi-identifiers (:func:`crowdsafe.metrics.information_loss`);
- workload error: mean relative error of the metrics module's reproducible random workload of
  counting queries over up to three quasi-identifiers (:func:`crowdsafe.metrics.workload_error`:
  a generalized cell's rows spread evenly over the values it covers), scaled by 1/β for a sampled
  release;
- classifier accuracy: a logistic regression predicting income from the quasi-identifiers,
  trained on the release and tested on Adult's test split
  (:func:`crowdsafe.metrics.classifier_utility`), next to the majority-class baseline; NaN where
  a release generalizes income itself.

Publish pays for its guarantee with sampling (fewer rows) and with a scheme it cannot fit to the
data; the classic methods pay nothing and guarantee nothing.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.experiments.registry import ExperimentContext, experiment

EPSILONS = (0.5, 1.0, 2.0, 4.0)
DELTAS = (1e-6, 1e-4)
TARGET = "income"
LATTICE_SUPPRESSION = 0.1
WORKLOAD_QUERIES = 1000


def workload_error(release: pl.DataFrame, original: Dataset, columns: list[str], scale: float) -> float:
    """Mean relative error of the shared random workload (:func:`crowdsafe.metrics.workload_error`),
    each published count scaled by ``scale`` (1/β for a sampled release)."""
    from crowdsafe.metrics import workload_error as shared_workload_error

    return shared_workload_error(original, release, columns, queries=WORKLOAD_QUERIES, seed=0,
                                 scale=scale).mean_relative_error


def classifier_accuracy(release: pl.DataFrame, original: Dataset, test: Dataset, columns: list[str]) -> float:
    """Test accuracy of a logistic regression trained on the release
    (:func:`crowdsafe.metrics.classifier_utility`); NaN when the release generalizes the target."""
    from crowdsafe.errors import ParameterError
    from crowdsafe.metrics import classifier_utility

    try:
        return classifier_utility(original, release, test, TARGET, features=columns).accuracy_release
    except ParameterError:
        return float("nan")


@experiment("utility", "Utility on Adult: safe publish vs Mondrian vs optimal lattice at the same k, over (epsilon, delta)")
def utility(ctx: ExperimentContext) -> None:
    from matplotlib.figure import Figure

    from crowdsafe.anonymize import anonymize_dataset
    from crowdsafe.anonymize.publish import plan_publication, publish_dataset
    from crowdsafe.datasets import adult

    data, test = adult("train"), adult("test")
    qis = data.quasi_identifiers
    truth = test.frame.get_column(TARGET).cast(pl.String).str.strip_chars(".").to_numpy()
    baseline = float(max(np.mean(truth == v) for v in np.unique(truth)))
    table: dict[str, list] = {key: [] for key in ("epsilon", "delta", "k", "beta", "method", "rows_published",
                                                  "suppression_rate", "ncp", "workload_error",
                                                  "classifier_accuracy", "guarantee")}
    classic_cache: dict[int, dict[str, tuple]] = {}
    streams = iter(ctx.randomness.spawn(len(EPSILONS) * len(DELTAS)))
    for epsilon in EPSILONS:
        for delta in DELTAS:
            plan = plan_publication(epsilon, delta)
            pub = publish_dataset(data, plan, randomness=next(streams), force=True)
            # the sample does not leave the run: its exact facts come from the custodian report
            facts = pub.custodian_report()["releases"][0]
            methods = [("publish", pub.release, facts["suppression_rate"],
                        facts["utility"]["ncp"] if pub.release.rows_published else 1.0,
                        1.0 / plan.beta, pub.certificate.summary())]
            if plan.k not in classic_cache:
                classic_cache[plan.k] = {
                    "Mondrian": anonymize_dataset(data, "mondrian", plan.k),
                    "optimal lattice": anonymize_dataset(data, "lattice", plan.k, suppression_limit=LATTICE_SUPPRESSION),
                }
            for name, classic in classic_cache[plan.k].items():
                ncp = classic.utility().gcp if classic.rows_published else 1.0
                methods.append((name, classic, classic.rows_suppressed / classic.rows_in, ncp, 1.0,
                                classic.certificate.summary()))
            for name, made, suppression_rate, ncp, scale, guarantee in methods:
                table["epsilon"].append(epsilon)
                table["delta"].append(delta)
                table["k"].append(plan.k)
                table["beta"].append(plan.beta if name == "publish" else 1.0)
                table["method"].append(name)
                table["rows_published"].append(made.rows_published)
                table["suppression_rate"].append(suppression_rate)
                table["ncp"].append(ncp)
                table["workload_error"].append(workload_error(made.frame, data, qis, scale))
                table["classifier_accuracy"].append(classifier_accuracy(made.frame, data, test, qis))
                table["guarantee"].append(guarantee)
    ctx.csv("utility", table)
    frame = pl.DataFrame(table)
    figure = Figure(figsize=(12, 3.8))
    panels = [("suppression_rate", "suppression rate"), ("ncp", "NCP (0 = exact)"),
              ("workload_error", "count workload (1-3 attributes): mean rel. error"), ("classifier_accuracy", "income accuracy (test)")]
    colours = {"publish": "#28b463", "Mondrian": "#c0392b", "optimal lattice": "#2e86c1"}
    for i, (metric, label) in enumerate(panels):
        ax = figure.add_subplot(1, 4, i + 1)
        for method, colour in colours.items():
            for delta, style in zip(DELTAS, ("-", "--")):
                part = frame.filter((pl.col("method") == method) & (pl.col("delta") == delta)).sort("epsilon")
                ax.plot(part["epsilon"], part[metric], style, marker="o", color=colour,
                        label=f"{method}, δ={delta:g}" if i == 0 else None)
        if metric == "classifier_accuracy":
            ax.axhline(baseline, color="grey", linewidth=1, linestyle=":")
            ax.text(EPSILONS[0], baseline, "majority class", fontsize=7, va="bottom")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ε (k from the publish plan)")
        ax.set_title(label, fontsize=9)
    figure.legend(loc="lower center", ncol=6, fontsize=7)
    figure.subplots_adjust(bottom=0.28, wspace=0.35)
    ctx.png("utility_vs_epsilon", figure)
    ctx.summary.update(majority_baseline=baseline, rows=frame.height)
