"""What a certified release teaches a classifier on Adult, side by side with everything else.

Adult's train file gives the releases, its test file the accuracy; the features are the eight
quasi-identifiers, the target income. For each ε (default 0.5, 1, 2; δ = 1e-6) and each seed
(default 5), one run measures:

- **certified release** (:func:`crowdsafe.anonymize.publish.publish_dataset`,
  the guarantee of Li, Qardaji and Su 2012, Theorem 6: Bernoulli-β sampling, an ε1-DP choice of
  the recoding, k from the plan; at small ε the choice reads the whole table and composes with
  Theorem 5, selection/PROOF.md §8) under each selection objective
  (:data:`crowdsafe.selection.score.OBJECTIVES`; ``classification`` with target income),
  planned as ``crowdsafe publish`` plans it (:func:`crowdsafe.anonymize.publish.plan_for_dataset`:
  the planner chooses ε1), scored with the majority lookup
  (:func:`crowdsafe.metrics.majority_lookup`: each generalized tuple predicts its majority
  income) and with a logistic regression (:func:`crowdsafe.metrics.release_accuracy`);
- **Mondrian** and the **optimal lattice** (suppression at most 10%) on the whole train file at
  the classification plan's k (no guarantee: both fit the data); deterministic, so run once
  per ε;
- **best lattice node** (a ceiling, no guarantee): every node of the generalization lattice
  with income kept, applied to one Bernoulli-β sample (β and k of the classification plan) as
  the theorem requires (classes of the whole tuple, income included, under k suppressed),
  scored with the majority lookup. It picks the node with the test set, so it bounds what a
  selection could reach; the share of nodes at or above 0.80 is reported beside it;
- **non-private**: the majority lookup and the logistic regression trained on the train file,
  and the test file's majority rate;
- **DP peers** (DP logistic regression, AIM/MST synthetic data): read from
  ``bench/results/peers-dplr.json`` and ``bench/results/peers-synth.json`` when they exist,
  measured by the bench scripts in their own pinned environments (not run here).

Every method's wall time is in the table (for a release: the time to make it; the classifier's
fit is timed apart). Options (``crowdsafe experiment utility -O key=value``): ``seeds`` (5),
``epsilons`` (``0.5,1,2``; add ``4``), ``deltas`` (``1e-6``; ``1e-6,1e-4``), ``objectives``
(all), ``ceiling_seeds`` (how many seeds get the lattice ceiling, about 10 s each; 1),
``logistic`` (``yes``), ``peers`` (the folder of the peers' JSON files).

The sample sizes, suppression rates and NCP in the outputs are exact facts about the data: this
is a custodian's experiment, not a release.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.experiments.registry import ExperimentContext, experiment
from crowdsafe.number_text import parse_number, parse_whole

EPSILONS = (0.5, 1.0, 2.0)
DELTAS = (1e-6,)
SEEDS = 5
CEILING_SEEDS = 1  # the best node moved by at most 0.001 across 5 seeds (docs/publish.md)
MAX_SEEDS = 1_000  # seeds at most (each a whole run: about a minute; more would run for days)
OPTION_KEYS = ("ceiling_seeds", "deltas", "epsilons", "logistic", "objectives", "peers", "seeds")
TARGET = "income"
LATTICE_SUPPRESSION = 0.1
CEILING_THRESHOLD = 0.80
WORKLOAD_QUERIES = 1000
PEERS_FOLDER = Path(__file__).resolve().parents[3] / "bench" / "results"
PEER_FILES = ("peers-dplr.json", "peers-synth.json")
CEILING_OBJECTIVE = "classification"

# methods of the table (the label column); a certified release's label carries its objective
CERTIFIED = "certified"
MONDRIAN = "Mondrian (no guarantee)"
LATTICE = "optimal lattice (no guarantee)"
CEILING = "best lattice node (ceiling, picked on test)"
NON_PRIVATE = "non-private"
MAJORITY_RATE = "majority rate"


@dataclass(frozen=True)
class Options:
    """The experiment's options (``-O key=value``), parsed and checked."""

    seeds: int = SEEDS
    epsilons: tuple[float, ...] = EPSILONS
    deltas: tuple[float, ...] = DELTAS
    objectives: tuple[str, ...] | None = None  # None: every objective the planner offers
    ceiling_seeds: int = CEILING_SEEDS
    logistic: bool = True
    peers: Path = PEERS_FOLDER

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> Options:
        known = set(OPTION_KEYS)
        unknown = sorted(set(options) - known)
        if unknown:
            raise ParameterError(f"unknown option {unknown[0]!r} for the utility experiment; "
                                 f"use: {', '.join(sorted(known))}")

        def numbers(key: str, default: tuple[float, ...]) -> tuple[float, ...]:
            if key not in options:
                return default
            values = tuple(parse_number(v.strip(), f"option {key}") for v in options[key].split(",") if v.strip())
            if not values or not all(v > 0 for v in values):
                raise ParameterError(f"option {key} needs numbers > 0, got {options[key]!r}")
            return values

        def whole(key: str, default: int | None) -> int | None:
            if key not in options:
                return default
            value = parse_whole(options[key], f"option {key}")
            if not 1 <= value <= MAX_SEEDS:  # each seed is a whole run of every epsilon and objective
                raise ParameterError(f"option {key} is a whole number from 1 to {MAX_SEEDS:,}, got {options[key]!r}")
            return value

        logistic = options.get("logistic", "yes").lower()
        if logistic not in ("yes", "no", "true", "false", "1", "0"):
            raise ParameterError(f"option logistic is yes or no, got {options['logistic']!r}")
        objectives = tuple(o.strip() for o in options["objectives"].split(",") if o.strip()) \
            if "objectives" in options else None
        return cls(
            seeds=whole("seeds", SEEDS) or SEEDS,
            epsilons=numbers("epsilons", EPSILONS),
            deltas=numbers("deltas", DELTAS),
            objectives=objectives,
            ceiling_seeds=whole("ceiling_seeds", CEILING_SEEDS) or CEILING_SEEDS,
            logistic=logistic in ("yes", "true", "1"),
            peers=Path(options["peers"]) if "peers" in options else PEERS_FOLDER,
        )


