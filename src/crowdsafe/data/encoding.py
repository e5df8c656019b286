"""Dictionary encoding: each column's values become small integer codes (UInt32).

Codes follow a deterministic dictionary: the hierarchy's leaves when the column has a
hierarchy (so ``hierarchy.generalize(codes, level)`` works directly), the declared categories of
an Enum column, else the distinct values in sorted order with the missing value last. The
dictionary never depends on row order, so equal tables give equal codes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import polars as pl

from crowdsafe.errors import SchemaError

if TYPE_CHECKING:
    from crowdsafe.data.hierarchy import Hierarchy

# Integer columns spanning fewer than this many values are encoded by direct lookup (no sort,
# _encode_by_lookup), others by sorting (_encode_by_sort): the same codes.
_DIRECT_SPAN = 1 << 22


@dataclass(frozen=True)
class EncodedColumn:
    """Codes of one column and its dictionary (``dictionary[code]`` is the value)."""

    name: str
    codes: np.ndarray  # uint32, one per row
    dictionary: pl.Series

    @property
    def cardinality(self) -> int:
        return len(self.dictionary)


@dataclass(frozen=True)
class Encoding(Mapping[str, EncodedColumn]):
    """The encoded columns of a table, by name (in the order asked for)."""

    columns: dict[str, EncodedColumn]

    def __getitem__(self, name: str) -> EncodedColumn:
        return self.columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    @property
    def codes(self) -> dict[str, np.ndarray]:
        return {n: c.codes for n, c in self.columns.items()}

    @property
    def dictionaries(self) -> dict[str, pl.Series]:
        return {n: c.dictionary for n, c in self.columns.items()}


def _dense_codes(physical: np.ndarray, present_order: np.ndarray, span: int) -> np.ndarray:
    """Map ``physical`` ints in ``[0, span)`` to the rank of their value in ``present_order``."""
    lut = np.zeros(span, dtype=np.uint32)
    lut[present_order] = np.arange(len(present_order), dtype=np.uint32)
    return lut[physical]


def _encode_integers(values: np.ndarray, nulls: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Codes and sorted distinct values of an integer array (nulls handled by the caller)."""
    valid = values if nulls is None else values[~nulls]
    if len(valid) == 0:
        return np.zeros(len(values), dtype=np.uint32), valid[:0]
    low, high = int(valid.min()), int(valid.max())
    if high - low < _DIRECT_SPAN:
        return _encode_by_lookup(values, nulls, low, high)
    return _encode_by_sort(values, valid)


