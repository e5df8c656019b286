"""Vectorised ℓ-diversity and t-closeness checks for the inner loops of the anonymizers.

Mondrian checks every candidate split, and the lattice search every candidate node, so the
checks here take a whole batch of classes at once: a ``(classes, values)`` matrix of counts of
each sensitive value in each class, and return one boolean per class. They implement the same
definitions as :mod:`crowdsafe.models` (which reports on finished tables):

- entropy ℓ-diversity (Machanavajjhala et al. 2007): ``-Σ p log p ≥ log ℓ`` in every class;
- t-closeness (Li, Li and Venkatasubramanian 2007): the Earth Mover's Distance between a
  class's distribution of the sensitive value and the whole table's is at most t, with the
  *equal* ground distance (``½ Σ |p − q|``), the *ordered* one (values ranked 1..m, distance
  ``|i − j| / (m − 1)``; EMD ``= Σ_i |Σ_{j≤i} (p_j − q_j)| / (m − 1)``) or the *hierarchical*
  one (distance = height of the lowest common ancestor / height of the hierarchy; EMD by the
  paper's bottom-up formula ``Σ_N height(N)/H · min(pos_extra(N), neg_extra(N))``).

Comparisons allow a relative slack of 1e-12, so a class exactly at the bound (three equally
frequent values for ℓ = 3) passes despite rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from crowdsafe.data import AttributeType, Dataset, Hierarchy
from crowdsafe.errors import ParameterError, SchemaError

GroundDistance = Literal["equal", "ordered", "hierarchical"]
SLACK = 1e-12


def entropy(hist: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row of a count matrix."""
    hist = np.asarray(hist, dtype=float)
    totals = hist.sum(axis=1, keepdims=True)
    p = np.divide(hist, totals, out=np.zeros_like(hist), where=totals > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p), 0.0)
    return -terms.sum(axis=1)


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """EMD with equal ground distance: total variation distance, row by row."""
    return 0.5 * np.abs(p - q).sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """EMD with ordered distance; columns are the values in their order (m ≥ 2)."""
    m = p.shape[1]
    if m < 2:
        return np.zeros(p.shape[0])
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (m - 1)


def emd_hierarchical(p: np.ndarray, q: np.ndarray, hierarchy: Hierarchy) -> np.ndarray:
    """EMD with hierarchical distance; columns are the hierarchy's leaf codes.

    A hierarchy whose top level has several nodes gets one virtual root above them.
    """
    levels = [hierarchy.parents[i] for i in range(hierarchy.height)]
    if hierarchy.size(hierarchy.height) > 1:
        levels.append(np.zeros(hierarchy.size(hierarchy.height), dtype=np.int64))
    height = len(levels)
    if height == 0:
        return np.zeros(p.shape[0])
    extra = p - q
    cost = np.zeros(p.shape[0])
    for level, parent in enumerate(levels, start=1):
        size = int(parent.max()) + 1
        positive = np.zeros((p.shape[0], size))
        negative = np.zeros((p.shape[0], size))
        np.add.at(positive.T, parent, np.clip(extra, 0.0, None).T)
        np.add.at(negative.T, parent, np.clip(-extra, 0.0, None).T)
        cost += (level / height) * np.minimum(positive, negative).sum(axis=1)
        extra = positive - negative
    return cost


@dataclass(frozen=True)
class SensitiveConstraints:
    """Entropy ℓ-diversity and/or t-closeness on one sensitive attribute, bound to a table.

    ``reference`` is the table's distribution of the sensitive value (indexed by its codes);
    ``order`` the column order used by the ordered distance (codes sorted by value).
    """

    attribute: str
    l: float | None = None
    t: float | None = None
    distance: GroundDistance = "equal"
    reference: np.ndarray = field(default_factory=lambda: np.zeros(0))
    order: np.ndarray | None = None
    hierarchy: Hierarchy | None = None

    @property
    def active(self) -> bool:
        return self.l is not None or self.t is not None

    def satisfied(self, hist: np.ndarray) -> np.ndarray:
        """One boolean per row of ``hist`` (counts of each sensitive code in each class)."""
        hist = np.asarray(hist, dtype=float)
        ok = np.ones(hist.shape[0], dtype=bool)
        if self.l is not None:
            bound = math.log(self.l)
            ok &= entropy(hist) >= bound - SLACK * max(1.0, bound)
        if self.t is not None:
            ok &= self.distances(hist) <= self.t + SLACK
        return ok

    def distances(self, hist: np.ndarray) -> np.ndarray:
        """EMD of each class's distribution to the table's."""
        hist = np.asarray(hist, dtype=float)
        totals = hist.sum(axis=1, keepdims=True)
        p = np.divide(hist, totals, out=np.zeros_like(hist), where=totals > 0)
        q = np.broadcast_to(self.reference, p.shape)
        if self.distance == "equal":
            return emd_equal(p, q)
        if self.distance == "ordered":
            assert self.order is not None
            return emd_ordered(p[:, self.order], q[:, self.order])
        assert self.hierarchy is not None
        return emd_hierarchical(p, q, self.hierarchy)

    def statement(self) -> str:
        """The constraints in words, e.g. "entropy ℓ-diversity with ℓ = 3 on 'occupation'"."""
        parts = []
        if self.l is not None:
            parts.append(f"entropy ℓ-diversity with ℓ = {self.l:g}")
        if self.t is not None:
            parts.append(f"t-closeness with t = {self.t:g} ({self.distance} distance)")
        return " and ".join(parts) + f" on '{self.attribute}'"

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"sensitive": self.attribute}
        if self.l is not None:
            out["l"] = self.l
            out["l_diversity"] = "entropy"
        if self.t is not None:
            out["t"] = self.t
            out["t_closeness_distance"] = self.distance
        return out