def planner_objectives() -> tuple[str, ...]:
    """The objectives the planner offers (:data:`crowdsafe.selection.score.OBJECTIVES`)."""
    from crowdsafe.selection.score import OBJECTIVES

    return tuple(OBJECTIVES)


def make_plan(data: Dataset, epsilon: float, delta: float, objective: str) -> Any:
    """The plan ``crowdsafe publish`` makes for ``objective`` (target income for classification):
    :func:`crowdsafe.anonymize.publish.plan_for_dataset`, whose ε1 the planner chooses from the
    lattice's size (public)."""
    from crowdsafe.anonymize.publish import PlanRequest, plan_for_dataset

    target = TARGET if objective == "classification" else None
    return plan_for_dataset(data, PlanRequest(epsilon, delta, objective=objective, target=target))


def workload_error(release: pl.DataFrame, original: Dataset, columns: list[str], scale: float) -> float:
    """Mean relative error of the shared random workload (:func:`crowdsafe.metrics.workload_error`),
    each published count scaled by ``scale`` (1/β for a sampled release)."""
    from crowdsafe.metrics import workload_error as shared_workload_error

    return shared_workload_error(original, release, columns, queries=WORKLOAD_QUERIES, seed=0,
                                 scale=scale).mean_relative_error


def classifier_accuracy(release: pl.DataFrame, original: Dataset, test: Dataset, columns: list[str],
                        model: str = "logistic") -> float:
    """Test accuracy of ``model`` trained on the release (:func:`crowdsafe.metrics.release_accuracy`);
    NaN when the release generalizes the target."""
    from crowdsafe.metrics import release_accuracy

    try:
        return release_accuracy(original, release, test, TARGET, features=columns, model=model)
    except ParameterError:
        return float("nan")


def majority_rate(test: Dataset) -> float:
    """Share of the test rows holding the most frequent income."""
    counts = test.frame.get_column(TARGET).value_counts().get_column("count")
    most: Any = counts.max()  # a row count (an int)
    return float(most / test.n_rows)


# -- the ceiling: every lattice node, on one sample ------------------------------------------------

