"""How well a release keeps the 2-way marginals, and the best any node of its lattice could do.

The measure (issue #36) is :func:`crowdsafe.metrics.marginal_distances`'s: the mean total
variation distance over every pair of the published columns between the original table's
marginal and the release's, each generalized cell spread uniformly over the original values it
covers, both normalized (:func:`release_tvd`).

:func:`lattice_tvd_ceiling` computes the same measure for every node of the lattice (a ceiling,
no guarantee: it picks the node with the original table): every node applied to one Bernoulli-β
sample with classes under k suppressed, as the theorem requires. It does not build 36,864
releases: for a node g with suppressed share σ(g) of the sample, the release's spread marginal
differs from the spread of the whole sample (no suppression) by at most σ(g) in total variation
(a mixture with weight σ), so its TVD lies within σ(g) of the unsuppressed one, which depends on
each pair's two levels alone (a small table per pair). Only the nodes whose lower end reaches the
best exact value are measured exactly (:meth:`MarginalTruth.node_tvd`, the same numbers as
:func:`crowdsafe.metrics.marginal_distances`, checked in the tests).

The sample sizes and the suppression are exact facts about the data: a custodian's experiment.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.counted import CountedSample, counted
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.data import Dataset, Hierarchy
from crowdsafe.data.generalized import AttributeDomain


def release_tvd(release: Any, original: Dataset, columns: Sequence[str]) -> float:
    """Mean 2-way total variation distance of ``release`` (a frame) to ``original`` over every
    pair of ``columns`` (:func:`crowdsafe.metrics.marginal_distances`)."""
    from crowdsafe.metrics import marginal_distances

    report = marginal_distances(original, release, list(columns))
    return float(report.to_dict()["two_way"]["mean_total_variation"])


@dataclass
class MarginalTruth:
    """The original table's 2-way marginals over the published columns (leaf codes of their
    hierarchies), and per column and level how many of the original's values each node covers."""

    columns: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    pairs: list[tuple[int, int]]
    cells: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per pair: leaf codes a, b and mass p
    covers: list[list[np.ndarray]]  # covers[j][l][node]: original values under it
    _cache: dict[tuple[int, tuple[int, int]], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False)

    @classmethod
    def of(cls, original: Dataset | CountedSample, columns: Sequence[str]) -> MarginalTruth:
        table = counted(original, columns)
        hierarchies = tuple(table.hierarchies[c] for c in table.columns)
        total = float(table.counts.sum())
        pairs = list(itertools.combinations(range(len(columns)), 2))
        cells = []
        for i, j in pairs:
            size = hierarchies[j].size(0)
            keys, inverse = np.unique(table.codes[:, i] * size + table.codes[:, j], return_inverse=True)
            mass = np.bincount(inverse.reshape(-1), weights=table.counts, minlength=len(keys)) / total
            cells.append((keys // size, keys % size, mass))
        covers = []
        for j, hierarchy in enumerate(hierarchies):
            if isinstance(original, Dataset):  # what the release's values cover in the original's domain
                domain = AttributeDomain.of(original, table.columns[j])
                covers.append([domain.cover(pl.Series([str(x) for x in hierarchy.labels[level]]), strict=False)
                               .size.astype(np.float64) for level in range(hierarchy.height + 1)])
                continue
            present = np.unique(table.codes[:, j])  # a counted table: the leaves it holds
            covers.append([np.bincount(hierarchy.leaf_map(level)[present], minlength=hierarchy.size(level))
                           .astype(np.float64) for level in range(hierarchy.height + 1)])
        return cls(tuple(columns), hierarchies, pairs, cells, covers)

    def _groups(self, p: int, levels: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For pair ``p`` at ``levels``: each truth cell's group (dense code of its two nodes), and
        per group the original values it covers and the truth cells it holds (cached)."""
        cached = self._cache.get((p, levels))
        if cached is None:
            (i, j), (li, lj) = self.pairs[p], levels
            hi, hj = self.hierarchies[i], self.hierarchies[j]
            a, b, _ = self.cells[p]
            span = hj.size(lj)
            groups = hi.leaf_map(li)[a].astype(np.int64) * span + hj.leaf_map(lj)[b]
            cover = np.outer(self.covers[i][li], self.covers[j][lj]).ravel()
            held = np.bincount(groups, minlength=len(cover)).astype(np.float64)
            cached = self._cache[(p, levels)] = (groups, cover, held)
        return cached

    def _pair_l1(self, p: int, levels: tuple[int, int], codes_i: np.ndarray, codes_j: np.ndarray,
                 mass: np.ndarray) -> float:
        """Σ over the pair's leaf tuples v of |p_v − r_v|, r the release's ``mass`` (per tuple of
        leaf codes ``codes_i``, ``codes_j``) spread uniformly over what each cell covers."""
        (i, j), (li, lj) = self.pairs[p], levels
        truth_groups, cover, held = self._groups(p, levels)
        span = self.hierarchies[j].size(lj)
        release_groups = self.hierarchies[i].leaf_map(li)[codes_i].astype(np.int64) * span \
            + self.hierarchies[j].leaf_map(lj)[codes_j]
        release = np.bincount(release_groups, weights=mass, minlength=len(cover))
        rate = np.divide(release, cover, out=np.zeros_like(release), where=cover > 0)
        truth = self.cells[p][2]
        return float(np.abs(truth - rate[truth_groups]).sum() + ((cover - held) * rate).sum())

    def level_tables(self, sample: CountedSample) -> list[np.ndarray]:
        """Per pair, the TVD of the whole sample's spread marginal (nothing suppressed) at every
        level combination of its two columns."""
        mass = sample.counts / float(sample.counts.sum())
        tables = []
        for p, (i, j) in enumerate(self.pairs):
            table = np.zeros((self.hierarchies[i].height + 1, self.hierarchies[j].height + 1))
            for levels in itertools.product(range(table.shape[0]), range(table.shape[1])):
                table[levels] = 0.5 * self._pair_l1(p, levels, sample.codes[:, i], sample.codes[:, j], mass)
            tables.append(table)
        return tables

    def node_tvd(self, sample: CountedSample, levels: Sequence[int], k: int) -> tuple[float, float]:
        """(mean 2-way TVD, suppressed share) of the release of node ``levels`` on ``sample``:
        classes of the whole tuple under ``k`` rows suppressed, the rest normalized. TVD 1 when
        everything is suppressed."""
        keys = np.zeros(sample.n_cells, dtype=np.int64)
        for j, (hierarchy, level) in enumerate(zip(self.hierarchies, levels)):
            keys = keys * hierarchy.size(level) + hierarchy.leaf_map(level).astype(np.int64)[sample.codes[:, j]]
        _, inverse = np.unique(keys, return_inverse=True)
        inverse = inverse.reshape(-1)
        sizes = np.bincount(inverse, weights=sample.counts)
        kept = sizes[inverse] >= k
        published = float(sample.counts[kept].sum())
        suppressed = 1.0 - published / float(sample.counts.sum())
        if published == 0:
            return 1.0, suppressed
        mass = sample.counts[kept] / published
        codes = sample.codes[kept]
        values = [0.5 * self._pair_l1(p, (levels[i], levels[j]), codes[:, i], codes[:, j], mass)
                  for p, (i, j) in enumerate(self.pairs)]
        return float(np.mean(values)), suppressed


def suppressed_shares(sample: CountedSample, lattice: Lattice, k: int) -> np.ndarray:
    """The share of ``sample`` each node of ``lattice`` suppresses (classes under ``k``), every
    node by a depth-first roll-up of the class tables."""
    from crowdsafe.selection.score import Objective
    from crowdsafe.selection.tables import KeyedTables
    from crowdsafe.selection.words import Keys

    tables = KeyedTables(sample, lattice.columns, Objective("retained"), k)
    shares = np.zeros(lattice.size)
    strides = lattice.strides
    total = float(sample.n_rows)

    def visit(attribute: int, keys: Keys, counts: np.ndarray, index: int) -> None:
        if attribute == tables.d:
            shares[index] = float(counts[counts < k].sum()) / total
            return
        for level in range(lattice.heights[attribute] + 1):
            if level > 0:
                keys, counts = tables.raise_level(keys, counts, attribute, level - 1, level)
            visit(attribute + 1, keys, counts, index + level * int(strides[attribute]))

    visit(0, tables.base_keys, tables.base_counts, 0)
    return shares


def lattice_tvd_ceiling(sample: Dataset | CountedSample, original: Dataset | CountedSample,
                        columns: Sequence[str], k: int) -> dict[str, Any]:
    """The node of the lattice of ``columns`` whose release of ``sample`` (classes under ``k``
    suppressed) has the smallest mean 2-way TVD to ``original`` (module docstring): its TVD, its
    levels, its suppressed share, and how many nodes were measured exactly. Also every node's
    bracket [lower, upper] (``lower``, ``upper``, in the lattice's order)."""
    table = counted(sample, columns)
    truth = MarginalTruth.of(original, columns)
    lattice = Lattice(tuple(columns), tuple(h.height for h in truth.hierarchies))
    shape = [h + 1 for h in lattice.heights]
    unsuppressed = np.zeros(shape)
    for (i, j), level_table in zip(truth.pairs, truth.level_tables(table)):
        view = [1] * len(shape)
        view[i], view[j] = shape[i], shape[j]
        unsuppressed = unsuppressed + level_table.reshape(view)
    unsuppressed = unsuppressed.ravel() / len(truth.pairs)
    shares = suppressed_shares(table, lattice, k)
    lower = np.maximum(unsuppressed - shares, 0.0)
    upper = np.minimum(unsuppressed + shares, 1.0)
    nodes = lattice.nodes()
    best: dict[str, Any] = {"tvd": float(upper.min()) + 1.0}
    measured = 0
    for index in np.argsort(lower, kind="stable"):
        if lower[index] > best["tvd"]:
            break
        value, suppressed = truth.node_tvd(table, nodes[index], k)
        measured += 1
        if value < best["tvd"]:
            best = {"tvd": value, "node": dict(zip(columns, (int(x) for x in nodes[index]))),
                    "suppression_rate": suppressed}
    return {**best, "nodes": lattice.size, "measured": measured, "lower": lower, "upper": upper}


def workload_comparison(data: Dataset, epsilon: float = 1.0, delta: float = 1e-6, seeds: int = 3,
                        objectives: Sequence[str | None] = ("retained", "marginals"), ceiling_seeds: int = 1,
                        seed: int = 0, test: Dataset | None = None, target: str = "income") -> list[dict[str, Any]]:
    """The issue's measurement: for each objective, ``crowdsafe publish`` planned as the command
    plans it (:func:`crowdsafe.anonymize.publish.plan_for_dataset`; None: the plan's default
    objective, recorded as ``objective`` with ``requested`` "default") and run ``seeds`` times, each
    release's mean 2-way TVD to ``data`` (:func:`release_tvd`) and the share of the sample it
    suppressed; with ``test``, also the test accuracy of the majority lookup trained on the release
    (each generalized tuple predicts its majority ``target``; NaN when the release generalizes
    ``target``); and, at each objective's plan, the lattice's best node on ``ceiling_seeds`` fresh
    samples (:func:`lattice_tvd_ceiling`). One row per release or ceiling, with the plan (k, β, ε1),
    the node and the seconds it took. The suppression and the accuracy are facts about the data:
    a custodian's experiment."""
    import time

    from crowdsafe.anonymize.publish import PlanRequest, plan_for_dataset, prepare_dataset, publish_dataset
    from crowdsafe.anonymize.published import PublishedScheme
    from crowdsafe.errors import ParameterError
    from crowdsafe.metrics import release_accuracy
    from crowdsafe.randomness import Randomness
    from crowdsafe.sampling import sample_of

    prepared, columns, _ = prepare_dataset(data)
    rows: list[dict[str, Any]] = []
    for objective in objectives:
        plan = plan_for_dataset(data, PlanRequest(epsilon, delta, objective=objective))
        common = {"objective": plan.objective, "requested": objective or "default", "epsilon": epsilon,
                  "k": plan.k, "beta": plan.beta, "epsilon1": plan.epsilon1}
        for run in range(seeds):
            start = time.perf_counter()
            publication = publish_dataset(data, plan, randomness=Randomness(seed + run))
            seconds = time.perf_counter() - start
            release = publication.release
            suppressed = float(publication.custodian_report()["releases"][0]["suppression_rate"])
            row = {**common, "method": "certified release", "seed": seed + run, "seconds": seconds,
                   "tvd": release_tvd(release.frame, data, columns) if release.rows_published else 1.0,
                   "suppression_rate": suppressed,
                   "node": dict(cast(PublishedScheme, release.recoding).levels)}
            if test is not None:
                features = [c for c in columns if c != target]
                try:
                    row["accuracy"] = release_accuracy(data, release.frame, test, target, features=features,
                                                       model="majority")
                except ParameterError:  # the release generalizes the target
                    row["accuracy"] = float("nan")
            rows.append(row)
        for run in range(ceiling_seeds):
            start = time.perf_counter()
            sample = sample_of(prepared, plan.beta, Randomness(seed + 1000 + run))
            found = lattice_tvd_ceiling(sample, data, columns, plan.k)
            rows.append({**common, "method": "best lattice node (ceiling)", "seed": seed + 1000 + run,
                         "tvd": found["tvd"], "seconds": time.perf_counter() - start, "node": found["node"],
                         "suppression_rate": found["suppression_rate"]})
    return rows
