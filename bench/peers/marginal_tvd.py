"""Total variation distance of the 1- and 2-way marginals of a table against adult.data,
on the public domains (NumPy only: imported by synthetic.py in its own environment and by
tests/bench without crowdsafe).

The workload of issue 36: every 1-way and every 2-way marginal of the nine columns (eight
quasi-identifiers and income), each normalized to a probability distribution over the leaves
(age one value per year 17..90, every category of adult_public.CATEGORIES, '?' its own
value). TVD = 1/2 * sum |p - q| over all leaf tuples (a tuple absent from one table counts as
0 there). A cell that covers several leaves (a binned age, a '*') is spread uniformly over
the leaves it covers; a row that is absent (suppressed) simply does not count. This is the
definition of crowdsafe.metrics.marginals (spread_marginal, distance), which
tests/bench/test_marginals.py checks on small tables.

A table is given as ``{column: (cells, weights)}``: ``cells`` the cell index of each row,
``weights`` a (cells x leaves) matrix whose row j spreads cell j over the leaves (each row
sums to 1). An original column is ``(codes, identity)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import adult_public
import numpy as np

COLUMNS = adult_public.QUASI_IDENTIFIERS + (adult_public.TARGET,)
MISSING = "?"

Table = Mapping[str, tuple[np.ndarray, np.ndarray]]


def leaf_count(column: str) -> int:
    """Leaves of a column: 74 ages, or the public categories (with '?')."""
    if column == "age":
        return adult_public.AGE_MAX - adult_public.AGE_MIN + 1
    return len(adult_public.CATEGORIES[column])


def leaf_codes(data: Mapping[str, np.ndarray], column: str) -> np.ndarray:
    """The leaf codes of adult_public's encoding (age 17..90 -> 0..73)."""
    values = np.asarray(data[column], dtype=np.int64)
    return values - adult_public.AGE_MIN if column == "age" else values


def star_leaves(train: Mapping[str, np.ndarray], column: str) -> np.ndarray:
    """The leaves a '*' covers: every public value of the column, '?' only when the training
    split holds one (crowdsafe's Adult domain: the hierarchies' leaves, with a missing-value
    leaf for the columns that have missing values)."""
    n = leaf_count(column)
    if column == "age":
        return np.arange(n)
    missing = adult_public.CATEGORIES[column].index(MISSING) if MISSING in adult_public.CATEGORIES[column] else None
    keep = np.ones(n, dtype=bool)
    if missing is not None and not np.any(np.asarray(train[column]) == missing):
        keep[missing] = False
    return np.nonzero(keep)[0]


def original(data: Mapping[str, np.ndarray], columns: Sequence[str] = COLUMNS) -> dict:
    """A table of original values: every cell one leaf."""
    return {c: (leaf_codes(data, c), np.eye(leaf_count(c))) for c in columns}


def age_bins(bin_index: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Age binned as (age - 17) // width: each bin spread uniformly over its years (the last
    bin stops at 90)."""
    n = leaf_count("age")
    bins = (n - 1) // width + 1
    weights = np.zeros((bins, n))
    for b in range(bins):
        years = np.arange(b * width, min((b + 1) * width, n))
        weights[b, years] = 1.0 / len(years)
    return np.asarray(bin_index, dtype=np.int64), weights


def all_star(train: Mapping[str, np.ndarray], rows: int = 1, columns: Sequence[str] = COLUMNS) -> dict:
    """A table of ``rows`` rows of '*' in every column."""
    out = {}
    for c in columns:
        weights = np.zeros((1, leaf_count(c)))
        leaves = star_leaves(train, c)
        weights[0, leaves] = 1.0 / len(leaves)
        out[c] = (np.zeros(rows, dtype=np.int64), weights)
    return out


def marginal(table: Table, columns: Sequence[str]) -> np.ndarray:
    """The normalized 1- or 2-way marginal over leaves (a vector or a matrix)."""
    if len(columns) == 1:
        cells, weights = table[columns[0]]
        counts = np.bincount(cells, minlength=weights.shape[0]).astype(np.float64)
        dist = counts @ weights
    else:
        (ca, wa), (cb, wb) = table[columns[0]], table[columns[1]]
        na, nb = wa.shape[0], wb.shape[0]
        counts = np.bincount(ca * nb + cb, minlength=na * nb).reshape(na, nb).astype(np.float64)
        dist = wa.T @ counts @ wb
    total = dist.sum()
    if total <= 0:
        raise ValueError("the table has no rows: its marginals are undefined")
    return dist / total


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    return min(0.5 * float(np.abs(p - q).sum()), 1.0)


def distances(truth: Table, release: Table, columns: Sequence[str] = COLUMNS) -> dict:
    """Mean 1-way and 2-way TVD (and max, and per column / pair) of ``release`` against ``truth``."""
    ones = {c: tvd(marginal(truth, [c]), marginal(release, [c])) for c in columns}
    twos = {
        f"{a} x {b}": tvd(marginal(truth, [a, b]), marginal(release, [a, b]))
        for a, b in itertools.combinations(columns, 2)
    }
    worst = max(twos, key=twos.get)
    return {
        "tvd_1way_mean": round(float(np.mean(list(ones.values()))), 5),
        "tvd_2way_mean": round(float(np.mean(list(twos.values()))), 5),
        "tvd_2way_max": round(twos[worst], 5),
        "tvd_2way_worst": worst,
        "tvd_1way": {k: round(v, 5) for k, v in ones.items()},
        "tvd_2way": {k: round(v, 5) for k, v in twos.items()},
    }


def from_cells(covered: Sequence[Sequence[int]], column: str) -> tuple[np.ndarray, np.ndarray]:
    """A column given, per row, as the leaf codes its cell covers (any generalized cell):
    the distinct cells and their uniform spread."""
    index: dict[tuple[int, ...], int] = {}
    cells = np.array([index.setdefault(tuple(sorted(set(c))), len(index)) for c in covered], dtype=np.int64)
    weights = np.zeros((len(index), leaf_count(column)))
    for leaves, j in index.items():
        weights[j, list(leaves)] = 1.0 / len(leaves)
    return cells, weights
