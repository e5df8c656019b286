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
  truth is known.

Everything works on distinct target tuples and on the release's class table; the matching is
a walk down the trie of the classes' cell prefixes, one column at a time, in array operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.anonymize.cells import dense_ids, first_of_each
from crowdsafe.data import Hierarchy, encode_series
from crowdsafe.data.generalized import CellKind, Domain, canonical_cells, is_generalized, parse_number
from crowdsafe.errors import InputError

CHUNK_PAIRS = 4_000_000  # target tuples x classes evaluated at once by the nearest-centroid search


@dataclass(frozen=True)
class ClassTable:
    """A release's equivalence classes.

    ``cells``: one row per class, its published quasi-identifier cells as canonical text, plus
    ``class`` and ``size``. ``combos``: the distinct (quasi-identifier cells as written[,
    sensitive]) combinations of the release, with ``class_of_combo`` their class — the whole
    release reduced in one group-by pass.
    """

    cells: pl.DataFrame
    combos: pl.DataFrame
    class_of_combo: np.ndarray
    keys: tuple[str, ...]

    @property
    def n_classes(self) -> int:
        return self.cells.height

    def class_of_rows(self, release: pl.DataFrame) -> np.ndarray:
        """The class of every row of ``release`` (the frame this table was made from)."""
        lookup = self.combos.with_columns(pl.Series("__class", self.class_of_combo))
        return (release.select(self.keys).join(lookup, on=list(self.keys), how="left", nulls_equal=True,
                                               maintain_order="left").get_column("__class").to_numpy())


def class_table(release: pl.DataFrame, qi: Sequence[str], sensitive: str | None = None) -> ClassTable:
    """Group a release's rows by their published quasi-identifier tuple (and, with
    ``sensitive``, keep the distinct sensitive cells of every class in ``combos``)."""
    missing = [c for c in qi if c not in release.columns]
    if missing:
        raise InputError(
            f"the release has no column {missing[0]!r}; its columns are: {', '.join(release.columns)}"
        )
    keys = list(qi) + ([sensitive] if sensitive is not None else [])
    combos = release.group_by(keys).agg(pl.len().cast(pl.Int64).alias("__rows"))
    # read only the distinct cells canonically: two spellings of one cell ('[25,34]' and
    # '[25, 34]') end up in one class
    canonical = pl.DataFrame([canonical_cells(combos.get_column(c)) for c in qi])
    class_of_combo, n_classes = group_rows(canonical, qi, with_first=False)
    sizes = np.bincount(class_of_combo, weights=combos.get_column("__rows").to_numpy(), minlength=n_classes)
    cells = canonical.gather(first_of_each(class_of_combo, n_classes)).with_columns(
        pl.Series("class", np.arange(n_classes, dtype=np.int64)), pl.Series("size", sizes.astype(np.int64)))
    return ClassTable(cells, combos.drop("__rows"), class_of_combo, tuple(keys))


def group_rows(frame: pl.DataFrame, columns: Sequence[str], *, with_first: bool = True
               ) -> tuple[np.ndarray, Any]:
    """Group id of every row by its values in ``columns`` (dictionary codes packed into one
    key, one sort), and the distinct tuples (one row each, in id order) or, with
    ``with_first=False``, the number of groups."""
    codes = [encode_series(frame.get_column(c)) for c in columns]
    ids, n = dense_ids([c for c, _ in codes], [len(d) + 1 for _, d in codes])
    if not with_first:
        return ids, n
    return ids, frame.select(columns).gather(first_of_each(ids, n))


def is_microaggregated(release: pl.DataFrame, qi: Sequence[str], domains: Mapping[str, Domain]) -> bool:
    """True when the release publishes centroids: no cell is generalized and some numeric cell
    is not a value any target holds (a mean), so exact location cannot work."""
    if any(is_generalized(release.get_column(c)) for c in qi):
        return False
    for c in qi:
        numbers = domains[c].numbers
        if numbers is None:
            continue
        column = release.get_column(c)
        try:
            values = column.cast(pl.Float64, strict=True).drop_nulls().unique().to_numpy()
        except pl.exceptions.InvalidOperationError:
            continue
        if not np.isin(values, numbers).all():
            return True
    return False


