"""t-closeness (Li, Li and Venkatasubramanian 2007) with the Earth Mover's Distance.

A class is t-close when the EMD between its sensitive distribution Q and the table's P is at
most t; the table's t is the largest class EMD. Ground distances, as in the paper:

- **equal**: every two values are at distance 1, so EMD = ½ Σ |q_i − p_i| (total variation);
- **ordered** (numeric, date, ordinal): values ranked 1..m by their order, distance
  |i − j| / (m − 1), so EMD = (1 / (m − 1)) Σ_i |Σ_{j ≤ i} (q_j − p_j)|; m counts the values
  present in the table;
- **hierarchical** (a generalization hierarchy over the values): two values are at distance
  level(lowest common ancestor) / H. EMD = Σ over internal nodes N of
  (level(N) / H) · min(pos_extra(N), neg_extra(N)), where extra(leaf) = q − p,
  extra(N) = Σ extra(children), and pos/neg_extra(N) sum the positive / negative extras of
  N's children. A hierarchy with several top nodes gets one virtual root above them.

``auto`` picks hierarchical for a categorical attribute with a hierarchy, ordered for numeric,
date and ordinal attributes, equal otherwise. Classes are processed in blocks of a dense
class × value matrix, so memory stays bounded.
"""

from __future__ import annotations

import numpy as np

from crowdsafe.data import Hierarchy
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.models.classes import SensitiveCounts

GROUND_DISTANCES = ("auto", "equal", "ordered", "hierarchical")
_BLOCK_CELLS = 1 << 22  # entries of a dense class x value block


def choose_ground(counts: SensitiveCounts, ground: str, hierarchy: Hierarchy | None) -> str:
    """The ground distance ``auto`` stands for, or ``ground`` itself after validation."""
    if ground not in GROUND_DISTANCES:
        raise ParameterError(f"unknown ground distance {ground!r}; use one of: {', '.join(GROUND_DISTANCES)}")
    if ground == "hierarchical" and hierarchy is None:
        raise HierarchyError(f"hierarchical distance needs a hierarchy for '{counts.attribute}'")
    if ground != "auto":
        return ground
    if counts.attribute_type in (AttributeType.NUMERIC, AttributeType.DATE, AttributeType.ORDINAL):
        return "ordered"
    return "hierarchical" if hierarchy is not None else "equal"


def _blocks(n_classes: int, width: int):
    step = max(1, _BLOCK_CELLS // max(width, 1))
    for start in range(0, n_classes, step):
        yield start, min(start + step, n_classes)


def _dense(counts: SensitiveCounts, column: np.ndarray, width: int, start: int, stop: int) -> np.ndarray:
    """Q − P for classes start..stop-1 over ``width`` columns (``column`` maps each entry)."""
    lo, hi = np.searchsorted(counts.cls, [start, stop])
    block = np.zeros((stop - start, width))
    block[counts.cls[lo:hi] - start, column[lo:hi]] = counts.share_in_class[lo:hi]
    return block


def equal_emd(counts: SensitiveCounts) -> np.ndarray:
    """½ Σ|q − p| per class, from the sparse entries: values absent from a class add p each."""
    q, p = counts.share_in_class, counts.share_overall
    present = np.bincount(counts.cls, weights=np.abs(q - p) - p, minlength=counts.n_classes)
    return np.clip(0.5 * (1.0 + present), 0.0, 1.0)


def ordered_emd(counts: SensitiveCounts) -> np.ndarray:
    """Ordered-distance EMD per class; codes are ranked by the value dictionary's order."""
    observed = counts.overall > 0
    m = int(observed.sum())
    if m <= 1:
        return np.zeros(counts.n_classes)
    rank = (np.cumsum(observed) - 1).astype(np.int64)
    overall = counts.overall[observed] / counts.rows
    column = rank[counts.code]
    out = np.empty(counts.n_classes)
    for start, stop in _blocks(counts.n_classes, m):
        diff = _dense(counts, column, m, start, stop) - overall
        out[start:stop] = np.abs(np.cumsum(diff, axis=1)).sum(axis=1) / (m - 1)
    return out


def hierarchical_emd(counts: SensitiveCounts, hierarchy: Hierarchy) -> np.ndarray:
    """Hierarchical-distance EMD per class; the counts' codes must be the hierarchy's leaf codes."""
    leaves = hierarchy.size(0)
    if counts.overall.shape[0] > leaves:
        raise HierarchyError(f"the codes of '{counts.attribute}' are not leaf codes of its hierarchy")
    parents = [np.asarray(p, dtype=np.int64) for p in hierarchy.parents]
    if hierarchy.size(hierarchy.height) > 1:
        parents.append(np.zeros(hierarchy.size(hierarchy.height), dtype=np.int64))  # virtual root
    height = len(parents)
    if height == 0:
        return np.zeros(counts.n_classes)
    overall = np.zeros(leaves)
    overall[: counts.overall.shape[0]] = counts.overall / counts.rows
    out = np.zeros(counts.n_classes)
    for start, stop in _blocks(counts.n_classes, leaves):
        extra = _dense(counts, counts.code, leaves, start, stop) - overall
        cost = np.zeros(stop - start)
        for level, parent in enumerate(parents, start=1):
            to_parent = np.zeros((len(parent), int(parent.max()) + 1))
            to_parent[np.arange(len(parent)), parent] = 1.0
            positive = np.maximum(extra, 0.0) @ to_parent
            negative = np.maximum(-extra, 0.0) @ to_parent
            cost += (level / height) * np.minimum(positive, negative).sum(axis=1)
            extra = positive - negative
        out[start:stop] = cost
    return out


def emd_per_class(counts: SensitiveCounts, ground: str, hierarchy: Hierarchy | None = None) -> np.ndarray:
    """EMD of every class to the table's distribution under the chosen ground distance."""
    if ground == "equal":
        return equal_emd(counts)
    if ground == "ordered":
        return ordered_emd(counts)
    if ground == "hierarchical":
        if hierarchy is None:
            raise HierarchyError(f"hierarchical distance needs a hierarchy for '{counts.attribute}'")
        return hierarchical_emd(counts, hierarchy)
    raise ParameterError(f"unknown ground distance {ground!r}; use one of: {', '.join(GROUND_DISTANCES[1:])}")
