"""The non-composition of differential privacy under sampling (Li, Qardaji and Su 2012).

Two mechanisms run on one Bernoulli sample (rate 1/2) of D (10,000 tuples, half male, half
female) or of D' = D plus one male tuple t: A1 = r(T) XOR s(T) (more males than females, XOR t
sampled; false for samples under 1,000 tuples) and A2 = the noisy share of males (ε-DP). Each
alone looks private (its output events have about the same probability under D and D'); the
event "A2 ≥ 1/2 and A1 = false" has probability ≈ 0 under D and ≈ 1/4 under D'. Computed by
:func:`crowdsafe.attacks.noncomposition.non_composition`; the runs are one vector.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from crowdsafe.attacks.noncomposition import non_composition
from crowdsafe.experiments.registry import ExperimentContext, experiment

RUNS = 400_000
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0)
MAIN_EPSILON = 1.0


@experiment("non-composition",
            "DP under sampling does not compose: two private mechanisms on one sample reveal a tuple")
def non_composition_experiment(ctx: ExperimentContext) -> None:
    streams = ctx.randomness.spawn(len(EPSILONS))
    results = {eps: non_composition(epsilon=eps, runs=RUNS, randomness=stream)
               for eps, stream in zip(EPSILONS, streams)}
    columns: dict[str, list] = {k: [] for k in ("epsilon", "event", "dataset", "estimate", "ci_low", "ci_high",
                                                "hits", "runs", "epsilon_lower_bound")}
    for eps, result in results.items():
        for row in result["events"]:
            for dataset in ("D", "D'"):
                p = row[dataset]
                for key, value in (("epsilon", eps), ("event", row["event"]), ("dataset", dataset),
                                   ("estimate", p["estimate"]), ("ci_low", p["low"]), ("ci_high", p["high"]),
                                   ("hits", p["hits"]), ("runs", p["trials"]),
                                   ("epsilon_lower_bound", row["epsilon_lower_bound"])):
                    columns[key].append(value)
    ctx.csv("non_composition", columns)

    main = results[MAIN_EPSILON]
    figure = Figure(figsize=(11, 4.2))
    left, right = figure.subplots(1, 2)
    names = [row["event"] for row in main["events"]]
    x = np.arange(len(names))
    for offset, dataset, color in ((-0.18, "D", "tab:blue"), (0.18, "D'", "tab:red")):
        p = [row[dataset] for row in main["events"]]
        est = np.array([q["estimate"] for q in p])
        err = np.array([[q["estimate"] - q["low"] for q in p], [q["high"] - q["estimate"] for q in p]])
        left.bar(x + offset, est, 0.36, yerr=err, capsize=3, color=color,
                 label=f"{dataset} ({'without' if dataset == 'D' else 'with'} the tuple)")
    left.axhline(0.25, color="grey", lw=0.8, ls="--")
    left.text(len(names) - 0.5, 0.26, "theory for D': 1/4", ha="right", fontsize=8, color="grey")
    left.set_xticks(x, names, fontsize=8)
    left.set_ylabel("probability (95% Clopper-Pearson interval)")
    left.set_title(f"ε = {MAIN_EPSILON:g}, β = 0.5, {RUNS:,} runs per dataset", fontsize=10)
    left.legend(fontsize=8)
    joint = "A2 >= 0.5 and A1 = false"
    for dataset, color in (("D", "tab:blue"), ("D'", "tab:red")):
        rows = [next(r for r in results[e]["events"] if r["event"] == joint)[dataset] for e in EPSILONS]
        est = np.array([q["estimate"] for q in rows])
        err = np.array([[q["estimate"] - q["low"] for q in rows], [q["high"] - q["estimate"] for q in rows]])
        right.errorbar(EPSILONS, est, yerr=err, marker="o", color=color, capsize=3, label=dataset)
    right.set_xscale("log", base=2)
    right.set_xlabel("ε of A2")
    right.set_ylabel("Pr[A2 ≥ 0.5 and A1 = false]")
    right.set_title("the joint event: ≈ 0 under D, ≈ 1/4 under D'", fontsize=10)
    right.legend(fontsize=8)
    figure.tight_layout()
    ctx.png("non_composition", figure)

    ctx.summary.update({
        "runs_per_dataset": RUNS,
        "epsilon": MAIN_EPSILON,
        "theory": main["theory"],
        "events": {row["event"]: {"D": row["D"]["estimate"], "D'": row["D'"]["estimate"],
                                  "epsilon_lower_bound": row["epsilon_lower_bound"]} for row in main["events"]},
    })
