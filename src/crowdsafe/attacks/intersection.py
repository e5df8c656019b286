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
group-bys, no loop over targets. The algorithm (:func:`run_intersection`) is written once over an
engine's :class:`AttackTables`: the Polars engine's are :mod:`crowdsafe.attacks.intersection_tables`
(NumPy on the driver), the Spark engine's :mod:`crowdsafe.engines.spark.attacks` (joins on Spark).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import polars as pl

from crowdsafe.arguments import names
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import AttributeDomain, CellKind, leaf_domain, parse_cell
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity

Location = Literal["auto", "exact", "nearest"]
# confidence is 1/|S_i|, so a level c counts the targets with at most ⌊1/c⌋ candidate values; any
# level above 1/2 counts the perfect breaches again (0.75 was a default until 2026-11-30)
DEFAULT_LEVELS = (0.25, 0.5)


@dataclass(frozen=True)
class AttackedRelease:
    """One release as the attack sees it: its rows, a name, and the k it claims (if known)."""

    frame: pl.DataFrame
    name: str
    presumed_k: int | None = None


class IntersectionResult:
    """``targets``: one row per target with its metrics; ``releases``: one row per release
    (presumed k, location, partition sizes, prior anonymity); ``summary``: the aggregates.

    The per-target table may be given as a function that makes it: it is then made on first
    access to :attr:`targets` (the metrics are computed per distinct target tuple; spreading
    them over the targets' rows is left to a caller that reads them, as the Spark engine's
    lazy table)."""

    def __init__(self, targets: pl.DataFrame | Callable[[], pl.DataFrame], releases: pl.DataFrame,
                 summary: dict[str, Any] | None = None) -> None:
        self._targets = targets
        self.releases = releases
        self.summary: dict[str, Any] = summary if summary is not None else {}

    @property
    def targets(self) -> pl.DataFrame:
        """One row per target with its metrics (CUSTODIAN ONLY: scored against their true values)."""
        if not isinstance(self._targets, pl.DataFrame):
            self._targets = self._targets()
        return self._targets

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "releases": self.releases.to_dicts()}

    def __repr__(self) -> str:
        # concise and labelled: the field-by-field repr printed the per-target table (one row per
        # person of the custodian's targets, scored against their true values), unlabelled
        figures = ", ".join(f"{key}={self.summary[key]:.4g}" for key in ("perfect_breach", "vulnerable")
                            if isinstance(self.summary.get(key), (int, float)))
        return (f"IntersectionResult({self.summary.get('targets', '?')} targets, "
                f"{quantity(self.releases.height, 'release')}"
                f"{', ' + figures if figures else ''}; the per-target table is CUSTODIAN ONLY: do not publish)")


@dataclass(frozen=True)
class Scores:
    """What an engine's tables computed (step 1 and 2 and the metrics, module docstring).

    ``targets``: the per-target metrics (an engine's frame, or a function making it when read);
    ``aggregates``: their means over the targets (``targets``, ``average_prior_anonymity``,
    ``average_posterior_anonymity``, ``average_drop``, ``vulnerable``, ``perfect_breach``,
    ``partial_breach`` (one per level), ``contradictions``, and with the truth
    ``perfect_breach_true``, ``true_value_in_candidates``);
    ``releases``: per release ``rows``, ``classes``, ``location``, ``located``, ``ambiguous``,
    ``average_partition_size``, ``average_prior_anonymity``, ``correct_location``, and where
    the engine reads cells itself ``unread_cells`` (:func:`crowdsafe.attacks.unread.describe_unread`)."""

    targets: Any
    aggregates: Mapping[str, Any]
    releases: Sequence[Mapping[str, Any]]


