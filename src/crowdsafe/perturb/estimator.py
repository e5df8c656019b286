"""Estimating counting queries from an α-β view (Rastogi, Suciu, Hong 2007).

For a query Q (a conjunction of per-attribute conditions), n_V = |Q ∩ V| is counted on the view
and n_D = |Q ∩ D| is the product over attributes of the number of domain values matching
(never by enumerating D). Then

    EST(Q, V) = (n_V − β·n_D) / (α − β)

is unbiased: E[n_V] = α·Q(I) + β·(n_D − Q(I)). Small counts come out far off, even negative,
which is the privacy at work; large counts are accurate relative to their size.

Every estimate carries an error bar at the chosen confidence 1 − ε': ``error``, the per-query
Bernstein bound (:func:`~crowdsafe.privacy.dgamma.bernstein_error_bound`), and
``theorem_error``, the theorem's bound ρ√n
(:func:`~crowdsafe.privacy.dgamma.theorem_error_bound`), the same width for every query. Each
holds for one query fixed before the view is seen, with probability 1 − ε' for that query; neither
holds for all queries at once, nor for a query chosen by looking at the view: "x in (the values
the view holds)" is off by about (α(1 − α)n + β(1 − β)(m − n))/(α − β), linear in n where the bound
grows as √n. Both
are computed with the public bound N ≥ n of the view's certificate in place of the exact n,
which is not published; both bounds only grow with n, so they stay valid (if wider).

:func:`equality_estimates` estimates every equality query over every set of up to k attributes
in one vectorised pass: per attribute set, one counting pass over the coded view (a dense
group-by: ``bincount`` of mixed-radix keys; a hash group-by when the grid is too large).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.defaults import MAX_EQUALITY_QUERIES
from crowdsafe.errors import ParameterError
from crowdsafe.perturb.query import CountQuery, parse_count
from crowdsafe.perturb.view import View
from crowdsafe.privacy.certificate import unfit_suffix
from crowdsafe.privacy.dgamma import TheoremBound, bernstein_error_bound, failure_of, theorem_error_bound

DEFAULT_CONFIDENCE = 0.95
#: What every estimate counts, said beside the estimates: the view is of the distinct tuples (duplicate rows
#: are collapsed before perturbing, docs/alpha-beta.md "Duplicate rows"), so EST estimates Q over distinct
#: tuples; on a table with many repeated rows that is far below the rows matching Q (Adult, six attributes:
#: 10,714 distinct tuples of 30,162 rows), and reading it as a row count is wrong by that factor.
COUNTS_WHAT = ("each estimate counts distinct tuples of the view's attributes (duplicate rows were collapsed to one "
               "before perturbing), not rows")
# An attribute set whose grid of value combinations exceeds this is counted by a hash group-by
# (only the combinations present), not a dense array.
DENSE_GRID_LIMIT = 1 << 24


@dataclass(frozen=True)
class Estimate:
    """The estimate of one counting query, with its error bars at ``confidence``.

    ``unfit_reasons``: why the view it was estimated from is not fit for release, as the view's
    certificate says (:attr:`~crowdsafe.privacy.certificate.Certificate.unfit_reasons`: a seeded
    view, no formal guarantee, an unreviewed schema choice); an estimate is no fitter than its
    view, so it carries them wherever it is shown. Read from the certificate, a public output.
    ``notes``: what the query and the public domain alone say of it (a condition no value of its
    attribute's domain meets: the estimate is 0 whatever the data, a misspelt value, say)."""

    query: str
    n_view: int
    n_domain: int
    estimate: float
    error: float
    theorem_error: float | None
    confidence: float
    unfit_reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def fit_for_release(self) -> bool:
        """False when the view it was estimated from is not fit for release."""
        return not self.unfit_reasons

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "estimate": self.estimate, "error": self.error,
                "theorem_error": self.theorem_error, "confidence": self.confidence,
                "n_view": self.n_view, "n_domain": self.n_domain,
                "fit_for_release": self.fit_for_release, "unfit_reasons": list(self.unfit_reasons),
                "notes": list(self.notes)}

    def __str__(self) -> str:
        text = f"{self.estimate:,.1f} ± {self.error:,.1f}"
        if self.theorem_error:
            text += f" ({self.confidence:.0%}; theorem bound ± {self.theorem_error:,.0f})"
        return text + unfit_suffix(self.unfit_reasons)


