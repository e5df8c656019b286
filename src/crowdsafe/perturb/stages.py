"""The per-row stages of the α-β algorithm, as small engine-agnostic functions.

Each function takes plain arrays and a :class:`~crowdsafe.randomness.Randomness` and returns
plain arrays, so another engine (Spark: one call per partition with its own spawned stream) can
run the same stages:

- :func:`keep_mask` — deletion: keep each tuple of I independently with probability α (exactly
  the float α's value, :meth:`~crowdsafe.randomness.Randomness.bernoulli`);
- :func:`binomial` — the number of insertions, Binomial(m − |I|, β), exact for counts of any size;
- :func:`insert_indices` — that many distinct indices drawn uniformly from an index range
  [low, high) minus the sorted indices of I in it (mixed-radix indices, m < 2^64). Splitting
  [0, m) into disjoint ranges and drawing Binomial(|range \\ I|, β) insertions in each gives
  the same distribution as one draw over D \\ I (independent Bernoulli(β) per tuple either way);
- :func:`insert_tuples` — the fallback when m ≥ 2^64: per-attribute uniform draws of codes;
- :func:`in_domain_order` (and :func:`codes_in_domain_order` past 2^64) — the view's tuples in
  the domain's order, so kept and inserted tuples cannot be told apart by position.

Why Binomial + distinct uniform draws is the algorithm: inserting each of the N = |D \\ I|
tuples independently with probability β is the same as drawing K ~ Binomial(N, β) and then a
uniformly random K-subset of D \\ I. Rejection sampling gives a uniform subset: drawing
uniformly from D and discarding tuples of I and repeats yields tuples uniform over what is left
(Devroye 1986, ch. XII); when a batch yields more distinct tuples than needed, a uniform subset
of an exchangeable set is again uniform.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from crowdsafe.data.arrays import sorted_unique
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.binomial import binomial as exact_binomial
from crowdsafe.randomness import Randomness

# Draw the complement instead once more than this share of the available tuples is inserted.
_DENSE_SHARE = 0.5
_OVERDRAW = 1.1


def keep_mask(n: int, alpha: float, randomness: Randomness) -> np.ndarray:
    """Deletion stage: a boolean mask, True (keep) independently with probability α."""
    return randomness.bernoulli(n, alpha)


def binomial(trials: int, p: float, randomness: Randomness) -> int:
    """One exact draw of Binomial(trials, p) for a trial count of any size (a Python int) and
    the float p's exact value: :func:`crowdsafe.mechanisms.binomial.binomial` (p's binary places
    one at a time, each an exact Binomial(·, 1/2) split of the trials still undecided)."""
    return exact_binomial(randomness.generator, trials, p)


def _without(sorted_values: np.ndarray, sorted_excluded: np.ndarray) -> np.ndarray:
    """``sorted_values`` minus the members of ``sorted_excluded`` (both sorted and distinct).

    Binary-searches the (usually smaller) excluded array in the values, not the other way round.
    """
    if len(sorted_excluded) == 0 or len(sorted_values) == 0:
        return sorted_values
    position = np.searchsorted(sorted_values, sorted_excluded)
    inside = position < len(sorted_values)
    position = position[inside]
    hit = position[sorted_values[position] == sorted_excluded[inside]]
    if len(hit) == 0:
        return sorted_values
    keep = np.ones(len(sorted_values), dtype=bool)
    keep[hit] = False
    return sorted_values[keep]


def _uniform_distinct(count: int, low: int, high: int, excluded: np.ndarray, randomness: Randomness) -> np.ndarray:
    """``count`` distinct indices uniform over [low, high) minus sorted ``excluded``, by rejection
    (sorted in increasing order)."""
    generator = randomness.generator
    width = high - low
    available = width - len(excluded)
    accepted = np.empty(0, dtype=np.uint64)
    while len(accepted) < count:
        left = available - len(accepted)
        need = count - len(accepted)
        batch = int(math.ceil(need * (width / left) * _OVERDRAW)) + 16
        draws = _without(sorted_unique(generator.integers(low, high, batch, dtype=np.uint64)), excluded)
        # the first batch is already sorted and distinct (most runs need no second)
        accepted = sorted_unique(np.concatenate([accepted, draws])) if len(accepted) else draws
    excess = len(accepted) - count
    if excess:
        # dropping a uniform random subset of an exchangeable set leaves a uniform subset
        dropped = np.zeros(len(accepted), dtype=bool)
        dropped[generator.choice(len(accepted), excess, replace=False)] = True
        accepted = accepted[~dropped]
    return accepted


def insert_indices(
    count: int, low: int, high: int, existing: np.ndarray, randomness: Randomness
) -> np.ndarray:
    """``count`` distinct uint64 indices drawn uniformly from [low, high) minus ``existing``.

    ``existing`` holds the sorted, distinct indices of I inside [low, high). When more than half
    of the available indices are to be inserted, the complement (the indices *not* inserted) is
    drawn instead and the range enumerated (:func:`_uniform_distinct_by_complement`), which stays
    fast as β approaches 1; the range is then at most about twice the output, so nothing large is
    materialized. Otherwise rejection (:func:`_uniform_distinct`), the reference twin. The result is
    sorted in increasing order (both ways give it so: :func:`in_domain_order` relies on it).
    """
    if not 0 <= low < high <= 2**64:
        raise ParameterError(f"an index range must satisfy 0 <= low < high <= 2^64, got [{low}, {high})")
    existing = np.asarray(existing, dtype=np.uint64)
    available = (high - low) - len(existing)
    if not 0 <= count <= available:
        raise ParameterError(f"cannot insert {count} tuples: only {available} tuples of the range are not in the data")
    if count == 0:
        return np.empty(0, dtype=np.uint64)
    if count <= _DENSE_SHARE * available:
        return _uniform_distinct(count, low, high, existing, randomness)
    return _uniform_distinct_by_complement(count, low, high, existing, randomness)


def _uniform_distinct_by_complement(count: int, low: int, high: int, existing: np.ndarray,
                                    randomness: Randomness) -> np.ndarray:
    """:func:`_uniform_distinct` by drawing the indices left out (uniform, so their complement
    is) and enumerating the range: fast when ``count`` is most of the available indices, where
    rejection would mostly redraw indices already accepted. The same distribution, other draws."""
    available = (high - low) - len(existing)
    left_out = _uniform_distinct(available - count, low, high, existing, randomness)
    chosen = np.ones(high - low, dtype=bool)
    chosen[(existing - np.uint64(low)).astype(np.int64)] = False
    chosen[(left_out - np.uint64(low)).astype(np.int64)] = False
    return np.flatnonzero(chosen).astype(np.uint64) + np.uint64(low)


def insert_tuples(
    count: int, sizes: list[int], existing: pl.DataFrame, randomness: Randomness
) -> pl.DataFrame:
    """``count`` distinct tuples uniform over D \\ I by per-attribute code draws (any m).

    ``existing`` is the frame of I's distinct code tuples (columns ``c0, c1, ...`` as UInt32,
    one per attribute). Used when m ≥ 2^64, where a tuple has no 64-bit index; such a domain is
    so large that rejections are rare. Returns a frame of the same columns.
    """
    columns = [f"c{i}" for i in range(len(sizes))]
    if list(existing.columns) != columns:
        raise ParameterError(f"the existing tuples must have the columns {columns}")
    generator = randomness.generator
    available = math.prod(sizes) - existing.height
    if not 0 <= count <= available:
        raise ParameterError(f"cannot insert {count} tuples: only {available} tuples are not in the data")
    existing = existing.cast({c: pl.UInt32 for c in columns})
    accepted = existing.clear()
    while accepted.height < count:
        batch = int(math.ceil((count - accepted.height) * _OVERDRAW)) + 16
        draws = pl.DataFrame({
            c: generator.integers(0, size, batch, dtype=np.uint32) for c, size in zip(columns, sizes)
        })
        fresh = draws.join(existing, on=columns, how="anti")
        accepted = pl.concat([accepted, fresh]).unique(maintain_order=False)
    if accepted.height > count:
        accepted = accepted[np.sort(generator.choice(accepted.height, count, replace=False))]
    return accepted


def in_domain_order(kept: np.ndarray, inserted: np.ndarray) -> np.ndarray:
    """The view's indices in increasing order: ``kept`` and ``inserted`` merged (each sorted, and
    disjoint: inserted tuples are drawn from D \\ I).

    Why this order is safe: the view is a set (every tuple once), so its increasing order is a
    function of the published set alone. A row's position then tells nothing about whether it
    was kept or inserted — what a uniform random shuffle of the set also gives (both are
    post-processing of the set, whose distribution the theorem is about) — with no coins
    drawn and no random gather: decoding a view in the domain's order is about twice as fast
    as decoding a shuffled one (docs/performance.md, "α-β perturbation"). A linear merge, whose
    reference twin is :func:`_in_domain_order_by_sort` (tests/perturb/test_perturb_stages.py)."""
    kept = np.asarray(kept, dtype=np.uint64)
    inserted = np.asarray(inserted, dtype=np.uint64)
    # each kept index lands after the inserted ones below it and the kept ones before it
    at = np.searchsorted(inserted, kept) + np.arange(len(kept), dtype=np.int64)
    merged = np.empty(len(kept) + len(inserted), dtype=np.uint64)
    from_kept = np.zeros(len(merged), dtype=bool)
    from_kept[at] = True
    merged[at] = kept
    merged[~from_kept] = inserted
    return merged


def _in_domain_order_by_sort(kept: np.ndarray, inserted: np.ndarray) -> np.ndarray:
    """:func:`in_domain_order` by sorting both together: the reference twin."""
    return np.sort(np.concatenate([np.asarray(kept, dtype=np.uint64), np.asarray(inserted, dtype=np.uint64)]))


def codes_in_domain_order(codes: pl.DataFrame) -> pl.DataFrame:
    """The view's code tuples (columns ``c0, c1, ...``) in the domain's order when m ≥ 2^64 and a
    tuple has no 64-bit index: sorted by ``c0``, then ``c1``, ..., the order the mixed-radix
    index gives when there is one (its first attribute is the most significant). A function of
    the published set alone, as :func:`in_domain_order`."""
    return codes.sort(codes.columns)
