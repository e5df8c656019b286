"""How the local-recoding algorithms see each quasi-identifier.

- :class:`OrderedAttribute` — values with a total order: numbers and dates (ordered by value,
  published as the closed range ``[min, max]`` of a class), and categorical attributes that
  have no hierarchy (ordered by their dictionary: the declared order of an ordinal attribute,
  else alphabetical; published as the set of values present).
- :class:`HierarchicalAttribute` — categorical attributes with a generalization hierarchy
  (published as the lowest common node of a class's values, or as the set of values present).

Widths are normalized as in the normalized certainty penalty (Xu et al. 2006): a range's
length over the table's range; a hierarchy node's number of leaves over the hierarchy's (0 for
a single value).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import EncodedCells
from crowdsafe.data import AttributeType, Dataset, Hierarchy
from crowdsafe.data.hierarchy import MISSING_LABEL
from crowdsafe.errors import CUSTODIAN_REFUSAL, SchemaError


def value_labels(dictionary: pl.Series) -> pl.Series:
    """The text of each dictionary value as published (missing shown as ``?``)."""
    text = dictionary.cast(pl.String)
    return text.fill_null(MISSING_LABEL) if text.null_count() else text


@dataclass(frozen=True)
class OrderedAttribute:
    """An attribute split along a total order of its codes."""

    name: str
    rank_of_code: np.ndarray  # code -> rank in the order
    position: np.ndarray  # rank -> position (the value for numbers; the rank for labels)
    span: float  # position range of the values present in the table (0: one value)
    labels: pl.Series  # rank -> published text
    is_range: bool  # True: published as [min, max]; False: as the set of values present

    def width(self, low_rank: np.ndarray, high_rank: np.ndarray) -> np.ndarray:
        if self.span <= 0:
            return np.zeros(len(low_rank))
        return (self.position[high_rank] - self.position[low_rank]) / self.span


@dataclass(frozen=True)
class HierarchicalAttribute:
    """A categorical attribute generalized along its hierarchy.

    Leaves are ranked depth-first (``rank_of_code``), so every node covers a contiguous run of
    ranks and the lowest common ancestor of a set of leaves is that of its lowest and highest
    ranks: two reductions per partition instead of one per level.
    """

    name: str
    hierarchy: Hierarchy
    rank_of_code: np.ndarray  # leaf code -> depth-first rank
    maps: np.ndarray  # (height + 1, leaves): node code of each leaf *code* at each level
    maps_by_rank: np.ndarray  # (height + 1, leaves): node code of each leaf *rank* at each level
    leaf_counts: tuple[np.ndarray, ...]  # per level, leaves under each node
    total_leaves: int
    labels: pl.Series  # leaf code -> published text

    @property
    def height(self) -> int:
        return self.hierarchy.height

    def common_node(self, low_rank: np.ndarray, high_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Level and code of the lowest common ancestor of the leaves ranked low..high."""
        level = np.full(len(low_rank), self.height, dtype=np.int64)
        for h in range(self.height - 1, -1, -1):
            same = self.maps_by_rank[h][low_rank] == self.maps_by_rank[h][high_rank]
            level[same] = h
        node = self.maps_by_rank[level, low_rank]
        return level, node

    @cached_property
    def node_offsets(self) -> np.ndarray:
        """Per level, where its nodes start when all levels' nodes are listed one after another."""
        return np.cumsum([0] + [len(c) for c in self.leaf_counts[:-1]])

    @cached_property
    def node_widths(self) -> np.ndarray:
        """NCP of every node, levels listed one after another (0 for a leaf)."""
        widths = np.concatenate(self.leaf_counts).astype(float) / self.total_leaves
        widths[: len(self.leaf_counts[0])] = 0.0  # a single value has no width
        return widths

    def width(self, level: np.ndarray, node: np.ndarray) -> np.ndarray:
        """NCP of each (level, node): its leaves over all leaves, 0 for a leaf."""
        return self.node_widths[self.node_offsets[level] + node]

    @cached_property
    def all_labels(self) -> pl.Series:
        """Every node's label, level after level (leaves as published), for one gather."""
        upper = [label for h in range(1, self.height + 1) for label in self.hierarchy.labels[h]]
        return pl.concat([self.labels, pl.Series(self.name, upper, dtype=pl.String)], rechunk=True).alias(self.name)

    def node_labels(self, level: np.ndarray, node: np.ndarray) -> pl.Series:
        """The published label of each (level, node)."""
        return self.all_labels.gather(self.node_offsets[level] + node)


