"""The intersection (composition) attack over independent releases.

Ganta, Kasiviswanathan and Smith (2008), "Composition attacks and auxiliary information in data
privacy" (KDD): n releases R_1..R_n of overlapping populations, each k-anonymous (ℓ-diverse,
t-close) on its own, made independently. For a target i known to be in every release, with
known quasi-identifiers, the attacker

1. locates i's equivalence class E_ij in every release (:mod:`crowdsafe.attacks.locate`:
   exactly for generalization, by the nearest centroid for microaggregation);
2. takes S_ij, the distinct sensitive values in E_ij, and S_i = ∩_j S_ij.

Metrics (per target, then averaged over the targets):

- effective prior anonymity ea_ij = |S_ij| (and its minimum over the releases, the best any one
  release gives the attacker); effective posterior anonymity ea_i = |S_i|;
- anonymity drop = min_j ea_ij − ea_i; vulnerable population = targets with a positive drop;
- confidence c_i = 1/|S_i|; perfect breach: |S_i| = 1 (and, when the truth is known, whether
  that value is the target's); partial breach at level c: c_i ≥ c;
- presumed anonymity k, the actual average size of the located partitions, and the average
  effective anonymity.

Fair treatment of suppressed and sampled output (safe publishing samples rows and suppresses
classes): when no class of R_j can hold the target, R_j tells the attacker nothing and S_ij is
every sensitive value R_j publishes (so a target found in no release has the values all
releases publish as candidates). When the candidate sets contradict each other (S_i empty:
the target was not in some release although the attacker assumed it), the attack on that
target is counted as failed: ea_i = min_j ea_ij, no drop, confidence 0, no breach. A breach is
only counted as *true* when its value is the target's.

A sensitive cell published generalized (safe publishing recodes every published column) stands
for every value it covers: a class showing ``*`` may hold any value.

All of it runs on distinct target tuples, class tables and (tuple, value) pair tables: joins and
group-bys, no loop over targets.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import first_of_each
from crowdsafe.attacks.locate import (
    ClassTable,
    TargetTrie,
    class_tables_and_codes,
    encode_targets,
    group_ids,
    is_microaggregated,
    locate_exact,
    locate_nearest,
    read_tables,
    target_codes,
    target_codes_plan,
    target_trie,
)
from crowdsafe.data import Hierarchy
from crowdsafe.data.arrays import segments, sorted_unique
from crowdsafe.data.cell_reader import CellReader, Membership
from crowdsafe.data.generalized import CellKind, Domain, parse_cell
from crowdsafe.errors import InputError, ParameterError

Location = Literal["auto", "exact", "nearest"]
_GENERALIZED = np.array([CellKind.RANGE, CellKind.SET, CellKind.ANY], dtype=object)
DEFAULT_LEVELS = (0.25, 0.5, 0.75)
DENSE_PAIRS = 1 << 27  # (tuple, value) pairs tested against a bitmap up to this many, else by binary search


@dataclass(frozen=True)
class AttackedRelease:
    """One release as the attack sees it: its rows, a name, and the k it claims (if known)."""

    frame: pl.DataFrame
    name: str
    presumed_k: int | None = None


@dataclass(frozen=True)
class IntersectionResult:
    """``targets``: one row per target with its metrics; ``releases``: one row per release
    (presumed k, location, partition sizes, prior anonymity); ``summary``: the aggregates."""

    targets: pl.DataFrame
    releases: pl.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "releases": self.releases.to_dicts()}


def _as_text(series: pl.Series) -> pl.Series:
    return series.cast(pl.String) if series.dtype != pl.String else series


def check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    """The partial-breach confidence levels as floats, each in (0, 1] (else ParameterError)."""
    levels = tuple(float(c) for c in levels)
    if not levels or any(not 0.0 < c <= 1.0 for c in levels):
        raise ParameterError(f"confidence levels lie in (0, 1], got {list(levels)}")
    return levels


def intersection_attack(
    releases: Sequence[AttackedRelease | pl.DataFrame],
    targets: pl.DataFrame,
    qi: Sequence[str],
    sensitive: str,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    location: Location | Sequence[Location] = "auto",
    levels: Sequence[float] = DEFAULT_LEVELS,
    truth_id: str | None = None,
) -> IntersectionResult:
    """Run the intersection attack of ``targets`` over ``releases`` (module docstring).

    ``targets`` holds each target's quasi-identifiers ``qi``; when it also holds ``sensitive``,
    that column is the truth used to score breaches (never used by the attack). ``truth_id``: a
    column naming the record in both the targets and the releases, used only to measure how
    often the located class is the true one. ``location``: ``"exact"``, ``"nearest"`` or
    ``"auto"`` (nearest for releases that publish centroids), one value or one per release.
    ``hierarchies`` resolve hierarchy labels published in the releases.
    """
    qi = list(qi)
    levels = check_levels(levels)
    attacked = [r if isinstance(r, AttackedRelease) else AttackedRelease(r, f"R{j + 1}")
                for j, r in enumerate(releases)]
    if len(attacked) < 1:
        raise ParameterError("the intersection attack needs at least one release")
    locations = [location] * len(attacked) if isinstance(location, str) else list(location)
    if len(locations) != len(attacked) or any(m not in ("auto", "exact", "nearest") for m in locations):
        raise ParameterError("location is 'auto', 'exact' or 'nearest', one value or one per release")
    if not qi:
        raise ParameterError("name the quasi-identifiers the attacker knows (--qi a,b,c)")
    for c in qi:
        if c not in targets.columns:
            raise InputError(f"the targets have no column {c!r}; their columns are: {', '.join(targets.columns)}")
    for release in attacked:
        if sensitive not in release.frame.columns:
            raise InputError(f"release {release.name} has no sensitive column {sensitive!r}")
    if targets.height == 0:
        raise InputError("the targets table is empty")

    # every pass over rows in one parallel collection: a group-by per release, the targets' codes
    with_truth = sensitive in targets.columns
    columns = qi + [sensitive] if with_truth and sensitive not in qi else qi
    plan, direct = target_codes_plan(targets, columns, hierarchies or {})
    tables, physical = class_tables_and_codes([release.frame for release in attacked], qi, sensitive, plan)
    leaf_codes, distinct = target_codes(targets, columns, physical, hierarchies or {}, direct)
    domains, codes = encode_targets(targets, qi, hierarchies, distinct, leaf_codes)
    # distinct target tuples: the attack runs on them, targets inherit their tuple's result
    tuple_of_target, n_tuples = group_ids([codes[c] for c in qi], [domains[c].size for c in qi])
    first_target = first_of_each(tuple_of_target, n_tuples)
    tuple_codes = {c: codes[c][first_target] for c in qi}

    # the targets' own values join the candidates' domain (a hierarchy's leaves already hold them)
    true_values = distinct[sensitive][1].to_frame(sensitive) if sensitive in distinct else targets.head(0)
    domain = sensitive_domain([_as_text(t.sensitive_cells) for t in tables], true_values, sensitive,
                               (hierarchies or {}).get(sensitive))
    dictionary = _as_text(domain.values).alias(sensitive)
    reader = CellReader([domains[c] for c in qi] + [domain])  # reads the quasi-identifiers, then the sensitive

    # step 1, per release: locate every target tuple's classes, read their sensitive values
    @functools.cache
    def trie() -> TargetTrie:  # one trie of the target tuples for every exact location
        order = sorted(qi, key=lambda c: sum(len(t.distinct_cells[c]) for t in tables))
        return target_trie(tuple_codes, {c: domains[c].size for c in qi}, order)

    readings = [
        _read_release(table, read, method, qi, domains, tuple_codes, codes, n_tuples, trie)
        for table, read, method in zip(tables, read_tables(tables, qi, reader), locations)
    ]
    # step 2: intersect the candidate sets across releases
    n_values = len(dictionary)
    candidate = _intersect([r.candidates for r in readings], n_tuples * n_values)
    # per release, each target's prior anonymity and located partition size
    prior_of = [r.prior[tuple_of_target] for r in readings]
    partition_of = [r.partition[tuple_of_target] for r in readings]
    release_rows: list[dict[str, Any]] = []
    for j, (release, reading) in enumerate(zip(attacked, readings)):
        located = reading.matches > 0
        row: dict[str, Any] = {
            "release": release.name, "rows": release.frame.height, "classes": reading.table.n_classes,
            "presumed_k": release.presumed_k, "location": reading.method,
            "located": float(located[tuple_of_target].mean()),
            "ambiguous": float((reading.matches[tuple_of_target] > 1).mean()),
            "average_partition_size": float(np.nanmean(partition_of[j])) if located.any() else None,
            "average_prior_anonymity": float(prior_of[j].mean()),
            "correct_location": None,
        }
        if truth_id is not None and truth_id in release.frame.columns and truth_id in targets.columns:
            row["correct_location"] = _correct_location(release.frame, reading.table.class_of_rows(release.frame),
                                                        targets, truth_id, tuple_of_target, reading.tuples,
                                                        reading.classes)
        release_rows.append(row)

    candidate_tuple, candidate_value = np.divmod(candidate, n_values)
    posterior = np.bincount(candidate_tuple, minlength=n_tuples).astype(np.int64)
    only = np.full(n_tuples, -1, dtype=np.int64)
    only[candidate_tuple] = candidate_value  # read only where the candidate set has one value
    best_prior = np.minimum.reduce([r.prior for r in readings])
    contradiction = posterior == 0
    posterior = np.where(contradiction, best_prior, posterior)
    drop = best_prior - posterior
    confidence = np.where(contradiction, 0.0, 1.0 / np.maximum(posterior, 1))
    perfect = (posterior == 1) & ~contradiction

    # one frame, every column built in NumPy first
    on_target = perfect[tuple_of_target]
    breached = np.flatnonzero(on_target)  # few: the others infer nothing
    inferred = pl.Series("inferred_value", [None], dtype=pl.String).new_from_index(0, targets.height).scatter(
        breached, dictionary.gather(only[tuple_of_target[breached]]))
    per_target: dict[str, Any] = {
        "target": np.arange(targets.height, dtype=np.int64),
        "tuple": tuple_of_target,
        "prior_anonymity": best_prior[tuple_of_target],
        "posterior_anonymity": posterior[tuple_of_target],
        "drop": drop[tuple_of_target],
        "vulnerable": drop[tuple_of_target] > 0,
        "confidence": confidence[tuple_of_target],
        "perfect_breach": on_target,
        "contradiction": contradiction[tuple_of_target],
    }
    for j, release in enumerate(attacked):
        per_target[f"prior_{release.name}"] = prior_of[j]
        per_target[f"partition_{release.name}"] = partition_of[j]
    per_target["inferred_value"] = inferred.alias("inferred_value")
    if with_truth:  # the truth scores the breaches; the attack never reads it
        # a leaf code is the value's index in the dictionary: the hierarchy's leaves
        truth = leaf_codes[sensitive] if sensitive in leaf_codes else _value_codes(*distinct[sensitive], dictionary)
        per_target["true_value_in_candidates"] = (truth >= 0) & _in_sorted(
            tuple_of_target * np.int64(n_values) + np.maximum(truth, 0), candidate, n_tuples * n_values)
        per_target["perfect_breach_true"] = np.where(on_target, only[tuple_of_target], -2) == truth
    frame = pl.DataFrame(per_target)

    summary: dict[str, Any] = {
        "targets": targets.height,
        "releases": len(attacked),
        "quasi_identifiers": qi,
        "sensitive": sensitive,
        "average_prior_anonymity": float(frame.get_column("prior_anonymity").mean()),
        "average_posterior_anonymity": float(frame.get_column("posterior_anonymity").mean()),
        "average_drop": float(frame.get_column("drop").mean()),
        "vulnerable": float(frame.get_column("vulnerable").mean()),
        "perfect_breach": float(frame.get_column("perfect_breach").mean()),
        "partial_breach": {f"{c:g}": float((frame.get_column("confidence") >= c - 1e-12).mean()) for c in levels},
        "contradictions": int(frame.get_column("contradiction").sum()),
        "presumed_k": [r.presumed_k for r in attacked],
        "average_partition_size": [row["average_partition_size"] for row in release_rows],
    }
    if with_truth:
        summary["perfect_breach_true"] = float(per_target["perfect_breach_true"].mean())
        summary["true_value_in_candidates"] = float(per_target["true_value_in_candidates"].mean())
    return IntersectionResult(frame, pl.DataFrame(release_rows), summary)


def sensitive_domain(cells: Sequence[pl.Series], targets: pl.DataFrame, sensitive: str,
                      hierarchy: Hierarchy | None) -> Domain:
    """The sensitive values the candidate sets are made of: the hierarchy's leaves when there is
    one, else every plain value published (alone or in a set) or held by a target.
    ``cells``: each release's distinct sensitive cells, as text."""
    columns = list(cells)
    if sensitive in targets.columns:
        columns.append(_as_text(targets.get_column(sensitive).unique()))
    cells = pl.concat([c.alias(sensitive) for c in columns]).unique()
    if hierarchy is not None:
        return Domain.from_values(cells, hierarchy)
    plain: set[str | None] = set()
    for text in cells.to_list():
        cell = parse_cell(text)
        if cell.kind in (CellKind.VALUE, CellKind.MISSING):
            plain.add(text)
        elif cell.kind is CellKind.SET:
            plain.update(cell.members)
    return Domain(sensitive, pl.Series(sensitive, sorted(plain, key=lambda v: (v is None, v or "")), dtype=pl.String))