class AttackTables(Protocol):
    """The table operations an engine supplies to :func:`run_intersection`: the releases' names
    and presumed k, the checks of their columns, their distinct sensitive cells, and the
    location, candidate sets, intersection and metrics over the engine's tables."""

    names: list[str]
    presumed_k: list[int | None]

    def locations(self, location: Location | Sequence[Location]) -> list[str]:
        """The location method of each release (refusing what the engine cannot do)."""
        ...

    def check(self, qi: list[str], sensitive: str) -> None:
        """Refuse targets or releases without the columns the attack reads."""
        ...

    def sensitive_cells(self, qi: list[str], sensitive: str) -> tuple[list[pl.Series], pl.DataFrame]:
        """Each release's distinct sensitive cells (text), and the targets' distinct true values
        (a one-column frame, or a frame without ``sensitive`` when the targets hold none)."""
        ...

    def score(self, qi: list[str], sensitive: str, domain: AttributeDomain, locations: list[str],
              levels: tuple[float, ...], truth_id: str | None) -> Scores:
        """Steps 1 and 2 and the metrics, over ``domain`` (:func:`sensitive_domain`)."""
        ...

    def result(self, targets: Any, releases: pl.DataFrame, summary: dict[str, Any]) -> Any:
        """The engine's result object."""
        ...


def check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    """The partial-breach confidence levels as floats, each in (0, 1] (else ParameterError)."""
    levels = tuple(float(c) for c in levels)
    if not levels or any(not 0.0 < c <= 1.0 for c in levels):
        raise ParameterError(f"confidence levels lie in (0, 1], got {list(levels)}")
    return levels


def check_locations(location: Location | Sequence[Location], releases: int) -> list[str]:
    """One location method per release: ``"exact"``, ``"nearest"`` or ``"auto"``."""
    locations: list[str] = [location] * releases if isinstance(location, str) else list(location)
    if len(locations) != releases or any(m not in ("auto", "exact", "nearest") for m in locations):
        raise ParameterError("location is 'auto', 'exact' or 'nearest', one value or one per release")
    return locations


def run_intersection(
    tables: AttackTables,
    qi: Sequence[str],
    sensitive: str,
    *,
    hierarchy: Hierarchy | None = None,
    location: Location | Sequence[Location] = "auto",
    levels: Sequence[float] = DEFAULT_LEVELS,
    truth_id: str | None = None,
) -> Any:
    """The intersection attack (module docstring) over an engine's ``tables``: the checks, the
    sensitive domain (``hierarchy``: the sensitive attribute's, whose leaves are the domain),
    the engine's steps 1 and 2 and metrics, and the report: one row per release and the
    summary, the same for every engine."""
    qi = list(qi)
    levels = check_levels(levels)
    if len(tables.names) < 1:
        raise ParameterError("the intersection attack needs at least one release")
    locations = tables.locations(location)
    if not qi:
        raise ParameterError("name the quasi-identifiers the attacker knows (qi=[...])", parameter="qi")
    tables.check(qi, sensitive)
    cells, truth = tables.sensitive_cells(qi, sensitive)
    domain = sensitive_domain(cells, truth, sensitive, hierarchy)
    scores = tables.score(qi, sensitive, domain, locations, levels, truth_id)

    release_rows = [
        {
            "release": name, "rows": stats["rows"], "classes": stats["classes"], "presumed_k": k,
            "location": stats["location"], "located": stats["located"], "ambiguous": stats["ambiguous"],
            "average_partition_size": stats["average_partition_size"],
            "average_prior_anonymity": stats["average_prior_anonymity"],
            "correct_location": stats["correct_location"],
            "unread_cells": stats.get("unread_cells"),  # cells of numeric columns it could not read
        }
        for name, k, stats in zip(tables.names, tables.presumed_k, scores.releases)
    ]
    totals = scores.aggregates
    summary: dict[str, Any] = {
        "targets": totals["targets"],
        "releases": len(tables.names),
        "quasi_identifiers": qi,
        "sensitive": sensitive,
        "average_prior_anonymity": totals["average_prior_anonymity"],
        "average_posterior_anonymity": totals["average_posterior_anonymity"],
        "average_drop": totals["average_drop"],
        "vulnerable": totals["vulnerable"],
        "perfect_breach": totals["perfect_breach"],
        "partial_breach": {f"{c:g}": share for c, share in zip(levels, totals["partial_breach"])},
        "contradictions": totals["contradictions"],
        "presumed_k": list(tables.presumed_k),
        "average_partition_size": [row["average_partition_size"] for row in release_rows],
    }
    if "perfect_breach_true" in totals:
        summary["perfect_breach_true"] = totals["perfect_breach_true"]
        summary["true_value_in_candidates"] = totals["true_value_in_candidates"]
    return tables.result(scores.targets, pl.DataFrame(release_rows), summary)


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
    """Run the intersection attack of ``targets`` over ``releases`` (module docstring), in this
    process (:class:`~crowdsafe.attacks.intersection_tables.PolarsAttackTables`).

    ``targets`` holds each target's quasi-identifiers ``qi``; when it also holds ``sensitive``,
    that column is the truth used to score breaches (never used by the attack). ``truth_id``: a
    column naming the record in both the targets and the releases, used only to measure how
    often the located class is the true one. ``location``: ``"exact"``, ``"nearest"`` or
    ``"auto"`` (nearest for releases that publish centroids), one value or one per release.
    ``hierarchies`` resolve hierarchy labels published in the releases.
    """
    from crowdsafe.attacks.intersection_tables import PolarsAttackTables

    attacked = [r if isinstance(r, AttackedRelease) else AttackedRelease(r, f"R{j + 1}")
                for j, r in enumerate(releases)]
    tables = PolarsAttackTables(attacked, targets, hierarchies or {})
    qi = names(qi, "qi") or ()  # one name is the list of that name (it was split into characters)
    result = run_intersection(tables, qi, sensitive, hierarchy=(hierarchies or {}).get(sensitive), location=location,
                              levels=levels, truth_id=truth_id)
    return cast(IntersectionResult, result)