def hierarchical_attribute(name: str, hierarchy: Hierarchy, labels: pl.Series) -> HierarchicalAttribute:
    maps = np.stack([hierarchy.leaf_map(h) for h in range(hierarchy.height + 1)]).astype(np.int64)
    # depth-first order: sort leaves by their ancestors from the top down, then by code
    order = np.lexsort(tuple(maps[h] for h in range(hierarchy.height + 1)))
    rank_of_code = np.empty(len(order), dtype=np.int64)
    rank_of_code[order] = np.arange(len(order))
    counts = tuple(hierarchy.leaf_counts(h) for h in range(hierarchy.height + 1))
    return HierarchicalAttribute(name, hierarchy, rank_of_code, maps, maps[:, order], counts,
                                 len(order), labels)


#: How Mondrian and MDAV see a quasi-identifier (not the schema's :class:`crowdsafe.data.Attribute`).
LocalAttribute = OrderedAttribute | HierarchicalAttribute


def check_finite(dataset: Dataset, columns: list[str]) -> None:
    """Raise naming the first numeric column of ``columns`` that holds inf, -inf or NaN: a range,
    a centroid and a width need finite numbers (the custodian's own run, so the message may say
    what the data holds)."""
    for name in columns:
        column = dataset.frame.get_column(name)
        if not column.dtype.is_float():
            continue
        found = [word for word, hit in (("-inf", (column == -np.inf).any()), ("inf", (column == np.inf).any()),
                                        ("NaN", column.is_nan().any())) if hit]
        if found:
            raise SchemaError(
                f"column '{name}' holds a value that is not a finite number ({', '.join(found)}): classic "
                "anonymization needs finite numbers; drop or cap those rows"
            )


def describe_attributes(dataset: Dataset, cells: EncodedCells) -> list[LocalAttribute]:
    """The view of each of ``cells.columns`` the local-recoding algorithms use."""
    out: list[LocalAttribute] = []
    for j, name in enumerate(cells.columns):
        spec = dataset.schema[name]
        encoded = dataset.encoded(name)
        dictionary = encoded.dictionary
        hierarchy = dataset.hierarchies.get(name)
        if spec.type in (AttributeType.NUMERIC, AttributeType.DATE) or hierarchy is None:
            present = np.zeros(encoded.cardinality, dtype=bool)  # the values in the table
            present[cells.codes[:, j]] = True
        if spec.type in (AttributeType.NUMERIC, AttributeType.DATE):
            if dictionary.null_count() and present[np.flatnonzero(dictionary.is_null().to_numpy())].any():
                raise SchemaError(
                    f"numeric quasi-identifier '{name}' has missing values, which have no place in "
                    "a range; drop those rows (missing='drop') or declare the column categorical" + CUSTODIAN_REFUSAL,
                    parameter="missing",
                )
            physical = dictionary.to_physical().cast(pl.Float64)
            values: np.ndarray = (physical.fill_null(np.inf) if physical.null_count() else physical).to_numpy()
            order = np.argsort(values, kind="stable")
            rank_of_code = np.empty(len(order), dtype=np.int64)
            rank_of_code[order] = np.arange(len(order))
            position = values[order]
            span = float(values[present].max() - values[present].min())
            out.append(OrderedAttribute(name, rank_of_code, position, span,
                                        value_labels(dictionary).gather(order), True))
        elif hierarchy is not None:
            out.append(hierarchical_attribute(name, hierarchy, value_labels(dictionary)))
        else:
            # codes already follow the declared order (ordinal) or the sorted values
            size = encoded.cardinality
            rank_of_code = np.arange(size, dtype=np.int64)
            ranks_present = np.flatnonzero(present)
            span = float(ranks_present.max() - ranks_present.min())
            out.append(OrderedAttribute(name, rank_of_code, np.arange(size, dtype=float), span,
                                        value_labels(dictionary), False))
    return out
