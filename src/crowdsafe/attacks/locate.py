"""Locating a target's equivalence class in a release from its quasi-identifier values.

An attacker who knows a target's quasi-identifiers finds the published classes that could hold
the target's row:

- **generalization** releases (ranges, sets, hierarchy labels, ``*``, or kept values): the
  classes whose every cell covers the target's value (:mod:`crowdsafe.data.generalized` reads
  what a cell covers). This is exact: the target's true class is always among them. Strict
  Mondrian and full-domain recodings publish disjoint classes, so there is one match; a
  relaxed partition may give several, and the attacker then only knows the union of them.
- **microaggregation** releases (centroids: means of numbers, modes of categories): the class
  whose centroid is nearest in the standardized distance MDAV itself uses (Domingo-Ferrer and
  Torra 2005): a numeric attribute contributes ``(x − y)² / (2σ²)``, a categorical one
  ``[x ≠ y] / (1 − Σ p²)``, with σ² and p taken over the targets (what the attacker knows).
  This can miss the true class; the intersection attack reports how often it does when the
  truth is known (:mod:`crowdsafe.attacks.nearest`).

Everything works on distinct target tuples and on the release's class table; the matching is
a walk down the trie of the classes' cell prefixes, one column at a time, in array operations
(:mod:`crowdsafe.attacks.exact_location`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar, cast, overload

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import dense_ids, first_of_each
from crowdsafe.attacks.cell_ranks import canonical_ranks
from crowdsafe.attacks.nearest import locate_nearest as locate_nearest  # documented here (docs/architecture.md)
from crowdsafe.attacks.plain_cells import read_plain
from crowdsafe.data import Hierarchy, encode_series, packing
from crowdsafe.data.arrays import unique_inverse
from crowdsafe.data.cell_reader import (
    CellCovers,
    CellReader,
    categorical_ids,
)
from crowdsafe.data.column_names import spare_name
from crowdsafe.data.generalized import AttributeDomain, is_generalized, leaf_domain
from crowdsafe.errors import InputError

_T = TypeVar("_T")
LEAF_MASKS = True  # a release's sensitive leaves ORed as bits in its group-by (leaf_masks), else listed
NO_LEAF = 1 << 63  # the bit a sensitive cell that is no leaf sets in that OR (up to 63 leaves)
COLLECTORS = 4  # attacks whose group-bys can be collected at once (one thread each, kept between attacks)
_collector: tuple[int, ThreadPoolExecutor] | None = None


@dataclass(frozen=True)
class ClassTable:
    """A release's equivalence classes.

    ``combos``: the distinct tuples of quasi-identifier cells as written (columns ``keys``, and
    maybe others the group-by added), with ``class_of_combo`` their class — the whole release
    reduced in one group-by pass. Per quasi-identifier ``c``: ``distinct_cells[c]``, the
    column's distinct canonical cells (sorted, missing last), and ``cell_of_class[c]``, each
    class's cell among them. ``sizes``: the rows of each class. With a sensitive attribute:
    ``sensitive_cells``, its distinct cells as written, and ``sensitive_held``, the (class, cell
    among ``sensitive_cells``) pairs that some row holds (two aligned arrays, maybe repeated).
    :attr:`cells` is the classes as a frame.
    """

    combos: pl.DataFrame
    class_of_combo: np.ndarray
    keys: tuple[str, ...]
    distinct_cells: dict[str, pl.Series]
    cell_of_class: dict[str, np.ndarray]
    sizes: np.ndarray
    sensitive_cells: pl.Series | None = None
    sensitive_held: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @cached_property
    def cells(self) -> pl.DataFrame:
        """One row per class: its quasi-identifier cells as canonical text, ``class`` and ``size``."""
        return pl.DataFrame([cells.gather(self.cell_of_class[c]) for c, cells in self.distinct_cells.items()]
                            ).with_columns(pl.Series("class", np.arange(self.n_classes, dtype=np.int64)),
                                           pl.Series("size", self.sizes))

    def class_of_rows(self, release: pl.DataFrame) -> np.ndarray:
        """The class of every row of ``release`` (the frame this table was made from)."""
        name = spare_name(self.keys, "class")
        lookup = self.combos.select(self.keys).with_columns(pl.Series(name, self.class_of_combo))
        return (release.select(self.keys).join(lookup, on=list(self.keys), how="left", nulls_equal=True,
                                               maintain_order="left").get_column(name).to_numpy())


def _helper(qi: Sequence[str], sensitive: str | None, stem: str) -> str:
    """The name of a column the group-by of :func:`class_tables_and_codes` adds (none of the release's)."""
    return spare_name([*qi, *([sensitive] if sensitive is not None else [])], stem)


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def group_ids(columns: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Group id of every row of integer ``columns`` (``columns[j]`` in ``[0, sizes[j])``),
    numbered in lexicographic order of the tuples, and the number of groups: the numbering of
    :func:`crowdsafe.anonymize.cells.dense_ids`, with one sort of the packed keys."""
    if not columns or not packing.fits(sizes):
        return dense_ids(columns, sizes)
    key = packing.pack(columns, sizes)
    span = int(packing.span(sizes))
    distinct, ids = unique_inverse(key, span)
    return ids, len(distinct)


def _dense_codes(ids: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes 0..m-1 of non-negative integer ids, in the order of the ids."""
    span = int(ids.max(initial=-1)) + 1
    if span > 4 * len(ids) + 1024:  # sparse ids: sort them
        distinct, codes = unique_inverse(ids, span)
        return codes, len(distinct)
    seen = np.zeros(span, dtype=bool)
    seen[ids] = True
    code_of_id = np.cumsum(seen) - 1
    return code_of_id[ids], int(seen.sum())


def _physical(frame_schema: Mapping[str, pl.DataType], column: str) -> pl.Expr:
    """A text column's values as Polars categorical ids (one id per distinct value)."""
    expr = pl.col(column)
    return (expr.cast(pl.Categorical) if frame_schema[column] == pl.String else expr).to_physical()


def _codes_of_physical(frame: pl.DataFrame, columns: Sequence[str], physical: pl.DataFrame
                       ) -> dict[str, tuple[np.ndarray, pl.Series]]:
    """:func:`distinct_codes` of ``columns``, text columns given by their categorical ids
    (``physical``, one column per text column, same names and rows as ``frame``)."""
    out: dict[str, tuple[np.ndarray, pl.Series]] = {}
    texts = [c for c in columns if c in physical.columns]
    codes_of: dict[str, np.ndarray] = {}
    firsts: list[pl.Expr] = []
    for c in texts:
        column = physical.get_column(c)
        ids = column.to_numpy()
        if column.null_count():  # the missing value gets the id after every other: it comes last
            ids = np.where(np.isnan(ids), np.nanmax(ids, initial=-1) + 1, ids)
        codes_of[c], n_distinct = _dense_codes(ids.astype(np.int64, copy=False))
        firsts.append(pl.col(c).gather(pl.Series(first_of_each(codes_of[c], n_distinct))).implode())
    if texts:  # the distinct values themselves: each one's first row, in one query
        values = frame.select(firsts)
        out.update({c: (codes_of[c], values.get_column(c)[0].alias(c)) for c in texts})
    for c in columns:
        if c not in out:
            codes, dictionary = encode_series(frame.get_column(c))
            out[c] = codes.astype(np.int64), dictionary
    return {c: out[c] for c in columns}


def distinct_codes(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, tuple[np.ndarray, pl.Series]]:
    """Per column, every row's index among the column's distinct values, and those values (in
    the column's dtype, in no particular order but a missing value last). Text columns are read
    through Polars categoricals in one query; other columns are encoded by
    :func:`~crowdsafe.data.encode_series`."""
    texts = [c for c in columns if _is_text(frame.schema[c])]
    physical = frame.select(_physical(frame.schema, c) for c in texts) if texts else pl.DataFrame()
    return _codes_of_physical(frame, columns, physical)


def class_table(release: pl.DataFrame, qi: Sequence[str], sensitive: str | None = None) -> ClassTable:
    """Group a release's rows by their published quasi-identifier tuple (and, with
    ``sensitive``, keep the distinct sensitive cells every class holds).

    Cells are read canonically (:func:`~crowdsafe.data.cell_reader.canonical_texts`: two
    spellings of one cell, '[25,34]' and '[25, 34]', are one class), over the distinct cells
    of every column at once; classes are numbered in the order of their canonical cells.
    """
    return class_tables([release], qi, sensitive)[0]


def class_tables(releases: Sequence[pl.DataFrame], qi: Sequence[str], sensitive: str | None = None
                 ) -> list[ClassTable]:
    """:func:`class_table` of every release, with one Polars query per step for all of them:
    the group-bys run in one parallel collection, and the distinct cells of every column of
    every release are written canonically and ranked together."""
    return class_tables_and_codes(releases, qi, sensitive)[0]


@overload
def class_tables_and_codes(releases: Sequence[pl.DataFrame], qi: Sequence[str], sensitive: str | None,
                           beside: Callable[[], _T], during: Callable[[list[ClassTable]], None] | None = None,
                           sensitive_leaves: pl.Enum | None = None) -> tuple[list[ClassTable], _T]: ...
@overload
def class_tables_and_codes(releases: Sequence[pl.DataFrame], qi: Sequence[str], sensitive: str | None = None,
                           beside: None = None, during: Callable[[list[ClassTable]], None] | None = None,
                           sensitive_leaves: pl.Enum | None = None) -> tuple[list[ClassTable], None]: ...
def class_tables_and_codes(releases: Sequence[pl.DataFrame], qi: Sequence[str], sensitive: str | None = None,
                           beside: Callable[[], _T] | None = None,
                           during: Callable[[list[ClassTable]], None] | None = None,
                           sensitive_leaves: pl.Enum | None = None) -> tuple[list[ClassTable], _T | None]:
    """:func:`class_tables`, and what ``beside`` returns (the targets' side of the attack: their
    pass over their rows, :func:`target_codes_plan`, and its NumPy part). The releases'
    group-bys are collected in a second thread, started as soon as their queries are built:
    Polars runs them without the GIL, which leaves it to this thread for ``beside``'s Python and
    NumPy meanwhile. This thread then builds the tables and calls ``during`` with them (work that
    needs the tables but not ``beside``). An error of the releases' side (their group-bys, their
    tables) is raised before one of ``beside``, as when the two sides ran in turn.
    ``sensitive_leaves``: the sensitive hierarchy's leaves, when :func:`leaf_masks` allows (fast
    path: each class's leaves as one 64-bit mask in the group-by, twin: its list of cells)."""
    qi = list(qi)
    for release in releases:
        missing = [c for c in qi + ([sensitive] if sensitive is not None else []) if c not in release.columns]
        if missing:
            raise InputError(
                f"the release has no column {missing[0]!r}; its columns are: {', '.join(release.columns)}"
            )
    masked = [sensitive is not None and sensitive_leaves is not None and LEAF_MASKS
              and release.schema[sensitive] == pl.String for release in releases]
    group_bys = [_group_by(release, qi, sensitive, sensitive_leaves if m else None)
                 for release, m in zip(releases, masked)]
    side: _T | None = None
    refused: Exception | None = None
    started = threading.Event()

    def collect() -> list[pl.DataFrame]:
        started.set()
        return pl.collect_all(group_bys)  # (Polars releases the GIL at once)

    pending = collector().submit(collect)
    started.wait()  # (handing the GIL to the collecting thread: it then holds it only to enter Polars)
    if beside is not None:
        try:
            side = beside()
        except Exception as error:  # raised once the releases' side is known to be fine
            refused = error
    collected = pending.result()
    for j, combos in enumerate(collected):  # a cell that is no leaf (or missing): the reference twin
        if masked[j] and combos.get_column(_helper(qi, sensitive, "n_held")).sum():
            collected[j] = _group_by(releases[j], qi, sensitive, None).collect()
    tables = _class_tables(releases, qi, sensitive, collected, sensitive_leaves)
    if refused is not None:
        raise refused
    if during is not None:
        during(tables)
    return tables, side


def collector() -> ThreadPoolExecutor:
    """The threads that collect the releases' group-bys of :func:`class_tables_and_codes`, kept
    between attacks (starting a thread costs 0.1–0.2 ms, about 1% of an attack on Adult) and
    made again in a forked process, where the parent's threads do not run."""
    global _collector
    if _collector is None or _collector[0] != os.getpid():
        _collector = os.getpid(), ThreadPoolExecutor(max_workers=COLLECTORS, thread_name_prefix="crowdsafe-group-bys")
    return _collector[1]


def leaf_masks(hierarchy: Hierarchy | None, domain: AttributeDomain | None) -> pl.Enum | None:
    """The Enum of the sensitive hierarchy's leaves when a release's sensitive cells can be read
    by matching them (a cell equal to a leaf's text reads as that leaf: text leaves, at most
    64, none '*' or spaced or empty, a domain without numbers), else None."""
    leaves = _leaf_enum(hierarchy, pl.String())
    if leaves is None or domain is None or domain.numbers is not None or len(leaves.categories) > 64:
        return None
    texts = leaves.categories.to_list()
    return leaves if all(t and t == t.strip() and t != "*" for t in texts) else None


def _group_by(release: pl.DataFrame, qi: list[str], sensitive: str | None, leaves: pl.Enum | None) -> pl.LazyFrame:
    """One release's group-by over the quasi-identifiers: its rows and, with ``sensitive``,
    its distinct sensitive cells (a list), or with ``leaves`` the OR of its cells' leaf bits
    (a class holding a cell that is no leaf has a non-zero ``n_held``: its count of such cells,
    or 1 when it is flagged by the :data:`NO_LEAF` bit)."""
    plan, schema = release.lazy(), release.schema  # (the schema made once: each call builds it)
    rows = pl.len().cast(pl.Int64).alias(_helper(qi, sensitive, "rows"))
    if sensitive is None:
        return plan.group_by(qi).agg(rows)
    held, n_held = _helper(qi, sensitive, "held"), _helper(qi, sensitive, "n_held")
    if leaves is not None:
        n_leaves = len(leaves.categories)
        bits = pl.Series([1 << i for i in range(n_leaves)], dtype=pl.UInt64)
        leaf_bit = pl.lit(bits).gather(pl.col(sensitive).cast(leaves, strict=False).to_physical())
        if n_leaves < 64:  # a cell that is no leaf sets the top bit, which no leaf has: one OR tells both
            plan = plan.with_columns(leaf_bit.fill_null(NO_LEAF).alias(held))
            return (plan.group_by(qi).agg(rows, pl.col(held).bitwise_or())
                    .with_columns((pl.col(held) >= NO_LEAF).cast(pl.UInt32).alias(n_held)))
        plan = plan.with_columns(leaf_bit.alias(held))
        return plan.group_by(qi).agg(rows, pl.col(held).bitwise_or(), pl.col(held).null_count().alias(n_held))
    if schema[sensitive] == pl.String:  # hashed once as a categorical, not in every list
        plan = plan.with_columns(pl.col(sensitive).cast(pl.Categorical))
    return (plan.group_by(qi).agg(rows, pl.col(sensitive).unique().alias(held))
            .with_columns(pl.col(held).list.len().alias(n_held)))


def _class_tables(releases: Sequence[pl.DataFrame], qi: list[str], sensitive: str | None,
                  collected: Sequence[pl.DataFrame], leaves: pl.Enum | None = None) -> list[ClassTable]:
    """The class tables of :func:`class_tables_and_codes`, from each release's group-by."""
    every_rows: list[np.ndarray] = []
    every_held: dict[int, tuple[np.ndarray, np.ndarray, pl.Series]] = {}
    for r, combos in enumerate(collected):
        every_rows.append(combos.get_column(_helper(qi, sensitive, "rows")).to_numpy())
        if sensitive is None:
            continue
        held = combos.get_column(_helper(qi, sensitive, "held"))
        if held.dtype == pl.UInt64:  # each combo's leaves as a mask
            every_held[r] = _held_leaves(held.to_numpy(), cast(pl.Enum, leaves), sensitive)
        else:  # (combo, sensitive cell) pairs and the distinct cells of a list
            held_cells = held.explode().alias(sensitive)
            if isinstance(held_cells.dtype, pl.Categorical):  # cast before the group-by: its ids are at hand
                ids = categorical_ids(held_cells)
                cell, n_cells = _dense_codes(np.where(ids < 0, ids.max(initial=-1) + 1, ids))  # missing last
                cells = held_cells[first_of_each(cell, n_cells)]  # (indexing: no Polars query, as gather)
                if releases[r].schema[sensitive] == pl.String:
                    cells = cells.cast(pl.String)
            else:
                cell, cells = distinct_codes(held_cells.to_frame(), [sensitive])[sensitive]
            n_held = combos.get_column(_helper(qi, sensitive, "n_held")).to_numpy()
            combo = np.repeat(np.arange(combos.height, dtype=np.int64), n_held)
            every_held[r] = combo, cell, cells
    canonical_of_combo = canonical_ranks([combos.get_column(c) for combos in collected for c in qi])
    tables = []
    for r, (combos, rows) in enumerate(zip(collected, every_rows)):
        distinct_cells = {c: canonical_of_combo[r * len(qi) + j][1].alias(c) for j, c in enumerate(qi)}
        ranks = [canonical_of_combo[r * len(qi) + j][0] for j in range(len(qi))]
        class_of_combo, n_classes = group_ids(ranks, [len(distinct_cells[c]) for c in qi])
        first = first_of_each(class_of_combo, n_classes)
        cell_of_class = {c: ids[first] for c, ids in zip(qi, ranks)}
        sizes = np.bincount(class_of_combo, weights=rows, minlength=n_classes).astype(np.int64)
        if sensitive is None:
            tables.append(ClassTable(combos, class_of_combo, tuple(qi), distinct_cells, cell_of_class, sizes))
        else:
            combo, cell, cells = every_held[r]
            tables.append(ClassTable(combos, class_of_combo, tuple(qi), distinct_cells, cell_of_class, sizes,
                                     cells, (class_of_combo[combo], cell)))
    return tables


def _held_leaves(masks: np.ndarray, leaves: pl.Enum, sensitive: str) -> tuple[np.ndarray, np.ndarray, pl.Series]:
    """The (combo, sensitive cell) pairs and the distinct sensitive cells (the leaves some combo
    holds, in leaf order) of a group-by that ORed each combo's leaf bits (:func:`_group_by`)."""
    n_leaves = len(leaves.categories)
    bit = np.left_shift(np.uint64(1), np.arange(n_leaves, dtype=np.uint64))  # leaf i's bit
    # (flat indices of a boolean matrix, then divmod: cheaper than nonzero of the matrix)
    combo, leaf = np.divmod(np.flatnonzero((masks[:, None] & bit) != 0), n_leaves)
    present = np.flatnonzero(np.bitwise_or.reduce(masks) & bit) if len(masks) else np.zeros(0, dtype=np.int64)
    cell_of_leaf = np.full(n_leaves, -1, dtype=np.int64)
    cell_of_leaf[present] = np.arange(len(present), dtype=np.int64)
    # the leaves' texts picked in Python (a few: cheaper than a Polars gather)
    texts = leaves.categories.to_list()
    return (combo.astype(np.int64), cell_of_leaf[leaf],
            pl.Series(sensitive, [texts[i] for i in present.tolist()], dtype=pl.String))


def _leaf_enum(hierarchy: Hierarchy | None, dtype: pl.DataType) -> pl.Enum | None:
    """An Enum of the hierarchy's leaves as text, when a targets' column of ``dtype`` can be
    coded by matching them directly (a value's code is the leaf it equals) exactly as the text
    look-up of :func:`encode_targets` pairs them: the same dtype on both sides, not floats, no
    missing leaf, distinct leaf texts. None otherwise. Made once per hierarchy and dtype
    (:attr:`Hierarchy.derived <crowdsafe.data.hierarchy.Hierarchy.derived>`)."""
    if hierarchy is None:
        return None
    key = ("attack_leaf_enum", dtype)
    if key not in hierarchy.derived:
        hierarchy.derived[key] = _leaf_enum_of(hierarchy.leaves, dtype)
    return hierarchy.derived[key]


def _leaf_enum_of(leaves: pl.Series, dtype: pl.DataType) -> pl.Enum | None:
    if leaves.dtype != dtype or dtype.is_float() or leaves.null_count():
        return None
    texts = leaves.cast(pl.String)
    return pl.Enum(texts) if texts.n_unique() == len(texts) else None


def target_codes_plan(targets: pl.DataFrame, columns: Sequence[str], hierarchies: Mapping[str, Hierarchy]
                      ) -> tuple[pl.LazyFrame, list[str]]:
    """The targets' one pass over their rows: every text column with a hierarchy cast straight
    to its leaf codes where :func:`_leaf_enum` allows (an Enum of the leaves; a value outside
    them becomes null), every other text column to categorical ids (:func:`distinct_codes`);
    integer columns are left to :func:`target_codes`. Also the columns coded against leaves."""
    exprs, direct = [], []
    schema = targets.schema
    for c in columns:
        dtype = schema[c]
        leaves = _leaf_enum(hierarchies.get(c), dtype)
        if leaves is not None:
            direct.append(c)
            if not dtype.is_integer():
                exprs.append(pl.col(c).cast(pl.String).cast(leaves, strict=False).to_physical()
                             .alias(f"\x00leaf_{c}"))
        elif _is_text(dtype):
            exprs.append(_physical(schema, c))
    return targets.lazy().select(exprs), direct


def _integer_leaf_codes(values: pl.Series, leaves: pl.Series) -> np.ndarray | None:
    """Each integer value's leaf code (the leaf it equals), or None when some value is no leaf
    (or missing): a table over the leaves' range when it is small, else binary search."""
    if values.null_count() or len(values) == 0 or len(leaves) == 0:
        return None
    values_np = values.to_numpy().astype(np.int64, copy=False)
    leaves_np = leaves.to_numpy().astype(np.int64, copy=False)
    low, high = int(leaves_np.min()), int(leaves_np.max())
    if int(values_np.min()) < low or int(values_np.max()) > high:
        return None
    if high - low <= 4 * len(values_np) + (1 << 16):
        code_of = np.full(high - low + 1, -1, dtype=np.int64)
        code_of[leaves_np - low] = np.arange(len(leaves_np), dtype=np.int64)
        codes = code_of[values_np - low]
        return codes if (codes >= 0).all() else None
    order = np.argsort(leaves_np, kind="stable")
    at = np.searchsorted(leaves_np[order], values_np)
    return order[at].astype(np.int64) if (leaves_np[order][at] == values_np).all() else None


def target_codes(targets: pl.DataFrame, columns: Sequence[str], physical: pl.DataFrame,
                 hierarchies: Mapping[str, Hierarchy], direct: Sequence[str]
                 ) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, pl.Series]]]:
    """What the pass of :func:`target_codes_plan` gives (``direct``: the columns it coded
    against leaves): per column, each target's leaf code where every value was a leaf (first
    dict), else its :func:`distinct_codes` (second)."""
    leaf_codes: dict[str, np.ndarray] = {}
    schema = targets.schema
    for c in direct:
        if schema[c].is_integer():
            codes = _integer_leaf_codes(targets.get_column(c), hierarchies[c].leaves)
            if codes is not None:
                leaf_codes[c] = codes
        else:
            column = physical.get_column(f"\x00leaf_{c}")
            if column.null_count() == 0:
                leaf_codes[c] = column.to_numpy().astype(np.int64)
    rest = [c for c in columns if c not in leaf_codes]
    if any(c in direct for c in rest):  # a value outside the leaves, or missing: coded from scratch
        return leaf_codes, distinct_codes(targets, rest)
    return leaf_codes, _codes_of_physical(targets, rest, physical)


