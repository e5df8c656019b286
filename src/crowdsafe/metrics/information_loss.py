"""Information loss of a generalized (and suppressed) release.

Two ways in, one result (:class:`InformationLoss`):

- :class:`FullDomainScorer` scores a *full-domain recoding* (one hierarchy level per
  attribute, classes below ``k`` suppressed) straight from the frequency table of leaf codes:
  no table is built, so a lattice search can score thousands of nodes. Build it once per input
  (``FullDomainScorer.from_dataset(dataset)``), then ``scorer.score(levels, k=...)``.
- :func:`information_loss` compares an original Dataset with a release table whose cells are
  written as in ``docs/architecture.md`` (values, ranges, sets, node labels, ``*``), as any
  anonymizer (global or local recoding, e.g. Mondrian) produces them.

For a full-domain release both give the same numbers (tested), except the non-uniform entropy
of a release *with suppression*, which the release path can only estimate (see below).

Definitions (N = rows that entered the anonymizer, d = quasi-identifiers; a suppressed row
counts as fully generalized on every attribute):

- **NCP / GCP** (Xu et al. 2006; Ghinita et al. 2007): a cell's normalized certainty penalty is
  (high − low) / (domain range) for numbers and |covered values| / |domain| for categories (0
  for a single value); ``ncp[a]`` is its mean over the N rows for attribute a, ``gcp`` the
  (weighted) mean over attributes. 0 = nothing generalized, 1 = everything suppressed.
- **Discernibility** (Bayardo and Agrawal 2005): Σ |E|² over released classes + N per
  suppressed row.
- **C_avg** (LeFevre, DeWitt and Ramakrishnan 2006): (released rows / classes) / k.
- **Suppression rate**: suppressed rows / N.
- **Generalization height**: Σ over attributes of the level used (for a release, the highest
  level any cell needs); **precision** (Sweeney 2002): 1 − Σ_rows Σ_a (h / hierarchy height) /
  (N·d), where h is the level of the lowest hierarchy node covering the same values as the
  published cell (so a node that merges nothing, like 'Never married' above 'Never-married',
  costs nothing, and a release and its full-domain recoding agree).
- **Non-uniform entropy** (De Waal and Willenborg 1999; Gionis and Tassa 2009), with the
  probabilities taken from the input's frequencies as ARX does: a row with original value x
  published as cell g costs −log2(n(x) / n(g)) bits, where n(g) counts input rows whose value g
  covers; a suppressed row costs −log2(n(x) / N). ``entropy_normalized`` divides by the cost of
  suppressing everything (N·Σ_a H(a)). The release path does not know which original value
  each released row had, so it charges each row of cell g the conditional entropy
  H(X | X ∈ g) of the input; this equals the exact sum whenever the released rows of g keep
  the input's proportions (always when nothing is suppressed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.arguments import names as listed
from crowdsafe.data import COUNT, Dataset, Hierarchy, code_frequencies, encode, packing
from crowdsafe.data.column_names import spare_name
from crowdsafe.data.generalized import AttributeDomain, release_codes
from crowdsafe.errors import HierarchyError, InputError, ParameterError, SchemaError

# Names accepted by InformationLoss.loss(); lower is better for each.
LOSS_METRICS = ("gcp", "discernibility", "c_avg", "precision", "entropy", "height", "suppression")


@dataclass(frozen=True)
class InformationLoss:
    """Information-loss measures of one release (see the module docstring for definitions)."""

    input_rows: int
    released_rows: int
    suppressed_rows: int
    classes: int
    k: int
    gcp: float
    ncp: dict[str, float]
    discernibility: float
    average_class_size: float
    c_avg: float
    suppression_rate: float
    height: int | None
    precision: float | None
    entropy: float
    entropy_normalized: float
    notes: list[str] = field(default_factory=list)

    def loss(self, metric: str) -> float:
        """The value of ``metric`` (one of :data:`LOSS_METRICS`) as a loss: lower is better.

        ``precision`` is returned as 1 − precision, ``entropy`` normalized to [0, 1].
        """
        if metric == "gcp":
            return self.gcp
        if metric == "discernibility":
            return self.discernibility
        if metric == "c_avg":
            return self.c_avg
        if metric == "precision":
            if self.precision is None:
                raise ParameterError("precision needs a hierarchy for every quasi-identifier")
            return 1.0 - self.precision
        if metric == "entropy":
            return self.entropy_normalized
        if metric == "height":
            if self.height is None:
                raise ParameterError("generalization height needs a hierarchy for every quasi-identifier")
            return float(self.height)
        if metric == "suppression":
            return self.suppression_rate
        raise ParameterError(f"unknown loss metric {metric!r}; use one of: {', '.join(LOSS_METRICS)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __repr__(self) -> str:
        # concise and labelled, as the utility report's: every figure is measured against the input
        return (f"InformationLoss(gcp={self.gcp:.4g}, suppression_rate={self.suppression_rate:.4g}, "
                f"classes={self.classes:,}, k={self.k}, c_avg={self.c_avg:.4g}; CUSTODIAN ONLY: do not publish)")


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Inner product of two float vectors without BLAS (whose thread wake-up costs ~1 ms a call)."""
    return float(np.einsum("i,i->", a, b))