def as_text(series: pl.Series) -> pl.Series:
    """The series as text (a String series is returned as it is)."""
    return series.cast(pl.String) if series.dtype != pl.String else series


def sensitive_domain(cells: Sequence[pl.Series], targets: pl.DataFrame, sensitive: str,
                     hierarchy: Hierarchy | None) -> AttributeDomain:
    """The sensitive values the candidate sets are made of: the hierarchy's leaves when there is
    one, else every plain value published (alone or in a set) and every value a target holds
    (an original value, whatever it reads like: Adult's ``<=50K`` reads as a bound when published),
    held as numbers when the targets hold numbers and a release publishes a range (``[20, 29]``,
    Mondrian's cell of a column it recoded), which then stands for every value it covers.
    ``cells``: each release's distinct sensitive cells, as text."""
    if hierarchy is not None:
        return leaf_domain(sensitive, hierarchy)
    plain: set[str | None] = set()
    if sensitive in targets.columns:
        plain.update(as_text(targets.get_column(sensitive).unique()).to_list())
    distinct = pl.concat([c.alias(sensitive) for c in cells]).unique() if cells else pl.Series(sensitive, [])
    for text in distinct.to_list():
        cell = parse_cell(text)
        if cell.kind in (CellKind.VALUE, CellKind.MISSING):
            plain.add(text)
        elif cell.kind is CellKind.SET:
            plain.update(cell.members)
    listed = sorted(plain, key=lambda v: (v is None, v or ""))
    held = targets.get_column(sensitive) if sensitive in targets.columns else None
    if held is not None and held.dtype.is_numeric() and any(
            parse_cell(t).kind is CellKind.RANGE for t in distinct.to_list() if t is not None):
        # a range covers the numbers in it: the values as the targets hold them (as text, no cell read
        # one as a number: "the original values are not numbers", said of a numeric column)
        numbers = pl.Series(sensitive, listed, dtype=pl.String).cast(held.dtype, strict=False)
        if numbers.null_count() == listed.count(None):  # every plain value published is a number
            return AttributeDomain(sensitive, numbers.unique().sort(nulls_last=True))
    return AttributeDomain(sensitive, pl.Series(sensitive, listed, dtype=pl.String))
