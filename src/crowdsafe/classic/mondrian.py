"""Mondrian multidimensional k-anonymity (LeFevre, DeWitt and Ramakrishnan, ICDE 2006).

Mondrian cuts the table recursively. A partition is cut on the quasi-identifier with the
widest *normalized* range among its own rows (ties: the first in quasi-identifier order); if
that cut is not allowed, on the next widest, and so on; a partition no attribute can cut is a
final equivalence class. Cuts:

- ordered attribute (numbers, dates; categorical attributes without a hierarchy, in their
  dictionary order), *strict* partitioning: at the median value m (the ⌈N/2⌉-th smallest of
  the partition's N values), left = values ≤ m, right = values > m; when m is the largest
  value, the cut is made below it instead. Allowed when both sides hold ≥ k rows.
- ordered attribute, *relaxed* partitioning: the rows sorted by the attribute are cut into
  the ⌊N/2⌋ smallest and the rest, so rows holding the median value may go either way.
  Allowed when ⌊N/2⌋ ≥ k. Ties are broken by the cells' tuple order, then by row order.
- hierarchical attribute: into the children (in the hierarchy) of the lowest common ancestor
  of the partition's values; allowed when every non-empty child part holds ≥ k rows.

With entropy ℓ-diversity or t-closeness on a sensitive attribute, a cut is allowed only when
every part satisfies them too (the whole table must satisfy them to start with).

Every partition's ranges are computed from its own rows after each cut (publications that keep
the parent's ranges publish values a class does not hold). A class publishes, per attribute:
``[min, max]`` of its values for numbers and dates (the value itself when min = max); for
categorical attributes the lowest common hierarchy node (``categorical="node"``) or the set of
values present (``categorical="set"``, always used without a hierarchy).

The recoding is fitted to the data, so a Mondrian release carries **no formal guarantee**,
whatever k is: the published ranges end at actual values of actual people.

Implementation: the algorithm runs on cells (distinct tuples with counts), one recursion level
at a time for all partitions together, with NumPy sorts and segment reductions; no Python loop
runs over rows or partitions. A level is cut attempt by attempt (each undecided partition tries
its next widest attribute) or, where that is faster and there is no ℓ / t constraint, at once
from one count array of all (attribute, partition) pairs: the same partitions, numbered alike.
"""


from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from crowdsafe.anonymize.apply import check_k
from crowdsafe.anonymize.cells import EncodedCells, cell_table, rows_of_split_cells
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS, SensitiveConstraints
from crowdsafe.anonymize.recoding import LocalRecoding
from crowdsafe.classic.attributes import (
    HierarchicalAttribute,
    LocalAttribute,
    OrderedAttribute,
    describe_attributes,
)
from crowdsafe.classic.mondrian_cuts import Partitioning, _segments
from crowdsafe.classic.mondrian_partition import Mode, partition
from crowdsafe.data import Dataset
from crowdsafe.data.set_cells import needs_quotes_expr, quote_members
from crowdsafe.errors import ParameterError

__all__ = ["CategoricalForm", "Mode", "Partitioning", "mondrian", "partition", "published_values", "value_sets"]

CategoricalForm = Literal["node", "set"]