def _value_codes(codes: np.ndarray, distinct: pl.Series, dictionary: pl.Series) -> np.ndarray:
    """Each value's index in the sensitive ``dictionary`` (-1 when it is not there), for values
    given as ``distinct[codes]``."""
    index = pl.DataFrame({"v": dictionary, "value": np.arange(len(dictionary), dtype=np.int64)})
    found = (_as_text(distinct).alias("v").to_frame().join(index, on="v", how="left", nulls_equal=True,
                                                            maintain_order="left")
             .get_column("value").fill_null(-1).to_numpy())
    return found[codes]


def _in_sorted(keys: np.ndarray, sorted_keys: np.ndarray, universe: int) -> np.ndarray:
    """Which ``keys`` are in ``sorted_keys`` (sorted, distinct, all in ``[0, universe)``): a
    bitmap look-up when the universe is small enough, else binary search."""
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=bool)
    if universe <= DENSE_PAIRS:
        present = np.zeros(universe, dtype=bool)
        present[sorted_keys] = True
        return present[keys]
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


@dataclass(frozen=True)
class _Reading:
    """What one release tells the attacker about every target tuple.

    ``candidates``: the sorted, distinct pairs ``tuple * n_values + value`` of the candidate
    sets S_ij; ``prior``: |S_ij| per tuple; ``partition``: the summed size of the located
    classes (NaN when none); ``matches``: how many classes were located; ``tuples``/``classes``:
    the located (tuple, class) pairs.
    """

    table: ClassTable
    method: str
    candidates: np.ndarray
    prior: np.ndarray
    partition: np.ndarray
    matches: np.ndarray
    tuples: np.ndarray
    classes: np.ndarray