def read_classes(table: ClassTable, qi: Sequence[str], reader: CellReader
                 ) -> tuple[dict[str, CellCovers], CellCovers | None]:
    """What every distinct cell of every quasi-identifier column covers, by column (``reader``
    holds the targets' domains in the order of ``qi``), all read at once; and when the reader
    holds one more domain and the table a sensitive attribute, what its distinct sensitive
    cells cover in that domain (else None)."""
    return read_tables([table], qi, reader)[0]


def read_tables(tables: Sequence[ClassTable], qi: Sequence[str], reader: CellReader | Sequence[AttributeDomain]
                ) -> list[tuple[dict[str, CellCovers], CellCovers | None]]:
    """:func:`read_classes` of every table, in one read: by
    :func:`~crowdsafe.attacks.plain_cells.read_plain` while the cells are few and plain, else by
    the reference ``reader`` (both give the same covers). ``reader`` may be given as its
    domains, and is then built only when needed."""
    known = list(reader.domains if isinstance(reader, CellReader) else reader)
    cells: list[pl.Series] = []
    domains: list[int] = []
    shapes: list[bool] = []
    for table in tables:
        cells.extend(table.distinct_cells[c] for c in qi)
        domains.extend(range(len(qi)))
        sensitive_cells = table.sensitive_cells if len(known) > len(qi) else None
        if sensitive_cells is not None:
            cells.append(sensitive_cells.cast(pl.String))
            domains.append(len(qi))
        shapes.append(sensitive_cells is not None)
    # a few plain cells in Python (fast path), else the reference reader's one query
    read = read_plain(cells, domains, known)
    if read is None:
        read = (reader if isinstance(reader, CellReader) else CellReader(known)).read(cells, domains)
    out, at = [], 0
    for with_sensitive in shapes:
        out.append((dict(zip(qi, read[at: at + len(qi)])), read[at + len(qi)] if with_sensitive else None))
        at += len(qi) + with_sensitive
    return out


