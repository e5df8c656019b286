"""The schema review page's content: per column its role, why, its hierarchy as a tree, whether
the hierarchy covers the data, and the choices read from the data that the custodian must confirm:
its type when the values chose it (``type integer``...; not shown for an identifier, which no
release publishes) and its hierarchy's.

All of it is custodian-only: the draft and the trees are read from the data (the page says so).
A tree is cut to a readable size (:data:`MAX_CHILDREN` children a node, :data:`MAX_NODES` nodes a
tree); the counts say what was left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from crowdsafe.app.workspace import Review
    from crowdsafe.data import Dataset, Hierarchy

MAX_CHILDREN = 12
MAX_NODES = 240
MAX_OUTSIDE_SHOWN = 10


@dataclass
class Node:
    label: str
    leaves: int
    children: list[Node] = field(default_factory=list)
    more: int = 0  # children not shown


@dataclass
class Column:
    """One column of the review (module docstring)."""

    index: int
    name: str
    role: str
    type: str
    identifier: str | None
    identifier_from: str | None
    sensitive: str | None
    notes: list[str]
    hierarchy_kind: str | None
    hierarchy_notes: list[str]
    markers: list[dict[str, Any]]  # the hierarchy's
    type_markers: list[dict[str, Any]]  # the type's, when the values chose it
    role_markers: list[dict[str, Any]]  # the role's, when the values chose it (near-unique, or empty)
    levels: list[str]
    tree: Node | None
    coverage: dict[str, Any] | None


def review_columns(review: Review, dataset: Dataset | None) -> list[Column]:
    """The review's columns, with trees and coverage from ``dataset`` (the table read with the
    saved schema; None when it could not be read)."""
    effective = review.effective()
    columns = []
    for index, (original, a) in enumerate(zip(review.draft.attributes, effective.attributes)):
        suggestion = original.hierarchy
        # indexed over all the column's markers (the form's confirm-COLUMN-MARKER): the role's, the type's, then the
        # hierarchy's
        listed = [{"text": m, "confirmed": (a.name, m) in review.confirmed, "index": i}
                  for i, m in enumerate(original.from_data)]
        roled = len(original.role_from_data)
        typed = roled + len(original.type_from_data)
        hierarchy = dataset.hierarchies.get(a.name) if dataset is not None and a.hierarchy is not None else None
        columns.append(Column(
            index=index, name=a.name, role=a.role.value, type=(a.numbers or a.type).value,
            identifier=original.identifier, identifier_from=original.identifier_from, sensitive=original.sensitive,
            notes=list(original.notes),
            role_markers=listed[:roled] if a.role is original.role else [],
            type_markers=listed[roled:typed] if a.role.value != "identifier" else [],
            hierarchy_kind=suggestion.kind if suggestion is not None and a.hierarchy is not None else None,
            hierarchy_notes=list(suggestion.notes) if suggestion is not None and a.hierarchy is not None else [],
            markers=listed[typed:] if a.hierarchy is not None else [],
            levels=list(hierarchy.level_names) if hierarchy is not None else [],
            tree=tree(hierarchy) if hierarchy is not None else None,
            coverage=coverage(hierarchy, dataset, a.name) if hierarchy is not None and dataset is not None else None,
        ))
    return columns


def tree(hierarchy: Hierarchy) -> Node:
    """The hierarchy from its root (``*``) down to its values, cut to a readable size."""
    height = hierarchy.height
    # children[i][c]: the codes at level i - 1 whose parent at level i is c
    children: dict[int, list[np.ndarray]] = {}
    leaves_under: dict[int, np.ndarray] = {0: np.ones(hierarchy.size(0), dtype=np.int64)}
    for level in range(1, height + 1):
        parents = hierarchy.parents[level - 1]
        order = np.argsort(parents, kind="stable")
        bounds = np.searchsorted(parents[order], np.arange(hierarchy.size(level) + 1))
        children[level] = [order[bounds[c]:bounds[c + 1]] for c in range(hierarchy.size(level))]
        leaves_under[level] = np.bincount(parents, weights=leaves_under[level - 1],
                                          minlength=hierarchy.size(level)).astype(np.int64)
    budget = [MAX_NODES]

    def node(level: int, code: int) -> Node:
        made = Node(str(hierarchy.labels[level][code]), int(leaves_under[level][code]))
        budget[0] -= 1
        if level == 0:
            return made
        below = children[level][code]
        shown = below[:MAX_CHILDREN]
        for child in shown:
            if budget[0] <= 0:
                break
            made.children.append(node(level - 1, int(child)))
        made.more = len(below) - len(made.children)
        return made

    roots = range(hierarchy.size(height))
    if hierarchy.size(height) == 1:
        return node(height, 0)
    top = Node("*", int(leaves_under[height].sum()))
    for code in roots:
        top.children.append(node(height, code))
    return top


def coverage(hierarchy: Hierarchy, dataset: Dataset, name: str) -> dict[str, Any]:
    """Whether every value of the column has a leaf: the distinct values outside (published as
    missing, ``?``) and, for a table in memory, the rows that hold them."""
    column = dataset.frame.get_column(name)
    outside = hierarchy.outside(column)
    values = [str(v) for v in outside.to_list()]
    rows = None
    if values:
        present = column.drop_nulls()
        if present.dtype != outside.dtype:
            present = present.cast(outside.dtype, strict=False)
        rows = int(present.is_in(outside.implode()).sum())
    return {"covered": not values, "leaves": hierarchy.size(0), "outside": len(values),
            "outside_shown": values[:MAX_OUTSIDE_SHOWN], "rows": rows, "observed": bool(hierarchy.observed)}
