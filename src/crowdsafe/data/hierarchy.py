"""Generalization hierarchies as integer arrays.

A hierarchy is a tree over an attribute's values. Level 0 holds the leaves (the original
values); each higher level holds coarser nodes, and the top level is usually the single node
``*`` (the value suppressed). Node ``j`` at level ``i`` has one parent ``parents[i][j]`` at level
``i + 1``, so generalizing a column of leaf codes to level ``i`` is one array take
(:meth:`Hierarchy.generalize`).

For the utility metrics every node knows how many leaves it covers (:meth:`leaf_counts`) and,
when the leaves are numbers or dates, the closed range ``[low, high]`` of the leaf values under
it (:meth:`ranges`; dates as days since 1970-01-01).

A hierarchy is built from *columns*: one row per leaf, one column per level, which is also the
CSV format ARX reads and writes (:meth:`Hierarchy.from_csv`, :meth:`Hierarchy.write_csv`). The
builders in :mod:`crowdsafe.data.builders` produce such columns for intervals, ordered groups,
masking and dates.

**Provenance is a type.** A :class:`Hierarchy` is *declared*: its leaves and nodes were fixed
before the data was read (a hierarchy file, named groups, a builder over public values, a
hierarchy attached in Python), so everything computed from it (node counts, leaf counts, node
penalties) is public. An :class:`ObservedHierarchy` applies a public, value-by-value rule (a
flat ``value -> *``, intervals of declared widths, a mask, dates) to the values *observed in
the data*: its height and level names are public, its leaves and node counts are not. Code that
builds a mechanism input from a hierarchy (:func:`crowdsafe.selection.score.node_penalties`,
the entropy objective's sensitivity, public domains of α-β) reads the leaves of a declared
hierarchy only (docs/privacy-boundary.md, "What each mechanism is built from").
"""

from __future__ import annotations

import copy
import csv
import io
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.hierarchy_checks import check_labels, check_one_root
from crowdsafe.data.hierarchy_file import rows as file_rows
from crowdsafe.data.level_words import level_words
from crowdsafe.data.nul_bytes import refuse_nul_in_text
from crowdsafe.data.unicode_forms import twin_note
from crowdsafe.errors import HierarchyError, InputError
from crowdsafe.files import atomic_path, read_input_bytes

MISSING_LABEL = "?"  # how a missing-value leaf is shown
ROOT_LABEL = "*"  # the suppressed value, the usual root
#: :meth:`Hierarchy.leaf_codes` looks up to this many values in a Python dictionary of the leaves
#: (cheaper than a Polars join for a column's distinct values), more by the join.
LOOKUP_IN_PYTHON = 4096


def _label(value: Any) -> str:
    if value is None:
        return MISSING_LABEL
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _labels(values: Iterable[Any]) -> list[str]:
    """``[_label(v) for v in values]``, a ``str`` or an ``int`` (not a bool) labelled inline."""
    return [v if type(v) is str else str(v) if type(v) is int else _label(v) for v in values]