NO_CONSTRAINTS = SensitiveConstraints(attribute="")


def default_distance(dataset: Dataset, attribute: str) -> GroundDistance:
    """Ordered distance for numeric, date and ordinal attributes, else equal distance.

    For a categorical attribute with a hierarchy, equal distance is the safe default: every
    hierarchical distance is at most 1, so a class t-close under the equal distance is t-close
    under the hierarchical one too, whichever a checker picks (a release read back without its
    hierarchies can only be checked with the equal distance).
    """
    kind = dataset.schema[attribute].type
    return "ordered" if kind in (AttributeType.NUMERIC, AttributeType.DATE, AttributeType.ORDINAL) else "equal"


def sensitive_constraints(
    dataset: Dataset,
    sensitive: str | None,
    *,
    l: float | None = None,
    t: float | None = None,
    distance: GroundDistance | None = None,
) -> SensitiveConstraints:
    """Bind ℓ / t to ``dataset``'s sensitive attribute (``None`` for both: no constraint).

    The codes are the data layer's (hierarchy leaf codes when the attribute has a hierarchy),
    so class histograms built from :func:`crowdsafe.data.encode` codes index ``reference``.
    """
    if l is None and t is None:
        return NO_CONSTRAINTS
    if sensitive is None:
        raise ParameterError(
            "ℓ-diversity and t-closeness need a sensitive attribute; name it with the sensitive parameter",
            parameter="sensitive",
        )
    if sensitive not in dataset.schema:
        dataset.schema[sensitive]  # raises a SchemaError naming the attributes
    if sensitive in dataset.quasi_identifiers:
        raise SchemaError(f"'{sensitive}' is a quasi-identifier; a sensitive attribute cannot be one")
    if l is not None and not (isinstance(l, (int, float)) and l >= 1.0 and math.isfinite(l)):
        raise ParameterError(f"ℓ must be a number >= 1, got {l!r}")
    if t is not None and not (isinstance(t, (int, float)) and 0.0 <= t <= 1.0):
        raise ParameterError(f"t must lie in [0, 1], got {t!r}")
    encoded = dataset.encoded(sensitive)
    counts = np.bincount(encoded.codes, minlength=encoded.cardinality).astype(float)
    reference = counts / counts.sum()
    distance = distance or default_distance(dataset, sensitive)
    order = None
    hierarchy = None
    if distance == "ordered":
        order = _value_order(dataset, sensitive)
        present = counts[order] > 0
        order = order[present]  # the ordered distance runs over the values in the table
    elif distance == "hierarchical":
        hierarchy = dataset.hierarchies.get(sensitive)
        if hierarchy is None:
            raise ParameterError(
                f"the hierarchical distance needs a hierarchy for '{sensitive}'; give one, or "
                "use the equal or ordered distance"
            )
    elif distance != "equal":
        raise ParameterError(f"unknown ground distance {distance!r}; use equal, ordered or hierarchical")
    return SensitiveConstraints(sensitive, l, t, distance, reference, order, hierarchy)


def _value_order(dataset: Dataset, attribute: str) -> np.ndarray:
    """Codes of ``attribute`` sorted by value (declared order for ordinal attributes)."""
    dictionary = dataset.encoded(attribute).dictionary
    spec = dataset.schema[attribute]
    if spec.type is AttributeType.ORDINAL and spec.order is not None:
        position = {str(v): i for i, v in enumerate(spec.order)}
        keys = np.asarray([position.get(str(v), len(position)) for v in dictionary.to_list()])
        return np.argsort(keys, kind="stable")
    if dictionary.dtype.is_numeric() or dictionary.dtype.is_temporal():
        return np.asarray(dictionary.to_physical().arg_sort(nulls_last=True))
    return np.asarray(dictionary.cast(str).arg_sort(nulls_last=True))


def classes_satisfying(
    constraints: SensitiveConstraints,
    class_of: np.ndarray,
    sensitive: np.ndarray,
    n_classes: int,
    weights: np.ndarray | None = None,
    *,
    block_cells: int = 1 << 23,
) -> np.ndarray:
    """Which of ``n_classes`` classes satisfy ``constraints``.

    ``class_of[i]`` and ``sensitive[i]`` are the class and the sensitive code of item i (a row,
    or a cell holding ``weights[i]`` rows). Histograms are built a block of classes at a time,
    so memory stays bounded whatever the number of classes and sensitive values.
    """
    if not constraints.active:
        return np.ones(n_classes, dtype=bool)
    width = len(constraints.reference)
    ok = np.empty(n_classes, dtype=bool)
    block = max(1, block_cells // max(width, 1))
    if n_classes <= block:
        hist = np.bincount(class_of * width + sensitive, weights=weights, minlength=n_classes * width)
        return constraints.satisfied(hist.reshape(n_classes, width))
    order = np.argsort(class_of, kind="stable")
    sorted_classes = class_of[order]
    for start in range(0, n_classes, block):
        stop = min(start + block, n_classes)
        lo, hi = np.searchsorted(sorted_classes, [start, stop])
        chosen = order[lo:hi]
        local = (class_of[chosen] - start) * width + sensitive[chosen]
        hist = np.bincount(local, weights=None if weights is None else weights[chosen],
                           minlength=(stop - start) * width)
        ok[start:stop] = constraints.satisfied(hist.reshape(stop - start, width))
    return ok
