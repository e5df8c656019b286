"""The composition (intersection) attack study (Ganta, Kasiviswanathan and Smith 2008).

Data: UCI Adult (training file, rows with a missing value removed); quasi-identifiers age,
workclass, education, marital-status, race, sex, native-country; sensitive attribute
occupation. A second, synthetic census-like table with a different correlation structure
(:func:`crowdsafe.datasets.synthetic` with ``mix = 1``: every block of attributes comes from a
different Adult record, so occupation depends on workclass only and on none of the other
quasi-identifiers, while marginals stay Adult's) shows the effect is not an artefact of Adult.

Per seed: two subsets drawn without replacement that share ``OVERLAP`` rows (each has
``OWN`` rows of its own too); both are anonymized independently for k1 = k2 in ``KS`` and
the overlap's rows are attacked (:func:`crowdsafe.attacks.intersection_attack`). Scenarios:
Mondrian + Mondrian, MDAV + MDAV, Mondrian + MDAV, and Mondrian with entropy ℓ-diversity
(ℓ = ``L``) and with t-closeness (t = ``T``) on both sides.

Contrast (same targets, same metrics): (a) the safe pipeline (:mod:`crowdsafe.anonymize.publish`,
(ε, δ) = ``PUBLISH``) run on each subset, each release from its own fresh Bernoulli sample;
(b) an ε-DP contingency table (quasi-identifiers × occupation) of each subset
(:mod:`crowdsafe.attacks.contrast`). Both are read by the very same attack; rows that were not
sampled, suppressed cells and generalized occupations count as what they are (see
:mod:`crowdsafe.attacks.intersection`), and a breach only counts as true when it names the
target's real occupation.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.anonymize.publish import PlanRequest, plan_publication, publish_dataset
from crowdsafe.attacks import AttackedRelease, intersection_attack
from crowdsafe.attacks.contrast import dp_table_cells, population_guess
from crowdsafe.data import Attribute, AttributeType, Dataset, MissingPolicy, NumberKind, Role
from crowdsafe.datasets import adult, synthetic
from crowdsafe.experiments.registry import ExperimentContext, experiment
from crowdsafe.randomness import Randomness

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SENSITIVE = "occupation"
RECORD = "record"
OVERLAP = 5_000
OWN = 5_000
KS = tuple(range(5, 55, 5))
SEEDS = 3
L = 3.0
T = 0.2
PUBLISH = (1.0, 1e-4)
DP_EPSILON = 1.0
SCENARIOS = {
    "Mondrian + Mondrian": ("mondrian", "mondrian"),
    "MDAV + MDAV": ("mdav", "mdav"),
    "Mondrian + MDAV": ("mondrian", "mdav"),
    f"Mondrian entropy l={L:g}": ("l-diverse", "l-diverse"),
    f"Mondrian t={T:g}": ("t-close", "t-close"),
}
METHODS: dict[str, dict[str, Any]] = {"mondrian": {}, "mdav": {}, "l-diverse": {"l": L}, "t-close": {"t": T}}
LEVELS = (0.25, 0.5)  # confidence is 1/|S_i|: a level above 1/2 would repeat the perfect breach
WORKERS = 2  # (table, seed) jobs run in parallel processes


def census_tables() -> dict[str, Dataset]:
    """The two tables of the study, with the roles set."""
    real = adult("train", drop_missing=True)
    fake = synthetic(real.n_rows, seed=7, mix=1.0, missing=MissingPolicy.DROP)
    return {"adult": real.with_roles(qi=QI, sensitive=[SENSITIVE]),
            "synthetic": fake.with_roles(qi=QI, sensitive=[SENSITIVE])}


def with_record_id(dataset: Dataset, name: str = RECORD) -> Dataset:
    """``dataset`` with a ``name`` column numbering its rows, an insensitive attribute: releases
    carry it unchanged, so attacks can be scored (the attacks never read it)."""
    schema = replace(dataset.schema, attributes=dataset.schema.attributes + (
        Attribute(name, Role.INSENSITIVE, AttributeType.NUMERIC, numbers=NumberKind.INTEGER),))
    frame = dataset.frame.with_columns(pl.Series(name, np.arange(dataset.n_rows, dtype=np.int64)))
    return replace(dataset, frame=frame, schema=schema)


def overlapping_subsets(dataset: Dataset, randomness: Randomness, overlap: int = OVERLAP,
                        own: int = OWN) -> tuple[Dataset, Dataset, pl.DataFrame]:
    """Two subsets drawn without replacement sharing ``overlap`` rows, and the shared rows
    (the targets). Rows carry a ``record`` id (insensitive; used only to score location)."""
    if 2 * own + overlap > dataset.n_rows:
        raise ValueError(f"{dataset.name} has {dataset.n_rows} rows, fewer than 2 x {own} + {overlap}")
    order = randomness.generator.permutation(dataset.n_rows)
    numbered = with_record_id(dataset)
    frame, schema = numbered.frame, numbered.schema
    shared, first, second = order[:overlap], order[overlap:overlap + own], order[overlap + own:overlap + 2 * own]

    def subset(rows: np.ndarray) -> Dataset:
        return replace(dataset, frame=frame.gather(np.sort(rows)), schema=schema)

    targets = frame.gather(np.sort(shared)).select([RECORD] + QI + [SENSITIVE])
    return subset(np.concatenate([shared, first])), subset(np.concatenate([shared, second])), targets


def _row(result: Any, **labels: Any) -> dict[str, Any]:
    s = result.summary
    releases = result.releases
    location = releases.get_column("correct_location").drop_nulls()
    sizes = [v for v in s["average_partition_size"] if v is not None]
    return {
        **labels,
        "perfect_breach": 100 * s["perfect_breach"],
        "perfect_breach_true": 100 * s["perfect_breach_true"],
        **{f"partial_breach_{int(c * 100)}": 100 * s["partial_breach"][f"{c:g}"] for c in LEVELS},
        "average_partition_size": float(np.mean(sizes)) if sizes else float("nan"),
        "average_prior_anonymity": s["average_prior_anonymity"],
        "average_posterior_anonymity": s["average_posterior_anonymity"],
        "average_drop": s["average_drop"],
        "vulnerable": 100 * s["vulnerable"],
        "correct_location": 100 * float(location.min()) if len(location) else float("nan"),
    }


def attack_pair(first: pl.DataFrame, second: pl.DataFrame, targets: pl.DataFrame, k: int | None,
                hierarchies: Any, names: tuple[str, str]) -> Any:
    releases = [AttackedRelease(first, names[0], k), AttackedRelease(second, names[1], k)]
    return intersection_attack(releases, targets, QI, SENSITIVE, hierarchies=hierarchies, levels=LEVELS,
                               truth_id=RECORD)


def run_seed(name: str, dataset: Dataset, randomness: Randomness) -> tuple[list[dict], list[dict]]:
    """The whole k grid and the contrast for one table and one seed."""
    streams = randomness.spawn(4)
    a, b, targets = overlapping_subsets(dataset, streams[0])
    rows, contrast = [], []
    hierarchies = dataset.hierarchies
    for k in KS:
        made = {}
        for method, options in METHODS.items():
            for side, subset in (("A", a), ("B", b)):
                made[method, side] = anonymize_dataset(subset, "mondrian" if method != "mdav" else "mdav", k,
                                                       sensitive=SENSITIVE if options else None, **options).frame
        for scenario, (left, right) in SCENARIOS.items():
            started = time.perf_counter()
            result = attack_pair(made[left, "A"], made[right, "B"], targets, k, hierarchies, (left, right))
            rows.append(_row(result, dataset=name, scenario=scenario, k=k,
                             attack_seconds=time.perf_counter() - started))
    # the safe pipeline: each subset published from its own fresh sample
    plan = plan_publication(PlanRequest(*PUBLISH))
    published = [publish_dataset(subset, plan, randomness=stream).release.frame
                 for subset, stream in ((a, streams[1]), (b, streams[2]))]
    result = attack_pair(published[0], published[1], targets, plan.k, hierarchies, ("publish A", "publish B"))
    contrast.append(_row(result, dataset=name, scenario=f"safe publish (eps={PUBLISH[0]:g}, delta={PUBLISH[1]:g})",
                         k=plan.k))
    values = sorted(dataset.frame.get_column(SENSITIVE).cast(pl.String).drop_nulls().unique().to_list())
    noise = streams[3].spawn(2)
    tables = [dp_table_cells(subset.frame, targets, QI, SENSITIVE, values, epsilon=DP_EPSILON, randomness=stream)
              for subset, stream in ((a, noise[0]), (b, noise[1]))]
    result = attack_pair(tables[0], tables[1], targets, None, hierarchies, ("DP table A", "DP table B"))
    contrast.append(_row(result, dataset=name, scenario=f"DP contingency table (eps={DP_EPSILON:g})", k=0))
    guess = 100 * population_guess(dataset.frame, targets, QI, SENSITIVE)
    contrast.append({key: (guess if key == "perfect_breach_true" else float("nan")) for key in contrast[-1]}
                    | {"dataset": name, "scenario": "no release: most frequent value of look-alikes", "k": 0})
    return rows, contrast


def _job(job: tuple[str, int, Randomness]) -> tuple[list[dict], list[dict]]:
    name, _, randomness = job
    return run_seed(name, census_tables()[name], randomness)


def _columns(rows: list[dict]) -> dict[str, list]:
    return {key: [row[key] for row in rows] for key in rows[0]}


def _spread(frame: pl.DataFrame, metric: str) -> pl.DataFrame:
    return (frame.group_by("scenario", "k").agg(pl.col(metric).mean().alias("mean"), pl.col(metric).min().alias("low"),
                                                pl.col(metric).max().alias("high")).sort("scenario", "k"))


def _breach_figure(frame: pl.DataFrame, name: str) -> Figure:
    metrics = [("perfect_breach", "% perfect breach")] + [
        (f"partial_breach_{int(c * 100)}", f"% partial breach, confidence ≥ {c:g}") for c in LEVELS]
    figure = Figure(figsize=(15, 3.8))
    axes = figure.subplots(1, len(metrics))
    for axis, (metric, title) in zip(axes, metrics):
        spread = _spread(frame, metric)
        for scenario in SCENARIOS:
            part = spread.filter(pl.col("scenario") == scenario)
            line = axis.plot(part["k"], part["mean"], marker="o", ms=3, label=scenario)[0]
            axis.fill_between(part["k"], part["low"], part["high"], color=line.get_color(), alpha=0.2)
        axis.set_title(title, fontsize=9)
        axis.set_xlabel("k1 = k2")
        axis.set_ylim(bottom=0)
    axes[0].set_ylabel("% of the overlap (mean, band: min-max over seeds)")
    axes[-1].legend(fontsize=7)
    figure.suptitle(f"Intersection attack on two independent releases, {name}", fontsize=11)
    figure.tight_layout()
    return figure


def _anonymity_figure(frame: pl.DataFrame, name: str) -> Figure:
    figure = Figure(figsize=(16, 3.8))
    axes = figure.subplots(1, len(SCENARIOS), sharey=True)
    for axis, scenario in zip(axes, SCENARIOS):
        part = frame.filter(pl.col("scenario") == scenario)
        for metric, label in (("average_partition_size", "average partition size"),
                              ("average_prior_anonymity", "effective anonymity, one release"),
                              ("average_posterior_anonymity", "effective anonymity, both releases")):
            spread = _spread(part, metric)
            line = axis.plot(spread["k"], spread["mean"], marker="o", ms=3, label=label)[0]
            axis.fill_between(spread["k"], spread["low"], spread["high"], color=line.get_color(), alpha=0.2)
        axis.plot(KS, KS, ls="--", color="grey", lw=0.8, label="presumed anonymity k")
        axis.set_yscale("log")
        axis.set_title(scenario, fontsize=9)
        axis.set_xlabel("k1 = k2")
    axes[0].set_ylabel("average over the overlap")
    axes[0].legend(fontsize=7)
    figure.suptitle(f"Presumed k, actual partition size and effective anonymity, {name}", fontsize=11)
    figure.tight_layout()
    return figure


def _contrast_figure(frame: pl.DataFrame, contrast: pl.DataFrame) -> Figure:
    metrics = ["perfect_breach_true", "partial_breach_50", "partial_breach_25"]
    labels = ["% true perfect breach", "% partial breach ≥ 0.5", "% partial breach ≥ 0.25"]
    figure = Figure(figsize=(18, 5))
    axes = figure.subplots(1, 2)
    for axis, name in zip(axes, ("adult", "synthetic")):
        other = contrast.filter(pl.col("dataset") == name)
        publish_k = int(other.filter(pl.col("scenario").str.starts_with("safe"))["k"][0])
        matched = min(KS, key=lambda k: abs(k - publish_k))
        classic = (frame.filter((pl.col("dataset") == name) & pl.col("k").is_in([min(KS), matched]))
                   .with_columns(pl.format("{} k={}", pl.col("scenario"), pl.col("k")).alias("scenario"))
                   .sort("k", maintain_order=True))
        table = pl.concat([part.select(pl.col("scenario"), *[pl.col(m).cast(pl.Float64, strict=False) for m in metrics])
                           for part in (classic, other)])
        means = table.group_by("scenario", maintain_order=True).agg([pl.col(m).mean() for m in metrics])
        x = np.arange(means.height)
        for i, (metric, label) in enumerate(zip(metrics, labels)):
            axis.bar(x + (i - 1) * 0.27, means[metric], 0.27, label=label)
        axis.set_xticks(x, [s.replace(" (", "\n(") for s in means["scenario"]], fontsize=7, rotation=30, ha="right")
        axis.set_title(f"{name}: classic releases (k = {min(KS)} and k = {matched}) vs safe publish "
                       f"(k = {publish_k}) vs DP table vs no release", fontsize=9)
        axis.set_ylabel("% of the overlap (mean over seeds)")
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    return figure


@experiment("composition", "Intersection attack on two independent k-anonymous releases (Adult + synthetic), "
                            "vs safe publish and DP tables")
def composition(ctx: ExperimentContext) -> None:
    started = time.perf_counter()
    tables = census_tables()
    rows: list[dict] = []
    contrast: list[dict] = []
    streams = ctx.randomness.spawn(SEEDS * len(tables))
    jobs = [(name, seed, streams[i * SEEDS + seed]) for i, name in enumerate(tables) for seed in range(SEEDS)]
    workers = max(1, min(WORKERS, os.cpu_count() or 1, len(jobs)))
    if workers > 1:
        # the workers ignore Ctrl-C (the terminal sends it to the whole group): the parent stops
        # the pool and prints one line, not a traceback per worker
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN)) as pool:
            outcomes = list(pool.map(_job, jobs))
    else:
        outcomes = [_job(job) for job in jobs]
    for (_name, seed, _), (grid, versus_rows) in zip(jobs, outcomes):
        rows.extend({**row, "seed": seed} for row in grid)
        contrast.extend({**row, "seed": seed} for row in versus_rows)
    ctx.csv("composition", _columns(rows))
    ctx.csv("contrast", _columns(contrast))
    frame, versus = pl.DataFrame(rows), pl.DataFrame(contrast)
    for name in tables:
        part = frame.filter(pl.col("dataset") == name)
        ctx.png(f"breach_{name}", _breach_figure(part, name))
        ctx.png(f"anonymity_{name}", _anonymity_figure(part, name))
    ctx.png("contrast", _contrast_figure(frame, versus))
    summary = (frame.group_by("dataset", "scenario").agg(pl.col("perfect_breach").mean(), pl.col("average_drop").mean())
               .sort("dataset", "scenario"))
    ctx.summary.update({
        "seeds": SEEDS, "overlap": OVERLAP, "rows_per_subset": OVERLAP + OWN, "ks": list(KS),
        "perfect_breach_mean_over_k": summary.to_dicts(),
        "contrast": versus.group_by("dataset", "scenario").agg(
            pl.col("perfect_breach_true").mean(), pl.col("partial_breach_50").mean()
        ).sort("dataset", "scenario").to_dicts(),
        "seconds": time.perf_counter() - started,
    })