def published_values(cells: EncodedCells, attributes: Sequence[LocalAttribute], result: Partitioning,
                     categorical: CategoricalForm = "node") -> dict[str, pl.Series]:
    """Per attribute, the text each partition publishes (release representation)."""
    part = result.part.astype(np.uint16) if result.n_parts <= 1 << 16 else result.part  # radix sort
    order = np.argsort(part, kind="stable")
    starts, _ = _segments(result.part[order])
    cell = result.cell[order]
    if result.ranks is not None:
        ranks = result.ranks.take(cell, axis=0)
    else:
        ranks = np.column_stack([attr.rank_of_code[cells.codes[cell, j]] for j, attr in enumerate(attributes)])
    lows, highs = np.minimum.reduceat(ranks, starts, axis=0), np.maximum.reduceat(ranks, starts, axis=0)
    values: dict[str, pl.Series | None] = {}
    nodes: list[tuple[str, np.ndarray, pl.Series]] = []  # hierarchy nodes, labelled in one gather
    for j, attr in enumerate(attributes):
        if isinstance(attr, OrderedAttribute) and attr.is_range:
            labels = pl.lit(attr.labels.rechunk())
            low, high = labels.gather(pl.col("low")), labels.gather(pl.col("high"))
            values[attr.name] = pl.DataFrame({"low": lows[:, j], "high": highs[:, j]}).select(
                pl.when(pl.col("low") == pl.col("high")).then(low)
                .otherwise(pl.format("[{}, {}]", low, high)).alias(attr.name)
            ).to_series()
        elif isinstance(attr, HierarchicalAttribute) and categorical == "node":
            level, node = attr.common_node(lows[:, j], highs[:, j])
            nodes.append((attr.name, attr.node_offsets[level] + node, attr.all_labels))
            values[attr.name] = None
        else:
            known = attr.all_labels if isinstance(attr, HierarchicalAttribute) else attr.labels
            values[attr.name] = value_sets(result.part[order], attr.labels.gather(cells.codes[cell, j]),
                                           result.n_parts, attr.name, known)
    if nodes:
        bases = np.cumsum([0] + [len(labels) for _, _, labels in nodes[:-1]])
        # one chunk: gathering from a chunked series is several times slower
        labelled = pl.concat([labels for _, _, labels in nodes], rechunk=True).gather(
            np.concatenate([index + base for (_, index, _), base in zip(nodes, bases)]))
        for i, (name, _, _) in enumerate(nodes):
            values[name] = labelled.slice(i * result.n_parts, result.n_parts).alias(name)
    return values  # type: ignore[return-value]  # every None entry was filled above


def value_sets(part: np.ndarray, labels: pl.Series, n_parts: int, name: str,
               known: pl.Series | None = None) -> pl.Series:
    """Per partition, ``{a, b}`` of the distinct labels present (sorted; a member quoted when
    it needs it, :mod:`crowdsafe.data.set_cells`), or the label alone. A set that would read as
    one of the texts ``known`` (the column's values and hierarchy labels, by default the labels
    given) quotes every member."""
    known = labels.unique() if known is None else known
    odd = bool(known.to_frame("m").select(needs_quotes_expr(pl.col("m")).any()).item())  # else: no quoting at all
    clash = known.filter(known.str.starts_with("{"))
    aggregates = [(quote_members(pl.col("label")) if odd else pl.col("label")).str.join(", ").alias("joined"),
                  pl.len().alias("n")]
    if odd:
        aggregates.append(pl.col("label").first().alias("one"))
    if len(clash):
        aggregates.append(quote_members(pl.col("label"), always=True).str.join(", ").alias("quoted"))
    frame = (
        pl.DataFrame({"part": part, "label": labels}).unique()
        .sort(["part", "label"])
        .group_by("part", maintain_order=True)
        .agg(aggregates)
    )
    written = pl.concat_str(pl.lit("{"), pl.col("joined"), pl.lit("}"))
    if len(clash):
        written = (pl.when(written.is_in(clash.implode()))
                   .then(pl.concat_str(pl.lit("{"), pl.col("quoted"), pl.lit("}"))).otherwise(written))
    alone = pl.col("one" if odd else "joined")
    cells = frame.select(pl.when(pl.col("n") == 1).then(alone).otherwise(written).alias(name)).to_series()
    assert frame.height == n_parts
    return cells


def mondrian(
    dataset: Dataset,
    k: int,
    *,
    columns: Sequence[str] | None = None,
    mode: Mode = "strict",
    categorical: CategoricalForm = "node",
    constraints: SensitiveConstraints = NO_CONSTRAINTS,
    cells: EncodedCells | None = None,
) -> LocalRecoding:
    """Fit Mondrian to ``dataset`` and return its local recoding (apply it with Apply)."""
    k = check_k(k)
    if categorical not in ("node", "set"):
        raise ParameterError(f"categorical values are published as 'node' or 'set', not {categorical!r}")
    columns = list(columns) if columns is not None else dataset.quasi_identifiers
    sensitive = constraints.attribute if constraints.active else None
    if cells is None:
        cells = cell_table(dataset, columns, sensitive)
    attributes = describe_attributes(dataset, cells)
    result = partition(cells, attributes, k, mode=mode, constraints=constraints)
    values = published_values(cells, attributes, result, categorical)
    class_of_row = rows_of_split_cells(cells.row_cell, result.cell, result.count, result.part)
    return LocalRecoding(
        name=f"Mondrian ({mode})",
        class_of_row=class_of_row,
        values=values,
        details={"partitions": result.n_parts, "mode": mode, "categorical": categorical,
                 **({"constraints": constraints.describe()} if constraints.active else {})},
    )