def target_domains(targets: pl.DataFrame, qi: Sequence[str],
                   hierarchies: Mapping[str, Hierarchy] | None = None) -> dict[str, Domain]:
    """Per quasi-identifier, the domain the targets' values are codes into (the hierarchy's
    leaves when one is given, so that hierarchy labels in a release resolve)."""
    hierarchies = hierarchies or {}
    return {c: Domain.from_values(targets.get_column(c), hierarchies.get(c)) for c in qi}


def target_codes(targets: pl.DataFrame, domains: Mapping[str, Domain]) -> dict[str, np.ndarray]:
    """Each target's code in every domain (an InputError for a value outside a hierarchy)."""
    codes: dict[str, np.ndarray] = {}
    for name, domain in domains.items():
        values = domain.values
        row_code, dictionary = encode_series(targets.get_column(name))
        if dictionary.dtype != values.dtype:
            dictionary = dictionary.cast(values.dtype, strict=False)
        lookup = pl.DataFrame({name: values, "__code": np.arange(len(values), dtype=np.int64)})
        found = (dictionary.to_frame(name).join(lookup, on=name, how="left", nulls_equal=True, maintain_order="left")
                 .get_column("__code"))
        if found.null_count():
            bad = dictionary.filter(found.is_null())[0]
            raise InputError(f"target value {bad!r} of '{name}' is not a leaf of its hierarchy")
        # a missing value takes the code after the dictionary's last entry
        null_code = values.is_null().arg_true()
        mapped = np.append(found.to_numpy(), int(null_code[0]) if len(null_code) else -1)
        codes[name] = mapped[row_code]
        if (codes[name] < 0).any():
            raise InputError(f"a target has no value for '{name}', and the release's domain has no missing value")
    return codes