@dataclass(frozen=True)
class LatticeCodes:
    """Adult's train and test files as leaf codes of the quasi-identifiers' hierarchies, reduced to
    distinct tuples (train: per tuple and income; test: per tuple, with its rows of each income).
    Built once per sample; a node is then a few gathers and one group-by of these tuples."""

    columns: tuple[str, ...]
    train_codes: np.ndarray  # (m, d) leaf codes of the sample's distinct (tuple, income)
    train_income: np.ndarray  # (m,) income code
    train_counts: np.ndarray  # (m,) rows
    test_codes: np.ndarray  # (t, d) leaf codes of the test file's distinct tuples (-1: unknown value)
    test_right: np.ndarray  # (t, incomes) test rows of each income

    @classmethod
    def of(cls, sample: Dataset, test: Dataset, columns: Sequence[str]) -> LatticeCodes:
        from crowdsafe.data import encode_series
        from crowdsafe.data.generalized import AttributeDomain

        def distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            keys, inverse = np.unique(codes, axis=0, return_inverse=True)
            return keys, inverse.reshape(-1)

        train = np.column_stack([sample.encoded(c).codes.astype(np.int64) for c in [*columns, TARGET]])
        keys, inverse = distinct(train)
        counts = np.bincount(inverse, minlength=len(keys))
        test_columns = []
        for c in [*columns, TARGET]:  # test values as codes of the train file's domains
            codes, dictionary = encode_series(test.frame.get_column(c))
            cover = AttributeDomain.of(sample, c).cover(dictionary, strict=False)
            first = cover.indices[np.minimum(cover.indptr[:-1], max(len(cover.indices) - 1, 0))].astype(np.int64) \
                if len(cover.indices) else np.zeros(len(cover.size), dtype=np.int64)
            test_columns.append(np.where(cover.size == 1, first, -1)[codes].astype(np.int64))
        test_all = np.column_stack(test_columns)
        incomes = AttributeDomain.of(sample, TARGET).size
        tuples, test_inverse = distinct(test_all[:, :-1])
        income = test_all[:, -1]
        known = income >= 0  # a test income the train file never holds is never predicted
        right = np.zeros((len(tuples), incomes))
        np.add.at(right, (test_inverse[known], income[known]), 1.0)
        return cls(tuple(columns), keys[:, :-1], keys[:, -1], counts, tuples, right)

    @property
    def test_rows(self) -> float:
        return float(self.test_right.sum())


def lattice_ceiling(codes: LatticeCodes, hierarchies: Mapping[str, Any], k: int,
                    threshold: float = CEILING_THRESHOLD) -> dict[str, Any]:
    """Majority-lookup test accuracy of every node of the quasi-identifiers' lattice (income at
    level 0) on one sample, classes of the whole tuple (income included) under ``k`` suppressed.

    Returns the best accuracy, its node (levels) and suppression rate, the share of nodes at or
    above ``threshold``, how many nodes were scored, and every node's accuracy (``accuracy_of``,
    keyed by its levels in the order of ``codes.columns``). Columns are walked depth-first, widest
    domain first; each step refines the class ids of the prefix (dense, from a bit table), so the
    last and most frequent steps group by small spans. A test tuple whose class is not released
    gets the release's overall majority (code 0 when nothing is released); ties go to the
    smaller income code.
    """
    columns = sorted(codes.columns, key=lambda c: -hierarchies[c].size(0))
    index = {c: j for j, c in enumerate(codes.columns)}
    m = len(codes.train_counts)
    unknown = (codes.test_codes < 0).any(axis=1)
    levels_of = []
    for c in columns:  # per column and level: node code of every train tuple, then every test tuple
        h = hierarchies[c]
        both = np.concatenate([codes.train_codes[:, index[c]], np.maximum(codes.test_codes[:, index[c]], 0)])
        levels_of.append([(h.leaf_map(level).astype(np.int64)[both], h.size(level)) for level in range(h.height + 1)])
    incomes = codes.test_right.shape[1]
    weights = [np.where(codes.train_income == y, codes.train_counts, 0).astype(np.float64) for y in range(incomes)]
    total_train = float(codes.train_counts.sum())
    accuracies: list[float] = []
    nodes: list[tuple[int, ...]] = []
    best: dict[str, Any] = {"accuracy": -1.0}
    order = [columns.index(c) for c in codes.columns]

    def dense(key: np.ndarray, span: int) -> tuple[np.ndarray, int]:
        if span <= (1 << 23):
            present = np.zeros(span, dtype=bool)
            present[key] = True
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[key], int(rank[-1]) + 1
        values, ids = np.unique(key, return_inverse=True)
        return ids.reshape(-1), len(values)

    def score(ids: np.ndarray, groups: int, node: tuple[int, ...]) -> None:
        train_ids, test_ids = ids[:m], ids[m:]
        kept = np.stack([np.bincount(train_ids, weights=w, minlength=groups) for w in weights])  # (incomes, groups)
        kept *= kept >= k
        overall = int(np.argmax(kept.sum(axis=1)))
        released = kept.sum(axis=0) > 0
        prediction = np.where(released, np.argmax(kept, axis=0), overall)[test_ids]
        prediction[unknown] = overall
        accuracy = float(codes.test_right[np.arange(len(test_ids)), prediction].sum() / codes.test_rows)
        accuracies.append(accuracy)
        nodes.append(tuple(node[j] for j in order))
        if accuracy > best["accuracy"]:
            best.update(accuracy=accuracy, node=dict(zip(columns, node)),
                        suppression_rate=1.0 - float(kept.sum()) / total_train)

    def visit(depth: int, ids: np.ndarray, groups: int, node: tuple[int, ...]) -> None:
        last = depth == len(columns) - 1
        for level, (mapped, size) in enumerate(levels_of[depth]):
            if last:  # the narrowest column: its ids need not be dense to be counted
                score(ids * size + mapped, groups * size, (*node, level))
            else:
                refined, count = dense(ids * size + mapped, groups * size)
                visit(depth + 1, refined, count, (*node, level))

    visit(0, np.zeros(m + len(codes.test_codes), dtype=np.int64), 1, ())
    values = np.asarray(accuracies)
    node = {c: best["node"][c] for c in codes.columns}
    return {"accuracy": best["accuracy"], "node": node, "suppression_rate": best["suppression_rate"],
            "share_reaching": float((values >= threshold).mean()), "nodes": len(values),
            "accuracy_of": dict(zip(nodes, accuracies))}


