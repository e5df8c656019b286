"""The table's leaf-code counts on Spark, and each release's Bernoulli(β) sample drawn from them.

:func:`count_table` counts the whole table by leaf-code tuples in one Spark aggregation (no
Python on the executors, no randomness): the frequency table, small, is all that reaches the
driver. It is counted once per table, while the table is read (:mod:`.table`), and kept on the
driver.

:func:`sample_counts` draws a release's sample from it: every row kept independently with
probability β, drawn as binomial thinning of the counts
(:func:`crowdsafe.mechanisms.thinning.thinned_counts`: each tuple's kept count is
Binomial(c, β), exactly the law of counting a row-level Bernoulli(β) sample, proved there), from
the run's stream (in release mode ChaCha20 keyed from ``os.urandom``), on the driver. The sample
is never materialised: everything after it (choice, suppression, the written rows) is computed
from its counts, and its identity is digested from them (:func:`.fingerprint.sample_digest`).

Two ways to count, the same table (a fast path and its reference twin, :func:`packs_on_jvm` the
rule): where every published column is text, integral or boolean, each dictionary has at most
``JVM_DICTIONARY_LIMIT`` values and the code grid stays below ``PACK_LIMIT``, each row's leaf
codes are looked up and packed into one long on the JVM (:func:`packed_codes`) and Spark counts
the keys; otherwise Spark counts the distinct tuples of raw values and the driver encodes them
with the dictionaries (a join per column over the distinct tuples, not the rows).

Both notice a value that is not in its dictionary (the key is null; the join finds no code) and
return None: the dictionaries of columns with a declared hierarchy assume the column holds only
its leaves (:mod:`.declared_values`), and the table pass then collects that column after all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from crowdsafe.data import packing
from crowdsafe.mechanisms.thinning import thinned_counts
from crowdsafe.randomness import Randomness

COUNT = "__crowdsafe_count"
KEY = "__crowdsafe_key"
PACK_LIMIT = 2.0**62  # the packed fast path: code grid (Π radices) below this
JVM_DICTIONARY_LIMIT = 4096  # the packed fast path: values per dictionary looked up on the JVM
_JVM_TYPES = ("string", "tinyint", "smallint", "int", "bigint", "boolean")


@dataclass(frozen=True)
class TableCounts:
    """The whole table's frequency table by leaf-code tuples, on the driver: ``counts`` per
    tuple, the tuples in lexicographic order, held as packed ``keys`` (:mod:`crowdsafe.data.packing`
    over ``radices``) when the grid fits a long, else as ``codes`` (m × d)."""

    counts: np.ndarray
    radices: tuple[int, ...]
    keys: np.ndarray | None = None
    codes: np.ndarray | None = None

    @property
    def n_cells(self) -> int:
        return len(self.counts)

    def tuples(self, cells: np.ndarray) -> np.ndarray:
        """The code tuples (m' × d, int64) of the ``cells`` (indices, in order)."""
        if self.keys is not None:
            unpacked = packing.unpack(self.keys[cells], list(self.radices))
            return np.column_stack(unpacked).astype(np.int64).reshape(len(cells), len(self.radices))
        assert self.codes is not None
        return self.codes[cells]


def radices_of(dictionaries: Sequence[pl.DataFrame]) -> list[int]:
    """The key's radix of each column: one more than its largest leaf code."""
    return [int(cast(int, d.get_column("code").max() or 0)) + 1 for d in dictionaries]


def packs_on_jvm(types: Sequence[str], dictionaries: Sequence[pl.DataFrame]) -> bool:
    """The rule between the twins: the packed fast path when every published column's Spark type
    is text, integral or boolean, every dictionary has at most ``JVM_DICTIONARY_LIMIT`` values
    and the code grid is below ``PACK_LIMIT``."""
    return (all(t in _JVM_TYPES for t in types)
            and all(d.height <= JVM_DICTIONARY_LIMIT for d in dictionaries)
            and packing.fits(radices_of(dictionaries), PACK_LIMIT))


def code_expression(name: str, spark_type: str, table: pl.DataFrame) -> Any:
    """The leaf code (long) of column ``name`` as a Spark expression: its (value, code)
    dictionary ``table`` as a literal map (keys of the column's type), a null by the code of the
    null value; null for a value the dictionary does not hold (and for a null when it holds
    none).

    Fast path: the map is written as one JSON text that Spark parses into a map once, while it
    optimises the plan (constant folding: the plan holds the literal map, not the parsing), where
    its reference twin :func:`code_expression_by_literals` made four JVM calls per value (13 s
    for 4,000 values on a loaded machine, 0.07 s now). Taken where JSON reads the values exactly
    as the column's type: text values in a text column, integers in an integral one, booleans in
    a boolean one (``tests/fast_paths/test_spark_sampling.py`` compares the twins)."""
    from pyspark.sql import functions as F

    if not _json_exact(spark_type, table.schema["value"]):
        return code_expression_by_literals(name, spark_type, table)
    column = F.col(f"`{name}`")
    pairs, missing = _pairs(table)
    if not pairs:
        return F.when(column.isNull(), missing)
    text = json.dumps([{"k": v, "v": c} for v, c in pairs], ensure_ascii=False)
    lookup = F.map_from_entries(F.from_json(F.lit(text), f"array<struct<k:{spark_type},v:bigint>>"))
    return F.when(column.isNull(), missing).otherwise(F.try_element_at(lookup, column))


def code_expression_by_literals(name: str, spark_type: str, table: pl.DataFrame) -> Any:
    """:func:`code_expression`, the map built of one literal per key and per code (each cast to
    its type): the reference twin, and the way for a dictionary JSON would not read exactly."""
    from pyspark.sql import functions as F

    column = F.col(f"`{name}`")
    pairs, missing = _pairs(table)
    if not pairs:
        return F.when(column.isNull(), missing)
    lookup = F.create_map(*[x for v, c in pairs for x in (F.lit(v).cast(spark_type), F.lit(c).cast("long"))])
    return F.when(column.isNull(), missing).otherwise(F.try_element_at(lookup, column))


def _pairs(table: pl.DataFrame) -> tuple[list[tuple[Any, int]], Any]:
    """The dictionary's (value, code) pairs of its values that are not missing, and the code of
    the missing value as a Spark literal (a null long when it has none)."""
    from pyspark.sql import functions as F

    values, codes = table.get_column("value").to_list(), table.get_column("code").to_list()
    pairs = [(v, int(c)) for v, c in zip(values, codes) if v is not None]
    null_codes = [int(c) for v, c in zip(values, codes) if v is None]
    return pairs, F.lit(null_codes[0] if null_codes else None).cast("long")


def _json_exact(spark_type: str, values: pl.DataType) -> bool:
    """Whether JSON carries the dictionary's ``values`` to the column's type unchanged."""
    if spark_type == "string":
        return values == pl.String
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return values.is_integer()
    return spark_type == "boolean" and values == pl.Boolean


def packed_codes(rows: Any, columns: Sequence[str], dictionaries: Sequence[pl.DataFrame]) -> Any:
    """``rows`` as the packed key of the leaf codes of ``columns`` (on the JVM:
    :func:`code_expression`, :func:`crowdsafe.engines.spark.packing.pack`; null when a value has
    no code); row order and partitioning unchanged (a projection)."""
    from crowdsafe.engines.spark import packing as spark_packing

    types = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    codes = [code_expression(c, types[c], d) for c, d in zip(columns, dictionaries)]
    key = spark_packing.pack(codes, radices_of(dictionaries)).alias(KEY)
    return rows.select(key)


def count_table(rows: Any, columns: Sequence[str], dictionaries: Sequence[pl.DataFrame]) -> TableCounts | None:
    """The frequency table of ``rows`` by the leaf codes of ``columns`` (module docstring): one
    Spark aggregation; None when a value of some column is not in its dictionary."""
    from pyspark.sql import functions as F

    types = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    radices = tuple(radices_of(dictionaries))
    if packs_on_jvm([types[c] for c in columns], dictionaries):
        table = packed_codes(rows, columns, dictionaries).groupBy(KEY).agg(F.count(F.lit(1)).alias(COUNT)).toArrow()
        keys = table.column(KEY)
        if keys.null_count:
            return None
        order = np.argsort(keys.to_numpy(), kind="stable")
        return TableCounts(table.column(COUNT).to_numpy().astype(np.int64)[order], radices,
                           keys=keys.to_numpy().astype(np.int64)[order])
    quoted = [F.col(f"`{c}`") for c in columns]
    named = [f"__crowdsafe_value_{j}" for j in range(len(columns))]
    distinct = rows.groupBy(*[q.alias(n) for q, n in zip(quoted, named)]).agg(F.count(F.lit(1)).alias(COUNT))
    found = cast(pl.DataFrame, pl.from_arrow(distinct.toArrow()))
    codes = {}
    for j, (name, dictionary) in enumerate(zip(named, dictionaries)):
        code = _encoded(found.get_column(name), dictionary)
        if code.null_count():
            return None
        codes[f"c{j}"] = code.cast(pl.Int64)
    # several raw spellings may share a code (a dictionary made after tidying): tuples summed by codes
    summed = (pl.DataFrame(codes).with_columns(found.get_column(COUNT).cast(pl.Int64))
              .group_by(list(codes)).agg(pl.col(COUNT).sum()).sort(list(codes)))
    matrix = summed.select(list(codes)).to_numpy().astype(np.int64).reshape(summed.height, len(columns))
    counts = summed.get_column(COUNT).to_numpy().astype(np.int64)
    if packing.fits(radices):
        return TableCounts(counts, radices, keys=packing.pack(list(matrix.T), radices))
    return TableCounts(counts, radices, codes=matrix)


def _encoded(values: pl.Series, dictionary: pl.DataFrame) -> pl.Series:
    """The codes of ``values`` by the (value, code) ``dictionary`` (null where it has none)."""
    column = values.alias("value").to_frame()
    if column.schema["value"] != dictionary.schema["value"]:
        column = column.with_columns(pl.col("value").cast(dictionary.schema["value"]))
    return column.join(dictionary, on="value", how="left", nulls_equal=True,
                       maintain_order="left").get_column("code")


def sample_counts(table: TableCounts, beta: float, randomness: Randomness,
                  maps: Sequence[np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    """A Bernoulli(β) sample of the counted rows (module docstring), counted by code tuples:
    (codes (m, d), counts (m,)), the tuples in lexicographic order; ``maps[j]`` takes column j's
    leaf codes to the scheme's level (None: keep leaf codes)."""
    kept = thinned_counts(randomness, table.counts, float(beta))
    cells = np.flatnonzero(kept)
    codes, counts = table.tuples(cells), kept[cells]
    if any(m is not None for m in maps):
        mapped = np.column_stack([c if m is None else m[c] for c, m in zip(codes.T, maps)]).astype(np.int64)
        grouped = (pl.DataFrame(mapped.reshape(len(counts), len(maps))).with_columns(pl.Series(COUNT, counts))
                   .group_by(pl.exclude(COUNT)).agg(pl.col(COUNT).sum()))
        codes = grouped.drop(COUNT).to_numpy().astype(np.int64).reshape(grouped.height, len(maps))
        counts = grouped.get_column(COUNT).to_numpy().astype(np.int64)
        order = np.lexsort(codes.T[::-1]) if len(codes) else np.zeros(0, dtype=np.int64)
        codes, counts = codes[order], counts[order]
    return codes.reshape(len(counts), len(maps)), counts
