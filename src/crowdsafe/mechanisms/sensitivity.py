"""Sensitivity, derived from the query and the privacy unit, never taken on trust from a caller.

The (global) sensitivity of a query f is the most f can change between two neighbouring datasets.
Two neighbour notions (Dwork & Roth 2014, §2.3):

- ``"add-remove"`` (unbounded, the default): one person's rows are added or removed;
- ``"change"`` (bounded): one person's rows are replaced by others.

:func:`neighbour_notion` also takes the names other tools and papers give them
(:data:`NEIGHBOUR_NAMES`: ``"unbounded"``, ``"bounded"``, ``"replace-one"``, ...), each naming
exactly one of the two notions, and returns the notion's own name.

When a person may own several rows, each query first keeps at most ``c`` rows per person
(:mod:`crowdsafe.mechanisms.contribution`); a person then moves at most c rows, and every
sensitivity below is multiplied accordingly.

:func:`local_sensitivity` computes how much a query changes around *this* dataset. It is for
teaching and comparison only: noise calibrated to it is **not** differentially private, because
the noise level itself then depends on the data (Nissim, Raskhodnikova & Smith 2007).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from crowdsafe.errors import ParameterError

Neighbours = Literal["add-remove", "change"]
NEIGHBOURS: tuple[str, ...] = ("add-remove", "change")


#: Other names of the two notions, each unambiguous: "unbounded" and "bounded" DP (Kifer and
#: Machanavajjhala 2011), OpenDP's symmetric (add/remove) and change-one distances.
NEIGHBOUR_NAMES: dict[str, Neighbours] = {
    "unbounded": "add-remove", "add/remove": "add-remove", "add-or-remove": "add-remove",
    "addremove": "add-remove", "symmetric": "add-remove",
    "bounded": "change", "change-one": "change", "replace": "change", "replace-one": "change",
    "substitute": "change", "substitution": "change",
}


def check_neighbours(neighbours: str) -> Neighbours:
    if neighbours not in NEIGHBOURS:
        raise ParameterError(f"neighbours must be 'add-remove' or 'change', got {neighbours!r}")
    return cast(Neighbours, neighbours)  # one of the two values, checked above


def neighbour_notion(name: str) -> Neighbours:
    """The neighbour notion ``name`` gives, by its own name or one of :data:`NEIGHBOUR_NAMES`
    (case, blanks and ``_`` aside): ``"bounded"`` is ``"change"``, ``"unbounded"`` is
    ``"add-remove"``. Anything else is refused, naming both notions and what they mean."""
    if not isinstance(name, str):
        return check_neighbours(name)
    text = "-".join(name.strip().lower().replace("_", "-").split())
    notion = NEIGHBOUR_NAMES.get(text, text)
    if notion not in NEIGHBOURS:
        raise ParameterError(
            f"neighbours must be 'add-remove' (one person's rows added or removed: 'unbounded' DP, the "
            f"default) or 'change' (one person's rows replaced: 'bounded' DP), got {name!r}")
    return cast(Neighbours, notion)


def check_rows_per_person(rows_per_person: int) -> int:
    if isinstance(rows_per_person, bool) or not isinstance(rows_per_person, (int, np.integer)) or rows_per_person < 1:
        raise ParameterError(f"rows per person must be a whole number >= 1, got {rows_per_person!r}")
    return int(rows_per_person)


@dataclass(frozen=True)
class Sensitivity:
    """L1 and L2 sensitivity of a query, with how they were derived.

    ``one_coordinate``: neighbouring answers differ in at most one coordinate (a scalar query, or a
    histogram under add/remove with one row per person), which lets the discrete Gaussian use its
    exact one-dimensional privacy profile.
    """

    l1: float
    l2: float
    neighbours: Neighbours
    rows_per_person: int
    one_coordinate: bool
    derivation: str

    def as_dict(self) -> dict[str, object]:
        return {
            "l1": self.l1,
            "l2": self.l2,
            "neighbours": self.neighbours,
            "rows_per_person": self.rows_per_person,
            "derivation": self.derivation,
        }


def count_sensitivity(neighbours: str = "add-remove", rows_per_person: int = 1) -> Sensitivity:
    """A count (with or without a filter): c. Each of a person's c rows changes the count by at
    most 1; the filter only decides which rows count, so it does not change the bound."""
    neighbours = check_neighbours(neighbours)
    c = check_rows_per_person(rows_per_person)
    how = "added or removed" if neighbours == "add-remove" else "replaced"
    return Sensitivity(
        l1=c, l2=c, neighbours=neighbours, rows_per_person=c, one_coordinate=True,
        derivation=f"count: each of at most {c} {how} row(s) per person moves the count by at most 1",
    )


def histogram_sensitivity(neighbours: str = "add-remove", rows_per_person: int = 1) -> Sensitivity:
    """A histogram or contingency table (every cell a count of disjoint rows).

    Add/remove: a person's c rows add at most c in total over the cells: L1 = c, L2 = c (all in
    one cell). Change: c rows leave cells and c rows enter others: L1 = 2c, L2 = c·√2.
    """
    neighbours = check_neighbours(neighbours)
    c = check_rows_per_person(rows_per_person)
    if neighbours == "add-remove":
        return Sensitivity(
            l1=c, l2=c, neighbours=neighbours, rows_per_person=c, one_coordinate=c == 1,
            derivation=f"histogram: {c} added/removed row(s) per person change cells by {c} in total",
        )
    return Sensitivity(
        l1=2 * c, l2=c * math.sqrt(2.0), neighbours=neighbours, rows_per_person=c, one_coordinate=False,
        derivation=f"histogram: {c} replaced row(s) per person leave one cell and enter another",
    )


# Clamping bounds of larger magnitude are refused: an integer column's clamped values are compared
# with and summed as 64-bit integers (mechanisms.query_aggregates), and no public bound on real
# data needs more.
BOUND_LIMIT = 2.0**62


def check_bounds(lower: float | None, upper: float | None, what: str = "this query") -> tuple[float, float]:
    """Clamping bounds are required for sums, means and quantiles: refuse to run without them,
    and refuse bounds that are not finite, not ordered, or beyond ±2^62 (:data:`BOUND_LIMIT`)."""
    if lower is None or upper is None:
        raise ParameterError(
            f"{what} needs clamping bounds (lower and upper): its sensitivity is unbounded without "
            "them; choose bounds from public knowledge, never from the data"
        )
    try:
        low, high = float(lower), float(upper)
    except (TypeError, ValueError):
        raise ParameterError(f"clamping bounds must be numbers, got {lower!r} and {upper!r}") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ParameterError("clamping bounds must be finite numbers")
    if max(abs(low), abs(high)) > BOUND_LIMIT:
        raise ParameterError(f"clamping bounds must lie within ±2^62 (about 4.6e18), got [{low:g}, {high:g}]")
    if not low < high:
        raise ParameterError(f"the lower clamping bound must be below the upper one, got [{low:g}, {high:g}]")
    return low, high


def change_per_row(low: float, high: float) -> float:
    """The most one replaced value can move a sum of values clamped to [low, high]: within the
    range (high − low), or out of the sum or into it (max(|low|, |high|))."""
    return max(high - low, abs(low), abs(high))


def sum_sensitivity(
    lower: float | None, upper: float | None, neighbours: str = "add-remove", rows_per_person: int = 1
) -> Sensitivity:
    """A sum of values clamped to [L, U]: add/remove c·max(|L|, |U|); change c·max(U − L, |L|, |U|).

    Under change a replaced row need not stay in the sum: a filter, a partition's part or a
    missing value can drop the old row's value x ∈ [L, U] and add nothing (or the other way
    round), which moves the sum by |x|, up to max(|L|, |U|) > U − L when 0 ∉ [L, U]; when both
    rows count, the sum moves by at most U − L.
    """
    low, high = check_bounds(lower, upper, "a sum")
    neighbours = check_neighbours(neighbours)
    c = check_rows_per_person(rows_per_person)
    per_row = change_per_row(low, high) if neighbours == "change" else max(abs(low), abs(high))
    if neighbours == "add-remove":
        why = "an added/removed value lies in [L, U]: max(|L|, |U|)"
    else:
        why = ("a replaced value moves within [L, U] (U − L) or leaves or enters the sum through a filter or "
               "a missing value (max(|L|, |U|)): max(U − L, |L|, |U|)")
    return Sensitivity(
        l1=c * per_row, l2=c * per_row, neighbours=neighbours, rows_per_person=c, one_coordinate=True,
        derivation=f"clamped sum: {why}, times {c} row(s) per person",
    )


def quantile_sensitivity(q: float, neighbours: str = "add-remove", rows_per_person: int = 1) -> Sensitivity:
    """Sensitivity of the quantile score u(y) = −|(1 − q)·#{x < y} − q·#{x > y}|.

    Adding or removing a row moves one of the two counts by 1: u moves by at most max(q, 1 − q).
    Changing a row can move both counts by 1 in opposite directions: at most (1 − q) + q = 1.
    """
    if not 0.0 <= q <= 1.0:
        raise ParameterError(f"a quantile must lie in [0, 1], got {q!r}")
    neighbours = check_neighbours(neighbours)
    c = check_rows_per_person(rows_per_person)
    per_row = max(q, 1.0 - q) if neighbours == "add-remove" else 1.0
    return Sensitivity(
        l1=c * per_row, l2=c * per_row, neighbours=neighbours, rows_per_person=c, one_coordinate=True,
        derivation=f"quantile score: each of {c} row(s) per person moves it by at most {per_row:g}",
    )


@dataclass(frozen=True)
class Clamped:
    """Values clamped to [lower, upper] and how many were moved (exact counts: not DP)."""

    values: np.ndarray
    below: int
    above: int

    @property
    def clamped(self) -> int:
        return self.below + self.above


def clamp(values: np.ndarray, lower: float | None, upper: float | None) -> Clamped:
    """Clamp to [lower, upper] and count the values moved up and down."""
    low, high = check_bounds(lower, upper, "clamping")
    array = np.asarray(values, dtype=np.float64)
    below = int(np.count_nonzero(array < low))
    above = int(np.count_nonzero(array > high))
    return Clamped(np.clip(array, low, high), below, above)


# ---------------------------------------------------------------------------------------------
# Local sensitivity (not DP)
# ---------------------------------------------------------------------------------------------

NOT_DP_NOTE = (
    "local sensitivity depends on the data: noise calibrated to it is NOT differentially private "
    "(Nissim, Raskhodnikova & Smith 2007); for teaching and comparison only"
)


@dataclass(frozen=True)
class LocalSensitivity:
    """How much a query changes between this dataset and its add/remove neighbours. Not DP."""

    query: str
    value: float
    global_value: float
    differentially_private: bool = False
    note: str = NOT_DP_NOTE

    def as_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "local_sensitivity": self.value,
            "global_sensitivity": self.global_value,
            "differentially_private": False,
            "note": self.note,
        }


def local_sensitivity(
    query: str,
    values: np.ndarray | None = None,
    *,
    lower: float | None = None,
    upper: float | None = None,
    q: float = 0.5,
) -> LocalSensitivity:
    """Local sensitivity (add/remove one row) of ``count``, ``sum``, ``mean`` or ``quantile``.

    ``values``: the query's column on this dataset (not needed for ``count``). Values are clamped
    to [lower, upper], which the added row may take anywhere within.
    """
    if query == "count":
        return LocalSensitivity("count", 1.0, 1.0)
    low, high = check_bounds(lower, upper, f"the {query} query")
    if values is None:
        raise ParameterError(f"local sensitivity of {query} needs the column's values")
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), low, high))
    n = x.size
    if query == "sum":
        # Removing x_i moves the sum by |x_i|; adding a value in [L, U] by up to max(|L|, |U|).
        widest = max(abs(low), abs(high))
        return LocalSensitivity("sum", max(widest, float(np.abs(x).max(initial=0.0))), widest)
    if query == "mean":
        if n < 2:
            raise ParameterError("local sensitivity of a mean needs at least two values")
        mean = float(x.mean())
        removed = float(np.abs(x - mean).max()) / (n - 1)
        added = max(abs(low - mean), abs(high - mean)) / (n + 1)
        return LocalSensitivity("mean", max(removed, added), high - low)
    if query in ("quantile", "median"):
        if n < 2:
            raise ParameterError("local sensitivity of a quantile needs at least two values")
        here = float(np.quantile(x, q))
        # The quantile of x plus one value is monotone in that value: the extremes L and U are the
        # worst additions. Removing a value only matters through which order statistics remain.
        positions = {0, n - 1, *range(max(0, int(q * (n - 1)) - 2), min(n, int(q * (n - 1)) + 3))}
        neighbours = [np.append(x, low), np.append(x, high)] + [np.delete(x, i) for i in positions]
        change = max(abs(float(np.quantile(y, q)) - here) for y in neighbours)
        return LocalSensitivity("median" if q == 0.5 else "quantile", change, high - low)
    raise ParameterError(f"no local sensitivity for query {query!r}: use count, sum, mean or quantile")
