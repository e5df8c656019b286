"""Counting-query workload error: how well a release answers random counting queries.

A workload is a reproducible list of conjunctive counting queries (the same seed and original
give the same queries). Each query constrains 1..``max_attributes`` attributes, chosen
uniformly: an ordered attribute (numeric, date, ordinal) by a range between two uniformly drawn
positions of its sorted observed values, any other by a random set of its values (size uniform
in 1..max(1, ⌊|values| / 2⌋)), in the spirit of LeFevre, DeWitt and Ramakrishnan (2006).

The true answer is counted on the original. The release's estimate assumes values are spread
uniformly within a generalized cell: a row whose cell covers n values, m of which satisfy the
predicate, counts m / n (per attribute, multiplied across attributes). ``scale`` multiplies
the estimate (e.g. 1/β for a release made from a Bernoulli(β) sample).

Relative error = |estimate − truth| / max(truth, s), with the sanity bound s = ``sanity`` ×
(original rows) keeping tiny counts from dominating (default 0.1%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.data.generalized import CellTable
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:  # the generators are imported by make_workload, which draws (not by information_loss's users)
    from crowdsafe.randomness import Randomness

_ORDERED = (AttributeType.NUMERIC, AttributeType.DATE, AttributeType.ORDINAL)
_BLOCK = 1 << 22  # entries of a query x tuple block

#: The most queries a workload draws (10 million: about a gigabyte of query masks over wide tables).
MAX_QUERIES = 10_000_000


@dataclass(frozen=True)
class Workload:
    """Queries as one boolean matrix per attribute: ``allowed[c][q, code]`` says whether query q
    accepts value ``code`` of attribute c (all True when q does not constrain c)."""

    columns: list[str]
    allowed: dict[str, np.ndarray]
    constrained: np.ndarray  # queries x columns: which attributes each query constrains
    seed: int | None

    @property
    def size(self) -> int:
        return self.constrained.shape[0]

    def describe(self, original: Dataset, q: int) -> str:
        """A readable form of query ``q`` (for reports and debugging)."""
        parts = []
        for j, column in enumerate(self.columns):
            if not self.constrained[q, j]:
                continue
            values = original.encoded(column).dictionary.gather(np.nonzero(self.allowed[column][q])[0]).to_list()
            parts.append(f"{column} in {values}")
        return "count where " + " and ".join(parts)


def _ordered_codes(original: Dataset, column: str, observed: np.ndarray) -> np.ndarray:
    """Observed codes of ``column`` sorted by value when it is ordered, else by code."""
    attribute = original.schema[column]
    dictionary = original.encoded(column).dictionary
    if attribute.type in _ORDERED and (dictionary.dtype.is_numeric() or dictionary.dtype == pl.Date):
        values = dictionary.to_physical().cast(pl.Float64).to_numpy()[observed]
        return observed[np.argsort(values, kind="stable")]
    return observed  # ordinal codes follow the declared order; others by dictionary order


def make_workload(
    original: Dataset,
    columns: Sequence[str] | None = None,
    *,
    queries: int = 1000,
    max_attributes: int = 3,
    seed: int | Randomness | None = 0,
) -> Workload:
    """Draw a reproducible workload over ``columns`` (default: the quasi-identifiers)."""
    from crowdsafe.randomness import as_randomness

    names = list(columns) if columns is not None else original.quasi_identifiers
    if not names:
        raise ParameterError("a workload needs at least one attribute")
    if not 1 <= queries <= MAX_QUERIES:  # each query is a row of a boolean matrix over the columns
        raise ParameterError(f"the number of queries must be from 1 to {MAX_QUERIES:,}, got {queries:,}")
    if max_attributes < 1:
        raise ParameterError(f"max_attributes must be at least 1, got {max_attributes}")
    randomness = as_randomness(seed)
    rng = randomness.generator
    width = min(max_attributes, len(names))
    chosen_counts = rng.integers(1, width + 1, size=queries)
    constrained = np.zeros((queries, len(names)), dtype=bool)
    for i, count in enumerate(chosen_counts):
        constrained[i, rng.choice(len(names), size=count, replace=False)] = True
    allowed = {}
    for j, column in enumerate(names):
        encoded = original.encoded(column)
        observed = np.nonzero(np.bincount(encoded.codes, minlength=encoded.cardinality))[0]
        mask = np.ones((queries, encoded.cardinality), dtype=bool)
        rows = np.nonzero(constrained[:, j])[0]
        if original.schema[column].type in _ORDERED:
            order = _ordered_codes(original, column, observed)
            ends = np.sort(rng.integers(0, len(order), size=(len(rows), 2)), axis=1)
            for q, (lo, hi) in zip(rows, ends):
                mask[q] = False
                mask[q, order[lo: hi + 1]] = True
        else:
            sizes = rng.integers(1, max(1, len(observed) // 2) + 1, size=len(rows))
            for q, size in zip(rows, sizes):
                mask[q] = False
                mask[q, rng.choice(observed, size=size, replace=False)] = True
        allowed[column] = mask
    return Workload(names, allowed, constrained, seed if isinstance(seed, int) else None)


def answer(table: CellTable, workload: Workload) -> np.ndarray:
    """Estimated count of every query on ``table`` (exact for an original table)."""
    from scipy import sparse

    fractions = {}
    for column in workload.columns:
        cover = table.covers[column]
        cells, codes = cover.membership
        spread = sparse.csr_matrix(
            (1.0 / cover.size[cells], (cells, codes)), shape=(len(cover.labels), workload.allowed[column].shape[1])
        )
        fractions[column] = np.asarray(spread @ workload.allowed[column].T.astype(np.float64)).T  # queries x cells
    estimates = np.zeros(workload.size)
    step = max(1, _BLOCK // max(len(table.counts), 1))
    weights = table.counts.astype(np.float64)
    for start in range(0, workload.size, step):
        stop = min(start + step, workload.size)
        product = np.ones((stop - start, len(table.counts)))
        for j, column in enumerate(workload.columns):
            rows = np.nonzero(workload.constrained[start:stop, j])[0]  # others accept every value
            if len(rows):
                product[rows] *= fractions[column][start + rows][:, table.cells[column]]
        estimates[start:stop] = product @ weights
    return estimates


@dataclass(frozen=True)
class WorkloadReport:
    queries: int
    max_attributes: int
    seed: int | None
    sanity_bound: float
    mean_relative_error: float
    median_relative_error: float
    p95_relative_error: float
    mean_true_count: float

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def check_scale(scale: float) -> float:
    """``scale`` (what the release's answers are multiplied by: 1/β for a sample), refused in one
    line unless a finite number above 0 (0 or a negative one turns every estimate into nonsense)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ParameterError("the scale parameter must be a finite number above 0 (1/beta for a sampled release), "
                             f"got {scale!r}", parameter="scale")
    return float(scale)


def workload_error(
    original: Dataset,
    release: pl.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    queries: int = 1000,
    max_attributes: int = 3,
    seed: int | Randomness | None = 0,
    sanity: float = 0.001,
    scale: float = 1.0,
) -> WorkloadReport:
    """Mean / median relative error of the release's answers to a random workload."""
    check_scale(scale)
    names = list(columns) if columns is not None else [c for c in original.quasi_identifiers if c in release.columns]
    workload = make_workload(original, names, queries=queries, max_attributes=max_attributes, seed=seed)
    truth = answer(CellTable.of_original(original, names), workload)
    estimate = answer(CellTable.of_release(release, original, names), workload) * scale
    bound = sanity * original.n_rows
    error = np.abs(estimate - truth) / np.maximum(truth, bound)
    return WorkloadReport(
        queries=workload.size, max_attributes=max_attributes, seed=workload.seed, sanity_bound=bound,
        mean_relative_error=float(error.mean()), median_relative_error=float(np.median(error)),
        p95_relative_error=float(np.quantile(error, 0.95)), mean_true_count=float(truth.mean()),
    )