def _first_appearance_ids(labels: list[str]) -> tuple[np.ndarray, list[str]]:
    """Node ids for a column of labels, numbered by first appearance; returns (ids, labels). One
    label throughout (a root), without NUL (which NumPy's text drops at the end): not sorted."""
    if labels.count(labels[0]) == len(labels) and "\x00" not in labels[0]:
        return np.zeros(len(labels), dtype=np.uint32), [labels[0]]
    column = np.asarray(labels, dtype=object).astype(str)
    uniques, first, inverse = np.unique(column, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty(len(order), dtype=np.uint32)
    renumber[order] = np.arange(len(order), dtype=np.uint32)
    return renumber[inverse.ravel()], [str(x) for x in uniques[order]]


class Hierarchy:
    """A generalization tree over one attribute's values, stored as integer arrays; *declared*:
    fixed before the data is read (see :class:`ObservedHierarchy` for one built over the data).

    ``leaves`` (a Polars Series) are the level-0 values; a null leaf stands for the missing
    value. ``labels[i]`` are the node labels at level ``i`` (strings); ``parents[i]`` maps node
    codes at level ``i`` to node codes at level ``i + 1``; ``height`` is the number of
    generalization steps (levels ``0..height``). ``absorbs_outside``: a value the leaves do not
    list is encoded as the missing-value leaf instead of being refused (:meth:`absorbing`).
    """

    #: False: the leaves and nodes are declared (public). :class:`ObservedHierarchy`: True.
    observed = False
    #: True when the value -> node map of each level depends on the value alone (never on which
    #: other values are present): a declared hierarchy, or an observed one built by a value-local rule.
    value_local = True
    absorbs_outside = False

    def __init__(
        self,
        name: str,
        leaves: pl.Series,
        labels: Sequence[Sequence[str]],
        parents: Sequence[np.ndarray],
        level_names: Sequence[str] | None = None,
    ) -> None:
        if len(labels) != len(parents) + 1:
            raise HierarchyError(f"hierarchy '{name}': {len(labels)} label levels for {len(parents)} steps")
        self.name = name
        self.leaves = leaves.alias(name)
        self.labels: tuple[tuple[str, ...], ...] = tuple(tuple(level) for level in labels)
        self.parents: tuple[np.ndarray, ...] = tuple(np.asarray(p, dtype=np.uint32) for p in parents)
        for i, p in enumerate(self.parents):
            if len(p) != len(self.labels[i]) or (len(p) and int(p.max()) >= len(self.labels[i + 1])):
                raise HierarchyError(f"hierarchy '{name}': parent array of level {i} is inconsistent")
        default_names = ["value"] + [f"level {i}" for i in range(1, len(self.labels))]
        self.level_names = tuple(level_names) if level_names else tuple(default_names)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_columns(
        cls,
        name: str,
        leaves: Sequence[Any] | pl.Series,
        levels: Sequence[Sequence[Any]],
        level_names: Sequence[str] | None = None,
    ) -> Hierarchy:
        """Build from one label column per generalization level, aligned with ``leaves``.

        ``levels[i][j]`` is the label of leaf ``j`` at level ``i + 1``. Nodes are identified by
        their label within a level. Raises :class:`HierarchyError` naming the value when a leaf
        is listed twice or a node would have two parents (the columns do not form a tree).
        """
        leaf_series = leaves if isinstance(leaves, pl.Series) else pl.Series(name, list(leaves), strict=False)
        n = len(leaf_series)
        if n == 0:
            raise HierarchyError(f"hierarchy '{name}' has no values")
        duplicated = leaf_series.filter(leaf_series.is_duplicated())
        if len(duplicated):
            raise HierarchyError(f"hierarchy '{name}' lists the value {_label(duplicated[0])!r} twice")
        leaf_labels = _labels(leaf_series.to_list())
        ids = [np.arange(n, dtype=np.uint32)]
        labels: list[Sequence[str]] = [leaf_labels]
        for depth, given in enumerate(levels, start=1):
            column = _labels(given)
            if len(column) != n:
                raise HierarchyError(f"hierarchy '{name}': level {depth} has {len(column)} labels for {n} values")
            level_ids, level_labels = _first_appearance_ids(column)
            ids.append(level_ids)
            labels.append(level_labels)
        parents = []
        for depth in range(len(ids) - 1):
            child, parent = ids[depth], ids[depth + 1]
            table = np.full(len(labels[depth]), np.iinfo(np.uint32).max, dtype=np.uint32)
            table[child[::-1]] = parent[::-1]  # the first row naming a node decides its parent
            clash = np.nonzero(table[child] != parent)[0]
            if len(clash):
                j = int(clash[0])
                node = labels[depth][child[j]]
                raise HierarchyError(
                    f"hierarchy '{name}' is not a tree: '{node}' at level {depth} has two parents "
                    f"at level {depth + 1}: '{labels[depth + 1][table[child[j]]]}' and "
                    f"'{labels[depth + 1][parent[j]]}'"
                )
            parents.append(table)
        return cls(name, leaf_series, labels, parents, level_names)

    @classmethod
    def from_csv(
        cls, path: str | Path, *, name: str | None = None, separator: str | None = None
    ) -> Hierarchy:
        """Read a hierarchy file as ARX writes it: one row per leaf, one column per level.

        No header; ``;`` (ARX's default), ``,`` or tab separated (detected from the first row,
        outside quoted labels, when ``separator`` is None); a quoted label may hold separators and
        line breaks (:mod:`crowdsafe.data.hierarchy_file`). Leaf values are read as text and matched to the data's type
        when the hierarchy is applied.
        """
        path = Path(path)
        try:
            raw = read_input_bytes(path, "hierarchy file")  # a FIFO, a device or over 64 MiB: refused
        except FileNotFoundError:
            raise InputError(f"hierarchy file not found: {path}") from None
        except OSError as exc:
            raise InputError(f"cannot read hierarchy file {path}: {exc.strerror}") from None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"hierarchy file {path} is not UTF-8 (invalid byte at position {exc.start}); "
                "re-save it as UTF-8"
            ) from None
        refuse_nul_in_text(text, path, "hierarchy file")  # published as a label otherwise (ds6 #3)
        try:  # parsed whole: a quoted label keeps its separators and line breaks (hierarchy_file)
            rows = file_rows(text, separator)
        except csv.Error as exc:
            raise HierarchyError(f"hierarchy file {path} is not CSV text: {exc}") from None
        if not rows:
            raise HierarchyError(f"hierarchy file {path} is empty")
        width = len(rows[0])
        for number, row in enumerate(rows, start=1):
            if len(row) != width:
                raise HierarchyError(f"hierarchy file {path}: row {number} ({row[0]!r}) has {len(row)} levels, "
                                     f"the first row has {width}")
        leaves = pl.Series(name or path.stem, [row[0] for row in rows], dtype=pl.String)
        levels = [[row[i] for row in rows] for i in range(1, width)]
        made = cls.from_columns(name or path.stem, leaves, levels).check_labels(f"hierarchy file {path}")
        check_one_root(made, f"hierarchy file {path}", ROOT_LABEL)  # '*' for M, 'ROOT' for F: refused
        return made

    def check_labels(self, where: str | None = None) -> Hierarchy:
        """This hierarchy, checked not to publish one value as another or as an empty cell (a
        label that is a different leaf, the root ``*`` aside, or is empty): such a hierarchy is
        refused, naming the value and the level (:mod:`crowdsafe.data.hierarchy_checks`). Run on
        declared hierarchies (files, named groups): decided from the hierarchy alone."""
        check_labels(self, where or f"hierarchy {self.name!r}", ROOT_LABEL)
        return self

    def with_missing_leaf(self) -> Hierarchy:
        """This hierarchy plus a leaf for the missing value, shown ``?`` up to the root.

        Under the ``keep`` missing-value policy a missing value is a value of its own, so it
        needs a leaf; it stays apart from every other value until the top level joins all.
        """
        if self.leaves.null_count():
            return self
        appended = self._missing_leaf_appended()
        if appended is not None:
            return appended
        return self._missing_leaf_by_columns()

    def _missing_leaf_by_columns(self) -> Hierarchy:
        """:meth:`with_missing_leaf` rebuilt from its label columns (:meth:`from_columns`)."""
        columns = [
            list(np.asarray(self.labels[i], dtype=object)[self.leaf_map(i)]) + [MISSING_LABEL]
            for i in range(1, self.height + 1)
        ]
        if self.height and self.size(self.height) == 1:
            columns[-1][-1] = self.labels[self.height][0]
        leaves = pl.concat([self.leaves, pl.Series(self.name, [None], dtype=self.leaves.dtype)])  # not in place
        return self._same_kind(type(self).from_columns(self.name, leaves, columns, self.level_names))

    def absorbing(self) -> Hierarchy:
        """This hierarchy with a missing-value leaf that also takes every value it does not list.

        The safe pipeline publishes through it (:func:`crowdsafe.anonymize.publish.prepare_dataset`):
        a row whose value lies outside a declared hierarchy is published as a missing value
        (``?`` up to the root) instead of stopping the run, so whether such a row exists changes
        neither the outcome nor any message; the leaf is there whatever the data holds, so the
        leaf count is public. How many values were absorbed is a custodian-only fact
        (:meth:`outside`).
        """
        if self.absorbs_outside:
            return self
        made = self.with_missing_leaf()
        if made is self:
            made = copy.copy(made)
            made.__dict__.pop("derived", None)  # its own cache: what it derives names it
        made.absorbs_outside = True
        return made

    def _missing_leaf_appended(self) -> Hierarchy | None:
        """:meth:`with_missing_leaf` by appending the leaf and its ``?`` nodes to the arrays, where
        that is surely what :meth:`from_columns` builds; else None (a subclass, a ``?`` node or a
        repeated label, nodes not numbered by first appearance, leaf labels not the leaves' own)."""
        if type(self) is not Hierarchy:
            return None
        top = self.height
        root_only = top > 0 and self.size(top) == 1
        for level in range(1, top + 1):
            named = self.labels[level]
            if len(set(named)) != len(named) or (MISSING_LABEL in named and not (root_only and level == top)):
                return None
            _, first = np.unique(self.leaf_map(level), return_index=True)
            if len(first) != len(named) or np.any(np.diff(first) <= 0):
                return None
        if self.labels[0] != tuple(_label(v) for v in self.leaves.to_list()):
            return None
        labels, parents = [[*self.labels[0], MISSING_LABEL]], []
        for level in range(1, top + 1):
            joins_root = root_only and level == top  # the missing leaf's chain joins the single root
            labels.append([*self.labels[level]] + ([] if joins_root else [MISSING_LABEL]))
            parents.append(np.append(self.parents[level - 1], 0 if joins_root else self.size(level)))
        leaves = pl.concat([self.leaves, pl.Series(self.name, [None], dtype=self.leaves.dtype)])  # not in place
        return self._same_kind(Hierarchy(self.name, leaves, labels, parents, self.level_names))

    def _same_kind(self, made: Hierarchy) -> Hierarchy:
        """``made`` with this hierarchy's provenance flags (for derived hierarchies)."""
        made.value_local = self.value_local
        made.absorbs_outside = self.absorbs_outside
        return made

    # -- shape --------------------------------------------------------------------------

    @property
    def height(self) -> int:
        """Number of generalization steps above the leaves (levels are ``0..height``)."""
        return len(self.parents)

    def size(self, level: int) -> int:
        """Number of nodes at ``level``."""
        return len(self.labels[self._check_level(level)])

    def _check_level(self, level: int) -> int:
        if not 0 <= level <= self.height:
            raise HierarchyError(
                f"hierarchy '{self.name}' has levels 0..{self.height}, not level {level}"
            )
        return level

    @cached_property
    def derived(self) -> dict[Any, Any]:
        """Structures that other modules build from this hierarchy alone (its leaves and
        labels, fixed once it is made), each stored once under a key naming what it is: an
        attack's leaf domain, say (:func:`crowdsafe.data.generalized.leaf_domain`), built on
        first use and then shared by every later call instead of being rebuilt."""
        return {}

    @cached_property
    def _leaf_maps(self) -> tuple[np.ndarray, ...]:
        maps = [np.arange(len(self.labels[0]), dtype=np.uint32)]
        for parent in self.parents:
            maps.append(parent[maps[-1]])
        return tuple(maps)

    def leaf_map(self, level: int) -> np.ndarray:
        """For each leaf code, its node code at ``level``."""
        return self._leaf_maps[self._check_level(level)]

    def generalize(self, codes: np.ndarray, level: int) -> np.ndarray:
        """Map leaf codes (as produced by :func:`crowdsafe.data.encode`) to node codes at ``level``."""
        return self.leaf_map(level)[codes]

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of leaves under each node of ``level`` (1 everywhere at level 0)."""
        return np.bincount(self.leaf_map(level), minlength=self.size(level)).astype(np.int64)

    @property
    def is_numeric(self) -> bool:
        """True when the leaves are numbers or dates, so nodes have ``[low, high]`` ranges."""
        dtype = self.leaves.dtype
        return dtype.is_numeric() or dtype == pl.Date

    def ranges(self, level: int) -> np.ndarray:
        """``(size(level), 2)`` array: the closed range [low, high] of leaf values under each node.

        Only for numeric (or date) leaves; a missing-value leaf is ignored (a node holding only
        it has range [nan, nan]). Raises :class:`HierarchyError` for text leaves.
        """
        if not self.is_numeric:
            raise HierarchyError(f"hierarchy '{self.name}' has text values: nodes have no numeric range")
        values = self.derived.get("numeric_leaf_values")
        if values is None:  # the leaves as floats, once (each level's ranges read them)
            values = self.derived["numeric_leaf_values"] = self.leaves.to_physical().cast(pl.Float64).to_numpy()
        node = self.leaf_map(level)
        present = ~np.isnan(values)
        low = np.full(self.size(level), np.inf)
        high = np.full(self.size(level), -np.inf)
        np.minimum.at(low, node[present], values[present])
        np.maximum.at(high, node[present], values[present])
        empty = low > high
        low[empty] = np.nan
        high[empty] = np.nan
        return np.column_stack([low, high])

    # -- applying to data ---------------------------------------------------------------

    def aligned_leaves(self, dtype: pl.DataType) -> pl.Series:
        """The leaves cast to ``dtype`` (files hold text); one it cannot hold (0.5: integers) is refused."""
        leaves = self.leaves
        if leaves.dtype == dtype:
            return leaves
        if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
            if leaves.dtype == pl.String:
                return leaves
            return pl.Series(self.name, [None if v is None else _label(v) for v in leaves.to_list()], dtype=pl.String)
        source = leaves
        if leaves.dtype == pl.String and dtype.is_numeric():
            source = leaves.str.strip_chars()
        try:
            return source.cast(dtype, strict=True)
        except pl.exceptions.PolarsError:
            cast = source.cast(dtype, strict=False)
            bad = leaves.filter(cast.is_null() & leaves.is_not_null())
            raise HierarchyError(
                f"hierarchy '{self.name}' has the value {bad[0]!r}, which is not a valid {dtype} "
                f"like the data column"
            ) from None

    def leaf_codes(self, values: pl.Series, *, column: str | None = None) -> np.ndarray:
        """Leaf code of each value (UInt32); :class:`HierarchyError` names an uncovered value.

        Call it on a column's small dictionary of distinct values, not on millions of rows.
        """
        column = column or values.name or self.name
        target = values
        if isinstance(values.dtype, (pl.Categorical, pl.Enum)):
            target = values.cast(pl.String)
        leaves = self.aligned_leaves(target.dtype)
        found = self._looked_up(target, leaves)
        if found is None:
            lookup = pl.DataFrame({"value": leaves, "code": np.arange(len(leaves), dtype=np.uint32)})
            found = (
                pl.DataFrame({"value": target})
                .join(lookup, on="value", how="left", nulls_equal=True, maintain_order="left")
                .get_column("code")
            )
        uncovered = target.filter(found.is_null())
        if len(uncovered) and self.absorbs_outside:
            return found.fill_null(self.missing_leaf).to_numpy().astype(np.uint32)
        if len(uncovered):
            first = uncovered[0]
            if first is None:
                raise HierarchyError(
                    f"hierarchy '{self.name}' does not cover missing values in column '{column}'; "
                    "drop them (missing='drop') or give the hierarchy a leaf for them "
                    "(hierarchy.with_missing_leaf())"
                )
            more = f" (and {len(uncovered) - 1} other value{'s' * (len(uncovered) > 2)})" if len(uncovered) > 1 else ""
            raise HierarchyError(f"hierarchy '{self.name}' does not cover the value {_label(first)!r} of column "
                                 f"'{column}'{more}{twin_note(first, self.leaves)}")
        return found.to_numpy().astype(np.uint32)

    def leaf_code_expression(self, column: str, dtype: pl.DataType) -> pl.Expr | None:
        """A Polars expression giving each row of ``column`` (of type ``dtype``) its leaf code
        (UInt32), as :meth:`leaf_codes` would: for an absorbing hierarchy (:meth:`absorbing`),
        whose missing-value leaf takes missing values and every value it does not list, so no
        row can be refused. None where :meth:`leaf_codes` must decide: a hierarchy that does not
        absorb (an uncovered value is an error naming it), leaves that repeat a value, or a
        column that is not text or integer (a Categorical's rows are counted faster by their
        physical codes: :func:`~crowdsafe.anonymize.counted.counted`)."""
        if not self.absorbs_outside or not (dtype == pl.String or dtype.is_integer()):
            return None
        key = ("leaf_code_expression", dtype)
        if key not in self.derived:
            old, codes, gap = self._listed_leaves(dtype)  # absorbing: one missing leaf
            self.derived[key] = (old, pl.Series(codes, dtype=pl.UInt32), gap) if old.n_unique() == len(old) else None
        found = self.derived[key]
        if found is None:
            return None
        old, codes, missing_leaf = found
        return pl.col(column).replace_strict(old, codes, default=missing_leaf, return_dtype=pl.UInt32) \
            .fill_null(missing_leaf)

    def _listed_leaves(self, dtype: pl.DataType) -> tuple[pl.Series, np.ndarray, int | None]:
        """The non-missing leaves (as ``dtype``), their codes, and the first missing leaf's code
        (or None); a slice when that is the last leaf, as :meth:`absorbing` appends it."""
        leaves = self.aligned_leaves(dtype)
        last = len(leaves) - 1
        if leaves.null_count() == 1 and leaves[last] is None:
            return leaves.head(last), np.arange(last), last
        missing = leaves.is_null().to_numpy()
        first = np.flatnonzero(missing)[:1].tolist()
        return leaves.filter(pl.Series(~missing)), np.flatnonzero(~missing), first[0] if first else None

    def _looked_up(self, target: pl.Series, leaves: pl.Series) -> pl.Series | None:
        """The join of :meth:`leaf_codes` done in Python for a few values (its fixed cost is the
        cost there): each value's leaf code from a dictionary of the leaves (made once per dtype,
        :attr:`derived`), None where no leaf equals it. None (the join decides) for many values,
        floats (NaN and -0.0 compare otherwise in Python) or leaves that repeat a value."""
        if len(target) > LOOKUP_IN_PYTHON or target.dtype.is_float() or target.dtype != leaves.dtype:
            return None
        key = ("leaf_code_of", target.dtype)
        code_of = self.derived.get(key)
        if code_of is None:
            listed = leaves.to_list()
            code_of = self.derived[key] = {v: i for i, v in enumerate(listed)}
        if len(code_of) != len(leaves):
            return None
        return pl.Series("code", [code_of.get(v) for v in target.to_list()], dtype=pl.UInt32)

    def validate(self, values: pl.Series, *, column: str | None = None) -> None:
        """Raise :class:`HierarchyError` naming the first value of ``values`` not covered."""
        self.leaf_codes(values.unique(), column=column)

    @property
    def missing_leaf(self) -> int:
        """The code of the missing-value leaf (:class:`HierarchyError` when there is none)."""
        nulls = np.flatnonzero(self.leaves.is_null().to_numpy())
        if not len(nulls):
            raise HierarchyError(f"hierarchy '{self.name}' has no leaf for missing values")
        return int(nulls[0])

    def outside(self, values: pl.Series) -> pl.Series:
        """The distinct values of ``values`` (missing values aside) that the leaves do not list:
        what :meth:`absorbing` publishes as missing. Reads the data: custodian-only."""
        target = values.drop_nulls().unique()
        if isinstance(target.dtype, (pl.Categorical, pl.Enum)):
            target = target.cast(pl.String)
        leaves = self.aligned_leaves(target.dtype)
        return target.filter(~target.is_in(leaves.drop_nulls().implode())).sort()

    def outside_count(self, column: str, dtype: pl.DataType) -> pl.Expr:
        """An expression: how many distinct values of ``column`` (of type ``dtype``; missing
        values aside) the leaves do not list, the length of :meth:`outside`'s list, so that every
        column is counted in one select. Reads the data: custodian-only."""
        categorical = isinstance(dtype, (pl.Categorical, pl.Enum))
        listed = pl.lit(self._listed_leaves(pl.String() if categorical else dtype)[0]).implode()
        if categorical:  # its few distinct values first, then as text
            values = pl.col(column).drop_nulls().unique().cast(pl.String)
            return values.filter(~values.is_in(listed)).len()
        values = pl.col(column)
        return values.filter(values.is_not_null() & ~values.is_in(listed)).n_unique()

    def mapping(self, level: int) -> pl.DataFrame:
        """A frame ``value -> label`` from each leaf to its node label at ``level``."""
        labels = np.asarray(self.labels[self._check_level(level)], dtype=object)
        return pl.DataFrame(
            {"value": self.leaves, "label": pl.Series(labels[self.leaf_map(level)], dtype=pl.String)}
        )

    # -- output -------------------------------------------------------------------------

    def to_rows(self) -> list[list[str]]:
        """One row per leaf, one label per level (the ARX file layout)."""
        columns = [np.asarray(self.labels[i], dtype=object)[self.leaf_map(i)] for i in range(self.height + 1)]
        return [list(map(str, row)) for row in zip(*columns)]

    def write_csv(self, path: str | Path, *, separator: str = ";") -> Path:
        """Write the hierarchy as an ARX hierarchy file, atomically."""
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=separator, lineterminator="\n").writerows(self.to_rows())
        with atomic_path(path) as tmp:
            tmp.write_text(buffer.getvalue(), encoding="utf-8")
        return Path(path)

    def describe_level(self, level: int) -> str:
        """What publishing the column at ``level`` does, in words (``age in ranges of 10``,
        ``zip: last 2 digits masked``, ``education: 3 groups``, ``sex: suppressed (*)``), from
        public information only: a declared hierarchy's labels, an observed one's level names
        (:mod:`crowdsafe.data.level_words`)."""
        return level_words(self, self._check_level(level))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "height": self.height,
            "levels": [
                {"level": i, "name": self.level_names[i], "nodes": self.size(i)}
                for i in range(self.height + 1)
            ],
        }

    def __repr__(self) -> str:
        sizes = " -> ".join(str(self.size(i)) for i in range(self.height + 1))
        return f"Hierarchy({self.name!r}, height={self.height}, nodes per level {sizes})"

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt through __init__ (not a bare __dict__ copy): the provenance flags ride along
        return (_rebuild, (type(self), self.name, self.leaves, self.labels, self.parents, self.level_names,
                           self.value_local, self.absorbs_outside))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self.to_rows() == other.to_rows()

    # unhashable: equality compares contents
    __hash__ = None  # type: ignore[assignment]  # typeshed types __hash__ as a method, not None


def _rebuild(kind: type[Hierarchy], name: str, leaves: pl.Series, labels: Sequence[Sequence[str]],
             parents: Sequence[np.ndarray], level_names: Sequence[str], value_local: bool,
             absorbs_outside: bool) -> Hierarchy:
    made = kind(name, leaves, labels, parents, level_names)
    made.value_local, made.absorbs_outside = value_local, absorbs_outside
    return made


class ObservedHierarchy(Hierarchy):
    """A hierarchy whose leaves are the values *observed in the data*, each mapped to its nodes
    by a public rule: the flat hierarchy ``value -> *`` of a column given none, or a schema
    builder over the column's values (``widths``/``cuts``, ``mask``, ``dates``, ``flat``;
    ``fanout`` without a declared ``order``, whose groups depend on which values are present:
    :attr:`value_local` False).

    Its height and level names are fixed by the rule (public); its leaves, node counts and every
    quantity computed from them are facts about the data. Mechanism inputs never read them:
    node penalties are by level (:func:`crowdsafe.selection.score.node_penalties`), the
    entropy objective and α-β refuse such a column as having no public domain, key sizes only
    change the running time, and a published scheme keeps only the values it published
    (:mod:`crowdsafe.anonymize.published`). Its repr shows no data-dependent count.
    """

    observed = True

    @classmethod
    def of(cls, hierarchy: Hierarchy, *, value_local: bool = True) -> ObservedHierarchy:
        """``hierarchy`` (built over observed values) marked as observed."""
        made = cls(hierarchy.name, hierarchy.leaves, hierarchy.labels, hierarchy.parents, hierarchy.level_names)
        made.value_local = value_local
        return made

    def __repr__(self) -> str:
        return (f"ObservedHierarchy({self.name!r}, height={self.height}, levels {list(self.level_names)}, "
                "leaves read from the data)")