def _read_release(table: ClassTable, read: tuple[dict[str, Membership], Membership | None], method: str,
                  qi: Sequence[str], domains: Mapping[str, Domain], tuple_codes: Mapping[str, np.ndarray],
                  target_codes_: Mapping[str, np.ndarray], n_tuples: int, trie: Callable[[], TargetTrie]
                  ) -> _Reading:
    """Step 1 of the attack on one release: locate every target tuple's classes (exactly, or by
    the nearest centroid) and read each class's sensitive-value set; a tuple located nowhere
    gets every value the release publishes. ``read``: what the table's quasi-identifier cells
    and sensitive cells cover (:func:`~crowdsafe.attacks.locate.read_tables`); ``trie``: the
    target tuples' trie, for exact location."""
    covers, sensitive_cover = read
    if method == "auto":
        # a cell read as a range, a set or '*' is generalized: no centroids (else check in full)
        generalized = any(np.isin(cover.kind, _GENERALIZED).any() for cover in covers.values())
        method = "nearest" if not generalized and is_microaggregated(table, domains) else "exact"
    if method == "exact":
        tuples, classes = locate_exact(table, covers, tuple_codes, trie())
    else:
        classes = locate_nearest(table, qi, domains, covers, tuple_codes, target_codes_)
        tuples = np.arange(n_tuples, dtype=np.int64)
    indptr, class_values = _class_values(table, sensitive_cover)
    n_values = sensitive_cover.domain_size
    published = sorted_unique(class_values, n_values)
    sizes = table.sizes
    matches = np.bincount(tuples, minlength=n_tuples)
    located = matches > 0
    partition = np.full(n_tuples, np.nan)
    partition[located] = np.bincount(tuples, weights=sizes[classes], minlength=n_tuples)[located]
    fan = np.diff(indptr)[classes]
    found = np.repeat(tuples, fan) * n_values + class_values[segments(indptr[classes], fan)]
    nowhere = np.flatnonzero(~located)  # the release tells nothing: every published value stays
    everything = (np.repeat(nowhere, len(published)) * n_values + np.tile(published, len(nowhere)))
    candidates = sorted_unique(np.concatenate([found, everything]), n_tuples * n_values)
    counts = np.bincount(candidates // n_values, minlength=n_tuples)
    prior = np.where(counts > 0, counts, len(published)).astype(np.int64)
    return _Reading(table, method, candidates, prior, partition, matches, tuples, classes)


def _intersect(candidates: Sequence[np.ndarray], universe: int) -> np.ndarray:
    """Step 2: the pairs in every release's candidate set, S_i = ∩_j S_ij (sorted keys)."""
    common = candidates[0]
    for other in candidates[1:]:
        common = common[_in_sorted(common, other, universe)]
    return common


def _class_values(table: ClassTable, cover: Membership) -> tuple[np.ndarray, np.ndarray]:
    """The sensitive values each class may hold, as a CSR over classes (``indptr``, the
    values' codes, sorted and distinct within each class). A generalized
    sensitive cell (a set, a hierarchy label, '*') stands for every value it covers
    (``cover``: what each of ``table.sensitive_cells`` covers)."""
    assert table.sensitive_cells is not None and table.sensitive_held is not None
    holder, cell = table.sensitive_held  # (class, cell) pairs, maybe repeated: the values' pass dedupes
    fan = cover.size[cell]
    n_values = cover.domain_size
    pairs = sorted_unique(np.repeat(holder, fan) * n_values + cover.indices[segments(cover.indptr[cell], fan)],
                          table.n_classes * n_values)
    klass, value = np.divmod(pairs, n_values)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(klass, minlength=table.n_classes))]).astype(np.int64)
    return indptr, value


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
    return float(hits.mean())