# -- the DP peers' figures, measured elsewhere -----------------------------------------------------

def sample_ceiling(sample: Dataset, test: Dataset, columns: Sequence[str], hierarchies: Mapping[str, Any],
                   k: int) -> dict[str, Any]:
    """:func:`lattice_ceiling` of ``sample`` against ``test`` (codes built, then every node scored)."""
    return lattice_ceiling(LatticeCodes.of(sample, test, columns), hierarchies, k)


def read_peers(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The peers' summary rows (method, epsilon, runs, accuracy mean/min/max, seconds) from the
    bench scripts' JSON files in ``folder``, and notes on what is missing."""
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    for name in PEER_FILES:
        path = folder / name
        if not path.is_file():
            notes.append(f"{name} not found in {folder}: its DP peers are not in the table "
                         "(run the bench peer scripts to measure them)")
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            for entry in document.get("summary", []):
                rows.append({
                    "method": f"peer: {entry['method']}",
                    "epsilon": float("nan") if entry.get("epsilon") is None else float(entry["epsilon"]),
                    "runs": int(entry.get("runs", 1)),
                    "accuracy_mean": float(entry["accuracy_mean"]),
                    "accuracy_min": float(entry.get("accuracy_min", entry["accuracy_mean"])),
                    "accuracy_max": float(entry.get("accuracy_max", entry["accuracy_mean"])),
                    "seconds": float(entry.get("seconds_mean", float("nan"))),
                    "source": f"{name} (bench script, own pinned environment)",
                })
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            notes.append(f"{name} could not be read ({type(error).__name__}: {error}); its peers are not in the table")
    return rows, notes


# -- the runs ---------------------------------------------------------------------------------------

RUN_COLUMNS = ("method", "objective", "classifier", "epsilon", "delta", "seed", "k", "beta", "accuracy",
               "seconds", "classifier_seconds", "suppression_rate", "ncp", "rows_published", "node",
               "nodes_reaching_threshold", "guarantee")
TEXT_COLUMNS = ("method", "objective", "classifier", "node", "guarantee")
WHOLE_COLUMNS = ("seed", "k", "rows_published")


@dataclass
class RunTable:
    """Every measured run, one row per (method, classifier)."""

    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in RUN_COLUMNS})

    def add(self, **values: Any) -> None:
        unknown = set(values) - set(RUN_COLUMNS)
        if unknown:
            raise ValueError(f"unknown run columns {sorted(unknown)}")
        for column in RUN_COLUMNS:
            value = values.get(column)
            if value is None:  # not measured: empty text, no whole number, NaN
                value = "" if column in TEXT_COLUMNS else None if column in WHOLE_COLUMNS else float("nan")
            self.columns[column].append(value)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.columns, strict=False)