def _encode_by_lookup(values: np.ndarray, nulls: np.ndarray | None, low: int, high: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_encode_integers` by a look-up table of the span ``low..high`` (no sort); a null
    row gets code 0."""
    shifted = (values - low).astype(np.int64)
    if nulls is not None:
        shifted[nulls] = 0
    seen = np.bincount(shifted if nulls is None else shifted[~nulls], minlength=high - low + 1)
    present = np.nonzero(seen)[0]
    return _dense_codes(shifted, present, high - low + 1), present + low


def _encode_by_sort(values: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_encode_integers` by sorting the ``valid`` values (the reference twin of
    :func:`_encode_by_lookup`; a null row's code is arbitrary)."""
    distinct = np.unique(valid)
    return np.searchsorted(distinct, values).astype(np.uint32), distinct


@runtime_checkable
class EncodedTable(Protocol):
    """A table that encodes and caches its own columns (a :class:`~crowdsafe.data.Dataset`).

    Declared here so that this module needs nothing from the Dataset's: the Dataset uses the
    encoding, never the reverse."""

    @property
    def quasi_identifiers(self) -> list[str]: ...

    def encoded(self, column: str) -> EncodedColumn: ...


def encode_series(series: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Encode one column: (uint32 codes, dictionary); missing values get the last code."""
    name = series.name
    dtype = series.dtype
    n_null = series.null_count()
    nulls = series.is_null().to_numpy() if n_null else None
    if isinstance(dtype, pl.Enum):
        categories = dtype.categories
        codes = series.to_physical().fill_null(len(categories)).to_numpy().astype(np.uint32)
        dictionary = categories.cast(dtype).alias(name)
    elif isinstance(dtype, pl.Categorical) or dtype == pl.String:
        categorical = series if isinstance(dtype, pl.Categorical) else series.cast(pl.Categorical)
        physical = categorical.to_physical()
        distinct = categorical.drop_nulls().unique()
        if len(distinct) == 0:
            codes, dictionary = np.zeros(len(series), dtype=np.uint32), series.clear()
        else:
            labels = distinct.cast(pl.String)
            order = np.asarray(labels.arg_sort())
            present = distinct.to_physical().to_numpy().astype(np.int64)[order]
            span = int(present.max()) + 1
            physical_np = physical.fill_null(0).to_numpy()
            codes = _dense_codes(physical_np, present, span)
            dictionary = labels.gather(order).cast(dtype).alias(name)
    elif dtype.is_integer() or dtype in (pl.Date, pl.Boolean):
        physical = series.to_physical() if dtype != pl.Boolean else series.cast(pl.UInt8)
        values = physical.fill_null(0).to_numpy()
        codes, distinct_values = _encode_integers(values, nulls)
        dictionary = pl.Series(name, distinct_values).cast(physical.dtype).cast(dtype)
    elif dtype.is_float():
        values = series.to_numpy() + 0.0  # -0.0 == 0.0: one value, always published as 0.0
        valid = values if nulls is None else values[~nulls]
        distinct_values = np.unique(valid)
        codes = np.searchsorted(distinct_values, np.where(np.isnan(values), 0.0, values)).astype(np.uint32)
        dictionary = pl.Series(name, distinct_values, dtype=dtype)
    else:
        distinct = series.drop_nulls().unique().sort()
        lookup = pl.DataFrame({name: distinct, "__code": np.arange(len(distinct), dtype=np.uint32)})
        joined = series.to_frame().join(lookup, on=name, how="left", maintain_order="left")
        codes = joined.get_column("__code").fill_null(len(distinct)).to_numpy().astype(np.uint32)
        dictionary = distinct
    if n_null:
        codes = codes.astype(np.uint32, copy=False)
        codes[nulls] = len(dictionary)
        dictionary = dictionary.extend(pl.Series(name, [None], dtype=dictionary.dtype))
    return codes.astype(np.uint32, copy=False), dictionary.alias(name)


def encode_with_hierarchy(series: pl.Series, hierarchy: Hierarchy) -> EncodedColumn:
    """Encode a column as leaf codes of ``hierarchy`` (its dictionary is the hierarchy's leaves).

    Raises :class:`~crowdsafe.errors.HierarchyError` naming the first value not covered.
    """
    codes, dictionary = encode_series(series)
    # an Enum's dictionary lists every declared category; only those present must be covered
    present = np.flatnonzero(np.bincount(codes, minlength=len(dictionary)))
    leaf_of_code = np.zeros(len(dictionary), dtype=np.uint32)
    leaf_of_code[present] = hierarchy.leaf_codes(dictionary.gather(present), column=series.name)
    return EncodedColumn(series.name, leaf_of_code[codes], hierarchy.leaves.alias(series.name))


def _listed(columns: Sequence[str] | str) -> list[str]:
    """``columns`` as a list of names: one name is the list of that name (not of its characters)."""
    return [columns] if isinstance(columns, str) else list(columns)


def frame_of(data: object, function: str) -> pl.DataFrame:
    """``data`` as a Polars frame: a Polars frame as it is, a pandas DataFrame or a LazyFrame
    converted (as every public function takes them; they were refused as "not DataFrame"), anything
    else refused naming ``function``."""
    from crowdsafe.arguments import kind
    from crowdsafe.data.io import as_frame

    frame = as_frame(data)
    if frame is None:
        raise SchemaError(f"{function}() takes a Dataset or a Polars or pandas DataFrame, not {kind(data)} "
                          "(read a file or a bundled table first: crowdsafe.data.load(...))")
    return frame


def encode(data: EncodedTable | pl.DataFrame, columns: Sequence[str] | str | None = None) -> Encoding:
    """Dictionary-encode ``columns`` (default: the quasi-identifiers) of a Dataset or frame (Polars,
    eager or lazy, or pandas).

    For a :class:`~crowdsafe.data.Dataset`, columns with a hierarchy are encoded as its leaf
    codes, and encodings are cached on the dataset (it is immutable by convention).
    """
    if not isinstance(data, pl.DataFrame) and isinstance(data, EncodedTable):
        names = _listed(columns) if columns is not None else data.quasi_identifiers
        return Encoding({name: data.encoded(name) for name in names})
    data = frame_of(data, "encode")
    names = _listed(columns) if columns is not None else list(data.columns)
    absent = [n for n in names if n not in data.columns]
    if absent:
        raise SchemaError(f"no column named '{absent[0]}'; the columns are: {', '.join(data.columns)}")
    out = {}
    for name in names:
        codes, dictionary = encode_series(data.get_column(name))
        out[name] = EncodedColumn(name, codes, dictionary)
    return Encoding(out)
