"""The Polars engine's tables for the intersection attack (:func:`crowdsafe.attacks.intersection.run_intersection`).

Everything runs in this process on distinct target tuples: one parallel collection reads every
release's classes in a second thread (Polars holds no GIL meanwhile) while this thread runs the
targets' side (their pass over their rows, their codes, distinct tuples and trie); it then
builds the class tables, reads the classes' cells and builds the classes' side of the location
(:mod:`crowdsafe.attacks.locate`); the location is one trie walk of every release
(:mod:`crowdsafe.attacks.exact_location`); the candidate sets and their intersection are one
64-bit mask per tuple while the sensitive domain has at most 64 values (fast path,
:mod:`crowdsafe.attacks.value_masks`), else sorted NumPy keys ``tuple * n_values + value`` (its
reference twin); the metrics are NumPy columns of one frame. No loop over targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import first_of_each
from crowdsafe.attacks import value_masks
from crowdsafe.attacks.exact_location import ClassTrie, TargetTrie, class_trie, target_trie, walk
from crowdsafe.attacks.intersection import (
    AttackedRelease,
    IntersectionResult,
    Location,
    Scores,
    as_text,
    check_locations,
)
from crowdsafe.attacks.locate import (
    ClassTable,
    class_tables_and_codes,
    encode_targets,
    group_ids,
    is_microaggregated,
    leaf_masks,
    locate_nearest,
    read_tables,
    target_codes,
    target_codes_plan,
)
from crowdsafe.attacks.unread import describe_unread, unread_cells
from crowdsafe.data import Hierarchy
from crowdsafe.data.arrays import segments, sorted_unique
from crowdsafe.data.cell_reader import CellCovers
from crowdsafe.data.generalized import AttributeDomain, CellKind, leaf_domain
from crowdsafe.errors import InputError

_GENERALIZED = frozenset({CellKind.RANGE, CellKind.SET, CellKind.ANY})
DENSE_PAIRS = 1 << 27  # (tuple, value) pairs tested against a bitmap up to this many, else by binary search



@dataclass(frozen=True)
class _TargetSide:
    """The targets' side of the attack, made while a second thread collects the releases'
    group-bys (:meth:`PolarsAttackTables.sensitive_cells`): the codes of :func:`target_codes` and
    :func:`encode_targets`, the distinct target tuples (``tuple_of_target``: each target's tuple,
    ``tuple_codes``: each tuple's codes) and their trie in :func:`walk_order`."""

    leaf_codes: dict[str, np.ndarray]
    distinct: dict[str, tuple[np.ndarray, pl.Series]]
    domains: dict[str, AttributeDomain]
    codes: dict[str, np.ndarray]
    tuple_of_target: np.ndarray
    n_tuples: int
    tuple_codes: dict[str, np.ndarray]
    trie: TargetTrie


def require_target_columns(columns: Sequence[str], qi: Sequence[str]) -> None:
    """Raise :class:`InputError` naming the first quasi-identifier the targets table lacks."""
    for c in qi:
        if c not in columns:
            raise InputError(f"the targets have no column {c!r}; their columns are: {', '.join(columns)}")

class PolarsAttackTables:
    """The attack's tables in this process: the releases' class tables and the targets' codes
    (:class:`~crowdsafe.attacks.intersection.AttackTables`)."""

    def __init__(self, releases: Sequence[AttackedRelease], targets: pl.DataFrame,
                 hierarchies: Mapping[str, Hierarchy] | None) -> None:
        self.releases = list(releases)
        self.targets = targets
        self.hierarchies = hierarchies
        self.names = [r.name for r in self.releases]
        self.presumed_k = [r.presumed_k for r in self.releases]

    def locations(self, location: Location | Sequence[Location]) -> list[str]:
        return check_locations(location, len(self.releases))

    def check(self, qi: list[str], sensitive: str) -> None:
        targets = self.targets
        require_target_columns(targets.columns, qi)
        for release in self.releases:
            if sensitive not in release.frame.columns:
                raise InputError(f"release {release.name} has no sensitive column {sensitive!r}")
        if targets.height == 0:
            raise InputError("the targets table is empty")

    def sensitive_cells(self, qi: list[str], sensitive: str) -> tuple[list[pl.Series], pl.DataFrame]:
        """Every pass over rows at once (a group-by per release in a second thread, the targets'
        codes in this one), then the distinct target tuples: the attack runs on them, targets
        inherit their tuple's result."""
        targets, hierarchies = self.targets, self.hierarchies
        self.with_truth = sensitive in targets.columns
        columns = qi + [sensitive] if self.with_truth and sensitive not in qi else qi
        # a quasi-identifier with a hierarchy has its leaves for domain whatever the targets hold
        # (encode_targets): with one for each, the classes' cells are read while the targets' codes
        # are made, and the sensitive cells too when it has one (sensitive_domain); so are the
        # classes' trie and sensitive masks
        early = [leaf_domain(c, hierarchies[c]) for c in [*qi, sensitive] if hierarchies and c in hierarchies]
        self.early: tuple[list[AttributeDomain], list[tuple[dict[str, CellCovers], CellCovers | None]]] | None = None
        self.prepared: tuple[ClassTrie, list[np.ndarray] | None] | None = None

        def read_early(tables: list[ClassTable]) -> None:
            if len(early) < len(qi) or any(d.name != c for d, c in zip(early, qi)):
                return
            try:
                self.early = early, read_tables(tables, qi, early)
            except Exception:  # a cell refused: refused again where the cells are read, in order
                self.early = None
                return
            read = self.early[1]
            masks = None
            if len(early) > len(qi) and value_masks.fits_masks(early[-1].size):
                masks = [value_masks.class_masks(t.n_classes, cast(tuple, t.sensitive_held), cast(CellCovers, cover))
                         for t, (_, cover) in zip(tables, read)]
            order = walk_order(qi, {d.name: d.size for d in early[:len(qi)]})  # (the targets' domains)
            self.prepared = class_trie(tables, [covers for covers, _ in read], order), masks

        hierarchy = (hierarchies or {}).get(sensitive)
        leaves = leaf_masks(hierarchy, leaf_domain(sensitive, hierarchy) if hierarchy is not None else None)

        def targets_side() -> _TargetSide:  # while a second thread collects the releases' group-bys
            plan, direct = target_codes_plan(targets, columns, hierarchies or {})
            leaf_codes, distinct = target_codes(targets, columns, plan.collect(), hierarchies or {}, direct)
            domains, codes = encode_targets(targets, qi, hierarchies, distinct, leaf_codes)
            sizes = {c: domains[c].size for c in qi}
            tuple_of_target, n_tuples = group_ids([codes[c] for c in qi], [sizes[c] for c in qi])
            first_target = first_of_each(tuple_of_target, n_tuples)
            tuple_codes = {c: codes[c][first_target] for c in qi}
            # one trie of the target tuples for every exact location
            trie = target_trie(tuple_codes, sizes, walk_order(qi, sizes))
            return _TargetSide(leaf_codes, distinct, domains, codes, tuple_of_target, n_tuples, tuple_codes, trie)

        self.tables, side = class_tables_and_codes([release.frame for release in self.releases], qi, sensitive,
                                                   targets_side, read_early, leaves)
        self.leaf_codes, self.distinct, self.domains = side.leaf_codes, side.distinct, side.domains
        self.codes, self.tuple_of_target, self.n_tuples = side.codes, side.tuple_of_target, side.n_tuples
        self.tuple_codes, self.trie = side.tuple_codes, side.trie
        # the targets' own values join the candidates' domain (a hierarchy's leaves already hold them)
        distinct = self.distinct
        true_values = distinct[sensitive][1].to_frame(sensitive) if sensitive in distinct else targets.head(0)
        # (tables read with a sensitive column: each holds its sensitive cells)
        return [as_text(cast(pl.Series, t.sensitive_cells)) for t in self.tables], true_values

    def score(self, qi: list[str], sensitive: str, domain: AttributeDomain, locations: list[str],
              levels: tuple[float, ...], truth_id: str | None) -> Scores:
        targets, tables, domains = self.targets, self.tables, self.domains
        tuple_of_target, n_tuples, tuple_codes = self.tuple_of_target, self.n_tuples, self.tuple_codes
        dictionary = as_text(domain.values).alias(sensitive)
        reader = [domains[c] for c in qi] + [domain]  # the cells' domains: the quasi-identifiers, then the sensitive

        # step 1, per release: locate every target tuple's classes, read their sensitive values
        reads = self._read_cells(qi, reader)
        early = self.prepared if self.early is not None and reads is self.early[1] else None
        methods = [_method(table, read[0], method, domains) for table, read, method in zip(tables, reads, locations)]
        exact = [j for j, method in enumerate(methods) if method == "exact"]  # located in one walk
        pairs: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if exact:
            trie = self.trie
            classes = (early[0] if early is not None and len(exact) == len(tables) and early[0].order == trie.order
                       else class_trie([tables[j] for j in exact], [reads[j][0] for j in exact], trie.order))
            pairs = dict(zip(exact, walk(classes, trie)))
        masks = early[1] if early is not None else None
        readings = [
            _read_release(table, read, method, pairs.get(j), masks[j] if masks is not None else None, qi, domains,
                          tuple_codes, self.codes, n_tuples)
            for j, (table, read, method) in enumerate(zip(tables, reads, methods))
        ]
        # step 2: intersect the candidate sets across releases
        n_values = len(dictionary)
        masked = value_masks.fits_masks(n_values)  # (each reading chose the same way)
        if masked:
            common = value_masks.intersect_masks([r.candidates for r in readings])
            posterior, only = value_masks.sizes_and_only(common)
        else:
            candidate, constrained, everywhere = _intersect(readings, n_tuples, n_values)
            candidate_tuple, candidate_value = np.divmod(candidate, n_values)
            posterior = np.bincount(candidate_tuple, minlength=n_tuples).astype(np.int64)
            only = np.full(n_tuples, -1, dtype=np.int64)
            only[candidate_tuple] = candidate_value  # read only where the candidate set has one value
            # a tuple no release constrains: every value all releases publish, the same set for all
            posterior[~constrained] = len(everywhere)
            only[~constrained] = everywhere[0] if len(everywhere) == 1 else -1
        # the targets' means over the tuples, each weighted by its targets: exact integer sums
        # over the count, the values means over the targets' rows gave
        weight = np.bincount(tuple_of_target, minlength=n_tuples)
        n_targets = targets.height
        release_stats: list[dict[str, Any]] = []
        for release, reading, read in zip(self.releases, readings, reads):
            located = reading.matches > 0
            on_located = int(weight[located].sum())
            row: dict[str, Any] = {
                "rows": release.frame.height, "classes": reading.table.n_classes, "location": reading.method,
                "located": on_located / n_targets,
                "ambiguous": int(weight[reading.matches > 1].sum()) / n_targets,
                "average_partition_size": (int((weight[located] * reading.partition[located]).sum()) / on_located
                                           if on_located else None),
                "average_prior_anonymity": _weighted_mean(weight, reading.prior, n_targets),
                "correct_location": None,
                "unread_cells": describe_unread(unread_cells(read[0], domains)),
            }
            if truth_id is not None and truth_id in release.frame.columns and truth_id in targets.columns:
                row["correct_location"] = _correct_location(release.frame,
                                                            reading.table.class_of_rows(release.frame), targets,
                                                            truth_id, tuple_of_target, reading.tuples,
                                                            reading.classes)
            release_stats.append(row)

        best_prior = np.minimum.reduce([r.prior for r in readings])
        contradiction = posterior == 0
        posterior = np.where(contradiction, best_prior, posterior)
        drop = best_prior - posterior
        confidence = np.where(contradiction, 0.0, 1.0 / np.maximum(posterior, 1))
        perfect = (posterior == 1) & ~contradiction

        # the per-target table is one frame per tuple, its rows gathered per target by Polars when read
        per_tuple: dict[str, Any] = {
            "prior_anonymity": best_prior,
            "posterior_anonymity": posterior,
            "drop": drop,
            "vulnerable": drop > 0,
            "confidence": confidence,
            "perfect_breach": perfect,
            "contradiction": contradiction,
        }
        for release, reading in zip(self.releases, readings):
            per_tuple[f"prior_{release.name}"] = reading.prior
            per_tuple[f"partition_{release.name}"] = reading.partition
        truth_columns: dict[str, np.ndarray] = {}
        if self.with_truth:  # the truth scores the breaches; the attack never reads it
            # a leaf code is the value's index in the dictionary: the hierarchy's leaves
            truth = (self.leaf_codes[sensitive] if sensitive in self.leaf_codes
                     else _value_codes(*self.distinct[sensitive], dictionary))
            if masked:
                held = value_masks.holds(common[tuple_of_target], np.maximum(truth, 0))
            else:
                value = np.maximum(truth, 0)
                published = np.zeros(n_values, dtype=bool)
                published[everywhere] = True
                keys = tuple_of_target * np.int64(n_values) + value
                held = np.where(constrained[tuple_of_target], _in_sorted(keys, candidate, n_tuples * n_values),
                                published[value])
            truth_columns["true_value_in_candidates"] = (truth >= 0) & held
            truth_columns["perfect_breach_true"] = np.where(perfect[tuple_of_target], only[tuple_of_target],
                                                            -2) == truth

        def frame() -> pl.DataFrame:
            return _per_target_table(per_tuple, dictionary[only[perfect]], tuple_of_target, truth_columns)

        aggregates: dict[str, Any] = {
            "targets": n_targets,
            "average_prior_anonymity": _weighted_mean(weight, best_prior, n_targets),
            "average_posterior_anonymity": _weighted_mean(weight, posterior, n_targets),
            "average_drop": _weighted_mean(weight, drop, n_targets),
            "vulnerable": _weighted_mean(weight, drop > 0, n_targets),
            "perfect_breach": _weighted_mean(weight, perfect, n_targets),
            "partial_breach": [_weighted_mean(weight, confidence >= c - 1e-12, n_targets) for c in levels],
            "contradictions": int(weight[contradiction].sum()),
        }
        if self.with_truth:
            aggregates["perfect_breach_true"] = float(truth_columns["perfect_breach_true"].mean())
            aggregates["true_value_in_candidates"] = float(truth_columns["true_value_in_candidates"].mean())
        return Scores(frame, aggregates, release_stats)

    def _read_cells(self, qi: list[str], reader: list[AttributeDomain]
                    ) -> list[tuple[dict[str, CellCovers], CellCovers | None]]:
        """What the classes' quasi-identifier and sensitive cells cover in ``reader`` (the
        quasi-identifiers' domains, then the sensitive one): the quasi-identifiers' as read while
        the targets' codes were (:meth:`sensitive_cells`) when those were the same domains."""
        if self.early is not None and len(self.early[0]) == len(reader) and all(
                d is r for d, r in zip(self.early[0], reader)):
            return self.early[1]  # (read with the sensitive cells: its domain was the hierarchy's leaves)
        if self.early is not None and all(d is r for d, r in zip(self.early[0], reader[:len(qi)])):
            sensitive = read_tables(self.tables, [], reader[len(qi):])
            return [(covers, cover) for (covers, _), (_, cover) in zip(self.early[1], sensitive)]
        return read_tables(self.tables, qi, reader)

    def result(self, targets: pl.DataFrame, releases: pl.DataFrame, summary: dict[str, Any]) -> IntersectionResult:
        return IntersectionResult(targets, releases, summary)


def _per_target_table(per_tuple: Mapping[str, np.ndarray], inferred: pl.Series, tuple_of_target: np.ndarray,
                      truth_columns: Mapping[str, np.ndarray]) -> pl.DataFrame:
    """The per-target table: ``target`` (its row in the targets), ``tuple``, the metrics of its
    tuple (``per_tuple``, one array per column, and ``inferred_value``: ``inferred`` are the
    values of the perfect breaches, in the order of the tuples) and ``truth_columns``."""
    perfect = per_tuple["perfect_breach"]
    n_tuples = len(perfect)
    inferred_value = pl.Series("inferred_value", [None], dtype=pl.String).new_from_index(0, n_tuples).scatter(
        np.flatnonzero(perfect), inferred)
    frame = pl.DataFrame({**per_tuple, "inferred_value": inferred_value})[tuple_of_target]
    first = pl.DataFrame({"target": np.arange(len(tuple_of_target), dtype=np.int64), "tuple": tuple_of_target})
    return pl.concat([first, frame] + ([pl.DataFrame(dict(truth_columns))] if truth_columns else []),
                     how="horizontal")


def _mean(series: pl.Series) -> float:
    """The series' mean as a float (Polars types a mean as any Python value)."""
    return float(cast(float, series.mean()))


def _weighted_mean(weight: np.ndarray, values: np.ndarray, n: int) -> float:
    """The mean over ``n`` targets of integer (or boolean, or integral float) per-tuple
    ``values``, tuple t standing for ``weight[t]`` targets: the exact integer sum over the
    count, the value a float mean over the targets' rows gives while the sum stays below 2**53,
    whatever its order of summation."""
    return int((weight * values).sum(dtype=np.int64)) / n


def _value_codes(codes: np.ndarray, distinct: pl.Series, dictionary: pl.Series) -> np.ndarray:
    """Each value's index in the sensitive ``dictionary`` (-1 when it is not there), for values
    given as ``distinct[codes]``."""
    index = pl.DataFrame({"v": dictionary, "value": np.arange(len(dictionary), dtype=np.int64)})
    found = (as_text(distinct).alias("v").to_frame().join(index, on="v", how="left", nulls_equal=True,
                                                            maintain_order="left")
             .get_column("value").fill_null(-1).to_numpy())
    return found[codes]


def _in_sorted(keys: np.ndarray, sorted_keys: np.ndarray, universe: int) -> np.ndarray:
    """Which ``keys`` are in ``sorted_keys`` (sorted, distinct, all in ``[0, universe)``).

    Fast path :func:`_in_sorted_by_bitmap` while the universe has at most :data:`DENSE_PAIRS`
    keys, else its reference twin :func:`_in_sorted_by_search`; both give the same answer."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    if universe <= DENSE_PAIRS:
        return _in_sorted_by_bitmap(keys, sorted_keys, universe)
    return _in_sorted_by_search(keys, sorted_keys)


def _in_sorted_by_bitmap(keys: np.ndarray, sorted_keys: np.ndarray, universe: int) -> np.ndarray:
    """:func:`_in_sorted` by a look-up in a bitmap of the ``universe`` (one byte per key)."""
    present = np.zeros(universe, dtype=bool)
    present[sorted_keys] = True
    return present[keys]


def _in_sorted_by_search(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """:func:`_in_sorted` by binary search in ``sorted_keys`` (non-empty): memory bounded by the
    keys, whatever the universe."""
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


@dataclass(frozen=True)
class _Reading:
    """What one release tells the attacker about every target tuple.

    ``candidates``: the candidate sets S_ij, one mask per tuple
    (:mod:`~crowdsafe.attacks.value_masks`, while :func:`~crowdsafe.attacks.value_masks.fits_masks`)
    or else the sorted, distinct pairs ``tuple * n_values + value`` of the located tuples only
    (a tuple located nowhere has for S_ij every value in ``published``, never listed pair by pair:
    tuples × values; nor is a tuple in a class showing '*'); ``published``: the values the
    release publishes (sorted codes); ``constraining``: the tuples whose S_ij ``candidates``
    lists (located, in no class standing for every value); ``prior``: |S_ij| per
    tuple; ``partition``: the summed size of the located classes (NaN when none); ``matches``:
    how many classes were located; ``tuples``/``classes``: the located (tuple, class) pairs.
    """

    table: ClassTable
    method: str
    candidates: np.ndarray
    published: np.ndarray
    constraining: np.ndarray
    prior: np.ndarray
    partition: np.ndarray
    matches: np.ndarray
    tuples: np.ndarray
    classes: np.ndarray


def _method(table: ClassTable, covers: Mapping[str, CellCovers], method: str,
            domains: Mapping[str, AttributeDomain]) -> str:
    """The location method of one release: ``method``, or for ``"auto"`` nearest when no cell
    is read as a range, a set or '*' and the release publishes centroids, else exact."""
    if method != "auto":
        return method
    generalized = any(not _GENERALIZED.isdisjoint(cover.kind.tolist()) for cover in covers.values())
    return "nearest" if not generalized and is_microaggregated(table, domains) else "exact"


def walk_order(qi: Sequence[str], sizes: Mapping[str, int]) -> list[str]:
    """The columns in the order the location walks them: the smallest domains first (``sizes``:
    each column's domain size; ties in the order of ``qi``). The targets' trie then branches
    late, so few (target prefix, class prefix) pairs are formed before the wide columns
    (docs/performance.md compares it with the fewest published cells first). It depends on the
    targets' domains only: the targets' trie is built while the releases' group-bys run."""
    return sorted(qi, key=lambda c: sizes[c])


def _read_release(table: ClassTable, read: tuple[dict[str, CellCovers], CellCovers | None], method: str,
                  pairs: tuple[np.ndarray, np.ndarray] | None, masks: np.ndarray | None, qi: Sequence[str],
                  domains: Mapping[str, AttributeDomain], tuple_codes: Mapping[str, np.ndarray],
                  target_codes_: Mapping[str, np.ndarray], n_tuples: int) -> _Reading:
    """Step 1 of the attack on one release: locate every target tuple's classes (exactly, or by
    the nearest centroid) and read each class's sensitive-value set; a tuple located nowhere
    gets every value the release publishes. ``read``: what the table's quasi-identifier cells
    and sensitive cells cover (:func:`~crowdsafe.attacks.locate.read_tables`); ``method``:
    ``"exact"`` or ``"nearest"`` (:func:`_method`); ``pairs``: the located (tuple, class)
    pairs of an exact location (:func:`~crowdsafe.attacks.exact_location.walk`); ``masks``: each
    class's sensitive mask when already made (:func:`~crowdsafe.attacks.value_masks.class_masks`)."""
    covers, maybe_cover = read
    sensitive_cover = cast(CellCovers, maybe_cover)  # (read with the sensitive column: always there)
    if pairs is not None:
        tuples, classes = pairs
    else:
        classes = locate_nearest(table, qi, domains, covers, tuple_codes, target_codes_)
        tuples = np.arange(n_tuples, dtype=np.int64)
    n_values = sensitive_cover.domain_size
    sizes = table.sizes
    matches = np.bincount(tuples, minlength=n_tuples)
    located = matches > 0
    partition = np.full(n_tuples, np.nan)
    partition[located] = np.bincount(tuples, weights=sizes[classes], minlength=n_tuples)[located]
    if value_masks.fits_masks(n_values):
        assert table.sensitive_held is not None  # (read with the sensitive column)
        if masks is None:  # (else made while the targets' codes were)
            masks = value_masks.class_masks(table.n_classes, table.sensitive_held, sensitive_cover)
        candidates, prior = value_masks.tuple_masks(n_tuples, tuples, classes, masks)
        return _Reading(table, method, candidates, np.zeros(0, dtype=np.int64), located, prior, partition, matches,
                        tuples, classes)
    indptr, class_values, whole = _class_values(table, sensitive_cover)
    published = np.arange(n_values, dtype=np.int64) if whole.any() else sorted_unique(class_values, n_values)
    # a tuple in a class whose cell covers the whole domain ('*') may hold any value the release
    # publishes, as a tuple located nowhere: a set, not listed value by value
    open_ = np.zeros(n_tuples, dtype=bool)
    open_[tuples[whole[classes]]] = True
    listed = ~open_[tuples]
    fan = np.diff(indptr)[classes[listed]]
    found = (np.repeat(tuples[listed], fan) * n_values
             + class_values[segments(indptr[classes[listed]], fan)])
    candidates = sorted_unique(found, n_tuples * n_values)  # a tuple located nowhere: `published`, as a set
    counts = np.bincount(candidates // n_values, minlength=n_tuples)
    prior = np.where(counts > 0, counts, len(published)).astype(np.int64)
    return _Reading(table, method, candidates, published, located & ~open_, prior, partition, matches, tuples,
                    classes)


def _intersect(readings: Sequence[_Reading], n_tuples: int, n_values: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 2, S_i = ∩_j S_ij, over sorted keys ``tuple * n_values + value``: the keys of the
    tuples some release constrains, which tuples those are, and the values every release
    publishes (S_i of a tuple no release constrains).

    S_ij is the located classes' values where release j locates tuple i, else every value j
    publishes (so it is too where a located class shows '*': ``constraining``). Going through
    the releases in turn: a key already kept stays when this release constrains its tuple and
    lists it, or does not and publishes its value; a tuple constrained here for the first time
    brings its keys whose values every earlier release publishes (none of them constrained it).
    Only the constrained tuples' keys are ever formed, never an unconstrained tuple × every
    published value (millions of keys with a sensitive column of many values and a few thousand
    targets)."""
    universe = n_tuples * n_values
    common = np.zeros(0, dtype=np.int64)
    constrained = np.zeros(n_tuples, dtype=bool)  # constrained by some release so far
    everywhere = np.ones(n_values, dtype=bool)  # published by every release so far
    for reading in readings:
        located = reading.constraining
        published = np.zeros(n_values, dtype=bool)
        published[reading.published] = True
        tuple_of, value_of = np.divmod(common, n_values)
        kept = np.where(located[tuple_of], _in_sorted(common, reading.candidates, universe), published[value_of])
        tuple_of, value_of = np.divmod(reading.candidates, n_values)
        first = reading.candidates[~constrained[tuple_of] & everywhere[value_of]]
        common = sorted_unique(np.concatenate([common[kept], first]), universe)
        constrained |= located
        everywhere &= published
    return common, constrained, np.flatnonzero(everywhere)


def _class_values(table: ClassTable, cover: CellCovers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sensitive values each class may hold, as a CSR over classes (``indptr``, the
    values' codes, sorted and distinct within each class), and which classes hold a cell
    covering the whole domain (their row of the CSR left empty: every value, never listed). A
    generalized sensitive cell (a set, a hierarchy label, '*') stands for every value it covers
    (``cover``: what each of ``table.sensitive_cells`` covers)."""
    assert table.sensitive_cells is not None and table.sensitive_held is not None
    holder, cell = table.sensitive_held  # (class, cell) pairs, maybe repeated: the values' pass dedupes
    n_values = cover.domain_size
    whole = np.zeros(table.n_classes, dtype=bool)
    whole[holder[cover.size[cell] == n_values]] = True
    listed = ~whole[holder]
    holder, cell = holder[listed], cell[listed]
    fan = cover.size[cell]
    pairs = sorted_unique(np.repeat(holder, fan) * n_values + cover.indices[segments(cover.indptr[cell], fan)],
                          table.n_classes * n_values)
    klass, value = np.divmod(pairs, n_values)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(klass, minlength=table.n_classes))]).astype(np.int64)
    return indptr, value, whole


def _correct_location(frame: pl.DataFrame, class_of_row: np.ndarray, targets: pl.DataFrame, truth_id: str,
                      tuple_of_target: np.ndarray, tuples: np.ndarray, classes: np.ndarray) -> float | None:
    """Share of the targets present in the release whose true class is among the located ones."""
    # ids compared as text: a release read from CSV holds them as text, typed targets as numbers
    truth = (targets.select(pl.col(truth_id).cast(pl.String), pl.Series("tuple", tuple_of_target))
             .join(pl.DataFrame({truth_id: frame.get_column(truth_id).cast(pl.String), "class": class_of_row}),
                   on=truth_id, how="inner"))
    if truth.height == 0:
        return None
    located = pl.DataFrame({"tuple": tuples, "class": classes, "hit": np.ones(len(tuples), dtype=bool)})
    hits = truth.join(located, on=["tuple", "class"], how="left").get_column("hit").fill_null(False)
    return _mean(hits)