def est(n_view: Any, n_domain: Any, alpha: float, beta: float) -> Any:
    """EST = (n_V − β·n_D)/(α − β), vectorised."""
    if not alpha > beta:
        raise ParameterError(f"the estimator needs alpha > beta, got alpha = {alpha}, beta = {beta}")
    return (np.asarray(n_view, dtype=float) - beta * np.asarray(n_domain, dtype=float)) / (alpha - beta)


def theorem_bound(view: View, confidence: float = DEFAULT_CONFIDENCE) -> TheoremBound:
    """The theorem's error bound for this view: for each query fixed before the view is seen, on
    its own (not for all queries at once)."""
    return theorem_error_bound(view.alpha, view.beta, view.n_bound, view.domain.size, failure_of(confidence))


def estimate(view: View, query: str | CountQuery, *, confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """Estimate one counting query from the view (see the module docstring)."""
    parsed = parse_count(query) if isinstance(query, str) else query
    if not isinstance(parsed, CountQuery):
        raise ParameterError("a query is a string such as \"count where age >= 30\" or a CountQuery")
    matching = matching_codes(view, parsed)
    codes = view.codes
    selected = np.ones(view.rows, dtype=bool)
    for attribute, matches in matching.items():
        selected &= matches[codes[attribute]]
    return estimate_counted(view, parsed, matching, int(selected.sum()), confidence=confidence)


def estimate_counted(view: Any, query: CountQuery, matching: Mapping[str, np.ndarray], n_view: int, *,
                     confidence: float = DEFAULT_CONFIDENCE) -> Estimate:
    """The estimate of ``query`` once an engine has counted its ``n_view`` rows in the view.

    ``view`` gives ``domain``, ``alpha``, ``beta``, ``n_bound`` and the ``certificate`` (whose
    reasons the view is not fit for release the estimate carries); ``matching`` is
    :func:`matching_codes`; n_D is the product of the matching domain sizes.
    """
    failure = failure_of(confidence)
    domain = view.domain
    n_domain = 1
    for attribute, size in zip(domain.attributes, domain.sizes):
        n_domain *= int(matching[attribute].sum()) if attribute in matching else size
    bound = theorem_error_bound(view.alpha, view.beta, view.n_bound, domain.size, failure)
    notes = tuple(f"no value of the public domain of '{attribute}' meets the query's condition on it, so no row "
                  "of any view matches and the estimate is 0 whatever the data (check the value's spelling "
                  "against the domain)" for attribute, matches in matching.items() if not matches.any())
    return Estimate(
        query=query.describe(),
        n_view=n_view,
        n_domain=n_domain,
        estimate=float(est(n_view, n_domain, view.alpha, view.beta)),
        error=float(bernstein_error_bound(view.alpha, view.beta, view.n_bound, float(n_domain), failure)),
        theorem_error=bound.error,
        confidence=float(confidence),
        unfit_reasons=tuple(view.certificate.unfit_reasons),
        notes=notes,
    )


def matching_codes(view: Any, query: CountQuery) -> dict[str, np.ndarray]:
    """Per attribute read by the query: a boolean array over the domain codes that match."""
    dtypes = {a: s.dtype for a, s in view.domain.values.items()}
    expressions = query.per_attribute(dtypes)
    out = {}
    for attribute, expression in expressions.items():
        values = view.domain.values[attribute].to_frame()
        out[attribute] = values.select(expression.fill_null(False)).to_series().to_numpy().astype(bool)
    return out


# -- every equality query over small attribute sets ----------------------------------------------


def subset_counts(codes: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the value combinations of some coded columns: (cells, counts).

    ``cells`` are mixed-radix cell numbers (:func:`crowdsafe.data.packing.pack`). Grids of at most
    :data:`DENSE_GRID_LIMIT` cells are counted with one ``bincount`` and returned whole (every
    combination, zeros included: :func:`_counts_dense`); larger grids by a hash group-by over the
    combinations present (:func:`_counts_sparse`).
    """
    grid = math.prod(sizes)
    if grid >= 2**63:
        raise ParameterError("an attribute set with 2^63 or more value combinations cannot be swept")
    key = packing.pack(codes, sizes, np.int64)
    if grid <= DENSE_GRID_LIMIT:
        return _counts_dense(key, grid)
    return _counts_sparse(key)


def _counts_dense(key: np.ndarray, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`subset_counts` of cell numbers ``key`` below ``grid``: every cell, by one bincount."""
    return np.arange(grid, dtype=np.int64), np.bincount(key, minlength=grid).astype(np.int64)


def _counts_sparse(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`subset_counts` of cell numbers ``key``: the cells present, sorted, by a hash
    group-by (what :func:`_counts_dense` gives, without its zero counts)."""
    counted = pl.DataFrame({"cell": key}).group_by("cell").agg(pl.len().alias("count")).sort("cell")
    return counted.get_column("cell").to_numpy(), counted.get_column("count").to_numpy().astype(np.int64)


@dataclass(frozen=True)
class EqualitySweep:
    """Estimates of every equality query over every attribute set of size 1..k. ``unfit_reasons``:
    why the view they were estimated from is not fit for release, as its certificate says (public;
    as :attr:`Estimate.unfit_reasons`; ``crowdsafe estimate --equality --out`` writes it in every row)."""

    frame: pl.DataFrame
    theorem: TheoremBound
    confidence: float
    max_attributes: int
    unfit_reasons: tuple[str, ...] = ()

    @property
    def fit_for_release(self) -> bool:
        """False when the view it was estimated from is not fit for release."""
        return not self.unfit_reasons

    @property
    def queries(self) -> int:
        return self.frame.height


def equality_estimates(
    view: View,
    *,
    max_attributes: int = 3,
    truth: Mapping[str, np.ndarray] | None = None,
    attributes: Sequence[str] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    max_queries: int | None = MAX_EQUALITY_QUERIES,
) -> EqualitySweep:
    """EST(Q, V) for every query ``a_1 = v_1 and ... and a_j = v_j`` with j ≤ ``max_attributes``.

    One counting pass over the coded view per attribute set (no loop over queries). The frame
    has, per query: ``attributes`` (the set, comma-separated), ``arity``, one column per
    attribute with its value (null when the attribute is not constrained; a constrained
    missing value is also null, so read ``attributes``), ``n_view``, ``n_domain``,
    ``estimate``, ``error`` (Bernstein, per query) and, when ``truth`` (the codes of I's
    distinct tuples in the view's domain) is given, ``true`` = Q(I). Attribute sets whose grid
    exceeds :data:`DENSE_GRID_LIMIT` list only the combinations present in the view or in I.
    A sweep that may hold more than ``max_queries`` queries (:func:`equality_sweep_sizes`, None:
    no limit) is refused before anything is counted, naming the sizes of smaller sweeps.
    """
    failure = failure_of(confidence)
    if isinstance(max_attributes, bool) or not isinstance(max_attributes, int) or max_attributes < 1:
        raise ParameterError(f"max_attributes must be a whole number >= 1, got {max_attributes!r}")
    domain = view.domain
    names = list(attributes) if attributes is not None else domain.attributes
    unknown = [a for a in names if a not in domain.values]
    if unknown:
        raise ParameterError(f"the view has no attribute '{unknown[0]}'")
    size_of = dict(zip(domain.attributes, domain.sizes))
    if max_queries is not None:
        listed = view.rows + (len(next(iter(truth.values()))) if truth else 0)
        _refuse_a_sweep_too_large([size_of[a] for a in names], max_attributes, listed, max_queries)
    m = domain.size
    view_codes = {a: view.codes[a].astype(np.int64) for a in names}
    true_codes = {a: np.asarray(truth[a], dtype=np.int64) for a in names} if truth is not None else None
    labels: list[str] = []
    pieces: dict[str, list[np.ndarray]] = {k: [] for k in ("set", "n_view", "n_domain", "true", *names)}
    for arity in range(1, min(max_attributes, len(names)) + 1):
        for subset in itertools.combinations(names, arity):
            sizes = [size_of[a] for a in subset]
            cells, n_view = subset_counts([view_codes[a] for a in subset], sizes)
            if true_codes is not None:
                true_cells, true_counts = subset_counts([true_codes[a] for a in subset], sizes)
                if len(cells) != math.prod(sizes):  # sparse: align the two lists of cells
                    cells, n_view, true_counts = _align(cells, n_view, true_cells, true_counts)
                pieces["true"].append(true_counts)
            codes = dict(zip(subset, packing.unpack(cells, sizes)))
            for a in names:
                pieces[a].append(codes[a] if a in codes else np.full(len(cells), -1, dtype=np.int64))
            pieces["set"].append(np.full(len(cells), len(labels), dtype=np.int64))
            pieces["n_view"].append(n_view)
            pieces["n_domain"].append(np.full(len(cells), m // math.prod(sizes),
                                              dtype=object if m >= 2**63 else np.int64))
            labels.append(", ".join(subset))
    joined = {k: np.concatenate(v) for k, v in pieces.items() if v}
    n_domain = joined["n_domain"].astype(float) if m >= 2**63 else joined["n_domain"]
    set_ids = pl.Series(joined["set"])
    columns = [
        pl.Series("attributes", labels).gather(set_ids),
        pl.Series("arity", [label.count(",") + 1 for label in labels], dtype=pl.UInt8).gather(set_ids),
    ]
    for a in names:
        code = joined[a]
        index = pl.Series(code, dtype=pl.Int64).set(pl.Series(code < 0), None).cast(pl.UInt32)
        columns.append(domain.values[a].gather(index).alias(a))
    columns += [
        pl.Series("n_view", joined["n_view"]),
        pl.Series("n_domain", n_domain),
        pl.Series("estimate", est(joined["n_view"], n_domain, view.alpha, view.beta)),
        pl.Series("error", bernstein_error_bound(view.alpha, view.beta, view.n_bound, n_domain.astype(float), failure)),
    ]
    if true_codes is not None:
        columns.append(pl.Series("true", joined["true"]))
    bound = theorem_error_bound(view.alpha, view.beta, view.n_bound, m, failure)
    return EqualitySweep(pl.DataFrame(columns), bound, float(confidence), max_attributes,
                         tuple(view.certificate.unfit_reasons))


def equality_sweep_sizes(sizes: Sequence[int], max_attributes: int, listed: int) -> list[int]:
    """For j = 1 .. min(``max_attributes``, attributes): at most how many equality queries a
    sweep over every set of up to j of the attributes of domain ``sizes`` holds. A set whose grid
    has at most :data:`DENSE_GRID_LIMIT` cells lists every cell; a larger one lists the
    combinations present, at most ``listed`` (the view's rows, plus the truth's). Exact for the
    dense sets; the sets are counted by their grid sizes, never enumerated (many attributes)."""
    # per arity, how many attribute sets have each dense grid size; larger grids pooled in SPARSE
    sparse = -1
    by_grid: list[dict[int, int]] = [{1: 1}]
    top = min(max_attributes, len(sizes))
    for size in sizes:
        for arity in range(min(len(by_grid), top), 0, -1):
            if arity == len(by_grid):
                by_grid.append({})
            grown = by_grid[arity]
            for grid, sets in by_grid[arity - 1].items():
                larger = sparse if grid == sparse or grid * size > DENSE_GRID_LIMIT else grid * size
                grown[larger] = grown.get(larger, 0) + sets
    totals, total = [], 0
    for arity in range(1, len(by_grid)):
        total += sum(sets * (listed if grid == sparse else grid) for grid, sets in by_grid[arity].items())
        totals.append(total)
    return totals


def _refuse_a_sweep_too_large(sizes: Sequence[int], max_attributes: int, listed: int, max_queries: int) -> None:
    totals = equality_sweep_sizes(sizes, max_attributes, listed)
    if totals and totals[-1] > max_queries:
        smaller = [f"{j}: {n:,}" for j, n in enumerate(totals, start=1) if n <= max_queries][-3:]
        hint = f" (sets of up to {'; '.join(smaller)} queries)" if smaller else ""
        raise ParameterError(
            f"an equality sweep over every set of up to {len(totals)} attributes may hold {totals[-1]:,} queries, "
            f"more than the limit of {max_queries:,}: sweep smaller sets{hint}, or raise the limit "
            "(max_queries=N)", parameter="max_queries")


def _align(cells: np.ndarray, counts: np.ndarray, other_cells: np.ndarray, other_counts: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    union = np.union1d(cells, other_cells)
    left = np.zeros(len(union), dtype=np.int64)
    right = np.zeros(len(union), dtype=np.int64)
    left[np.searchsorted(union, cells)] = counts
    right[np.searchsorted(union, other_cells)] = other_counts
    return union, left, right