def locate_exact(cells: pl.DataFrame, qi: Sequence[str], domains: Mapping[str, Domain],
                 tuple_codes: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Every (target tuple, class) pair whose class cells all cover the tuple's values.

    ``tuple_codes[c][t]``: the code of tuple t in column c. Returns two aligned int64 arrays.
    """
    n_tuples = len(next(iter(tuple_codes.values())))
    covers: dict[str, np.ndarray] = {}  # per column: covered[cell, code]
    class_cell: dict[str, np.ndarray] = {}
    for c in qi:
        column = cells.get_column(c)
        distinct = column.unique(maintain_order=True)
        cover = domains[c].cover(distinct, strict=False)
        covered = np.zeros((len(distinct), domains[c].size), dtype=bool)
        rows, codes = cover.membership
        covered[rows, codes] = True
        covers[c] = covered
        index = pl.DataFrame({c: distinct, "__cell": np.arange(len(distinct), dtype=np.int64)})
        class_cell[c] = (column.to_frame(c).join(index, on=c, how="left", nulls_equal=True, maintain_order="left")
                         .get_column("__cell").to_numpy())
    if n_tuples == 0 or cells.height == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # Walk the classes as a trie of cell prefixes, columns with the fewest distinct cells first:
    # keep the (tuple, prefix) pairs whose cells so far all cover the tuple, and extend them by
    # one column at a time. Pairs only grow along prefixes that are still consistent.
    order = sorted(qi, key=lambda c: covers[c].shape[0])
    prefix = np.zeros(cells.height, dtype=np.int64)
    n_prefix = 1
    tuples = np.arange(n_tuples, dtype=np.int64)
    at = np.zeros(n_tuples, dtype=np.int64)
    for c in order:
        width = covers[c].shape[0]
        edges, prefix = np.unique(prefix * width + class_cell[c], return_inverse=True)
        prefix = prefix.astype(np.int64)
        parent, cell = edges // width, edges % width
        starts = np.searchsorted(parent, np.arange(n_prefix + 1))
        fan = starts[at + 1] - starts[at]
        total = int(fan.sum())
        offsets = np.repeat(starts[at] - np.cumsum(fan) + fan, fan) + np.arange(total, dtype=np.int64)
        tuples = np.repeat(tuples, fan)
        keep = covers[c][cell[offsets], tuple_codes[c][tuples]]
        tuples, at = tuples[keep], offsets[keep]
        n_prefix = len(edges)
    class_of_prefix = np.empty(n_prefix, dtype=np.int64)
    class_of_prefix[prefix] = np.arange(cells.height, dtype=np.int64)
    classes = class_of_prefix[at]
    order = np.lexsort((classes, tuples))
    return tuples[order], classes[order]


def _numeric_cells(column: pl.Series, name: str) -> np.ndarray:
    values = []
    for text in column.to_list():
        try:
            values.append(np.nan if text is None else parse_number(text))
        except ValueError:
            raise InputError(
                f"column '{name}' of a microaggregated release holds {text!r}, not a number"
            ) from None
    return np.asarray(values, dtype=np.float64)


def locate_nearest(cells: pl.DataFrame, qi: Sequence[str], domains: Mapping[str, Domain],
                   tuple_codes: Mapping[str, np.ndarray], weights_from: Mapping[str, np.ndarray]
                   ) -> np.ndarray:
    """The class with the nearest centroid for every target tuple (ties: the lowest class).

    ``weights_from[c]``: the targets' codes in column c (one per target), from which the
    standardization (σ² of numbers, Σp² of categories) is taken.
    """
    n_tuples = len(next(iter(tuple_codes.values())))
    numeric_t, numeric_c, numeric_w = [], [], []
    categorical_t, categorical_c, categorical_w = [], [], []
    for c in qi:
        domain = domains[c]
        codes = weights_from[c]
        if domain.numbers is not None:
            x = domain.numbers[codes]
            variance = float(np.nanvar(x))
            numeric_t.append(domain.numbers[tuple_codes[c]])
            numeric_c.append(_numeric_cells(cells.get_column(c), c))
            numeric_w.append(1.0 / (2.0 * variance) if variance > 0 else 0.0)
        else:
            p = np.bincount(codes, minlength=domain.size) / max(len(codes), 1)
            spread = 1.0 - float((p ** 2).sum())
            # a centroid category is a value of the domain (else it matches no target)
            cover = domain.cover(cells.get_column(c).unique(maintain_order=True), strict=False)
            first = np.full(len(cover.labels), -1, dtype=np.int64)
            single = (cover.size == 1) & np.array([k is not CellKind.ANY for k in cover.kind])
            first[single] = cover.indices[cover.indptr[:-1][single]]
            index = pl.DataFrame({c: cover.labels, "__code": first})
            class_code = (cells.get_column(c).to_frame(c).join(index, on=c, how="left", maintain_order="left")
                          .get_column("__code").fill_null(-1).to_numpy())
            categorical_t.append(tuple_codes[c])
            categorical_c.append(class_code)
            categorical_w.append(1.0 / spread if spread > 0 else 0.0)
    nearest = np.empty(n_tuples, dtype=np.int64)
    step = max(1, CHUNK_PAIRS // max(cells.height, 1))
    for start in range(0, n_tuples, step):
        stop = min(n_tuples, start + step)
        distance = np.zeros((stop - start, cells.height))
        for x, y, w in zip(numeric_t, numeric_c, numeric_w):
            distance += w * (x[start:stop, None] - y[None, :]) ** 2
        for x, y, w in zip(categorical_t, categorical_c, categorical_w):
            distance += w * (x[start:stop, None] != y[None, :])
        nearest[start:stop] = distance.argmin(axis=1)
    return nearest