def _log2_ratio_cost(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """−log2(numerator / denominator), 0 where the numerator is 0 (no rows to charge)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = -np.log2(numerator / denominator)
    return np.where(numerator > 0, cost, 0.0)


def _weights(columns: Sequence[str], weights: Mapping[str, float] | None) -> np.ndarray:
    if weights is None:
        return np.ones(len(columns))
    unknown = [c for c in weights if c not in columns]
    if unknown:
        raise ParameterError(f"a weight is given for '{unknown[0]}', which is not a quasi-identifier")
    values = np.array([float(weights.get(c, 1.0)) for c in columns])
    if (values < 0).any() or values.sum() <= 0:
        raise ParameterError("attribute weights must be >= 0 and not all 0")
    return values


def _class_ids(node_codes: Sequence[np.ndarray], radices: Sequence[int]) -> tuple[np.ndarray, int]:
    """Dense class id of each row from per-column codes; returns (ids, number of classes)."""
    n = len(node_codes[0]) if node_codes else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    if packing.fits(radices, 2.0**62):
        key = packing.pack(node_codes, radices)
        span = int(np.prod(np.asarray(radices, dtype=np.int64)))
        if span <= 4 * n + 1024:
            present = np.zeros(span, dtype=bool)
            present[key] = True
            rank = np.cumsum(present) - 1
            return rank[key], int(present.sum())
        uniques, ids = np.unique(key, return_inverse=True)
        return ids.ravel(), len(uniques)
    uniques, ids = np.unique(np.column_stack(node_codes), axis=0, return_inverse=True)
    return ids.ravel(), len(uniques)


@dataclass(frozen=True)
class _Column:
    """Per-level lookup tables of one attribute of a FullDomainScorer."""

    name: str
    codes: np.ndarray  # leaf code per frequency-table row
    hierarchy: Hierarchy | None
    ncp: tuple[np.ndarray, ...]  # per level: NCP of each leaf's node
    effective_level: tuple[np.ndarray, ...]  # per level: lowest level of a node with the same leaves
    entropy: tuple[np.ndarray, ...]  # per level: −log2(n(x)/n(node)) per leaf
    suppressed_entropy: np.ndarray  # per leaf: −log2(n(x)/N)
    leaf_rows: np.ndarray  # per leaf: input rows holding it

    @property
    def height(self) -> int:
        return self.hierarchy.height if self.hierarchy is not None else 0


class FullDomainScorer:
    """Scores full-domain recodings of one input from its frequency table of leaf codes.

    ``table``: a frequency table whose columns are leaf codes (as from
    :func:`crowdsafe.data.code_frequencies` on a Dataset's encoding, so that
    ``hierarchies[c].generalize(codes, level)`` applies) plus ``count``. Every column needs a
    hierarchy to be generalized; a column without one can only stay at level 0.
    ``weights`` weigh attributes in GCP (default: equal); ``count`` names the count column (when
    ``count`` is a quasi-identifier's name, another: :func:`~crowdsafe.data.column_names.spare_name`).

    Everything per level (node of each leaf, its NCP and entropy cost) is precomputed, so a
    :meth:`score` costs a few vectorized passes over the table's rows (Adult's 8
    quasi-identifiers: about 20,000 rows).
    """

    def __init__(
        self,
        table: pl.DataFrame,
        hierarchies: Mapping[str, Hierarchy],
        *,
        weights: Mapping[str, float] | None = None,
        count: str = COUNT,
    ) -> None:
        if count not in table.columns:
            raise SchemaError(f"the frequency table needs a '{count}' column")
        self.columns = [c for c in table.columns if c != count]
        if not self.columns:
            raise SchemaError("the frequency table has no quasi-identifier columns")
        self.counts = table.get_column(count).to_numpy().astype(np.int64)
        self.weights_float = self.counts.astype(np.float64)
        self.rows = int(self.counts.sum())
        if self.rows == 0:
            raise SchemaError("the frequency table holds no rows")
        self.weights = _weights(self.columns, weights)
        self._columns = [self._prepare(c, table.get_column(c), hierarchies.get(c)) for c in self.columns]
        self._max_entropy = sum(_dot(col.leaf_rows, col.suppressed_entropy) for col in self._columns)

    @classmethod
    def from_dataset(
        cls, dataset: Dataset, columns: Sequence[str] | None = None, *, weights: Mapping[str, float] | None = None
    ) -> FullDomainScorer:
        """The scorer of ``dataset`` over ``columns`` (default: its quasi-identifiers)."""
        names = list(listed(columns, "columns") or ()) if columns is not None else dataset.quasi_identifiers
        if not names:
            raise ParameterError("no quasi-identifiers to score; name them with qi=[...]")
        table = code_frequencies(encode(dataset, names))
        return cls(table, {c: dataset.hierarchies[c] for c in names if c in dataset.hierarchies}, weights=weights)

    def _prepare(self, name: str, column: pl.Series, hierarchy: Hierarchy | None) -> _Column:
        codes = column.to_numpy().astype(np.int64)
        leaves = hierarchy.size(0) if hierarchy is not None else int(codes.max()) + 1
        if len(codes) and codes.max() >= leaves:
            raise HierarchyError(
                f"column '{name}' holds leaf code {int(codes.max())}, beyond its hierarchy's {leaves} leaves")
        n_leaf = np.bincount(codes, weights=self.counts, minlength=leaves)
        suppressed_entropy = _log2_ratio_cost(n_leaf, np.full(leaves, float(self.rows)))
        if hierarchy is None:
            zeros = (np.zeros(leaves),)
            return _Column(name, codes, None, zeros, zeros, zeros, suppressed_entropy, n_leaf)
        ncp, entropy, effective = [], [], []
        domain = AttributeDomain(name, hierarchy.leaves, hierarchy)
        for level in range(hierarchy.height + 1):
            node = hierarchy.leaf_map(level)
            if hierarchy.is_numeric:
                bounds = hierarchy.ranges(level)
                span = domain.numeric_span
                spread = np.nan_to_num(bounds[:, 1] - bounds[:, 0], nan=0.0)
                node_ncp = spread / span if span > 0 else np.zeros(len(spread))
                node_ncp = np.where((hierarchy.leaf_counts(level) == leaves) & (leaves > 1), 1.0, node_ncp)
            else:
                counts = hierarchy.leaf_counts(level).astype(np.float64)
                node_ncp = np.where(counts > 1, counts / leaves, 0.0)
            ncp.append(np.clip(node_ncp, 0.0, 1.0)[node])
            n_node = np.bincount(node, weights=n_leaf, minlength=hierarchy.size(level))
            entropy.append(_log2_ratio_cost(n_leaf, n_node[node]))
            covered = hierarchy.leaf_counts(level)[node]
            lowest = np.full(leaves, level, dtype=np.float64)
            for below in range(level - 1, -1, -1):
                same = hierarchy.leaf_counts(below)[hierarchy.leaf_map(below)] == covered
                lowest[same] = below
            effective.append(lowest)
        return _Column(name, codes, hierarchy, tuple(ncp), tuple(effective), tuple(entropy), suppressed_entropy, n_leaf)

    def _levels(self, levels: Mapping[str, int] | Sequence[int]) -> list[int]:
        if isinstance(levels, Mapping):
            unknown = [c for c in levels if c not in self.columns]
            if unknown:
                raise ParameterError(f"a level is given for '{unknown[0]}', which is not a scored column")
            chosen = [int(levels.get(c, 0)) for c in self.columns]
        else:
            chosen = [int(x) for x in levels]
            if len(chosen) != len(self.columns):
                raise ParameterError(
                    f"expected {len(self.columns)} levels ({', '.join(self.columns)}), got {len(chosen)}")
        for col, level in zip(self._columns, chosen):
            if not 0 <= level <= col.height:
                raise HierarchyError(
                    f"column '{col.name}' has levels 0..{col.height}"
                    + ("" if col.hierarchy is not None else " (no hierarchy)")
                    + f", not level {level}"
                )
        return chosen

    def classes(self, levels: Mapping[str, int] | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Equivalence classes after the recoding: (class id of each table row, size of each class)."""
        chosen = self._levels(levels)
        node_codes, radices = [], []
        for col, level in zip(self._columns, chosen):
            if col.hierarchy is None:
                node_codes.append(col.codes)
                radices.append(int(col.codes.max()) + 1)
            else:
                node_codes.append(col.hierarchy.leaf_map(level)[col.codes].astype(np.int64))
                radices.append(col.hierarchy.size(level))
        ids, n_classes = _class_ids(node_codes, radices)
        sizes = np.bincount(ids, weights=self.counts, minlength=n_classes).astype(np.int64)
        return ids, sizes

    def score(
        self,
        levels: Mapping[str, int] | Sequence[int],
        *,
        k: int = 1,
        suppressed: np.ndarray | None = None,
        classes: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> InformationLoss:
        """Information loss of generalizing to ``levels`` and suppressing classes smaller than ``k``.

        ``levels``: a level per column (mapping; absent columns stay at 0, or a sequence in
        column order). ``suppressed``: a boolean per table row, overriding the k rule (e.g. rows
        of classes that fail an ℓ-diversity check). ``classes``: the result of :meth:`classes`
        for these levels, when the caller already has it.
        """
        if k < 1:
            raise ParameterError(f"k must be at least 1, got {k}")
        chosen = self._levels(levels)
        ids, sizes = classes if classes is not None else self.classes(chosen)
        if suppressed is None:
            suppressed = sizes[ids] < k
        else:
            suppressed = np.asarray(suppressed, dtype=bool)
            if suppressed.shape != self.counts.shape:
                raise ParameterError(f"suppressed must hold one flag per frequency-table row ({len(self.counts)})")
        kept_weight = np.where(suppressed, 0.0, self.weights_float)
        released = int(kept_weight.sum())
        n_suppressed = self.rows - released
        released_sizes = np.bincount(ids, weights=kept_weight, minlength=len(sizes))
        released_sizes = released_sizes[released_sizes > 0]
        ncp: dict[str, float] = {}
        entropy = 0.0
        height_share = 0.0
        for col, level in zip(self._columns, chosen):
            kept_per_leaf = np.bincount(col.codes, weights=kept_weight, minlength=len(col.leaf_rows))
            ncp[col.name] = (_dot(kept_per_leaf, col.ncp[level]) + n_suppressed) / self.rows
            entropy += _dot(kept_per_leaf, col.entropy[level])
            entropy += _dot(col.leaf_rows - kept_per_leaf, col.suppressed_entropy)
            if col.height:
                height_share += _dot(kept_per_leaf, col.effective_level[level]) / col.height
            height_share += n_suppressed
        return _result(
            rows=self.rows, released=released, class_sizes=released_sizes, k=k, ncp=ncp, weights=self.weights,
            height=sum(chosen), precision=1.0 - height_share / (self.rows * len(self.columns)),
            entropy=entropy, max_entropy=self._max_entropy,
        )


def _result(
    *, rows: int, released: int, class_sizes: np.ndarray, k: int, ncp: dict[str, float], weights: np.ndarray,
    height: int | None, precision: float | None, entropy: float, max_entropy: float, notes: list[str] | None = None,
) -> InformationLoss:
    suppressed = rows - released
    n_classes = len(class_sizes)
    average = released / n_classes if n_classes else 0.0
    values = np.array(list(ncp.values()))
    return InformationLoss(
        input_rows=rows,
        released_rows=released,
        suppressed_rows=suppressed,
        classes=n_classes,
        k=k,
        gcp=_dot(values, weights) / float(weights.sum()),
        ncp=ncp,
        discernibility=float((class_sizes.astype(np.float64) ** 2).sum() + float(rows) * suppressed),
        average_class_size=average,
        c_avg=average / k,
        suppression_rate=suppressed / rows,
        height=height,
        precision=precision,
        entropy=entropy,
        entropy_normalized=entropy / max_entropy if max_entropy > 0 else 0.0,
        notes=notes or [],
    )


def _conditional_entropy(
    cover_cells: np.ndarray, cover_codes: np.ndarray, n_code: np.ndarray, n_cells: int,
) -> np.ndarray:
    """H(X | X ∈ cell) in bits for every cell, from input counts ``n_code`` (sparse cover)."""
    weight = n_code[cover_codes]
    total = np.bincount(cover_cells, weights=weight, minlength=n_cells)
    cost = _log2_ratio_cost(weight, total[cover_cells])
    return np.bincount(cover_cells, weights=weight * cost, minlength=n_cells) / np.where(total > 0, total, 1.0)


def _distinct_tuples(release: pl.DataFrame, columns: Sequence[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """The release's distinct tuples of ``columns`` and the rows holding each (as floats)."""
    absent = [c for c in columns if c not in release.columns]
    if absent:
        raise InputError(f"the release has no column '{absent[0]}'; its columns are: {', '.join(release.columns)}")
    rows_of = spare_name(columns, "rows")
    tuples = release.select(columns).group_by(columns).agg(pl.len().alias(rows_of))
    return tuples.drop(rows_of), tuples.get_column(rows_of).to_numpy().astype(np.float64)


def information_loss(
    original: Dataset,
    release: pl.DataFrame | Dataset,
    *,
    qi: Sequence[str] | None = None,
    k: int | None = None,
    input_rows: int | None = None,
    weights: Mapping[str, float] | None = None,
) -> InformationLoss:
    """Information loss of ``release`` (generalized cells, suppressed rows removed) against ``original``.

    ``qi``: the quasi-identifiers (default: the original's). Cells are read with
    :mod:`crowdsafe.data.generalized` against each attribute's domain (its hierarchy's leaves
    when the original has a hierarchy). Release rows are grouped into classes by what their
    cells cover. ``k`` normalizes C_avg (default: the release's smallest class).
    ``input_rows``: rows that went into the anonymizer (default: the original's; give the
    sample size for a release made from a sample), so suppressed = input_rows − released rows.
    Height and precision need a hierarchy for every quasi-identifier (else None).
    """
    frame = release.frame if isinstance(release, Dataset) else release
    columns = list(listed(qi, "qi") or ()) if qi is not None else original.quasi_identifiers  # one name: [name]
    if not columns:
        raise ParameterError("no quasi-identifiers to compare; name them with qi=[...]")
    rows = int(input_rows) if input_rows is not None else original.n_rows
    released = frame.height
    if released > rows:
        raise ParameterError(
            f"the release has {released:,} rows but only {rows:,} went in; pass input_rows= if it was made "
            "from another table"
        )
    if rows == 0:
        raise ParameterError("no input rows")
    domains = [AttributeDomain.of(original, c) for c in columns]
    # Every measure sums what each row's cells cover, so the release's distinct tuples of cells,
    # each weighted by its rows, give the same sums as the rows themselves.
    tuples, weight = _distinct_tuples(frame, columns)
    cells, covers = release_codes(tuples, domains)
    suppressed = rows - released
    ncp: dict[str, float] = {}
    entropy = 0.0
    max_entropy = 0.0
    class_keys = []
    height = 0
    height_share = 0.0
    has_hierarchies = all(d.hierarchy is not None for d in domains)
    for domain in domains:
        cover = covers[domain.name]
        row_cells = cells[domain.name].astype(np.int64)
        per_cell = np.bincount(row_cells, weights=weight, minlength=len(cover.labels))
        ncp[domain.name] = (float(per_cell @ cover.ncp()) + suppressed) / rows
        n_code = np.bincount(original.encoded(domain.name).codes, minlength=domain.size).astype(np.float64)
        cover_cells, cover_codes = cover.membership
        entropy += float(per_cell @ _conditional_entropy(cover_cells, cover_codes, n_code, len(cover.labels)))
        h_all = float(n_code @ _log2_ratio_cost(n_code, np.full(domain.size, n_code.sum())))
        entropy += suppressed * h_all / max(n_code.sum(), 1.0)
        max_entropy += rows * h_all / max(n_code.sum(), 1.0)
        class_keys.append(pl.Series(domain.name, cover.canonical[row_cells]))
        if has_hierarchies:
            top = cast(Hierarchy, domain.hierarchy).height  # has_hierarchies: every domain has one
            used = cover.level[per_cell > 0]
            height += int(used.max()) if len(used) else 0
            height_share += (float(per_cell @ (cover.level / top)) if top else 0.0) + suppressed
    rows_of = spare_name(columns, "rows")
    class_sizes = (
        pl.DataFrame([*class_keys, pl.Series(rows_of, weight.astype(np.int64))]).group_by(columns)
        .agg(pl.col(rows_of).sum()).get_column(rows_of).to_numpy()
        if released else np.zeros(0, dtype=np.int64)
    )
    chosen_k = int(k) if k is not None else (int(class_sizes.min()) if len(class_sizes) else 1)
    if chosen_k < 1:
        raise ParameterError(f"k must be at least 1, got {chosen_k}")
    notes = []
    if suppressed and released:
        notes.append("non-uniform entropy of released rows estimated from the input's proportions "
                     "(the release does not say which original value each row had)")
    return _result(
        rows=rows, released=released, class_sizes=class_sizes, k=chosen_k, ncp=ncp,
        weights=_weights(columns, weights),
        height=height if has_hierarchies else None,
        precision=1.0 - height_share / (rows * len(columns)) if has_hierarchies else None,
        entropy=entropy, max_entropy=max_entropy, notes=notes,
    )
