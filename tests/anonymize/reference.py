"""Slow, obviously correct reference implementations used by the anonymize tests.

Written from the published definitions, row by row, with plain Python lists and recursion,
sharing no code with crowdsafe.anonymize.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from crowdsafe.data import Dataset, Hierarchy


@dataclass
class RefAttribute:
    name: str
    numeric: bool
    span: float = 0.0  # numeric: max - min over the table
    hierarchy: Hierarchy | None = None
    ancestors: dict | None = None  # value -> [node label at level 0..H]
    leaves_under: list | None = None  # per level: node label -> number of leaves
    leaf_index: dict | None = None  # value -> position among the hierarchy's leaves

    def width(self, values: list) -> float:
        if self.numeric:
            return (max(values) - min(values)) / self.span if self.span > 0 else 0.0
        level, node = self.common_node(values)
        return 0.0 if level == 0 else self.leaves_under[level][node] / len(self.hierarchy.labels[0])

    def common_node(self, values: list) -> tuple[int, str]:
        for level in range(self.hierarchy.height + 1):
            nodes = {self.ancestors[v][level] for v in values}
            if len(nodes) == 1:
                return level, nodes.pop()
        raise AssertionError("the root is common to all values")


def ref_attributes(dataset: Dataset, columns: list[str]) -> list[RefAttribute]:
    out = []
    for name in columns:
        values = dataset.frame.get_column(name).to_list()
        if dataset.schema[name].type.value == "numeric":
            hierarchy = dataset.hierarchies.get(name)
            order = None
            if hierarchy is not None:
                order = {v: i for i, v in enumerate(hierarchy.leaves.to_list())}
            out.append(RefAttribute(name, True, float(max(values) - min(values)), leaf_index=order))
            continue
        hierarchy = dataset.hierarchies[name]
        leaves = hierarchy.leaves.to_list()
        ancestors = {}
        for index, leaf in enumerate(leaves):
            chain = [str(leaf)]
            for level in range(1, hierarchy.height + 1):
                chain.append(hierarchy.labels[level][int(hierarchy.leaf_map(level)[index])])
            ancestors[leaf] = chain
        leaves_under = []
        for level in range(hierarchy.height + 1):
            counts: dict[str, int] = {}
            for chain in ancestors.values():
                counts[chain[level]] = counts.get(chain[level], 0) + 1
            leaves_under.append(counts)
        out.append(RefAttribute(name, False, hierarchy=hierarchy, ancestors=ancestors,
                                leaves_under=leaves_under,
                                leaf_index={v: i for i, v in enumerate(leaves)}))
    return out


def reference_mondrian(
    rows: list[tuple], attrs: list[RefAttribute], k: int, relaxed: bool = False,
) -> list[list[tuple]]:
    """Mondrian (LeFevre et al. 2006) on a list of rows; returns the final partitions.

    Cut on the widest normalized attribute first (ties: attribute order), then the next.
    Strict numeric cut: median m = the ceil(N/2)-th smallest value; left = values <= m (below
    the largest value when m is the largest). Relaxed numeric cut: rows sorted by the value
    (ties by the tuple of leaf positions) cut into the floor(N/2) first and the rest.
    Categorical: into the children of the lowest common hierarchy node. Every part >= k.
    """
    d = len(attrs)

    def tuple_key(row):
        return tuple(a.leaf_index[row[j]] if a.leaf_index is not None else row[j] for j, a in enumerate(attrs))

    def cut(part):
        if len(part) < 2 * k:
            return None
        widths = [attrs[j].width([r[j] for r in part]) for j in range(d)]
        for j in sorted(range(d), key=lambda j: -widths[j]):
            if widths[j] <= 0:
                return None
            a = attrs[j]
            if a.numeric and relaxed:
                ordered = sorted(part, key=lambda r: (r[j], tuple_key(r)))
                half = len(part) // 2
                if half >= k:
                    return [ordered[:half], ordered[half:]]
            elif a.numeric:
                values = sorted(r[j] for r in part)
                median = values[math.ceil(len(values) / 2) - 1]
                if median == values[-1]:
                    median = max(v for v in values if v < values[-1])
                left = [r for r in part if r[j] <= median]
                right = [r for r in part if r[j] > median]
                if len(left) >= k and len(right) >= k:
                    return [left, right]
            else:
                level, _ = a.common_node([r[j] for r in part])
                groups: dict[str, list] = {}
                for r in part:
                    groups.setdefault(a.ancestors[r[j]][level - 1], []).append(r)
                if all(len(g) >= k for g in groups.values()):
                    return list(groups.values())
        return None

    final, todo = [], [rows]
    while todo:
        part = todo.pop()
        pieces = cut(part)
        if pieces is None:
            final.append(part)
        else:
            todo.extend(pieces)
    return final


def reference_ncp(partitions: list[list[tuple]], attrs: list[RefAttribute]) -> float:
    """Normalized certainty penalty (Xu et al. 2006): mean over rows and attributes of the
    width of the published value (numeric range over the table's range; hierarchy node's
    leaves over all leaves; 0 for an exact value)."""
    total = 0.0
    rows = 0
    for part in partitions:
        rows += len(part)
        for j, a in enumerate(attrs):
            total += len(part) * a.width([r[j] for r in part])
    return total / (rows * len(attrs))


def covers(cell, value, hierarchy: Hierarchy | None) -> bool:
    """Whether a published cell (release representation) covers the original ``value``.

    Independent reading of docs/architecture.md: ``*``; ``[a, b]`` closed range; ``[a, b)``
    half-open; ``>=a`` / ``<b``; ``{x, y}`` a set; a hierarchy node label; else the value itself.
    """
    if cell is None or value is None:
        return cell == value
    text = str(cell)
    if text == "*":
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if text.startswith(("[", "(")) and text.endswith(("]", ")")):
            low, high = (float(x) for x in text[1:-1].split(", "))
            above = value >= low if text[0] == "[" else value > low
            below = value <= high if text[-1] == "]" else value < high
            return above and below
        if text.startswith(">="):
            return value >= float(text[2:])
        if text.startswith("<"):
            return value < float(text[1:])
    if text.startswith("{") and text.endswith("}"):
        return str(value) in text[1:-1].split(", ")
    if hierarchy is not None:
        leaves = [str(v) for v in hierarchy.leaves.to_list()]
        if str(value) in leaves:
            index = leaves.index(str(value))
            for level in range(hierarchy.height + 1):
                label = hierarchy.labels[level][int(hierarchy.leaf_map(level)[index])]
                if label == text:
                    return True
    try:
        return float(text) == float(value)
    except (TypeError, ValueError):
        return text == str(value)


def entropy_of(values: list) -> float:
    counts: dict = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    n = len(values)
    return -sum(c / n * math.log(c / n) for c in counts.values())


def emd_equal_of(values: list, table: list) -> float:
    """Earth Mover's Distance with equal ground distance: half the L1 distance."""
    keys = set(table)
    p = {v: values.count(v) / len(values) for v in keys}
    q = {v: table.count(v) / len(table) for v in keys}
    return 0.5 * sum(abs(p[v] - q[v]) for v in keys)