def timed(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """``function(*args, **kwargs)`` and its wall time in seconds."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def label(method: str, objective: str, classifier: str) -> str:
    name = f"{method} ({objective})" if objective else method
    return f"{name} · {classifier}" if classifier else name


def summarize(runs: pl.DataFrame, peers: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Mean, min and max accuracy (and mean seconds, suppression and NCP) per method, classifier
    and (ε, δ), with the peers' rows appended as read. A run whose release generalizes income has
    no accuracy (NaN): the accuracy figures are over the other runs, and
    ``runs_target_generalized`` counts them."""
    measured = pl.col("accuracy").filter(pl.col("accuracy").is_not_nan())
    table = (
        runs.with_columns(pl.struct("method", "objective", "classifier")
                          .map_elements(lambda r: label(r["method"], r["objective"], r["classifier"]),
                                        return_dtype=pl.String).alias("label"))
        .group_by("label", "method", "objective", "classifier", "epsilon", "delta", maintain_order=True)
        .agg(pl.len().alias("runs"), pl.col("k").first(),
             pl.col("accuracy").is_nan().sum().alias("runs_target_generalized"),
             measured.mean().alias("accuracy_mean"), measured.min().alias("accuracy_min"),
             measured.max().alias("accuracy_max"), pl.col("seconds").mean().alias("seconds"),
             pl.col("classifier_seconds").mean().alias("classifier_seconds"),
             pl.col("suppression_rate").mean().alias("suppression_rate"), pl.col("ncp").mean().alias("ncp"),
             pl.col("nodes_reaching_threshold").mean().alias("nodes_reaching_threshold"),
             pl.lit("measured here").alias("source"))
    )
    if peers:
        peer_frame = pl.DataFrame([{
            "label": p["method"], "method": p["method"], "objective": "", "classifier": "",
            "epsilon": p["epsilon"], "delta": float("nan"), "runs": p["runs"], "k": None,
            "runs_target_generalized": 0,
            "accuracy_mean": p["accuracy_mean"], "accuracy_min": p["accuracy_min"],
            "accuracy_max": p["accuracy_max"], "seconds": p["seconds"], "classifier_seconds": float("nan"),
            "suppression_rate": float("nan"), "ncp": float("nan"), "nodes_reaching_threshold": float("nan"),
            "source": p["source"]} for p in peers])
        table = pl.concat([table, peer_frame.select(table.columns)], how="vertical_relaxed")
    return table


def measure(ctx: ExperimentContext, options: Options, data: Dataset, test: Dataset, runs: RunTable,
            notes: list[str]) -> None:
    """Run every method of the comparison into ``runs``."""
    from crowdsafe.anonymize import anonymize_dataset
    from crowdsafe.anonymize.publish import publish_dataset
    from crowdsafe.sampling import sample_of

    qis = list(data.quasi_identifiers)
    models = ["majority", "logistic"] if options.logistic else ["majority"]
    available_objectives = planner_objectives()
    objectives = options.objectives or available_objectives
    missing = [o for o in objectives if o not in available_objectives]
    if missing:
        raise ParameterError(f"objective {missing[0]!r} is not offered by the planner; "
                             f"use: {', '.join(available_objectives)}")

    raw = data.frame.select([*qis, TARGET])
    for model in models:  # non-private: trained on the train file's values
        accuracy, seconds = timed(classifier_accuracy, raw, data, test, qis, model)
        runs.add(method=NON_PRIVATE, classifier=model, accuracy=accuracy, seconds=seconds,
                 classifier_seconds=seconds, guarantee="none")
    runs.add(method=MAJORITY_RATE, accuracy=majority_rate(test), seconds=0.0, guarantee="none")

    ceiling_seeds = min(options.ceiling_seeds, options.seeds)
    streams = iter(ctx.randomness.spawn(len(options.deltas) * len(options.epsilons) * options.seeds))
    for delta in options.deltas:
        for epsilon in options.epsilons:
            plans = {o: make_plan(data, epsilon, delta, o) for o in objectives}
            # the ceiling and the classic methods use the classification plan's k (and β)
            default = plans.get(CEILING_OBJECTIVE) or make_plan(data, epsilon, delta, CEILING_OBJECTIVE)
            k = default.k
            for name, algorithm, extra in ((MONDRIAN, "mondrian", {}),
                                           (LATTICE, "lattice", {"suppression_limit": LATTICE_SUPPRESSION})):
                made, seconds = timed(anonymize_dataset, data, algorithm, k, **extra)
                suppression = made.rows_suppressed / made.rows_in
                ncp = made.utility().gcp if made.rows_published else 1.0
                for model in models:
                    accuracy, fit = timed(classifier_accuracy, made.frame, data, test, qis, model)
                    runs.add(method=name, classifier=model, epsilon=epsilon, delta=delta, k=k, beta=1.0,
                             accuracy=accuracy, seconds=seconds, classifier_seconds=fit,
                             suppression_rate=suppression, ncp=ncp, rows_published=made.rows_published,
                             guarantee=made.certificate.summary())
            for seed in range(options.seeds):
                stream = next(streams)
                release_streams = stream.spawn(len(objectives) + 1)
                for objective, release_stream in zip(objectives, release_streams):
                    plan = plans[objective]
                    pub, seconds = timed(publish_dataset, data, plan, randomness=release_stream)
                    facts = pub.custodian_report()["releases"][0]  # custodian-only: this is an experiment
                    per_column = facts["utility"]["ncp_per_column"]
                    ncp = float(np.mean([per_column[c] for c in qis]))
                    release = pub.release
                    for model in models:
                        accuracy, fit = timed(classifier_accuracy, release.frame, data, test, qis, model)
                        runs.add(method=CERTIFIED, objective=objective, classifier=model, epsilon=epsilon,
                                 delta=delta, seed=seed, k=plan.k, beta=plan.beta, accuracy=accuracy,
                                 seconds=seconds, classifier_seconds=fit,
                                 suppression_rate=facts["suppression_rate"], ncp=ncp,
                                 rows_published=release.rows_published,
                                 node=",".join(f"{c}={v}" for c, v in release.recoding.levels.items()),
                                 guarantee=pub.certificate.summary())
                if seed < ceiling_seeds:
                    sample = sample_of(data, default.beta, release_streams[-1])
                    found, seconds = timed(sample_ceiling, sample, test, qis, data.hierarchies, k)
                    runs.add(method=CEILING, classifier="majority", epsilon=epsilon, delta=delta, seed=seed, k=k,
                             beta=default.beta, accuracy=found["accuracy"], seconds=seconds,
                             suppression_rate=found["suppression_rate"], rows_published=None,
                             node=",".join(f"{c}={v}" for c, v in found["node"].items()),
                             nodes_reaching_threshold=found["share_reaching"], guarantee="none (picked on test)")
    if ceiling_seeds < options.seeds:
        notes.append(f"the lattice ceiling is measured on {ceiling_seeds} seed(s) per epsilon")


# -- the outputs ------------------------------------------------------------------------------------

def plot(ctx: ExperimentContext, runs: pl.DataFrame, table: pl.DataFrame, epsilons: Sequence[float]) -> None:
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    lines = table.filter(pl.col("epsilon").is_not_nan() & (pl.col("method") != MAJORITY_RATE))
    flat = table.filter(pl.col("epsilon").is_nan() | (pl.col("method") == MAJORITY_RATE))
    panels = [("majority", "majority lookup (each tuple predicts its majority)"), ("logistic", "logistic regression")]
    panels = [p for p in panels if (lines["classifier"] == p[0]).any()]
    figure = Figure(figsize=(6.5 * (len(panels) + 1), 5))
    axes = [figure.add_subplot(1, len(panels) + 1, i + 1) for i in range(len(panels) + 1)]
    tab20 = colormaps["tab20"]
    colours = [tab20(i) for i in range(tab20.N)]  # the qualitative map's 20 colours
    for ax in axes:  # more methods than the default ten colours
        ax.set_prop_cycle(color=colours)
    peers = lines.filter(pl.col("method").str.starts_with("peer: "))
    for ax, (model, title) in zip(axes, panels):
        own = lines.filter(pl.col("classifier") == model)
        for name in own["label"].unique(maintain_order=True).to_list():
            part = own.filter(pl.col("label") == name).sort("epsilon")
            mean = part["accuracy_mean"].to_numpy()
            spread = np.vstack([mean - part["accuracy_min"].to_numpy(), part["accuracy_max"].to_numpy() - mean])
            ax.errorbar(part["epsilon"].to_numpy(), mean, yerr=spread, marker="o", capsize=3,
                        label=name.replace(f" · {model}", ""))
        for name in peers["label"].unique(maintain_order=True).to_list():
            part = peers.filter(pl.col("label") == name).sort("epsilon")
            mean = part["accuracy_mean"].to_numpy()
            spread = np.vstack([mean - part["accuracy_min"].to_numpy(), part["accuracy_max"].to_numpy() - mean])
            ax.errorbar(part["epsilon"].to_numpy(), mean, yerr=spread, marker="s", linestyle="--", capsize=3,
                        label=f"{name} (bench)")
        styles = iter([":", "-.", "--", (0, (1, 4)), (0, (3, 2, 1, 2))])
        for row in flat.iter_rows(named=True):
            if row["method"] == MAJORITY_RATE or row["classifier"] in ("", model):
                ax.axhline(row["accuracy_mean"], color="grey", linewidth=1, linestyle=next(styles, ":"),
                           label=row["label"])
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(epsilons), [f"{e:g}" for e in epsilons])
        ax.set_xlabel("ε")
        ax.set_ylabel("income accuracy on adult.test")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    ax = axes[-1]
    losses = runs.filter(pl.col("epsilon").is_not_nan() & pl.col("suppression_rate").is_not_nan()
                         & pl.col("classifier").is_in(["majority", ""]))
    losses = losses.with_columns(pl.struct("method", "objective").map_elements(
        lambda r: label(r["method"], r["objective"], ""), return_dtype=pl.String).alias("label"))
    for name in losses["label"].unique(maintain_order=True).to_list():
        part = (losses.filter(pl.col("label") == name).group_by("epsilon").agg(
            pl.col("suppression_rate").mean(), pl.col("ncp").mean()).sort("epsilon"))
        line = ax.plot(part["epsilon"], part["suppression_rate"], marker="o", label=f"{name}: suppression")
        if part["ncp"].is_not_nan().any():
            ax.plot(part["epsilon"], part["ncp"], marker="x", linestyle="--", color=line[0].get_color(),
                    label=f"{name}: NCP")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(epsilons), [f"{e:g}" for e in epsilons])
    ax.set_xlabel("ε")
    ax.set_title("suppression rate (solid) and NCP of the quasi-identifiers (dashed)", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    figure.tight_layout()
    ctx.png("utility_vs_epsilon", figure)


@experiment("utility", "Utility on Adult: certified release per objective vs Mondrian, optimal lattice, "
                       "lattice ceiling, non-private and DP peers, over seeds", options=OPTION_KEYS)
def utility(ctx: ExperimentContext) -> None:
    from crowdsafe.datasets import adult

    options = Options.parse(ctx.options)
    data, test = adult("train"), adult("test")
    runs = RunTable()
    notes: list[str] = []
    measure(ctx, options, data, test, runs, notes)
    peers, peer_notes = read_peers(options.peers)
    notes.extend(peer_notes)
    frame = runs.frame()
    table = summarize(frame, peers)
    ctx.csv("utility_runs", {c: frame[c].to_list() for c in frame.columns})
    ctx.csv("utility_summary", {c: table[c].to_list() for c in table.columns})
    plot(ctx, frame, table, options.epsilons)
    ctx.summary.update(
        majority_rate=majority_rate(test), seeds=options.seeds, epsilons=list(options.epsilons),
        deltas=list(options.deltas), runs=frame.height,
        table=[{key: row[key] for key in ("label", "epsilon", "delta", "runs", "accuracy_mean", "accuracy_min",
                                          "accuracy_max", "seconds", "source")}
               for row in table.iter_rows(named=True)],
        notes=notes,
    )