def is_microaggregated(table: ClassTable, domains: Mapping[str, AttributeDomain]) -> bool:
    """True when the release publishes centroids: no cell is generalized and some numeric cell
    is not a value any target holds (a mean), so exact location cannot work."""
    if any(is_generalized(cells) for cells in table.distinct_cells.values()):
        return False
    for c, cells in table.distinct_cells.items():
        numbers = domains[c].numbers
        if numbers is None:
            continue
        try:
            values = cells.cast(pl.Float64, strict=True).drop_nulls().unique().to_numpy()
        except pl.exceptions.InvalidOperationError:
            continue
        if not np.isin(values, numbers).all():
            return True
    return False


def encode_targets(targets: pl.DataFrame, qi: Sequence[str], hierarchies: Mapping[str, Hierarchy] | None = None,
                   distinct: Mapping[str, tuple[np.ndarray, pl.Series]] | None = None,
                   leaf_codes: Mapping[str, np.ndarray] | None = None
                   ) -> tuple[dict[str, AttributeDomain], dict[str, np.ndarray]]:
    """Per quasi-identifier, the domain the targets' values are codes into (the hierarchy's
    leaves when one is given, so that hierarchy labels in a release resolve, else the targets'
    distinct values), and each target's code in it (an InputError for a value outside a
    hierarchy). ``distinct``, ``leaf_codes``: what :func:`target_codes` gave, when known."""
    hierarchies = hierarchies or {}
    leaf_codes = {c: leaf_codes[c] for c in qi if c in leaf_codes} if leaf_codes is not None else {}
    domains: dict[str, AttributeDomain] = {c: leaf_domain(c, hierarchies[c]) for c in leaf_codes}
    rest = [c for c in qi if c not in leaf_codes]
    distinct = {c: distinct[c] for c in rest} if distinct is not None else distinct_codes(targets, rest)
    # every column's distinct values looked up in its domain by one join (as text: the same
    # dtype on both sides, so equal text is equal value), floats one column at a time
    as_text, wanted, lookup, found = [], [], [], {}
    for j, (name, (_, dictionary)) in enumerate(distinct.items()):
        domain = domains[name] = AttributeDomain.from_values(dictionary, hierarchies.get(name))
        values = domain.values
        if dictionary.dtype != values.dtype:
            dictionary = dictionary.cast(values.dtype, strict=False)
        if values.dtype.is_float():
            code = spare_name([name], "code")
            index = pl.DataFrame({name: values, code: np.arange(len(values), dtype=np.int64)})
            found[name] = (dictionary.to_frame(name).join(index, on=name, how="left", nulls_equal=True,
                                                          maintain_order="left")
                           .get_column(code).fill_null(-1).to_numpy())
            continue
        as_text.append((j, name, len(dictionary), len(values)))
        wanted.append(dictionary.cast(pl.String).alias("text"))
        lookup.append(values.cast(pl.String).alias("text"))
    if as_text:
        column, name_of, n_wanted, n_values = zip(*as_text)
        left = pl.DataFrame({"column": np.repeat(np.array(column, dtype=np.uint32), n_wanted),
                             "text": pl.concat(wanted)})
        right = pl.DataFrame({"column": np.repeat(np.array(column, dtype=np.uint32), n_values),
                              "text": pl.concat(lookup),
                              "__code": np.concatenate([np.arange(n, dtype=np.int64) for n in n_values])})
        joined = (left.join(right, on=["column", "text"], how="left", nulls_equal=True, maintain_order="left")
                  .get_column("__code").fill_null(-1).to_numpy())
        for name, stop, n in zip(name_of, np.cumsum(n_wanted), n_wanted):  # the join keeps the rows in order
            found[name] = joined[stop - n: stop]
    codes: dict[str, np.ndarray] = dict(leaf_codes)
    for name, (row_code, dictionary) in distinct.items():
        code_of_value = found.get(name, np.zeros(0, dtype=np.int64))
        if (code_of_value < 0).any():
            bad = dictionary[int(np.flatnonzero(code_of_value < 0)[0])]
            raise InputError(f"target value {bad!r} of '{name}' is not a leaf of its hierarchy")
        codes[name] = code_of_value[row_code]
    return {c: domains[c] for c in qi}, {c: codes[c] for c in qi}
